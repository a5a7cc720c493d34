#!/usr/bin/env python3
"""Check an examkit question bank (examkit-question-bank-v1) with the standard library only.

A bank is a folder of *.json files (or a single file). The checker

1. reads each file as strict JSON (UTF-8, no byte order mark, no duplicate keys),
2. validates it against schemas/question-bank.schema.json with a small built-in validator that
   implements exactly the JSON Schema keywords that schema uses (and refuses any other keyword, so
   the two cannot drift apart silently),
3. checks the rules JSON Schema cannot express, across all files of the bank (see
   service/bank/README.md, "Rules the importer enforces"), and
4. prints a summary of the bank's composition.

Usage:
    python3 service/bank/check.py [BANK_PATH] [--schema SCHEMA] [--typeset] [--quiet]

BANK_PATH defaults to the sample bank beside this script. --typeset also compiles every piece of
maths with the `typst` Python package (not part of the standard library; only for authors who have
it installed). Exit status: 0 when the bank passes, 1 when it has errors, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_BANK = HERE / "sample"
DEFAULT_SCHEMA = HERE.parent.parent / "schemas" / "question-bank.schema.json"

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
MAX_ASSET_BYTES = 1024 * 1024
FORBIDDEN_SVG_ELEMENTS = {"script", "foreignObject", "iframe", "embed", "object", "image"}


class Report:
    """Collects errors as (file, JSON pointer, message)."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, str, str]] = []

    def error(self, file: str, pointer: str, message: str) -> None:
        self.errors.append((file, pointer, message))


def pointer(*parts: object) -> str:
    """RFC 6901 JSON Pointer from path segments."""
    out = ""
    for p in parts:
        out += "/" + str(p).replace("~", "~0").replace("/", "~1")
    return out


# ---------------------------------------------------------------------------------------------
# Strict JSON reading


class DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def read_json(path: Path) -> object:
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ValueError("byte order mark")
    text = raw.decode("utf-8")
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)


# ---------------------------------------------------------------------------------------------
# A minimal JSON Schema (draft 2020-12) validator for the keywords the bank schema uses

KNOWN_KEYWORDS = {
    "$schema", "$id", "$defs", "$ref", "title", "description",
    "type", "const", "enum", "pattern", "minLength", "maxLength",
    "minimum", "maximum", "exclusiveMinimum",
    "properties", "required", "additionalProperties",
    "items", "minItems", "maxItems", "uniqueItems",
    "oneOf", "allOf", "if", "then",
}


def _is_integer(v: object) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, float) and math.isfinite(v) and v.is_integer()


def _is_number(v: object) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float))


def _json_equal(a: object, b: object) -> bool:
    if _is_number(a) and _is_number(b):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return a == b


