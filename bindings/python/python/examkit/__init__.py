"""Validate and score ``service-marking-import-v1`` submissions.

This package is a thin adapter over the examkit engine (written in Rust): every rule, error code,
message and score comes from the engine, so a document gets the same outcome here as from the
``examkit`` command-line tool, the WASM package and the HTTP service, byte for byte.

A document may be given as:

* ``str`` -- JSON text; it is encoded as UTF-8 and validated exactly as written.
* ``bytes`` / ``bytearray`` -- the raw document, validated exactly as given (invalid UTF-8, a byte
  order mark and so on are the engine's ``invalid_json``).
* ``dict`` -- an already parsed document. It is serialised with
  ``json.dumps(document, ensure_ascii=False, allow_nan=False)``, keeping key order, and the result
  is validated. A dict cannot carry everything the text did: duplicate keys have already been
  merged by whoever built it (so ``invalid_json`` for a duplicate key cannot be reported), and a
  number's raw spelling is lost (``10.0`` comes back as ``10.0`` but ``1e1`` as ``10.0``). Validate
  the original text when you have it. ``json.dumps`` conversions apply (tuples become arrays,
  non-string keys become strings); a value it cannot serialise raises ``TypeError``, and NaN or
  infinity raises ``ValueError``.

Validation releases the GIL while the engine runs, so a thread pool validates in parallel.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Literal, Optional, Sequence, TypedDict, Union

from . import _examkit

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "SCHEMA_VERSION",
    "Asset",
    "CodeInfo",
    "Document",
    "ErrorDetail",
    "ImportValidationError",
    "__version__",
    "error_codes",
    "explain",
    "submission_schema",
    "validate",
    "validate_json",
    "validate_or_raise",
]

__version__: str = _examkit.VERSION

SCHEMA_VERSION: str = _examkit.SCHEMA_VERSION
"""The schema version the engine validates: ``"service-marking-import-v1"``."""

MAX_DOCUMENT_BYTES: int = _examkit.MAX_DOCUMENT_BYTES
"""The largest document accepted, in bytes (4 MiB); a larger one is ``payload_too_large``."""

Document = Union[str, bytes, bytearray, Dict[str, Any]]
"""What :func:`validate` accepts as a submission."""


class Asset(TypedDict):
    """One of the import's uploaded files, as the validator knows it."""

    id: str
    kind: Literal["work", "scheme"]
    pageCount: int


class ErrorDetail(TypedDict):
    """One reason a submission is invalid."""

    path: str
    code: str
    message: str


class CodeInfo(TypedDict):
    """A stable error code or review flag with its one-line meaning."""

    code: str
    meaning: str
    kind: Literal["error", "review_flag"]


class ImportValidationError(ValueError):
    """Raised by :func:`validate_or_raise` for an invalid submission.

    ``errors`` holds every error as the engine reported it (``path``, ``code``, ``message``), in
    document order; ``truncated`` says whether errors past the first 1,000 were left out.
    """

    errors: List[ErrorDetail]
    truncated: bool

    def __init__(self, errors: Sequence[ErrorDetail], truncated: bool = False) -> None:
        self.errors = list(errors)
        self.truncated = bool(truncated)
        super().__init__(self._render())

    def _render(self) -> str:
        count = len(self.errors)
        lines = [f"the submission is invalid ({count} error{'' if count == 1 else 's'}):"]
        for error in self.errors:
            path = error["path"] or "(document)"
            lines.append(f"{path}: {error['message']} ({error['code']})")
        if self.truncated:
            lines.append("(more errors were found; only the first 1,000 are listed)")
        return "\n".join(lines)

    def __reduce__(self) -> Any:
        return (type(self), (self.errors, self.truncated))


def _document(document: object) -> object:
    # str, bytes and bytearray go to the native half as they are: it encodes a str exactly as
    # document.encode("utf-8", "surrogatepass") would ("surrogatepass" only acts on lone
    # surrogates, which no UTF-8 text can hold: their bytes reach the engine, which rejects them
    # as invalid_json like any other invalid UTF-8) and raises TypeError for any other type.
    if isinstance(document, dict):
        try:
            text = json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except TypeError as error:
            raise TypeError(f"the document dict cannot be serialised as JSON: {error}") from None
        except ValueError as error:
            raise ValueError(f"the document dict cannot be serialised as JSON: {error}") from None
        return text
    return document


def validate_json(document: Document, assets: Optional[Sequence[Asset]] = None) -> str:
    """Validate a submission and return the engine's canonical outcome JSON.

    The string is byte for byte what ``examkit validate`` prints and what every other surface
    returns. ``assets`` are the import's files (``[{"id", "kind", "pageCount"}]``); without them
    the checks that need them are skipped and the outcome says ``"assetsChecked": false``.

    Raises ``TypeError`` for arguments of the wrong type and ``ValueError`` (with the engine's
    message) for a malformed assets list. An invalid submission is not an exception: it is an
    outcome with ``"valid": false``.
    """
    return _examkit.validate_json(_document(document), assets)


def validate(document: Document, assets: Optional[Sequence[Asset]] = None) -> Dict[str, Any]:
    """Validate a submission and return the outcome as plain Python data.

    Valid: ``{"valid": True, "schemaVersion", "assetsChecked", "status", "score", "questions"}``
    with every question's score range, criteria and review flags. Invalid:
    ``{"valid": False, "errors": [{"path", "code", "message"}, ...], "truncated": bool}``.
    The result equals ``json.loads(validate_json(document, assets))``, keys in the engine's order
    (it is built directly, without the JSON round trip). Arguments are as for
    :func:`validate_json`.
    """
    if isinstance(document, dict):
        return _examkit.validate(_document(document), assets)
    return _examkit.validate(document, assets)


def validate_or_raise(
    document: Document, assets: Optional[Sequence[Asset]] = None
) -> Dict[str, Any]:
    """Like :func:`validate`, but raise :class:`ImportValidationError` for an invalid submission.

    A valid submission still returns its outcome, which may need review (``"status":
    "needs_review"``): review flags are not errors.
    """
    outcome = validate(document, assets)
    if not outcome["valid"]:
        raise ImportValidationError(outcome["errors"], outcome["truncated"])
    return outcome


def explain(document: Document, assets: Optional[Sequence[Asset]] = None) -> str:
    """Validate a submission and return the engine's report for people (plain text).

    Per question: the score range and each criterion's submitted and effective outcome, with
    beneath it the criterion's requirement, the marker's reason, each condition whose check is
    not met or uncertain (and the check's note), the evidence quoted with its page, and every
    review flag. Each of those texts is on one line, cut at 100 characters with an ellipsis.
    An invalid submission's report lists its errors. The same text as ``examkit validate
    --explain`` prints."""
    return _examkit.explain(_document(document), assets)


def error_codes() -> List[CodeInfo]:
    """Every error code (``kind`` ``"error"``) and review flag (``"review_flag"``) the engine can
    emit, with its one-line meaning, in the engine's documented order."""
    return [
        {"code": code, "meaning": meaning, "kind": kind}
        for code, meaning, kind in _examkit.error_codes()
    ]


def submission_schema() -> Dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of a submission, as a fresh dict.

    It checks structure only; the engine also checks references, dependencies, geometry and
    coverage, and computes the scores.
    """
    schema: Dict[str, Any] = json.loads(_examkit.SUBMISSION_SCHEMA_JSON)
    return schema
