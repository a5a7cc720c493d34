"""Check an automated marker's output with examkit before importing it.

A marking pipeline turns a student's scanned answer and the mark scheme into one decision per
mark, each with the evidence it relied on (a quote and a box on the scan). Before the result is
imported, `examkit.validate` checks it exactly as the service will, and computes the score range
and the review flags the service will record. The marking step here is a stand-in that returns a
fixed result for an A-level calculus question.

Run: python examples/python/pipeline.py   (with the examkit wheel installed)
"""

from __future__ import annotations

import copy
import sys
from typing import Any, Dict, List

import examkit

# The import's uploaded files: the student's three-page scan and the twelve-page mark scheme.
WORK_SCAN = "5b1e0c7a-2f4d-4c8e-9a31-7d6b2e8f0c14"
MARK_SCHEME = "c8a4f2d0-6e1b-4b97-8d3c-0f5a9e7b2d61"
ASSETS: List[examkit.Asset] = [
    {"id": WORK_SCAN, "kind": "work", "pageCount": 3},
    {"id": MARK_SCHEME, "kind": "scheme", "pageCount": 12},
]
SCHEME_PAGE = f"{MARK_SCHEME}:p9"

# Question 7: the curve C has equation y = x^3 - 3x^2 - 9x + 5.
# (a) Find dy/dx. [2]  (b) Find the coordinates of the stationary points of C. [4]
# (c) Determine the nature of each stationary point. [2]
RUBRIC: List[Dict[str, Any]] = [
    # id, part, code, requirement, depends on, conditions
    {"id": "7a-M1", "part": "a", "code": "M1", "req": "Differentiates: x^n -> x^(n-1) in at least one term"},
    {"id": "7a-A1", "part": "a", "code": "A1", "req": "dy/dx = 3x^2 - 6x - 9", "deps": ["7a-M1"]},
    {"id": "7b-M1", "part": "b", "code": "M1", "req": "Sets their dy/dx equal to 0"},
    {"id": "7b-dM1", "part": "b", "code": "dM1", "req": "Solves their three-term quadratic", "deps": ["7b-M1"]},
    {"id": "7b-A1", "part": "b", "code": "A1", "req": "x = -1 and x = 3", "deps": ["7b-dM1"]},
    {"id": "7b-A2", "part": "b", "code": "A1", "req": "(-1, 10) and (3, -22)", "deps": ["7b-dM1"]},
    {"id": "7c-M1", "part": "c", "code": "M1", "req": "Finds d2y/dx2 = 6x - 6 and evaluates it at one of their x"},
    {"id": "7c-A1", "part": "c", "code": "A1ft", "req": "Maximum at (-1, 10) and minimum at (3, -22)",
     "deps": ["7c-M1"], "conditions": ["Correct sign of d2y/dx2 at both points", "A conclusion for both points"]},
]


def evidence(page: int, quote: str, y: float, height: float = 0.06) -> List[Dict[str, Any]]:
    """One located piece of the student's work (normalised, top-left origin)."""
    box = {"x": 0.08, "y": y, "width": 0.7, "height": height}
    return [{"pageId": f"{WORK_SCAN}:p{page}", "quote": quote, "box": box}]


def marking_step() -> Dict[str, Any]:
    """Stand-in for the model call: one decision per mark, each with its evidence."""
    decisions = [
        ("7a-M1", "awarded", "Powers reduced in every term", evidence(1, "dy/dx = 3x² - 6x - 9", 0.18)),
        ("7a-A1", "awarded", "Fully correct derivative", evidence(1, "dy/dx = 3x² - 6x - 9", 0.18)),
        ("7b-M1", "awarded", "Derivative set to zero", evidence(1, "3x² - 6x - 9 = 0", 0.41)),
        ("7b-dM1", "awarded", "Factorised correctly", evidence(1, "3(x - 3)(x + 1) = 0", 0.49)),
        ("7b-A1", "awarded", "Both roots stated", evidence(1, "x = 3 or x = -1", 0.57)),
        # The second y-coordinate is partly crossed out: the marker cannot tell -22 from -2.
        ("7b-A2", "uncertain", "Second y-coordinate partly illegible", evidence(1, "(-1, 10), (3, -2?)", 0.66)),
        ("7c-M1", "awarded", "Second derivative found and used", evidence(2, "d²y/dx² = 6x - 6 = -12 < 0", 0.12)),
        ("7c-A1", "awarded", "Both natures stated", evidence(2, "max at (-1, 10), min at (3, -22)", 0.22)),
    ]
    checks = {
        "7c-A1": [
            {"index": 0, "result": "met", "evidence": evidence(2, "-12 < 0 ... 12 > 0", 0.12, 0.1)},
            {"index": 1, "result": "met"},
        ]
    }
    criteria = []
    for item in RUBRIC:
        conditions = item.get("conditions", [])
        criterion: Dict[str, Any] = {
            "id": item["id"], "partId": item["part"], "code": item["code"], "requirement": item["req"],
            "conditions": conditions, "dependsOn": item.get("deps", []), "maxMarks": 1,
            "sourcePageIds": [SCHEME_PAGE],
        }
        if conditions:
            criterion["conditionMode"] = "all"
        criteria.append(criterion)
    return {
        "schemaVersion": examkit.SCHEMA_VERSION,
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": {"kind": "ai", "name": "calculus-marker", "model": "marker-2025-06",
                   "markedAt": "2025-06-14T10:02:11+01:00"},
        "coverage": {"kind": "partial", "questionLabels": ["7"], "totalMarks": len(RUBRIC)},
        "questions": [{
            "label": "7",
            "pageSelections": {WORK_SCAN: [1, 2], MARK_SCHEME: [9]},
            "rubric": {
                "parts": [{"id": "a", "maxMarks": 2}, {"id": "b", "maxMarks": 4},
                          {"id": "c", "maxMarks": 2}],
                "criteria": criteria,
            },
            "decisions": [
                {"criterionId": cid, "outcome": outcome, "reason": reason, "evidence": ev,
                 "conditionChecks": checks.get(cid, [])}
                for cid, outcome, reason, ev in decisions
            ],
            # The model's own claims: recorded, never trusted over the computed result.
            "reportedScore": {"awarded": 8},
            "complete": True,
        }],
    }


def report(outcome: Dict[str, Any]) -> None:
    """Print what the import would record, or why it would be rejected."""
    if not outcome["valid"]:
        print(f"rejected: {len(outcome['errors'])} error(s)")
        for error in outcome["errors"]:
            print(f"  {error['path']}: {error['message']} ({error['code']})")
        return
    total = outcome["score"]
    print(f"valid, {outcome['status']}: {total['awarded']}-{total['possible']} of {total['max']} marks")
    for question in outcome["questions"]:
        score = question["score"]
        print(f"  question {question['label']}: {score['awarded']}-{score['possible']} "
              f"of {score['max']} ({question['status']})")
        for flag in question["reviewFlags"]:
            print(f"    {flag['code']} at {flag['path']}: {flag['message']}")


def main() -> int:
    submission = marking_step()
    outcome = examkit.validate(submission, ASSETS)
    report(outcome)

    # A marking step that went wrong: it cited the mark scheme as the student's work and dropped
    # a decision. The import would be refused with every defect located.
    flawed = copy.deepcopy(submission)
    question = flawed["questions"][0]
    question["decisions"][0]["evidence"][0]["pageId"] = SCHEME_PAGE
    del question["decisions"][4]
    print("\nflawed marking step:")
    report(examkit.validate(flawed, ASSETS))
    return 0 if outcome["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
