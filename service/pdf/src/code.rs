//! Page codes: the QR code printed on every page of both documents, naming the document, the
//! paper revision and the page, so that a scanned page can be matched to its clean page exactly;
//! and copy codes, printed instead on every page of a class set's copies, naming the print run,
//! the copy and the page, so that a scanned stack can be split into one script per copy.

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::Mutex;

use qrcode::{Color, EcLevel, QrCode, Version};
use uuid::Uuid;

/// The highest page number that carries a page code (the service's page limit for one
/// document). Pages after it, which the service never exports, are printed without a code.
pub const MAX_CODED_PAGES: u32 = 80;

/// The most copies one print run (class set) holds: a year group.
pub const MAX_COPIES: u32 = 300;

/// The prefix of every page code payload (format version 1).
pub const PAGE_CODE_PREFIX: &str = "EXK1";

/// The side of the printed QR code, in millimetres (without its quiet zone).
pub const PAGE_CODE_SIZE_MM: f64 = 18.0;

/// The QR symbol version of every page code: 33 × 33 modules, enough for the longest payload at
/// error correction level M, so every page's code has the same module size.
const QR_VERSION: Version = Version::Normal(4);

/// The blank border of the QR code, in modules, drawn as part of its image (the QR standard's
/// quiet zone).
pub(crate) const QUIET_MODULES: usize = 4;

/// Which of the two documents of a paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentKind {
    /// The question paper a candidate sits (`qp` in a page code).
    QuestionPaper,
    /// The mark scheme (`ms` in a page code).
    MarkScheme,
}

impl DocumentKind {
    /// The kind's spelling in a page code: `"qp"` or `"ms"`.
    pub fn code(self) -> &'static str {
        match self {
            DocumentKind::QuestionPaper => "qp",
            DocumentKind::MarkScheme => "ms",
        }
    }

    /// The kind of a page code spelling (`"qp"` or `"ms"`, exactly).
    pub fn from_code(code: &str) -> Option<DocumentKind> {
        match code {
            "qp" => Some(DocumentKind::QuestionPaper),
            "ms" => Some(DocumentKind::MarkScheme),
            _ => None,
        }
    }
}

/// What the QR code of one page says: `EXK1:<kind>:<paper uuid>:<revision>:<page>`, for example
/// `EXK1:qp:3f2a9c1e-5b7d-4e8a-9c0f-1d2e3f4a5b6c:2:7`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageCode {
    /// Question paper or mark scheme.
    pub kind: DocumentKind,
    /// The paper's id.
    pub paper_id: Uuid,
    /// The paper's revision (at least 1).
    pub revision: u32,
    /// The page, 1-based (1 to [`MAX_CODED_PAGES`]).
    pub page: u32,
}

impl PageCode {
    /// The payload encoded in the QR code: `EXK1:<qp|ms>:<lowercase hyphenated uuid>:<revision>:<page>`.
    pub fn to_payload(&self) -> String {
        format!(
            "{PAGE_CODE_PREFIX}:{}:{}:{}:{}",
            self.kind.code(),
            self.paper_id.as_hyphenated(),
            self.revision,
            self.page
        )
    }

    /// Reads a payload, strictly: the exact prefix `EXK1`, the kind `qp` or `ms`, a canonical
    /// lowercase hyphenated uuid, a revision of at least 1 and a page from 1 to
    /// [`MAX_CODED_PAGES`], both in decimal without sign or leading zeros, separated by single
    /// colons with nothing before or after. Anything else is `None`.
    pub fn parse(payload: &str) -> Option<PageCode> {
        let mut fields = payload.split(':');
        let (prefix, kind, id, revision, page) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        if fields.next().is_some() || prefix != PAGE_CODE_PREFIX {
            return None;
        }
        let kind = DocumentKind::from_code(kind)?;
        let paper_id = Uuid::try_parse(id).ok()?;
        // Only the canonical spelling: lowercase, hyphenated, no braces or urn prefix.
        if paper_id.as_hyphenated().to_string() != id {
            return None;
        }
        let revision = canonical_number(revision)?;
        let page = canonical_number(page)?;
        if revision == 0 || !(1..=MAX_CODED_PAGES).contains(&page) {
            return None;
        }
        Some(PageCode {
            kind,
            paper_id,
            revision,
            page,
        })
    }

