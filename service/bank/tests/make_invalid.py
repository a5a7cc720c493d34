#!/usr/bin/env python3
"""Writes the invalid-bank fixtures under tests/invalid/ (one folder per bad form).

Each fixture is a small bank (a folder) derived from one sample question, broken in one way, with
`expected.txt` holding the exact errors the importer reports (`file:/pointer: message`, one a line).
Run it again after changing the base question; review the diff of the data files.
"""

import copy
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "sample"
OUT = HERE / "invalid"
QID = "bf626973-074f-5df7-b43b-fb5480a1492d"
ASSET = "dd9cece0-7e27-5726-8f69-1f3c54c4ae31"
OTHER_QID = "0b6f1b7e-4b8e-4c55-9a57-3f0f1c2d3e4f"

FACETS = {
    "course": [{"id": "as-level-maths", "label": "AS Level Mathematics", "level": "as-level", "subject": "maths"}],
    "board": [{"id": "aqa", "label": "AQA"}],
    "module": [{"id": "pure-1", "label": "Pure Mathematics 1"}],
    "topic": [{"id": "trigonometry", "label": "Trigonometry"}],
    "subtopic": [{"id": "sine-and-cosine-rules", "label": "Sine and cosine rules", "topic": "trigonometry"}],
}


def base_question() -> dict:
    doc = json.loads((SAMPLE / "as-maths.json").read_text(encoding="utf-8"))
    return next(q for q in doc["questions"] if q["id"] == QID)


def bank(questions, facets=None) -> dict:
    out = {"bankVersion": "examkit-question-bank-v1"}
    out["facets"] = copy.deepcopy(FACETS) if facets is None else facets
    out["questions"] = questions
    return out


def rev(q: dict) -> dict:
    return q["revisions"][0]


FIXTURES = {}


def fixture(name: str, expected: list[str], svg: bytes | None = None):
    def register(build):
        FIXTURES[name] = (build, expected, svg)
        return build
    return register


R = "/questions/0/revisions/0"


@fixture("parse-duplicate-key", ['bank.json:/questions/0/revisions/0/title: invalid JSON: duplicate key "title" at line 1 column 0'])
def _(q):
    return None  # written specially below


@fixture("parse-byte-order-mark", ["bank.json:/: invalid JSON: starts with a byte order mark"])
def _(q):
    return None


@fixture("schema-unknown-field", [f"bank.json:{R}/colour: unknown field"])
def _(q):
    rev(q)["colour"] = "red"
    return {"bank.json": bank([q])}


@fixture("schema-text-block-type", [f"bank.json:{R}/content/stem/0/text: expected string"])
def _(q):
    rev(q)["content"]["stem"][0]["text"] = 5
    return {"bank.json": bank([q])}


@fixture("rule1-declared-twice", ['bank.json:/facets/topic/1/id: topic id "trigonometry" declared twice in this file'])
def _(q):
    facets = copy.deepcopy(FACETS)
    facets["topic"].append({"id": "trigonometry", "label": "Trig"})
    return {"bank.json": bank([q], facets)}


@fixture("rule1-declared-differently", ['b.json:/facets/board/0/id: board id "aqa" declared differently in another file'])
def _(q):
    return {"a.json": bank([q]), "b.json": bank([], {"board": [{"id": "aqa", "label": "AQA (England)"}]})}


@fixture("rule1-course-id", ['bank.json:/facets/course/1/id: course id must be "a-level-maths"'])
def _(q):
    facets = copy.deepcopy(FACETS)
    facets["course"].append({"id": "a-level-mathematics", "label": "A Level Mathematics", "level": "a-level", "subject": "maths"})
    return {"bank.json": bank([q], facets)}


@fixture("rule1-subtopic-topic", ['bank.json:/facets/subtopic/1/topic: unknown topic "geometry"'])
def _(q):
    facets = copy.deepcopy(FACETS)
    facets["subtopic"].append({"id": "circles", "label": "Circles", "topic": "geometry"})
    return {"bank.json": bank([q], facets)}


@fixture("rule2-unknown-topic", [f'bank.json:{R}/subtopic: subtopic "sine-and-cosine-rules" belongs to topic "trigonometry"',
                                 f'bank.json:{R}/topic: unknown topic "algebra"'])
def _(q):
    rev(q)["topic"] = "algebra"
    return {"bank.json": bank([q])}


@fixture("rule2-source-module", [f"bank.json:{R}/sources/0/module: a source's module must be one of moduleProfiles",
                                 f'bank.json:{R}/sources/0/module: unknown module "pure-2"'])
