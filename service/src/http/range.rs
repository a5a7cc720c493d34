//! Byte ranges of downloads (RFC 9110 §14): one `Range: bytes=…` range is served as `206 Partial
//! Content`, read from the store without loading the rest of the file.
//!
//! Only a single range is honoured. A header this module does not understand (another unit, more
//! than one range, bad syntax) is ignored and the whole file sent, as the RFC allows; a range that
//! starts past the end is `416 range_not_satisfiable` with `Content-Range: bytes */<size>`.

use std::ops::Range;

/// What a `Range` header asks of a file of `size` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// The whole file (no header, or one to ignore).
    Whole,
    /// These bytes (never empty, within the file).
    Part(Range<u64>),
    /// Nothing the file has: 416.
    Unsatisfiable,
}

/// Reads a `Range` header's value against a file of `size` bytes.
pub fn wanted(header: Option<&str>, size: u64) -> Wanted {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
        return Wanted::Whole;
    };
    let spec = spec.trim();
    if spec.contains(',') {
        return Wanted::Whole;
    }
    let Some((first, last)) = spec.split_once('-') else {
        return Wanted::Whole;
    };
    let number = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    match (first.trim(), last.trim()) {
        ("", suffix) => match number(suffix) {
            None => Wanted::Whole,
            Some(0) => Wanted::Unsatisfiable,
            Some(_) if size == 0 => Wanted::Unsatisfiable,
            Some(n) => Wanted::Part(size.saturating_sub(n)..size),
        },
        (start, end) => {
            let Some(start) = number(start) else {
                return Wanted::Whole;
            };
            let end = match end {
                "" => None,
                end => match number(end) {
                    Some(end) if end >= start => Some(end),
                    _ => return Wanted::Whole,
                },
            };
            if start >= size {
                return Wanted::Unsatisfiable;
            }
            let end = end.map_or(size, |e| e.saturating_add(1).min(size));
            Wanted::Part(start..end)
        }
    }
}

/// The `Content-Range` header of a part of a file of `size` bytes.
pub fn content_range(part: &Range<u64>, size: u64) -> String {
    format!("bytes {}-{}/{size}", part.start, part.end.saturating_sub(1))
}

/// The headers every download of a stored PDF carries: ranges are served, it is an attachment
/// named `filename`, it is never sniffed or cached.
pub fn download_headers(reply: super::Reply, filename: &str) -> super::Reply {
    reply
        .with_header("accept-ranges", "bytes")
        .with_header(
            "content-disposition",
            &format!("attachment; filename=\"{filename}\""),
        )
        .with_header("x-content-type-options", "nosniff")
        .with_header("cache-control", "private, no-store")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_ranges_are_read_against_the_size() {
        assert_eq!(wanted(Some("bytes=0-99"), 1000), Wanted::Part(0..100));
        assert_eq!(wanted(Some("bytes=900-"), 1000), Wanted::Part(900..1000));
        assert_eq!(wanted(Some("bytes=-100"), 1000), Wanted::Part(900..1000));
        assert_eq!(wanted(Some("bytes=-5000"), 1000), Wanted::Part(0..1000));
        assert_eq!(
            wanted(Some("bytes=990-5000"), 1000),
            Wanted::Part(990..1000)
        );
        assert_eq!(wanted(Some("bytes=999-999"), 1000), Wanted::Part(999..1000));
        assert_eq!(wanted(Some(" bytes=1-2 "), 1000), Wanted::Part(1..3));
        assert_eq!(content_range(&(900..1000), 1000), "bytes 900-999/1000");
    }

    #[test]
    fn ranges_past_the_end_are_unsatisfiable() {
        assert_eq!(wanted(Some("bytes=1000-"), 1000), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=5000-6000"), 1000), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=-0"), 1000), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=-10"), 0), Wanted::Unsatisfiable);
    }

    #[test]
    fn headers_not_understood_ask_for_the_whole_file() {
        for header in [
            None,
            Some(""),
            Some("bytes"),
            Some("bytes="),
            Some("bytes=-"),
            Some("bytes=a-b"),
            Some("bytes=5-1"),
            Some("bytes=0-1,5-9"),
            Some("items=0-1"),
            Some("bytes=+1-2"),
            Some("bytes=99999999999999999999999-"),
        ] {
            assert_eq!(wanted(header, 1000), Wanted::Whole, "{header:?}");
        }
    }
}
