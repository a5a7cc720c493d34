//! What the service and a page process say to each other over the child's stdin and stdout.
//!
//! A frame is a JSON header and a payload of bytes, each preceded by its length (4 and 8 bytes,
//! little-endian). A request's payload is the file; a response's is the drawn page's pixels. The
//! lengths are checked against limits before anything is allocated, so a frame cut short or
//! garbled is an error, never a panic or an unbounded read.

use std::io::{self, Read, Write};

use examkit_scan::{Format, ScanError, TextLayer};
use serde::{Deserialize, Serialize};

/// The longest header either side accepts: a text layer of a dense page fits many times over.
pub const MAX_HEADER_BYTES: u32 = 16 * 1024 * 1024;

/// The largest payload either side accepts: a file (25 MiB at most) or a page's pixels (40
/// million at most), with room to spare.
pub const MAX_PAYLOAD_BYTES: u64 = 64 * 1024 * 1024;

/// What a page process is asked to do with the file in the payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Request {
    /// Check that every page can be indexed ([`examkit_scan::check_pages`]) and count them.
    Check {
        /// The file's format, as a media type.
        media_type: String,
        /// The indexing resolution.
        dpi: u32,
        /// The largest raster a page may need.
        max_pixels: u64,
        /// Above this many pages the file is counted, not checked.
        max_pages: u32,
    },
    /// Draw one page (one-based): its pixels, and its text layer when `text_layer` is set and
    /// the file is a PDF ([`examkit_scan::render_for_index`]).
    Draw {
        /// The file's format, as a media type.
        media_type: String,
        /// The page, one-based.
        page: u32,
        /// Resolution of a PDF page.
        dpi: u32,
        /// The largest raster the page may need.
        max_pixels: u64,
        /// Whether the PDF page's text layer is wanted too.
        text_layer: bool,
    },
}

/// What a page process answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "answer",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Response {
    /// The file's pages can all be indexed; it has this many.
    Checked {
        /// The page count.
        pages: u32,
    },
    /// The page, drawn: 8-bit grayscale pixels, row by row, in the payload.
    Drawn {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// The text layer, when it was asked for and the file is a PDF.
        layer: Option<TextLayer>,
    },
    /// The file or page cannot be read; why.
    Refused {
        /// The reader's error.
        error: ScanError,
    },
}

impl Request {
    /// The file's format.
    pub fn format(&self) -> Result<Format, ScanError> {
        let media_type = match self {
            Request::Check { media_type, .. } | Request::Draw { media_type, .. } => media_type,
        };
        Format::from_content_type(media_type)
            .ok_or_else(|| ScanError::InvalidArgument(format!("no pages in {media_type} files")))
    }
}

/// Writes one frame: `header` as JSON, then `payload`.
pub fn write_frame<W: Write, T: Serialize>(
    out: &mut W,
    header: &T,
    payload: &[u8],
) -> io::Result<()> {
    let header = serde_json::to_vec(header).map_err(io::Error::other)?;
    let header_len = u32::try_from(header.len())
        .ok()
        .filter(|n| *n <= MAX_HEADER_BYTES)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the header is too long"))?;
    let payload_len = u64::try_from(payload.len())
        .ok()
        .filter(|n| *n <= MAX_PAYLOAD_BYTES)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the payload is too long"))?;
    out.write_all(&header_len.to_le_bytes())?;
    out.write_all(&header)?;
    out.write_all(&payload_len.to_le_bytes())?;
    out.write_all(payload)?;
    out.flush()
}

