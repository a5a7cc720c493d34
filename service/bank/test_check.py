"""Tests for service/bank/check.py (standard library only).

Run with:  python3 -m unittest discover -s service/bank -p 'test_*.py' -v

Each test copies the sample bank to a temporary folder, breaks one rule, and asserts that the
checker reports exactly that rule at the expected place; the unmodified sample bank must pass.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "sample"
SCHEMA = HERE.parent.parent / "schemas" / "question-bank.schema.json"

_spec = importlib.util.spec_from_file_location("bank_check", HERE / "check.py")
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)


def find_question(docs: dict[str, dict], title: str) -> dict:
    for doc in docs.values():
        for q in doc["questions"]:
            if q["revisions"][-1]["title"] == title:
                return q
    raise KeyError(title)


class BankCase(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="bank-test-"))
        self.bank = self.tmp / "bank"
        shutil.copytree(SAMPLE, self.bank)
        self.docs = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(self.bank.glob("*.json"))}
        self.validator = check.SchemaValidator(json.loads(SCHEMA.read_text(encoding="utf-8")))

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp)

    def errors(self) -> list[tuple[str, str, str]]:
        for name, doc in self.docs.items():
            (self.bank / name).write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
        report = check.Report()
        docs = check.load_bank(self.bank, report, self.validator)
        if not report.errors:
            check.check_bank(docs, report)
        return report.errors

    def assertOnlyError(self, file: str, pointer: str, fragment: str) -> None:
        errors = self.errors()
        self.assertEqual(len(errors), 1, errors)
        self.assertEqual(errors[0][0], file)
        self.assertEqual(errors[0][1], pointer)
        self.assertIn(fragment, errors[0][2])

    # Locations used below: the circle question has revisions 1 (withdrawn) and 2 (published).
    def circle(self) -> dict:
        return find_question(self.docs, "Circle: centre, radius and tangent at a point")

    def circle_index(self) -> int:
        return self.docs["as-maths.json"]["questions"].index(self.circle())


class SampleBank(BankCase):
    def test_sample_bank_passes(self) -> None:
        self.assertEqual(self.errors(), [])

    def test_main_prints_summary_and_exits_zero(self) -> None:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = check.main([str(SAMPLE)])
        self.assertEqual(status, 0, out.getvalue())
        text = out.getvalue()
        self.assertIn("by board:", text)
        self.assertIn("OK:", text)
        questions = sum(len(json.loads(p.read_text(encoding="utf-8"))["questions"]) for p in SAMPLE.glob("*.json"))
        self.assertGreaterEqual(questions, 60)
        self.assertIn(f"questions: {questions};", text)

    def test_main_exits_one_on_errors(self) -> None:
        self.docs["as-maths.json"]["questions"][0]["revisions"][0]["marks"] += 1
        self.errors()  # writes the broken bank
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = check.main([str(self.bank), "--quiet"])
        self.assertEqual(status, 1)
        self.assertIn("FAILED: 1 error(s)", out.getvalue())


class SchemaRules(BankCase):
    def test_unknown_field(self) -> None:
        self.docs["as-maths.json"]["questions"][0]["revisions"][0]["author"] = "x"
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/author", "unknown field")

    def test_dependent_code_needs_dependencies(self) -> None:
        rev = self.docs["as-maths.json"]["questions"][0]["revisions"][0]
        i = next(i for i, c in enumerate(rev["scheme"]["criteria"]) if c["code"] == "dM1")
        rev["scheme"]["criteria"][i]["dependsOn"] = []
        self.assertOnlyError("as-maths.json", f"/questions/0/revisions/0/scheme/criteria/{i}/dependsOn", "fewer than 1")

    def test_conditions_need_a_mode(self) -> None:
        rev = self.docs["as-maths.json"]["questions"][0]["revisions"][0]
        i = next(i for i, c in enumerate(rev["scheme"]["criteria"]) if c["conditions"])
        del rev["scheme"]["criteria"][i]["conditionMode"]
        self.assertOnlyError("as-maths.json", f"/questions/0/revisions/0/scheme/criteria/{i}/conditionMode", "required")

    def test_bad_code(self) -> None:
        self.docs["as-maths.json"]["questions"][0]["revisions"][0]["scheme"]["criteria"][0]["code"] = "M2"
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/scheme/criteria/0/code", "does not match")

    def test_display_maths_with_code(self) -> None:
        doc = self.docs["a-level-maths.json"]
        rev = doc["questions"][0]["revisions"][0]
        rev["content"]["stem"][1]["math"] = "#read(\"x\")"
        self.assertOnlyError("a-level-maths.json", "/questions/0/revisions/0/content/stem/1/math", "does not match")

    def test_change_note_required_from_revision_two(self) -> None:
        del self.circle()["revisions"][1]["changeNote"]
        self.assertOnlyError("as-maths.json", f"/questions/{self.circle_index()}/revisions/1/changeNote", "required")

    def test_duplicate_json_key(self) -> None:
        self.errors()
        path = self.bank / "as-maths.json"
        text = path.read_text(encoding="utf-8").replace('"bankVersion"', '"bankVersion": "examkit-question-bank-v1",\n  "bankVersion"', 1)
        path.write_text(text, encoding="utf-8")
        report = check.Report()
        check.load_bank(self.bank, report, self.validator)
        self.assertEqual(len(report.errors), 1, report.errors)
        self.assertIn("duplicate key 'bankVersion'", report.errors[0][2])


class MarksAndParts(BankCase):
    def test_revision_marks_must_equal_criteria(self) -> None:
        self.docs["as-maths.json"]["questions"][0]["revisions"][0]["marks"] += 1
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/marks", "scheme has 7 criteria")

    def test_part_max_marks_must_equal_criteria(self) -> None:
        rev = self.docs["as-maths.json"]["questions"][0]["revisions"][0]
        rev["scheme"]["parts"][0]["maxMarks"] += 1
        errors = self.errors()
        self.assertEqual({e[1] for e in errors}, {"/questions/0/revisions/0/scheme/parts/0/maxMarks"})
        self.assertTrue(any("criteria" in e[2] for e in errors))
        self.assertTrue(any("content part shows" in e[2] for e in errors))

    def test_scheme_parts_follow_content_parts(self) -> None:
        rev = self.docs["as-maths.json"]["questions"][0]["revisions"][0]
        rev["scheme"]["parts"].reverse()
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/scheme/parts", "in order")

    def test_unknown_part(self) -> None:
        rev = self.docs["as-maths.json"]["questions"][0]["revisions"][0]
        rev["scheme"]["criteria"][0]["partId"] = "z"
        errors = self.errors()
        self.assertIn(("as-maths.json", "/questions/0/revisions/0/scheme/criteria/0/partId", "unknown part 'z'"), errors)

    def test_label_required_with_several_parts(self) -> None:
        rev = self.docs["as-maths.json"]["questions"][0]["revisions"][0]
        del rev["content"]["parts"][1]["label"]
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/content/parts/1", "label required")


class Dependencies(BankCase):
    def test_unknown_dependency(self) -> None:
        rev = self.docs["as-maths.json"]["questions"][0]["revisions"][0]
        rev["scheme"]["criteria"][1]["dependsOn"] = ["nope"]
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/scheme/criteria/1/dependsOn/0", "unknown criterion 'nope'")

    def test_self_dependency(self) -> None:
        rev = self.docs["as-maths.json"]["questions"][0]["revisions"][0]
        rev["scheme"]["criteria"][1]["dependsOn"] = [rev["scheme"]["criteria"][1]["id"]]
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/scheme/criteria/1/dependsOn/0", "itself")

    def test_cycle(self) -> None:
        crits = self.docs["as-maths.json"]["questions"][0]["revisions"][0]["scheme"]["criteria"]
        self.assertEqual(crits[1]["dependsOn"], [crits[0]["id"]])
        crits[0]["dependsOn"] = [crits[1]["id"]]
        errors = self.errors()
        self.assertEqual(sorted(e[1] for e in errors), ["/questions/0/revisions/0/scheme/criteria/0/dependsOn",
                                                         "/questions/0/revisions/0/scheme/criteria/1/dependsOn"])
        self.assertTrue(all("cycle" in e[2] for e in errors))


class FacetsAndIds(BankCase):
    def test_unknown_topic(self) -> None:
        self.docs["as-maths.json"]["questions"][0]["revisions"][0]["topic"] = "astrology"
        errors = self.errors()
        self.assertIn(("as-maths.json", "/questions/0/revisions/0/topic", "unknown topic 'astrology'"), errors)

    def test_subtopic_of_another_topic(self) -> None:
        self.docs["as-maths.json"]["questions"][0]["revisions"][0]["subtopic"] = "circles"
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/subtopic", "belongs to topic 'coordinate-geometry'")

    def test_course_id_is_level_and_subject(self) -> None:
        self.docs["facets.json"]["facets"]["course"][0]["id"] = "as-maths"
        self.assertOnlyError("facets.json", "/facets/course/0/id", "'as-level-maths'")

    def test_conflicting_facet_declarations(self) -> None:
        self.docs["as-maths.json"]["facets"] = {"board": [{"id": "aqa", "label": "Another label"}]}
        # Files are read in name order, so the conflict is reported at the later declaration.
        self.assertOnlyError("facets.json", "/facets/board/1/id", "declared differently")

    def test_identical_facet_declarations_merge(self) -> None:
        self.docs["as-maths.json"]["facets"] = {"board": [dict(self.docs["facets.json"]["facets"]["board"][1])]}
        self.assertEqual(self.errors(), [])

    def test_source_module_must_be_a_profile(self) -> None:
        rev = self.docs["as-maths.json"]["questions"][0]["revisions"][0]
        rev["sources"][0]["module"] = "pure-2"
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/sources/0/module", "moduleProfiles")

    def test_duplicate_question_id_across_files(self) -> None:
        qid = self.docs["as-maths.json"]["questions"][0]["id"]
        self.docs["international.json"]["questions"][0]["id"] = qid
        self.assertOnlyError("international.json", "/questions/0/id", "as-maths.json")


class Revisions(BankCase):
    def test_consecutive_numbers(self) -> None:
        self.circle()["revisions"][1]["revision"] = 3
        self.assertOnlyError("as-maths.json", f"/questions/{self.circle_index()}/revisions/1/revision", "expected revision 2")

    def test_draft_only_last(self) -> None:
        self.circle()["revisions"][0]["status"] = "draft"
        self.assertOnlyError("as-maths.json", f"/questions/{self.circle_index()}/revisions/0/status", "last revision")


class Maths(BankCase):
    def test_unclosed_inline_maths(self) -> None:
        self.docs["as-maths.json"]["questions"][0]["revisions"][0]["content"]["stem"][0]["text"] += " $x"
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/content/stem/0/text", "unclosed $")

    def test_escaped_dollar_is_text(self) -> None:
        self.docs["as-maths.json"]["questions"][0]["revisions"][0]["content"]["stem"][0]["text"] += r" It costs \$5."
        self.assertEqual(self.errors(), [])

    def test_code_in_inline_maths(self) -> None:
        crit = self.docs["as-maths.json"]["questions"][0]["revisions"][0]["scheme"]["criteria"][0]
        crit["answers"].append("$#eval(\"1\")$")
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/scheme/criteria/0/answers/1", "#")

    def test_comment_in_inline_maths(self) -> None:
        crit = self.docs["as-maths.json"]["questions"][0]["revisions"][0]["scheme"]["criteria"][0]
        crit["notes"].append("$x // y$")
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/scheme/criteria/0/notes/1", "comments")

    def test_no_maths_in_title(self) -> None:
        self.docs["as-maths.json"]["questions"][0]["revisions"][0]["title"] = "Roots of $k x^2$"
        self.assertOnlyError("as-maths.json", "/questions/0/revisions/0/title", "plain text")


class Answers(BankCase):
    def criteria(self) -> list[dict]:
        return self.docs["as-maths.json"]["questions"][0]["revisions"][0]["scheme"]["criteria"]

    def test_accuracy_mark_without_answers_needs_a_reason(self) -> None:
        crits = self.criteria()
        i = next(i for i, c in enumerate(crits) if c["code"] == "A1" and c["answers"])
        crits[i]["answers"] = []
        self.assertOnlyError("as-maths.json", f"/questions/0/revisions/0/scheme/criteria/{i}/answers",
                             "a note saying why")

    def test_cso_alone_does_not_say_why(self) -> None:
        crits = self.criteria()
        i = next(i for i, c in enumerate(crits) if c["code"] == "A1*")
        crits[i]["answers"] = []
        crits[i]["notes"] = ["cso"]
        self.assertOnlyError("as-maths.json", f"/questions/0/revisions/0/scheme/criteria/{i}/answers",
                             '"no single final answer"')

    def test_a_note_saying_why_allows_empty_answers(self) -> None:
        reasons = list(check.NO_ANSWER_REASONS) + ["answer given: a conclusion is needed"]
        accuracy = [c for c in self.criteria() if check.is_accuracy_code(c["code"])]
        self.assertGreaterEqual(len(accuracy), 3)
        for k, c in enumerate(accuracy):
            c["answers"] = []
            c["notes"].append(reasons[k % len(reasons)])
        self.assertEqual(self.errors(), [])

    def test_other_marks_may_have_empty_answers(self) -> None:
        crits = self.criteria()
        for c in crits:
            if not check.is_accuracy_code(c["code"]):
                c["answers"] = []
                c["notes"] = []
        self.assertEqual(self.errors(), [])

    def test_accuracy_codes(self) -> None:
        self.assertTrue(all(check.is_accuracy_code(c) for c in ("A1", "dA1", "A1ft", "A1*")))
        self.assertFalse(any(check.is_accuracy_code(c) for c in ("M1", "dM1", "B1", "B1ft")))
        self.assertFalse(any(check.says_why_no_answers(n) for n in ("cso", "proofs", "Proof", "the answer given")))


class Assets(BankCase):
    def diagram_question(self) -> tuple[int, dict]:
        qs = self.docs["as-maths.json"]["questions"]
        i = next(i for i, q in enumerate(qs) if q["revisions"][0].get("assets"))
        return i, qs[i]["revisions"][0]

    def test_missing_file(self) -> None:
        i, rev = self.diagram_question()
        (self.bank / rev["assets"][0]["file"]).unlink()
        self.assertOnlyError("as-maths.json", f"/questions/{i}/revisions/0/assets/0/file", "not found")

    def test_script_in_svg(self) -> None:
        i, rev = self.diagram_question()
        path = self.bank / rev["assets"][0]["file"]
        path.write_text(path.read_text(encoding="utf-8").replace("</svg>", "<script>alert(1)</script></svg>"), encoding="utf-8")
        self.assertOnlyError("as-maths.json", f"/questions/{i}/revisions/0/assets/0/file", "<script>")

    def test_external_reference_in_svg(self) -> None:
        i, rev = self.diagram_question()
        path = self.bank / rev["assets"][0]["file"]
        path.write_text(path.read_text(encoding="utf-8").replace(
            "</svg>", '<use href="https://example.invalid/x.svg#a"/></svg>'), encoding="utf-8")
        self.assertOnlyError("as-maths.json", f"/questions/{i}/revisions/0/assets/0/file", "external")

    def test_unused_asset(self) -> None:
        i, rev = self.diagram_question()
        rev["content"]["stem"] = [b for b in rev["content"]["stem"] if b["type"] != "diagram"]
        self.assertOnlyError("as-maths.json", f"/questions/{i}/revisions/0/assets/0", "not used")

    def test_undeclared_asset(self) -> None:
        i, rev = self.diagram_question()
        del rev["assets"]
        errors = self.errors()
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("not declared", errors[0][2])

    def test_asset_id_shared_by_two_questions(self) -> None:
        qs = self.docs["as-maths.json"]["questions"]
        with_assets = [q["revisions"][-1] for q in qs if q["revisions"][-1].get("assets")]
        first, second = with_assets[0], with_assets[1]
        old = second["assets"][0]["id"]
        second["assets"][0]["id"] = first["assets"][0]["id"]
        for block in second["content"]["stem"]:
            if block["type"] == "diagram" and block["asset"] == old:
                block["asset"] = first["assets"][0]["id"]
        errors = self.errors()
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("another question", errors[0][2])


class MiniValidator(unittest.TestCase):
    def test_refuses_unknown_keywords(self) -> None:
        with self.assertRaises(ValueError):
            check.SchemaValidator({"type": "object", "properties": {"a": {"format": "uuid"}}})

    def test_integers_follow_json_schema(self) -> None:
        v = check.SchemaValidator({"type": "integer", "minimum": 1})
        self.assertEqual(v.errors(10.0), [])
        self.assertEqual(v.errors(True), [("", "expected integer")])
        self.assertEqual(v.errors(1.5), [("", "expected integer")])
        self.assertEqual(v.errors(0), [("", "less than 1")])


if __name__ == "__main__":
    unittest.main()
