#!/usr/bin/env bash
# Builds the examkit wheel and runs the Python suite against it.
#
# Self-contained and idempotent (see build.sh): needs only a Rust toolchain and Python >= 3.9,
# and works unattended (CI=true, no stdin). Runs the native crate's unit tests, then pytest on
# tests/: every shared vector in tests/vectors/, the API, stubtest, the README and the example.
#
# Environment:
#   CARGO_TARGET_DIR  build directory (default: $HOME/.cache/examkit/target-python, so repeated
#                     runs on one machine reuse the build)
#   EXAMKIT_BIN       path of a built `examkit` binary; when set, every test vector's outcome is
#                     also compared byte for byte with `examkit validate`
#   EXAMKIT_PY_VENV, PYTHON  see build.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-python}"

vpy="$(bash "$here/build.sh")"

echo "== native crate unit tests"
(cd "$here" && PYO3_PYTHON="$vpy" cargo test -q -p examkit-python)

echo "== pytest"
cd "$here"
if [ -z "${EXAMKIT_BIN:-}" ]; then
  echo "EXAMKIT_BIN is unset: the byte-for-byte comparison with the CLI will be skipped"
fi
"$vpy" -m pytest -q -rs tests
