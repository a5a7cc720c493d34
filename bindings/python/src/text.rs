//! The document argument as the bytes the engine reads.
//!
//! A `str` becomes exactly `document.encode("utf-8", "surrogatepass")`: lone surrogates, which no
//! UTF-8 text can hold, are written as their three-byte forms, which the engine then rejects as
//! `invalid_json` like any other invalid UTF-8. The wheel targets the stable ABI of CPython 3.9,
//! which offers no view of a string's UTF-8 form; the cheapest way in it to reach a non-ASCII
//! string's characters is `PyUnicode_AsUCS4`, a widening copy that CPython vectorises, after which
//! the UTF-8 encoding below runs over 16 code points at a time (CPython's own encoder goes one
//! character at a time, which costs several times as much on a typical submission). An ASCII string
//! is already its UTF-8 form and is copied as it stands.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

/// Code points converted per `PyUnicode_AsUCS4` call: the 256 KiB buffer stays in cache, and a
/// string of at most this many characters (a typical submission) is converted in one call.
const CHUNK: usize = 1 << 16;

/// The bytes of a document argument: borrowed from a `bytes` object, or owned.
pub enum Document<'py> {
    /// A `bytes` argument, or an ASCII `str` copied into `bytes` by CPython.
    Bytes(Bound<'py, PyBytes>),
    /// A non-ASCII `str` encoded here, or a copy of a `bytearray`.
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

/// `text.encode("utf-8", "surrogatepass")`, computed without CPython's per-character encoder.
pub fn utf8<'py>(text: &Bound<'py, PyString>) -> PyResult<Document<'py>> {
    let py = text.py();
    // `str.isascii` reads a flag (CPython 3.7+). A subclass may override it, so only an exact
    // `str` is trusted; anything else takes the general path, which is right for every string.
    if text.is_exact_instance_of::<PyString>()
        && text.call_method0(intern!(py, "isascii"))?.is_truthy()?
    {
        return Ok(Document::Bytes(text.encode_utf8()?));
    }
    let length = text.code_point_len()?;
    // Room for the typical share of non-ASCII characters; more is added when needed.
    let mut out = Vec::with_capacity(length + length / 2 + 64);
    let mut chars = Vec::with_capacity(length.min(CHUNK));
    if length <= CHUNK {
        ucs4(text, &mut chars)?;
        push_utf8(&chars, &mut out);
    } else {
        for start in (0..length).step_by(CHUNK) {
            let end = length.min(start + CHUNK);
            // SAFETY: `text` is a live `str` and the GIL is held; `PyUnicode_Substring` returns a
            // new reference to an exact `str` (no subclass method is involved) or NULL with an
            // exception set, which `from_owned_ptr_or_err` turns into an error.
            let part = unsafe {
                let part =
                    ffi::PyUnicode_Substring(text.as_ptr(), to_isize(start)?, to_isize(end)?);
                Bound::from_owned_ptr_or_err(py, part)?
            };
            ucs4(part.cast::<PyString>()?, &mut chars)?;
            push_utf8(&chars, &mut out);
        }
    }
    Ok(Document::Owned(out))
}

fn to_isize(index: usize) -> PyResult<isize> {
    isize::try_from(index).map_err(|_| PyOverflowError::new_err("the string is too long"))
}

/// Replaces the contents of `chars` with the code points of `text` (`PyUnicode_AsUCS4`, into the
/// vector's spare capacity: no zeroing first).
fn ucs4(text: &Bound<'_, PyString>, chars: &mut Vec<u32>) -> PyResult<()> {
    let length = text.code_point_len()?;
    let size = to_isize(length)?;
    chars.clear();
    chars.reserve(length);
    // SAFETY: `text` is a live `str` (the `Bound` holds a reference and the GIL is held) of
    // `length` code points (`PyUnicode_GetLength`; a `str` never changes), and `chars` has
    // capacity for `length` of them. `PyUnicode_AsUCS4` writes at most `size` code points (with
    // `copy_null` 0, no terminator), and on success it has written all `length` of the string's,
    // so the first `length` slots are initialised; on failure nothing is exposed.
    let written = unsafe { ffi::PyUnicode_AsUCS4(text.as_ptr(), chars.as_mut_ptr(), size, 0) };
    if written.is_null() {
        return Err(PyErr::fetch(text.py()));
    }
    // SAFETY: see above: the first `length` slots were written.
    unsafe { chars.set_len(length) };
    Ok(())
}

/// Appends the UTF-8 form of `chars` to `out`: code points up to U+10FFFF, where a lone surrogate
/// (U+D800 to U+DFFF) gets its three-byte form, as Python's `surrogatepass` error handler writes
/// it. Blocks of 16 ASCII code points are narrowed together (SSE2 on x86-64, which every x86-64
/// processor has); the rest goes one code point at a time.
pub fn push_utf8(chars: &[u32], out: &mut Vec<u8>) {
    out.reserve(chars.len() + 64);
    let mut rest = chars;
    while let Some((block, tail)) = rest.split_first_chunk::<16>() {
        match ascii_block(block) {
            Some(bytes) => out.extend_from_slice(&bytes),
            None => block.iter().for_each(|&c| push_char(c, out)),
        }
        rest = tail;
    }
    rest.iter().for_each(|&c| push_char(c, out));
}