    /// The short text printed beside the QR code, for people and for reading by OCR when the
    /// code cannot be decoded: `examkit qp 3f2a9c1e r2 p7` (the first 8 characters of the id).
    pub fn caption(&self) -> String {
        format!(
            "{}{}",
            caption_prefix(self.kind, self.paper_id, self.revision),
            self.page
        )
    }

    /// The QR code as an SVG image: black modules on white, with the quiet zone, one user unit
    /// per module.
    pub(crate) fn svg(&self) -> Option<String> {
        payload_svg(&self.to_payload())
    }
}

/// What the QR code of one page of a class-set copy says: `EXK1:cs:<print run>:<copy>:<page>`,
/// for example `EXK1:cs:9b1c0d2e-3f4a-4b5c-8d6e-7f8091a2b3c4:17:3`. The print run (the class
/// set) names the paper revision; the page is the paper's page, or the one after its last for the
/// blank back a copy with an odd number of pages ends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CopyCode {
    /// The print run's id (the class set's id).
    pub run_id: Uuid,
    /// The copy, 1 to [`MAX_COPIES`].
    pub copy: u32,
    /// The page of the copy, 1-based (1 to [`MAX_CODED_PAGES`]).
    pub page: u32,
}

/// The kind spelling of a copy code.
const COPY_KIND: &str = "cs";

impl CopyCode {
    /// The payload encoded in the QR code: `EXK1:cs:<lowercase hyphenated uuid>:<copy>:<page>`.
    pub fn to_payload(&self) -> String {
        format!(
            "{PAGE_CODE_PREFIX}:{COPY_KIND}:{}:{}:{}",
            self.run_id.as_hyphenated(),
            self.copy,
            self.page
        )
    }

    /// Reads a payload as strictly as [`PageCode::parse`]: the kind `cs`, a canonical uuid, a
    /// copy from 1 to [`MAX_COPIES`] and a page from 1 to [`MAX_CODED_PAGES`].
    pub fn parse(payload: &str) -> Option<CopyCode> {
        let mut fields = payload.split(':');
        let (prefix, kind, id, copy, page) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        if fields.next().is_some() || prefix != PAGE_CODE_PREFIX || kind != COPY_KIND {
            return None;
        }
        let run_id = Uuid::try_parse(id).ok()?;
        if run_id.as_hyphenated().to_string() != id {
            return None;
        }
        let copy = canonical_number(copy)?;
        let page = canonical_number(page)?;
        if !(1..=MAX_COPIES).contains(&copy) || !(1..=MAX_CODED_PAGES).contains(&page) {
            return None;
        }
        Some(CopyCode { run_id, copy, page })
    }

    /// The print run's short id printed for people: the first 8 characters of its id.
    pub fn short_run(run_id: Uuid) -> String {
        let id = run_id.as_hyphenated().to_string();
        id.get(..8).unwrap_or(&id).to_owned()
    }

    /// The line printed beside the QR code, for a person to type when the code will not scan:
    /// `Copy 017 · page 3 of 12 · 9b1c0d2e`, or `Copy 017 · blank page · 9b1c0d2e` for the blank
    /// back after a copy's last page.
    pub fn caption(&self, pages: u32) -> String {
        let short = Self::short_run(self.run_id);
        if self.page > pages {
            format!("Copy {:03} · blank page · {short}", self.copy)
        } else {
            format!(
                "Copy {:03} · page {} of {pages} · {short}",
                self.copy, self.page
            )
        }
    }

    /// The QR code as an SVG image, like [`PageCode`]'s.
    pub(crate) fn svg(&self) -> Option<String> {
        payload_svg(&self.to_payload())
    }
}

