#!/usr/bin/env bash
# Every route of the published OpenAPI document under schemathesis, with every check: the service
# on a fresh SQLite database with the sample bank, automated marking on, rate limits off, and a key
# holding every scope. Schemathesis generates requests from the document (examples, coverage,
# fuzzing) and follows its links in a stateful phase (an import to its id, a paper to its
# revisions, a session to its questions), and checks each response against the document: status,
# content type, headers (Allow on 405), schema, and that bad input is refused and good input
# accepted. It exits non-zero on any failure.
#
#   tests/schemathesis.sh            (EXAMKIT_SCHEMATHESIS_SECONDS: the fuzzing budget, default 120)
#   EXAMKIT_SCHEMATHESIS_ARGS='--include-path-regex /v1/class-sets' tests/schemathesis.sh
#                                    (more schemathesis options: here, only some routes)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cache="${EXAMKIT_CACHE:-$HOME/.cache/examkit}"
target="${CARGO_TARGET_DIR:-$cache/target}"
venv="$cache/schemathesis-venv"
version="4.32.5"

if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$version"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "schemathesis==$version"
fi

CARGO_TARGET_DIR="$target" cargo build --locked -q -p examkit
bin="$target/debug/examkit"
data="$(mktemp -d)"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

db="sqlite://$data/examkit.db?mode=rwc"
user="$("$bin" users create --name "Schemathesis" --database "$db")"
key="$("$bin" keys create --user "$user" --name schemathesis --scopes questions:read,papers:read,papers:write,marking:read,marking:submit,marking:import,marking:review --expires 30d --database "$db")"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
EXAMKIT_LOG=warn OMP_THREAD_LIMIT=1 "$bin" serve --database "$db" --listen "127.0.0.1:$port" \
  --rate-limits off --marking-pages-per-day 1000000 --marking-questions-per-day 1000000 \
  --workers 1 >"$data/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/v1/openapi.json" >/dev/null 2>&1 && break
  sleep 0.2
done

status=0
cd "$data" # schemathesis keeps its state in ./.schemathesis
"$venv/bin/schemathesis" --config-file "$root/tests/schemathesis.toml" \
  run "http://127.0.0.1:$port/v1/openapi.json" \
  --checks all \
  --header "Authorization: Bearer $key" \
  --workers 1 \
  --max-time "${EXAMKIT_SCHEMATHESIS_SECONDS:-120}" \
  --suppress-health-check all \
  --request-timeout 30 \
  --warnings off ${EXAMKIT_SCHEMATHESIS_ARGS:-} \
  --seed 1 2>&1 | tee "$data/schemathesis.log" || status=$?
if [ "$status" -ne 0 ]; then
  # The server's log, then schemathesis' failures again, so the run's last lines say what failed.
  echo "schemathesis found failures; the server's log ends:" >&2
  tail -n 20 "$data/serve.log" >&2
  echo "schemathesis' failures:" >&2
  sed -n '/FAILURES/,/SUMMARY/p' "$data/schemathesis.log" | grep -v '^[[:space:]]*$' | head -n 60 >&2
fi
exit "$status"
