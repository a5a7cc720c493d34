#!/usr/bin/env bash
# End-to-end test of the pre-check page in headless Chromium (Debian's /usr/bin/chromium driven by
# playwright-core). Self-contained: installs Node, Chromium and the npm packages when missing, and
# builds the examkit browser package (bindings/wasm/build.sh). Screenshots go to test-output/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
log() { printf '[web test] %s\n' "$*" >&2; }
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]} from apt"
  as_root apt-get update
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y --no-install-recommends "${missing[@]}"
fi

"$root/bindings/wasm/build.sh"

cd "$here"
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/pdfjs-dist ]; then
  log "npm install (playwright-core, pdfjs-dist, at the versions in package-lock.json)"
  # Not `npm ci`: pdfjs-dist's optional native canvas packages are only published for some
  # platforms, so the lock file lists this platform's alone and `npm ci` calls it out of sync.
  npm install --no-audit --no-fund
fi

log "node --test tests/e2e.test.mjs"
node --test --test-reporter=spec tests/*.test.mjs
log "screenshots: $here/test-output/"
