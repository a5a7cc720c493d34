#!/usr/bin/env bash
# Builds the examkit wheel and runs the Python suite against it.
#
# Self-contained and idempotent (see build.sh): needs only a Rust toolchain and Python >= 3.9,
# and works unattended (CI=true, no stdin). Runs the native crate's unit tests, then pytest on
# tests/: every shared vector in tests/vectors/, the API, the published schema read by Python's
# jsonschema against the engine, stubtest, the README and the example;
# then pytest on examples/marker/, the example external marker, against the published marker
# schemas (jsonschema) and the freshly built wheel.
#
# Environment:
#   CARGO_TARGET_DIR  build directory (default: $HOME/.cache/examkit/target-python, so repeated
#                     runs on one machine reuse the build)
#   EXAMKIT_BIN       path of a built `examkit` binary; when set, every test vector's outcome is
#                     also compared byte for byte with `examkit validate`
#   EXAMKIT_PY_VENV, PYTHON  see build.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-python}"

if [ -n "${EXAMKIT_BIN:-}" ]; then
  # Relative to where the script was started; pytest runs from bindings/python.
  EXAMKIT_BIN="$(cd "$(dirname "$EXAMKIT_BIN")" && pwd)/$(basename "$EXAMKIT_BIN")"
  export EXAMKIT_BIN
fi

vpy="$(bash "$here/build.sh")"

echo "== native crate unit tests"
(cd "$here" && PYO3_PYTHON="$vpy" cargo test -q --locked -p examkit-python)

echo "== pytest"
cd "$here"
# The schema agreement tests read the published schema with jsonschema, date-times included.
"$vpy" -m pip install -q "jsonschema>=4.18" "rfc3339-validator>=0.1.4"
if [ -z "${EXAMKIT_BIN:-}" ]; then
  echo "EXAMKIT_BIN is unset: the byte-for-byte comparison with the CLI will be skipped"
fi
"$vpy" -m pytest -q -rs tests

echo "== the example external marker (examples/marker)"
"$vpy" -m pip install -q "jsonschema>=4.18"
(cd "$root" && "$vpy" -m pytest -q -rs -p no:cacheprovider examples/marker)

# The wheel is abi3 for CPython >= 3.9: run the suite on the oldest interpreter too, when the
# machine has one (EXAMKIT_EXTRA_PYTHONS lists interpreters; by default pyenv's 3.9, if any).
# mypy no longer runs on 3.9, so the typing checks stay with the main run above.
extra="${EXAMKIT_EXTRA_PYTHONS:-}"
if [ -z "$extra" ] && command -v pyenv >/dev/null 2>&1; then
  extra="$(ls -d "$(pyenv root)"/versions/3.9*/bin/python 2>/dev/null | tail -n 1 || true)"
fi
if [ -z "$extra" ]; then
  echo "== no Python 3.9 interpreter found: the suite ran on $("$vpy" -V) only"
fi
for interpreter in $extra; do
  echo "== pytest on $("$interpreter" -V)"
  other="$CARGO_TARGET_DIR/venv-$("$interpreter" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  [ -x "$other/bin/python" ] || "$interpreter" -m venv "$other"
  "$other/bin/python" -m pip install -q "pytest>=8" "jsonschema>=4.18" "rfc3339-validator>=0.1.4"
  "$other/bin/python" -m pip install -q --force-reinstall --no-deps \
    "$CARGO_TARGET_DIR"/wheels/examkit/examkit-*.whl
  "$other/bin/python" -m pytest -q -rs -p no:cacheprovider tests \
    -k "not test_stubs_match_the_runtime and not type_checks_strictly"
  (cd "$root" && "$other/bin/python" -m pytest -q -rs -p no:cacheprovider examples/marker \
    -k "not type_checks_strictly")
done
