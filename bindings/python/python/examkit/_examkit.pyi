"""The native half of examkit: the engine, called with the GIL released."""

from typing import List, Literal, Optional, Tuple

__all__ = [
    "validate_json",
    "explain",
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

def validate_json(document: bytes, assets: Optional[bytes] = None) -> str: ...
def explain(document: bytes, assets: Optional[bytes] = None) -> str: ...
def error_codes() -> List[Tuple[str, str, Literal["error", "review_flag"]]]: ...
