#!/usr/bin/env bash
# HTTP benchmark of `examkit serve` on loopback, release build: `GET /v1/me` and
# `POST /v1/marking/imports/{id}/validate` with the typical submission from examkit-fixtures, and
# the floor: `GET /healthz`, answered by the same router and HTTP stack with no key and no
# database. Prints requests/second and p50/p99 latency for each, each case's share of the floor,
# the validate latency as a multiple of the engine's in-process time for the same document, and
# where a request's time goes (the server's own phase timings, summed over a run).
#
#   service/bench/http.sh                                  # SQLite, 10 s per run
#   BENCH_POSTGRES_URL=postgres://… service/bench/http.sh  # and PostgreSQL (a schema per binary)
#   BASELINE_BIN=/path/to/older/examkit service/bench/http.sh   # before and after, in one run
#   BENCH_SECONDS=30 BENCH_CONNECTIONS=32 service/bench/http.sh
#
# The server counts every request in the rate counters and checks them against limits exactly as
# it does with the specification's limits; it runs with `--rate-limits off`, whose limits are out
# of reach, because the specification allows one key 120 requests a minute: a throughput run of
# one key with them would measure refusals. Usage records, authentication and logging (JSON, to a
# file) are all on. `wrk` comes from Debian's packages and is installed when missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target}"
seconds="${BENCH_SECONDS:-10}"
connections="${BENCH_CONNECTIONS:-16}"

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}
need() {
    command -v "$1" >/dev/null 2>&1 && return
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$2" >/dev/null
}
need wrk wrk
need curl curl
[ -z "${BENCH_POSTGRES_URL:-}" ] || need psql postgresql-client

echo "== build (release)"
cargo build --release -q -p examkit --bin examkit --example engine_validate
cargo build --release -q -p examkit-fixtures
current="$CARGO_TARGET_DIR/release/examkit"

work="$(mktemp -d)"
server_pid=
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}
cleanup() {
    stop_server
    rm -rf "$work"
}
trap cleanup EXIT

"$CARGO_TARGET_DIR/release/examkit-fixtures" "$work/fixtures" >/dev/null

# run FILE NAME CONNECTIONS URL [wrk args…]: prints "NAME rps p50 p99" from wrk's report.
run() {
    local file="$1" name="$2" conns="$3" url="$4"
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
        END { printf "%-34s %9.0f req/s   p50 %7.3f ms   p99 %7.3f ms\n", name, rps, p50, p99 }
    ' "$file"
}

rps_of() { awk '{ for (i = 1; i <= NF; i++) if ($(i + 1) == "req/s") { print $i; exit } }' "$1"; }

# The server's phase timings: the sum and count of each phase's histogram, from a scrape.
phases() {
    curl -sS "$1/metrics" | awk '
        /^examkit_request_phase_seconds_sum/ { match($0, /phase="[a-z]+"/); p = substr($0, RSTART + 7, RLENGTH - 8); sum[p] = $NF }
        /^examkit_request_phase_seconds_count/ { match($0, /phase="[a-z]+"/); p = substr($0, RSTART + 7, RLENGTH - 8); n[p] = $NF }
        /^examkit_http_request_duration_seconds_sum/ && /route="\/v1\/me"/ { total = $NF }
        /^examkit_http_request_duration_seconds_count/ && /route="\/v1\/me"/ { count = $NF }
        END {
            split("authenticate admit handle finish", names, " ")
            for (i in names) printf "%s %s %s\n", names[i], sum[names[i]] + 0, n[names[i]] + 0
            printf "total %s %s\n", total + 0, count + 0
        }'
}

