#!/usr/bin/env bash
# Browser tests of the teachers' app at /app/ in headless Chromium (Debian's /usr/bin/chromium
# driven by playwright-core), with accessibility checks by axe-core. Installs Node, Chromium and the
# npm packages when missing; does not build Rust: it runs the binaries named by EXAMKIT_BIN and
# EXAMKIT_SCANMAKER_BIN (default: the debug builds in $CARGO_TARGET_DIR or
# $HOME/.cache/examkit/target). Runs on SQLite, then on PostgreSQL too when
# EXAMKIT_TEST_POSTGRES_URL is set (a database of its own is made there and dropped at the end).
# Screenshots go to test-output/sqlite/ and test-output/postgres/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf '[app test] %s\n' "$*" >&2; }
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

target="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target}"
export EXAMKIT_BIN="${EXAMKIT_BIN:-$target/debug/examkit}"
export EXAMKIT_SCANMAKER_BIN="${EXAMKIT_SCANMAKER_BIN:-$target/debug/examkit-scanmaker}"
for bin in "$EXAMKIT_BIN" "$EXAMKIT_SCANMAKER_BIN"; do
  if [ ! -x "$bin" ]; then
    log "missing $bin: build it first (cargo build -p examkit -p examkit-scanmaker) or set EXAMKIT_BIN and EXAMKIT_SCANMAKER_BIN"
    exit 1
  fi
done

missing=()
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -f /usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf ] || missing+=(fonts-comic-neue)
if [ -n "${EXAMKIT_TEST_POSTGRES_URL:-}" ] && ! command -v psql >/dev/null; then missing+=(postgresql-client); fi
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]} from apt"
  as_root apt-get update
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y --no-install-recommends "${missing[@]}"
fi

cd "$here"
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then
  log "npm install (playwright-core, axe-core, at the versions in package-lock.json)"
  npm install --no-audit --no-fund
fi

# Tesseract (OpenMP) reads its thread limit at process start: one thread per OCR engine.
export OMP_THREAD_LIMIT=1
scratch="$(mktemp -d)"
pg_database=""
cleanup() {
  rm -rf "$scratch"
  if [ -n "$pg_database" ]; then
    psql "$EXAMKIT_TEST_POSTGRES_URL" -v ON_ERROR_STOP=1 -qAt -c "DROP DATABASE IF EXISTS $pg_database" >/dev/null || true
  fi
}
trap cleanup EXIT

failed=()
log "SQLite: node --test app.test.mjs"
(unset DATABASE_URL; EXAMKIT_DATA_DIR="$scratch/sqlite" && mkdir -p "$EXAMKIT_DATA_DIR" &&
  export EXAMKIT_DATA_DIR && node --test --test-reporter=spec ./*.test.mjs) 2>&1 | tee "$scratch/sqlite.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed+=(SQLite)

if [ -n "${EXAMKIT_TEST_POSTGRES_URL:-}" ]; then
  pg_database="examkit_test_app_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
  psql "$EXAMKIT_TEST_POSTGRES_URL" -v ON_ERROR_STOP=1 -qAt -c "CREATE DATABASE $pg_database" >/dev/null
  # The same server and credentials, the new database.
  pg_url="$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.href)' \
    "$EXAMKIT_TEST_POSTGRES_URL" "$pg_database")"
  log "PostgreSQL ($pg_database): node --test app.test.mjs"
  (DATABASE_URL="$pg_url" EXAMKIT_DATA_DIR="$scratch/postgres" && mkdir -p "$EXAMKIT_DATA_DIR" &&
    export DATABASE_URL EXAMKIT_DATA_DIR && node --test --test-reporter=spec ./*.test.mjs) 2>&1 |
    tee "$scratch/postgres.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed+=(PostgreSQL)
else
  log "EXAMKIT_TEST_POSTGRES_URL is not set: PostgreSQL not tested"
fi
log "screenshots and axe results: $here/test-output/"
if [ "${#failed[@]}" -gt 0 ]; then
  # Why each run failed, again at the end, where a reader of the run's last lines finds it.
  for db in "${failed[@]}"; do
    name="$(echo "$db" | tr '[:upper:]' '[:lower:]')"
    [ "$name" = postgresql ] && name=postgres
    log "why $db failed:"
    sed -n '/failing tests:/,$p' "$scratch/$name.log" | grep -v '^[[:space:]]*$' | head -n 40 >&2
  done
  log "failed on: ${failed[*]}"
  exit 1
fi
