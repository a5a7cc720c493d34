"""The shared vectors of tests/vectors/: the Python surface must give every one the engine's
outcome, byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

import examkit
from conftest import VECTORS_DIR, document_bytes, load_vector, strip_messages, vector_files

VECTORS = vector_files()


def test_vectors_are_present() -> None:
    assert (VECTORS_DIR / "README.md").is_file()
    assert len(VECTORS) >= 100, f"only {len(VECTORS)} vectors found in {VECTORS_DIR}"


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_vector(path: Path) -> None:
    vector = load_vector(path)
    document = document_bytes(vector)
    assets = vector["assets"]

    text = examkit.validate_json(document, assets)
    parsed = json.loads(text)
    # (1) The outcome is the one the vector states (messages are not part of the contract).
    assert strip_messages(parsed) == vector["expected"]

    # (2) validate() is exactly the parsed canonical JSON, keys in the engine's order.
    outcome = examkit.validate(document, assets)
    assert json.dumps(outcome, sort_keys=True) == json.dumps(parsed, sort_keys=True)
    assert json.dumps(outcome, separators=(",", ":"), ensure_ascii=False) == text

    # (3) Every form of the same document gives the same bytes.
    assert examkit.validate_json(bytearray(document), assets) == text
    try:
        as_text = document.decode("utf-8")
    except UnicodeDecodeError:
        as_text = None
    if as_text is not None:
        assert examkit.validate_json(as_text, assets) == text
    if isinstance(vector.get("submission"), dict) and "padToBytes" not in vector:
        assert examkit.validate_json(vector["submission"], assets) == text

    # (4) validate_or_raise agrees with validate.
    if outcome["valid"]:
        assert examkit.validate_or_raise(document, assets) == outcome
    else:
        with pytest.raises(examkit.ImportValidationError) as raised:
            examkit.validate_or_raise(document, assets)
        assert raised.value.errors == outcome["errors"]
        assert raised.value.truncated is outcome["truncated"]


def test_same_bytes_as_the_cli(tmp_path: Path) -> None:
    binary = os.environ.get("EXAMKIT_BIN")
    if not binary:
        pytest.skip(
            "EXAMKIT_BIN is unset: set it to a built `examkit` binary to compare every vector's "
            "outcome with `examkit validate` byte for byte"
        )
    assert Path(binary).is_file(), f"EXAMKIT_BIN={binary} is not a file"
    mismatches: List[str] = []
    for path in VECTORS:
        vector = load_vector(path)
        document = document_bytes(vector)
        submission_file = tmp_path / "submission.json"
        submission_file.write_bytes(document)
        args = [binary, "validate", str(submission_file)]
        assets: Any = vector["assets"]
        if assets is not None:
            assets_file = tmp_path / "assets.json"
            assets_file.write_text(json.dumps(assets), encoding="utf-8")
            args += ["--assets", str(assets_file)]

        expected: Dict[str, Any] = json.loads(examkit.validate_json(document, assets))
        cli = subprocess.run(args, capture_output=True, timeout=60)
        ours = (examkit.validate_json(document, assets) + "\n").encode("utf-8")
        if cli.stdout != ours:
            mismatches.append(f"{path.name}: outcome differs\n  cli:    {cli.stdout[:300]!r}"
                              f"\n  python: {ours[:300]!r}")
        if cli.returncode != (0 if expected["valid"] else 1):
            mismatches.append(f"{path.name}: exit status {cli.returncode}, stderr {cli.stderr!r}")

        report = subprocess.run(args + ["--explain"], capture_output=True, timeout=60)
        explained = examkit.explain(document, assets)
        if not explained.endswith("\n"):
            explained += "\n"
        if report.stdout != explained.encode("utf-8"):
            mismatches.append(f"{path.name}: explain differs from `examkit validate --explain`")
    assert not mismatches, "\n".join(mismatches)
