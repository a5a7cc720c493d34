#!/usr/bin/env bash
# Benchmarks examkit from Python against the engine and the jsonschema / fastjsonschema
# validators (see bench.py). Builds and installs the wheel (../build.sh), installs the two
# validators, writes the fixtures with examkit-fixtures, and runs bench.py.
#
#   bindings/python/bench/run.sh [--rust] [bench.py options...]
#
# --rust first runs the Rust benchmark (cargo bench -p examkit-engine --bench validate, about two
# minutes) so that its criterion medians are printed beside the Python figures.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-python}"

rust=0
if [ "${1:-}" = "--rust" ]; then
  rust=1
  shift
fi

vpy="$(bash "$here/../build.sh")"
"$vpy" -m pip install -q "jsonschema>=4.20" "fastjsonschema>=2.19"

fixtures="$CARGO_TARGET_DIR/examkit-fixtures"
(cd "$root" && cargo run -q --release -p examkit-fixtures -- "$fixtures")

if [ "$rust" = 1 ]; then
  (cd "$root" && cargo bench -q -p examkit-engine --bench validate)
fi

"$vpy" "$here/bench.py" "$fixtures" --criterion "$CARGO_TARGET_DIR/criterion" "$@"