/// The 16 code points as bytes when all of them are ASCII.
#[cfg(target_arch = "x86_64")]
fn ascii_block(block: &[u32; 16]) -> Option<[u8; 16]> {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_movemask_epi8, _mm_packs_epi32, _mm_packus_epi16,
        _mm_storeu_si128,
    };
    let mut bytes = [0u8; 16];
    // SAFETY: SSE2 is part of x86-64. The four unaligned loads read exactly the 64 bytes of
    // `block` and the unaligned store writes exactly the 16 bytes of `bytes`. Code points are at
    // most 0x10FFFF, so the signed 32-to-16-bit pack saturates anything above 0x7FFF to 0x7FFF and
    // the unsigned 16-to-8-bit pack then gives 0xFF for anything above 0xFF: a byte has its top
    // bit set exactly when its code point is not ASCII.
    let mask = unsafe {
        let at = block.as_ptr().cast::<__m128i>();
        let low = _mm_packs_epi32(_mm_loadu_si128(at), _mm_loadu_si128(at.add(1)));
        let high = _mm_packs_epi32(_mm_loadu_si128(at.add(2)), _mm_loadu_si128(at.add(3)));
        let packed = _mm_packus_epi16(low, high);
        _mm_storeu_si128(bytes.as_mut_ptr().cast::<__m128i>(), packed);
        _mm_movemask_epi8(packed)
    };
    (mask == 0).then_some(bytes)
}

/// The 16 code points as bytes when all of them are ASCII.
#[cfg(not(target_arch = "x86_64"))]
fn ascii_block(block: &[u32; 16]) -> Option<[u8; 16]> {
    portable_ascii_block(block)
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn portable_ascii_block(block: &[u32; 16]) -> Option<[u8; 16]> {
    // Each `as u8` keeps a code point below 0x80.
    (block.iter().fold(0, |all, &c| all | c) < 0x80).then(|| block.map(|c| c as u8))
}

fn push_char(c: u32, out: &mut Vec<u8>) {
    // Each `as u8` keeps bits already masked or shifted into range.
    if c < 0x80 {
        out.push(c as u8);
    } else if c < 0x800 {
        out.extend_from_slice(&[0xC0 | (c >> 6) as u8, 0x80 | (c & 0x3F) as u8]);
    } else if c < 0x1_0000 {
        let high = 0xE0 | (c >> 12) as u8;
        out.extend_from_slice(&[
            high,
            0x80 | ((c >> 6) & 0x3F) as u8,
            0x80 | (c & 0x3F) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xF0 | (c >> 18) as u8,
            0x80 | ((c >> 12) & 0x3F) as u8,
            0x80 | ((c >> 6) & 0x3F) as u8,
            0x80 | (c & 0x3F) as u8,
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::push_utf8;

    fn encode(chars: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        push_utf8(chars, &mut out);
        out
    }

    #[test]
    fn valid_text_is_its_utf8() {
        let samples = [
            "",
            "plain ASCII text that is longer than one block of sixteen",
            "£ × ² − ∫ ≈ → 📐 ü",
            "7(a)–Ü 📐 then a long ASCII tail that fills several blocks of sixteen code points",
            "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}",
        ];
        for sample in samples {
            // Every alignment of the non-ASCII characters against the 16-character blocks.
            for pad in 0..17 {
                let text = format!("{}{sample}{}", "x".repeat(pad), "y".repeat(pad));
                let chars: Vec<u32> = text.chars().map(u32::from).collect();
                assert_eq!(encode(&chars), text.as_bytes(), "{text:?}");
            }
        }
    }

    #[test]
    fn ascii_blocks_are_recognised_exactly() {
        let edges = [
            0, 0x41, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xD800, 0xFFFF, 0x10FFFF,
        ];
        for &edge in &edges {
            for lane in 0..16 {
                let mut block = [u32::from(b'a'); 16];
                block[lane] = edge;
                let expected = (edge < 0x80).then(|| block.map(|c| c as u8));
                assert_eq!(
                    super::ascii_block(&block),
                    expected,
                    "{edge:#x} in lane {lane}"
                );
                assert_eq!(super::portable_ascii_block(&block), expected);
            }
        }
    }

    #[test]
    fn lone_surrogates_get_their_three_byte_forms() {
        // What "\ud800".encode("utf-8", "surrogatepass") and so on give in Python.
        assert_eq!(encode(&[0xD800]), [0xED, 0xA0, 0x80]);
        assert_eq!(
            encode(&[0xDBFF, 0xDC00]),
            [0xED, 0xAF, 0xBF, 0xED, 0xB0, 0x80]
        );
        assert_eq!(encode(&[0xDFFF, 0x41]), [0xED, 0xBF, 0xBF, 0x41]);
        let mut chars = vec![u32::from(b'a'); 20];
        chars[17] = 0xDC80;
        let mut expected = vec![b'a'; 17];
        expected.extend([0xED, 0xB2, 0x80]);
        expected.extend([b'a'; 2]);
        assert_eq!(encode(&chars), expected);
    }
}
