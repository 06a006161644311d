# syntax=docker/dockerfile:1
# Builds the single binary (`bun build --compile`) and runs it on a slim Debian image.
#   docker build -t agent-brokerage .
#   docker run -p 8080:8080 -v brokerage-data:/data agent-brokerage

# ---- build: dependencies from the lockfile, then the compiled binary
FROM oven/bun:1.4 AS build
WORKDIR /src
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile
COPY . .
# The signature backend is libsecp256k1's native addon (the secp256k1 package's prebuilt file for
# this platform): fail here, with its message, when it cannot load, instead of at the first start.
RUN bun --no-install -e 'const m = await import("./src/eip712/secp256k1.ts"); m.assertSignatureBackend();'
RUN bun run build

# ---- runtime: the binary alone (it needs glibc, and libstdc++ for the embedded libsecp256k1 addon:
#      both are in debian:bookworm-slim), as a non-root user
FROM debian:bookworm-slim
RUN groupadd --system --gid 10001 brokerage \
 && useradd --system --uid 10001 --gid brokerage --home-dir /data --no-create-home --shell /usr/sbin/nologin brokerage \
 && mkdir -p /data \
 && chown brokerage:brokerage /data
COPY --from=build --chown=root:root --chmod=0755 /src/dist/brokerage /usr/local/bin/brokerage
ENV HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
USER brokerage
WORKDIR /data
# No curl in the image: bash's /dev/tcp asks /healthz for its status line.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PORT:-8080} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["/usr/local/bin/brokerage"]
