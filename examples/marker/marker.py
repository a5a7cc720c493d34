#!/usr/bin/env python3
"""An example external marker for examkit: an HTTP service that marks one question at a time.

examkit POSTs an `examkit-marker-request-v1` document (schemas/marker-request-v1.schema.json)
and expects an `examkit-marker-response-v1` answer (schemas/marker-response-v1.schema.json):
one `service-marking-import-v1` Question. See schemas/marker-contract.md.

This marker does no real marking. It shows the shape of the exchange with the simplest rules
that produce located evidence:

* an accuracy or independent mark (A1, B1...) is `awarded` when one of the scheme's accepted
  answers appears in the words indexing read on the work pages: inside the part's answer regions
  when the paper's layout gives the part any, else anywhere on the work pages. The evidence is
  the matching words (their boxes' union, their text as the quote);
* any mark of a part whose answer regions hold no words is `withheld`, with the answer region
  as evidence and the quote "blank";
* everything else is `uncertain`, with a reason: method marks (M1...) always, since the example
  marker does not judge method.

Before answering, it wraps the question in a full submission and validates it with the examkit
wheel against the request's assets, exactly as examkit will: an answer the engine rejects is
never sent (500 with the engine's errors instead).

Only the standard library and the examkit wheel are needed.

Run: python3 examples/marker/marker.py --port 8091 [--host 127.0.0.1] [--token SECRET]
(the token may also come from the environment variable EXAMKIT_MARKER_TOKEN).
"""

from __future__ import annotations

import argparse
import datetime
import hmac
import json
import math
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Sequence, Tuple, cast

import examkit

REQUEST_VERSION = "examkit-marker-request-v1"
NAME = "examkit example marker"
MODEL = "answer-match-1"
#: The largest request accepted: page images make requests large.
MAX_REQUEST_BYTES = 256 * 1024 * 1024
#: The longest quote built from a page's words.
MAX_QUOTE_CHARS = 200

Json = Dict[str, Any]
Box = Dict[str, float]


