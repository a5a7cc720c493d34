#!/usr/bin/env python3
"""Writes the shared validation vectors of tests/vectors/ (see README.md there).

Every vector is a base document plus explicit changes, and every expected outcome is written out
here by hand from the import contract and schemas/README.md. Nothing is computed by running the
engine: these files are the independent statement of what every surface (Rust, Python, WASM, HTTP)
must return. Helpers below only shorten repetition (building a criterion, writing an error entry);
they never derive an expected value from the document.

Run from anywhere with Python 3 (standard library only):

    python3 tests/vectors/generate.py

The JSON files it writes are committed and are the source of truth; this script documents how the
large ones (24 questions, 100 criteria, 1,000 errors, deep nesting) were made.
"""

import base64
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_FILE_BYTES = 300 * 1024

# --------------------------------------------------------------------------------------------
# Assets and page ids
# --------------------------------------------------------------------------------------------

WORK = "3f2b8c1e-5a47-4d2e-9b61-0c8e7a5d4f10"
SCHEME = "9a1d4e7b-2c3f-4b8a-8e5d-6f7a1b2c3d40"
WORK2 = "c4e5f6a7-b8c9-4d0e-a1f2-334455667788"
STRANGER = "0b9e8d7c-6f5e-4a3b-9c2d-1e0f2a3b4c5d"


def W(n):
    return f"{WORK}:p{n}"


def S(n):
    return f"{SCHEME}:p{n}"


ASSETS = [
    {"id": WORK, "kind": "work", "pageCount": 4},
    {"id": SCHEME, "kind": "scheme", "pageCount": 2},
]
ASSETS_TWO_WORK = ASSETS + [{"id": WORK2, "kind": "work", "pageCount": 1}]
PAPER_ASSETS = [
    {"id": WORK, "kind": "work", "pageCount": 8},
    {"id": SCHEME, "kind": "scheme", "pageCount": 5},
]

# --------------------------------------------------------------------------------------------
# Document builders
# --------------------------------------------------------------------------------------------


def box(x, y, width, height):
    return {"x": x, "y": y, "width": width, "height": height}


def evidence(page, quote, b):
    return {"pageId": page, "quote": quote, "box": b}


def criterion(cid, part, code, requirement, deps=(), conditions=(), mode=None, source=None):
    c = {
        "id": cid,
        "partId": part,
        "code": code,
        "requirement": requirement,
        "conditions": list(conditions),
    }
    if mode is not None:
        c["conditionMode"] = mode
    c["dependsOn"] = list(deps)
    c["maxMarks"] = 1
    c["sourcePageIds"] = list(source or [S(1)])
    return c


def check(index, result, note=None, ev=None):
    c = {"index": index, "result": result}
    if note is not None:
        c["note"] = note
    if ev is not None:
        c["evidence"] = ev
    return c


def decision(cid, outcome, reason, quote, page=None, b=None, checks=()):
    return {
        "criterionId": cid,
        "outcome": outcome,
        "reason": reason,
        "evidence": [evidence(page or W(1), quote, b or box(0.1, 0.2, 0.5, 0.06))],
        "conditionChecks": list(checks),
    }


def question(label, selections, parts, criteria, decisions, reported=None, complete=None):
    q = {
        "label": label,
        "pageSelections": selections,
        "rubric": {"parts": parts, "criteria": criteria},
        "decisions": decisions,
    }
    if reported is not None:
        q["reportedScore"] = {"awarded": reported}
    if complete is not None:
        q["complete"] = complete
    return q


def part(pid, max_marks, label=None):
    p = {"id": pid}
    if label is not None:
        p["label"] = label
    p["maxMarks"] = max_marks
    return p


HUMAN = {"kind": "human", "name": "R. Okafor (Head of Mathematics)", "markedAt": "2025-06-14T16:20:00+01:00"}
AI = {
    "kind": "ai",
    "name": "Northfield Auto-Marker",
    "markedAt": "2025-06-15T08:02:41Z",
    "model": "nam-calculus-2025-05",
}


def submission(questions, labels, total, source=None, kind="whole-paper"):
    """A submission whose coverage is written out by the caller."""
    return {
        "schemaVersion": "service-marking-import-v1",
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": copy.deepcopy(source or HUMAN),
        "coverage": {"kind": kind, "questionLabels": labels, "totalMarks": total},
        "questions": questions,
    }


def q1():
    """Question 1: stationary points of y = x^3 - 6x^2 + 9x + 2 (4 marks, parts a and b)."""
    return question(
        "1",
        {WORK: [1, 2], SCHEME: [1]},
        [part("a", 2, "(a)"), part("b", 2, "(b)")],
        [
            criterion("q1a-M1", "a", "M1",
                      "Differentiates y = x^3 - 6x^2 + 9x + 2 with at least two terms correct"),
            criterion("q1a-A1", "a", "A1", "dy/dx = 3x^2 - 12x + 9, fully correct", deps=["q1a-M1"]),
            criterion("q1b-M1", "b", "M1", "Sets their dy/dx = 0 and solves the quadratic for x",
                      conditions=["Their dy/dx is a three-term quadratic"], mode="all"),
            criterion("q1b-A1", "b", "A1", "Stationary points (1, 6) and (3, 2)", deps=["q1b-M1"]),
        ],
        [
            decision("q1a-M1", "awarded", "All three terms differentiated correctly",
                     "dy/dx = 3x^2 - 12x + 9", W(1), box(0.12, 0.18, 0.46, 0.06)),
            decision("q1a-A1", "awarded", "Derivative fully correct and simplified",
                     "dy/dx = 3x^2 - 12x + 9", W(1), box(0.12, 0.18, 0.46, 0.06)),
            decision("q1b-M1", "awarded", "Solves 3x^2 - 12x + 9 = 0 by factorising as 3(x - 1)(x - 3)",
                     "3(x - 1)(x - 3) = 0, so x = 1 or x = 3", W(1), box(0.12, 0.31, 0.52, 0.07),
                     checks=[check(0, "met", "Uses 3x^2 - 12x + 9 from part (a)",
                                   [evidence(W(1), "3x^2 - 12x + 9 = 0", box(0.12, 0.26, 0.3, 0.04))])]),
            decision("q1b-A1", "awarded", "Both stationary points correct",
                     "(1, 6) and (3, 2)", W(2), box(0.1, 0.05, 0.35, 0.05)),
        ],
        reported=4,
        complete=True,
    )


def q2():
    """Question 2: the definite integral of 3x^2 - 4x from 1 to 3 (3 marks)."""
    return question(
        "2",
        {WORK: [3], SCHEME: [2]},
        [part("a", 3)],
        [
            criterion("q2-M1", "a", "M1", "Integrates: x^n -> x^(n+1)/(n+1) for at least one term",
                      source=[S(2)]),
            criterion("q2-dM1", "a", "dM1", "Substitutes the limits 3 and 1 into their integral and subtracts",
                      deps=["q2-M1"], source=[S(2)]),
            criterion("q2-A1", "a", "A1", "Area = 10 cao", deps=["q2-dM1"], source=[S(2)]),
        ],
        [
            decision("q2-M1", "awarded", "Integral x^3 - 2x^2 correct", "[x^3 - 2x^2] from 1 to 3",
                     W(3), box(0.08, 0.12, 0.55, 0.08)),
            decision("q2-dM1", "awarded", "Limits substituted in the right order",
                     "(27 - 18) - (1 - 2)", W(3), box(0.08, 0.22, 0.5, 0.06)),
            decision("q2-A1", "awarded", "Correct value", "= 10", W(3), box(0.08, 0.3, 0.2, 0.05)),
        ],
    )


def base():
    """The base document: one question, four marks, every mark awarded."""
    return submission([q1()], ["1"], 4)


def two_questions():
    return submission([q1(), q2()], ["1", "2"], 7)


# --------------------------------------------------------------------------------------------
# Editing documents by JSON Pointer
# --------------------------------------------------------------------------------------------

DELETE = object()


def pointer_tokens(ptr):
    if ptr == "":
        return []
    assert ptr.startswith("/"), ptr
    return [t.replace("~1", "/").replace("~0", "~") for t in ptr[1:].split("/")]


def resolve(doc, tokens):
    for t in tokens:
        doc = doc[int(t)] if isinstance(doc, list) else doc[t]
    return doc


def edit(doc, *changes):
    """Applies (pointer, value) changes in order; DELETE removes. A new object key goes last."""
    for ptr, value in changes:
        tokens = pointer_tokens(ptr)
        parent = resolve(doc, tokens[:-1])
        key = tokens[-1]
        if isinstance(parent, list):
            if key == "-":
                assert value is not DELETE
                parent.append(value)
            elif value is DELETE:
                del parent[int(key)]
            else:
                parent[int(key)] = value
        else:
            if value is DELETE:
                del parent[key]
            else:
                parent[key] = value
    return doc


def get(doc, ptr):
    return resolve(doc, pointer_tokens(ptr))


def compact(doc):
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def replace_once(text, old, new):
    assert text.count(old) == 1, (old, text.count(old))
    return text.replace(old, new)


# --------------------------------------------------------------------------------------------
# Expected outcomes
# --------------------------------------------------------------------------------------------


def err(path, code):
    return {"path": path, "code": code}


def invalid(*errors, truncated=False):
    return {"valid": False, "errors": list(errors), "truncated": truncated}


def sc(awarded, possible, maximum):
    return {"awarded": awarded, "possible": possible, "max": maximum}


def crit(cid, code, submitted, effective, flags=()):
    return {"id": cid, "code": code, "submitted": submitted, "effective": effective, "flags": list(flags)}


def flag(code, path, criterion_id=None):
    f = {"code": code}
    if criterion_id is not None:
        f["criterionId"] = criterion_id
    f["path"] = path
    return f


def qrep(label, status, score, parts, criteria, flags=()):
    return {
        "label": label,
        "status": status,
        "score": score,
        "parts": [{"id": pid, "score": s} for pid, s in parts],
        "criteria": criteria,
        "reviewFlags": list(flags),
    }


def valid(status, score, questions, assets_checked=False):
    return {
        "valid": True,
        "schemaVersion": "service-marking-import-v1",
        "assetsChecked": assets_checked,
        "status": status,
        "score": score,
        "questions": questions,
    }


Q1_REPORT = qrep(
    "1", "completed", sc(4, 4, 4),
    [("a", sc(2, 2, 2)), ("b", sc(2, 2, 2))],
    [
        crit("q1a-M1", "M1", "awarded", "awarded"),
        crit("q1a-A1", "A1", "awarded", "awarded"),
        crit("q1b-M1", "M1", "awarded", "awarded"),
        crit("q1b-A1", "A1", "awarded", "awarded"),
    ],
)
Q2_REPORT = qrep(
    "2", "completed", sc(3, 3, 3),
    [("a", sc(3, 3, 3))],
    [
        crit("q2-M1", "M1", "awarded", "awarded"),
        crit("q2-dM1", "dM1", "awarded", "awarded"),
        crit("q2-A1", "A1", "awarded", "awarded"),
    ],
)
BASE_VALID = valid("completed", sc(4, 4, 4), [Q1_REPORT])
BASE_VALID_ASSETS = valid("completed", sc(4, 4, 4), [Q1_REPORT], assets_checked=True)
TWO_VALID = valid("completed", sc(7, 7, 7), [Q1_REPORT, Q2_REPORT])


def q1_report(label):
    r = copy.deepcopy(Q1_REPORT)
    r["label"] = label
    return r


# Common paths into the base document.
Q0 = "/questions/0"
CRIT = Q0 + "/rubric/criteria"
DEC = Q0 + "/decisions"
SEL = Q0 + "/pageSelections"
CHECK0 = DEC + "/2/conditionChecks/0"

# --------------------------------------------------------------------------------------------
# The vectors
# --------------------------------------------------------------------------------------------

VECTORS = []
PARSE_CODES = {"invalid_json", "nesting_too_deep", "payload_too_large"}
# Defects the published JSON Schema expresses itself; see README.md, "The schema mark".
STRUCTURAL_CODES = {
    "unknown_field", "required", "type", "const", "enum", "pattern", "format", "min_length", "max_length",
    "min_items", "max_items", "unique_items", "minimum", "maximum", "model_required",
    "condition_mode_required", "dependent_code_without_dependencies", "invalid_page_id", "box_not_positive",
}


def vector(name, description, expected, schema, submission=None, text=None, raw=None, assets=None,
           pad=None):
    """Records one vector. Exactly one of submission (a document), text (raw text) or raw (bytes)."""
    assert sum(x is not None for x in (submission, text, raw)) == 1, name
    v = {"name": name, "description": description, "assets": copy.deepcopy(assets)}
    if submission is not None:
        v["submission"] = submission
    elif text is not None:
        v["submissionText"] = text
    else:
        v["submissionBase64"] = base64.b64encode(raw).decode("ascii")
    if pad is not None:
        v["padToBytes"] = pad
    v["schema"] = schema
    v["expected"] = expected
    VECTORS.append(v)


def reject(name, description, doc, *errors, assets=None):
    """A structurally invalid document: the published schema must reject it too."""
    vector(name, description, invalid(*errors), "reject", submission=doc, assets=assets)


def refuse(name, description, doc, *errors, assets=None):
    """A document with only relational defects that JSON Schema cannot express."""
    vector(name, description, invalid(*errors), "accept", submission=doc, assets=assets)


def accept(name, description, doc, expected, assets=None):
    vector(name, description, expected, "accept", submission=doc, assets=assets)


# ---- valid documents ------------------------------------------------------------------------

accept("valid-base", "A one-question submission with every mark awarded is valid and completed, "
       "checked without assets.", base(), BASE_VALID)

accept("valid-base-with-assets", "The base submission checked against its import's assets is valid "
       "and says assetsChecked: true.", base(), BASE_VALID_ASSETS, assets=ASSETS)

accept("valid-two-questions", "Two questions with unique labels and ids, coverage agreeing, give "
       "per-question and total score ranges.", two_questions(), TWO_VALID)

accept("valid-ai-source-with-model", "An AI source that names its model is valid.",
       edit(base(), ("/source", copy.deepcopy(AI))), BASE_VALID)

accept("valid-human-source-with-model", "source.model is allowed with a human source.",
       edit(base(), ("/source/model", "n/a")), BASE_VALID)

accept("valid-partial-coverage", "coverage.kind partial is checked for agreement the same way and is "
       "valid when it agrees.", edit(base(), ("/coverage/kind", "partial")), BASE_VALID)

accept("valid-optional-fields-absent", "Part labels, condition-check notes and evidence, "
       "reportedScore and complete are optional.",
       edit(base(), (Q0 + "/rubric/parts/0/label", DELETE), (Q0 + "/rubric/parts/1/label", DELETE),
            (CHECK0 + "/note", DELETE), (CHECK0 + "/evidence", DELETE),
            (Q0 + "/reportedScore", DELETE), (Q0 + "/complete", DELETE)),
       BASE_VALID)

accept("valid-condition-mode-without-conditions", "conditionMode may be present when conditions is "
       "empty.", edit(base(), (CRIT + "/0/conditionMode", "any")), BASE_VALID)

accept("valid-mark-codes", "Every code form the pattern allows (d prefix, ft and * suffixes) is valid; "
       "the code alone changes no score.",
       edit(base(), (CRIT + "/0/code", "B1*"), (CRIT + "/1/code", "dA1ft"), (CRIT + "/2/code", "M1ft"),
            (CRIT + "/3/code", "dB1")),
       valid("completed", sc(4, 4, 4), [qrep(
           "1", "completed", sc(4, 4, 4), [("a", sc(2, 2, 2)), ("b", sc(2, 2, 2))],
           [crit("q1a-M1", "B1*", "awarded", "awarded"), crit("q1a-A1", "dA1ft", "awarded", "awarded"),
            crit("q1b-M1", "M1ft", "awarded", "awarded"), crit("q1b-A1", "dB1", "awarded", "awarded")])]))