def _(q):
    rev(q)["sources"][0]["module"] = "pure-2"
    return {"bank.json": bank([q])}


@fixture("rule2-no-course", [f"bank.json:{R}/sources/0: no course declared for a-level maths"])
def _(q):
    rev(q)["sources"][0]["level"] = "a-level"
    return {"bank.json": bank([q])}


@fixture("rule3-question-id", ["b.json:/questions/0/id: question id repeats one in a.json"])
def _(q):
    return {"a.json": bank([q]), "b.json": bank([copy.deepcopy(q)], {})}


@fixture("rule4-numbering", ["bank.json:/questions/0/revisions/1/revision: expected revision 2"])
def _(q):
    second = copy.deepcopy(rev(q))
    second["revision"] = 3
    second["changeNote"] = "Clearer wording."
    q["revisions"].append(second)
    return {"bank.json": bank([q])}


@fixture("rule4-draft-not-last", [f"bank.json:{R}/status: only the last revision may be a draft"])
def _(q):
    second = copy.deepcopy(rev(q))
    second["revision"] = 2
    second["changeNote"] = "Clearer wording."
    rev(q)["status"] = "draft"
    q["revisions"].append(second)
    return {"bank.json": bank([q])}


@fixture("rule5-part-label", [f"bank.json:{R}/content/parts/1: label required when there are several parts"])
def _(q):
    del rev(q)["content"]["parts"][1]["label"]
    return {"bank.json": bank([q])}


@fixture("rule5-part-repeats", [f'bank.json:{R}/content/parts/1/id: part id "a" repeats',
                                f'bank.json:{R}/scheme/parts: scheme parts ["a", "b", "c"] must be the content parts ["a", "a", "c"] in order'])
def _(q):
    rev(q)["content"]["parts"][1]["id"] = "a"
    return {"bank.json": bank([q])}


@fixture("rule6-max-marks", [f"bank.json:{R}/scheme/parts/0/maxMarks: maxMarks 3 but the content part shows 2 marks",
                             f"bank.json:{R}/scheme/parts/0/maxMarks: maxMarks 3 but the part has 2 criteria"])
def _(q):
    rev(q)["scheme"]["parts"][0]["maxMarks"] = 3
    return {"bank.json": bank([q])}


@fixture("rule6-total-marks", [f"bank.json:{R}/marks: marks 7 but the scheme has 6 criteria"])
def _(q):
    rev(q)["marks"] = 7
    return {"bank.json": bank([q])}


@fixture("rule7-criterion-repeats", [f'bank.json:{R}/scheme/criteria/3/id: criterion id "b1" repeats'])
def _(q):
    c = rev(q)["scheme"]["criteria"]
    c[3]["id"] = "b1"
    c[3]["dependsOn"] = []
    return {"bank.json": bank([q])}


@fixture("rule7-unknown-part", [f'bank.json:{R}/scheme/criteria/1/partId: unknown part "z"',
                                f"bank.json:{R}/scheme/parts/0/maxMarks: maxMarks 2 but the part has 1 criteria"])
def _(q):
    rev(q)["scheme"]["criteria"][1]["partId"] = "z"
    return {"bank.json": bank([q])}


@fixture("rule7-no-answers-no-reason", [f'bank.json:{R}/scheme/criteria/1/answers: an accuracy mark with no answers needs a note saying why: '
                                        '"no single final answer", "answer given", "proof", "sketch" or "explanation"'])
def _(q):
    c = rev(q)["scheme"]["criteria"]
    c[1]["answers"] = []  # A1 with the note "awrt 4.34" only: no reason
    c[3]["answers"] = []  # A1 that says why: accepted
    c[3]["notes"].append("no single final answer")
    return {"bank.json": bank([q])}


@fixture("rule8-unknown-dependency", [f'bank.json:{R}/scheme/criteria/1/dependsOn/0: unknown criterion "a9"'])
def _(q):
    rev(q)["scheme"]["criteria"][1]["dependsOn"] = ["a9"]
    return {"bank.json": bank([q])}


@fixture("rule8-cycle", [f"bank.json:{R}/scheme/criteria/0/dependsOn: criterion \"a1\" lies on a dependency cycle",
                         f"bank.json:{R}/scheme/criteria/1/dependsOn: criterion \"a2\" lies on a dependency cycle"])
