"""The Python API: argument handling, the exception, the reference data and thread use."""

from __future__ import annotations

import copy
import enum
import json
import pickle
import re
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict

import pytest

import examkit
from conftest import ASSETS, ROOT, SCHEMAS_DIR, WORK, build_submission

ENGINE_KEY_ORDER = ["valid", "schemaVersion", "assetsChecked", "status", "score", "questions"]


# ---- documents and outcomes ---------------------------------------------------------------------


def test_valid_outcome_is_plain_data_in_engine_order(submission: Dict[str, Any]) -> None:
    outcome = examkit.validate(submission, ASSETS)
    assert list(outcome) == ENGINE_KEY_ORDER
    assert outcome["valid"] is True
    assert outcome["assetsChecked"] is True
    assert outcome["status"] == "needs_review"
    assert outcome["score"] == {"awarded": 4, "possible": 6, "max": 6}
    first = outcome["questions"][0]
    assert list(first) == ["label", "status", "score", "parts", "criteria", "reviewFlags"]
    assert first["reviewFlags"][0]["code"] == "uncertain_decision"
    assert first["reviewFlags"][0]["path"] == "/questions/0/decisions/2/outcome"
    assert examkit.validate(submission)["assetsChecked"] is False


def test_every_document_form_gives_the_same_bytes(submission: Dict[str, Any]) -> None:
    text = json.dumps(submission, indent=2, ensure_ascii=False)
    expected = examkit.validate_json(submission, ASSETS)
    assert examkit.validate_json(text, ASSETS) == expected
    assert examkit.validate_json(text.encode("utf-8"), ASSETS) == expected
    assert examkit.validate_json(bytearray(text.encode("utf-8")), ASSETS) == expected
    assert examkit.validate_json(submission, tuple(ASSETS)) == expected
    assert json.loads(expected) == examkit.validate(text, ASSETS)


def test_a_dict_keeps_key_order_and_non_ascii_text() -> None:
    document = build_submission(["7(a)–ü 📐"])
    outcome = examkit.validate(document)
    assert outcome["questions"][0]["label"] == "7(a)–ü 📐"
    # Key order reaches the engine unchanged: errors come out in the dict's order.
    reordered = {"questions": document["questions"], "zz": 1, "aa": 2}
    paths = [e["path"] for e in examkit.validate(reordered)["errors"]]
    assert paths.index("/zz") < paths.index("/aa")


def test_invalid_documents_are_outcomes_not_exceptions() -> None:
    for document in ["", "{", b"\xff", "[]", '{"a":1,"a":2}', b"\xef\xbb\xbf{}"]:
        outcome = examkit.validate(document)
        assert outcome["valid"] is False
        assert outcome["errors"], document
        assert list(outcome) == ["valid", "errors", "truncated"]
        assert all(list(e) == ["path", "code", "message"] for e in outcome["errors"])
    assert examkit.validate('{"a":1,"a":2}')["errors"][0]["code"] == "invalid_json"


def test_a_lone_surrogate_in_text_is_the_engines_invalid_json() -> None:
    document = json.dumps(build_submission(), ensure_ascii=False).replace("A. Examiner", "\ud800")
    outcome = examkit.validate(document)
    assert [e["code"] for e in outcome["errors"]] == ["invalid_json"]


# A str is encoded by the native half (blocks of 16 code points, strings over 65,536 code points in
# pieces): the engine must see exactly str.encode("utf-8", "surrogatepass") in every case.
ENCODER_BLOCK = 16
ENCODER_PIECE = 1 << 16


@pytest.mark.parametrize(
    "label",
    ["plain", "caf\u00e9 \u00d7 \u00b2", "\u2212 \u222b \u2248 \u2192 \uffff",
     "\U0001f4d0 \u00fc \U0010ffff", "\u007f\u0080\u07ff\u0800"],
)
def test_text_reaches_the_engine_as_its_utf8(label: str) -> None:
    for pad in range(ENCODER_BLOCK + 1):
        padded = "x" * pad + label
        text = json.dumps(build_submission([padded]), ensure_ascii=False)
        expected = examkit.validate_json(text.encode("utf-8"))
        assert examkit.validate_json(text) == expected
        assert examkit.validate(text)["questions"][0]["label"] == padded