ID64 = "q1b." + "A" * 55 + ":2025"
assert len(ID64) == 64
r = copy.deepcopy(Q1_REPORT)
r["criteria"][3]["id"] = ID64
accept("valid-criterion-id-64-characters", "A criterion id of exactly 64 characters from the allowed "
       "set is valid.", edit(base(), (CRIT + "/3/id", ID64), (DEC + "/3/criterionId", ID64)),
       valid("completed", sc(4, 4, 4), [r]))

LABEL40 = "7(b) ∫₀¹ x²eˣ dx — par parties: 𝑓′=2x·eˣ"
assert len(LABEL40) == 40, len(LABEL40)
assert len(LABEL40.encode("utf-8")) > 50
LABEL41 = LABEL40 + "✓"
accept("valid-label-40-code-points", "A question label of 40 Unicode code points (many of them multi-byte, "
       "one outside the BMP) is valid: lengths count code points, not bytes or UTF-16 units.",
       edit(base(), (Q0 + "/label", LABEL40), ("/coverage/questionLabels", [LABEL40])),
       valid("completed", sc(4, 4, 4), [q1_report(LABEL40)]))

accept("valid-marked-at-leap-day", "29 February in a leap year is a valid markedAt.",
       edit(base(), ("/source/markedAt", "2024-02-29T09:00:00Z")), BASE_VALID)
accept("valid-marked-at-lowercase-fraction", "markedAt accepts lower-case t and z and a fraction of a "
       "second.", edit(base(), ("/source/markedAt", "2025-06-14t16:20:00.250z")), BASE_VALID)
accept("valid-marked-at-leap-second", "markedAt accepts second 60 (a leap second) and a negative "
       "offset.", edit(base(), ("/source/markedAt", "2016-12-31T18:59:60-05:00")), BASE_VALID)

# Integers with a zero fraction, kept as raw text so every surface sees the same spelling.
t = compact(base())
t = replace_once(t, '"totalMarks":4', '"totalMarks":4.0')
t = replace_once(t, '"label":"(a)","maxMarks":2', '"label":"(a)","maxMarks":2.0')
t = t.replace('"maxMarks":1,"sourcePageIds"', '"maxMarks":1.0,"sourcePageIds"')
t = replace_once(t, f'"{WORK}":[1,2]', f'"{WORK}":[1.0,2.0]')
t = replace_once(t, '"index":0', '"index":0.0')
t = replace_once(t, '"awarded":4', '"awarded":4.0')
vector("valid-integers-with-zero-fraction", "Numbers with no fractional part (4.0, 2.0, 1.0, 0.0) are "
       "integers wherever an integer is required.", BASE_VALID, "accept", text=t)

t = compact(base())
t = replace_once(t, '"totalMarks":4', '"totalMarks":4E0')
t = replace_once(t, '"awarded":4', '"awarded":0.4e1')
vector("valid-integers-in-exponent-form", "4E0 and 0.4e1 have no fractional part, so they are the "
       "integer 4.", BASE_VALID, "accept", text=t)

t = compact(base())
t = replace_once(t, '"requirement":"Stationary points (1, 6) and (3, 2)"',
                 '"requirement":"Stationary points (1, 6) and (3, 2) \\ud835\\udc53"')
vector("valid-escaped-surrogate-pair", "A \\u escape pair forming one astral character is valid JSON.",
       BASE_VALID, "accept", text=t)

t = json.dumps(base(), indent=4, ensure_ascii=False).replace("\n", "\r\n") + "\r\n\t "
vector("valid-pretty-printed-with-crlf", "Whitespace between tokens (spaces, tabs, CR LF, trailing) "
       "changes nothing.", BASE_VALID, "accept", text=t)

# ---- parsing ------------------------------------------------------------------------------

vector("parse-empty-document", "An empty document is not JSON.", invalid(err("", "invalid_json")), "skip",
       text="")
vector("parse-whitespace-only", "A document of whitespace only is not JSON.",
       invalid(err("", "invalid_json")), "skip", text=" \n\t ")
vector("parse-byte-order-mark", "A UTF-8 byte order mark before an otherwise valid document is rejected.",
       invalid(err("", "invalid_json")), "skip", text="\ufeff" + compact(base()))
raw = compact(base()).encode("utf-8")
raw = raw.replace(b'"pageBasis":"displayed-page"', b'"pageBasis":"displayed\xffpage"')
vector("parse-invalid-utf8-top-level", "A byte that is not UTF-8 in a top-level member's string is "
       "invalid_json at that value.", invalid(err("/pageBasis", "invalid_json")), "skip", raw=raw)
raw = compact(base()).encode("utf-8")
raw = raw.replace(b'"name":"R. Okafor (Head of Mathematics)"', b'"name":"R. Okafor \xc3\x28"')
vector("parse-invalid-utf8-in-source", "A malformed UTF-8 sequence inside source.name is invalid_json at "
       "the value holding it.", invalid(err("/source/name", "invalid_json")), "skip", raw=raw)
vector("parse-trailing-comma", "A trailing comma inside source is a failure between members: "
       "invalid_json at the enclosing object.",
       invalid(err("/source", "invalid_json")), "skip",
       text=replace_once(compact(base()), '"markedAt":"2025-06-14T16:20:00+01:00"}',
                         '"markedAt":"2025-06-14T16:20:00+01:00",}'))
vector("parse-trailing-content", "Content after the document's value is invalid_json at the top level.",
       invalid(err("", "invalid_json")), "skip", text=compact(base()) + " {}")
vector("parse-unterminated-string", "A document cut off inside a member's string is invalid_json at "
       "that value.", invalid(err("/schemaVersion", "invalid_json")), "skip",
       text='{"schemaVersion":"service-marking')
vector("parse-duplicate-key", "A repeated key in source is invalid_json at the repeated key's path; no "
       "value wins silently.", invalid(err("/source/name", "invalid_json")), "skip",
       text=replace_once(compact(base()), '"name":"R. Okafor (Head of Mathematics)"',
                         '"name":"R. Okafor (Head of Mathematics)","name":"J. Patel"'))
vector("parse-duplicate-key-in-box", "A repeated key deep in an evidence box is invalid_json at that "
       "key's path.", invalid(err(DEC + "/1/evidence/0/box/x", "invalid_json")), "skip",
       text=replace_once(
           compact(base()),
           '"reason":"Derivative fully correct and simplified","evidence":[{"pageId":"' + W(1)
           + '","quote":"dy/dx = 3x^2 - 12x + 9","box":{"x":0.12,',
           '"reason":"Derivative fully correct and simplified","evidence":[{"pageId":"' + W(1)
           + '","quote":"dy/dx = 3x^2 - 12x + 9","box":{"x":0.12,"x":0.2,'))
vector("parse-number-out-of-range", "1e400 does not fit a 64-bit float: invalid_json at that number.",
       invalid(err("/coverage/totalMarks", "invalid_json")), "skip",
       text=replace_once(compact(base()), '"totalMarks":4', '"totalMarks":1e400'))
vector("parse-lone-surrogate", "A \\u escape of a lone UTF-16 surrogate is invalid_json at the string.",
       invalid(err("/source/name", "invalid_json")), "skip",
       text=replace_once(compact(base()), '"name":"R. Okafor (Head of Mathematics)"',
                         '"name":"R. Okafor \\ud800"'))

DEPTH = 50000
LIMIT_DEPTH = 128  # the deepest nesting a document may have; the schema itself nests 10 levels
vector("parse-nesting-too-deep-root", "50,000 nested arrays stop at the 129th level with nesting_too_deep, "
       "at the path of that container, without exhausting the stack.",
       invalid(err("/0" * LIMIT_DEPTH, "nesting_too_deep")), "skip", text="[" * DEPTH + "]" * DEPTH)


def nested(levels):
    v = []
    for _ in range(levels - 1):
        v = [v]
    return v


# Documents nested past 127 levels are given as text: a vector file holds its submission two levels
# down, and some JSON readers of the vector files stop at 128 levels themselves.
vector("parse-nesting-too-deep-field", "An unknown field holding 128 nested arrays reaches level 129: "
       "nesting_too_deep at the 129th container, nothing else reported.",
       invalid(err("/extra" + "/0" * (LIMIT_DEPTH - 1), "nesting_too_deep")), "skip",
       text=compact(edit(base(), ("/extra", nested(LIMIT_DEPTH)))))
vector("structure-nesting-at-limit", "An unknown field holding 127 nested arrays reaches exactly level 128, "
       "the limit: it parses, and is one unknown_field.", invalid(err("/extra", "unknown_field")), "reject",
       text=compact(edit(base(), ("/extra", nested(LIMIT_DEPTH - 1)))))
reject("structure-nesting-past-schema-depth-field", "An unknown field holding 10 nested arrays reaches level "
       "11, deeper than the schema but within the limit: one unknown_field, and the document's other "
       "defects are reported too.", edit(base(), ("/source/name", ""), ("/extra", nested(10))),
       err("/source/name", "min_length"), err("/extra", "unknown_field"))
reject("structure-nesting-array-in-check-box", "A box inside a condition check's evidence is the 10th level, "
       "the schema's deepest; an array inside it is the 11th, within the limit: one unknown_field.",
       edit(base(), (CHECK0 + "/evidence/0/box/extra", [])), err(CHECK0 + "/evidence/0/box/extra", "unknown_field"))
vector("structure-nesting-decision-box-at-limit", "A decision's evidence box is level 8, so 120 nested "
       "arrays in it reach level 128, the limit, and parse: one unknown_field.",
       invalid(err(DEC + "/0/evidence/0/box/extra", "unknown_field")), "reject",
       text=compact(edit(base(), (DEC + "/0/evidence/0/box/extra", nested(LIMIT_DEPTH - 8)))))
reject("structure-nesting-arrays-in-decision-box", "Three nested arrays in a decision's evidence box reach "
       "level 11, deeper than the schema but within the limit: one unknown_field.",
       edit(base(), (DEC + "/0/evidence/0/box/extra", [[[]]])), err(DEC + "/0/evidence/0/box/extra", "unknown_field"))
reject("structure-nesting-array-as-box-width", "Nested arrays where a box's width should be a number reach "
       "level 12: the width is one type error, and the document's other defects are reported too.",
       edit(base(), ("/source/name", ""), (DEC + "/0/evidence/0/box/width", nested(4))),
       err("/source/name", "min_length"), err(DEC + "/0/evidence/0/box/width", "type"))

vector("limits-payload-exactly-4-mib", "A valid document padded with trailing spaces to exactly "
       "4,194,304 bytes is accepted.", BASE_VALID, "accept", submission=base(), pad=4194304)
vector("limits-payload-4-mib-plus-one", "The same document padded to 4,194,305 bytes is "
       "payload_too_large, before parsing.", invalid(err("", "payload_too_large")), "skip",
       submission=base(), pad=4194305)

# ---- structure: the root, required fields, unknown fields -------------------------------------

reject("structure-root-array", "A document that is an array, not an object, is one type error at the "
       "root.", [], err("", "type"))
vector("structure-root-null", "The document null is one type error at the root.", invalid(err("", "type")),
       "reject", text="null")
reject("structure-empty-object", "{} lacks all six required fields; each is reported at its own path, "
       "in the contract's field order.", {},
       err("/schemaVersion", "required"), err("/coordinateSystem", "required"), err("/pageBasis", "required"),
       err("/source", "required"), err("/coverage", "required"), err("/questions", "required"))

reject("structure-unknown-field-root", "An unknown top-level field is unknown_field at the field.",
       edit(base(), ("/title", "Summer mock, paper 1")), err("/title", "unknown_field"))
reject("structure-unknown-field-escaped-pointer", "An unknown field whose name holds / and ~ is reported "
       "with RFC 6901 escapes (~1 and ~0).", edit(base(), ("/notes~1v1~0draft", "x")),
       err("/notes~1v1~0draft", "unknown_field"))
reject("structure-unknown-field-source", "source rejects unknown fields.",
       edit(base(), ("/source/school", "Northfield Academy")), err("/source/school", "unknown_field"))
reject("structure-unknown-field-coverage", "coverage rejects unknown fields.",
       edit(base(), ("/coverage/paper", "9MA0/01")), err("/coverage/paper", "unknown_field"))
reject("structure-unknown-field-question", "A question rejects unknown fields.",
       edit(base(), (Q0 + "/marks", 4)), err(Q0 + "/marks", "unknown_field"))
reject("structure-unknown-field-rubric", "rubric rejects unknown fields.",
       edit(base(), (Q0 + "/rubric/totalMarks", 4)), err(Q0 + "/rubric/totalMarks", "unknown_field"))
reject("structure-unknown-field-part", "A part rejects unknown fields.",
       edit(base(), (Q0 + "/rubric/parts/1/marks", 2)), err(Q0 + "/rubric/parts/1/marks", "unknown_field"))
reject("structure-unknown-field-criterion", "A criterion rejects unknown fields.",
       edit(base(), (CRIT + "/2/guidance", "Allow x = 1, 3 from a calculator")),
       err(CRIT + "/2/guidance", "unknown_field"))
reject("structure-unknown-field-decision", "A decision rejects unknown fields.",
       edit(base(), (DEC + "/1/confidence", 0.9)), err(DEC + "/1/confidence", "unknown_field"))
reject("structure-unknown-field-condition-check", "A condition check rejects unknown fields.",
       edit(base(), (CHECK0 + "/met", True)), err(CHECK0 + "/met", "unknown_field"))
reject("structure-unknown-field-evidence", "A decision's evidence item rejects unknown fields.",
       edit(base(), (DEC + "/3/evidence/0/page", 2)), err(DEC + "/3/evidence/0/page", "unknown_field"))
reject("structure-unknown-field-check-evidence", "A condition check's evidence item rejects unknown "
       "fields.", edit(base(), (CHECK0 + "/evidence/0/colour", "red")),
       err(CHECK0 + "/evidence/0/colour", "unknown_field"))
reject("structure-unknown-field-box", "A box rejects unknown fields.",
       edit(base(), (DEC + "/0/evidence/0/box/rotation", 90)), err(DEC + "/0/evidence/0/box/rotation", "unknown_field"))
reject("structure-unknown-field-reported-score", "reportedScore rejects unknown fields.",
       edit(base(), (Q0 + "/reportedScore/possible", 4)), err(Q0 + "/reportedScore/possible", "unknown_field"))

reject("structure-required-marked-at", "A missing source.markedAt is required at its own path.",
       edit(base(), ("/source/markedAt", DELETE)), err("/source/markedAt", "required"))
reject("structure-required-empty-list-field", "conditions may be empty but must be present: a missing "
       "conditions is required.", edit(base(), (CRIT + "/0/conditions", DELETE)), err(CRIT + "/0/conditions", "required"))
reject("structure-required-condition-checks", "conditionChecks must be present even for a criterion "
       "without conditions.", edit(base(), (DEC + "/0/conditionChecks", DELETE)),
       err(DEC + "/0/conditionChecks", "required"))
reject("structure-required-two-fields", "Two missing fields of one criterion are both reported at the "
       "object's closing brace, in field order.",
       edit(base(), (CRIT + "/1/conditions", DELETE), (CRIT + "/1/dependsOn", DELETE)),
       err(CRIT + "/1/conditions", "required"), err(CRIT + "/1/dependsOn", "required"))
reject("structure-required-label", "A question without a label is one required error; the coverage "
       "label comparison is skipped.", edit(base(), (Q0 + "/label", DELETE)), err(Q0 + "/label", "required"))
reject("structure-required-box-height", "A box without height is required; the y + height sum is not "
       "checked.", edit(base(), (DEC + "/1/evidence/0/box/height", DELETE)),
       err(DEC + "/1/evidence/0/box/height", "required"))
