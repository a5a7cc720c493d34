#!/usr/bin/env python3
"""Reads `cargo test --no-run --message-format=json` on stdin and prints one line per test
binary it built: the binary's path, its package's directory (where `cargo test` runs it), the
package's name and the target's name, separated by tabs. Unit-test binaries come first, then
the integration-test binaries, each group sorted by name."""
import json
import os
import sys

rows = []
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    message = json.loads(line)
    if message.get("reason") != "compiler-artifact" or not message.get("executable"):
        continue
    if not message["profile"]["test"]:
        continue
    target = message["target"]
    kinds = set(target["kind"])
    if not kinds & {"lib", "bin", "test", "proc-macro", "rlib", "cdylib", "staticlib"}:
        continue
    package = message["package_id"]
    manifest = message["manifest_path"]
    name = package.split("#")[-1].split("@")[0] if "#" in package else package.split()[0]
    rows.append(
        (
            "test" in kinds,
            target["name"],
            message["executable"],
            os.path.dirname(manifest),
            name,
        )
    )
for integration, target, executable, directory, name in sorted(set(rows)):
    print(f"{executable}\t{directory}\t{name}\t{target}")