impl fmt::Display for CopyCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_payload())
    }
}

/// What the QR code of an extra answer sheet of a print run says: `EXK1:cx:<print run>`. Every
/// extra sheet of a run carries the same code; the student writes the copy number and the
/// question on it, and a person assigns it to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExtraSheetCode {
    /// The print run's id (the class set's id).
    pub run_id: Uuid,
}

/// The kind spelling of an extra sheet's code.
const EXTRA_KIND: &str = "cx";

impl ExtraSheetCode {
    /// The payload encoded in the QR code: `EXK1:cx:<lowercase hyphenated uuid>`.
    pub fn to_payload(&self) -> String {
        format!(
            "{PAGE_CODE_PREFIX}:{EXTRA_KIND}:{}",
            self.run_id.as_hyphenated()
        )
    }

    /// Reads a payload as strictly as [`PageCode::parse`]: the kind `cx` and a canonical uuid.
    pub fn parse(payload: &str) -> Option<ExtraSheetCode> {
        let mut fields = payload.split(':');
        let (prefix, kind, id) = (fields.next()?, fields.next()?, fields.next()?);
        if fields.next().is_some() || prefix != PAGE_CODE_PREFIX || kind != EXTRA_KIND {
            return None;
        }
        let run_id = Uuid::try_parse(id).ok()?;
        (run_id.as_hyphenated().to_string() == id).then_some(ExtraSheetCode { run_id })
    }

    /// The line printed beside the QR code: `Extra answer sheet · 9b1c0d2e`.
    pub fn caption(&self) -> String {
        format!("Extra answer sheet · {}", CopyCode::short_run(self.run_id))
    }

    pub(crate) fn svg(&self) -> Option<String> {
        payload_svg(&self.to_payload())
    }
}

/// The QR code of a payload as an SVG image, at the fixed symbol version.
fn payload_svg(payload: &str) -> Option<String> {
    let qr = QrCode::with_version(payload, QR_VERSION, EcLevel::M).ok()?;
    Some(qr_svg(&qr))
}

impl fmt::Display for PageCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_payload())
    }
}

/// The caption of a page code without its page number: `examkit qp 3f2a9c1e r2 p`.
pub(crate) fn caption_prefix(kind: DocumentKind, paper_id: Uuid, revision: u32) -> String {
    let id = paper_id.as_hyphenated().to_string();
    let short = id.get(..8).unwrap_or(&id);
    format!("examkit {} {short} r{revision} p", kind.code())
}

/// A decimal `u32` with no sign and no leading zero (`"0"` itself is accepted here and refused by
/// the range checks of the caller).
fn canonical_number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

/// The SVG of a QR code: a white square with the quiet zone and one path of black runs.
fn qr_svg(qr: &QrCode) -> String {
    let width = qr.width();
    let side = width + 2 * QUIET_MODULES;
    let colors = qr.to_colors();
    let mut path = String::new();
    for y in 0..width {
        let row = &colors[y * width..(y + 1) * width];
        let mut x = 0;
        while x < width {
            if row[x] == Color::Dark {
                let start = x;
                while x < width && row[x] == Color::Dark {
                    x += 1;
                }
                let _ = write!(
                    path,
                    "M{} {}h{}v1h-{}z",
                    start + QUIET_MODULES,
                    y + QUIET_MODULES,
                    x - start,
                    x - start
                );
            } else {
                x += 1;
            }
        }
    }
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{side}" height="{side}" viewBox="0 0 {side} {side}" shape-rendering="crispEdges"><rect width="{side}" height="{side}" fill="#fff"/><path fill="#000" d="{path}"/></svg>"##
    )
}

/// The QR images of recently used page codes, shared by the compilations of a renderer. Making
/// a code is slow (the encoder tries every mask pattern), and typst asks for a file more than
/// once per compilation.
#[derive(Default)]
pub(crate) struct CodeCache {
    images: Mutex<HashMap<AnyCode, typst::foundations::Bytes>>,
}

