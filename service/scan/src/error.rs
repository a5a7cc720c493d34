//! Errors returned by every entry point of the crate.

use serde::{Deserialize, Serialize};

/// Why a file or page could not be indexed.
///
/// The variant names are stable: callers may match on them to decide between
/// "ask the user for another file" ([`ScanError::Unreadable`], [`ScanError::TooLarge`],
/// [`ScanError::PageOutOfRange`]) and "retry or report an operator problem"
/// ([`ScanError::Ocr`], [`ScanError::OcrUnavailable`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "camelCase", tag = "kind", content = "detail")]
pub enum ScanError {
    /// The bytes are not a readable file of the stated format (corrupt, truncated,
    /// encrypted PDF, unsupported image variant).
    #[error("unreadable file: {0}")]
    Unreadable(String),
    /// The requested page does not exist (pages are one-based).
    #[error("page {page} is out of range (the file has {pages} page(s))")]
    PageOutOfRange {
        /// The page that was asked for.
        page: u32,
        /// How many pages the file has.
        pages: u32,
    },
    /// The page raster would be larger than the pixel limit (a "pixel bomb" or an
    /// absurd page size at the chosen resolution).
    #[error("page raster of {width}x{height} pixels exceeds the limit of {limit} pixels")]
    TooLarge {
        /// Width in pixels the raster would have.
        width: u64,
        /// Height in pixels the raster would have.
        height: u64,
        /// The pixel limit that was exceeded.
        limit: u64,
    },
    /// Tesseract failed while recognising a page.
    #[error("OCR failed: {0}")]
    Ocr(String),
    /// Tesseract or its language data could not be loaded.
    #[error("OCR engine unavailable: {0}")]
    OcrUnavailable(String),
    /// An argument was out of its allowed range (for example a zero dpi).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}