# bench LABEL BINARY BACKEND: one binary on one backend, every case; results in $work/LABEL-BACKEND.*
bench() {
    local label="$1" bin="$2" backend="$3"
    local out="$work/$label-$backend" data db_args=()
    data="$out.data"
    mkdir -p "$data"
    if [ "$backend" = postgres ]; then
        local schema="examkit_bench_$label"
        psql -q "$BENCH_POSTGRES_URL" -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >/dev/null
        local sep='?'
        case "$BENCH_POSTGRES_URL" in *\?*) sep='&' ;; esac
        db_args=(--database "${BENCH_POSTGRES_URL}${sep}options=-c%20search_path%3D${schema},public")
    fi
    local user key
    user="$("$bin" users create --name "Benchmark" --data-dir "$data" "${db_args[@]}")"
    key="$("$bin" keys create --user "$user" --name bench --scopes marking:import,marking:read \
        --expires 30d --data-dir "$data" "${db_args[@]}" 2>/dev/null)"

    "$bin" serve --listen 127.0.0.1:0 --data-dir "$data" "${db_args[@]}" --rate-limits off \
        --metrics-listen 127.0.0.1:0 --log-format json > "$out.serve.out" 2> "$out.serve.log" &
    server_pid=$!
    for _ in $(seq 100); do
        grep -q '^listening on ' "$out.serve.out" 2>/dev/null && break
        sleep 0.1
    done
    local base metrics
    base="$(sed -n 's/^listening on //p' "$out.serve.out")"
    [ -n "$base" ] || { echo "the server did not start:" >&2; cat "$out.serve.log" >&2; exit 1; }
    metrics="$(sed -n 's/^metrics on \(http:\/\/[^/]*\).*/\1/p' "$out.serve.out")"
    local auth="Authorization: Bearer $key"
    first_id() { grep -o '"id":"[^"]*"' | head -n 1 | cut -d '"' -f 4; }

    # An import with the fixture's two PDFs (a 6-page script and a 4-page scheme, the page
    # counts the typical submission declares), and the submission rewritten to their asset ids.
    local import_id work_id scheme_id
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
        "$work/fixtures/typical.json" > "$out.typical.json"
    printf '[{"id":"%s","kind":"work","pageCount":6},{"id":"%s","kind":"scheme","pageCount":4}]' \
        "$work_id" "$scheme_id" > "$out.typical.assets.json"
    local validate_url="$base/v1/marking/imports/$import_id/validate" check
    check="$(curl -sS -o /dev/null -w '%{http_code}' -H "$auth" -H "Content-Type: application/json" \
        --data-binary "@$out.typical.json" "$validate_url")"
    [ "$check" = 200 ] || { echo "validate answered $check, not 200" >&2; exit 1; }
    cat > "$out.validate.lua" <<LUA
local f = assert(io.open("$out.typical.json", "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $key"
LUA

    echo "== $label binary, $backend"
    run "$out.floor" "GET /healthz (floor, c=$connections)" "$connections" "$base/healthz" | tee "$out.floor.res"
    phases "$metrics" > "$out.phases0"
    run "$out.me" "GET /v1/me (c=$connections)" "$connections" "$base/v1/me" -H "$auth" | tee "$out.me.res"
    phases "$metrics" > "$out.phases1"
    run "$out.v" "POST validate (c=$connections)" "$connections" "$validate_url" -s "$out.validate.lua" | tee "$out.v.res"
    run "$out.v1" "POST validate (c=1)" 1 "$validate_url" -s "$out.validate.lua" | tee "$out.v1.res"
    stop_server
    awk -v me="$(rps_of "$out.me.res")" -v v="$(rps_of "$out.v.res")" -v floor="$(rps_of "$out.floor.res")" 'BEGIN {
        printf "share of the floor: GET /v1/me %.2f, validate %.2f\n", me / floor, v / floor
    }'
    # Where the time of one GET /v1/me went, from the server's phase timings over the /me run
    # (wall time in the server, from reading the request's headers to the response).
    join <(sort "$out.phases0") <(sort "$out.phases1") | awk '
        { d_sum = $4 - $2; d_n = $5 - $3; if (d_n > 0) { us[$1] = d_sum / d_n * 1e6 } }
        END {
            printf "GET /v1/me in the server: %.1f us", us["total"]
            if (us["admit"] > 0)
                printf " (authenticate %.1f, admit %.1f, handle %.1f, finish %.1f)",
                    us["authenticate"], us["admit"], us["handle"], us["finish"]
            printf "\n"
        }'
}

echo "== wrk: ${seconds}s per run, loopback, every request counted and checked against limits"
backends=(sqlite)
[ -z "${BENCH_POSTGRES_URL:-}" ] || backends+=(postgres)
for backend in "${backends[@]}"; do
    if [ -n "${BASELINE_BIN:-}" ]; then
        bench before "$BASELINE_BIN" "$backend"
    fi
    bench after "$current" "$backend"
done

if [ -n "${BASELINE_BIN:-}" ]; then
    echo "== after / before (same run)"
    for backend in "${backends[@]}"; do
        for case in floor me v v1; do
            awk -v backend="$backend" -v case="$case" \
                -v b="$(rps_of "$work/before-$backend.$case.res")" \
                -v a="$(rps_of "$work/after-$backend.$case.res")" \
                'BEGIN { printf "%-9s %-6s %9.0f -> %9.0f req/s  (%.2fx)\n", backend, case, b, a, a / b }'
        done
    done
fi

echo "== engine in process (same document and assets)"
engine="$("$CARGO_TARGET_DIR/release/examples/engine_validate" "$work/after-sqlite.typical.json" "$work/after-sqlite.typical.assets.json" "$seconds")"
echo "$engine"
engine_p50_us="$(echo "$engine" | sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p')"
http_p50_ms="$(awk '{ for (i = 1; i <= NF; i++) if ($i == "p50") print $(i + 1) }' "$work/after-sqlite.v1.res")"
awk -v e="$engine_p50_us" -v h="$http_p50_ms" 'BEGIN {
    printf "validate over HTTP (one connection, p50 %.3f ms) = %.1f x the engine in process (p50 %.1f us)\n", h, h * 1000 / e, e
}'
