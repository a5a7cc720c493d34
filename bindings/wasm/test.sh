#!/usr/bin/env bash
# Builds the WebAssembly package and tests it: the crate's unit tests (native), the Node tests over
# the shared vectors and the API, and the TypeScript check of a typed consumer.
# Self-contained: installs Node, the wasm toolchain (via build.sh) and the npm dev tools when missing.
#
# Environment:
#   EXAMKIT_BIN               the built `examkit` CLI; when set, every vector's output is compared
#                             byte for byte with the CLI's (otherwise that suite reports a skip)
#   EXAMKIT_WASM_TARGET_DIR   cargo target dir of the wasm build (see build.sh)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
log() { printf '[wasm test] %s\n' "$*" >&2; }
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Node 20 or later runs the tests (node:test, structuredClone, String.prototype.isWellFormed).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  log "installing nodejs and npm from apt"
  as_root apt-get update
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y --no-install-recommends nodejs npm
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  log "Node $(node --version) is too old; Node 20 or later is required"
  exit 1
fi

"$here/build.sh"

wasm_target_dir="${EXAMKIT_WASM_TARGET_DIR:-${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-wasm}}"
log "native unit tests of the crate"
(cd "$root" && CARGO_TARGET_DIR="$wasm_target_dir/host" cargo test --quiet -p examkit-wasm)

cd "$here"
if [ ! -x node_modules/.bin/tsc ]; then
  log "npm ci (TypeScript)"
  npm ci --no-audit --no-fund
fi

if [ -z "${EXAMKIT_BIN:-}" ]; then
  log "EXAMKIT_BIN is not set: the byte-for-byte comparison with the CLI will be skipped"
fi
log "node --test"
node --test --test-reporter=spec tests/*.test.mjs

log "tsc --noEmit --strict"
node_modules/.bin/tsc --noEmit --strict -p tests/tsconfig.json
log "all passed"
