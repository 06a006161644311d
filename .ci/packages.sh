#!/usr/bin/env bash
# The SDK and the MCP server as a user gets them from npm: `bash .ci/packages.sh` (called by .ci/run
# after the tests; also run by test/packages/packages.test.ts).
#
# 1. `npm pack` of packages/sdk and packages/mcp (their prepack builds dist/); each tarball has
#    README.md, LICENSE and dist/, and no `workspace:` range in its package.json.
# 2. `npm install --engine-strict` of both tarballs, viem, typescript and @types/node into a fresh
#    temporary directory, i.e. the registry's packages, on this Node.js.
# 3. The service from this checkout (`bun src/main.ts`, embedded PGlite on a fresh DATA_DIR, paper
#    venue); the first API key from DATA_DIR/initial-api-key.
# 4. test/packages/consumer.mjs run with `node` there: an agent, an intent, signed, submitted, its
#    events, the kill. The same script type-checked with that directory's `tsc --checkJs`.
# 5. The installed MCP binary started over stdio by the reference MCP client
#    (test/packages/mcp-tools.mjs, @modelcontextprotocol/sdk from this repository): its tools listed.
#
# Prints `packages: ok <check>` or `packages: FAILED <check>` per check, the two scripts' JSON as
# `consumer-result: {…}` and `mcp-result: {…}`, and last `packages: N passed, N failed`. Exits 1 when a
# check failed. Needs Node.js, npm, bun (or BUN=<path>) and the repository's `bun install` (for the
# MCP client).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/brokerage-packages-XXXXXX")"
SERVICE_PID=""
passed=0
failed=0

cleanup() {
  if [[ -n "$SERVICE_PID" ]] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    kill -TERM "$SERVICE_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVICE_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); echo "packages: ok $*"; }
fail() { failed=$((failed + 1)); echo "packages: FAILED $*"; }
finish() {
  echo "packages: ${passed} passed, ${failed} failed"
  [[ $failed -eq 0 ]]
  exit $?
}
# check NAME COMMAND...: runs the command with its output in $WORK/NAME.log, shown when it fails.
check() {
  local name="$1"
  shift
  local out="$WORK/${name//[^A-Za-z0-9]/-}.log"
  if "$@" >"$out" 2>&1; then
    ok "$name"
    return 0
  fi
  fail "$name"
  sed -e 's/^/    /' "$out" | tail -n 40
  return 1
}

mkdir -p "$WORK/tarballs" "$WORK/consumer" "$WORK/data"

# ------------------------------------------------------------------------------ service (start)
# Started first, in the background, so that its start-up overlaps the packing and the install.
PORT="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')"
BROKER_URL="http://127.0.0.1:${PORT}"
env -u DATABASE_URL -u VENUE_URL -u PAPER_MARKETS -u BUILDER_CODE VENUE=paper DATA_DIR="$WORK/data" HOST=127.0.0.1 PORT="$PORT" LOG_LEVEL=warn \
  "${BUN:-bun}" src/main.ts >"$WORK/service.log" 2>&1 </dev/null &
SERVICE_PID=$!

# ------------------------------------------------------------------------------------------ pack
for pkg in sdk mcp; do
  check "npm pack packages/${pkg}" bash -c "cd packages/${pkg} && npm pack --pack-destination '$WORK/tarballs' </dev/null" || finish
done
SDK_TGZ="$(ls "$WORK"/tarballs/agent-brokerage-sdk-*.tgz)"
MCP_TGZ="$(ls "$WORK"/tarballs/agent-brokerage-mcp-*.tgz)"

# tarball_has TGZ: README.md, LICENSE, dist/ with JavaScript and declarations, no workspace: range.
tarball_has() {
  local list
  list="$(tar tzf "$1")" || return 1
  for f in package/README.md package/LICENSE package/package.json; do
    grep -qx "$f" <<<"$list" || { echo "$1 lacks $f"; return 1; }
  done
  grep -q '^package/dist/.*\.js$' <<<"$list" || { echo "$1 has no dist/*.js"; return 1; }
  grep -q '^package/dist/.*\.d\.ts$' <<<"$list" || { echo "$1 has no dist/*.d.ts"; return 1; }
  local manifest
  manifest="$(tar xzf "$1" -O package/package.json)" || return 1
  if grep -q '"workspace:' <<<"$manifest"; then
    echo "$1: package.json keeps a workspace: range"
    return 1
  fi
}
check "sdk tarball: README, LICENSE, dist, no workspace range" tarball_has "$SDK_TGZ"
check "mcp tarball: README, LICENSE, dist, no workspace range" tarball_has "$MCP_TGZ"

# --------------------------------------------------------------------------------------- install
VIEM_RANGE="$(node -p 'require("./packages/sdk/package.json").dependencies.viem')"
TS_VERSION="$(node -p 'require("./node_modules/typescript/package.json").version' 2>/dev/null || echo 5)"
cat >"$WORK/consumer/package.json" <<'JSON'
{ "name": "brokerage-package-consumer", "version": "1.0.0", "private": true, "type": "module" }
JSON
cp test/packages/consumer.mjs "$WORK/consumer/consumer.mjs"
cat >"$WORK/consumer/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "lib": ["ES2022", "DOM"],
    "types": ["node"],
    "strict": true,
    "allowJs": true,
    "checkJs": true,
    "noEmit": true,
    "skipLibCheck": false
  },
  "files": ["consumer.mjs"]
}
JSON
check "npm install --engine-strict of both tarballs (node $(node --version))" \
  bash -c "cd '$WORK/consumer' && npm install --engine-strict --no-audit --no-fund --loglevel=error '$SDK_TGZ' '$MCP_TGZ' 'viem@$VIEM_RANGE' 'typescript@$TS_VERSION' '@types/node@20' </dev/null" || finish

