//! The document argument as the bytes the engine reads.
//!
//! A `str` becomes exactly `document.encode("utf-8", "surrogatepass")`: lone surrogates, which no
//! UTF-8 text can hold, are written as their three-byte forms, which the engine then rejects as
//! `invalid_json` like any other invalid UTF-8. CPython's own encoder does the work, through
//! pyo3's safe API: `PyUnicode_AsUTF8String` for every string that has a UTF-8 form (an ASCII
//! string is copied as it stands), and `str.encode` with `surrogatepass` for the rare string that
//! holds a lone surrogate. Neither can be redirected by a `str` subclass.

use pyo3::exceptions::{PyTypeError, PyUnicodeEncodeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

/// The bytes of a document argument: borrowed from a `bytes` object, or owned.
pub enum Document<'py> {
    /// A `bytes` argument, or a `str` encoded into `bytes` by CPython.
    Bytes(Bound<'py, PyBytes>),
    /// A copy of a `bytearray`.
    Owned(Vec<u8>),
}

impl Document<'_> {
    /// The document's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Document::Bytes(bytes) => bytes.as_bytes(),
            Document::Owned(bytes) => bytes,
        }
    }
}

/// Reads a `str`, `bytes` or `bytearray` document argument; `TypeError` for any other type (the
/// Python half turns a `dict` into bytes before it gets here).
pub fn document<'py>(document: &Bound<'py, PyAny>) -> PyResult<Document<'py>> {
    if let Ok(text) = document.cast::<PyString>() {
        utf8(text)
    } else if let Ok(bytes) = document.cast::<PyBytes>() {
        Ok(Document::Bytes(bytes.clone()))
    } else if let Ok(array) = document.cast::<PyByteArray>() {
        Ok(Document::Owned(array.to_vec()))
    } else {
        let name = document
            .get_type()
            .name()
            .map(|name| name.to_string())
            .unwrap_or_else(|_| String::from("object"));
        Err(PyTypeError::new_err(format!(
            "document must be a str, bytes, bytearray or dict (a parsed JSON object), not {name}"
        )))
    }
}

/// `text.encode("utf-8", "surrogatepass")`, read from the string's own characters whatever its
/// type (a subclass's `encode` is not called).
pub fn utf8<'py>(text: &Bound<'py, PyString>) -> PyResult<Document<'py>> {
    let py = text.py();
    match text.encode_utf8() {
        Ok(bytes) => Ok(Document::Bytes(bytes)),
        // Only a lone surrogate stops the strict encoder; `str.encode` (the method of `str`
        // itself, not of the argument's type) writes it as `surrogatepass` does.
        Err(error) if error.is_instance_of::<PyUnicodeEncodeError>(py) => {
            let encode = py.get_type::<PyString>().getattr(intern!(py, "encode"))?;
            let bytes = encode.call1((text, intern!(py, "utf-8"), intern!(py, "surrogatepass")))?;
            Ok(Document::Bytes(bytes.cast_into::<PyBytes>()?))
        }
        Err(error) => Err(error),
    }
}