TYPE_CHECKS = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class SchemaValidator:
    """Validates instances against the bank schema; errors are (pointer, message)."""

    def __init__(self, schema: dict) -> None:
        self.root = schema
        self._patterns: dict[str, re.Pattern[str]] = {}
        self._check_keywords(schema, "#")

    def _check_keywords(self, node: object, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key not in KNOWN_KEYWORDS:
                    raise ValueError(f"schema keyword {key!r} at {where} is not supported by check.py")
                if key in ("properties", "$defs"):
                    for name, sub in value.items():
                        self._check_keywords(sub, f"{where}/{key}/{name}")
                elif key in ("oneOf", "allOf"):
                    for i, sub in enumerate(value):
                        self._check_keywords(sub, f"{where}/{key}/{i}")
                elif key in ("items", "additionalProperties", "if", "then") and isinstance(value, dict):
                    self._check_keywords(value, f"{where}/{key}")

    def _resolve(self, ref: str) -> dict:
        if not ref.startswith("#/"):
            raise ValueError(f"unsupported $ref {ref!r}")
        node: object = self.root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]  # type: ignore[index]
        return node  # type: ignore[return-value]

    def _pattern(self, p: str) -> re.Pattern[str]:
        if p not in self._patterns:
            self._patterns[p] = re.compile(p)
        return self._patterns[p]

    def errors(self, instance: object, schema: dict | None = None, path: str = "") -> list[tuple[str, str]]:
        schema = self.root if schema is None else schema
        out: list[tuple[str, str]] = []
        if "$ref" in schema:
            out += self.errors(instance, self._resolve(schema["$ref"]), path)
        if "type" in schema and not TYPE_CHECKS[schema["type"]](instance):
            return out + [(path, f"expected {schema['type']}")]
        if "const" in schema and not _json_equal(instance, schema["const"]):
            out.append((path, f"must be {json.dumps(schema['const'])}"))
        if "enum" in schema and not any(_json_equal(instance, e) for e in schema["enum"]):
            out.append((path, "must be one of " + ", ".join(json.dumps(e) for e in schema["enum"])))
        if isinstance(instance, str):
            if "minLength" in schema and len(instance) < schema["minLength"]:
                out.append((path, f"shorter than {schema['minLength']} characters"))
            if "maxLength" in schema and len(instance) > schema["maxLength"]:
                out.append((path, f"longer than {schema['maxLength']} characters"))
            if "pattern" in schema and not self._pattern(schema["pattern"]).search(instance):
                out.append((path, f"does not match {schema['pattern']}"))
        if _is_number(instance):
            if "minimum" in schema and instance < schema["minimum"]:
                out.append((path, f"less than {schema['minimum']}"))
            if "maximum" in schema and instance > schema["maximum"]:
                out.append((path, f"greater than {schema['maximum']}"))
            if "exclusiveMinimum" in schema and instance <= schema["exclusiveMinimum"]:
                out.append((path, f"not greater than {schema['exclusiveMinimum']}"))
        if isinstance(instance, dict):
            props = schema.get("properties", {})
            for name in schema.get("required", []):
                if name not in instance:
                    out.append((path + pointer(name), "required"))
            for name, value in instance.items():
                if name in props:
                    out += self.errors(value, props[name], path + pointer(name))
                elif schema.get("additionalProperties") is False:
                    out.append((path + pointer(name), "unknown field"))
        if isinstance(instance, list):
            if "minItems" in schema and len(instance) < schema["minItems"]:
                out.append((path, f"fewer than {schema['minItems']} items"))
            if "maxItems" in schema and len(instance) > schema["maxItems"]:
                out.append((path, f"more than {schema['maxItems']} items"))
            if schema.get("uniqueItems"):
                for i, item in enumerate(instance):
                    if any(_json_equal(item, earlier) for earlier in instance[:i]):
                        out.append((path + pointer(i), "repeats an earlier item"))
            if "items" in schema:
                for i, item in enumerate(instance):
                    out += self.errors(item, schema["items"], path + pointer(i))
        if "oneOf" in schema:
            results = [self.errors(instance, sub, path) for sub in schema["oneOf"]]
            passing = sum(1 for r in results if not r)
            if passing != 1:
                if passing == 0 and isinstance(instance, dict) and "type" in instance:
                    # Blocks: report against the branch whose "type" constant matches.
                    for sub, r in zip(schema["oneOf"], results):
                        target = self._resolve(sub["$ref"]) if "$ref" in sub else sub
                        const = target.get("properties", {}).get("type", {}).get("const")
                        if const is not None and _json_equal(const, instance["type"]):
                            out += r
                            break
                    else:
                        out.append((path + "/type", "unknown block type"))
                else:
                    out.append((path, f"matches {passing} of the alternatives, expected exactly one"))
        for sub in schema.get("allOf", []):
            out += self.errors(instance, sub, path)
        if "if" in schema and not self.errors(instance, schema["if"], path) and "then" in schema:
            out += self.errors(instance, schema["then"], path)
        return out


# ---------------------------------------------------------------------------------------------
# Maths in text


def inline_maths(text: str) -> tuple[list[str], str | None]:
    """Split text into its inline maths segments; returns (segments, error)."""
    segments: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "$":
            i += 2
            continue
        if c == "$":
            j = i + 1
            while j < n and text[j] != "$":
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            if j >= n:
                return segments, f"unclosed $ at character {i + 1}"
            segments.append(text[i + 1 : j])
            i = j + 1
            continue
        i += 1
    return segments, None


