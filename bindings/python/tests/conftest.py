"""Shared helpers: the repository's test vectors and a builder of valid submissions."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[3]
VECTORS_DIR = ROOT / "tests" / "vectors"
SCHEMAS_DIR = ROOT / "schemas"


def vector_files() -> List[Path]:
    """Every vector file, sorted by name."""
    return sorted(VECTORS_DIR.glob("*.json"))


def load_vector(path: Path) -> Dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        vector: Dict[str, Any] = json.load(handle)
    return vector


def document_bytes(vector: Dict[str, Any]) -> bytes:
    """The exact bytes of a vector's document, as tests/vectors/README.md defines them."""
    if "submissionBase64" in vector:
        data = base64.b64decode(vector["submissionBase64"])
    elif "submissionText" in vector:
        data = vector["submissionText"].encode("utf-8", "surrogatepass")
    else:
        data = json.dumps(
            vector["submission"], separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")
    pad = vector.get("padToBytes")
    if pad is not None:
        assert len(data) <= pad, vector["name"]
        data += b" " * (pad - len(data))
    return data


def strip_messages(outcome: Dict[str, Any]) -> Dict[str, Any]:
    """The outcome without its messages, as vectors state `expected`; every message removed must
    be a non-empty string."""
    stripped = copy.deepcopy(outcome)
    items = list(stripped.get("errors", []))
    for question in stripped.get("questions", []):
        items.extend(question["reviewFlags"])
    for item in items:
        message = item.pop("message")
        assert isinstance(message, str) and message, item
    return stripped


WORK = "3f2b6c1e-8a4d-4e2f-9b7a-1c2d3e4f5a6b"
SCHEME = "9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
ASSETS: List[Dict[str, Any]] = [
    {"id": WORK, "kind": "work", "pageCount": 10},
    {"id": SCHEME, "kind": "scheme", "pageCount": 10},
]


def build_submission(
    labels: Optional[List[str]] = None,
    criteria: int = 3,
    uncertain_last: bool = False,
) -> Dict[str, Any]:
    """A valid submission: one question per label, each with one part of `criteria` marks, the
    second and later criteria depending on the first. The last decision of every question is
    uncertain when asked, which flags the question for review."""
    labels = labels if labels is not None else ["1"]
    questions = []
    for q, label in enumerate(labels):
        rubric = []
        decisions = []
        for c in range(criteria):
            cid = f"q{q}-c{c}"
            rubric.append({
                "id": cid, "partId": "a", "code": "M1" if c == 0 else "dM1",
                "requirement": f"Step {c + 1} of question {label} is correct",
                "conditions": [], "dependsOn": [] if c == 0 else [f"q{q}-c0"],
                "maxMarks": 1, "sourcePageIds": [f"{SCHEME}:p1"],
            })
            outcome = "uncertain" if uncertain_last and c == criteria - 1 else "awarded"
            decisions.append({
                "criterionId": cid, "outcome": outcome, "reason": f"Working for step {c + 1}",
                "evidence": [{
                    "pageId": f"{WORK}:p{1 + q % 10}", "quote": f"line {c + 1} of the working",
                    "box": {"x": 0.1, "y": (c % 10) / 10, "width": 0.5, "height": 0.05},
                }],
                "conditionChecks": [],
            })
        questions.append({
            "label": label,
            "pageSelections": {WORK: [1 + q % 10], SCHEME: [1]},
            "rubric": {"parts": [{"id": "a", "maxMarks": criteria}], "criteria": rubric},
            "decisions": decisions,
        })
    return {
        "schemaVersion": "service-marking-import-v1",
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": {"kind": "human", "name": "A. Examiner", "markedAt": "2025-06-01T12:00:00Z"},
        "coverage": {"kind": "whole-paper", "questionLabels": labels,
                     "totalMarks": criteria * len(labels)},
        "questions": questions,
    }


@pytest.fixture
def submission() -> Dict[str, Any]:
    return build_submission(["1", "2(b)"], criteria=3, uncertain_last=True)
