# shellcheck shell=bash
# Sourced by the test scripts: starts an S3-compatible server for this run (moto's server mode,
# from PyPI, in a virtual environment under the build cache) on a free local port, and exports
# what the object-store tests read (EXAMKIT_TEST_S3, AWS_ENDPOINT_URL, test credentials).
# `s3_server_stop` stops it; callers run it on exit.
#
#   source tests/s3-server.sh && trap s3_server_stop EXIT

s3_cache="${EXAMKIT_CACHE:-$HOME/.cache/examkit}"
s3_venv="$s3_cache/moto-venv"
s3_moto_version="5.2.5"
s3_pid=""

s3_server_stop() {
  if [ -n "$s3_pid" ]; then
    kill "$s3_pid" 2>/dev/null
    wait "$s3_pid" 2>/dev/null
    s3_pid=""
  fi
}

s3_server_start() {
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo -n"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
  fi
  if ! "$s3_venv/bin/python" -c "import moto, sys; sys.exit(moto.__version__ != '$s3_moto_version')" 2>/dev/null; then
    echo "installing moto $s3_moto_version (the S3-compatible test server) into $s3_venv"
    python3 -m venv "$s3_venv" &&
      "$s3_venv/bin/pip" install -q "moto[server]==$s3_moto_version" || return 1
  fi
  local port log
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  log="$(mktemp -t examkit-s3.XXXXXX)"
  "$s3_venv/bin/moto_server" -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
  s3_pid=$!
  for _ in $(seq 1 100); do
    if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/', timeout=1)" 2>/dev/null; then
      export EXAMKIT_TEST_S3=1
      export AWS_ENDPOINT_URL="http://127.0.0.1:$port"
      export AWS_ACCESS_KEY_ID=examkit-test AWS_SECRET_ACCESS_KEY=examkit-test AWS_REGION=us-east-1
      echo "S3-compatible test server (moto $s3_moto_version) at $AWS_ENDPOINT_URL"
      return 0
    fi
    sleep 0.2
  done
  echo "the S3-compatible test server did not start:" >&2
  cat "$log" >&2
  s3_server_stop
  return 1
}

s3_server_start