def _(q):
    rev(q)["scheme"]["criteria"][0]["dependsOn"] = ["a2"]
    return {"bank.json": bank([q])}


@fixture("rule8-self", [f"bank.json:{R}/scheme/criteria/2/dependsOn/0: a criterion cannot depend on itself"])
def _(q):
    rev(q)["scheme"]["criteria"][2]["dependsOn"] = ["b1"]
    return {"bank.json": bank([q])}


@fixture("rule9-unclosed", [f"bank.json:{R}/content/parts/0/body/0/text: unclosed $ at character 33"])
def _(q):
    rev(q)["content"]["parts"][0]["body"][0]["text"] = "Find the length of $B C$. Hence $x"
    return {"bank.json": bank([q])}


@fixture("rule9-code", [f"bank.json:{R}/scheme/criteria/0/requirement: maths must not contain # (typst code)",
                        f"bank.json:{R}/scheme/criteria/1/notes/0: empty maths",
                        f"bank.json:{R}/scheme/criteria/2/answers/0: maths must not contain // or /* (typst comments)"])
def _(q):
    c = rev(q)["scheme"]["criteria"]
    c[0]["requirement"] = "Uses $#read(\"/etc/passwd\")$"
    c[1]["notes"] = ["awrt $ $"]
    c[2]["answers"] = ["$x // y$"]
    return {"bank.json": bank([q])}


@fixture("rule9-plain-text", [f"bank.json:{R}/content/stem/1/alt: plain text: no maths or $ signs",
                              f"bank.json:{R}/title: plain text: no maths or $ signs"])
def _(q):
    rev(q)["title"] = "Triangle with $a^2$"
    rev(q)["content"]["stem"][1]["alt"] = "Side $x$"
    return {"bank.json": bank([q])}


@fixture("rule10-missing-file", [f'bank.json:{R}/assets/0/file: file "assets/missing.svg" not found'])
def _(q):
    rev(q)["assets"][0]["file"] = "assets/missing.svg"
    return {"bank.json": bank([q])}


@fixture("rule10-unused-and-undeclared", [f"bank.json:{R}/assets/0: asset is not used by any diagram",
                                          f"bank.json:{R}/content/stem/1/asset: diagram refers to an asset not declared in this revision"])
def _(q):
    rev(q)["content"]["stem"][1]["asset"] = "11111111-2222-4333-8444-555555555555"
    return {"bank.json": bank([q])}


@fixture("rule10-asset-in-two-questions", ["bank.json:/questions/1/revisions/0/assets/0/id: asset id already used by another question"])
def _(q):
    other = copy.deepcopy(q)
    other["id"] = OTHER_QID
    return {"bank.json": bank([q, other])}


@fixture("rule10-asset-repeats", [f"bank.json:{R}/assets/1/id: asset id repeats within the revision"])
def _(q):
    rev(q)["assets"].append(copy.deepcopy(rev(q)["assets"][0]))
    return {"bank.json": bank([q])}


@fixture("rule10-unsafe-svg", [f'bank.json:{R}/assets/0/file: SVG "assets/triangle-abc.svg": must not contain <script>'],
         svg=b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n')
def _(q):
    return {"bank.json": bank([q])}


@fixture("rule10-external-href", [f'bank.json:{R}/assets/0/file: SVG "assets/triangle-abc.svg": must not reference external content (https://example.com/a.svg)'],
         svg=b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="https://example.com/a.svg"/></svg>\n')
def _(q):
    return {"bank.json": bank([q])}


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    triangle = (SAMPLE / "assets" / "triangle-abc.svg").read_bytes()
    for name, (build, expected, svg) in FIXTURES.items():
        folder = OUT / name
        (folder / "assets").mkdir(parents=True)
        (folder / "assets" / "triangle-abc.svg").write_bytes(svg if svg is not None else triangle)
        q = base_question()
        if name == "parse-duplicate-key":
            text = json.dumps(bank([q]), ensure_ascii=False, separators=(",", ":"))
            title = '"title":"Cosine rule'
            text = text.replace(title, '"title":"A","title":"Cosine rule', 1)
            (folder / "bank.json").write_text(text, encoding="utf-8")
            column = text.index('"title":"Cosine rule') + len('"title"')
            expected = [expected[0].replace("column 0", f"column {column}")]
        elif name == "parse-byte-order-mark":
            (folder / "bank.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(bank([q]), indent=2).encode())
        else:
            for file, doc in build(q).items():
                (folder / file).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        (folder / "expected.txt").write_text("\n".join(expected) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
