#!/usr/bin/env bash
# Search benchmark: a 100,000-question bank on SQLite and on PostgreSQL, release build, loopback.
# For each backend: the synthetic bank of examkit_bank::generate (seed 1, the generator behind
# `examkit bank generate`) is imported with the bank importer, which indexes it in its transaction, then `GET /v1/questions` is measured for text queries, filtered queries, random
# samples and a cursor page; p50, p99 and max latencies are printed (service/examples/search_bench.rs,
# a small Rust load client; rate limits are off, as with `serve --rate-limits off`).
# Each backend is measured three ways: one request at a time; at a steady BENCH_RATE requests a
# second (default 100: twenty accounts at the spec's limit of 300 a minute), sent without waiting
# for replies; and with BENCH_CONCURRENCY (default 4) in flight, which saturates a 2-core machine
# running the client, the server and the database (its req/s column is the throughput).
#
#   service/bench/search.sh
#   BENCH_QUESTIONS=20000 BENCH_REQUESTS=4000 BENCH_CONCURRENCY=8 service/bench/search.sh
#   BENCH_POSTGRES_URL=postgres://user:pass@host/db service/bench/search.sh   # a database with CREATEDB rights
#
# Without BENCH_POSTGRES_URL (or EXAMKIT_TEST_POSTGRES_URL) the PostgreSQL run is skipped.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-service}"
questions="${BENCH_QUESTIONS:-100000}"
requests="${BENCH_REQUESTS:-2000}"
concurrency="${BENCH_CONCURRENCY:-4}"
rate="${BENCH_RATE:-100}"
pg_url="${BENCH_POSTGRES_URL:-${EXAMKIT_TEST_POSTGRES_URL:-}}"

echo "== build (release)"
cargo build --release -q -p examkit --example search_bench
bench="$CARGO_TARGET_DIR/release/examples/search_bench"

work="$(mktemp -d)"
pg_db=
cleanup() {
    if [ -n "$pg_db" ] && command -v psql >/dev/null 2>&1; then
        psql -q "$pg_url" -c "DROP DATABASE IF EXISTS $pg_db" >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# Fills the database at $1 if needed, then measures it under each load.
measure() {
    "$bench" "$1" --questions "$questions" --requests "$((requests / 2))" --concurrency 1
    "$bench" "$1" --questions "$questions" --requests "$requests" --rate "$rate" | tail -n +2
    "$bench" "$1" --questions "$questions" --requests "$requests" --concurrency "$concurrency" \
        | tail -n +2
}

echo "== SQLite ($questions questions)"
measure "sqlite://$work/search.db?mode=rwc"

if [ -n "$pg_url" ]; then
    command -v psql >/dev/null 2>&1 || { echo "psql is needed for the PostgreSQL run" >&2; exit 1; }
    pg_db="examkit_search_bench_$$"
    psql -q "$pg_url" -c "CREATE DATABASE $pg_db" >/dev/null
    base="${pg_url%%\?*}"
    db_url="${base%/*}/$pg_db"
    echo "== PostgreSQL ($questions questions, shared_buffers $(psql -qAt "$pg_url" -c 'SHOW shared_buffers'))"
    measure "$db_url"
else
    echo "== PostgreSQL: skipped (set BENCH_POSTGRES_URL)"
fi