def maths_problem(math: str) -> str | None:
    if not math.strip():
        return "empty maths"
    if "#" in math:
        return "maths must not contain # (typst code)"
    if "//" in math or "/*" in math:
        return "maths must not contain // or /* (typst comments)"
    return None


# ---------------------------------------------------------------------------------------------
# SVG assets


def svg_problem(path: Path) -> str | None:
    size = path.stat().st_size
    if size > MAX_ASSET_BYTES:
        return f"larger than {MAX_ASSET_BYTES} bytes"
    raw = path.read_bytes()
    if b"<!DOCTYPE" in raw or b"<!ENTITY" in raw:
        return "must not contain a DOCTYPE or entity declarations"
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        return f"not well-formed XML: {exc}"
    if root.tag != f"{{{SVG_NS}}}svg":
        return "root element is not an SVG <svg> element"
    for el in root.iter():
        local = el.tag.split("}", 1)[-1] if isinstance(el.tag, str) else ""
        if local in FORBIDDEN_SVG_ELEMENTS:
            return f"must not contain <{local}>"
        for name, value in el.attrib.items():
            attr = name.split("}", 1)[-1]
            if attr.lower().startswith("on"):
                return f"must not carry event attribute {attr}"
            if attr == "href" and not value.startswith("#"):
                return f"must not reference external content ({value})"
            if "url(" in value and "url(#" not in value.replace(" ", ""):
                return "must not reference external content through url()"
        if local == "style" and el.text and ("@import" in el.text or re.search(r"url\(\s*[^#\s]", el.text)):
            return "style must not import or reference external content"
    return None


# ---------------------------------------------------------------------------------------------
# Bank rules


FACET_KINDS = ("course", "board", "module", "topic", "subtopic")

# Rule 7: an accuracy criterion with empty answers carries a note saying why, one of these alone or
# followed by ":" and more words ("answer given: a conclusion is needed").
NO_ANSWER_REASONS = ("no single final answer", "answer given", "proof", "sketch", "explanation")
NO_ANSWERS_MESSAGE = ('an accuracy mark with no answers needs a note saying why: '
                      '"no single final answer", "answer given", "proof", "sketch" or "explanation"')


def is_accuracy_code(code: str) -> bool:
    """A1, dA1, A1ft, A1*, dA1ft..."""
    return (code[1:] if code.startswith("d") else code).startswith("A")


def says_why_no_answers(note: str) -> bool:
    return any(note == reason or note.startswith(reason + ":") for reason in NO_ANSWER_REASONS)


def load_bank(bank: Path, report: Report, validator: SchemaValidator | None) -> list[tuple[Path, dict]]:
    if bank.is_dir():
        files = sorted(p for p in bank.iterdir() if p.suffix == ".json" and p.is_file())
        if not files:
            report.error(str(bank), "", "no *.json files in the bank folder")
    elif bank.is_file():
        files = [bank]
    else:
        report.error(str(bank), "", "no such file or folder")
        files = []
    docs: list[tuple[Path, dict]] = []
    for path in files:
        try:
            doc = read_json(path)
        except (ValueError, UnicodeDecodeError) as exc:
            report.error(path.name, "", f"invalid JSON: {exc}")
            continue
        if validator is not None:
            errs = validator.errors(doc)
            for ptr, msg in errs:
                report.error(path.name, ptr, msg)
            if errs:
                continue
        if not isinstance(doc, dict):
            report.error(path.name, "", "a bank file is a JSON object")
            continue
        docs.append((path, doc))
    return docs


