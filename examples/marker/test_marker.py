"""The example marker, run as examkit runs an external marker: over HTTP, checked against the
published marker schemas and, wrapped in a submission, against the examkit engine.

Run: python -m pytest examples/marker   (with the examkit wheel, pytest and jsonschema installed;
bindings/python/test.sh does this with a freshly built wheel)
"""

from __future__ import annotations

import copy
import http.client
import json
import struct
import subprocess
import sys
import zlib
import base64
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import urlsplit

import examkit
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCHEMAS = ROOT / "schemas"
MARKER = HERE / "marker.py"
TOKEN = "example-shared-secret"

Json = Dict[str, Any]


def load(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def validator(name: str) -> Draft202012Validator:
    """A validator of schemas/<name>, resolving its relative references to the other schemas."""
    resources = []
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        schema = load(path)
        resources.append((schema["$id"], Resource.from_contents(schema)))
    registry: Registry = Registry().with_resources(resources)
    return Draft202012Validator(
        load(SCHEMAS / name), registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def schema_errors(name: str, instance: Any) -> List[str]:
    return [f"{e.json_path}: {e.message}" for e in validator(name).iter_errors(instance)]


@pytest.fixture(scope="module")
def request_example() -> Json:
    document: Json = load(HERE / "request.example.json")
    return document


@pytest.fixture(scope="module")
def marker_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example marker, started as its README says, on a free port, with a bearer token."""
    log = (tmp_path_factory.mktemp("marker") / "marker.log").open("w")
    process = subprocess.Popen(
        [sys.executable, str(MARKER), "--host", "127.0.0.1", "--port", "0", "--token", TOKEN],
        stdout=subprocess.PIPE, stderr=log, text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "listening on http://" in line, f"the marker did not start: {line!r}"
        yield line.strip().rsplit(" ", 1)[-1]
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def post(url: str, body: bytes, token: Optional[str] = TOKEN,
         content_type: str = "application/json") -> Tuple[int, Dict[str, str], Any]:
    """POST body; (status, headers, parsed JSON body)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    headers = {"Content-Type": content_type}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request("POST", parts.path or "/", body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(data)
    finally:
        connection.close()


def post_json(url: str, document: Any, token: Optional[str] = TOKEN) -> Tuple[int, Dict[str, str], Any]:
    return post(url, json.dumps(document, ensure_ascii=False).encode("utf-8"), token)


@pytest.fixture(scope="module")
def response(marker_url: str, request_example: Json) -> Json:
    status, headers, body = post_json(marker_url, request_example)
    assert status == 200, body
    assert headers["content-type"] == "application/json"
    answer: Json = body
    return answer


def wrap(answer: Json) -> Json:
    """The submission examkit builds around a marker's answer (schemas/marker-contract.md)."""
    question = answer["question"]
    return {
        "schemaVersion": "service-marking-import-v1",
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": {"kind": "ai", "name": answer.get("name", "external marker"),
                   "model": answer.get("model", "external"),
                   "markedAt": "2025-06-01T09:30:00Z"},
        "coverage": {"kind": "partial", "questionLabels": [question["label"]],
                     "totalMarks": len(question["rubric"]["criteria"])},
        "questions": [question],
    }


def decision(answer: Json, criterion_id: str) -> Json:
    found = [d for d in answer["question"]["decisions"] if d["criterionId"] == criterion_id]
    assert len(found) == 1, criterion_id
    result: Json = found[0]
    return result


def contains(outer: Dict[str, float], inner: Dict[str, float]) -> bool:
    eps = 1e-9
    return (outer["x"] <= inner["x"] + eps and outer["y"] <= inner["y"] + eps
            and outer["x"] + outer["width"] >= inner["x"] + inner["width"] - eps
            and outer["y"] + outer["height"] >= inner["y"] + inner["height"] - eps)


# --- the schemas and the example request ------------------------------------------------------


@pytest.mark.parametrize("name", ["marker-request-v1.schema.json", "marker-response-v1.schema.json"])
def test_marker_schemas_are_draft_2020_12_schemas(name: str) -> None:
    schema = load(SCHEMAS / name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    # Their relative references resolve (to service-marking-import-v1.schema.json).
    validator(name).is_valid({})


def test_the_example_request_follows_the_request_schema(request_example: Json) -> None:
    assert schema_errors("marker-request-v1.schema.json", request_example) == []


def png_size(data: bytes) -> Tuple[int, int]:
    """(width, height) of a PNG, after checking its signature and every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, kinds, size = 8, [], (0, 0)
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        kind = data[offset + 4:offset + 8]
        body = data[offset + 8:offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, kind
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        kinds.append(kind)
        offset += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    return size


def test_the_example_images_are_pngs_of_the_stated_size(request_example: Json) -> None:
    for page in request_example["workPages"] + request_example["schemePages"]:
        data = base64.b64decode(page["image"]["data"], validate=True)
        assert png_size(data) == (page["widthPx"], page["heightPx"]), page["pageId"]
        assert page["pageId"] == f"{page['assetId']}:p{page['page']}"


def test_the_request_schema_rejects_what_examkit_never_sends(request_example: Json) -> None:
    for change in (
        lambda r: r.update(schemaVersion="examkit-marker-request-v2"),
        lambda r: r["scheme"].update(kind="images"),
        lambda r: r["workPages"][0].update(orientation=45),
        lambda r: r["workPages"][0]["image"].update(mediaType="image/jpeg"),
        lambda r: r["scheme"]["criteria"][2].pop("conditionMode"),
        lambda r: r.update(extra=True),
    ):
        document = copy.deepcopy(request_example)
        change(document)
        assert schema_errors("marker-request-v1.schema.json", document), document


# --- the answer ---------------------------------------------------------------------------------


def test_the_answer_follows_the_response_schema(response: Json) -> None:
    assert schema_errors("marker-response-v1.schema.json", response) == []


def test_the_response_schema_checks_the_question(response: Json) -> None:
    broken = copy.deepcopy(response)
    broken["question"]["decisions"][0]["outcome"] = "maybe"
    assert schema_errors("marker-response-v1.schema.json", broken)
    assert schema_errors("marker-response-v1.schema.json", {**response, "score": 3})


def test_the_wrapped_answer_is_a_valid_submission(response: Json, request_example: Json) -> None:
    outcome = examkit.validate(wrap(response), request_example["assets"])
    assert outcome["valid"], outcome
    assert outcome["assetsChecked"] is True
    assert outcome["score"]["max"] == 4


def test_the_rubric_is_the_schemes(response: Json, request_example: Json) -> None:
    scheme = request_example["scheme"]
    question = response["question"]
    assert question["label"] == request_example["label"]
    assert question["pageSelections"] == request_example["pageSelections"]
    assert [(p["id"], p["maxMarks"]) for p in question["rubric"]["parts"]] == [
        (p["id"], p["maxMarks"]) for p in scheme["parts"]
    ]
    assert [(c["id"], c["partId"], c["code"]) for c in question["rubric"]["criteria"]] == [
        (c["id"], c["partId"], c["code"]) for c in scheme["criteria"]
    ]
    # A criterion's own scheme pages, or else the first selected scheme page.
    first = request_example["schemePages"][0]["pageId"]
    for given, sent in zip(scheme["criteria"], question["rubric"]["criteria"]):
        assert sent["sourcePageIds"] == (given["sourcePageIds"] or [first])


def test_evidence_cites_only_the_work_pages_sent(response: Json, request_example: Json) -> None:
    pages = {p["pageId"] for p in request_example["workPages"]}
    for d in response["question"]["decisions"]:
        cited = [e["pageId"] for e in d["evidence"]]
        cited += [e["pageId"] for c in d["conditionChecks"] for e in c.get("evidence", [])]
        assert cited and set(cited) <= pages, d


def test_an_answer_found_in_the_words_is_awarded_on_those_words(
    response: Json, request_example: Json
) -> None:
    d = decision(response, "4b-A1")
    assert d["outcome"] == "awarded"
    [evidence] = d["evidence"]
    page = request_example["workPages"][0]
    assert evidence["pageId"] == page["pageId"]
    assert evidence["quote"] == "x = 3"
    # The box holds the student's "3" (and not the printed question above the answer space).
    three = [w for w in page["words"] if w["text"] == "3"]
    assert len(three) == 1
    assert contains(evidence["box"], three[0]["bbox"])
    region = [r for r in page["answerRegions"] if r["partId"] == "b"][0]
    assert contains(region, evidence["box"])
    # Its condition is checked, and left uncertain.
    assert [c["index"] for c in d["conditionChecks"]] == [0]
    assert d["conditionChecks"][0]["result"] == "uncertain"


def test_a_blank_part_is_withheld_on_its_answer_space(response: Json, request_example: Json) -> None:
    d = decision(response, "4c-B1")
    assert d["outcome"] == "withheld"
    page = request_example["workPages"][1]
    region = {k: v for k, v in page["answerRegions"][0].items() if k != "partId"}
    assert d["evidence"] == [{"pageId": page["pageId"], "quote": "blank", "box": region}]


def test_a_method_mark_is_uncertain(response: Json) -> None:
    d = decision(response, "4b-M1")
    assert d["outcome"] == "uncertain"
    assert "method" in d["reason"]


def test_the_engine_scores_the_answer(response: Json, request_example: Json) -> None:
    outcome = examkit.validate(wrap(response), request_example["assets"])
    assert outcome["status"] == "needs_review"
    assert outcome["score"] == {"awarded": 1, "possible": 3, "max": 4}
    flags = [(f["code"], f.get("criterionId")) for f in outcome["questions"][0]["reviewFlags"]]
    assert flags == [("uncertain_decision", "4b-M1"), ("condition_uncertain", "4b-A1")]


# --- errors ---------------------------------------------------------------------------------


def test_a_missing_or_wrong_token_is_401(marker_url: str, request_example: Json) -> None:
    for token in (None, "not-the-secret", ""):
        status, headers, body = post_json(marker_url, request_example, token=token)
        assert status == 401, token
        assert headers["www-authenticate"].startswith("Bearer")
        assert isinstance(body["error"], str)


@pytest.mark.parametrize("body", [b"{", b"", b"\xff\xfe", b"[1, 2"])
def test_bad_json_is_400(marker_url: str, body: bytes) -> None:
    status, _, answer = post(marker_url, body)
    assert status == 400
    assert isinstance(answer["error"], str)


def test_a_document_that_is_no_request_is_400(marker_url: str, request_example: Json) -> None:
    wrong = copy.deepcopy(request_example)
    wrong["schemaVersion"] = "examkit-marker-request-v0"
    for document in ([], {"hello": "world"}, wrong):
        status, _, answer = post_json(marker_url, document)
        assert status == 400, document
        assert isinstance(answer["error"], str)


def test_an_unstructured_scheme_is_422(marker_url: str, request_example: Json) -> None:
    pages = copy.deepcopy(request_example)
    pages["scheme"] = {"kind": "pages"}
    assert schema_errors("marker-request-v1.schema.json", pages) == []
    status, _, answer = post_json(marker_url, pages)
    assert status == 422
    assert "unstructured" in answer["error"]


def test_a_question_the_engine_rejects_is_never_sent(marker_url: str, request_example: Json) -> None:
    # A scheme whose part (b) claims three marks for its two criteria: the marker copies it,
    # the engine rejects the question (part_max_mismatch), and the marker answers 500.
    odd = copy.deepcopy(request_example)
    odd["scheme"]["parts"][1]["maxMarks"] = 3
    status, _, answer = post_json(marker_url, odd)
    assert status == 500
    assert "question" not in answer
    assert [e["code"] for e in answer["errors"]] == ["part_max_mismatch"]


def test_the_marker_type_checks_strictly(tmp_path: Path) -> None:
    mypy = pytest.importorskip("mypy.api")
    stdout, stderr, status = mypy.run(
        ["--strict", "--cache-dir", str(tmp_path / "mypy"), str(MARKER)]
    )
    assert status == 0, stdout + stderr
