#!/usr/bin/env bash
# Builds and tests the examkit CLI and service: formatting, clippy, then the whole suite on SQLite
# and on PostgreSQL. PostgreSQL comes from Debian's packages and is installed and started here when
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
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    need_package pg_ctlcluster postgresql
    if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
        [ "$apt_updated" = 1 ] || as_root apt-get update -qq
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq postgresql >/dev/null
    fi
fi

echo "== postgresql"
pg_version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$pg_version main"; then
    as_root pg_createcluster "$pg_version" main >/dev/null
fi
if ! pg_lsclusters -h | awk -v v="$pg_version" '$1==v && $2=="main" {print $4}' | grep -qx online; then
    as_root pg_ctlcluster "$pg_version" main start
fi
pg_port="$(pg_lsclusters -h | awk -v v="$pg_version" '$1==v && $2=="main" {print $3}')"
psql_admin() { as_root su postgres -c "psql -p $pg_port -v ON_ERROR_STOP=1 -qAt -c \"$1\""; }
for _ in $(seq 1 30); do
    psql_admin "SELECT 1" >/dev/null 2>&1 && break
    sleep 1
done
if [ "$(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = 'examkit_test'")" != 1 ]; then
    psql_admin "CREATE ROLE examkit_test LOGIN PASSWORD 'examkit_test' CREATEDB"
fi
if [ "$(psql_admin "SELECT 1 FROM pg_database WHERE datname = 'examkit_test'")" != 1 ]; then
    psql_admin "CREATE DATABASE examkit_test OWNER examkit_test"
fi
drop_test_databases() {
    for db in $(psql_admin "SELECT datname FROM pg_database WHERE datname LIKE 'examkit\_test\_%'"); do
        psql_admin "DROP DATABASE IF EXISTS $db" >/dev/null
    done
}
# Each test case makes its own database; drop those of earlier runs now and of this run at exit.
drop_test_databases
# The object-store tests need an S3-compatible server: the one `tests/run-all.sh` started, or one
# of our own.
s3_server_stop() { :; }
if [ -z "${EXAMKIT_TEST_S3:-}" ]; then
    # shellcheck source=../tests/s3-server.sh
    source "$root/tests/s3-server.sh"
fi
trap 'drop_test_databases; s3_server_stop' EXIT
export EXAMKIT_TEST_POSTGRES_URL="postgres://examkit_test:examkit_test@127.0.0.1:$pg_port/examkit_test"
export EXAMKIT_REQUIRE_POSTGRES=1

echo "== fmt"
cargo fmt -p examkit -- --check
echo "== clippy"
cargo clippy -p examkit --all-targets -- -D warnings
echo "== tests (SQLite and PostgreSQL)"
# The README's marking walkthrough runs the scan maker's command beside examkit's.
cargo build -p examkit-scanmaker
# Calibration marks on a private SQLite database whatever DATABASE_URL says, so its end-to-end run
# (three minutes) is left to the SQLite pass of `make test`'s rust suite.
cargo test -p examkit -- --skip the_shipped_reference_set_is_calibrated
echo "== the app in a browser (SQLite and PostgreSQL)"
# The binaries the tests above built: the service and the scan maker.
EXAMKIT_BIN="$CARGO_TARGET_DIR/debug/examkit" \
    EXAMKIT_SCANMAKER_BIN="$CARGO_TARGET_DIR/debug/examkit-scanmaker" tests/app/test.sh