/// Reads one frame written by [`write_frame`]: its header, parsed, and its payload. `Ok(None)`
/// when the stream ends before a frame starts (the other side closed it); a stream that ends
/// inside a frame, a length over the limits or a header that does not parse is an error.
pub fn read_frame<R: Read, T: for<'de> Deserialize<'de>>(
    input: &mut R,
) -> io::Result<Option<(T, Vec<u8>)>> {
    let mut len = [0u8; 4];
    let mut filled = 0;
    while filled < len.len() {
        match input.read(&mut len[filled..]) {
            // Closed before a frame began: the end. Closed inside its length: a frame cut short.
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the stream ended inside a frame",
                ));
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let header_len = u32::from_le_bytes(len);
    if header_len > MAX_HEADER_BYTES {
        return Err(invalid(format!(
            "a header of {header_len} bytes is over the limit"
        )));
    }
    let header = read_exactly(input, u64::from(header_len))?;
    let header: T = serde_json::from_slice(&header)
        .map_err(|e| invalid(format!("the header does not parse: {e}")))?;
    let mut len = [0u8; 8];
    input.read_exact(&mut len)?;
    let payload_len = u64::from_le_bytes(len);
    if payload_len > MAX_PAYLOAD_BYTES {
        return Err(invalid(format!(
            "a payload of {payload_len} bytes is over the limit"
        )));
    }
    let payload = read_exactly(input, payload_len)?;
    Ok(Some((header, payload)))
}

fn read_exactly<R: Read>(input: &mut R, len: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    input.take(len).read_to_end(&mut out)?;
    if out.len() as u64 != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the stream ended inside a frame",
        ));
    }
    Ok(out)
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn draw(page: u32) -> Request {
        Request::Draw {
            media_type: "application/pdf".into(),
            page,
            dpi: 150,
            max_pixels: 40_000_000,
            text_layer: true,
        }
    }

    #[test]
    fn a_closed_stream_before_a_frame_is_the_end_not_an_error() {
        let read: Option<(Request, Vec<u8>)> = read_frame(&mut io::empty()).expect("no error");
        assert_eq!(read, None);
    }

    #[test]
    fn an_oversized_length_is_refused_before_anything_is_read() {
        let mut bytes = (MAX_HEADER_BYTES + 1).to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        let error = read_frame::<_, Request>(&mut bytes.as_slice()).expect_err("refused");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);

        let mut frame = Vec::new();
        write_frame(&mut frame, &draw(1), b"").expect("written");
        let at = frame.len() - 8;
        frame[at..].copy_from_slice(&(MAX_PAYLOAD_BYTES + 1).to_le_bytes());
        let error = read_frame::<_, Request>(&mut frame.as_slice()).expect_err("refused");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn a_header_that_is_not_a_message_is_refused() {
        let mut frame = Vec::new();
        write_frame(&mut frame, &serde_json::json!({"op": "explode"}), b"").expect("written");
        let error = read_frame::<_, Request>(&mut frame.as_slice()).expect_err("refused");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn the_format_comes_from_the_media_type() {
        assert_eq!(draw(1).format(), Ok(Format::Pdf));
        let odd = Request::Check {
            media_type: "text/plain".into(),
            dpi: 150,
            max_pixels: 1,
            max_pages: 1,
        };
        assert!(matches!(odd.format(), Err(ScanError::InvalidArgument(_))));
    }

    proptest! {
        #[test]
        fn a_frame_reads_back_as_written(
            page in 1u32..1000,
            payload in proptest::collection::vec(any::<u8>(), 0..2048),
        ) {
            let mut frame = Vec::new();
            write_frame(&mut frame, &draw(page), &payload).expect("written");
            let read: Option<(Request, Vec<u8>)> = read_frame(&mut frame.as_slice()).expect("read");
            prop_assert_eq!(read, Some((draw(page), payload)));
        }

        #[test]
        fn a_frame_cut_short_is_an_error_never_a_panic(
            payload in proptest::collection::vec(any::<u8>(), 0..256),
            cut in 1usize..10_000,
        ) {
            let mut frame = Vec::new();
            let answer = Response::Drawn { width: 3, height: 2, layer: None };
            write_frame(&mut frame, &answer, &payload).expect("written");
            let cut = cut % frame.len();
            prop_assume!(cut > 0);
            let read = read_frame::<_, Response>(&mut &frame[..cut]);
            prop_assert!(read.is_err(), "a frame cut at {} of {} bytes", cut, frame.len());
        }

        #[test]
        fn garbage_is_an_error_or_a_message_never_a_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..512),
        ) {
            // Whatever the bytes say, nothing longer than they are is ever read out of them.
            if let Ok(Some((_, payload))) = read_frame::<_, Request>(&mut bytes.as_slice()) {
                prop_assert!(payload.len() <= bytes.len());
            }
        }
    }
}
