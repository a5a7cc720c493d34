"""The native half of examkit: the engine, called with the GIL released.

The document of validate, validate_json and explain is a str, bytes or bytearray; any other
type raises TypeError.
"""

from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple

_Assets = Optional[Sequence[Mapping[str, Any]]]

__all__ = [
    "validate",
    "validate_json",
    "explain",
    "time_engine",
    "assets_json",
    "error_codes",
    "VERSION",
    "SCHEMA_VERSION",
    "SUBMISSION_SCHEMA_JSON",
    "MAX_DOCUMENT_BYTES",
]

VERSION: str
SCHEMA_VERSION: str
SUBMISSION_SCHEMA_JSON: str
MAX_DOCUMENT_BYTES: int

def validate(document: object, assets: _Assets = None) -> Dict[str, Any]: ...
def validate_json(document: object, assets: _Assets = None) -> str: ...
def explain(document: object, assets: _Assets = None) -> str: ...
def time_engine(
    document: bytes, assets: _Assets = None, iterations: int = 1, to_json: bool = False
) -> int: ...
def assets_json(assets: Sequence[Mapping[str, Any]]) -> str: ...
def error_codes() -> List[Tuple[str, str, Literal["error", "review_flag"]]]: ...
