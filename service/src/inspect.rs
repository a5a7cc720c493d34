//! Uploaded files: the type from magic bytes and the page count, and [`check`], the one check
//! of a file's bytes that every upload (the API's routes, the app's form) goes through.

/// Largest accepted file: 25 MiB.
pub const MAX_FILE_BYTES: usize = 25 * 1024 * 1024;
/// Most pages accepted in one PDF.
pub const MAX_PDF_PAGES: usize = 80;

/// The accepted file types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// `application/pdf`
    Pdf,
    /// `image/png`
    Png,
    /// `image/jpeg`
    Jpeg,
    /// `image/webp`
    Webp,
}

impl FileType {
    /// The media type.
    pub fn media_type(self) -> &'static str {
        match self {
            FileType::Pdf => "application/pdf",
            FileType::Png => "image/png",
            FileType::Jpeg => "image/jpeg",
            FileType::Webp => "image/webp",
        }
    }

    /// The type named by a `Content-Type` header value (parameters ignored), if accepted.
    pub fn from_content_type(value: &str) -> Option<FileType> {
        let essence = value
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "application/pdf" => Some(FileType::Pdf),
            "image/png" => Some(FileType::Png),
            "image/jpeg" => Some(FileType::Jpeg),
            "image/webp" => Some(FileType::Webp),
            _ => None,
        }
    }

    /// The type the bytes are, by their magic numbers.
    pub fn sniff(bytes: &[u8]) -> Option<FileType> {
        if bytes.starts_with(b"%PDF-") {
            Some(FileType::Pdf)
        } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(FileType::Png)
        } else if bytes.starts_with(b"\xff\xd8\xff") {
            Some(FileType::Jpeg)
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(FileType::Webp)
        } else {
            None
        }
    }
}

/// Why a file was refused at upload.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InspectError {
    /// A page cannot be read, or would rasterise over the pixel limit: indexing could not read it.
    #[error("{0}")]
    Unreadable(String),
    /// The file could not be read for a reason of the server's (no page process could start).
    #[error("{0}")]
    Unavailable(String),
}

impl FileType {
    fn format(self) -> examkit_scan::Format {
        match self {
            FileType::Pdf => examkit_scan::Format::Pdf,
            FileType::Png => examkit_scan::Format::Png,
            FileType::Jpeg => examkit_scan::Format::Jpeg,
            FileType::Webp => examkit_scan::Format::Webp,
        }
    }
}

/// Counts the pages of a file of type `kind` after checking that indexing can read every one of
/// them at `dpi` (the indexing resolution) within [`examkit_scan::DEFAULT_MAX_PIXELS`]: a PDF's
/// pages parse, an image's header and pixels decode. An image whose header declares more pixels
/// than the limit is refused from the header, without decoding its pixels. The file is read
/// where `pages` says (a page process, under its budgets). Blocks: call it off the async runtime.
pub fn page_count(
    pages: &crate::untrusted::Pages,
    kind: FileType,
    bytes: &[u8],
    dpi: u32,
) -> Result<usize, InspectError> {
    use crate::untrusted::PageError;
    use examkit_scan::ScanError;
    let max_pages = u32::try_from(MAX_PDF_PAGES).unwrap_or(u32::MAX);
    let counted = pages
        .check_pages(
            bytes,
            kind.format(),
            dpi,
            examkit_scan::DEFAULT_MAX_PIXELS,
            max_pages,
        )
        .map_err(|e| match e {
            PageError::Reader(m) => InspectError::Unavailable(m),
            PageError::File(e) => InspectError::Unreadable(match e {
                ScanError::TooLarge {
                    width,
                    height,
                    limit,
                } if width > 0 => format!(
                    "a page would be {width}x{height} pixels, over the limit of {limit} pixels: scan it at a lower resolution"
                ),
                ScanError::TooLarge { limit, .. } => format!(
                    "a page would need more memory than a page of {limit} pixels: scan it at a lower resolution"
                ),
                ScanError::Unreadable(m) => format!("the file is unreadable: {m}"),
                other => format!("the file is unreadable: {other}"),
            }),
        })?;
    Ok(usize::try_from(counted).unwrap_or(usize::MAX))
}

/// A received file, checked.
#[derive(Debug)]
pub struct ReceivedFile {
    /// The name it was uploaded with.
    pub name: String,
    /// Its type, declared and sniffed alike.
    pub file_type: FileType,
    /// Its pages.
    pub pages: usize,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Why [`check`] refused a file's bytes.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum FileRefused {
    /// No bytes.
    #[error("the file is empty")]
    Empty,
    /// The bytes are not of the declared type (or of no accepted type); the message says which.
    #[error("{0}")]
    NotDeclaredType(String),
    /// A PDF with more than [`MAX_PDF_PAGES`] pages.
    #[error("the file has {0} pages")]
    TooManyPages(usize),
    /// A page cannot be read, or would rasterise over the pixel limit.
    #[error("{0}")]
    Unreadable(String),
    /// The file could not be read for a reason of the server's.
    #[error("{0}")]
    Unavailable(String),
    /// The check's thread stopped before answering.
    #[error("the check of the file stopped")]
    CheckStopped,
}