reject("structure-required-evidence", "A decision without evidence is required at /evidence.",
       edit(base(), (DEC + "/3/evidence", DELETE)), err(DEC + "/3/evidence", "required"))
reject("structure-required-missing-before-unknown", "A missing field sorts at its object's closing brace, "
       "after an unknown field written in that object.",
       edit(base(), ("/source/markedAt", DELETE), ("/source/email", "r.okafor@example.org")),
       err("/source/email", "unknown_field"), err("/source/markedAt", "required"))

# ---- structure: null and wrong types ----------------------------------------------------------

reject("structure-null-complete", "null is not accepted for an optional field: complete: null is a type "
       "error.", edit(base(), (Q0 + "/complete", None)), err(Q0 + "/complete", "type"))
reject("structure-null-part-label", "An optional part label of null is a type error.",
       edit(base(), (Q0 + "/rubric/parts/0/label", None)), err(Q0 + "/rubric/parts/0/label", "type"))
reject("structure-null-model-human", "source.model: null is a type error with a human source.",
       edit(base(), ("/source/model", None)), err("/source/model", "type"))
reject("structure-null-model-ai", "source.model: null with an AI source is present, so one type error and "
       "no model_required.", edit(base(), ("/source/kind", "ai"), ("/source/model", None)),
       err("/source/model", "type"))
reject("structure-null-note", "A condition check's note of null is a type error.",
       edit(base(), (CHECK0 + "/note", None)), err(CHECK0 + "/note", "type"))
reject("structure-null-reported-score", "reportedScore: null is a type error.",
       edit(base(), (Q0 + "/reportedScore", None)), err(Q0 + "/reportedScore", "type"))
reject("structure-null-condition-mode", "conditionMode: null on a criterion with conditions is one type "
       "error; it is present, so not condition_mode_required.",
       edit(base(), (CRIT + "/2/conditionMode", None)), err(CRIT + "/2/conditionMode", "type"))
reject("structure-null-check-evidence", "A condition check's evidence of null is a type error.",
       edit(base(), (CHECK0 + "/evidence", None)), err(CHECK0 + "/evidence", "type"))

reject("structure-type-source", "source as a string is one type error.",
       edit(base(), ("/source", "R. Okafor")), err("/source", "type"))
reject("structure-type-total-marks-string", "totalMarks as a string is a type error; coverage is not "
       "compared.", edit(base(), ("/coverage/totalMarks", "4")), err("/coverage/totalMarks", "type"))
reject("structure-type-question-labels-item", "A number among questionLabels is a type error at that "
       "item; the label comparison is skipped.", edit(base(), ("/coverage/questionLabels", [1])),
       err("/coverage/questionLabels/0", "type"))
reject("structure-type-questions-object", "questions as an object is one type error; coverage is not "
       "compared.", edit(base(), ("/questions", {})), err("/questions", "type"))
reject("structure-type-question-item", "A question that is a string is one type error; coverage is not "
       "compared with it.", edit(base(), ("/questions", ["1"])), err("/questions/0", "type"))
reject("structure-type-label-number", "A numeric label is a type error; coverage is not compared.",
       edit(base(), (Q0 + "/label", 1)), err(Q0 + "/label", "type"))
reject("structure-type-page-selections-array", "pageSelections as an array is one type error; the pages "
       "it would select are not reported again.", edit(base(), (SEL, [])), err(SEL, "type"))
reject("structure-type-page-number-string", "A page number given as a string is a type error.",
       edit(base(), (SEL + "/" + WORK, [1, 2, "3"])), err(SEL + "/" + WORK + "/2", "type"))
reject("structure-type-rubric", "rubric as a string is one type error; the decisions are not reported "
       "against criteria that could not be read.", edit(base(), (Q0 + "/rubric", "see mark scheme")),
       err(Q0 + "/rubric", "type"))
reject("structure-type-parts", "parts as an object is one type error; partIds are not reported against "
       "it.", edit(base(), (Q0 + "/rubric/parts", {})), err(Q0 + "/rubric/parts", "type"))
reject("structure-type-criteria", "criteria as an object is one type error: no part_max_mismatch, no "
       "decision errors, no coverage comparison.", edit(base(), (CRIT, {})), err(CRIT, "type"))
reject("structure-type-decisions", "decisions as an object is one type error, not a missing_decision per "
       "criterion.", edit(base(), (DEC, {})), err(DEC, "type"))
reject("structure-type-conditions", "conditions as a string is a type error; the decision's checks are not "
       "compared with it.", edit(base(), (CRIT + "/0/conditions", "none")), err(CRIT + "/0/conditions", "type"))
reject("structure-type-depends-on", "dependsOn as a string is a type error.",
       edit(base(), (CRIT + "/1/dependsOn", "q1a-M1")), err(CRIT + "/1/dependsOn", "type"))
reject("structure-type-source-page-ids", "sourcePageIds as a string is a type error.",
       edit(base(), (CRIT + "/3/sourcePageIds", S(1))), err(CRIT + "/3/sourcePageIds", "type"))
reject("structure-type-criterion-max-marks", "maxMarks as a string is a type error, not const.",
       edit(base(), (CRIT + "/0/maxMarks", "1")), err(CRIT + "/0/maxMarks", "type"))
reject("structure-type-evidence-item", "An evidence item that is a string is a type error.",
       edit(base(), (DEC + "/1/evidence", ["dy/dx = 3x^2 - 12x + 9"])), err(DEC + "/1/evidence/0", "type"))
reject("structure-type-box-array", "A box given as an array is one type error.",
       edit(base(), (DEC + "/1/evidence/0/box", [0.12, 0.18, 0.46, 0.06])), err(DEC + "/1/evidence/0/box", "type"))
reject("structure-type-box-number-string", "A box coordinate given as a string is a type error; its sum "
       "is not checked.", edit(base(), (DEC + "/0/evidence/0/box/x", "0.12")), err(DEC + "/0/evidence/0/box/x", "type"))
reject("structure-type-check-result", "A condition check result of true is a type error.",
       edit(base(), (CHECK0 + "/result", True)), err(CHECK0 + "/result", "type"))
reject("structure-type-complete-string", "complete: \"yes\" is a type error.",
       edit(base(), (Q0 + "/complete", "yes")), err(Q0 + "/complete", "type"))
reject("structure-type-marked-at-number", "markedAt as a Unix timestamp is a type error.",
       edit(base(), ("/source/markedAt", 1749914400)), err("/source/markedAt", "type"))
reject("structure-type-reported-score-number", "reportedScore as a bare number is a type error.",
       edit(base(), (Q0 + "/reportedScore", 4)), err(Q0 + "/reportedScore", "type"))

reject("structure-integer-fractional-total-marks", "totalMarks 4.5 is not an integer: type.",
       edit(base(), ("/coverage/totalMarks", 4.5)), err("/coverage/totalMarks", "type"))
reject("structure-integer-fractional-part-max", "A part maxMarks of 2.5 is a type error; the part is not "
       "compared with its criteria.", edit(base(), (Q0 + "/rubric/parts/0/maxMarks", 2.5)),
       err(Q0 + "/rubric/parts/0/maxMarks", "type"))
reject("structure-integer-fractional-page", "A selected page 2.5 is a type error.",
       edit(base(), (SEL + "/" + WORK, [1, 2, 2.5])), err(SEL + "/" + WORK + "/2", "type"))
reject("structure-integer-fractional-reported", "reportedScore.awarded 3.5 is a type error.",
       edit(base(), (Q0 + "/reportedScore/awarded", 3.5)), err(Q0 + "/reportedScore/awarded", "type"))

# ---- structure: const, enum, pattern, format -------------------------------------------------

reject("structure-const-schema-version", "Another schema version is const.",
       edit(base(), ("/schemaVersion", "service-marking-import-v2")), err("/schemaVersion", "const"))
reject("structure-const-coordinate-system", "Another coordinate system is const.",
       edit(base(), ("/coordinateSystem", "normalized-bottom-left")), err("/coordinateSystem", "const"))
reject("structure-const-page-basis", "Another page basis is const.",
       edit(base(), ("/pageBasis", "physical-page")), err("/pageBasis", "const"))
reject("structure-const-criterion-max-marks", "A criterion maxMarks of 2 is const (every criterion is one "
       "mark).", edit(base(), (CRIT + "/3/maxMarks", 2)), err(CRIT + "/3/maxMarks", "const"))
reject("structure-enum-source-kind", "source.kind teacher is enum.",
       edit(base(), ("/source/kind", "teacher")), err("/source/kind", "enum"))
reject("structure-enum-coverage-kind", "coverage.kind full is enum.",
       edit(base(), ("/coverage/kind", "full")), err("/coverage/kind", "enum"))
reject("structure-enum-outcome", "A decision outcome of partial is enum.",
       edit(base(), (DEC + "/1/outcome", "partial")), err(DEC + "/1/outcome", "enum"))
reject("structure-enum-check-result", "A condition check result of partly is enum.",
       edit(base(), (CHECK0 + "/result", "partly")), err(CHECK0 + "/result", "enum"))
reject("structure-enum-condition-mode", "conditionMode every is enum.",
       edit(base(), (CRIT + "/2/conditionMode", "every")), err(CRIT + "/2/conditionMode", "enum"))
reject("structure-pattern-code", "Code M2 does not match the mark-code pattern.",
       edit(base(), (CRIT + "/2/code", "M2")), err(CRIT + "/2/code", "pattern"))
reject("structure-pattern-code-two-suffixes", "Code A1ft* has two suffixes: pattern.",
       edit(base(), (CRIT + "/3/code", "A1ft*")), err(CRIT + "/3/code", "pattern"))
reject("structure-pattern-criterion-id-space", "A criterion id with a space is pattern; its decision "
       "names the same string and is not reported again.",
       edit(base(), (CRIT + "/3/id", "q1b A1"), (DEC + "/3/criterionId", "q1b A1")), err(CRIT + "/3/id", "pattern"))
ID65 = ID64 + "x"
reject("structure-pattern-criterion-id-65", "A criterion id of 65 characters is pattern.",
       edit(base(), (CRIT + "/3/id", ID65), (DEC + "/3/criterionId", ID65)), err(CRIT + "/3/id", "pattern"))
for name, stamp, why in [
    ("missing-offset", "2025-06-14T16:20:00", "a date-time without a time-zone offset"),
    ("feb-29-non-leap", "2023-02-29T09:00:00Z", "29 February 2023 (not a leap year)"),
    ("feb-30", "2024-02-30T09:00:00Z", "30 February"),
    ("date-only", "2025-06-14", "a date without a time"),
    ("space-separator", "2025-06-14 16:20:00Z", "a space instead of T"),
    ("hour-24", "2025-06-14T24:00:00Z", "hour 24"),
]:
    reject("structure-format-marked-at-" + name, f"markedAt {why} is format.",
           edit(base(), ("/source/markedAt", stamp)), err("/source/markedAt", "format"))
reject("structure-format-selection-key-uppercase", "A pageSelections key in upper case is not a canonical "
       "UUID: format at the key.", edit(base(), (SEL + "/" + WORK2.upper(), [1])),
       err(SEL + "/" + WORK2.upper(), "format"))
reject("structure-format-selection-key-escaped", "A pageSelections key that is not a UUID is format, its "
       "pointer escaping / and ~.", edit(base(), (SEL + "/scans~1week~02", [1])), err(SEL + "/scans~1week~02", "format"))

# ---- structure: lengths, items, numeric limits -----------------------------------------------

for name, ptr in [
    ("source-name", "/source/name"),
    ("requirement", CRIT + "/0/requirement"),
    ("condition", CRIT + "/2/conditions/0"),
    ("reason", DEC + "/1/reason"),
    ("quote", DEC + "/3/evidence/0/quote"),
    ("note", CHECK0 + "/note"),
]:
    reject("structure-min-length-" + name, f"An empty string at {ptr.rsplit('/', 1)[-1]} is min_length.",
           edit(base(), (ptr, "")), err(ptr, "min_length"))
reject("structure-min-length-depends-on-entry", "An empty dependsOn entry is min_length, not "
       "unknown_dependency.", edit(base(), (CRIT + "/1/dependsOn/-", "")), err(CRIT + "/1/dependsOn/1", "min_length"))
reject("structure-min-length-label", "An empty label is min_length; coverage is not compared with it.",
       edit(base(), (Q0 + "/label", "")), err(Q0 + "/label", "min_length"))
reject("structure-max-length-label-41", "A label of 41 code points is max_length; coverage is not compared "
       "with it.", edit(base(), (Q0 + "/label", LABEL41)), err(Q0 + "/label", "max_length"))

reject("structure-min-items-questions", "No questions is min_items (coverage, declaring none, agrees).",
       edit(base(), ("/questions", []), ("/coverage/questionLabels", []), ("/coverage/totalMarks", 0)),
       err("/questions", "min_items"))
reject("structure-min-items-evidence", "A decision with no evidence is min_items.",
       edit(base(), (DEC + "/1/evidence", [])), err(DEC + "/1/evidence", "min_items"))
reject("structure-min-items-check-evidence", "A condition check's evidence, when present, has at least "
       "one item.", edit(base(), (CHECK0 + "/evidence", [])), err(CHECK0 + "/evidence", "min_items"))
reject("structure-min-items-source-page-ids", "sourcePageIds holds at least one page.",
       edit(base(), (CRIT + "/0/sourcePageIds", [])), err(CRIT + "/0/sourcePageIds", "min_items"))
reject("structure-min-items-selection", "An asset's page list in pageSelections is non-empty.",
       edit(base(), (SEL + "/" + WORK2, [])), err(SEL + "/" + WORK2, "min_items"))
reject("structure-unique-items-selection", "A page repeated in one selection is unique_items at the "
       "repeat.", edit(base(), (SEL + "/" + WORK, [1, 2, 1])), err(SEL + "/" + WORK + "/2", "unique_items"))
reject("structure-unique-items-depends-on", "A repeated dependsOn entry is unique_items at the repeat and "
       "adds nothing to the graph.", edit(base(), (CRIT + "/1/dependsOn", ["q1a-M1", "q1a-M1"])),
       err(CRIT + "/1/dependsOn/1", "unique_items"))
reject("structure-minimum-page-zero", "Page 0 in a selection is minimum.",
       edit(base(), (SEL + "/" + WORK, [1, 2, 0])), err(SEL + "/" + WORK + "/2", "minimum"))
reject("structure-minimum-reported-score", "reportedScore.awarded -1 is minimum.",
       edit(base(), (Q0 + "/reportedScore/awarded", -1)), err(Q0 + "/reportedScore/awarded", "minimum"))
reject("structure-minimum-part-max-marks", "A part with maxMarks 0 (and no criteria) is minimum.",
       edit(base(), (Q0 + "/rubric/parts/-", part("c", 0, "(c)"))), err(Q0 + "/rubric/parts/2/maxMarks", "minimum"))
reject("structure-maximum-page", "Page 10001 in a selection is maximum.",
       edit(base(), (SEL + "/" + WORK, [1, 2, 10001])), err(SEL + "/" + WORK + "/2", "maximum"))
vector("structure-maximum-page-beyond-u64", "A page number beyond 2^64 is still an integer above the "
       "maximum.", invalid(err(SEL + "/" + WORK + "/2", "maximum")), "reject",
       text=replace_once(compact(base()), f'"{WORK}":[1,2]', f'"{WORK}":[1,2,18446744073709551616]'))
reject("structure-maximum-page-with-assets", "With assets, page 10001 is maximum only: the page-count check "
       "skips it.", edit(base(), (SEL + "/" + WORK, [1, 2, 10001])), err(SEL + "/" + WORK + "/2", "maximum"),
       assets=ASSETS)

reject("structure-model-required", "An AI source without model is model_required at /source/model.",
       edit(base(), ("/source/kind", "ai")), err("/source/model", "model_required"))
