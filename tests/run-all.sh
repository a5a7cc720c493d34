#!/usr/bin/env bash
# Runs every suite of examkit, installing what each needs (Python build tools, the WASM toolchain,
# Chromium, PostgreSQL) when it is missing. Build outputs go under $EXAMKIT_CACHE (default
# $HOME/.cache/examkit) so repeated runs on one machine reuse them; a fresh machine builds cold.
#
#   tests/run-all.sh            every suite
#   tests/run-all.sh rust       only the named suites (rust bank python wasm web postgres api fuzz)
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cache="${EXAMKIT_CACHE:-$HOME/.cache/examkit}"
native_target="${CARGO_TARGET_DIR:-$cache/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# insta never writes snapshots here: a missing or changed snapshot fails the run.
export INSTA_UPDATE=no CI="${CI:-true}"
# Tesseract (OpenMP) reads its thread limit at process start: one thread per OCR engine.
export OMP_THREAD_LIMIT=1

suites=("$@")
[ "${#suites[@]}" -eq 0 ] && suites=(rust bank python wasm web postgres api fuzz)
passed=0
failed=0
failures=()

# Each suite's output is also kept, so a failed suite's last lines are printed again at the end,
# where a reader of only the run's tail (a CI summary) still sees why it failed.
logs="$(mktemp -d)"
run() {
  local name="$1"
  shift
  printf '\n==> %s\n' "$name"
  local started=$SECONDS log="$logs/$((passed + failed)).log"
  "$@" 2>&1 | tee "$log"
  if [ "${PIPESTATUS[0]}" -eq 0 ]; then
    passed=$((passed + 1))
    printf '==> %s: ok (%ss)\n' "$name" $((SECONDS - started))
  else
    failed=$((failed + 1))
    failures+=("$name")
    failure_logs+=("$log")
    printf '==> %s: FAILED (%ss)\n' "$name" $((SECONDS - started))
  fi
}
failure_logs=()

wants() {
  local s
  for s in "${suites[@]}"; do [ "$s" = "$1" ] && return 0; done
  return 1
}

install_native() {
  # The native packages the service builds and runs with (shared with `make run`), and what the
  # suites read and write with: poppler, the tesseract command, handwriting fonts.
  bash scripts/native-packages.sh --test
}

# The Rust tests, built once on the workspace's default members (one set of features) and run
# as cargo runs them (each binary in its package's directory): every crate's unit tests and its
# own test files, the doc tests, then the service's integration tests (one binary,
# `service/tests/it`) suite by suite, a module a process; each suite's time is printed at the end.
rust_tests() {
  local status=0 started module bin dir package target times=() it="" it_dir=""
  local built="$logs/test-binaries"
  CARGO_TARGET_DIR="$native_target" cargo test --locked --no-run --message-format=json-render-diagnostics \
    >"$logs/cargo.json" || return 1
  python3 tests/test-binaries.py <"$logs/cargo.json" >"$built" || return 1
  while IFS=$'\t' read -r bin dir package target; do
    if [ "$package/$target" = "examkit/it" ]; then
      it="$bin" it_dir="$dir"
      continue
    fi
    printf '\n     Running %s (%s)\n' "$target" "$package"
    (cd "$dir" && CARGO_MANIFEST_DIR="$dir" CARGO_PKG_NAME="$package" "$bin") || status=1
  done <"$built"
  CARGO_TARGET_DIR="$native_target" cargo test --locked --doc || status=1
  [ -n "$it" ] || { echo "the service's integration tests were not built" >&2; return 1; }
  local modules other skip
  modules=$(sed -n 's/^mod \([a-z_0-9]*\);$/\1/p' service/tests/it/main.rs)
  for module in $modules; do
    [ "$module" = common ] && continue
    # A filter matches anywhere in a name: `questions::` would run `marking_questions::` too.
    skip=()
    for other in $modules; do
      [ "$other" != "$module" ] && [[ "$other" == *"_$module" ]] && skip+=(--skip "$other::")
    done
    started=$SECONDS
    printf '\n     Running tests/it %s::\n' "$module"
    (cd "$it_dir" && CARGO_MANIFEST_DIR="$it_dir" CARGO_PKG_NAME=examkit "$it" "${module}::" "${skip[@]}") ||
      status=1
    times+=("$module $((SECONDS - started))")
  done
  printf '\n%-32s %8s\n' "service suite (tests/it)" seconds
  printf '%s\n' "${times[@]}" | sort -k2 -rn | awk '{ printf "%-32s %8s\n", $1, $2 }'
  return "$status"
}

