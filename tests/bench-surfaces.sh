#!/usr/bin/env bash
# One run that compares every surface on the same typical and maximum-size submissions:
# the native engine, the Python package (str and dict in) beside the jsonschema and fastjsonschema
# validators on the published schema, and the WASM package in Node beside native.
# A benchmark, not a test: it prints figures and fails only if something cannot run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${EXAMKIT_CACHE:-$HOME/.cache/examkit}"

printf '\n==> native engine (criterion): parse alone, parse + jsonschema, full validation\n'
(cd "$root" && CARGO_TARGET_DIR="$cache/target-bench" cargo bench -q -p examkit-engine --bench validate)

printf '\n==> Python package vs engine in process, jsonschema and fastjsonschema\n'
CARGO_TARGET_DIR="$cache/target-python" bash "$root/bindings/python/bench/run.sh" --seconds "${EXAMKIT_BENCH_SECONDS:-5}"

printf '\n==> WASM package in Node vs native\n'
bash "$root/bindings/wasm/build.sh" >/dev/null
EXAMKIT_BENCH_TARGET_DIR="$cache/target-bench" node "$root/bindings/wasm/bench/bench.mjs"