reject("structure-condition-mode-required", "Conditions without conditionMode is condition_mode_required "
       "at the criterion.", edit(base(), (CRIT + "/2/conditionMode", DELETE)), err(CRIT + "/2", "condition_mode_required"))
reject("structure-dependent-code-without-dependencies", "A dM1 with empty dependsOn is "
       "dependent_code_without_dependencies at its dependsOn; nothing is inferred from the code.",
       edit(base(), (CRIT + "/2/code", "dM1")), err(CRIT + "/2/dependsOn", "dependent_code_without_dependencies"))

# ---- references ------------------------------------------------------------------------------

d = two_questions()
edit(d, ("/questions/1/label", "1"), ("/coverage/questionLabels", ["1", "1"]))
refuse("refs-duplicate-label", "Two questions labelled 1: duplicate_label at the later label (coverage "
       "lists the labels as they are, so it agrees).", d, err("/questions/1/label", "duplicate_label"))

d = base()
edit(d, (Q0 + "/rubric/parts/-", part("a", 1, "(a) again")))
refuse("refs-duplicate-part-id", "A third part repeating id a is duplicate_part_id at its id; its maxMarks "
       "is not compared.", d, err(Q0 + "/rubric/parts/2/id", "duplicate_part_id"))

d = two_questions()
edit(d, ("/questions/1/rubric/criteria/2/id", "q1a-A1"), ("/questions/1/decisions/2/criterionId", "q1a-A1"))
refuse("refs-duplicate-criterion-id-across-questions", "Criterion ids are unique across the whole "
       "submission: a repeat in question 2 is duplicate_criterion_id at the later id.",
       d, err("/questions/1/rubric/criteria/2/id", "duplicate_criterion_id"))

refuse("refs-unknown-part", "A partId naming no part is unknown_part; part maxMarks are then not compared.",
       edit(base(), (CRIT + "/3/partId", "c")), err(CRIT + "/3/partId", "unknown_part"))
refuse("refs-unknown-part-skips-part-max", "With an unknown partId in the question, a wrong part maxMarks "
       "is not also reported.", edit(base(), (CRIT + "/3/partId", "c"), (Q0 + "/rubric/parts/0/maxMarks", 3)),
       err(CRIT + "/3/partId", "unknown_part"))
refuse("refs-part-max-mismatch", "Part a declares 3 marks but has 2 criteria: part_max_mismatch at its "
       "maxMarks.", edit(base(), (Q0 + "/rubric/parts/0/maxMarks", 3)),
       err(Q0 + "/rubric/parts/0/maxMarks", "part_max_mismatch"))
refuse("refs-part-max-mismatch-two-parts", "Both parts wrong: one error per part, in document order.",
       edit(base(), (Q0 + "/rubric/parts/0/maxMarks", 1), (Q0 + "/rubric/parts/1/maxMarks", 3)),
       err(Q0 + "/rubric/parts/0/maxMarks", "part_max_mismatch"), err(Q0 + "/rubric/parts/1/maxMarks", "part_max_mismatch"))
refuse("refs-missing-decision", "A criterion without a decision is missing_decision at the criterion.",
       edit(base(), (DEC + "/3", DELETE)), err(CRIT + "/3", "missing_decision"))
d = base()
edit(d, (DEC + "/-", copy.deepcopy(get(d, DEC + "/0"))))
refuse("refs-duplicate-decision", "A second decision for q1a-M1 is duplicate_decision at the later "
       "criterionId.", d, err(DEC + "/4/criterionId", "duplicate_decision"))
refuse("refs-unknown-criterion", "A decision for a criterion the rubric does not have is unknown_criterion.",
       edit(base(), (DEC + "/-", decision("q1c-M1", "withheld", "No attempt at part (c)", "blank answer space",
                                          W(2), box(0.1, 0.6, 0.8, 0.3)))),
       err(DEC + "/4/criterionId", "unknown_criterion"))
reject("refs-decision-without-criterion-id", "A decision without criterionId is required at that field; the "
       "criterion it was meant for is not also missing_decision.",
       edit(base(), (DEC + "/1/criterionId", DELETE)), err(DEC + "/1/criterionId", "required"))
reject("refs-decision-criterion-id-not-a-string", "A criterionId that is a number is type; no criterion of the "
       "question is then missing_decision.",
       edit(base(), (DEC + "/1/criterionId", 1)), err(DEC + "/1/criterionId", "type"))
reject("refs-decision-not-an-object", "A decision that is a string is type; the criterion it was meant for is "
       "not also missing_decision.", edit(base(), (DEC + "/1", "q1a-A1")), err(DEC + "/1", "type"))
reject("refs-decision-without-criterion-id-covers-the-question", "While a decision names no criterion, it may "
       "be the decision of any undecided criterion of its question: a second criterion left without a "
       "decision is not reported either.",
       edit(base(), (DEC + "/3", DELETE), (DEC + "/1/criterionId", DELETE)), err(DEC + "/1/criterionId", "required"))
d = two_questions()
edit(d, (DEC + "/1/criterionId", DELETE), ("/questions/1/decisions/2", DELETE))
reject("refs-decision-without-criterion-id-other-question", "A decision without criterionId covers its own "
       "question only: a criterion of question 2 without a decision is still missing_decision.", d,
       err(DEC + "/1/criterionId", "required"), err("/questions/1/rubric/criteria/2", "missing_decision"))
reject("refs-criterion-without-id", "A criterion without id is required at that field; the decision naming "
       "the id it was meant to have is not also unknown_criterion.",
       edit(base(), (CRIT + "/3/id", DELETE)), err(CRIT + "/3/id", "required"))
d = two_questions()
edit(d, ("/questions/1/decisions/-", decision("q1b-A1", "awarded", "Copied into question 2 by mistake",
                                               "(1, 6) and (3, 2)", W(3), box(0.1, 0.5, 0.3, 0.05))))
refuse("refs-unknown-criterion-other-question", "A decision naming a criterion of another question is "
       "unknown_criterion: decisions only name criteria of their own question.",
       d, err("/questions/1/decisions/3/criterionId", "unknown_criterion"))

TWO_CONDITIONS = ["Their dy/dx is a three-term quadratic",
                  "Solves by factorising, the formula or completing the square"]
refuse("refs-condition-check-missing", "Two conditions, only index 1 checked: one "
       "condition_check_missing at the decision's conditionChecks.",
       edit(base(), (CRIT + "/2/conditions", TWO_CONDITIONS),
            (DEC + "/2/conditionChecks", [check(1, "met", "Factorised correctly")])),
       err(DEC + "/2/conditionChecks", "condition_check_missing"))
refuse("refs-condition-checks-all-missing", "Two conditions and no checks: one condition_check_missing per "
       "missing index, both at conditionChecks.",
       edit(base(), (CRIT + "/2/conditions", TWO_CONDITIONS), (DEC + "/2/conditionChecks", [])),
       err(DEC + "/2/conditionChecks", "condition_check_missing"),
       err(DEC + "/2/conditionChecks", "condition_check_missing"))
refuse("refs-condition-check-duplicate", "Index 0 checked twice: condition_check_duplicate at the later "
       "check's index.",
       edit(base(), (DEC + "/2/conditionChecks/-", check(0, "met"))),
       err(DEC + "/2/conditionChecks/1/index", "condition_check_duplicate"))
refuse("refs-condition-index-out-of-range", "A check of index 1 for a criterion with one condition is "
       "condition_index_out_of_range.",
       edit(base(), (DEC + "/2/conditionChecks/-", check(1, "met"))),
       err(DEC + "/2/conditionChecks/1/index", "condition_index_out_of_range"))
refuse("refs-condition-check-without-conditions", "A check on a criterion with no conditions is out of "
       "range.", edit(base(), (DEC + "/0/conditionChecks", [check(0, "met")])),
       err(DEC + "/0/conditionChecks/0/index", "condition_index_out_of_range"))
refuse("refs-condition-checks-missing-then-duplicate", "Missing index 0 (at conditionChecks) sorts before "
       "the duplicate index 1 (at the later check's index).",
       edit(base(), (CRIT + "/2/conditions", TWO_CONDITIONS),
            (DEC + "/2/conditionChecks", [check(1, "met"), check(1, "uncertain")])),
       err(DEC + "/2/conditionChecks", "condition_check_missing"),
       err(DEC + "/2/conditionChecks/1/index", "condition_check_duplicate"))

refuse("refs-coverage-labels-mismatch", "coverage.questionLabels differing from the labels is "
       "coverage_mismatch at questionLabels.", edit(base(), ("/coverage/questionLabels", ["Q1"])),
       err("/coverage/questionLabels", "coverage_mismatch"))
refuse("refs-coverage-labels-order", "Labels in another order disagree: coverage_mismatch.",
       edit(two_questions(), ("/coverage/questionLabels", ["2", "1"])),
       err("/coverage/questionLabels", "coverage_mismatch"))
refuse("refs-coverage-labels-missing-one", "A partial coverage listing only one of two questions still "
       "disagrees: both kinds are checked the same way.",
       edit(two_questions(), ("/coverage/kind", "partial"), ("/coverage/questionLabels", ["1"]),
            ("/coverage/totalMarks", 7)),
       err("/coverage/questionLabels", "coverage_mismatch"))
refuse("refs-coverage-total-marks", "totalMarks 5 for 4 criteria is coverage_mismatch at totalMarks.",
       edit(base(), ("/coverage/totalMarks", 5)), err("/coverage/totalMarks", "coverage_mismatch"))
refuse("refs-coverage-both", "Both coverage fields wrong: two errors, labels first.",
       edit(two_questions(), ("/coverage/questionLabels", ["1", "3"]), ("/coverage/totalMarks", 4)),
       err("/coverage/questionLabels", "coverage_mismatch"), err("/coverage/totalMarks", "coverage_mismatch"))

# ---- pages and assets --------------------------------------------------------------------------

for name, page_id, why in [
    ("uppercase-uuid", WORK.upper() + ":p1", "an upper-case UUID"),
    ("leading-zero", WORK + ":p01", "a page number with a leading zero"),
    ("page-zero", WORK + ":p0", "page 0"),
    ("page-10001", WORK + ":p10001", "page 10001"),
    ("missing-p", WORK + ":1", "no p before the number"),
    ("no-page", WORK, "no page part"),
    ("uppercase-p", WORK + ":P1", "an upper-case P"),
    ("unhyphenated-uuid", WORK.replace("-", "") + ":p1", "a UUID without hyphens"),
]:
    reject("pages-invalid-page-id-" + name, f"Evidence citing {why} is invalid_page_id, not "
           "page_not_selected.", edit(base(), (DEC + "/1/evidence/0/pageId", page_id)),
           err(DEC + "/1/evidence/0/pageId", "invalid_page_id"))
reject("pages-invalid-page-id-source", "A malformed sourcePageIds entry is invalid_page_id.",
       edit(base(), (CRIT + "/2/sourcePageIds", ["scheme-p1"])), err(CRIT + "/2/sourcePageIds/0", "invalid_page_id"))
reject("pages-invalid-page-id-check-evidence", "A malformed page id in a condition check's evidence is "
       "invalid_page_id.", edit(base(), (CHECK0 + "/evidence/0/pageId", WORK + ":p1 ")),
       err(CHECK0 + "/evidence/0/pageId", "invalid_page_id"))
accept("pages-page-10000-valid", "Page 10000 is the highest page a selection and a page id may name.",
       edit(base(), (SEL + "/" + WORK, [1, 2, 10000]), (DEC + "/3/evidence/0/pageId", W(10000))), BASE_VALID)

refuse("pages-not-selected-evidence", "Evidence on work page 3, not selected for the question, is "
       "page_not_selected.", edit(base(), (DEC + "/1/evidence/0/pageId", W(3))),
       err(DEC + "/1/evidence/0/pageId", "page_not_selected"))
refuse("pages-not-selected-source", "A sourcePageIds entry on scheme page 2, not selected, is "
       "page_not_selected.", edit(base(), (CRIT + "/1/sourcePageIds", [S(1), S(2)])),
       err(CRIT + "/1/sourcePageIds/1", "page_not_selected"))
refuse("pages-not-selected-check-evidence", "Condition-check evidence on an unselected page is "
       "page_not_selected.", edit(base(), (CHECK0 + "/evidence/0/pageId", W(4))),
       err(CHECK0 + "/evidence/0/pageId", "page_not_selected"))
refuse("pages-not-selected-other-asset", "A page of an asset the question does not select is "
       "page_not_selected.", edit(base(), (DEC + "/0/evidence/0/pageId", WORK2 + ":p1")),
       err(DEC + "/0/evidence/0/pageId", "page_not_selected"))
refuse("pages-selected-only-in-another-question", "A page selected by question 1 but not by question 2 is "
       "not selected for question 2.", edit(two_questions(), ("/questions/1/decisions/2/evidence/0/pageId", W(1))),
       err("/questions/1/decisions/2/evidence/0/pageId", "page_not_selected"))

EVERY_CITATION = [
    err(CRIT + "/0/sourcePageIds/0", "page_not_selected"),
    err(CRIT + "/1/sourcePageIds/0", "page_not_selected"),
    err(CRIT + "/2/sourcePageIds/0", "page_not_selected"),
    err(CRIT + "/3/sourcePageIds/0", "page_not_selected"),
    err(DEC + "/0/evidence/0/pageId", "page_not_selected"),
    err(DEC + "/1/evidence/0/pageId", "page_not_selected"),
    err(DEC + "/2/evidence/0/pageId", "page_not_selected"),
    err(CHECK0 + "/evidence/0/pageId", "page_not_selected"),
    err(DEC + "/3/evidence/0/pageId", "page_not_selected"),
]
refuse("pages-empty-selections-without-assets", "An empty pageSelections is structurally allowed; without "
       "assets every cited page is then page_not_selected, in document order.",
       edit(base(), (SEL, {})), *EVERY_CITATION)
refuse("pages-empty-selections-with-assets", "With assets, an empty pageSelections also misses both roles: "
       "missing_page_role twice (work first), then every citation.",
       edit(base(), (SEL, {})), err(SEL, "missing_page_role"), err(SEL, "missing_page_role"),
       *EVERY_CITATION, assets=ASSETS)
refuse("pages-missing-scheme-role", "Removing the only scheme selection breaks two rules: "
       "missing_page_role at pageSelections and page_not_selected at every sourcePageIds entry.",
       edit(base(), (SEL + "/" + SCHEME, DELETE)), err(SEL, "missing_page_role"), *EVERY_CITATION[:4],
       assets=ASSETS)
refuse("pages-missing-work-role", "Removing the only work selection: missing_page_role, and every "
       "evidence page is not selected.",
       edit(base(), (SEL + "/" + WORK, DELETE)), err(SEL, "missing_page_role"), *EVERY_CITATION[4:],
       assets=ASSETS)
refuse("pages-unknown-asset", "With assets, a pageSelections key that is none of the import's assets is "
       "unknown_asset at the key.", edit(base(), (SEL + "/" + STRANGER, [1])),
       err(SEL + "/" + STRANGER, "unknown_asset"), assets=ASSETS)
accept("pages-unknown-asset-without-assets", "Without assets the same selection cannot be checked: valid, "
       "assetsChecked false.", edit(base(), (SEL + "/" + STRANGER, [1])), BASE_VALID)
refuse("pages-page-out-of-range", "With assets, work page 5 of a 4-page scan is page_out_of_range at the "
       "page number.", edit(base(), (SEL + "/" + WORK, [1, 2, 5])), err(SEL + "/" + WORK + "/2", "page_out_of_range"),
       assets=ASSETS)
accept("pages-page-out-of-range-without-assets", "Without assets page 5 cannot be checked: valid.",
       edit(base(), (SEL + "/" + WORK, [1, 2, 5])), BASE_VALID)