rust_suite() {
  install_native &&
    CARGO_TARGET_DIR="$native_target" cargo fmt --all --check &&
    CARGO_TARGET_DIR="$native_target" cargo clippy --workspace --all-targets --locked -- -D warnings &&
    CARGO_TARGET_DIR="$native_target" tests/first-run.sh &&
    rust_tests
}

fuzz_suite() {
  if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "no nightly toolchain: the fuzz smoke run is skipped (see fuzz/README.md)"
    return 0
  fi
  if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked || return 1
  fi
  # `inspect` reads files as the page processes do, under their budgets: 1 GiB, 20 s a file.
  fuzz/seed.sh &&
    (cd fuzz && CARGO_TARGET_DIR="$cache/target-fuzz" cargo +nightly fuzz run validate corpus/validate -- \
      -max_total_time="${EXAMKIT_FUZZ_SECONDS:-60}" -max_len=65536 -print_final_stats=1) &&
    (cd fuzz && CARGO_TARGET_DIR="$cache/target-fuzz" cargo +nightly fuzz run inspect corpus/inspect -- \
      -max_total_time="${EXAMKIT_FUZZ_SECONDS:-60}" -max_len=262144 -rss_limit_mb=1024 -timeout=20 \
      -print_final_stats=1)
}

# A build cache reused across checkouts keeps every checkout's test binaries; the stale ones go.
for dir in "$native_target" "$cache/target-python" "$cache/target-wasm" "$cache/target-fuzz"; do
  [ -d "$dir" ] && python3 tests/prune-cache.py "$dir"
done

# The object-store tests of the rust and service suites use an S3-compatible server started here
# for the whole run (tests/s3-server.sh); every suite then builds the tests alike.
# PostgreSQL likewise (tests/postgres-server.sh): the rust suite's tests then run the
# service's tests on SQLite and on PostgreSQL in one build, and the service suite is left with the
# browser tests.
if wants rust || wants postgres; then
  # shellcheck source=tests/s3-server.sh
  source tests/s3-server.sh || { echo "cannot start the S3-compatible test server" >&2; exit 1; }
  trap s3_server_stop EXIT
  # shellcheck source=tests/postgres-server.sh
  source tests/postgres-server.sh || { echo "cannot start PostgreSQL for the tests" >&2; exit 1; }
  trap 'pg_drop_test_databases; s3_server_stop' EXIT
fi

# The service suite leaves the service's tests to a rust suite that passed here.
service_tested=""
if wants rust; then
  failed_before=$failed
  run "rust: fmt, clippy, make run on a new database, unit, vectors, properties, schemas, snapshots, CLI, service on SQLite and PostgreSQL" rust_suite
  [ "$failed" -eq "$failed_before" ] && service_tested=1
fi
wants bank && run "bank: sample question bank and its checker" \
  bash -c 'python3 service/bank/check.py && python3 -m unittest discover -s service/bank -p "test_*.py"'
examkit_bin="$native_target/debug/examkit"
[ -x "$examkit_bin" ] || examkit_bin=""
wants python && run "python: wheel and pytest" \
  env CARGO_TARGET_DIR="$cache/target-python" EXAMKIT_BIN="$examkit_bin" bindings/python/test.sh
wants wasm && run "wasm: package, node tests, types" \
  env CARGO_TARGET_DIR="$cache/target-wasm" EXAMKIT_BIN="$examkit_bin" bindings/wasm/test.sh
wants web && [ -x examples/web/test.sh ] && run "web: in-browser checker in Chromium" \
  env CARGO_TARGET_DIR="$cache/target-wasm" examples/web/test.sh
wants postgres && [ -x service/test.sh ] && install_native && run "service: the app in a browser on SQLite and PostgreSQL" \
  env CARGO_TARGET_DIR="$native_target" EXAMKIT_SERVICE_TESTED="$service_tested" service/test.sh
wants api && install_native && run "api: every route under schemathesis, all checks" \
  env CARGO_TARGET_DIR="$native_target" tests/schemathesis.sh
wants fuzz && run "fuzz: 60-second smoke run" fuzz_suite

echo
for i in "${!failures[@]}"; do
  printf '\n==> the last lines of the failed suite "%s":\n' "${failures[$i]}"
  grep -v '^[[:space:]]*$' "${failure_logs[$i]}" | tail -n "${EXAMKIT_FAILURE_LINES:-60}"
done
rm -rf "$logs"
echo
for name in "${failures[@]}"; do echo "failed: $name"; done
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
