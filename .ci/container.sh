#!/usr/bin/env bash
# Container check of CI: `bash .ci/container.sh` (called by .ci/run; runs on its own as well).
#
# 1. Installs podman (with runc, debootstrap, …) from Debian when it is missing, and gives podman a
#    containers.conf of its own: runtime runc, ulimits within this machine's hard limits.
# 2. Base images: the public `oven/bun:1.4` and `debian:bookworm-slim` when a registry answers (or
#    they are already in podman's store); otherwise they are made here and kept in podman's store for
#    the next run: Debian bookworm from `debootstrap --variant=minbase` (security updates applied,
#    documentation and package lists removed), and Bun from the npm package @oven/bun-linux-<arch> on it.
# 3. Builds the Dockerfile (`--format docker`, so that HEALTHCHECK is kept). The build stage gets the
#    host's CA bundle as a build secret, for machines whose outgoing TLS is re-signed by a local CA.
# 4. Runs the image with only a named volume and a published port, as the README does, and checks:
#    /healthz, /readyz, /v1/markets and /dashboard answer 200; the process runs as uid 10001; the
#    first API key is in `logs` and in /data/initial-api-key and works; the HEALTHCHECK passes;
#    SIGTERM (`stop -t 10`) ends it with exit code 0 within 10 s; after a restart on the same volume
#    the key and an agent created before are still there and no second first start happened.
# 5. Removes its containers and volume.
#
# Prints one line per check (`ok` / `FAIL`) and exits 1 when any check failed.
# Settings (environment): CONTAINER_BASE=auto|registry|local (auto), CI_LOG_DIR, CI_CA_BUNDLE,
# CONTAINER_IMAGE (localhost/agent-brokerage:ci), DEBIAN_MIRROR, CONTAINER_BASE_MAX_AGE_DAYS (7).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

LOG_DIR="${CI_LOG_DIR:-$ROOT/.ci/logs}"
IMAGE="${CONTAINER_IMAGE:-localhost/agent-brokerage:ci}"
BASE_MODE="${CONTAINER_BASE:-auto}"
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
BASE_MAX_AGE_DAYS="${CONTAINER_BASE_MAX_AGE_DAYS:-7}"
PUBLIC_BUN_IMAGE="docker.io/oven/bun:1.4"
PUBLIC_RUNTIME_IMAGE="docker.io/library/debian:bookworm-slim"
LOCAL_RUNTIME_IMAGE="localhost/ci/debian:${DEBIAN_SUITE}-slim"
HEALTH_TIMEOUT_S=120
STOP_LIMIT_S=10

suffix="$$"
NAME="brokerage-ci-${suffix}"
VOLUME="brokerage-ci-data-${suffix}"
failures=0
t0=$(date +%s)
work_dir=""

mkdir -p "$LOG_DIR"
step() { printf '==> container: %s\n' "$*"; }
ok() { printf 'container check ok:   %s\n' "$*"; }
fail() {
  printf 'container check FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

cleanup() {
  if command -v podman >/dev/null 2>&1; then
    podman rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
    podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  fi
  [[ -n "$work_dir" ]] && rm -rf "$work_dir"
}
trap cleanup EXIT

# finish: prints the verdict and the time taken, exits 0 or 1.
finish() {
  local took=$(($(date +%s) - t0))
  if ((failures > 0)); then
    printf '==> container: %d check(s) failed (%d s); logs in %s\n' "$failures" "$took" "$LOG_DIR" >&2
    exit 1
  fi
  step "all checks passed (${took} s)"
  exit 0
}

# ------------------------------------------------------------------------------------ podman
apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" </dev/null
}
need_pkgs=()
command -v podman >/dev/null 2>&1 || need_pkgs+=(podman runc conmon netavark aardvark-dns uidmap fuse-overlayfs slirp4netns)
if [[ "$BASE_MODE" != registry ]]; then
  command -v debootstrap >/dev/null 2>&1 || need_pkgs+=(debootstrap debian-archive-keyring)
