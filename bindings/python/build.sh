#!/usr/bin/env bash
# Creates the Python environment and builds and installs the examkit wheel into it.
#
# Idempotent: the virtual environment (bindings/python/.venv, or $EXAMKIT_PY_VENV) is created
# once; maturin, pytest and mypy are installed when missing; the wheel is rebuilt with
# `maturin build --release` (cargo rebuilds only what changed) and reinstalled. Needs only a Rust
# toolchain and Python >= 3.9. Used by test.sh and bench/run.sh; prints the venv's python last.
#
# Environment:
#   CARGO_TARGET_DIR  build directory (default: $HOME/.cache/examkit/target-python)
#   EXAMKIT_PY_VENV   the virtual environment (default: bindings/python/.venv)
#   PYTHON            interpreter used to create it (default: python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${EXAMKIT_PY_VENV:-$here/.venv}"
python="${PYTHON:-python3}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-python}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

echo "== python environment ($venv)" >&2
if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -m venv "$venv" >&2; then
    # Debian's python3 ships venv separately.
    if command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq >&2 && apt-get install -y -qq python3-venv >&2
      rm -rf "$venv"
      "$python" -m venv "$venv" >&2
    else
      echo "cannot create a virtual environment with $python" >&2
      exit 1
    fi
  fi
fi
vpy="$venv/bin/python"
# Already satisfied requirements are neither downloaded nor changed.
"$vpy" -m pip install -q "maturin>=1.9,<2" "pytest>=8" "mypy>=1.10" >&2

echo "== build the wheel (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)" >&2
wheels="$CARGO_TARGET_DIR/wheels/examkit"
rm -rf "$wheels"
(cd "$here" && "$vpy" -m maturin build --release --locked --interpreter "$vpy" --out "$wheels" >&2)
"$vpy" -m pip install -q --force-reinstall --no-deps "$wheels"/examkit-*.whl >&2
echo "$vpy"