/// Checks a file's bytes: not empty, of the type declared, readable, within the page limit.
/// The bytes are read through the page processes ([`crate::untrusted`]).
pub async fn check(
    marking: &crate::marking::MarkingConfig,
    name: String,
    declared_type: FileType,
    bytes: Vec<u8>,
) -> Result<ReceivedFile, FileRefused> {
    if bytes.is_empty() {
        return Err(FileRefused::Empty);
    }
    match FileType::sniff(&bytes) {
        Some(actual) if actual == declared_type => {}
        Some(actual) => {
            return Err(FileRefused::NotDeclaredType(format!(
                "the body is {} but Content-Type says {}",
                actual.media_type(),
                declared_type.media_type()
            )));
        }
        None => {
            return Err(FileRefused::NotDeclaredType(format!(
                "the body is not a PDF, PNG, JPEG or WebP file, although Content-Type says {}",
                declared_type.media_type()
            )));
        }
    }
    let dpi = marking.dpi;
    let pages = marking.pages.clone();
    let (bytes, counted) = tokio::task::spawn_blocking(move || {
        let counted = page_count(&pages, declared_type, &bytes, dpi);
        (bytes, counted)
    })
    .await
    .map_err(|_| FileRefused::CheckStopped)?;
    let pages = match counted {
        Ok(pages) if pages > MAX_PDF_PAGES => return Err(FileRefused::TooManyPages(pages)),
        Ok(pages) => pages,
        Err(InspectError::Unreadable(message)) => return Err(FileRefused::Unreadable(message)),
        Err(InspectError::Unavailable(message)) => return Err(FileRefused::Unavailable(message)),
    };
    Ok(ReceivedFile {
        name,
        file_type: declared_type,
        pages,
        bytes,
    })
}

/// Builds a minimal, well-formed PDF with `pages` blank A4 pages (used by tests and examples).
pub fn blank_pdf(pages: usize) -> Vec<u8> {
    let mut objects: Vec<String> = Vec::new();
    objects.push("<< /Type /Catalog /Pages 2 0 R >>".to_owned());
    let kids: Vec<String> = (0..pages).map(|i| format!("{} 0 R", i + 3)).collect();
    objects.push(format!(
        "<< /Type /Pages /Kids [{}] /Count {pages} >>",
        kids.join(" ")
    ));
    for _ in 0..pages {
        objects.push("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>".to_owned());
    }
    pdf_of(&objects)
}

/// Writes a minimal PDF of the given objects, numbered from 1 (object 1 is the catalog), with
/// its cross-reference table (used by tests and examples).
pub fn pdf_of(objects: &[String]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes_decide_the_type() {
        assert_eq!(FileType::sniff(b"%PDF-1.7\n..."), Some(FileType::Pdf));
        assert_eq!(
            FileType::sniff(b"\x89PNG\r\n\x1a\n\0\0"),
            Some(FileType::Png)
        );
        assert_eq!(
            FileType::sniff(b"\xff\xd8\xff\xe0\0\x10JFIF"),
            Some(FileType::Jpeg)
        );
        assert_eq!(
            FileType::sniff(b"RIFF\x24\0\0\0WEBPVP8 "),
            Some(FileType::Webp)
        );
        assert_eq!(FileType::sniff(b"RIFF\x24\0\0\0WAVEfmt "), None);
        assert_eq!(FileType::sniff(b"GIF89a"), None);
        assert_eq!(FileType::sniff(b""), None);
    }

    #[test]
    fn content_types_parse_with_parameters() {
        assert_eq!(
            FileType::from_content_type("application/pdf"),
            Some(FileType::Pdf)
        );
        assert_eq!(
            FileType::from_content_type("Image/PNG; q=1"),
            Some(FileType::Png)
        );
        assert_eq!(FileType::from_content_type("image/gif"), None);
        assert_eq!(FileType::from_content_type(""), None);
    }

    #[test]
    fn pdf_pages_are_counted_from_the_page_tree() {
        for pages in [1, 3, 81] {
            assert_eq!(
                page_count(
                    &crate::untrusted::Pages::InProcess,
                    FileType::Pdf,
                    &blank_pdf(pages),
                    150
                ),
                Ok(pages)
            );
        }
        assert!(matches!(
            page_count(
                &crate::untrusted::Pages::InProcess,
                FileType::Pdf,
                b"%PDF-1.4\nnot really a pdf",
                150
            ),
            Err(InspectError::Unreadable(_))
        ));
        // A PNG signature is not a PNG.
        assert!(matches!(
            page_count(
                &crate::untrusted::Pages::InProcess,
                FileType::Png,
                b"\x89PNG\r\n\x1a\n",
                150
            ),
            Err(InspectError::Unreadable(_))
        ));
    }
}
