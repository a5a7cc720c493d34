#!/usr/bin/env bash
# Paper export benchmark: release build, loopback, the sample bank. Times, over HTTP, saving a
# 24-question paper (each save typesets it to count its pages) and preparing its two PDFs: cold
# (the first paper a fresh process typesets), then warm (a new paper of other questions, and new
# revisions of the first paper). service/examples/export_bench.rs is the client.
#
#   service/bench/export.sh                         # SQLite
#   BENCH_WRITING_SPACE=1-page BENCH_RUNS=10 service/bench/export.sh
#   BENCH_POSTGRES_URL=postgres://user:pass@host/db service/bench/export.sh   # also PostgreSQL
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-service}"
runs="${BENCH_RUNS:-5}"
space="${BENCH_WRITING_SPACE:-smart}"
pg_url="${BENCH_POSTGRES_URL:-}"

echo "== build (release)"
cargo build --release -q -p examkit --example export_bench
bench="$CARGO_TARGET_DIR/release/examples/export_bench"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== SQLite"
"$bench" "sqlite://$work/export.db?mode=rwc" --runs "$runs" --writing-space "$space"
if [ -n "$pg_url" ]; then
    echo "== PostgreSQL"
    "$bench" "$pg_url" --runs "$runs" --writing-space "$space"
fi
