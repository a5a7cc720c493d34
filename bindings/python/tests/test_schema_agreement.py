"""The published JSON Schema, as Python's jsonschema reads it, agrees with the engine.

The engine's own test (engine/tests/schema_agreement.rs) checks the schema with the Rust
jsonschema crate. Python's ``re`` reads some patterns differently: ``$`` also matches before a
final line break there, so the schema's patterns end in ``(?![\\s\\S])``, which every regular
expression engine reads as the end of the string. These tests run the same documents through
jsonschema (with its format checker) and through the engine and require the same verdict.

One difference is known and documented in schemas/README.md: jsonschema's ``date-time`` checker
(rfc3339-validator) rejects a leap second, which RFC 3339 and the contract allow.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import jsonschema
import pytest

import examkit
from conftest import SCHEMAS_DIR, VECTORS_DIR, document_bytes, load_vector, vector_files

SCHEMA = json.loads(
    (SCHEMAS_DIR / "service-marking-import-v1.schema.json").read_text(encoding="utf-8")
)
CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=CHECKER)

# The vectors on which jsonschema's date-time checker differs from the contract (leap seconds).
LEAP_SECOND_VECTORS = {"valid-marked-at-leap-second"}


def schema_accepts(document: Any) -> bool:
    return VALIDATOR.is_valid(document)


def engine_accepts(document: Any) -> bool:
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    return bool(examkit.validate(text)["valid"])


def test_date_time_formats_are_checked() -> None:
    # Without rfc3339-validator, jsonschema skips date-time silently and the tests below would
    # prove less than they say (test.sh installs it).
    assert "date-time" in CHECKER.checkers


def marked_vectors() -> List[Path]:
    return [path for path in vector_files() if load_vector(path)["schema"] != "skip"]


@pytest.mark.parametrize("path", marked_vectors(), ids=lambda path: path.stem)
def test_python_jsonschema_follows_the_vector_marks(path: Path) -> None:
    vector = load_vector(path)
    try:
        document = json.loads(document_bytes(vector))
    except ValueError:
        # Not JSON that Python reads (nested past its own limits): an instance of no schema.
        assert vector["schema"] == "reject", vector["name"]
        return
    expected = vector["schema"] == "accept"
    if vector["name"] in LEAP_SECOND_VECTORS:
        expected = False
    errors = [f"{e.message} at {e.json_path}" for e in VALIDATOR.iter_errors(document)]
    assert (not errors) == expected, errors


def base_document() -> Dict[str, Any]:
    document: Dict[str, Any] = load_vector(VECTORS_DIR / "valid-base.json")["submission"]
    return document


WORK = "3f2b8c1e-5a47-4d2e-9b61-0c8e7a5d4f10"
SCHEME = "9a1d4e7b-2c3f-4b8a-8e5d-6f7a1b2c3d40"
Q0 = ["questions", 0]
CRIT0 = Q0 + ["rubric", "criteria", 0]
DEC0 = Q0 + ["decisions", 0]

# (what, [(path, value)], accepted): paths are lists of keys and indices into valid-base.
PROBES: List[Tuple[str, List[Tuple[List[Any], Any]], bool]] = [
    ("a code with a final line break", [(CRIT0 + ["code"], "M1\n")], False),
    ("a code with a final carriage return", [(CRIT0 + ["code"], "M1\r")], False),
    ("a code with a final CRLF", [(CRIT0 + ["code"], "M1\r\n")], False),
    ("a code after a line break", [(CRIT0 + ["code"], "\nM1")], False),
    ("a dependent code with a final line break",
     [(Q0 + ["rubric", "criteria", 1, "code"], "dA1\n")], False),
    ("a criterion id with a final line break, named so by its decision",
     [(CRIT0 + ["id"], "q1a-M1\n"), (DEC0 + ["criterionId"], "q1a-M1\n")], False),
    ("a source page id with a final line break",
     [(CRIT0 + ["sourcePageIds", 0], f"{SCHEME}:p1\n")], False),
    ("an evidence page id with a final line break",
     [(DEC0 + ["evidence", 0, "pageId"], f"{WORK}:p1\n")], False),
    ("a pageSelections key with a final line break",
     [(Q0 + ["pageSelections", f"{WORK}\n"], [1])], False),
    ("a markedAt with a final line break", [(["source", "markedAt"], "2025-06-14T16:20:00Z\n")],
     False),
    ("a label with a final line break (labels have no pattern)",
     [(Q0 + ["label"], "1\n"), (["coverage", "questionLabels", 0], "1\n")], True),
    ("a reason over two lines (reasons have no pattern)",
     [(DEC0 + ["reason"], "first line\nsecond line\n")], True),
    ("the unchanged base document", [], True),
]


def edited(changes: List[Tuple[List[Any], Any]]) -> Dict[str, Any]:
    document = copy.deepcopy(base_document())
    for path, value in changes:
        parent: Any = document
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = value
    return document


@pytest.mark.parametrize("what,changes,accepted", PROBES, ids=[probe[0] for probe in PROBES])
def test_line_breaks_at_pattern_ends_agree(
    what: str, changes: List[Tuple[List[Any], Any]], accepted: bool
) -> None:
    document = edited(changes)
    assert schema_accepts(document) is accepted, what
    assert engine_accepts(document) is accepted, what


def test_every_pattern_ends_at_the_end_of_the_string() -> None:
    """No published schema ends a pattern with `$`, which Python's `re` reads as "at the end or
    before a final line break"."""
    offenders: List[str] = []
    for path in sorted(SCHEMAS_DIR.glob("*.json")):

        def walk(node: Any, at: str) -> None:
            if isinstance(node, dict):
                pattern = node.get("pattern")
                if isinstance(pattern, str) and pattern.endswith("$"):
                    offenders.append(f"{path.name}{at}: {pattern}")
                for key, child in node.items():
                    walk(child, f"{at}/{key}")
            elif isinstance(node, list):
                for index, child in enumerate(node):
                    walk(child, f"{at}/{index}")

        walk(json.loads(path.read_text(encoding="utf-8")), "")
    assert offenders == []


def test_python_date_time_checker_rejects_leap_seconds() -> None:
    """The one known difference (schemas/README.md): the contract and the engine accept a leap
    second at 23:59:60 UTC; jsonschema's date-time checker does not."""
    document = edited([(["source", "markedAt"], "2016-12-31T23:59:60Z")])
    assert engine_accepts(document)
    assert not schema_accepts(document)
