#!/usr/bin/env python3
"""Keeps a reused build cache from filling the disk.

Each checkout of the repository at another path builds its own copies of the workspace's test
binaries (Cargo's file names hash the package's path), each a few hundred megabytes, and Cargo
never removes old ones. A binary's dep-info file (`name-hash.d`) names the sources it was built
from, a workspace's relative to its root: of binaries of one name built from one source file,
this keeps the two newest (the checkout being tested and one other) and removes the rest, and it
removes binaries whose source no longer exists in this checkout (a test since removed). It also
removes incremental-compilation directories untouched for three days. Nothing here is needed for
correctness: whatever is removed is rebuilt when asked for. Run it from the repository's root.

    tests/prune-cache.py TARGET_DIR
"""

import os
import re
import shutil
import sys
import time

KEEP = 2
STALE_SECONDS = 3 * 24 * 3600
HASHED = re.compile(r"^(?P<name>.+)-(?P<hash>[0-9a-f]{16})$")


def first_source(dep_info: str) -> str | None:
    """The first source file a dep-info file lists (the crate root of the binary)."""
    try:
        with open(dep_info, encoding="utf-8", errors="replace") as f:
            line = f.readline()
    except OSError:
        return None
    _, _, sources = line.partition(": ")
    # Paths with spaces are escaped with a backslash.
    parts = re.split(r"(?<!\\) ", sources.strip())
    return parts[0].replace("\\ ", " ") if parts and parts[0] else None


def prune_binaries(directory: str) -> int:
    groups: dict[tuple[str, str], list[tuple[float, str]]] = {}
    stale: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return 0
    for entry in entries:
        match = HASHED.match(entry.name)
        if not match or not entry.is_file(follow_symlinks=False):
            continue
        if not os.access(entry.path, os.X_OK):
            continue
        source = first_source(entry.path + ".d")
        if source is None:
            continue
        if not os.path.exists(source):
            stale.append(entry.path)
            continue
        mtime = entry.stat(follow_symlinks=False).st_mtime
        groups.setdefault((match["name"], source), []).append((mtime, entry.path))
    for copies in groups.values():
        copies.sort(reverse=True)
        stale.extend(path for _, path in copies[KEEP:])
    freed = 0
    for path in stale:
        for victim in (path, path + ".d"):
            try:
                freed += os.path.getsize(victim)
                os.remove(victim)
            except OSError:
                pass
    return freed


def prune_incremental(directory: str) -> int:
    freed = 0
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return 0
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        if now - entry.stat(follow_symlinks=False).st_mtime < STALE_SECONDS:
            continue
        for root, _, files in os.walk(entry.path):
            for name in files:
                try:
                    freed += os.path.getsize(os.path.join(root, name))
                except OSError:
                    pass
        shutil.rmtree(entry.path, ignore_errors=True)
    return freed


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: prune-cache.py TARGET_DIR")
    target = sys.argv[1]
    freed = 0
    for profile in ("debug", "release"):
        freed += prune_binaries(os.path.join(target, profile, "deps"))
        freed += prune_binaries(os.path.join(target, profile, "examples"))
        freed += prune_incremental(os.path.join(target, profile, "incremental"))
    print(f"build cache {target}: {freed / 1e9:.1f} GB of old build outputs removed")


if __name__ == "__main__":
    main()