# ---------------------------------------------------------------------------------------- service
service_up() {
  local deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    if node -e 'fetch(process.argv[1]).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))' "$BROKER_URL/healthz" 2>/dev/null \
      && [[ -s "$WORK/data/initial-api-key" ]]; then
      return 0
    fi
    kill -0 "$SERVICE_PID" 2>/dev/null || { echo "the service exited"; cat "$WORK/service.log"; return 1; }
    sleep 0.1
  done
  echo "no /healthz 200 and initial-api-key within 60 s"
  cat "$WORK/service.log"
  return 1
}
check "service from the checkout on a fresh DATA_DIR (PGlite), first key in DATA_DIR/initial-api-key" service_up || finish
BROKER_API_KEY="$(tr -d '[:space:]' <"$WORK/data/initial-api-key")"
export BROKER_URL BROKER_API_KEY

# --------------------------------------------------------------------------------------- consumer
consumer_runs() {
  local out
  out="$(cd "$WORK/consumer" && timeout 60 node consumer.mjs </dev/null)" || return 1
  local line
  line="$(tail -n 1 <<<"$out")"
  echo "consumer-result: $line" >"$WORK/consumer-result"
  node -e '
    const r = JSON.parse(process.argv[1]);
    const problems = [];
    if (!r.refused.includes("order_too_large")) problems.push("the oversized intent was not refused with order_too_large");
    if (!["open", "filled"].includes(r.submitted)) problems.push(`submitted: ${r.submitted}`);
    if (!r.events.some((s) => s === "open" || s === "filled")) problems.push(`events: ${r.events}`);
    if (r.kill.breaker !== "tripped" || r.kill.failed.length) problems.push(`kill: ${JSON.stringify(r.kill)}`);
    if (problems.length) { console.error(problems.join("\n")); process.exit(1); }
  ' "$line"
}
check "node consumer.mjs: agent, intent, sign, submit, events, kill" consumer_runs
[[ -f "$WORK/consumer-result" ]] && cat "$WORK/consumer-result"
check "tsc --checkJs consumer.mjs against the installed packages' types" bash -c "cd '$WORK/consumer' && ./node_modules/.bin/tsc -p tsconfig.json"

# -------------------------------------------------------------------------------------------- MCP
mcp_lists_tools() {
  local out line
  out="$(timeout 60 node test/packages/mcp-tools.mjs "$WORK/consumer/node_modules/.bin/agent-brokerage-mcp" </dev/null)" || return 1
  line="$(tail -n 1 <<<"$out")"
  echo "mcp-result: $line" >"$WORK/mcp-result"
  node -e '
    const r = JSON.parse(process.argv[1]);
    const want = ["list_markets", "get_market", "check_intent", "place_intent", "sign_and_submit", "get_order", "list_orders", "cancel_order", "get_agent", "kill_switch", "heartbeat"];
    const missing = want.filter((t) => !r.tools.includes(t));
    if (missing.length || r.list_markets_error) { console.error(`missing tools: ${missing}; list_markets error: ${r.list_markets_error}`); process.exit(1); }
  ' "$line"
}
check "installed agent-brokerage-mcp binary: tools listed by the reference MCP client" mcp_lists_tools
[[ -f "$WORK/mcp-result" ]] && cat "$WORK/mcp-result"

finish