def check_bank(docs: list[tuple[Path, dict]], report: Report) -> None:
    # Facets: merged across files; a repeat must be identical.
    facets: dict[str, dict[str, dict]] = {k: {} for k in FACET_KINDS}
    for path, doc in docs:
        for kind, options in doc.get("facets", {}).items():
            local: set[str] = set()
            for i, opt in enumerate(options):
                where = pointer("facets", kind, i, "id")
                fid = opt["id"]
                if fid in local:
                    report.error(path.name, where, f"{kind} id {fid!r} declared twice in this file")
                    continue
                local.add(fid)
                if fid in facets[kind] and facets[kind][fid] != opt:
                    report.error(path.name, where, f"{kind} id {fid!r} declared differently in another file")
                facets[kind].setdefault(fid, opt)
    courses: dict[tuple[str, str], str] = {}
    for (path, doc) in docs:
        for i, opt in enumerate(doc.get("facets", {}).get("course", [])):
            expected = f"{opt['level']}-{opt['subject']}"
            if opt["id"] != expected:
                report.error(path.name, pointer("facets", "course", i, "id"), f"course id must be {expected!r}")
            courses[(opt["level"], opt["subject"])] = opt["id"]
        for i, opt in enumerate(doc.get("facets", {}).get("subtopic", [])):
            if opt["topic"] not in facets["topic"]:
                report.error(path.name, pointer("facets", "subtopic", i, "topic"), f"unknown topic {opt['topic']!r}")

    question_ids: dict[str, str] = {}
    asset_owner: dict[str, tuple[str, str]] = {}  # asset id -> (question id, normalised file)
    for path, doc in docs:
        for qi, q in enumerate(doc["questions"]):
            qptr = pointer("questions", qi)
            if q["id"] in question_ids:
                report.error(path.name, qptr + "/id", f"question id repeats one in {question_ids[q['id']]}")
            else:
                question_ids[q["id"]] = path.name
            revs = q["revisions"]
            for ri, rev in enumerate(revs):
                rptr = qptr + pointer("revisions", ri)
                if rev["revision"] != ri + 1:
                    report.error(path.name, rptr + "/revision", f"expected revision {ri + 1}")
                if rev["status"] == "draft" and ri != len(revs) - 1:
                    report.error(path.name, rptr + "/status", "only the last revision may be a draft")
                check_revision(path, rptr, q["id"], rev, facets, courses, asset_owner, report)