accept("pages-last-page-in-range", "With assets, the last page of each asset (work 4, scheme 2) is in "
       "range.", edit(base(), (SEL + "/" + WORK, [1, 2, 4]), (SEL + "/" + SCHEME, [1, 2])), BASE_VALID_ASSETS,
       assets=ASSETS)
refuse("pages-role-mismatch-evidence", "With assets, evidence on a selected scheme page is "
       "asset_role_mismatch: a mark scheme is never evidence of an answer.",
       edit(base(), (DEC + "/0/evidence/0/pageId", S(1))), err(DEC + "/0/evidence/0/pageId", "asset_role_mismatch"),
       assets=ASSETS)
refuse("pages-role-mismatch-source", "With assets, a sourcePageIds entry on a work page is "
       "asset_role_mismatch.", edit(base(), (CRIT + "/0/sourcePageIds", [W(1)])),
       err(CRIT + "/0/sourcePageIds/0", "asset_role_mismatch"), assets=ASSETS)
accept("pages-role-mismatch-without-assets", "Without assets roles are unknown: the same citations are "
       "valid and assetsChecked is false.",
       edit(base(), (DEC + "/0/evidence/0/pageId", S(1)), (CRIT + "/0/sourcePageIds", [W(1)])), BASE_VALID)
accept("pages-two-work-assets", "With assets, evidence may cite any selected work asset.",
       edit(base(), (SEL + "/" + WORK2, [1]), (DEC + "/3/evidence/0/pageId", WORK2 + ":p1")),
       BASE_VALID_ASSETS, assets=ASSETS_TWO_WORK)

# ---- dependency graph -------------------------------------------------------------------------

refuse("graph-self-dependency", "A criterion listing itself is self_dependency at that entry (not also a "
       "cycle).", edit(base(), (CRIT + "/1/dependsOn", ["q1a-M1", "q1a-A1"])),
       err(CRIT + "/1/dependsOn/1", "self_dependency"))
refuse("graph-unknown-dependency", "A dependsOn entry naming no criterion is unknown_dependency.",
       edit(base(), (CRIT + "/3/dependsOn", ["q1b-M2"])), err(CRIT + "/3/dependsOn/0", "unknown_dependency"))
refuse("graph-cross-question-dependency", "A dependsOn entry naming a criterion of another question is "
       "cross_question_dependency.", edit(two_questions(), ("/questions/1/rubric/criteria/0/dependsOn", ["q1b-A1"])),
       err("/questions/1/rubric/criteria/0/dependsOn/0", "cross_question_dependency"))
refuse("graph-self-and-unknown-in-one-list", "Each dependsOn entry is judged on its own: self, unknown, "
       "then a good one.", edit(base(), (CRIT + "/1/dependsOn", ["q1a-A1", "q9-M1", "q1a-M1"])),
       err(CRIT + "/1/dependsOn/0", "self_dependency"), err(CRIT + "/1/dependsOn/1", "unknown_dependency"))
refuse("graph-cycle-of-two", "M1 and A1 depending on each other: dependency_cycle at both entries.",
       edit(base(), (CRIT + "/0/dependsOn", ["q1a-A1"])),
       err(CRIT + "/0/dependsOn/0", "dependency_cycle"), err(CRIT + "/1/dependsOn/0", "dependency_cycle"))
refuse("graph-cycle-of-three", "A three-criterion cycle is reported at each member's entry on it; a "
       "criterion that only depends on the cycle is not.",
       edit(base(), (CRIT + "/0/dependsOn", ["q1b-M1"]), (CRIT + "/2/dependsOn", ["q1a-A1"])),
       err(CRIT + "/0/dependsOn/0", "dependency_cycle"), err(CRIT + "/1/dependsOn/0", "dependency_cycle"),
       err(CRIT + "/2/dependsOn/0", "dependency_cycle"))
refuse("graph-cycle-with-off-cycle-entry", "Only the entries on the cycle are reported; another entry of "
       "the same list is not.",
       edit(base(), (CRIT + "/0/dependsOn", ["q1a-A1"]), (CRIT + "/1/dependsOn", ["q1b-M1", "q1a-M1"])),
       err(CRIT + "/0/dependsOn/0", "dependency_cycle"), err(CRIT + "/1/dependsOn/1", "dependency_cycle"))
refuse("graph-two-cycles", "Two separate cycles in one question are each reported.",
       edit(base(), (CRIT + "/0/dependsOn", ["q1a-A1"]), (CRIT + "/2/dependsOn", ["q1b-A1"])),
       err(CRIT + "/0/dependsOn/0", "dependency_cycle"), err(CRIT + "/1/dependsOn/0", "dependency_cycle"),
       err(CRIT + "/2/dependsOn/0", "dependency_cycle"), err(CRIT + "/3/dependsOn/0", "dependency_cycle"))
refuse("graph-cycle-four-with-chord", "A four-criterion cycle with an extra chord: every entry between "
       "members of the strongly connected component is on a cycle.",
       edit(base(), (CRIT + "/0/dependsOn", ["q1b-A1"]), (CRIT + "/2/dependsOn", ["q1a-A1"]),
            (CRIT + "/3/dependsOn", ["q1b-M1", "q1a-A1"])),
       err(CRIT + "/0/dependsOn/0", "dependency_cycle"), err(CRIT + "/1/dependsOn/0", "dependency_cycle"),
       err(CRIT + "/2/dependsOn/0", "dependency_cycle"), err(CRIT + "/3/dependsOn/0", "dependency_cycle"),
       err(CRIT + "/3/dependsOn/1", "dependency_cycle"))

# ---- evidence boxes --------------------------------------------------------------------------

BOX0 = DEC + "/0/evidence/0/box"
accept("boxes-full-page", "A box covering the whole page (x 0, y 0, width 1, height 1) is valid.",
       edit(base(), (BOX0, box(0, 0, 1, 1))), BASE_VALID)
d = base()
edit(d, (DEC + "/1/evidence", [
    evidence(W(1), "dy/dx = 3x^2 - 12x + 9", box(0.30000000000000004, 0.2, 0.7, 0.05)),
    evidence(W(1), "(margin working)", box(0.7, 0.8999999999999999, 0.3, 0.1)),
    evidence(W(1), "tick", box(0.5, 0.1, 0.5000000009, 0.1)),
    evidence(W(1), "right edge", box(1, 0.4, 1e-10, 0.2)),
]))
accept("boxes-float-sums-within-tolerance", "Sums that land on 1 in floating point (0.1 + 0.2 style "
       "values) or within 1e-9 of it are valid, as is x = 1 with a width under the tolerance.", d, BASE_VALID)
vector("boxes-negative-zero", "x of -0.0 is not below 0: valid.", BASE_VALID, "accept",
       text=replace_once(compact(base()), '"box":{"x":0.1,"y":0.05,', '"box":{"x":-0.0,"y":0.05,'))
refuse("boxes-width-past-edge", "x 0.5 with width 0.5000001 reaches past the right edge: box_out_of_bounds "
       "at width.", edit(base(), (BOX0, box(0.5, 0.18, 0.5000001, 0.06))), err(BOX0 + "/width", "box_out_of_bounds"))
refuse("boxes-width-past-tolerance", "x + width of 1.000000002 is past the 1e-9 tolerance.",
       edit(base(), (BOX0, box(0.5, 0.18, 0.500000002, 0.06))), err(BOX0 + "/width", "box_out_of_bounds"))
refuse("boxes-height-past-edge", "y + height above 1 is box_out_of_bounds at height.",
       edit(base(), (BOX0, box(0.12, 0.95, 0.46, 0.06))), err(BOX0 + "/height", "box_out_of_bounds"))
refuse("boxes-both-sums-past-edge", "Both sums too large: width then height.",
       edit(base(), (BOX0, box(0.6, 0.6, 0.5, 0.5))), err(BOX0 + "/width", "box_out_of_bounds"),
       err(BOX0 + "/height", "box_out_of_bounds"))
refuse("boxes-check-evidence-past-edge", "A condition check's evidence box is checked the same way.",
       edit(base(), (CHECK0 + "/evidence/0/box/height", 0.75)), err(CHECK0 + "/evidence/0/box/height", "box_out_of_bounds"))
reject("boxes-negative-x", "x below 0 is box_out_of_bounds at x.",
       edit(base(), (BOX0 + "/x", -0.01)), err(BOX0 + "/x", "box_out_of_bounds"))
reject("boxes-negative-y", "y below 0 is box_out_of_bounds at y.",
       edit(base(), (BOX0 + "/y", -0.2)), err(BOX0 + "/y", "box_out_of_bounds"))
reject("boxes-zero-width", "A width of 0 is box_not_positive at width.",
       edit(base(), (BOX0 + "/width", 0)), err(BOX0 + "/width", "box_not_positive"))
reject("boxes-negative-height", "A negative height is box_not_positive at height.",
       edit(base(), (BOX0 + "/height", -0.06)), err(BOX0 + "/height", "box_not_positive"))
reject("boxes-sum-skipped-after-bad-number", "With x below 0 and width 0, each number is reported once "
       "and neither sum is checked; y + height past the edge is still reported.",
       edit(base(), (BOX0, box(-0.5, 0.9, 0, 0.2))), err(BOX0 + "/x", "box_out_of_bounds"),
       err(BOX0 + "/width", "box_not_positive"), err(BOX0 + "/height", "box_out_of_bounds"))

# ---- document order and one defect, one error -------------------------------------------------

d = base()
edit(d, ("/coordinateSystem", "normalized-bottom-left"), ("/source/markedAt", DELETE),
     ("/source/email", "r.okafor@example.org"), ("/coverage/kind", "full"), (CRIT + "/2/code", "M2"),
     (DEC + "/1/evidence/0/box/width", 0), (DEC + "/3/outcome", "partial"), ("/notes", "second marking"))
reject("structure-multi-document-order", "Eight structural defects across the document are all reported, "
       "sorted by where they are in the document.", d,
       err("/coordinateSystem", "const"), err("/source/email", "unknown_field"), err("/source/markedAt", "required"),
       err("/coverage/kind", "enum"), err(CRIT + "/2/code", "pattern"),
       err(DEC + "/1/evidence/0/box/width", "box_not_positive"), err(DEC + "/3/outcome", "enum"),
       err("/notes", "unknown_field"))
d = base()
edit(d, ("/coverage/questionLabels", ["Q1"]), (CRIT + "/0/requirement", ""), (CRIT + "/1/dependsOn", ["q1a-X1"]),
     (CRIT + "/3/partId", "c"), (DEC + "/2/evidence/0/pageId", W(3)))
reject("refs-multi-document-order", "Structure, reference and dependency errors are merged in document "
       "order, not in the order the checks run.", d,
       err("/coverage/questionLabels", "coverage_mismatch"), err(CRIT + "/0/requirement", "min_length"),
       err(CRIT + "/1/dependsOn/0", "unknown_dependency"), err(CRIT + "/3/partId", "unknown_part"),
       err(DEC + "/2/evidence/0/pageId", "page_not_selected"))
d = two_questions()
edit(d, ("/questions/1/label", "1"), ("/coverage/questionLabels", ["1", "1"]),
     ("/questions/1/rubric/criteria/1/dependsOn", ["q2-A1"]),
     ("/questions/1/decisions/0/criterionId", "q2-B1"),
     ("/questions/0/complete", None))
refuse_multi = [
    err("/questions/0/complete", "type"),
    err("/questions/1/label", "duplicate_label"),
    err("/questions/1/rubric/criteria/0", "missing_decision"),
    err("/questions/1/rubric/criteria/1/dependsOn/0", "dependency_cycle"),
    err("/questions/1/rubric/criteria/2/dependsOn/0", "dependency_cycle"),
    err("/questions/1/decisions/0/criterionId", "unknown_criterion"),
]
vector("refs-multi-two-questions", "Errors in two questions (a null flag, a repeated label, a cycle, a "
       "decision renamed away from its criterion) come out in document order.", invalid(*refuse_multi),
       "reject", submission=d)

# ---- scoring ---------------------------------------------------------------------------------

CH = "/questions/0/rubric/criteria"
DE = "/questions/0/decisions"


def diff_q(label, criteria, decisions, parts=None, reported=None, complete=None):
    """A differentiation question used by the scoring vectors."""
    n = len(criteria)
    return question(label, {WORK: [1, 2], SCHEME: [1]}, parts or [part("a", n, "(a)")], criteria, decisions,
                    reported, complete)


def single(q, source=None):
    return submission([q], [q["label"]], len(q["rubric"]["criteria"]), source)


# Withheld method zeroes the chain that depends on it.
q = diff_q("4", [
    criterion("q4-M1", "a", "M1", "Uses the chain rule on (2x + 1)^5: k(2x + 1)^4"),
    criterion("q4-dM1", "a", "dM1", "Multiplies by the derivative of the inner function, 2", deps=["q4-M1"]),
    criterion("q4-A1", "a", "A1", "dy/dx = 10(2x + 1)^4", deps=["q4-dM1"]),
], [
    decision("q4-M1", "withheld", "Expands the bracket instead; no chain rule seen", "32x^5 + 80x^4 + ..."),
    decision("q4-dM1", "awarded", "Factor 2 appears", "x 2"),
    decision("q4-A1", "awarded", "Final answer matches", "10(2x + 1)^4"),
])
accept("scoring-withheld-method-zeroes-chain", "A withheld M1 makes the awarded dM1 depending on it withheld, "
       "and the awarded A1 depending on that dM1 withheld too, each flagged dependency_withheld.",
       single(q), valid("needs_review", sc(0, 0, 3), [qrep(
           "4", "needs_review", sc(0, 0, 3), [("a", sc(0, 0, 3))],
           [crit("q4-M1", "M1", "withheld", "withheld"),
            crit("q4-dM1", "dM1", "awarded", "withheld", ["dependency_withheld"]),
            crit("q4-A1", "A1", "awarded", "withheld", ["dependency_withheld"])],
           [flag("dependency_withheld", CH + "/1/dependsOn", "q4-dM1"),
            flag("dependency_withheld", CH + "/2/dependsOn", "q4-A1")])]))

q = diff_q("5", [
    criterion("q5-M1", "a", "M1", "Uses the product rule on x^2 sin x"),
    criterion("q5-A1", "a", "A1", "dy/dx = 2x sin x + x^2 cos x", deps=["q5-M1"]),
], [
    decision("q5-M1", "uncertain", "Second term illegible", "2x sin x + x^2 c?s x"),
    decision("q5-A1", "awarded", "Answer line correct as far as legible", "2x sin x + x^2 cos x"),
])
accept("scoring-uncertain-method-makes-dependent-uncertain", "An uncertain M1 makes the awarded A1 that "
       "depends on it uncertain (dependency_uncertain); the M1 is flagged uncertain_decision.",
       single(q), valid("needs_review", sc(0, 2, 2), [qrep(
           "5", "needs_review", sc(0, 2, 2), [("a", sc(0, 2, 2))],
           [crit("q5-M1", "M1", "uncertain", "uncertain", ["uncertain_decision"]),
            crit("q5-A1", "A1", "awarded", "uncertain", ["dependency_uncertain"])],
           [flag("uncertain_decision", DE + "/0/outcome", "q5-M1"),
            flag("dependency_uncertain", CH + "/1/dependsOn", "q5-A1")])]))

