#!/usr/bin/env bash
# Imports the example A-level paper through the HTTP API with curl:
# create an import, upload the student's script and the mark scheme, validate, complete, read back.
#
#   EXAMKIT_URL=http://127.0.0.1:8080 EXAMKIT_KEY=ek_live_... examples/curl/import.sh
#
# The key needs the scopes marking:import and marking:read.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
base="${EXAMKIT_URL:-http://127.0.0.1:8080}"
: "${EXAMKIT_KEY:?set EXAMKIT_KEY to an API key with marking:import and marking:read}"
auth="Authorization: Bearer $EXAMKIT_KEY"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The first "id" member of a JSON response (the resource's own id in these responses).
first_id() { grep -o '"id":"[^"]*"' "$1" | head -n 1 | cut -d '"' -f 4; }

echo "== who am I"
curl -sS --fail-with-body -H "$auth" "$base/v1/me"
echo

echo "== create the import"
curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/json" \
    -H "Idempotency-Key: import-$(date +%s)-$$" \
    -d '{"title": "A-level Pure Mathematics, mock paper 1"}' \
    "$base/v1/marking/imports" > "$work/import.json"
import_id="$(first_id "$work/import.json")"
echo "import $import_id"

echo "== upload the student's script (work) and the mark scheme (scheme)"
curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/pdf" \
    --data-binary "@$here/student-script.pdf" \
    "$base/v1/marking/imports/$import_id/assets?kind=work&name=student-script.pdf" > "$work/work.json"
work_id="$(first_id "$work/work.json")"
curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/pdf" \
    --data-binary "@$here/mark-scheme.pdf" \
    "$base/v1/marking/imports/$import_id/assets?kind=scheme&name=mark-scheme.pdf" > "$work/scheme.json"
scheme_id="$(first_id "$work/scheme.json")"
cat "$work/work.json"; echo
cat "$work/scheme.json"; echo

echo "== point the example submission at the uploaded assets"
sed -e "s/5b0f6a2e-8c1d-4e7a-9b3f-2d4c6e8f0a11/$work_id/g" \
    -e "s/c7e2d9b4-1a3f-4c5e-8d7b-9f0e1a2b3c44/$scheme_id/g" \
    "$here/../submissions/a-level-pure-paper.json" > "$work/submission.json"

echo "== validate"
curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/json" \
    --data-binary "@$work/submission.json" \
    "$base/v1/marking/imports/$import_id/validate"
echo

echo "== complete (saved atomically; repeating it returns the same result)"
key="complete-$import_id"
curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/json" -H "Idempotency-Key: $key" \
    --data-binary "@$work/submission.json" \
    "$base/v1/marking/imports/$import_id/complete" > "$work/complete.json"
curl -sS --fail-with-body -H "$auth" -H "Content-Type: application/json" -H "Idempotency-Key: $key" \
    --data-binary "@$work/submission.json" \
    "$base/v1/marking/imports/$import_id/complete" > "$work/complete-again.json"
cmp -s "$work/complete.json" "$work/complete-again.json" && echo "repeat: identical response"

echo "== read the session back"
curl -sS --fail-with-body -H "$auth" "$base/v1/marking/sessions/$import_id"
echo