/// A page code or a copy code: what the cache holds images of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum AnyCode {
    Page(PageCode),
    Copy(CopyCode),
    Extra(ExtraSheetCode),
}

impl AnyCode {
    fn svg(&self) -> Option<String> {
        match self {
            AnyCode::Page(code) => code.svg(),
            AnyCode::Copy(code) => code.svg(),
            AnyCode::Extra(code) => code.svg(),
        }
    }
}

/// The most page code images kept: the pages of both documents of several papers.
const CODE_CACHE_LIMIT: usize = 2048;

impl CodeCache {
    /// The SVG image of `code`, made once and then kept.
    pub(crate) fn image(&self, code: AnyCode) -> Option<typst::foundations::Bytes> {
        if let Ok(images) = self.images.lock()
            && let Some(bytes) = images.get(&code)
        {
            return Some(bytes.clone());
        }
        let bytes = typst::foundations::Bytes::from_string(code.svg()?);
        if let Ok(mut images) = self.images.lock() {
            if images.len() >= CODE_CACHE_LIMIT {
                images.clear();
            }
            images.insert(code, bytes.clone());
        }
        Some(bytes)
    }
}

/// The side of the QR image with its quiet zone, in millimetres.
pub(crate) fn image_size_mm() -> f64 {
    let modules = QR_VERSION.width() as f64;
    PAGE_CODE_SIZE_MM * (modules + 2.0 * QUIET_MODULES as f64) / modules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PageCode {
        PageCode {
            kind: DocumentKind::QuestionPaper,
            paper_id: Uuid::parse_str("3f2a9c1e-5b7d-4e8a-9c0f-1d2e3f4a5b6c").expect("uuid"),
            revision: 2,
            page: 7,
        }
    }

    #[test]
    fn payloads_round_trip() {
        let code = sample();
        let payload = code.to_payload();
        assert_eq!(payload, "EXK1:qp:3f2a9c1e-5b7d-4e8a-9c0f-1d2e3f4a5b6c:2:7");
        assert_eq!(PageCode::parse(&payload), Some(code));
        assert_eq!(code.to_string(), payload);
        let ms = PageCode {
            kind: DocumentKind::MarkScheme,
            revision: u32::MAX,
            page: MAX_CODED_PAGES,
            ..code
        };
        assert_eq!(PageCode::parse(&ms.to_payload()), Some(ms));
        assert_eq!(code.caption(), "examkit qp 3f2a9c1e r2 p7");
    }

    #[test]
    fn bad_payloads_are_refused() {
        let id = "3f2a9c1e-5b7d-4e8a-9c0f-1d2e3f4a5b6c";
        for bad in [
            String::new(),
            "EXK1".to_owned(),
            format!("EXK1:qp:{id}:2"),
            format!("EXK1:qp:{id}:2:7:"),
            format!("EXK1:qp:{id}:2:7:1"),
            format!("exk1:qp:{id}:2:7"),
            format!("EXK2:qp:{id}:2:7"),
            format!(" EXK1:qp:{id}:2:7"),
            format!("EXK1:qp:{id}:2:7 "),
            format!("EXK1:qp:{id}:2:7\n"),
            format!("EXK1:QP:{id}:2:7"),
            format!("EXK1:xx:{id}:2:7"),
            format!("EXK1::{id}:2:7"),
            format!("EXK1:qp:{}:2:7", id.to_uppercase()),
            format!("EXK1:qp:{}:2:7", id.replace('-', "")),
            format!("EXK1:qp:{{{id}}}:2:7"),
            format!("EXK1:qp:urn:uuid:{id}:2:7"),
            "EXK1:qp:3f2a9c1e-5b7d-4e8a-9c0f-1d2e3f4a5b6:2:7".to_owned(),
            format!("EXK1:qp:{id}:0:7"),
            format!("EXK1:qp:{id}:02:7"),
            format!("EXK1:qp:{id}:+2:7"),
            format!("EXK1:qp:{id}:-2:7"),
            format!("EXK1:qp:{id}:2:07"),
            format!("EXK1:qp:{id}:2:0"),
            format!("EXK1:qp:{id}:2:81"),
            format!("EXK1:qp:{id}:2:"),
            format!("EXK1:qp:{id}::7"),
            format!("EXK1:qp:{id}:4294967296:7"),
            format!("EXK1:qp:{id}:2.0:7"),
            format!("EXK1:qp:{id}:2:٧"),
        ] {
            assert_eq!(PageCode::parse(&bad), None, "{bad:?} must be refused");
        }
    }

    #[test]
    fn copy_codes_round_trip_and_bad_ones_are_refused() {
        let run = Uuid::parse_str("9b1c0d2e-3f4a-4b5c-8d6e-7f8091a2b3c4").expect("uuid");
        let code = CopyCode {
            run_id: run,
            copy: 17,
            page: 3,
        };
        let payload = code.to_payload();
        assert_eq!(payload, "EXK1:cs:9b1c0d2e-3f4a-4b5c-8d6e-7f8091a2b3c4:17:3");
        assert_eq!(CopyCode::parse(&payload), Some(code));
        assert_eq!(
            PageCode::parse(&payload),
            None,
            "a copy code is not a page code"
        );
        assert_eq!(CopyCode::parse(&sample().to_payload()), None);
        assert_eq!(code.caption(12), "Copy 017 · page 3 of 12 · 9b1c0d2e");
        assert_eq!(code.caption(2), "Copy 017 · blank page · 9b1c0d2e");
        let last = CopyCode {
            copy: MAX_COPIES,
            page: MAX_CODED_PAGES,
            ..code
        };
        assert_eq!(CopyCode::parse(&last.to_payload()), Some(last));
        assert!(
            last.svg().is_some(),
            "the longest copy code fits version 4-M"
        );
        let extra = ExtraSheetCode { run_id: run };
        assert_eq!(
            extra.to_payload(),
            "EXK1:cx:9b1c0d2e-3f4a-4b5c-8d6e-7f8091a2b3c4"
        );
        assert_eq!(ExtraSheetCode::parse(&extra.to_payload()), Some(extra));
        assert_eq!(extra.caption(), "Extra answer sheet · 9b1c0d2e");
        assert_eq!(CopyCode::parse(&extra.to_payload()), None);
        assert_eq!(ExtraSheetCode::parse(&payload), None);
        for bad in [
            format!("EXK1:cx:{}", run.to_string().to_uppercase()),
            format!("EXK1:cx:{run}:1"),
            format!("EXK1:cx:{run} "),
            "EXK1:cx:".to_owned(),
        ] {
            assert_eq!(ExtraSheetCode::parse(&bad), None, "{bad:?} must be refused");
        }
        let id = run.to_string();
        for bad in [
            format!("EXK1:cs:{id}:0:3"),
            format!("EXK1:cs:{id}:301:3"),
            format!("EXK1:cs:{id}:017:3"),
            format!("EXK1:cs:{id}:17:0"),
            format!("EXK1:cs:{id}:17:81"),
            format!("EXK1:cs:{id}:17"),
            format!("EXK1:cs:{id}:17:3:1"),
            format!("EXK1:CS:{id}:17:3"),
            format!("EXK1:cs:{}:17:3", id.to_uppercase()),
            format!("EXK1:qp:{id}:17:3"),
        ] {
            assert_eq!(CopyCode::parse(&bad), None, "{bad:?} must be refused");
        }
    }

    #[test]
    fn the_longest_payload_fits_the_fixed_symbol_version() {
        let code = PageCode {
            kind: DocumentKind::MarkScheme,
            revision: u32::MAX,
            page: MAX_CODED_PAGES,
            ..sample()
        };
        let svg = code.svg().expect("fits version 4-M");
        assert!(svg.starts_with("<svg") && svg.contains("<path"));
        assert!((image_size_mm() - 18.0 * 41.0 / 33.0).abs() < 1e-9);
    }
}