class Rejection(Exception):
    """A request the marker answers with an error status instead of a question."""

    def __init__(self, status: int, message: str, errors: Optional[List[Json]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors

    def body(self) -> Json:
        body: Json = {"error": self.message}
        if self.errors is not None:
            body["errors"] = self.errors
        return body


# ---------------------------------------------------------------------------------------------
# Reading the request


def _bad(path: str, problem: str) -> Rejection:
    return Rejection(400, f"not an {REQUEST_VERSION} request: {path or 'the body'} {problem}")


def _get(obj: Json, key: str, kind: type, path: str, optional: bool = False) -> Any:
    """obj[key], which must be of `kind` (bool is not a number)."""
    if key not in obj:
        if optional:
            return None
        raise _bad(f"{path}/{key}", "is missing")
    value = obj[key]
    kinds: Tuple[type, ...] = (int, float) if kind is float else (kind,)
    if not isinstance(value, kinds) or (kind is not bool and isinstance(value, bool)):
        raise _bad(f"{path}/{key}", f"must be {_kind_name(kind)}")
    return value


def _kind_name(kind: type) -> str:
    return {dict: "an object", list: "an array", str: "a string", float: "a number",
            int: "an integer", bool: "a boolean"}.get(kind, kind.__name__)


def _objects(obj: Json, key: str, path: str) -> List[Json]:
    items = cast(List[Any], _get(obj, key, list, path))
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _bad(f"{path}/{key}/{i}", "must be an object")
    return cast(List[Json], items)


def _strings(obj: Json, key: str, path: str) -> List[str]:
    items = cast(List[Any], _get(obj, key, list, path))
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise _bad(f"{path}/{key}/{i}", "must be a string")
    return cast(List[str], items)


def _box(obj: Json, path: str) -> Box:
    return {k: float(_get(obj, k, float, path)) for k in ("x", "y", "width", "height")}


def check_request(request: Any) -> Json:
    """The request, when it has the shape this marker relies on; else a 400 or 422 Rejection.

    This is a light check of what the marker reads, not the full schema: examkit sends
    requests that follow marker-request-v1.schema.json.
    """
    if not isinstance(request, dict):
        raise _bad("", "must be a JSON object")
    version = _get(request, "schemaVersion", str, "")
    if version != REQUEST_VERSION:
        raise _bad("/schemaVersion", f"must be {REQUEST_VERSION!r}, not {version!r}")
    _get(request, "label", str, "")
    _get(request, "pageSelections", dict, "")
    for i, asset in enumerate(_objects(request, "assets", "")):
        for key, kind in (("id", str), ("kind", str), ("pageCount", int)):
            _get(asset, key, kind, f"/assets/{i}")
    scheme = cast(Json, _get(request, "scheme", dict, ""))
    kind = _get(scheme, "kind", str, "/scheme")
    if kind == "pages":
        raise Rejection(
            422,
            "the example marker cannot mark an unstructured scheme (\"kind\": \"pages\"): it "
            "needs the scheme's criteria and accepted answers",
        )
    if kind != "structured":
        raise _bad("/scheme/kind", f"must be \"structured\" or \"pages\", not {kind!r}")
    for i, part in enumerate(_objects(scheme, "parts", "/scheme")):
        _get(part, "id", str, f"/scheme/parts/{i}")
        _get(part, "maxMarks", int, f"/scheme/parts/{i}")
        _get(part, "label", str, f"/scheme/parts/{i}", optional=True)
    for i, criterion in enumerate(_objects(scheme, "criteria", "/scheme")):
        path = f"/scheme/criteria/{i}"
        for key in ("id", "partId", "code", "requirement"):
            _get(criterion, key, str, path)
        for key in ("conditions", "dependsOn", "answers", "sourcePageIds"):
            _strings(criterion, key, path)
        _get(criterion, "conditionMode", str, path, optional=True)
    for i, page in enumerate(_objects(request, "workPages", "")):
        path = f"/workPages/{i}"
        _get(page, "pageId", str, path)
        for j, word in enumerate(_objects(page, "words", path)):
            _get(word, "text", str, f"{path}/words/{j}")
            _box(cast(Json, _get(word, "bbox", dict, f"{path}/words/{j}")), f"{path}/words/{j}/bbox")
        for j, region in enumerate(_objects(page, "answerRegions", path)):
            _get(region, "partId", str, f"{path}/answerRegions/{j}")
            _box(region, f"{path}/answerRegions/{j}")
    for i, page in enumerate(_objects(request, "schemePages", "")):
        _get(page, "pageId", str, f"/schemePages/{i}")
    return cast(Json, request)


# ---------------------------------------------------------------------------------------------
# Marking

_REPLACEMENTS = (
    ("$", ""),
    ("\\times", "*"),
    ("\u00d7", "*"),  # multiplication sign
    ("\u2212", "-"),  # minus sign
    ("\u2013", "-"),  # en dash, often read for a minus
    ("\u2012", "-"),  # figure dash
    ("\ufe63", "-"),  # small hyphen-minus
    ("\uff0d", "-"),  # fullwidth hyphen-minus
)


def normalise(text: str) -> str:
    """Simple normalisation for comparing an accepted answer with the words read: no `$`, no
    spaces, one kind of minus, `*` for a multiplication sign."""
    for old, new in _REPLACEMENTS:
        text = text.replace(old, new)
    return "".join(text.split())


def _same_line(a: Json, b: Json) -> bool:
    """Whether two words overlap vertically (an answer is not matched across lines)."""
    p, q = a["bbox"], b["bbox"]
    return bool(p["y"] < q["y"] + q["height"] and q["y"] < p["y"] + p["height"])


def find_answer(words: Sequence[Json], answer: str) -> Optional[List[Json]]:
    """The shortest run of consecutive words on one line whose text, normalised and joined,
    contains the normalised answer; None when there is none."""
    target = normalise(answer)
    if not target:
        return None
    texts = [normalise(str(w["text"])) for w in words]
    for i in range(len(words)):
        joined = ""
        for j in range(i, len(words)):
            if j > i and not _same_line(words[j - 1], words[j]):
                break
            joined += texts[j]
            if target in joined:
                if target in joined[len(texts[i]):]:
                    break  # the match does not need word i: a later start finds it
                return list(words[i:j + 1])
            if len(joined) >= len(texts[i]) + len(target):
                break  # any match starting in word i would already be inside `joined`
    return None


def _inside(word: Json, region: Box) -> bool:
    """Whether a word's centre lies in a region."""
    b = word["bbox"]
    cx, cy = b["x"] + b["width"] / 2, b["y"] + b["height"] / 2
    return bool(region["x"] <= cx <= region["x"] + region["width"]
                and region["y"] <= cy <= region["y"] + region["height"])


def _span(starts: Sequence[float], ends: Sequence[float]) -> Tuple[float, float]:
    """(start, length) covering every interval on 0..1, widened outwards to a millionth and
    never empty (the engine needs a positive width and height)."""
    lo = min(1.0, max(0.0, math.floor(min(starts) * 1e6) / 1e6))
    hi = min(1.0, max(0.0, math.ceil(max(ends) * 1e6) / 1e6))
    if hi - lo < 1e-6:
        lo, hi = (lo, lo + 1e-6) if lo + 1e-6 <= 1.0 else (1.0 - 1e-6, 1.0)
    return lo, round(hi - lo, 6)


def union(boxes: Sequence[Box]) -> Box:
    """The smallest box holding every box, kept on the page."""
    x, width = _span([b["x"] for b in boxes], [b["x"] + b["width"] for b in boxes])
    y, height = _span([b["y"] for b in boxes], [b["y"] + b["height"] for b in boxes])
    return {"x": x, "y": y, "width": width, "height": height}


def _quote(words: Sequence[Json]) -> str:
    text = " ".join(str(w["text"]) for w in words).strip()
    if len(text) > MAX_QUOTE_CHARS:
        text = text[: MAX_QUOTE_CHARS - 1].rstrip() + "\u2026"
    return text


def _words_evidence(page_id: str, words: Sequence[Json]) -> Json:
    return {"pageId": page_id, "quote": _quote(words), "box": union([w["bbox"] for w in words])}


class Part:
    """What the work pages hold for one part: its answer regions and the words inside them."""

    def __init__(self, part_id: str, pages: Sequence[Json]) -> None:
        self.id = part_id
        # (pageId, region, words inside it), in page order.
        self.regions: List[Tuple[str, Box, List[Json]]] = []
        for page in pages:
            for region in page["answerRegions"]:
                if region["partId"] == part_id:
                    box = {k: float(region[k]) for k in ("x", "y", "width", "height")}
                    inside = [w for w in page["words"] if _inside(w, box)]
                    if box["width"] <= 0 or box["height"] <= 0:
                        box = union([box])  # an empty region cannot be evidence as it is
                    self.regions.append((page["pageId"], box, inside))
        # Where to look for an answer: the answer regions when the layout gives any, else every
        # word of the work pages (a marking session made without a saved paper).
        self.search: List[Tuple[str, List[Json]]]
        if self.regions:
            self.search = [(page_id, words) for page_id, _, words in self.regions]
        else:
            self.search = [(page["pageId"], list(page["words"])) for page in pages]

    @property
    def blank(self) -> bool:
        """Whether the part has answer regions and none holds a word."""
        return bool(self.regions) and not any(words for _, _, words in self.regions)

    def find(self, answers: Sequence[str]) -> Optional[Tuple[str, str, List[Json]]]:
        """(answer, pageId, words) of the first accepted answer found."""
        for answer in answers:
            for page_id, words in self.search:
                found = find_answer(words, answer)
                if found:
                    return answer, page_id, found
        return None

    def blank_evidence(self) -> List[Json]:
        return [{"pageId": page_id, "quote": "blank", "box": box} for page_id, box, _ in self.regions]

    def context_evidence(self, pages: Sequence[Json]) -> List[Json]:
        """What the marker looked at, for an uncertain decision."""
        evidence = [
            _words_evidence(page_id, words) if words else
            {"pageId": page_id, "quote": "blank", "box": box}
            for page_id, box, words in self.regions
        ]
        if evidence:
            return evidence
        # No layout for the part: the whole first work page.
        page = pages[0]
        words = list(page["words"])
        quote = _quote(words) if words else f"page {page['pageId']} of the student's work, no words read"
        return [{"pageId": page["pageId"], "quote": quote,
                 "box": {"x": 0.0, "y": 0.0, "width": 1.0, "height": 1.0}}]


def is_method_mark(code: str) -> bool:
    return code.lstrip("d").startswith("M")


def decide(criterion: Json, part: Part, pages: Sequence[Json]) -> Json:
    """The decision for one criterion, with a check for each of its conditions."""
    code = criterion["code"]
    answers: List[str] = criterion["answers"]
    conditions: List[str] = criterion["conditions"]
    found = None if is_method_mark(code) else part.find(answers)
    if found is not None:
        answer, page_id, words = found
        evidence = [_words_evidence(page_id, words)]
        outcome = "awarded"
        reason = f"The accepted answer {answer} appears in the student's work: {_quote(words)}."
        check = ("uncertain", "the example marker does not check conditions")
    elif part.blank:
        evidence = part.blank_evidence()
        outcome = "withheld"
        reason = f"The answer space of part {part.id} is blank."
        check = ("not_met", "the answer space is blank")
    else:
        evidence = part.context_evidence(pages)
        outcome = "uncertain"
        if is_method_mark(code):
            reason = "The example marker does not judge method."
        elif not answers:
            reason = "The scheme lists no answer to look for, and the example marker does not judge this mark."
        else:
            listed = "; ".join(answers)
            reason = f"None of the accepted answers ({listed}) was found in the student's work for part {part.id}."
        check = ("uncertain", "the example marker does not check conditions")
    checks: List[Json] = []
    for index in range(len(conditions)):
        result, note = check
        item: Json = {"index": index, "result": result, "note": note}
        if result == "not_met":
            item["evidence"] = evidence
        checks.append(item)
    return {"criterionId": criterion["id"], "outcome": outcome, "reason": reason,
            "evidence": evidence, "conditionChecks": checks}


def first_scheme_page(request: Json) -> str:
    """The first selected scheme page: cited by a criterion whose scheme pages are not known."""
    for page in request["schemePages"]:
        return str(page["pageId"])
    schemes = [a["id"] for a in request["assets"] if a["kind"] == "scheme"]
    for asset_id, pages in request["pageSelections"].items():
        if asset_id in schemes and pages:
            return f"{asset_id}:p{pages[0]}"
    raise Rejection(400, f"not an {REQUEST_VERSION} request: the question selects no scheme page")


def mark(request: Json) -> Json:
    """The marked question for a checked request."""
    scheme = request["scheme"]
    pages: List[Json] = request["workPages"]
    if not pages:
        raise _bad("/workPages", "must list at least one page")
    fallback = first_scheme_page(request)
    parts = {p["id"]: Part(p["id"], pages) for p in scheme["parts"]}
    criteria: List[Json] = []
    decisions: List[Json] = []
    for c in scheme["criteria"]:
        criterion: Json = {
            "id": c["id"], "partId": c["partId"], "code": c["code"],
            "requirement": c["requirement"], "conditions": list(c["conditions"]),
        }
        if "conditionMode" in c:
            criterion["conditionMode"] = c["conditionMode"]
        criterion.update({
            "dependsOn": list(c["dependsOn"]), "maxMarks": 1,
            "sourcePageIds": list(c["sourcePageIds"]) or [fallback],
        })
        criteria.append(criterion)
        # A criterion naming no part of the scheme is left to the engine to reject.
        part = parts.get(c["partId"]) or Part(c["partId"], pages)
        decisions.append(decide(c, part, pages))
    rubric_parts = []
    for p in scheme["parts"]:
        part_out: Json = {"id": p["id"]}
        if "label" in p:
            part_out["label"] = p["label"]
        part_out["maxMarks"] = p["maxMarks"]
        rubric_parts.append(part_out)
    return {
        "label": request["label"],
        "pageSelections": request["pageSelections"],
        "rubric": {"parts": rubric_parts, "criteria": criteria},
        "decisions": decisions,
    }


def wrap(question: Json, name: str = NAME, model: str = MODEL,
         marked_at: Optional[str] = None) -> Json:
    """The submission examkit builds around an answer's question (marker-contract.md)."""
    if marked_at is None:
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        marked_at = now.isoformat().replace("+00:00", "Z")
    return {
        "schemaVersion": examkit.SCHEMA_VERSION,
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": {"kind": "ai", "name": name, "model": model, "markedAt": marked_at},
        "coverage": {"kind": "partial", "questionLabels": [question["label"]],
                     "totalMarks": len(question["rubric"]["criteria"])},
        "questions": [question],
    }


def answer(request: Any) -> Json:
    """The response body for a parsed request body; raises Rejection for an error status."""
    checked = check_request(request)
    question = mark(checked)
    assets = cast(List[examkit.Asset], checked["assets"])
    try:
        outcome = examkit.validate(wrap(question), assets)
    except ValueError as error:  # a malformed assets list
        raise _bad("/assets", f"is not a valid list of assets: {error}") from error
    if not outcome["valid"]:
        raise Rejection(500, "the marker built a question the examkit engine rejects",
                        errors=cast(List[Json], outcome["errors"]))
    return {"question": question, "model": MODEL, "name": NAME}


# ---------------------------------------------------------------------------------------------
# HTTP


class MarkerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: Tuple[str, int], token: Optional[str]) -> None:
        super().__init__(address, Handler)
        self.token = token or None


class Handler(BaseHTTPRequestHandler):
    server: MarkerServer
    server_version = "examkit-example-marker/1"

    def do_POST(self) -> None:
        try:
            self._authorise()
            body = self._read_body()
            try:
                request = json.loads(body)
            except (ValueError, UnicodeDecodeError) as error:
                raise Rejection(400, f"the body is not JSON: {error}") from error
            self._send(200, answer(request))
        except Rejection as rejection:
            self._send(rejection.status, rejection.body())
        except Exception as error:  # keep serving; examkit retries a 5xx
            self.log_error("marking failed: %r", error)
            self._send(500, {"error": f"the marker failed: {error}"})

    def do_GET(self) -> None:
        self._send(405, {"error": "POST an examkit-marker-request-v1 document"},
                   {"Allow": "POST"})

    def _authorise(self) -> None:
        token = self.server.token
        if token is None:
            return
        given = self.headers.get("Authorization", "")
        scheme, _, secret = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
                secret.strip().encode("utf-8"), token.encode("utf-8")):
            self.close_connection = True  # the body is not read
            raise Rejection(401, "missing or wrong bearer token")

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self.close_connection = True
            raise Rejection(411, "Content-Length is required")
        size = int(length)
        if size > MAX_REQUEST_BYTES:
            self.close_connection = True
            raise Rejection(413, f"the request is larger than {MAX_REQUEST_BYTES} bytes")
        return self.rfile.read(size)

    def _send(self, status: int, body: Json, headers: Optional[Dict[str, str]] = None) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="examkit-marker"')
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="An example external marker for examkit.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8091, help="port (8091; 0 picks a free one)")
    parser.add_argument("--token", default=os.environ.get("EXAMKIT_MARKER_TOKEN") or None,
                        help="the shared secret examkit sends as a bearer token "
                             "(default: $EXAMKIT_MARKER_TOKEN; none: no authentication)")
    args = parser.parse_args(argv)
    server = MarkerServer((args.host, args.port), args.token)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"examkit example marker listening on http://{host}:{server.server_port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
