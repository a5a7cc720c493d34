#!/usr/bin/env bash
# HTTP benchmark of `examkit serve` on loopback, SQLite, release build: `GET /v1/me` and
# `POST /v1/marking/imports/{id}/validate` with the typical submission from examkit-fixtures.
# Prints requests/second and p50/p99 latency for both, and the validate latency as a multiple of
# the engine's in-process time for the same document (examples/engine_validate.rs).
#
#   service/bench/http.sh                  # 10 s per run
#   BENCH_SECONDS=30 BENCH_CONNECTIONS=32 service/bench/http.sh
#
# The server runs with `--rate-limits off` (counters are kept, nothing is refused), so the
# specification's 120 requests a minute do not throttle the load. `wrk` comes from Debian's
# packages and is installed when missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-service}"
seconds="${BENCH_SECONDS:-10}"
connections="${BENCH_CONNECTIONS:-16}"

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}
if ! command -v wrk >/dev/null 2>&1; then
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq wrk >/dev/null
fi
command -v curl >/dev/null 2>&1 || {
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq curl >/dev/null
}

echo "== build (release)"
cargo build --release -q -p examkit --bin examkit --example engine_validate
cargo build --release -q -p examkit-fixtures
bin="$CARGO_TARGET_DIR/release/examkit"

work="$(mktemp -d)"
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$CARGO_TARGET_DIR/release/examkit-fixtures" "$work/fixtures" >/dev/null
data="$work/data"
user="$("$bin" users create --name "Benchmark" --data-dir "$data")"
key="$("$bin" keys create --user "$user" --name bench --scopes marking:import,marking:read \
    --expires 30d --data-dir "$data" 2>/dev/null)"

"$bin" serve --listen 127.0.0.1:0 --data-dir "$data" --rate-limits off --log-format json \
    > "$work/serve.out" 2> "$work/serve.log" &
server_pid=$!
for _ in $(seq 100); do
    grep -q '^listening on ' "$work/serve.out" 2>/dev/null && break
    sleep 0.1
done
base="$(sed -n 's/^listening on //p' "$work/serve.out")"
[ -n "$base" ] || { echo "the server did not start:" >&2; cat "$work/serve.log" >&2; exit 1; }
auth="Authorization: Bearer $key"
first_id() { grep -o '"id":"[^"]*"' | head -n 1 | cut -d '"' -f 4; }

# An import with the fixture's two PDFs (a 6-page script and a 4-page scheme, the page counts the
# typical submission declares), and the submission rewritten to the uploaded asset ids.
import_id="$(curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/json" \
    -H "Idempotency-Key: bench-import-$$" -d '{"title":"Benchmark"}' \
    "$base/v1/marking/imports" | first_id)"
upload() {
    curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/pdf" --data-binary "@$2" \
        "$base/v1/marking/imports/$import_id/assets?kind=$1&name=$(basename "$2")" | first_id
}
work_id="$(upload work examples/curl/student-script.pdf)"
scheme_id="$(upload scheme examples/curl/mark-scheme.pdf)"
sed -e "s/3f6c2a9e-8b1d-4e57-9a0c-5d2e7b41c8f3/$work_id/g" \
    -e "s/b2d94e17-6a3c-4f08-8e55-1c7a9f0d3b62/$scheme_id/g" \
    "$work/fixtures/typical.json" > "$work/typical.json"
printf '[{"id":"%s","kind":"work","pageCount":6},{"id":"%s","kind":"scheme","pageCount":4}]' \
    "$work_id" "$scheme_id" > "$work/typical.assets.json"
validate_url="$base/v1/marking/imports/$import_id/validate"
check="$(curl -sS -o /dev/null -w '%{http_code}' -H "$auth" -H "Content-Type: application/json" \
    --data-binary "@$work/typical.json" "$validate_url")"
[ "$check" = 200 ] || { echo "validate answered $check, not 200" >&2; exit 1; }

cat > "$work/validate.lua" <<LUA
local f = assert(io.open("$work/typical.json", "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $key"
LUA

# run FILE NAME CONNECTIONS URL [wrk args…]: prints "NAME rps p50 p99" from wrk's report.
run() {
    local file="$work/$1.txt" name="$2" conns="$3" url="$4"
    shift 4
    wrk -t "$(( conns < 2 ? conns : 2 ))" -c "$conns" -d "${seconds}s" --latency "$@" "$url" > "$file"
    if grep -q 'Non-2xx' "$file"; then
        echo "$name: some responses were not 2xx" >&2
        cat "$file" >&2
        exit 1
    fi
    awk -v name="$name" '
        function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
        /^ +50%/ { p50 = ms($2) }
        /^ +99%/ { p99 = ms($2) }
        /^Requests\/sec:/ { rps = $2 }
        END { printf "%-28s %10.0f req/s   p50 %8.3f ms   p99 %8.3f ms\n", name, rps, p50, p99 }
    ' "$file"
}

echo "== wrk: ${seconds}s per run, loopback, SQLite, rate limits off"
run me "GET /v1/me (c=$connections)" "$connections" "$base/v1/me" -H "$auth" | tee "$work/me.res"
run validate "POST validate (c=$connections)" "$connections" "$validate_url" -s "$work/validate.lua" | tee "$work/v.res"
run validate1 "POST validate (c=1)" 1 "$validate_url" -s "$work/validate.lua" | tee "$work/v1.res"

echo "== engine in process (same document and assets)"
engine="$("$CARGO_TARGET_DIR/release/examples/engine_validate" "$work/typical.json" "$work/typical.assets.json" "$seconds")"
echo "$engine"
engine_p50_us="$(echo "$engine" | sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p')"
http_p50_ms="$(awk '{ for (i = 1; i <= NF; i++) if ($i == "p50") print $(i + 1) }' "$work/v1.res")"
awk -v e="$engine_p50_us" -v h="$http_p50_ms" 'BEGIN {
    printf "validate over HTTP (one connection, p50 %.3f ms) = %.1f x the engine in process (p50 %.1f us)\n", h, h * 1000 / e, e
}'
