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
#   BENCH_BIN=target/dist/examkit BASELINE_BIN=… service/bench/http.sh   # another binary as "after"
#   BENCH_SECONDS=30 BENCH_CONNECTIONS=32 service/bench/http.sh
#
# The server runs with the specification's rate limits (per minute 120 requests a key and 300 an
# account, 20 and 40 of them writes). One key could not carry a throughput run under them, so the
# load is spread over pools of accounts and keys (service/examples/bench_accounts.rs writes them
# into the database), a pool per case, sized so that no request is refused at up to 40,000 req/s
# of GET /v1/me and 8,000 of validate (5,000 on one connection): every request is counted and
# checked against its key's and account's limits, and a run with any refusal fails.
# BENCH_RATE_LIMITS=off runs one key with `--rate-limits off` instead (limits out of reach, the
# same counting). Usage records, authentication and logging (JSON, to a file) are all on. `wrk`
# comes from Debian's packages and is installed when missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target}"
seconds="${BENCH_SECONDS:-10}"
connections="${BENCH_CONNECTIONS:-16}"
limits="${BENCH_RATE_LIMITS:-on}"
case "$limits" in on | off) ;; *) echo "BENCH_RATE_LIMITS is on or off, not $limits" >&2; exit 2 ;; esac

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
cargo build --release -q -p examkit --bin examkit --example engine_validate --example bench_accounts
cargo build --release -q -p examkit-fixtures
# The binary measured ("after"): the release build unless BENCH_BIN names another (a `make dist`
# build, say). The helpers (fixtures, accounts, the engine in process) are the release build's.
current="${BENCH_BIN:-$CARGO_TARGET_DIR/release/examkit}"
[ -x "$current" ] || { echo "BENCH_BIN $current is not an executable" >&2; exit 2; }

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
    wrk -t "$(( conns < 2 ? conns : 2 ))" -c "$conns" -d "${seconds}s" --latency "$url" "$@" > "$file"
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
    local user key url
    user="$("$bin" users create --name "Benchmark" --data-dir "$data" "${db_args[@]}")"
    key="$("$bin" keys create --user "$user" --name bench --scopes marking:import,marking:read \
        --expires 30d --data-dir "$data" "${db_args[@]}" 2>/dev/null)"
    if [ "$backend" = postgres ]; then url="${db_args[1]}"; else url="sqlite://$data/examkit.db?mode=rw"; fi

    "$bin" serve --listen 127.0.0.1:0 --data-dir "$data" "${db_args[@]}" --rate-limits "$limits" \
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

    # import KEY PREFIX: an import of KEY's account with the fixture's two PDFs (a 6-page script
    # and a 4-page scheme, the page counts the typical submission declares); writes the
    # submission, rewritten to their asset ids, to PREFIX.json and prints the validate path.
    import() {
        local auth="Authorization: Bearer $1" id work_id scheme_id
        first_id() { grep -o '"id":"[^"]*"' | head -n 1 | cut -d '"' -f 4; }
        id="$(curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/json" \
            -H "Idempotency-Key: bench-import-$RANDOM$RANDOM$RANDOM" -d '{"title":"Benchmark"}' \
            "$base/v1/marking/imports" | first_id)"
        upload() {
            curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/pdf" \
                --data-binary "@$2" \
                "$base/v1/marking/imports/$id/assets?kind=$1&name=$(basename "$2")" | first_id
        }
        work_id="$(upload work examples/curl/student-script.pdf)"
        scheme_id="$(upload scheme examples/curl/mark-scheme.pdf)"
        sed -e "s/3f6c2a9e-8b1d-4e57-9a0c-5d2e7b41c8f3/$work_id/g" \
            -e "s/b2d94e17-6a3c-4f08-8e55-1c7a9f0d3b62/$scheme_id/g" \
            "$work/fixtures/typical.json" > "$2.json"
        printf '[{"id":"%s","kind":"work","pageCount":6},{"id":"%s","kind":"scheme","pageCount":4}]' \
            "$work_id" "$scheme_id" > "$2.assets.json"
        echo "/v1/marking/imports/$id/validate"
    }
    local path check
    path="$(import "$key" "$out.typical")"
    check="$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" \
        -H "Content-Type: application/json" --data-binary "@$out.typical.json" "$base$path")"
    [ "$check" = 200 ] || { echo "validate answered $check, not 200" >&2; exit 1; }

    # The pools, one line per key: "SECRET PATH BODY" (PATH and BODY "-" for GET /v1/me).
    if [ "$limits" = on ]; then
        # pool NAME ACCOUNTS IMPORTS: ACCOUNTS accounts of three keys each, with an import each
        # when IMPORTS is yes (made with the account's first key: three of its writes).
        pool() {
            "$CARGO_TARGET_DIR/release/examples/bench_accounts" "$url" "$2" 3 > "$out.$1.accounts"
            if [ "$3" = no ]; then
                awk '{ print $2, "-", "-" }' "$out.$1.accounts" > "$out.$1.pool"
                return
            fi
            mkdir -p "$out.$1.bodies"
            local n=0 secret pids=()
            awk 'NR % 3 == 1 { print $2 }' "$out.$1.accounts" > "$out.$1.first"
            # Eight imports at a time (waiting for them, not for the server).
            while read -r secret; do
                n=$((n + 1))
                echo "$secret $(import "$secret" "$out.$1.bodies/$n") $out.$1.bodies/$n.json" \
                    > "$out.$1.bodies/$n.line" &
                pids+=($!)
                if (( ${#pids[@]} == 8 )); then wait "${pids[@]}"; pids=(); fi
            done < "$out.$1.first"
            (( ${#pids[@]} == 0 )) || wait "${pids[@]}"
            cat "$out.$1.bodies/"*.line > "$out.$1.imports"
            awk 'NR == FNR { path[$1] = $2; body[$1] = $3; next }
                 FNR % 3 == 1 { first = $2 } { print $2, path[first], body[first] }' \
                "$out.$1.imports" "$out.$1.accounts" > "$out.$1.pool"
        }
        # Sized for 40,000 req/s of GET /v1/me (300 a minute per account) and 8,000 and 5,000
        # of validate (40 writes a minute per account, 3 of them spent on the import).
        pool me $(( (40000 * seconds + 299) / 300 )) no
        pool v $(( (8000 * seconds + 36) / 37 )) yes
        pool v1 $(( (5000 * seconds + 36) / 37 )) yes
    else
        echo "$key - -" > "$out.me.pool"
        echo "$key $path $out.typical.json" > "$out.v.pool"
        cp "$out.v.pool" "$out.v1.pool"
    fi
    cat > "$out.lua" <<'LUA'
-- Each wrk thread takes every STEP-th line of the pool, from its own offset.
local lines, bodies = {}, {}
local n, step = 0, 1
local threads = 0
function setup(thread)
    thread:set("offset", threads)
    threads = threads + 1
end
function init(args)
    step = tonumber(args[2])
    n = offset or 0
    for line in io.lines(args[1]) do
        local secret, path, body = line:match("(%S+) (%S+) (%S+)")
        if body ~= "-" and bodies[body] == nil then
            local f = assert(io.open(body, "rb"))
            bodies[body] = f:read("*a")
            f:close()
        end
        lines[#lines + 1] = { secret = secret, path = path, body = body }
    end
end
function request()
    local line = lines[n % #lines + 1]
    n = n + step
    local headers = { ["Authorization"] = "Bearer " .. line.secret }
    if line.body == "-" then
        return wrk.format("GET", "/v1/me", headers)
    end
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", line.path, headers, bodies[line.body])
end
LUA
    local threads=$(( connections < 2 ? connections : 2 ))

    echo "== $label binary, $backend"
    run "$out.floor" "GET /healthz (floor, c=$connections)" "$connections" "$base/healthz" | tee "$out.floor.res"
    phases "$metrics" > "$out.phases0"
    run "$out.me" "GET /v1/me (c=$connections)" "$connections" "$base" -s "$out.lua" -- "$out.me.pool" "$threads" | tee "$out.me.res"
    phases "$metrics" > "$out.phases1"
    run "$out.v" "POST validate (c=$connections)" "$connections" "$base" -s "$out.lua" -- "$out.v.pool" "$threads" | tee "$out.v.res"
    run "$out.v1" "POST validate (c=1)" 1 "$base" -s "$out.lua" -- "$out.v1.pool" 1 | tee "$out.v1.res"
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

echo "== wrk: ${seconds}s per run, loopback, rate limits $limits"
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
