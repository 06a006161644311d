# syntax=docker/dockerfile:1
# Builds the single binary (`bun build --compile`) and runs it on a slim Debian image.
#   docker build -t agent-brokerage .
#   docker run -d --name brokerage -p 8080:8080 -v brokerage-data:/data agent-brokerage
#   docker logs brokerage                                # the first API key, printed once
#   docker exec brokerage cat /data/initial-api-key      # the same key, kept on the volume
#
# The two base images are build arguments, so that a machine without a container registry can
# build them itself (.ci/container.sh does: Debian from debootstrap, Bun from npm):
#   docker build --build-arg BUN_IMAGE=… --build-arg RUNTIME_IMAGE=… .
# Where outgoing TLS is re-signed by a local certificate authority, give the build stage the
# host's CA bundle as a build secret (it is mounted for `bun install` only, never stored in a layer):
#   docker build --secret id=ca-bundle,src=/etc/ssl/certs/ca-certificates.crt .
ARG BUN_IMAGE=oven/bun:1.4
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---- build: dependencies from the lockfile, then the compiled binary
FROM ${BUN_IMAGE} AS build
WORKDIR /src
# The lockfile covers the workspaces and the patched dependencies: bun checks both against it.
COPY package.json bun.lock ./
COPY packages/sdk/package.json packages/sdk/
COPY packages/mcp/package.json packages/mcp/
COPY patches patches
# Runtime dependencies only: the binary is built from them, so a runtime import of a development
# dependency fails here rather than in production.
RUN --mount=type=secret,id=ca-bundle \
    if [ -s /run/secrets/ca-bundle ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca-bundle; fi; \
    bun install --frozen-lockfile --production
COPY . .
# The signature backend is libsecp256k1's native addon (the secp256k1 package's prebuilt file for
# this platform): fail here, with its message, when it cannot load, instead of at the first start.
RUN bun --no-install -e 'const m = await import("./src/eip712/secp256k1.ts"); m.assertSignatureBackend();'
RUN bun run build

# ---- runtime: the binary alone (it needs glibc, and libstdc++ for the embedded libsecp256k1 addon:
#      both are in debian:bookworm-slim), as a non-root user
FROM ${RUNTIME_IMAGE}
RUN groupadd --gid 10001 brokerage \
 && useradd --uid 10001 --gid brokerage --home-dir /data --no-create-home --shell /usr/sbin/nologin brokerage \
 && mkdir -p /data \
 && chown brokerage:brokerage /data \
 && chmod 0700 /data
COPY --from=build --chown=root:root --chmod=0755 /src/dist/brokerage /usr/local/bin/brokerage
# MIMALLOC_PURGE_DELAY=-1: Bun's allocator keeps the memory it freed instead of handing it back to
# the kernel after 10 ms (madvise, then page faults to take it again): about a quarter less CPU per
# intent for about 100 MB more resident memory under load (docs/decisions.md, "The allocator keeps
# freed memory").
ENV HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    MIMALLOC_PURGE_DELAY=-1
VOLUME ["/data"]
EXPOSE 8080
USER brokerage
WORKDIR /data
# No curl in the image: bash's /dev/tcp asks /healthz for its status line.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PORT:-8080} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/brokerage"]