@pytest.mark.parametrize("surrogates", ["\ud800", "\udfff", "\ud83d\udcd0", "\udcd0\ud83d"])
def test_lone_surrogates_reach_the_engine_as_surrogatepass_bytes(surrogates: str) -> None:
    for pad in range(ENCODER_BLOCK + 1):
        text = json.dumps(build_submission(["x" * pad + surrogates + "\u00e9"]), ensure_ascii=False)
        expected = examkit.validate_json(text.encode("utf-8", "surrogatepass"))
        assert '"invalid_json"' in expected
        assert examkit.validate_json(text) == expected


@pytest.mark.parametrize("special", ["\u00e9", "\u20ac", "\U0001f4d0", "\ud800"])
def test_long_text_is_encoded_across_its_pieces(special: str) -> None:
    text = json.dumps(build_submission(["Q" + special + special]), ensure_ascii=False)
    at = text.index("Q" + special)
    for boundary in (ENCODER_PIECE, 2 * ENCODER_PIECE):
        for shift in (-1, 0, 1, 2):
            # Whitespace after the opening brace moves the label across a piece boundary.
            padded = "{" + " " * (boundary - at + shift) + text[1:]
            expected = examkit.validate_json(padded.encode("utf-8", "surrogatepass"))
            assert examkit.validate_json(padded) == expected
            if special != "\ud800":
                assert examkit.validate(padded)["questions"][0]["label"] == "Q" + special * 2


def test_a_str_subclass_is_read_as_its_characters() -> None:
    class Odd(str):
        def isascii(self) -> bool:
            return True

        def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
            return b"{}"

        def __getitem__(self, index: Any) -> str:
            return "{}"

    text = json.dumps(build_submission(["\u00e9t\u00e9 \U0001f4d0"]), ensure_ascii=False)
    long_text = "{" + " " * (2 * ENCODER_PIECE) + text[1:]
    for document in (text, long_text, text.replace("\u00e9", "\udc80")):
        assert examkit.validate_json(Odd(document)) == examkit.validate_json(document)
    assert examkit.validate(Odd(text))["valid"] is True


def test_payload_limit_is_the_engines() -> None:
    base = json.dumps(build_submission()).encode("utf-8")
    at_limit = base + b" " * (examkit.MAX_DOCUMENT_BYTES - len(base))
    assert examkit.validate(at_limit)["valid"] is True
    over = examkit.validate(at_limit + b" ")
    assert [(e["code"], e["path"]) for e in over["errors"]] == [("payload_too_large", "")]


# ---- argument types -----------------------------------------------------------------------------


@pytest.mark.parametrize("document", [123, None, 1.5, ["{}"], object(), memoryview(b"{}")])
def test_document_of_the_wrong_type_is_a_type_error(document: Any) -> None:
    for function in (examkit.validate, examkit.validate_json, examkit.validate_or_raise,
                     examkit.explain):
        with pytest.raises(TypeError, match=r"document must be a str, bytes, bytearray or dict"):
            function(document)


