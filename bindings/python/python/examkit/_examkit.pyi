"""The native half of examkit: the engine, called with the GIL released."""

from typing import Any, Dict, List, Literal, Optional, Tuple

__all__ = [
    "validate",
    "validate_json",
    "explain",
    "time_engine",
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

def validate(document: bytes, assets: Optional[bytes] = None) -> Dict[str, Any]: ...
def validate_json(document: bytes, assets: Optional[bytes] = None) -> str: ...
def explain(document: bytes, assets: Optional[bytes] = None) -> str: ...
def time_engine(document: bytes, assets: Optional[bytes] = None, iterations: int = 1) -> int: ...
def error_codes() -> List[Tuple[str, str, Literal["error", "review_flag"]]]: ...