def check_revision(path: Path, rptr: str, qid: str, rev: dict, facets: dict, courses: dict,
                   asset_owner: dict, report: Report) -> None:
    f = path.name

    def need(kind: str, value: str, ptr: str) -> None:
        if value not in facets[kind]:
            report.error(f, ptr, f"unknown {kind} {value!r}")

    need("topic", rev["topic"], rptr + "/topic")
    need("subtopic", rev["subtopic"], rptr + "/subtopic")
    sub = facets["subtopic"].get(rev["subtopic"])
    if sub is not None and sub["topic"] != rev["topic"]:
        report.error(f, rptr + "/subtopic", f"subtopic {rev['subtopic']!r} belongs to topic {sub['topic']!r}")
    for i, m in enumerate(rev["moduleProfiles"]):
        need("module", m, rptr + pointer("moduleProfiles", i))
    for i, src in enumerate(rev["sources"]):
        sptr = rptr + pointer("sources", i)
        need("board", src["board"], sptr + "/board")
        need("module", src["module"], sptr + "/module")
        if (src["level"], src["subject"]) not in courses:
            report.error(f, sptr, f"no course declared for {src['level']} {src['subject']}")
        if src["module"] not in rev["moduleProfiles"]:
            report.error(f, sptr + "/module", "a source's module must be one of moduleProfiles")

    for field in ("title", "summary"):
        if "$" in rev[field]:
            report.error(f, rptr + "/" + field, "plain text: no maths or $ signs")

    # Content and scheme parts.
    cparts = rev["content"]["parts"]
    cids = [p["id"] for p in cparts]
    for i, pid in enumerate(cids):
        if pid in cids[:i]:
            report.error(f, rptr + pointer("content", "parts", i, "id"), f"part id {pid!r} repeats")
    if len(cparts) > 1:
        for i, p in enumerate(cparts):
            if "label" not in p:
                report.error(f, rptr + pointer("content", "parts", i), "label required when there are several parts")
    sparts = rev["scheme"]["parts"]
    sids = [p["id"] for p in sparts]
    if sids != cids:
        report.error(f, rptr + "/scheme/parts", f"scheme parts {sids} must be the content parts {cids} in order")
    criteria = rev["scheme"]["criteria"]
    per_part = Counter(c["partId"] for c in criteria)
    cmarks = {p["id"]: p["marks"] for p in cparts}
    for i, p in enumerate(sparts):
        pptr = rptr + pointer("scheme", "parts", i, "maxMarks")
        if p["maxMarks"] != per_part.get(p["id"], 0):
            report.error(f, pptr, f"maxMarks {p['maxMarks']} but the part has {per_part.get(p['id'], 0)} criteria")
        if p["id"] in cmarks and cmarks[p["id"]] != p["maxMarks"]:
            report.error(f, pptr, f"maxMarks {p['maxMarks']} but the content part shows {cmarks[p['id']]} marks")
    if rev["marks"] != len(criteria):
        report.error(f, rptr + "/marks", f"marks {rev['marks']} but the scheme has {len(criteria)} criteria")

    # Criteria: ids, parts, dependencies.
    ids: dict[str, int] = {}
    for i, c in enumerate(criteria):
        cptr = rptr + pointer("scheme", "criteria", i)
        if c["id"] in ids:
            report.error(f, cptr + "/id", f"criterion id {c['id']!r} repeats")
        else:
            ids[c["id"]] = i
        if c["partId"] not in sids:
            report.error(f, cptr + "/partId", f"unknown part {c['partId']!r}")
        if is_accuracy_code(c["code"]) and not c["answers"] and not any(map(says_why_no_answers, c["notes"])):
            report.error(f, cptr + "/answers", NO_ANSWERS_MESSAGE)
    graph: dict[str, list[str]] = {}
    for i, c in enumerate(criteria):
        cptr = rptr + pointer("scheme", "criteria", i)
        for j, d in enumerate(c["dependsOn"]):
            if d == c["id"]:
                report.error(f, cptr + pointer("dependsOn", j), "a criterion cannot depend on itself")
            elif d not in ids:
                report.error(f, cptr + pointer("dependsOn", j), f"unknown criterion {d!r}")
            else:
                graph.setdefault(c["id"], []).append(d)
    for cycle_member in find_cycle_members(graph):
        report.error(f, rptr + pointer("scheme", "criteria", ids[cycle_member], "dependsOn"),
                     f"criterion {cycle_member!r} lies on a dependency cycle")

    # Maths.
    def text_field(value: str, ptr: str) -> list[str]:
        segs, err = inline_maths(value)
        if err:
            report.error(f, ptr, err)
        for s in segs:
            problem = maths_problem(s)
            if problem:
                report.error(f, ptr, problem)
        return segs

    used_assets: list[tuple[str, str]] = []
    blocks = [("content/stem", b) for b in rev["content"]["stem"]]
    for pi, p in enumerate(cparts):
        blocks += [(f"content/parts/{pi}/body", b) for b in p["body"]]
    counters: Counter[str] = Counter()
    for base, b in blocks:
        idx = counters[base]
        counters[base] += 1
        bptr = f"{rptr}/{base}/{idx}"
        if b["type"] == "text":
            text_field(b["text"], bptr + "/text")
        elif b["type"] == "math":
            problem = maths_problem(b["math"])
            if problem:
                report.error(f, bptr + "/math", problem)
        elif b["type"] == "list":
            for k, item in enumerate(b["items"]):
                text_field(item, f"{bptr}/items/{k}")
        elif b["type"] == "diagram":
            if "$" in b["alt"]:
                report.error(f, bptr + "/alt", "plain text: no maths or $ signs")
            used_assets.append((b["asset"], bptr + "/asset"))
    for i, c in enumerate(criteria):
        cptr = rptr + pointer("scheme", "criteria", i)
        text_field(c["requirement"], cptr + "/requirement")
        for key in ("conditions", "answers", "notes"):
            for k, v in enumerate(c[key]):
                text_field(v, cptr + pointer(key, k))

    # Assets.
    declared: dict[str, int] = {}
    bank_dir = path.parent.resolve()
    for i, a in enumerate(rev.get("assets", [])):
        aptr = rptr + pointer("assets", i)
        if a["id"] in declared:
            report.error(f, aptr + "/id", "asset id repeats within the revision")
            continue
        declared[a["id"]] = i
        norm = os.path.normpath(a["file"])
        owner = asset_owner.get(a["id"])
        if owner is None:
            asset_owner[a["id"]] = (qid, norm)
        elif owner[0] != qid:
            report.error(f, aptr + "/id", "asset id already used by another question")
        elif owner[1] != norm:
            report.error(f, aptr + "/file", "asset id already names another file")
        target = (bank_dir / a["file"]).resolve()
        if bank_dir not in target.parents:
            report.error(f, aptr + "/file", "file lies outside the bank folder")
        elif not target.is_file():
            report.error(f, aptr + "/file", f"file {a['file']!r} not found")
        else:
            problem = svg_problem(target)
            if problem:
                report.error(f, aptr + "/file", f"SVG {a['file']!r}: {problem}")
    used_ids = {a for a, _ in used_assets}
    for a, ptr in used_assets:
        if a not in declared:
            report.error(f, ptr, "diagram refers to an asset not declared in this revision")
    for a, i in declared.items():
        if a not in used_ids:
            report.error(f, rptr + pointer("assets", i), "asset is not used by any diagram")