@pytest.mark.parametrize(
    ("assets", "message"),
    [
        ("x", r"assets must be None or a list .* not str"),
        (b"[]", r"assets must be None or a list .* not bytes"),
        ({"id": WORK, "kind": "work", "pageCount": 1}, r"assets must be None or a list .* not dict"),
        (7, r"assets must be None or a list .* not int"),
        ([1], r"assets\[0\] must be a dict .* not int"),
        ([ASSETS[0], "x"], r"assets\[1\] must be a dict .* not str"),
        ([{"id": {1, 2}, "kind": "work", "pageCount": 1}], r"assets\[0\] cannot be serialised as JSON: Object of type set"),
    ],
)
def test_assets_of_the_wrong_type_are_a_type_error(assets: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        examkit.validate("{}", assets)


class _Pages(enum.IntEnum):
    ONE = 1


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"id": WORK.upper()},
        {"id": "{" + WORK + "}"},
        {"id": WORK.replace("-", "")},
        {"id": "urn:uuid:" + WORK},
        {"id": WORK[:-1]},
        {"id": 7},
        {"kind": "Work"},
        {"kind": "scheme"},
        {"pageCount": 0},
        {"pageCount": 2**32 - 1},
        {"pageCount": 2**32},
        {"pageCount": -1},
        {"pageCount": True},
        {"pageCount": 1.0},
        {"pageCount": _Pages.ONE},
        {"pageCount": None},
        {"extra": 1},
    ],
)
def test_a_plain_assets_list_reads_as_its_json_does(changes: Dict[str, Any]) -> None:
    # A list of plain dicts is read directly; a tuple always goes through JSON and the engine's
    # reader. Both must give the same outcome, or the same error.
    asset = {**ASSETS[0], **changes}
    document = build_submission()

    def run(assets: Any) -> Any:
        try:
            return examkit.validate_json(document, assets)
        except (TypeError, ValueError) as error:
            return type(error), str(error)

    assert run([asset, ASSETS[1]]) == run((asset, ASSETS[1]))
    assert run([ASSETS[1], asset, asset]) == run((ASSETS[1], asset, asset))


def test_a_document_dict_that_json_cannot_hold_is_rejected() -> None:
    with pytest.raises(TypeError, match="cannot be serialised as JSON"):
        examkit.validate({"source": {1, 2}})
    with pytest.raises(ValueError, match="cannot be serialised as JSON"):
        examkit.validate({"coverage": {"totalMarks": float("nan")}})


@pytest.mark.parametrize(
    ("assets", "fragment"),
    [
        ([{"id": "not-a-uuid", "kind": "work", "pageCount": 1}], "assets must be a JSON array"),
        ([{"id": WORK, "kind": "poster", "pageCount": 1}], "poster"),
        ([{"id": WORK, "kind": "work"}], "pageCount"),
        ([{"id": WORK, "kind": "work", "pageCount": 1, "colour": "red"}], "colour"),
        ([{"id": WORK, "kind": "work", "pageCount": 1}] * 2, f"asset {WORK} is listed twice"),
        ([{"id": WORK, "kind": "work", "pageCount": 0}], "pageCount 0"),
    ],
)
def test_a_malformed_assets_list_is_a_value_error_with_the_engines_message(
    assets: Any, fragment: str
) -> None:
    for function in (examkit.validate, examkit.validate_json, examkit.explain):
        with pytest.raises(ValueError) as raised:
            function(build_submission(), assets)
        assert not isinstance(raised.value, TypeError)
        assert fragment in str(raised.value)


DEEP: Any = []
for _ in range(40):
    DEEP = [DEEP]


class Pages(enum.IntEnum):
    TWO = 2


@pytest.mark.parametrize(
    "value",
    [
        [],
        [{}],
        [{"id": WORK, "kind": "work", "pageCount": 3}],
        [{"a": None, "b": True, "c": False, "d": -0.0, "e": 1e16, "f": 1.5, "g": 10**30}],
        [{"quote \"\\\n\t\u0001": "√ ≈ 📐 \u007f", "": [[], [1, [2.25]], {"x": {}}]}],
        ({"pageCount": Pages.TWO, "t": (1, 2)},),
    ],
)
def test_assets_are_written_as_json_dumps_would(value: Any) -> None:
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert examkit._examkit.assets_json(value) == expected


def test_assets_in_a_tuple_or_with_int_subclasses_are_accepted(submission: Dict[str, Any]) -> None:
    expected = examkit.validate_json(submission, ASSETS)
    as_enum = [dict(asset, pageCount=Pages.TWO * 5) for asset in ASSETS]
    assert examkit.validate_json(submission, tuple(ASSETS)) == expected
    assert examkit.validate_json(submission, as_enum) == expected