q = diff_q("6", [
    criterion("q6-M1", "a", "M1", "Uses the quotient rule on (3x - 1)/(x + 2)"),
    criterion("q6-dM1", "a", "dM1", "Correct numerator structure v u' - u v'", deps=["q6-M1"]),
    criterion("q6-A1", "a", "A1", "dy/dx = 7/(x + 2)^2", deps=["q6-dM1"]),
    criterion("q6-B1", "a", "B1", "States the curve is increasing for all x != -2"),
], [
    decision("q6-M1", "uncertain", "Quotient rule or product rule unclear from the working", "(x+2)3 - (3x-1)"),
    decision("q6-dM1", "awarded", "Numerator in the right order", "3(x + 2) - (3x - 1)"),
    decision("q6-A1", "awarded", "Simplified correctly", "7/(x + 2)^2"),
    decision("q6-B1", "awarded", "Conclusion stated", "always increasing"),
])
accept("scoring-uncertain-propagates-chain", "Uncertainty propagates down a chain: uncertain M1, then "
       "awarded dM1 and awarded A1 become uncertain; the independent B1 stays awarded.",
       single(q), valid("needs_review", sc(1, 4, 4), [qrep(
           "6", "needs_review", sc(1, 4, 4), [("a", sc(1, 4, 4))],
           [crit("q6-M1", "M1", "uncertain", "uncertain", ["uncertain_decision"]),
            crit("q6-dM1", "dM1", "awarded", "uncertain", ["dependency_uncertain"]),
            crit("q6-A1", "A1", "awarded", "uncertain", ["dependency_uncertain"]),
            crit("q6-B1", "B1", "awarded", "awarded")],
           [flag("uncertain_decision", DE + "/0/outcome", "q6-M1"),
            flag("dependency_uncertain", CH + "/1/dependsOn", "q6-dM1"),
            flag("dependency_uncertain", CH + "/2/dependsOn", "q6-A1")])]))

q = diff_q("7", [
    criterion("q7-M1", "a", "M1", "Differentiates implicitly: d/dx(y^2) = 2y dy/dx"),
    criterion("q7-A1", "a", "A1", "dy/dx = (3x^2 - 2y)/(2x + 2y)", deps=["q7-M1"]),
    criterion("q7-M1b", "b", "M1", "Substitutes (1, 1) into their dy/dx"),
    criterion("q7-A1b", "b", "A1", "Gradient 1/4", deps=["q7-M1b"]),
], [
    decision("q7-M1", "uncertain", "Chain-rule factor partly hidden by a crossing-out", "2y dy/dx ?"),
    decision("q7-A1", "withheld", "Sign error in the numerator", "(3x^2 + 2y)/(2x + 2y)"),
    decision("q7-M1b", "withheld", "No substitution seen", "blank answer space"),
    decision("q7-A1b", "uncertain", "A value 1/4 appears without working", "1/4"),
], parts=[part("a", 2, "(a)"), part("b", 2, "(b)")])
accept("scoring-withheld-and-uncertain-dependents", "A withheld mark depending on an uncertain one stays "
       "withheld with no flag; an uncertain mark depending on a withheld one becomes withheld with "
       "dependency_withheld then uncertain_decision.",
       single(q), valid("needs_review", sc(0, 1, 4), [qrep(
           "7", "needs_review", sc(0, 1, 4), [("a", sc(0, 1, 2)), ("b", sc(0, 0, 2))],
           [crit("q7-M1", "M1", "uncertain", "uncertain", ["uncertain_decision"]),
            crit("q7-A1", "A1", "withheld", "withheld"),
            crit("q7-M1b", "M1", "withheld", "withheld"),
            crit("q7-A1b", "A1", "uncertain", "withheld", ["dependency_withheld", "uncertain_decision"])],
           [flag("uncertain_decision", DE + "/0/outcome", "q7-M1"),
            flag("dependency_withheld", CH + "/3/dependsOn", "q7-A1b"),
            flag("uncertain_decision", DE + "/3/outcome", "q7-A1b")])]))

q = diff_q("8", [
    criterion("q8-M1", "a", "M1", "Attempts d/dx of e^(2x) as k e^(2x)"),
    criterion("q8-B1", "a", "B1", "d/dx(ln x) = 1/x"),
    criterion("q8-A1", "a", "A1", "dy/dx = 2e^(2x) + 1/x", deps=["q8-M1", "q8-B1"]),
    criterion("q8-A1b", "a", "A1", "Gradient at x = 1 is 2e^2 + 1", deps=["q8-M1"]),
], [
    decision("q8-M1", "uncertain", "Coefficient unclear", "?e^(2x)"),
    decision("q8-B1", "withheld", "Writes ln x -> x ln x", "x ln x"),
    decision("q8-A1", "awarded", "Final derivative stated", "2e^(2x) + 1/x"),
    decision("q8-A1b", "uncertain", "Value not simplified", "2e^2 + 1"),
])
accept("scoring-withheld-dependency-wins-over-uncertain", "With one uncertain and one withheld dependency "
       "the awarded A1 becomes withheld; an uncertain mark on an uncertain dependency only keeps its "
       "uncertain_decision flag.",
       single(q), valid("needs_review", sc(0, 2, 4), [qrep(
           "8", "needs_review", sc(0, 2, 4), [("a", sc(0, 2, 4))],
           [crit("q8-M1", "M1", "uncertain", "uncertain", ["uncertain_decision"]),
            crit("q8-B1", "B1", "withheld", "withheld"),
            crit("q8-A1", "A1", "awarded", "withheld", ["dependency_withheld"]),
            crit("q8-A1b", "A1", "uncertain", "uncertain", ["uncertain_decision"])],
           [flag("uncertain_decision", DE + "/0/outcome", "q8-M1"),
            flag("dependency_withheld", CH + "/2/dependsOn", "q8-A1"),
            flag("uncertain_decision", DE + "/3/outcome", "q8-A1b")])]))

C2 = ["Uses the chain rule", "Simplifies to a single fraction"]


def cond_q(label, mode, outcomes_and_checks, requirement):
    criteria, decisions = [], []
    for i, (outcome, results) in enumerate(outcomes_and_checks):
        cid = f"q{label}-M{i + 1}"
        criteria.append(criterion(cid, "a", "M1", f"{requirement} ({i + 1})", conditions=C2[:len(results)],
                                  mode=mode))
        decisions.append(decision(cid, outcome, "See working", "d/dx [ln(x^2 + 1)] = 2x/(x^2 + 1)",
                                  checks=[check(j, r) for j, r in enumerate(results)]))
    return diff_q(label, criteria, decisions)


q = cond_q("9", "all", [("awarded", ["met", "met"]), ("awarded", ["met", "not_met"]),
                        ("awarded", ["met", "uncertain"]), ("awarded", ["uncertain", "not_met"])],
           "Differentiates ln(x^2 + 1)")
accept("scoring-conditions-all-awarded", "conditionMode all with awarded marks: met/met stays awarded; any "
       "not_met (even beside uncertain) is condition_conflict; uncertain without not_met is "
       "condition_uncertain. Both make the effective outcome uncertain.",
       single(q), valid("needs_review", sc(1, 4, 4), [qrep(
           "9", "needs_review", sc(1, 4, 4), [("a", sc(1, 4, 4))],
           [crit("q9-M1", "M1", "awarded", "awarded"),
            crit("q9-M2", "M1", "awarded", "uncertain", ["condition_conflict"]),
            crit("q9-M3", "M1", "awarded", "uncertain", ["condition_uncertain"]),
            crit("q9-M4", "M1", "awarded", "uncertain", ["condition_conflict"])],
           [flag("condition_conflict", DE + "/1/conditionChecks", "q9-M2"),
            flag("condition_uncertain", DE + "/2/conditionChecks", "q9-M3"),
            flag("condition_conflict", DE + "/3/conditionChecks", "q9-M4")])]))

q = cond_q("10", "any", [("awarded", ["not_met", "met"]), ("awarded", ["not_met", "uncertain"]),
                         ("awarded", ["not_met", "not_met"]), ("awarded", ["uncertain", "met"])],
           "Differentiates ln(x^2 + 1)")
accept("scoring-conditions-any-awarded", "conditionMode any with awarded marks: one met is enough (even "
       "beside uncertain); not_met with uncertain is condition_uncertain; all not_met is "
       "condition_conflict.",
       single(q), valid("needs_review", sc(2, 4, 4), [qrep(
           "10", "needs_review", sc(2, 4, 4), [("a", sc(2, 4, 4))],
           [crit("q10-M1", "M1", "awarded", "awarded"),
            crit("q10-M2", "M1", "awarded", "uncertain", ["condition_uncertain"]),
            crit("q10-M3", "M1", "awarded", "uncertain", ["condition_conflict"]),
            crit("q10-M4", "M1", "awarded", "awarded")],
           [flag("condition_uncertain", DE + "/1/conditionChecks", "q10-M2"),
            flag("condition_conflict", DE + "/2/conditionChecks", "q10-M3")])]))

criteria, decisions = [], []
for i, (mode, outcome, results) in enumerate([
    ("all", "withheld", ["met", "met"]), ("all", "withheld", ["met", "not_met"]),
    ("any", "withheld", ["not_met", "met"]), ("any", "withheld", ["uncertain", "not_met"]),
    ("all", "withheld", ["met", "uncertain"]),
]):
    cid = f"q11-M{i + 1}"
    criteria.append(criterion(cid, "a", "M1", f"Integrates by parts: u = x, dv/dx = e^x ({i + 1})",
                              conditions=C2[:len(results)], mode=mode))
    decisions.append(decision(cid, outcome, "See working", "x e^x - e^x + c",
                              checks=[check(j, r) for j, r in enumerate(results)]))
q = diff_q("11", criteria, decisions)
accept("scoring-conditions-withheld", "Withheld marks: a met verdict (all met, or any with one met) is "
       "condition_conflict and uncertain; a not_met or uncertain verdict leaves them withheld with no flag.",
       single(q), valid("needs_review", sc(0, 2, 5), [qrep(
           "11", "needs_review", sc(0, 2, 5), [("a", sc(0, 2, 5))],
           [crit("q11-M1", "M1", "withheld", "uncertain", ["condition_conflict"]),
            crit("q11-M2", "M1", "withheld", "withheld"),
            crit("q11-M3", "M1", "withheld", "uncertain", ["condition_conflict"]),
            crit("q11-M4", "M1", "withheld", "withheld"),
            crit("q11-M5", "M1", "withheld", "withheld")],
           [flag("condition_conflict", DE + "/0/conditionChecks", "q11-M1"),
            flag("condition_conflict", DE + "/2/conditionChecks", "q11-M3")])]))

criteria, decisions = [], []
for i, (mode, results) in enumerate([("all", ["met"]), ("all", ["not_met"]), ("any", ["uncertain", "not_met"])]):
    cid = f"q12-M{i + 1}"
    criteria.append(criterion(cid, "a", "M1", f"Uses integration by substitution u = 1 + x^2 ({i + 1})",
                              conditions=C2[:len(results)], mode=mode))
    decisions.append(decision(cid, "uncertain", "Working partly obscured", "du = 2x dx",
                              checks=[check(j, r) for j, r in enumerate(results)]))
q = diff_q("12", criteria, decisions)
accept("scoring-conditions-uncertain", "A submitted uncertain mark stays uncertain whatever its conditions "
       "say, flagged only uncertain_decision.",
       single(q), valid("needs_review", sc(0, 3, 3), [qrep(
           "12", "needs_review", sc(0, 3, 3), [("a", sc(0, 3, 3))],
           [crit("q12-M1", "M1", "uncertain", "uncertain", ["uncertain_decision"]),
            crit("q12-M2", "M1", "uncertain", "uncertain", ["uncertain_decision"]),
            crit("q12-M3", "M1", "uncertain", "uncertain", ["uncertain_decision"])],
           [flag("uncertain_decision", DE + "/0/outcome", "q12-M1"),
            flag("uncertain_decision", DE + "/1/outcome", "q12-M2"),
            flag("uncertain_decision", DE + "/2/outcome", "q12-M3")])]))

q = diff_q("13", [
    criterion("q13-M1", "a", "M1", "Sets up the integral of pi y^2 between the limits",
              conditions=["Uses y^2, not y"], mode="all"),
    criterion("q13-A1", "a", "A1", "Volume = 8 pi / 3", deps=["q13-M1"]),
], [
    decision("q13-M1", "awarded", "Integral set up", "pi * integral of x dx", checks=[check(0, "not_met", "Uses y")]),
    decision("q13-A1", "awarded", "Answer matches the scheme", "8 pi / 3"),
])
accept("scoring-condition-conflict-then-dependency", "An awarded M1 whose condition is not met becomes "
       "uncertain (condition_conflict), and the awarded A1 depending on it becomes uncertain.",
       single(q), valid("needs_review", sc(0, 2, 2), [qrep(
           "13", "needs_review", sc(0, 2, 2), [("a", sc(0, 2, 2))],
           [crit("q13-M1", "M1", "awarded", "uncertain", ["condition_conflict"]),
            crit("q13-A1", "A1", "awarded", "uncertain", ["dependency_uncertain"])],
           [flag("condition_conflict", DE + "/0/conditionChecks", "q13-M1"),
            flag("dependency_uncertain", CH + "/1/dependsOn", "q13-A1")])]))

q = diff_q("14", [
    criterion("q14-M1", "a", "M1", "Writes 2 cos^2 x - 1 for cos 2x", conditions=["Correct double-angle identity"],
              mode="all"),
    criterion("q14-dM1", "a", "dM1", "Forms and solves a quadratic in cos x", deps=["q14-M1"]),
    criterion("q14-A1", "a", "A1", "x = 60 and x = 300 degrees", deps=["q14-dM1"]),
], [
    decision("q14-M1", "withheld", "Identity misread", "2cos^2 x - 1", checks=[check(0, "met")]),
    decision("q14-dM1", "awarded", "Quadratic solved", "(2c - 1)(c + 1) = 0"),
    decision("q14-A1", "withheld", "Second angle missing", "x = 60"),
])
accept("scoring-withheld-with-conditions-met", "A withheld M1 whose condition is met is a conflict: "
       "uncertain. The awarded dM1 on it becomes uncertain; the withheld A1 stays withheld.",
       single(q), valid("needs_review", sc(0, 2, 3), [qrep(
           "14", "needs_review", sc(0, 2, 3), [("a", sc(0, 2, 3))],
           [crit("q14-M1", "M1", "withheld", "uncertain", ["condition_conflict"]),
            crit("q14-dM1", "dM1", "awarded", "uncertain", ["dependency_uncertain"]),
            crit("q14-A1", "A1", "withheld", "withheld")],
           [flag("condition_conflict", DE + "/0/conditionChecks", "q14-M1"),
            flag("dependency_uncertain", CH + "/1/dependsOn", "q14-dM1")])]))

q = diff_q("15", [
    criterion("q15-M1", "a", "M1", "Uses the binomial expansion of (1 + 4x)^(1/2)"),
    criterion("q15-A1", "a", "A1", "1 + 2x - 2x^2", deps=["q15-M1"], conditions=["Simplified coefficients"],
              mode="all"),
    criterion("q15-B1", "a", "B1", "Valid for |x| < 1/4", deps=["q15-M1"], conditions=["Strict inequality"],
              mode="any"),
], [
    decision("q15-M1", "withheld", "Uses (1 + x)^n with n = 2", "(1 + 4x)^2"),
    decision("q15-A1", "awarded", "Terms correct", "1 + 2x - 2x^2", checks=[check(0, "not_met")]),
    decision("q15-B1", "withheld", "No validity stated", "blank", checks=[check(0, "met")]),
])
accept("scoring-condition-then-dependency-withheld", "Conditions first, then dependencies: both the "
       "awarded A1 with a condition not met and the withheld B1 with its condition met become uncertain, "
       "then withheld by the withheld M1 (condition_conflict, dependency_withheld).",
       single(q), valid("needs_review", sc(0, 0, 3), [qrep(
           "15", "needs_review", sc(0, 0, 3), [("a", sc(0, 0, 3))],
           [crit("q15-M1", "M1", "withheld", "withheld"),
            crit("q15-A1", "A1", "awarded", "withheld", ["condition_conflict", "dependency_withheld"]),
            crit("q15-B1", "B1", "withheld", "withheld", ["condition_conflict", "dependency_withheld"])],
           [flag("condition_conflict", DE + "/1/conditionChecks", "q15-A1"),
            flag("dependency_withheld", CH + "/1/dependsOn", "q15-A1"),
            flag("condition_conflict", DE + "/2/conditionChecks", "q15-B1"),
            flag("dependency_withheld", CH + "/2/dependsOn", "q15-B1")])]))

