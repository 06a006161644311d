#!/bin/sh
# Makes the project runnable on a machine that has only Node.js and npm:
# installs Bun from the npm registry when it is missing, then the dependencies (quietly).
#
#   sh scripts/bootstrap.sh                 # bootstrap only
#   sh scripts/bootstrap.sh bun test        # bootstrap, then run the command with Bun on PATH
#
# `npm start` and `npm test` call it this way (package.json). Bun is installed with
# `npm install -g`; when the global prefix is not writable, into ~/.bun/npm instead.
set -eu

BUN_NPM_SPEC="${BUN_NPM_SPEC:-bun@1.4}"
cd "$(dirname "$0")/.."

have_bun() { command -v bun >/dev/null 2>&1 && bun --version >/dev/null 2>&1; }

if ! have_bun && [ -x "${HOME:-/nonexistent}/.bun/bin/bun" ]; then
  PATH="$HOME/.bun/bin:$PATH"
fi
if ! have_bun; then
  echo "bootstrap: Bun not found, installing ${BUN_NPM_SPEC} from the npm registry" >&2
  if npm install -g --no-audit --no-fund --loglevel=error "$BUN_NPM_SPEC" </dev/null >&2; then
    PATH="$(npm prefix -g)/bin:$PATH"
  else
    echo "bootstrap: the global npm prefix is not writable, installing into ~/.bun/npm" >&2
    npm install -g --prefix "$HOME/.bun/npm" --no-audit --no-fund --loglevel=error "$BUN_NPM_SPEC" </dev/null >&2
    PATH="$HOME/.bun/npm/bin:$PATH"
  fi
  export PATH
  if ! have_bun; then
    # npm versions that skip install scripts leave the package's binary unpacked: run its installer.
    for root in "$(npm root -g)" "$HOME/.bun/npm/lib/node_modules"; do
      if [ -f "$root/bun/install.js" ]; then (cd "$root/bun" && node install.js) >&2 || true; fi
    done
  fi
  if ! have_bun; then
    echo "bootstrap: Bun is still not usable; install it from https://bun.sh and retry" >&2
    exit 1
  fi
  echo "bootstrap: Bun $(bun --version) installed at $(command -v bun)" >&2
fi
export PATH

bun install --silent </dev/null

if [ "$#" -gt 0 ]; then exec "$@"; fi