@pytest.mark.parametrize(
    ("assets", "error", "message"),
    [
        ([{"id": uuid.UUID(WORK)}], TypeError, r"assets\[0\] .*Object of type UUID is not JSON"),
        ([ASSETS[0], {1: "x"}], TypeError, r"assets\[1\] .*keys must be str, not int"),
        ([{"pageCount": float("inf")}], ValueError, r"assets\[0\] .*not JSON compliant"),
        ([{"x": DEEP}], ValueError, r"nest too deeply"),
        ([{"id": WORK, "kind": "work", "pageCount": True}], ValueError, r"boolean"),
        ([{"id": WORK, "kind": "work", "pageCount": 2.5}], ValueError, r"assets must be a JSON"),
    ],
)
def test_assets_values_json_cannot_hold_or_the_engine_refuses(
    assets: Any, error: type, message: str
) -> None:
    with pytest.raises(error, match=message) as raised:
        examkit.validate("{}", assets)
    if error is ValueError:
        assert not isinstance(raised.value, TypeError)


# ---- validate_or_raise and ImportValidationError ------------------------------------------------


def test_validate_or_raise_returns_a_valid_outcome(submission: Dict[str, Any]) -> None:
    assert examkit.validate_or_raise(submission, ASSETS) == examkit.validate(submission, ASSETS)


def test_import_validation_error_carries_every_error(submission: Dict[str, Any]) -> None:
    broken = copy.deepcopy(submission)
    broken["questions"][1]["label"] = "1"
    del broken["source"]["name"]
    with pytest.raises(examkit.ImportValidationError) as raised:
        examkit.validate_or_raise(broken, ASSETS)
    error = raised.value
    assert isinstance(error, ValueError)
    assert error.truncated is False
    assert error.errors == examkit.validate(broken, ASSETS)["errors"]
    codes = [(e["path"], e["code"]) for e in error.errors]
    assert ("/source/name", "required") in codes
    assert ("/questions/1/label", "duplicate_label") in codes
    lines = str(error).splitlines()
    assert len(lines) == 1 + len(error.errors)
    for line, item in zip(lines[1:], error.errors):
        assert line == f"{item['path']}: {item['message']} ({item['code']})"
    assert lines[0] == f"the submission is invalid ({len(error.errors)} errors):"


def test_import_validation_error_names_the_document_root_and_truncation() -> None:
    unknown = {f"field{i}": i for i in range(1500)}
    with pytest.raises(examkit.ImportValidationError) as raised:
        examkit.validate_or_raise(unknown)
    assert raised.value.truncated is True
    assert len(raised.value.errors) == 1000
    assert "only the first 1,000" in str(raised.value).splitlines()[-1]

    with pytest.raises(examkit.ImportValidationError) as raised:
        examkit.validate_or_raise("")
    assert str(raised.value).splitlines()[1].startswith("(document): ")
    assert str(raised.value).splitlines()[1].endswith("(invalid_json)")


def test_import_validation_error_survives_pickling() -> None:
    with pytest.raises(examkit.ImportValidationError) as raised:
        examkit.validate_or_raise("[]")
    copied = pickle.loads(pickle.dumps(raised.value))
    assert type(copied) is examkit.ImportValidationError
    assert copied.errors == raised.value.errors
    assert str(copied) == str(raised.value)


# ---- explain ------------------------------------------------------------------------------------


def test_explain_names_every_question(submission: Dict[str, Any]) -> None:
    report = examkit.explain(submission, ASSETS)
    assert isinstance(report, str)
    for question in submission["questions"]:
        assert re.search(rf"\b{re.escape(question['label'])}", report), question["label"]
    assert "uncertain_decision" in report
    assert report != examkit.explain(build_submission(["1", "2(b)"]))  # assets change the report