q = diff_q("16", [
    criterion("q16-A1", "a", "A1", "x = ln 3 / 2", deps=["q16-M1"]),
    criterion("q16-M1", "a", "M1", "Takes natural logarithms of e^(2x) = 3"),
    criterion("q16-B1", "a", "B1", "States e^(2x) > 0 so no further solutions", conditions=["Reason given"],
              mode="all"),
], [
    decision("q16-B1", "awarded", "Comment present", "e^2x is always positive", checks=[check(0, "uncertain")]),
    decision("q16-M1", "uncertain", "ln applied to one side only?", "2x = ln 3"),
    decision("q16-A1", "awarded", "Correct value", "x = 0.549"),
])
accept("scoring-rubric-order-and-decision-paths", "A criterion listed before its dependency is still scored "
       "after it; flags follow rubric order and point at the decision's own index.",
       single(q), valid("needs_review", sc(0, 3, 3), [qrep(
           "16", "needs_review", sc(0, 3, 3), [("a", sc(0, 3, 3))],
           [crit("q16-A1", "A1", "awarded", "uncertain", ["dependency_uncertain"]),
            crit("q16-M1", "M1", "uncertain", "uncertain", ["uncertain_decision"]),
            crit("q16-B1", "B1", "awarded", "uncertain", ["condition_uncertain"])],
           [flag("dependency_uncertain", CH + "/0/dependsOn", "q16-A1"),
            flag("uncertain_decision", DE + "/1/outcome", "q16-M1"),
            flag("condition_uncertain", DE + "/0/conditionChecks", "q16-B1")])]))

# reportedScore and complete.
Q1_WITHHELD_A = qrep(
    "1", "completed", sc(3, 3, 4), [("a", sc(1, 1, 2)), ("b", sc(2, 2, 2))],
    [crit("q1a-M1", "M1", "awarded", "awarded"), crit("q1a-A1", "A1", "withheld", "withheld"),
     crit("q1b-M1", "M1", "awarded", "awarded"), crit("q1b-A1", "A1", "awarded", "awarded")])
accept("scoring-withheld-mark-completed", "A withheld mark is not a review flag: with reportedScore 3 "
       "matching and complete true, the question is completed at 3 of 4.",
       edit(base(), (DEC + "/1/outcome", "withheld"), (Q0 + "/reportedScore/awarded", 3)),
       valid("completed", sc(3, 3, 4), [Q1_WITHHELD_A]))
r = copy.deepcopy(Q1_WITHHELD_A)
r["status"] = "needs_review"
r["reviewFlags"] = [flag("reported_score_mismatch", Q0 + "/reportedScore/awarded")]
accept("scoring-reported-score-mismatch", "reportedScore 4 when 3 is computed is flagged "
       "reported_score_mismatch and never changes the score.",
       edit(base(), (DEC + "/1/outcome", "withheld"), (Q0 + "/complete", DELETE)),
       valid("needs_review", sc(3, 3, 4), [r]))
r = copy.deepcopy(Q1_WITHHELD_A)
r["status"] = "needs_review"
r["reviewFlags"] = [flag("reported_score_mismatch", Q0 + "/reportedScore/awarded"),
                    flag("completion_claim_overridden", Q0 + "/complete")]
accept("scoring-mismatch-and-completion-claim", "A mismatched reportedScore is itself a flag, so "
       "complete: true is then overridden too: reported_score_mismatch, then completion_claim_overridden.",
       edit(base(), (DEC + "/1/outcome", "withheld")), valid("needs_review", sc(3, 3, 4), [r]))
r = copy.deepcopy(Q1_REPORT)
r["status"] = "needs_review"
r["score"] = sc(3, 4, 4)
r["parts"][0]["score"] = sc(1, 2, 2)
r["criteria"][1] = crit("q1a-A1", "A1", "uncertain", "uncertain", ["uncertain_decision"])
r["reviewFlags"] = [flag("uncertain_decision", DE + "/1/outcome", "q1a-A1"),
                    flag("completion_claim_overridden", Q0 + "/complete")]
accept("scoring-completion-claim-overridden", "complete: true on a question with an uncertain mark is "
       "overridden (reportedScore 3 matches, so no mismatch): status needs_review.",
       edit(base(), (DEC + "/1/outcome", "uncertain"), (Q0 + "/reportedScore/awarded", 3)),
       valid("needs_review", sc(3, 4, 4), [r]))
r = copy.deepcopy(r)
r["reviewFlags"] = r["reviewFlags"][:1]
accept("scoring-complete-false-with-flags", "complete: false on a question needing review adds no flag.",
       edit(base(), (DEC + "/1/outcome", "uncertain"), (Q0 + "/reportedScore/awarded", 3), (Q0 + "/complete", False)),
       valid("needs_review", sc(3, 4, 4), [r]))
r = copy.deepcopy(Q1_REPORT)
r["status"] = "needs_review"
r["reviewFlags"] = [flag("reported_score_mismatch", Q0 + "/reportedScore/awarded")]
accept("scoring-reported-score-lower-than-computed", "A reportedScore below the computed score is a "
       "mismatch too; the computed 4 stands.", edit(base(), (Q0 + "/reportedScore/awarded", 2), (Q0 + "/complete", False)),
       valid("needs_review", sc(4, 4, 4), [r]))

d = two_questions()
edit(d, ("/questions/1/decisions/0/outcome", "uncertain"))
q2r = qrep("2", "needs_review", sc(0, 3, 3), [("a", sc(0, 3, 3))],
           [crit("q2-M1", "M1", "uncertain", "uncertain", ["uncertain_decision"]),
            crit("q2-dM1", "dM1", "awarded", "uncertain", ["dependency_uncertain"]),
            crit("q2-A1", "A1", "awarded", "uncertain", ["dependency_uncertain"])],
           [flag("uncertain_decision", "/questions/1/decisions/0/outcome", "q2-M1"),
            flag("dependency_uncertain", "/questions/1/rubric/criteria/1/dependsOn", "q2-dM1"),
            flag("dependency_uncertain", "/questions/1/rubric/criteria/2/dependsOn", "q2-A1")])
accept("scoring-two-questions-one-needs-review", "One completed question and one needing review: the "
       "submission needs review and its score sums both questions.", d,
       valid("needs_review", sc(4, 7, 7), [Q1_REPORT, q2r]))

# ---- realistic papers ------------------------------------------------------------------------


def paper(source):
    qs = [q1(), q2()]
    qs[0]["pageSelections"] = {WORK: [1, 2], SCHEME: [1, 2]}
    qs[1]["pageSelections"] = {WORK: [3, 4], SCHEME: [2, 3]}
    q3 = question(
        "3", {WORK: [5, 6], SCHEME: [4]}, [part("a", 4)],
        [
            criterion("q3-B1", "a", "B1", "Basis: n = 1 gives 1 x 2 = 2 and 1 x 2 x 3 / 3 = 2", source=[S(4)]),
            criterion("q3-M1", "a", "M1", "Assumes the result for n = k and adds (k + 1)(k + 2)", source=[S(4)]),
            criterion("q3-A1", "a", "A1", "Reaches (k + 1)(k + 2)(k + 3)/3 with a factorisation shown",
                      deps=["q3-M1"], source=[S(4)]),
            criterion("q3-A1c", "a", "A1", "Complete conclusion: true for n = 1, and true for n = k implies "
                      "true for n = k + 1, so true for all positive integers n",
                      deps=["q3-B1", "q3-M1", "q3-A1"], conditions=["Basis shown", "Inductive step shown"],
                      mode="all", source=[S(4)]),
        ],
        [
            decision("q3-B1", "awarded", "Both sides evaluated at n = 1", "LHS = 2, RHS = 2", W(5),
                     box(0.1, 0.1, 0.5, 0.05)),
            decision("q3-M1", "awarded", "Adds the (k + 1)th term to the assumed sum",
                     "k(k+1)(k+2)/3 + (k+1)(k+2)", W(5), box(0.1, 0.2, 0.7, 0.06)),
            decision("q3-A1", "withheld", "Expands instead of factorising and never reaches the target form",
                     "(k^3 + 6k^2 + 11k + 6)/3", W(5), box(0.1, 0.3, 0.6, 0.06)),
            decision("q3-A1c", "withheld", "Conclusion written but the inductive step is incomplete",
                     "so true for all n", W(6), box(0.1, 0.05, 0.5, 0.05),
                     checks=[check(0, "met", "n = 1 checked", [evidence(W(5), "LHS = 2, RHS = 2",
                                                                        box(0.1, 0.1, 0.5, 0.05))]),
                             check(1, "not_met", "Target form never reached")]),
        ],
        reported=2, complete=True,
    )
    q4 = question(
        "4", {WORK: [7], SCHEME: [5]}, [part("a", 2, "(a)"), part("b", 2, "(b)")],
        [
            criterion("q4a-B1", "a", "B1", "First term 32", source=[S(5)]),
            criterion("q4a-M1", "a", "M1", "Binomial coefficients 5C1 and 5C2 with powers of (-3x)", source=[S(5)]),
            criterion("q4b-A1", "b", "A1", "-240x", deps=["q4a-M1"], source=[S(5)]),
            criterion("q4b-A1ft", "b", "A1ft", "720x^2 (follow through their coefficient of x)",
                      deps=["q4a-M1"], source=[S(5)]),
        ],
        [
            decision("q4a-B1", "awarded", "Correct", "2^5 = 32", W(7), box(0.1, 0.1, 0.2, 0.05)),
            decision("q4a-M1", "awarded", "Structure correct", "5C1 2^4 (-3x) + 5C2 2^3 (-3x)^2", W(7),
                     box(0.1, 0.17, 0.8, 0.06)),
            decision("q4b-A1", "awarded", "Correct", "-240x", W(7), box(0.1, 0.25, 0.2, 0.05)),
            decision("q4b-A1ft", "withheld", "Sign of the x^2 term wrong", "-720x^2", W(7),
                     box(0.35, 0.25, 0.25, 0.05)),
        ],
        reported=3, complete=True,
    )
    qs += [q3, q4]
    qs[0]["reportedScore"] = {"awarded": 4}
    return submission(qs, ["1", "2", "3", "4"], 15, source)


PAPER_Q3 = qrep("3", "completed", sc(2, 2, 4), [("a", sc(2, 2, 4))],
                [crit("q3-B1", "B1", "awarded", "awarded"), crit("q3-M1", "M1", "awarded", "awarded"),
                 crit("q3-A1", "A1", "withheld", "withheld"), crit("q3-A1c", "A1", "withheld", "withheld")])
PAPER_Q4 = qrep("4", "completed", sc(3, 3, 4), [("a", sc(2, 2, 2)), ("b", sc(1, 1, 2))],
                [crit("q4a-B1", "B1", "awarded", "awarded"), crit("q4a-M1", "M1", "awarded", "awarded"),
                 crit("q4b-A1", "A1", "awarded", "awarded"), crit("q4b-A1ft", "A1ft", "withheld", "withheld")])
accept("valid-a-level-paper-completed", "A four-question A-level paper (differentiation, integration, proof "
       "by induction, binomial expansion) marked by a teacher, checked with assets: completed, 12 of 15; "
       "withheld marks and a withheld dependent of a withheld mark raise no flag.",
       paper(None), valid("completed", sc(12, 12, 15), [Q1_REPORT, Q2_REPORT, PAPER_Q3, PAPER_Q4], True),
       assets=PAPER_ASSETS)

d = paper(AI)
edit(d, ("/questions/0/decisions/2/conditionChecks/0/result", "uncertain"),   # q1b-M1 condition_uncertain
     ("/questions/1/decisions/1/outcome", "uncertain"),                       # q2-dM1 uncertain
     ("/questions/2/decisions/2/outcome", "awarded"),                         # q3-A1 awarded now
     ("/questions/2/reportedScore/awarded", 3),
     ("/questions/3/decisions/1/outcome", "withheld"))                        # q4a-M1 withheld
accept("valid-a-level-paper-needs-review", "The same paper marked by an AI with uncertain points: condition "
       "and dependency flags, mismatched reportedScores and overridden completion claims; 7 to 11 of 15.",
       d, valid("needs_review", sc(7, 11, 15), [
           qrep("1", "needs_review", sc(2, 4, 4), [("a", sc(2, 2, 2)), ("b", sc(0, 2, 2))],
                [crit("q1a-M1", "M1", "awarded", "awarded"), crit("q1a-A1", "A1", "awarded", "awarded"),
                 crit("q1b-M1", "M1", "awarded", "uncertain", ["condition_uncertain"]),
                 crit("q1b-A1", "A1", "awarded", "uncertain", ["dependency_uncertain"])],
                [flag("condition_uncertain", "/questions/0/decisions/2/conditionChecks", "q1b-M1"),
                 flag("dependency_uncertain", "/questions/0/rubric/criteria/3/dependsOn", "q1b-A1"),
                 flag("reported_score_mismatch", "/questions/0/reportedScore/awarded"),
                 flag("completion_claim_overridden", "/questions/0/complete")]),
           qrep("2", "needs_review", sc(1, 3, 3), [("a", sc(1, 3, 3))],
                [crit("q2-M1", "M1", "awarded", "awarded"),
                 crit("q2-dM1", "dM1", "uncertain", "uncertain", ["uncertain_decision"]),
                 crit("q2-A1", "A1", "awarded", "uncertain", ["dependency_uncertain"])],
                [flag("uncertain_decision", "/questions/1/decisions/1/outcome", "q2-dM1"),
                 flag("dependency_uncertain", "/questions/1/rubric/criteria/2/dependsOn", "q2-A1")]),
           qrep("3", "completed", sc(3, 3, 4), [("a", sc(3, 3, 4))],
                [crit("q3-B1", "B1", "awarded", "awarded"), crit("q3-M1", "M1", "awarded", "awarded"),
                 crit("q3-A1", "A1", "awarded", "awarded"), crit("q3-A1c", "A1", "withheld", "withheld")]),
           qrep("4", "needs_review", sc(1, 1, 4), [("a", sc(1, 1, 2)), ("b", sc(0, 0, 2))],
                [crit("q4a-B1", "B1", "awarded", "awarded"), crit("q4a-M1", "M1", "withheld", "withheld"),
                 crit("q4b-A1", "A1", "awarded", "withheld", ["dependency_withheld"]),
                 crit("q4b-A1ft", "A1ft", "withheld", "withheld")],
                [flag("dependency_withheld", "/questions/3/rubric/criteria/2/dependsOn", "q4b-A1"),
                 flag("reported_score_mismatch", "/questions/3/reportedScore/awarded"),
                 flag("completion_claim_overridden", "/questions/3/complete")]),
       ], True), assets=PAPER_ASSETS)

# ---- limits ----------------------------------------------------------------------------------


