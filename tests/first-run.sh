#!/usr/bin/env bash
# The README's first command, on its own: `make build` (the native packages, then the binary),
# then `make run`, which must serve the sample bank from a new embedded database. The suite runs
# this so that the first command a new operator types cannot rot.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

make --no-print-directory build

work="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
url="http://127.0.0.1:$port"
bin="${CARGO_TARGET_DIR:-$root/target}/debug/examkit"
# `make run` in a process group of its own, so that make, cargo and the server stop together.
EXAMKIT_LISTEN="127.0.0.1:$port" EXAMKIT_DATA_DIR="$work/data" setsid make --no-print-directory run \
  >"$work/serve.log" 2>&1 &
group=$!
stop() {
  kill -- "-$group" 2>/dev/null || true
  wait "$group" 2>/dev/null || true
  rm -rf "$work"
}
trap stop EXIT INT TERM

up=false
for _ in $(seq 600); do
  if curl -fs -o /dev/null "$url/v1/guide.txt"; then up=true; break; fi
  kill -0 "$group" 2>/dev/null || break
  sleep 0.2
done
if ! $up; then
  echo "make run did not start serving; its output:" >&2
  cat "$work/serve.log" >&2
  exit 1
fi

# A new database has no account: the log offers the first one in the app, with its setup token.
if ! grep -q "no account yet: make the first at $url/app/setup with the setup token [0-9a-f]\{32\}" "$work/serve.log"; then
  echo "make run did not offer the first account with a setup token; its output:" >&2
  cat "$work/serve.log" >&2
  exit 1
fi

export EXAMKIT_DATA_DIR="$work/data"
user="$("$bin" users create --name "First run")"
key="$("$bin" keys create --user "$user" --name first-run --scopes questions:read --expires 30d)"
found="$(curl -fsS -H "Authorization: Bearer $key" "$url/v1/questions?q=differentiate")"
count="$(printf '%s' "$found" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')"
if [ "$count" -lt 1 ]; then
  echo "the sample bank is not searchable after make run: $found" >&2
  exit 1
fi
echo "make run: serving on $url, the sample bank searchable ($count results for 'differentiate')"

# The README's command that makes a teacher's account (from docs/app.md, "The app"), then a
# sign-in at /app/ as a browser does it: the form's token and cookie, then the session cookie.
make_teacher="$(awk '/^# The app/{on=1} on && /^printf /{print; exit}' docs/app.md)"
[ -n "$make_teacher" ] || { echo "docs/app.md has no account command in 'The app'" >&2; exit 1; }
bash -c "$make_teacher" >/dev/null
jar="$work/cookies"
form="$(curl -fsS -c "$jar" "$url/app/sign-in")"
token="$(printf '%s' "$form" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p')"
email="$(printf '%s' "$make_teacher" | sed -n 's/.*--email \([^ ]*\).*/\1/p')"
password="$(printf '%s' "$make_teacher" | sed -n "s/^printf '%s\\\\n' '\([^']*\)'.*/\1/p")"
status="$(curl -sS -o /dev/null -w '%{http_code}' -b "$jar" -c "$jar" \
  --data-urlencode "csrf=$token" --data-urlencode "email=$email" --data-urlencode "password=$password" \
  "$url/app/sign-in")"
if [ "$status" != 303 ] || ! curl -fsS -b "$jar" "$url/app/sessions" | grep -q 'Signed in as'; then
  echo "the README's teacher ($email) cannot sign in to the app: status $status" >&2
  exit 1
fi
echo "the app: $email signed in at $url/app/"
