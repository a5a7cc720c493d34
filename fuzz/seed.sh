#!/usr/bin/env bash
# Writes a seed corpus for the `validate` target from the shared test vectors.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/corpus/validate"
mkdir -p "$out"
python3 - "$here/../tests/vectors" "$out" <<'PY'
import base64, json, pathlib, sys
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for path in sorted(src.glob("*.json")):
    vector = json.loads(path.read_text(encoding="utf-8"))
    if "submissionBase64" in vector:
        data = base64.b64decode(vector["submissionBase64"])
    elif "submissionText" in vector:
        data = vector["submissionText"].encode("utf-8")
    else:
        data = json.dumps(vector["submission"], ensure_ascii=False).encode("utf-8")
    if len(data) > 300_000:
        continue
    flag = b"\x01" if vector.get("assets") else b"\x00"
    (out / path.stem).write_bytes(flag + data)
PY
echo "seeded $(ls "$out" | wc -l) inputs into $out"

# The `inspect` target: the first byte picks the format (0 PDF, 1 PNG, 2 JPEG, 3 WebP), the rest is
# the file; seeded with the repository's small PDFs and scans.
files="$here/corpus/inspect"
mkdir -p "$files"
for pdf in "$here"/../examples/curl/*.pdf; do
  { printf '\x00'; cat "$pdf"; } >"$files/$(basename "$pdf")"
done
for jpg in "$here"/../examples/calibration/statistics-1/scan-4.jpg; do
  { printf '\x02'; cat "$jpg"; } >"$files/$(basename "$jpg")"
done
echo "seeded $(ls "$files" | wc -l) inputs into $files"