def small_q(i):
    """Question i of a long paper: two marks, M1 and a dependent A1, both awarded."""
    label = str(i)
    return question(
        label, {WORK: [i], SCHEME: [1 + (i - 1) // 8]}, [part("a", 2)],
        [
            criterion(f"q{i}-M1", "a", "M1", f"Differentiates x^{i + 1} to {i + 1}x^{i}",
                      source=[S(1 + (i - 1) // 8)]),
            criterion(f"q{i}-A1", "a", "A1", f"Gradient at x = 1 is {i + 1}", deps=[f"q{i}-M1"],
                      source=[S(1 + (i - 1) // 8)]),
        ],
        [
            decision(f"q{i}-M1", "awarded", "Power rule applied", f"{i + 1}x^{i}", W(i), box(0.1, 0.2, 0.3, 0.05)),
            decision(f"q{i}-A1", "awarded", "Correct value", f"= {i + 1}", W(i), box(0.1, 0.3, 0.2, 0.05)),
        ],
    )


def small_report(i):
    return qrep(str(i), "completed", sc(2, 2, 2), [("a", sc(2, 2, 2))],
                [crit(f"q{i}-M1", "M1", "awarded", "awarded"), crit(f"q{i}-A1", "A1", "awarded", "awarded")])


accept("limits-24-questions", "24 questions, the most a submission may hold, are valid.",
       submission([small_q(i) for i in range(1, 25)], [str(i) for i in range(1, 25)], 48),
       valid("completed", sc(48, 48, 48), [small_report(i) for i in range(1, 25)]))
reject("limits-25-questions", "25 questions is max_items at /questions; coverage agrees, so nothing else "
       "is reported.", submission([small_q(i) for i in range(1, 26)], [str(i) for i in range(1, 26)], 50),
       err("/questions", "max_items"))
d = submission([small_q(i) for i in range(1, 26)], [str(i) for i in range(1, 26)], 50)
edit(d, ("/questions/24/rubric/criteria/0/notes", "late addition"))
reject("limits-25-questions-defect-in-last", "Past the limit the items are still checked: a defect in the "
       "25th question is reported after max_items.", d,
       err("/questions", "max_items"), err("/questions/24/rubric/criteria/0/notes", "unknown_field"))


def long_q(n):
    """One question with n one-mark criteria in five parts: odd M1, even A1 depending on the M1 before."""
    per_part = [n // 5] * 5
    per_part[4] += n - sum(per_part)
    parts, criteria, decisions = [], [], []
    k = 0
    for p, count in zip("abcde", per_part):
        parts.append(part(p, count, f"({p})"))
        for _ in range(count):
            k += 1
            cid = f"q1-{k:03d}"
            if k % 2 == 1:
                criteria.append(criterion(cid, p, "M1", f"Term {k}: differentiates x^{k} correctly"))
            else:
                criteria.append(criterion(cid, p, "A1", f"Term {k}: coefficient {k} correct",
                                          deps=[f"q1-{k - 1:03d}"]))
            decisions.append(decision(cid, "awarded", "Correct", f"{k}x^{k - 1}", W(1 + (k - 1) // 50),
                                      box(0.1, 0.01 + 0.019 * ((k - 1) % 50), 0.4, 0.015)))
    return question("1", {WORK: [1, 2, 3], SCHEME: [1]}, parts, criteria, decisions), per_part


q, per_part = long_q(100)
assert per_part == [20, 20, 20, 20, 20]
accept("limits-100-criteria", "A question with 100 criteria, the most allowed, is valid.",
       submission([q], ["1"], 100),
       valid("completed", sc(100, 100, 100), [qrep(
           "1", "completed", sc(100, 100, 100), [(p, sc(20, 20, 20)) for p in "abcde"],
           [crit(f"q1-{k:03d}", "M1" if k % 2 else "A1", "awarded", "awarded") for k in range(1, 101)])]))
q, per_part = long_q(101)
assert per_part == [20, 20, 20, 20, 21]
reject("limits-101-criteria", "101 criteria is max_items at criteria; part e declares 21 marks and "
       "coverage 101, so they agree and nothing else is reported.", submission([q], ["1"], 101),
       err(CRIT, "max_items"))
q, _ = long_q(101)
del q["decisions"][100]
reject("limits-101-criteria-missing-last-decision", "Past the limit the criteria are still checked: the "
       "101st criterion's missing decision is reported too.", submission([q], ["1"], 101),
       err(CRIT, "max_items"), err(CRIT + "/100", "missing_decision"))


def with_unknown_fields(n):
    d = base()
    for i in range(n):
        d[f"x{i:04d}"] = i
    return d


reject("limits-1000-errors-not-truncated", "Exactly 1,000 errors are all returned, truncated false.",
       with_unknown_fields(1000), *[err(f"/x{i:04d}", "unknown_field") for i in range(1000)])
vector("limits-1001-errors-truncated", "1,001 errors: the first 1,000 in document order are returned with "
       "truncated true.", invalid(*[err(f"/x{i:04d}", "unknown_field") for i in range(1000)], truncated=True),
       "reject", submission=with_unknown_fields(1001))


# ---- further edges ---------------------------------------------------------------------------

vector("parse-duplicate-selection-key", "The same asset listed twice in one pageSelections is a duplicate "
       "key: invalid_json at that key's path.", invalid(err(SEL + "/" + WORK, "invalid_json")), "skip",
       text=replace_once(compact(base()), f'"{WORK}":[1,2],', f'"{WORK}":[1,2],"{WORK}":[3],'))
vector("parse-duplicate-key-escaped", "Keys are compared after unescaping: name and n\\u0061me are the "
       "same key.", invalid(err("/source/name", "invalid_json")), "skip",
       text=replace_once(compact(base()), '"name":"R. Okafor (Head of Mathematics)"',
                         '"name":"R. Okafor (Head of Mathematics)","n\\u0061me":"J. Patel"'))
vector("parse-control-character-in-string", "A raw tab inside a string is not JSON.",
       invalid(err("", "invalid_json")), "skip", text='"R. Okafor\t(Head of Mathematics)"')
vector("valid-escaped-key", "A key written with a \\u escape is the field it spells: \\u006cabel is "
       "label.", BASE_VALID, "accept", text=replace_once(compact(base()), '"label":"1"', '"\\u006cabel":"1"'))
reject("structure-unknown-field-empty-name", "An unknown field with an empty name is reported at the "
       "pointer \"/\".", edit(base(), ("/", "")), err("/", "unknown_field"))
reject("structure-min-length-model", "An AI source with an empty model has one min_length error, not "
       "model_required.", edit(base(), ("/source", copy.deepcopy(AI)), ("/source/model", "")),
       err("/source/model", "min_length"))
refuse("refs-unknown-criterion-checks-not-compared", "A decision naming no criterion is unknown_criterion; "
       "its condition checks are not compared with anything.",
       edit(base(), (DEC + "/-", decision("q1c-M1", "awarded", "Part (c) answered", "x = 2",
                                          W(2), box(0.1, 0.6, 0.4, 0.05), checks=[check(3, "met")]))),
       err(DEC + "/4/criterionId", "unknown_criterion"))
refuse("graph-cross-question-forward", "A criterion of question 1 depending on one of question 2, later in "
       "the document, is cross_question_dependency.",
       edit(two_questions(), (CRIT + "/3/dependsOn", ["q1b-M1", "q2-A1"])),
       err(CRIT + "/3/dependsOn/1", "cross_question_dependency"))
refuse("pages-role-mismatch-check-evidence", "With assets, condition-check evidence on a scheme page is "
       "asset_role_mismatch.", edit(base(), (CHECK0 + "/evidence/0/pageId", S(1))),
       err(CHECK0 + "/evidence/0/pageId", "asset_role_mismatch"), assets=ASSETS)
d = with_unknown_fields(1000)
edit(d, ("/coverage/totalMarks", 5))
vector("limits-1001-errors-sorted-before-truncation", "Errors are sorted before the cap: a coverage "
       "mismatch found late but placed early is kept, and the last unknown field is dropped.",
       invalid(err("/coverage/totalMarks", "coverage_mismatch"),
               *[err(f"/x{i:04d}", "unknown_field") for i in range(999)], truncated=True),
       "reject", submission=d)

q = diff_q("17", [
    criterion("q17-M1", "a", "M1", "For x = t^2, y = 2t finds dy/dx = (dy/dt)/(dx/dt) = 1/t"),
    criterion("q17-A1", "a", "A1", "Gradient 1/2 at t = 2", deps=["q17-M1"],
              conditions=["Uses the chain rule for parametric equations"], mode="all"),
    criterion("q17-B1", "a", "B1", "Tangent y = x/2 + 2", deps=["q17-M1"],
              conditions=["Tangent written as y = mx + c"], mode="any"),
], [
    decision("q17-M1", "uncertain", "Division may be the wrong way round", "dy/dx = 2/2t"),
    decision("q17-A1", "withheld", "Gradient not stated", "m = ?", checks=[check(0, "met")]),
    decision("q17-B1", "awarded", "Tangent correct", "2y = x + 4", checks=[check(0, "not_met")]),
])
accept("scoring-dependency-uncertain-only-for-awarded", "After step 2 turned them uncertain, neither the "
       "withheld A1 (condition met) nor the awarded B1 (condition not met) is awarded any more, so their "
       "uncertain dependency adds no dependency_uncertain.",
       single(q), valid("needs_review", sc(0, 3, 3), [qrep(
           "17", "needs_review", sc(0, 3, 3), [("a", sc(0, 3, 3))],
           [crit("q17-M1", "M1", "uncertain", "uncertain", ["uncertain_decision"]),
            crit("q17-A1", "A1", "withheld", "uncertain", ["condition_conflict"]),
            crit("q17-B1", "B1", "awarded", "uncertain", ["condition_conflict"])],
           [flag("uncertain_decision", DE + "/0/outcome", "q17-M1"),
            flag("condition_conflict", DE + "/1/conditionChecks", "q17-A1"),
            flag("condition_conflict", DE + "/2/conditionChecks", "q17-B1")])]))


reject("refs-missing-decision-before-criterion-content", "missing_decision points at the criterion's "
       "first byte, so it sorts before a defect inside that criterion; both are reported.",
       edit(base(), (CRIT + "/3/notes", "follow through allowed"), (DEC + "/3", DELETE)),
       err(CRIT + "/3", "missing_decision"), err(CRIT + "/3/notes", "unknown_field"))
reject("structure-condition-mode-required-before-content", "condition_mode_required points at the "
       "criterion, before a defect inside it.",
       edit(base(), (CRIT + "/2/conditionMode", DELETE), (CRIT + "/2/code", "M2")),
       err(CRIT + "/2", "condition_mode_required"), err(CRIT + "/2/code", "pattern"))
reject("refs-same-position-structure-before-references", "Two errors at the same place (the criterion) "
       "keep the order the checks ran: condition_mode_required (structure) before missing_decision "
       "(references).", edit(base(), (CRIT + "/2/conditionMode", DELETE), (DEC + "/2", DELETE)),
       err(CRIT + "/2", "condition_mode_required"), err(CRIT + "/2", "missing_decision"))
vector("limits-payload-too-large-not-parsed", "A document over 4 MiB is refused before parsing: an "
       "unterminated object padded past the limit is only payload_too_large.",
       invalid(err("", "payload_too_large")), "skip", text="{", pad=4194305)
vector("parse-nesting-too-deep-unclosed", "Two hundred unclosed arrays fail at the 129th level with "
       "nesting_too_deep before the end of input is reached.",
       invalid(err("/0" * LIMIT_DEPTH, "nesting_too_deep")), "skip", text="[" * 200)
vector("parse-unclosed-arrays-at-limit", "128 unclosed arrays stay within the nesting limit; the input ends "
       "where an item or ] should start, a failure between items, so invalid_json at the innermost array.",
       invalid(err("/0" * (LIMIT_DEPTH - 1), "invalid_json")), "skip",
       text="[" * LIMIT_DEPTH)
d = two_questions()
edit(d, (CRIT + "/3/partId", "c"), ("/questions/1/rubric/parts/0/maxMarks", 4))
refuse("refs-part-max-checked-per-question", "An unknown partId stops the part check of its own question "
       "only: question 2's wrong maxMarks is still reported.", d,
       err(CRIT + "/3/partId", "unknown_part"), err("/questions/1/rubric/parts/0/maxMarks", "part_max_mismatch"))
refuse("graph-self-dependency-and-cycle", "A self entry is self_dependency only; the criterion's other "
       "entry, on a real cycle, is dependency_cycle.",
       edit(base(), (CRIT + "/0/dependsOn", ["q1a-M1", "q1a-A1"])),
       err(CRIT + "/0/dependsOn/0", "self_dependency"), err(CRIT + "/0/dependsOn/1", "dependency_cycle"),
       err(CRIT + "/1/dependsOn/0", "dependency_cycle"))


vector("parse-trailing-comma-in-array", "A trailing comma in a page list is a failure between items: "
       "invalid_json at the enclosing array.", invalid(err(SEL + "/" + WORK, "invalid_json")), "skip",
       text=replace_once(compact(base()), f'"{WORK}":[1,2]', f'"{WORK}":[1,2,]'))
vector("parse-missing-comma-in-array", "A missing comma in a page list is invalid_json at the enclosing "
       "array.", invalid(err(SEL + "/" + WORK, "invalid_json")), "skip",
       text=replace_once(compact(base()), f'"{WORK}":[1,2]', f'"{WORK}":[1 2]'))
vector("parse-unquoted-key", "An unquoted key is a bad key: invalid_json at the enclosing object.",
       invalid(err("/source", "invalid_json")), "skip",
       text=replace_once(compact(base()), '"name":"R. Okafor (Head of Mathematics)"',
                         'name:"R. Okafor (Head of Mathematics)"'))
vector("parse-malformed-number", "A number cut short after its decimal point (4.) is invalid_json at that "
       "number.", invalid(err("/coverage/totalMarks", "invalid_json")), "skip",
       text=replace_once(compact(base()), '"totalMarks":4', '"totalMarks":4.'))
vector("parse-raw-tab-in-nested-string", "A raw tab inside source.name is invalid_json at that string.",
       invalid(err("/source/name", "invalid_json")), "skip",
       text=replace_once(compact(base()), '"name":"R. Okafor (Head of Mathematics)"',
                         '"name":"R. Okafor\t(Head of Mathematics)"'))
reject("structure-minimum-total-marks", "coverage.totalMarks -1 is below its minimum of 0: minimum, and "
       "coverage is not compared with it.", edit(base(), ("/coverage/totalMarks", -1)),
       err("/coverage/totalMarks", "minimum"))
reject("structure-format-marked-at-leap-second-not-utc-midnight", "Second 60 is allowed only at 23:59:60 "
       "UTC; 16:20:60+01:00 is format.", edit(base(), ("/source/markedAt", "2025-06-14T16:20:60+01:00")),
       err("/source/markedAt", "format"))
refuse("refs-empty-decisions", "decisions may be empty as far as structure goes: every criterion is then "
       "missing_decision, in rubric order.", edit(base(), (DEC, [])),
       err(CRIT + "/0", "missing_decision"), err(CRIT + "/1", "missing_decision"),
       err(CRIT + "/2", "missing_decision"), err(CRIT + "/3", "missing_decision"))
reject("boxes-x-above-one", "x above 1 is box_out_of_bounds at x; the sum is then not checked.",
       edit(base(), (BOX0 + "/x", 1.5)), err(BOX0 + "/x", "box_out_of_bounds"))


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def main():
    names = [v["name"] for v in VECTORS]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, duplicates
    for v in VECTORS:
        assert v["description"].endswith("."), v["name"]
        exp = v["expected"]
        if exp["valid"]:
            mark = "accept"
        elif any(e["code"] in PARSE_CODES for e in exp["errors"]):
            assert len(exp["errors"]) == 1, v["name"]
            mark = "skip"
        elif any(e["code"] in STRUCTURAL_CODES or (e["code"] == "box_out_of_bounds"
                                                   and e["path"].rsplit("/", 1)[-1] in ("x", "y"))
                 for e in exp["errors"]):
            mark = "reject"
        else:
            mark = "accept"
        assert v["schema"] == mark, (v["name"], v["schema"], mark)
    for old in os.listdir(HERE):
        if old.endswith(".json"):
            os.remove(os.path.join(HERE, old))
    for v in VECTORS:
        text = json.dumps(v, indent=2, ensure_ascii=False) + "\n"
        size = len(text.encode("utf-8"))
        assert size < MAX_FILE_BYTES, (v["name"], size)
        with open(os.path.join(HERE, v["name"] + ".json"), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    print(f"wrote {len(VECTORS)} vectors to {HERE}", file=sys.stderr)


if __name__ == "__main__":
    main()
