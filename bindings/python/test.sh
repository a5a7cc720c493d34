#!/usr/bin/env bash
# Builds the examkit wheel and runs the Python suite against it.
#
# Self-contained and idempotent: creates a virtual environment (bindings/python/.venv, or
# $EXAMKIT_PY_VENV), installs maturin, pytest and mypy into it when missing, builds the abi3
# wheel with `maturin build --release`, installs it, runs the native crate's unit tests and then
# pytest. Needs only a Rust toolchain and Python >= 3.9.
#
# Environment:
#   CARGO_TARGET_DIR  build directory (default: $HOME/.cache/examkit/target-python, so repeated
#                     runs on one machine reuse the build)
#   EXAMKIT_BIN       path of a built `examkit` binary; when set, every test vector's outcome is
#                     also compared byte for byte with `examkit validate`
#   PYTHON            interpreter used to create the environment (default: python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${EXAMKIT_PY_VENV:-$here/.venv}"
python="${PYTHON:-python3}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-python}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

step() { printf '\n== %s\n' "$*"; }

step "python environment ($venv)"
if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -m venv "$venv"; then
    # Debian's python3 ships venv separately.
    if command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && apt-get install -y -qq python3-venv
      rm -rf "$venv"
      "$python" -m venv "$venv"
    else
      echo "cannot create a virtual environment with $python" >&2
      exit 1
    fi
  fi
fi
vpy="$venv/bin/python"
# `pip install` with already satisfied requirements changes nothing and does not download.
"$vpy" -m pip install -q "maturin>=1.9,<2" "pytest>=8" "mypy>=1.10"
"$vpy" -m maturin --version

step "build the wheel (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
wheels="$CARGO_TARGET_DIR/wheels/examkit"
rm -rf "$wheels"
(cd "$here" && "$vpy" -m maturin build --release --interpreter "$vpy" --out "$wheels")
wheel="$(ls "$wheels"/examkit-*.whl)"
"$vpy" -m pip install -q --force-reinstall --no-deps "$wheel"

step "native crate unit tests"
(cd "$here" && PYO3_PYTHON="$vpy" cargo test -q -p examkit-python)

step "pytest"
cd "$here"
if [ -z "${EXAMKIT_BIN:-}" ]; then
  echo "EXAMKIT_BIN is unset: the byte-for-byte comparison with the CLI will be skipped"
fi
"$vpy" -m pytest -q -rs tests
