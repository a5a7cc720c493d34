//! Page indexing for uploaded exam scans and PDFs.
//!
//! Bytes of a PDF or image go in; a [`PageIndex`] comes out: the page rasterised in its
//! displayed orientation, which way up its content is, the words on it with their boxes (from
//! the PDF text layer or Tesseract OCR), the QR codes printed on it, and how much ink it
//! carries. [`compare()`] aligns a scanned page with the clean rendered page of the same paper
//! and reports what the student added.
//!
//! Coordinates: every box is a [`NormBox`] in normalized displayed-page coordinates: origin at
//! the top-left corner of the page as displayed (after PDF `/Rotate` or image EXIF
//! orientation), `x` and `width` divided by the displayed width, `y` and `height` by the
//! displayed height.
//!
//! Nothing here touches a database, the network or an async runtime; the crate is tested with
//! image files alone.

mod align;
pub mod codes;
pub mod compare;
pub mod error;
pub mod geometry;
mod homography;
pub mod index;
mod lines;
pub mod ocr;
pub mod orientation;
mod pixels;
pub mod raster;
mod text_layer;
pub mod transform;

pub use codes::{Code, decode_codes};
pub use compare::{
    AddedInk, Comparison, added_ink, compare, compare_with_ink, compare_with_ink_except,
};
pub use error::ScanError;
pub use geometry::NormBox;
pub use index::{
    IndexOptions, Indexer, OrientationSource, PageIndex, RenderedPage, TextSource, Word,
    only_within, printed_page, render_for_index,
};
pub use ocr::openmp_thread_limit;
pub use orientation::{Orientation, OrientationEstimate, estimate_orientation};
pub use raster::{
    DEFAULT_MAX_PIXELS, Format, check_pages, page_count, render_page, render_page_limited,
};
pub use text_layer::TextLayer;
pub use transform::{FitKind, PageTransform};