def test_explain_says_why_under_each_allocation() -> None:
    document = build_submission(["1"], criteria=2)
    decision = document["questions"][0]["decisions"][0]
    decision["reason"] = "Differentiated\ncorrectly,\t all three terms " + "and more " * 20
    report = examkit.explain(document)
    lines = report.splitlines()
    allocation = next(i for i, line in enumerate(lines) if line.lstrip().startswith("q0-c0 "))
    details = lines[allocation + 1 : allocation + 4]
    assert details[0].strip() == "requirement: Step 1 of question 1 is correct"
    assert details[1].strip().startswith("reason: Differentiated correctly, all three terms and more")
    assert details[1].endswith("\u2026") and len(details[1].strip()) == len("reason: ") + 100
    assert details[2].strip() == 'evidence, page 1: "line 1 of the working"'
    reasons = [line for line in lines if line.lstrip().startswith("reason: ")]
    assert len(reasons) == 2
    # The same text as the engine gives every surface (the CLI's is compared in test_vectors).
    assert examkit.explain(json.dumps(document)) == report


def test_explain_reports_errors() -> None:
    report = examkit.explain('{"schemaVersion": "v0"}')
    assert "/schemaVersion" in report
    assert "const" in report


# ---- reference data -----------------------------------------------------------------------------


def test_schema_version() -> None:
    assert examkit.SCHEMA_VERSION == "service-marking-import-v1"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", examkit.__version__)


def test_error_codes_match_the_published_list() -> None:
    published = json.loads((SCHEMAS_DIR / "error-codes.json").read_text(encoding="utf-8"))
    expected = [dict(item, kind="error") for item in published["errors"]] + [
        dict(item, kind="review_flag") for item in published["reviewFlags"]
    ]
    expected = [{"code": e["code"], "meaning": e["meaning"], "kind": e["kind"]} for e in expected]
    assert examkit.error_codes() == expected
    assert len({c["code"] for c in expected}) == len(expected)


def test_submission_schema_is_the_published_file() -> None:
    schema = examkit.submission_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    path = SCHEMAS_DIR / "service-marking-import-v1.schema.json"
    assert schema == json.loads(path.read_text(encoding="utf-8"))
    schema["$schema"] = "changed"
    assert examkit.submission_schema()["$schema"] != "changed"


# ---- threads ------------------------------------------------------------------------------------


def test_a_thread_pool_validates_concurrently() -> None:
    documents = [build_submission([str(i) for i in range(1, 1 + n % 24)], criteria=1 + n % 7,
                                  uncertain_last=n % 2 == 0) for n in range(1, 60)]
    documents += ["", '{"questions": 1}', b"\xff"]
    sequential = [examkit.validate_json(d, ASSETS) for d in documents]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(3):
            assert list(pool.map(lambda d: examkit.validate_json(d, ASSETS), documents)) == sequential


def test_the_gil_is_released_while_the_engine_runs() -> None:
    """A Python thread counts while the engine validates a large document (about 15 ms).

    With a long switch interval, a thread that has just taken the GIL keeps it for that interval
    unless it releases it: so a counting thread can only advance during the native call if the
    engine released the GIL. Each attempt first sleeps, so that it starts with a freshly taken GIL.
    """
    document = json.dumps(build_submission([f"Q{i}" for i in range(24)], criteria=100)).encode()
    native = examkit._examkit.validate_json
    counter = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            counter[0] += 1

    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.5)
    thread = threading.Thread(target=spin)
    thread.start()
    try:
        attempts = []
        for _ in range(6):
            time.sleep(0.001)  # the spinner runs; the GIL comes back to us fresh
            before = counter[0]
            native(document, None)
            attempts.append(counter[0] - before)
            if attempts[-1]:
                break
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(previous)
    assert attempts[-1] > 0, f"no other thread ran while the engine validated: {attempts}"


# ---- typing -------------------------------------------------------------------------------------


def _mypy(tmp_path: Path, *args: str) -> None:
    # Run outside the source tree, so mypy sees only the installed package.
    result = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                            cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_stubs_match_the_runtime(tmp_path: Path) -> None:
    _mypy(tmp_path, "mypy.stubtest", "examkit")


def test_package_type_checks_strictly(tmp_path: Path) -> None:
    _mypy(tmp_path, "mypy", "--strict", "-p", "examkit")


def test_example_type_checks_strictly(tmp_path: Path) -> None:
    _mypy(tmp_path, "mypy", "--strict", str(ROOT / "examples" / "python" / "pipeline.py"))