fi
command -v curl >/dev/null 2>&1 || need_pkgs+=(curl)
if ((${#need_pkgs[@]} > 0)); then
  step "apt-get install ${need_pkgs[*]}"
  start=$(date +%s%N)
  if { apt-get update -q </dev/null && apt_install "${need_pkgs[@]}"; } >"$LOG_DIR/container-apt.log" 2>&1; then
    ok "installed ${need_pkgs[*]} ($(ms_since "$start") ms)"
  else
    tail -n 20 "$LOG_DIR/container-apt.log" >&2
    fail "apt-get could not install ${need_pkgs[*]}"
    finish
  fi
fi
if ! command -v podman >/dev/null 2>&1; then
  fail "podman is not installed"
  finish
fi
command -v runc >/dev/null 2>&1 || { apt_install runc >>"$LOG_DIR/container-apt.log" 2>&1 || true; }

work_dir="$(mktemp -d "${TMPDIR:-/tmp}/brokerage-container-XXXXXX")"

# podman's default nofile (1048576) fails where the machine's hard limit is lower: `runc create …
# error setting rlimit … operation not permitted`; nproc may not exceed conmon's own (at most
# 32768). Runtime runc: Debian's podman depends on "crun | runc" and apt would pick crun; runc is
# the one measured to work on the CI machine.
# The file is this script's own (CONTAINERS_CONF), unless the caller gave one.
if [[ -z "${CONTAINERS_CONF:-}" ]]; then
  hard_nofile="$(ulimit -Hn)"
  hard_nproc="$(ulimit -Hu)"
  [[ "$hard_nofile" == unlimited ]] && hard_nofile=1048576
  [[ "$hard_nproc" == unlimited || "$hard_nproc" -gt 32768 ]] && hard_nproc=32768
  ((hard_nofile > 1048576)) && hard_nofile=1048576
  cat >"$work_dir/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=${hard_nofile}:${hard_nofile}", "nproc=${hard_nproc}:${hard_nproc}"]

[engine]
runtime = "runc"
EOF
  export CONTAINERS_CONF="$work_dir/containers.conf"
fi
ok "$(podman --version), runtime $(podman info --format '{{.Host.OCIRuntime.Name}}' 2>/dev/null), CONTAINERS_CONF=${CONTAINERS_CONF}"

# ------------------------------------------------------------------------------ base images
have_image() { podman image exists "$1" 2>/dev/null; }

# age_ok IMAGE: the image exists and is younger than BASE_MAX_AGE_DAYS.
age_ok() {
  have_image "$1" || return 1
  local created
  created="$(podman image inspect --format '{{.Created.Unix}}' "$1" 2>/dev/null)" || return 1
  (($(date +%s) - created < BASE_MAX_AGE_DAYS * 86400))
}

registry_answers() {
  local code
  code="$(curl -s -m 5 -o /dev/null -w '%{http_code}' https://registry-1.docker.io/v2/ 2>/dev/null)"
  [[ "$code" == 200 || "$code" == 401 ]]
}

# Debian bookworm, minbase, made slim as the official -slim image is: no documentation but the
# copyright files, no man pages, locales or package lists, and no trace of the host.
build_local_debian() {
  local rootfs="$work_dir/rootfs" arch
  arch="$(dpkg --print-architecture 2>/dev/null || echo amd64)"
  step "debootstrap --variant=minbase ${DEBIAN_SUITE} (${arch}) from ${DEBIAN_MIRROR}"
  debootstrap --variant=minbase --arch="$arch" "$DEBIAN_SUITE" "$rootfs" "$DEBIAN_MIRROR" \
    >"$LOG_DIR/container-debootstrap.log" 2>&1 || {
    tail -n 20 "$LOG_DIR/container-debootstrap.log" >&2
    return 1
  }
  cat >"$rootfs/etc/apt/sources.list" <<EOF
deb ${DEBIAN_MIRROR} ${DEBIAN_SUITE} main
deb ${DEBIAN_MIRROR} ${DEBIAN_SUITE}-updates main
deb ${DEBIAN_SECURITY_MIRROR} ${DEBIAN_SUITE}-security main
EOF
  # The security updates; then what the official slim image leaves out.
  { chroot "$rootfs" apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive chroot "$rootfs" apt-get -y -q -o Dpkg::Options::=--force-confold upgrade &&
    chroot "$rootfs" apt-get clean; } </dev/null >>"$LOG_DIR/container-debootstrap.log" 2>&1 || {
    tail -n 20 "$LOG_DIR/container-debootstrap.log" >&2
    return 1
  }
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
  (
    cd "$rootfs" || exit 1
    rm -rf var/cache/apt/archives/*.deb var/cache/apt/*.bin var/lib/apt/lists/* \
      usr/share/man/* usr/share/groff/* usr/share/info/* usr/share/locale/* usr/share/lintian/* \
      var/log/* var/cache/debconf/*-old var/lib/dpkg/*-old tmp/* etc/hostname etc/resolv.conf
    find usr/share/doc -mindepth 1 -not -type d -not -name copyright -delete
    find usr/share/doc -mindepth 1 -type d -empty -delete
    : >etc/machine-id
  ) || return 1
  tar --numeric-owner -C "$rootfs" -cf - . |
    podman import --change 'CMD ["bash"]' --message "debootstrap --variant=minbase ${DEBIAN_SUITE}" \
      - "$LOCAL_RUNTIME_IMAGE" >>"$LOG_DIR/container-debootstrap.log" 2>&1 || return 1
  rm -rf "$rootfs"
}

# Bun from the npm registry on the Debian image: the `bun` executable of @oven/bun-linux-<arch>.
build_local_bun() {
  local tag="$1" version="$2" pkg ctx="$work_dir/bun-context"
  case "$(uname -m)" in
    x86_64) pkg="@oven/bun-linux-x64"; grep -qw avx2 /proc/cpuinfo || pkg="@oven/bun-linux-x64-baseline" ;;
    aarch64 | arm64) pkg="@oven/bun-linux-aarch64" ;;
    *) echo "no Bun package for $(uname -m)" >&2; return 1 ;;
  esac
  step "npm pack ${pkg}@${version}"
  mkdir -p "$ctx/unpack"
  local tgz
  tgz="$(cd "$ctx" && npm pack --silent "${pkg}@${version}" </dev/null | tail -n 1)" || return 1
  tar -xzf "$ctx/$tgz" -C "$ctx/unpack" || return 1
  mkdir -p "$ctx/image" && mv "$ctx/unpack/package/bin/bun" "$ctx/image/bun" || return 1
  podman build --format docker -f "$ROOT/deploy/container/bun.Containerfile" \
    --build-arg BASE_IMAGE="$LOCAL_RUNTIME_IMAGE" -t "$tag" "$ctx/image" \
    >"$LOG_DIR/container-bun-image.log" 2>&1 || {
    tail -n 20 "$LOG_DIR/container-bun-image.log" >&2
    return 1
  }
  rm -rf "$ctx"
}

start=$(date +%s%N)
use_public=0
if [[ "$BASE_MODE" == registry ]]; then
  use_public=1
elif [[ "$BASE_MODE" == auto ]]; then
  if have_image "$PUBLIC_BUN_IMAGE" && have_image "$PUBLIC_RUNTIME_IMAGE"; then
    use_public=1
  elif registry_answers; then
    use_public=1
  fi
fi
if ((use_public)); then
  BUN_IMAGE="$PUBLIC_BUN_IMAGE"
  RUNTIME_IMAGE="$PUBLIC_RUNTIME_IMAGE"
  for img in "$BUN_IMAGE" "$RUNTIME_IMAGE"; do
    podman pull -q "$img" >>"$LOG_DIR/container-pull.log" 2>&1 || have_image "$img" || {
      fail "cannot pull ${img}"
      finish
    }
  done
  ok "base images from the registry: ${BUN_IMAGE}, ${RUNTIME_IMAGE} ($(ms_since "$start") ms)"
else
  # The Bun of this checkout's CI (same version as the lockfile was checked with), else the newest 1.4.
  bun_version="${CONTAINER_BUN_VERSION:-$(bun --version 2>/dev/null || npm view bun@1.4 version </dev/null | tail -n 1 | sed "s/.* '\\(.*\\)'/\\1/")}"
  BUN_IMAGE="localhost/ci/bun:${bun_version}"
  RUNTIME_IMAGE="$LOCAL_RUNTIME_IMAGE"
  made=()
  if ! age_ok "$RUNTIME_IMAGE"; then
    if ! build_local_debian; then
      fail "could not make the Debian ${DEBIAN_SUITE} image with debootstrap"
      finish
    fi
    made+=("$RUNTIME_IMAGE")
    podman rmi -f "$BUN_IMAGE" >/dev/null 2>&1 || true # made from the previous Debian image
  fi
  if ! have_image "$BUN_IMAGE"; then
    if ! build_local_bun "$BUN_IMAGE" "$bun_version"; then
      fail "could not make the Bun image ${BUN_IMAGE}"
      finish
    fi
    made+=("$BUN_IMAGE")
  fi
  if ((${#made[@]} > 0)); then
    ok "no registry: made ${made[*]} ($(ms_since "$start") ms)"
  else
    ok "no registry: ${BUN_IMAGE} and ${RUNTIME_IMAGE} from podman's store (made within ${BASE_MAX_AGE_DAYS} days)"
  fi
fi

# ------------------------------------------------------------------------------------ build
build_args=(--format docker --build-arg "BUN_IMAGE=${BUN_IMAGE}" --build-arg "RUNTIME_IMAGE=${RUNTIME_IMAGE}")
ca_bundle="${CI_CA_BUNDLE:-}"
if [[ -z "$ca_bundle" ]]; then
  for f in "${NODE_EXTRA_CA_CERTS:-}" "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
    if [[ -n "$f" && -s "$f" ]]; then ca_bundle="$f"; break; fi
  done
fi
[[ -n "$ca_bundle" ]] && build_args+=(--secret "id=ca-bundle,src=${ca_bundle}")

step "podman build ${build_args[*]} -t ${IMAGE} ."
start=$(date +%s%N)
if podman build "${build_args[@]}" -t "$IMAGE" . >"$LOG_DIR/container-build.log" 2>&1; then
  ok "image built ($(ms_since "$start") ms): $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1 / 1e6}')"
else
  tail -n 30 "$LOG_DIR/container-build.log" >&2
  fail "podman build failed (log: $LOG_DIR/container-build.log)"
  finish
fi
# Intermediate images of earlier builds that no tag or cache of this one uses.
podman image prune -f --filter "until=168h" >/dev/null 2>&1 || true

hc="$(podman image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE" 2>/dev/null)"
if [[ "$hc" == *CMD* ]]; then ok "the image carries its HEALTHCHECK"; else fail "the image has no HEALTHCHECK (${hc})"; fi
user="$(podman image inspect --format '{{.Config.User}}' "$IMAGE" 2>/dev/null)"
if [[ -n "$user" && "$user" != root && "$user" != 0 ]]; then ok "the image's user is ${user}"; else fail "the image runs as root"; fi

env_line="$(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$IMAGE" 2>/dev/null | grep '^MIMALLOC_PURGE_DELAY=' || true)"
if [[ "$env_line" == "MIMALLOC_PURGE_DELAY=-1" ]]; then ok "the image keeps freed memory (${env_line})"; else fail "the image does not set MIMALLOC_PURGE_DELAY=-1 (${env_line:-unset})"; fi

# ---------------------------------------------------------------------------------- the run
http_status() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:${port}$1" 2>/dev/null || true; }

# wait_healthy START_NS: waits for /healthz 200; prints the elapsed ms.
wait_healthy() {
  local s="$1" st
  while :; do
    st="$(http_status /healthz)"
    [[ "$st" == 200 ]] && { ms_since "$s"; return 0; }
    [[ "$(podman inspect --format '{{.State.Running}}' "$NAME" 2>/dev/null)" == true ]] || return 1
    (($(ms_since "$s") > HEALTH_TIMEOUT_S * 1000)) && return 1
    sleep 0.2
  done
}

# stop_check LABEL: SIGTERM through `podman stop -t 10`; exit code 0 within 10 s.
stop_check() {
  local s code took
  s=$(date +%s%N)
  podman stop -t "$STOP_LIMIT_S" "$NAME" >>"$LOG_DIR/container-podman.log" 2>&1
  took="$(ms_since "$s")"
  code="$(podman inspect --format '{{.State.ExitCode}}' "$NAME" 2>/dev/null)"
  if [[ "$code" == 0 ]] && ((took < STOP_LIMIT_S * 1000)); then
    ok "$1: SIGTERM → exit code 0 after ${took} ms"
  else
    fail "$1: SIGTERM → exit code ${code} after ${took} ms (limit ${STOP_LIMIT_S} s, then SIGKILL)"
  fi
}

dump_logs() {
  podman logs "$NAME" 2>&1 | grep -v 'API key:' >"$LOG_DIR/container-service.log" || true
  echo "---- last lines of the container's log" >&2
  tail -n 30 "$LOG_DIR/container-service.log" >&2 || true
}

podman volume create "$VOLUME" >/dev/null
step "podman run -d -p 127.0.0.1::8080 -v ${VOLUME}:/data ${IMAGE}"
start=$(date +%s%N)
if ! podman run -d --name "$NAME" -p 127.0.0.1::8080 -v "${VOLUME}:/data" "$IMAGE" >>"$LOG_DIR/container-podman.log" 2>&1; then
  tail -n 20 "$LOG_DIR/container-podman.log" >&2
  fail "podman run failed"
  finish
fi
port="$(podman port "$NAME" 8080/tcp | head -n 1 | sed 's/.*://')"
if ms="$(wait_healthy "$start")"; then
  ok "first start: /healthz 200 after ${ms} ms (port ${port})"
else
  fail "first start: no 200 on /healthz within ${HEALTH_TIMEOUT_S} s"
  dump_logs
  finish
fi

for path in /readyz "/v1/markets?limit=1" /dashboard; do
  st="$(http_status "$path")"
  if [[ "$st" == 200 ]]; then ok "GET ${path} 200"; else fail "GET ${path} answered ${st}"; fi
done

# PID 1 of the container is the service itself (exec-form ENTRYPOINT, no shell in between).
uids="$(podman exec "$NAME" sh -c 'grep "^Uid:" /proc/1/status; readlink /proc/1/exe' 2>/dev/null | tr '\n\t' '  ')"
if [[ "$uids" =~ ^Uid:\ +10001\ +10001\ +10001\ +10001\ +/usr/local/bin/brokerage ]]; then
  ok "the service runs as uid 10001 (${uids})"
else
  fail "the service does not run as uid 10001: ${uids}"
fi

# The first key, as the README says: in `docker logs` once, and in /data/initial-api-key.
key="$(podman exec "$NAME" cat /data/initial-api-key 2>/dev/null | tr -d '[:space:]')"
logs="$(podman logs "$NAME" 2>&1)"
if [[ "$key" =~ ^bk_[A-Za-z0-9_-]{20,}$ ]]; then
  ok "the first API key is in /data/initial-api-key"
else
  fail "no API key in /data/initial-api-key"
fi
if [[ -n "$key" ]] && grep -qF "API key:    ${key}" <<<"$logs"; then
  ok "the first API key is in the container's log"
else
  fail "the first API key is not in the container's log"
fi
st="$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "X-API-Key: ${key}" "http://127.0.0.1:${port}/v1/agents")"
if [[ "$st" == 200 ]]; then ok "the first API key authenticates (GET /v1/agents 200)"; else fail "the first API key: GET /v1/agents answered ${st}"; fi
agent="$(curl -s --max-time 10 -X POST -H "X-API-Key: ${key}" -H 'Content-Type: application/json' \
  -d '{"name":"container-ci","wallet_address":"0x00000000000000000000000000000000000c1c1c"}' \
  "http://127.0.0.1:${port}/v1/agents" | sed -n 's/^{"id":"\(agt_[A-Za-z0-9]*\)".*/\1/p')"
if [[ -n "$agent" ]]; then ok "agent ${agent} created"; else fail "POST /v1/agents did not create an agent"; fi

if podman healthcheck run "$NAME" >>"$LOG_DIR/container-podman.log" 2>&1; then
  ok "HEALTHCHECK passes (podman healthcheck run)"
else
  fail "HEALTHCHECK fails: $(tail -n 1 "$LOG_DIR/container-podman.log")"
fi

stop_check "first run"

# ------------------------------------------------------------------------ restart, same volume
start=$(date +%s%N)
podman start "$NAME" >>"$LOG_DIR/container-podman.log" 2>&1
port="$(podman port "$NAME" 8080/tcp | head -n 1 | sed 's/.*://')"
if ms="$(wait_healthy "$start")"; then
  ok "restart on the same volume: /healthz 200 after ${ms} ms"
  key2="$(podman exec "$NAME" cat /data/initial-api-key 2>/dev/null | tr -d '[:space:]')"
  if [[ -n "$key" && "$key2" == "$key" ]]; then ok "the volume kept initial-api-key"; else fail "initial-api-key changed or vanished across the restart"; fi
  banners="$(podman logs "$NAME" 2>&1 | grep -c '^First start:')"
  if [[ "$banners" == 1 ]]; then ok "no second first start"; else fail "${banners} first-start banners after the restart"; fi
  st="$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "X-API-Key: ${key}" "http://127.0.0.1:${port}/v1/agents/${agent:-none}")"
  if [[ -n "$agent" && "$st" == 200 ]]; then
    ok "agent ${agent} is still there (GET /v1/agents/${agent} 200 with the first key)"
  else
    fail "the agent created before the restart: GET answered ${st}"
  fi
  if podman healthcheck run "$NAME" >>"$LOG_DIR/container-podman.log" 2>&1; then ok "HEALTHCHECK passes after the restart"; else fail "HEALTHCHECK fails after the restart"; fi
  stop_check "after the restart"
else
  fail "restart: no 200 on /healthz within ${HEALTH_TIMEOUT_S} s"
  dump_logs
fi
podman logs "$NAME" 2>&1 | grep -v 'API key:' >"$LOG_DIR/container-service.log" || true

finish
