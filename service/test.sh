#!/usr/bin/env bash
# Builds and tests the examkit CLI and service: formatting, clippy, then the whole suite on SQLite
# and on PostgreSQL, then the app in a browser on both. PostgreSQL comes from Debian's packages and is installed and started here when
# missing; the PostgreSQL variants are required (EXAMKIT_REQUIRE_POSTGRES), never skipped silently.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-service}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# Tesseract (OpenMP) reads its thread limit at process start: one thread per OCR engine.
export OMP_THREAD_LIMIT=1

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

apt_updated=0
need_package() {
    # need_package COMMAND PACKAGE: installs PACKAGE from Debian when COMMAND is missing.
    if ! command -v "$1" >/dev/null 2>&1; then
        if [ "$apt_updated" = 0 ]; then
            as_root apt-get update -qq
            apt_updated=1
        fi
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$2" >/dev/null
    fi
}

echo "== tools"
need_package curl curl
need_package pdftotext poppler-utils
need_package tesseract tesseract-ocr
need_package clang clang
# The page indexer links Tesseract and Leptonica and reads English and orientation data.
for pkg in libtesseract-dev libleptonica-dev tesseract-ocr-eng tesseract-ocr-osd fonts-dkg-handwriting fonts-comic-neue; do
    if ! dpkg -s "$pkg" >/dev/null 2>&1; then
        [ "$apt_updated" = 1 ] || { as_root apt-get update -qq; apt_updated=1; }
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$pkg" >/dev/null
    fi
done
echo "== postgresql"
# shellcheck source=../tests/postgres-server.sh
source "$root/tests/postgres-server.sh"
# The object-store tests need an S3-compatible server: the one `tests/run-all.sh` started, or one
# of our own.
s3_server_stop() { :; }
if [ -z "${EXAMKIT_TEST_S3:-}" ]; then
    # shellcheck source=../tests/s3-server.sh
    source "$root/tests/s3-server.sh"
fi
trap 'pg_drop_test_databases; s3_server_stop' EXIT

if [ -n "${EXAMKIT_SERVICE_TESTED:-}" ]; then
    # `tests/run-all.sh` has checked and run the service's tests on both databases in its rust
    # suite, with this PostgreSQL and the same build; only the browser tests are left.
    echo "== the service's tests ran on SQLite and PostgreSQL in the rust suite"
    cargo build -p examkit -p examkit-scanmaker
else
    echo "== fmt"
    cargo fmt -p examkit -- --check
    echo "== clippy"
    cargo clippy -p examkit --all-targets -- -D warnings
    echo "== tests (SQLite and PostgreSQL)"
    # The README's marking walkthrough runs the scan maker's command beside examkit's.
    cargo build -p examkit-scanmaker
    # Calibration marks on a private SQLite database whatever DATABASE_URL says, so its
    # end-to-end run (three minutes) is left to `make test`'s rust suite.
    cargo test -p examkit -- --skip the_shipped_reference_set_is_calibrated
fi
echo "== the app in a browser (SQLite and PostgreSQL)"
# The binaries the tests above built: the service and the scan maker.
EXAMKIT_BIN="$CARGO_TARGET_DIR/debug/examkit" \
    EXAMKIT_SCANMAKER_BIN="$CARGO_TARGET_DIR/debug/examkit-scanmaker" tests/app/test.sh