def find_cycle_members(graph: dict[str, list[str]]) -> list[str]:
    """Nodes lying on a cycle (Tarjan's strongly connected components), in first-seen order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    members: list[str] = []
    counter = [0]
    nodes = list(graph)
    for targets in graph.values():
        nodes += [t for t in targets if t not in graph]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                members.extend(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    order = {v: i for i, v in enumerate(nodes)}
    return sorted(members, key=lambda v: order[v])


# ---------------------------------------------------------------------------------------------
# Optional typesetting of every piece of maths


def typeset_all(docs: list[tuple[Path, dict]], report: Report) -> int:
    try:
        import typst  # type: ignore[import-not-found]
    except ImportError:
        report.error("", "", "--typeset needs the typst Python package")
        return 0
    import tempfile

    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "m.typ"

        def compiles(snippets: list[tuple[str, str, bool]]) -> str | None:
            body = "\n\n".join(f"$ {m} $" if display else f"${m}$" for _, m, display in snippets)
            src.write_text(body, encoding="utf-8")
            try:
                if hasattr(typst, "compile_with_warnings"):
                    _, warnings = typst.compile_with_warnings(str(src))
                    if warnings:  # deprecated names stop working in later typst releases
                        return "warning: " + str(warnings[0]).splitlines()[0]
                else:
                    typst.compile(str(src))
            except Exception as exc:  # the binding raises its own error type
                return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return None

        for path, doc in docs:
            for qi, q in enumerate(doc["questions"]):
                for ri, rev in enumerate(q["revisions"]):
                    snippets = revision_maths(rev)
                    count += len(snippets)
                    if compiles(snippets) is None:
                        continue
                    for snippet in snippets:  # locate the failures one by one
                        message = compiles([snippet])
                        if message is not None:
                            report.error(path.name, pointer("questions", qi, "revisions", ri) + snippet[0],
                                         f"typst cannot typeset {snippet[1]!r}: {message}")
    return count


def revision_maths(rev: dict) -> list[tuple[str, str, bool]]:
    out: list[tuple[str, str, bool]] = []

    def texts(value: str, ptr: str) -> None:
        segs, _ = inline_maths(value)
        out.extend((ptr, s, False) for s in segs)

    blocks = [("/content/stem/" + str(i), b) for i, b in enumerate(rev["content"]["stem"])]
    for pi, p in enumerate(rev["content"]["parts"]):
        blocks += [(f"/content/parts/{pi}/body/{i}", b) for i, b in enumerate(p["body"])]
    for ptr, b in blocks:
        if b["type"] == "text":
            texts(b["text"], ptr + "/text")
        elif b["type"] == "math":
            out.append((ptr + "/math", b["math"], True))
        elif b["type"] == "list":
            for k, item in enumerate(b["items"]):
                texts(item, f"{ptr}/items/{k}")
    for i, c in enumerate(rev["scheme"]["criteria"]):
        cptr = f"/scheme/criteria/{i}"
        texts(c["requirement"], cptr + "/requirement")
        for key in ("conditions", "answers", "notes"):
            for k, v in enumerate(c[key]):
                texts(v, f"{cptr}/{key}/{k}")
    return out


# ---------------------------------------------------------------------------------------------
# Summary


def summary(docs: list[tuple[Path, dict]]) -> str:
    lines = []
    questions = [q for _, doc in docs for q in doc["questions"]]
    revisions = [r for q in questions for r in q["revisions"]]
    served = [next(r for r in reversed(q["revisions"]) if r["status"] == "published")
              for q in questions if any(r["status"] == "published" for r in q["revisions"])]
    status = Counter(r["status"] for r in revisions)
    lines.append(f"files: {len(docs)}; questions: {len(questions)}; served (with a published revision): {len(served)}")
    lines.append("revisions: " + ", ".join(f"{k} {status[k]}" for k in ("published", "withdrawn", "draft")) +
                 f"; questions with several revisions: {sum(1 for q in questions if len(q['revisions']) > 1)}")
    lines.append("The counts below describe the latest published revision of each served question "
                 "(by its first source).")

    def table(title: str, counter: Counter) -> None:
        lines.append(f"{title}:")
        for key, n in sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            lines.append(f"  {key:<40} {n}")

    table("by subject", Counter(r["sources"][0]["subject"] for r in served))
    table("by level", Counter(r["sources"][0]["level"] for r in served))
    table("by course", Counter(f"{r['sources'][0]['level']}-{r['sources'][0]['subject']}" for r in served))
    table("by board", Counter(r["sources"][0]["board"] for r in served))
    table("by module (eligible module profiles)", Counter(m for r in served for m in r["moduleProfiles"]))
    table("by topic", Counter(r["topic"] for r in served))
    table("by difficulty", Counter(r["difficulty"] for r in served))
    table("by frequency", Counter(r["frequency"] for r in served))
    table("by year", Counter(r["sources"][0]["year"] for r in served))
    with_diagrams = sum(1 for r in served if r.get("assets"))
    criteria = [c for r in served for c in r["scheme"]["criteria"]]
    lines.append(f"with diagrams: {with_diagrams}; marks: {sum(r['marks'] for r in served)} "
                 f"(min {min((r['marks'] for r in served), default=0)}, max {max((r['marks'] for r in served), default=0)}); "
                 f"criteria with dependencies: {sum(1 for c in criteria if c['dependsOn'])}, "
                 f"with conditions: {sum(1 for c in criteria if c['conditions'])}")
    table("by mark code", Counter(c["code"] for c in criteria))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Check an examkit question bank.")
    parser.add_argument("bank", nargs="?", default=str(DEFAULT_BANK), help="bank folder or file")
    parser.add_argument("--schema", default=str(DEFAULT_SCHEMA), help="path of question-bank.schema.json")
    parser.add_argument("--typeset", action="store_true", help="also typeset all maths with the typst package")
    parser.add_argument("--quiet", action="store_true", help="print errors only, no summary")
    args = parser.parse_args(argv)

    try:
        schema = read_json(Path(args.schema))
        validator = SchemaValidator(schema)  # type: ignore[arg-type]
    except (OSError, ValueError) as exc:
        print(f"cannot use the schema {args.schema}: {exc}", file=sys.stderr)
        return 2
    report = Report()
    docs = load_bank(Path(args.bank), report, validator)
    if report.errors:
        print("The rules across files are checked once every file is valid JSON matching the schema.")
    else:
        check_bank(docs, report)
    typeset = 0
    if args.typeset and not report.errors:
        typeset = typeset_all(docs, report)
    for file, ptr, msg in report.errors:
        print(f"{file}:{ptr or '/'}: {msg}")
    if report.errors:
        print(f"FAILED: {len(report.errors)} error(s) in {args.bank}")
        return 1
    if not args.quiet:
        print(summary(docs))
        if args.typeset:
            print(f"typeset: {typeset} pieces of maths")
    print(f"OK: {args.bank}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
