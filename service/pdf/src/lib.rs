//! # examkit-pdf
//!
//! Typesets a saved paper, a list of pinned question revisions from the bank, as two PDFs: the
//! question paper a candidate sits and its mark scheme. Typst is used as a library: the typst
//! source is generated from the paper, the fonts are embedded in the binary and the diagrams are
//! served from memory, so rendering touches no file, network or external process.
//!
//! Rendering is deterministic: the same [`PaperDocument`] always gives byte-identical PDFs (no
//! document date; the PDF identifier is derived from the paper id, its revision and the kind of
//! document).
//!
//! Every page of both documents carries a page code ([`PageCode`]): a QR code in the top right
//! corner saying `EXK1:<qp|ms>:<paper id>:<revision>:<page>`, with a short caption beside it.
//! Each question paper comes with its recorded [`Layout`]: for every part, the page and box of
//! its text and of its answer space, read from typst's introspection after layout.
//!
//! Layout rules (see also `service/pdf/README.md`):
//! - the time guide on the cover is [`MINUTES_PER_MARK_TENTHS`] tenths of a minute per mark,
//!   rounded up to a multiple of 5 minutes ([`time_guide_minutes`]);
//! - [`WritingSpace::Smart`] prints [`LINES_PER_MARK`] ruled answer lines per mark of each part;
//! - the estimated grade guide uses the percentages of [`GRADE_GUIDE`].

mod class_set;
mod code;
mod document;
mod fonts;
mod layout;
pub mod math;
mod source;
mod world;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use typst::diag::{Severity, SourceDiagnostic, Warned};
use typst::foundations::Smart;
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, LibraryExt};
use typst_layout::PagedDocument;
use uuid::Uuid;

pub use class_set::{ClassSetDocument, CopyLabel, RenderedSet, pages_per_copy};
pub use code::{
    CopyCode, DocumentKind, ExtraSheetCode, MAX_CODED_PAGES, MAX_COPIES, PAGE_CODE_PREFIX,
    PAGE_CODE_SIZE_MM, PageCode,
};
pub use document::{SourceDocument, typst_string};
pub use layout::{Layout, PageGeometry, PartLayout, QuestionLayout, Region};
pub use source::{
    GRADE_GUIDE, LINES_PER_MARK, MINUTES_PER_MARK_TENTHS, grade_marks, time_guide_minutes,
};

/// A saved paper to typeset: its identity, its options and its questions in paper order.
#[derive(Debug, Clone, PartialEq)]
pub struct PaperDocument {
    /// The paper's id, printed on every page.
    pub paper_id: Uuid,
    /// The paper's revision, printed beside the id.
    pub revision: u32,
    /// The paper's title (plain text; printed exactly as given).
    pub title: String,
    /// How much answer space the question paper leaves.
    pub writing_space: WritingSpace,
    /// Whether the mark scheme carries an estimated grade guide.
    pub grade_guide: bool,
    /// The questions, numbered 1, 2, 3… in this order.
    pub questions: Vec<PaperQuestion>,
}

/// One question of a paper: a pinned bank revision and the files of its diagrams.
#[derive(Debug, Clone, PartialEq)]
pub struct PaperQuestion {
    /// The bank question's id.
    pub question_id: Uuid,
    /// The pinned revision (content and scheme).
    pub revision: examkit_bank::Revision,
    /// The revision's asset files (SVG bytes) by asset id.
    pub assets: BTreeMap<Uuid, Vec<u8>>,
}

/// How much answer space the question paper leaves after the questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WritingSpace {
    /// Ruled answer lines after each part, [`LINES_PER_MARK`] per mark (`"smart"`).
    Smart,
    /// No answer space (`"none"`).
    None,
    /// This many blank ruled writing pages after each question (`"1-page"`, `"2-pages"`,
    /// `"3-pages"`; only 1 to 3 are accepted by [`FromStr`]).
    Pages(u8),
}

impl WritingSpace {
    /// The spelling used by the service (`"smart"`, `"none"`, `"1-page"`, `"2-pages"`,
    /// `"3-pages"`). A page count outside 1–3, which [`FromStr`] never produces, is spelt
    /// `"N-pages"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            WritingSpace::Smart => "smart",
            WritingSpace::None => "none",
            WritingSpace::Pages(1) => "1-page",
            WritingSpace::Pages(2) => "2-pages",
            WritingSpace::Pages(3) => "3-pages",
            WritingSpace::Pages(_) => "N-pages",
        }
    }
}

impl fmt::Display for WritingSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WritingSpace::Pages(n) if !(1..=3).contains(n) => write!(f, "{n}-pages"),
            other => f.write_str(other.as_str()),
        }
    }
}

/// The error of parsing a [`WritingSpace`] from an unknown spelling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown writing space {0:?}: expected one of \"smart\", \"none\", \"1-page\", \"2-pages\", \"3-pages\""
)]
pub struct ParseWritingSpaceError(pub String);

impl FromStr for WritingSpace {
    type Err = ParseWritingSpaceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "smart" => Ok(WritingSpace::Smart),
            "none" => Ok(WritingSpace::None),
            "1-page" => Ok(WritingSpace::Pages(1)),
            "2-pages" => Ok(WritingSpace::Pages(2)),
            "3-pages" => Ok(WritingSpace::Pages(3)),
            other => Err(ParseWritingSpaceError(other.to_owned())),
        }
    }
}

/// A rendered PDF, its page count and, for a question paper, its recorded layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The PDF file.
    pub pdf: Vec<u8>,
    /// Its number of pages.
    pub pages: usize,
    /// Where each question part's text and answer space are: `Some` for a question paper,
    /// `None` for a mark scheme.
    pub layout: Option<Layout>,
}

/// The page counts of both documents of a paper, as typeset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCounts {
    /// Pages of the question paper.
    pub question_paper: usize,
    /// Pages of the mark scheme.
    pub mark_scheme: usize,
}

/// Why a paper could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// A piece of maths is not valid, safe typst maths.
    #[error("question {question}: the maths `{math}` cannot be typeset: {reason}")]
    InvalidMath {
        /// The question's number in the paper (1-based).
        question: usize,
        /// The offending maths (or text) as written in the bank.
        math: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A diagram names an asset whose file was not supplied.
    #[error("question {question}: the diagram file of asset {asset} is missing")]
    MissingAsset {
        /// The question's number in the paper (1-based).
        question: usize,
        /// The asset id.
        asset: Uuid,
    },
    /// The revision is inconsistent (unknown part or criterion, bad diagram width…).
    #[error("question {question}: {reason}")]
    InvalidQuestion {
        /// The question's number in the paper (1-based).
        question: usize,
        /// What is wrong.
        reason: String,
    },
    /// Typst reported errors while typesetting (for example an SVG it cannot read).
    #[error("typesetting failed: {0}")]
    Typeset(String),
    /// The PDF export failed.
    #[error("PDF export failed: {0}")]
    Export(String),
    /// A class set that cannot be printed (no copies, a repeated copy number, a paper too long
    /// for its copy codes…).
    #[error("class set: {0}")]
    InvalidClassSet(String),
}

/// The name of a document in the PDF identifier and in warnings.
fn ident(kind: DocumentKind) -> &'static str {
    match kind {
        DocumentKind::QuestionPaper => "question-paper",
        DocumentKind::MarkScheme => "mark-scheme",
    }
}

/// The typesetter: the typst standard library and the embedded fonts, loaded once by
/// [`Renderer::new`] and shared (it is `Send + Sync`; wrap it in an `Arc` to share it between
/// threads).
pub struct Renderer {
    shared: Arc<Shared>,
}

/// What every compilation reads: built once.
pub(crate) struct Shared {
    pub(crate) library: LazyHash<Library>,
    pub(crate) book: LazyHash<FontBook>,
    pub(crate) fonts: Vec<Font>,
    /// The QR images of recent page codes (making one takes about half a millisecond).
    pub(crate) codes: code::CodeCache,
}

impl fmt::Debug for Renderer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Renderer")
            .field("fonts", &self.shared.fonts.len())
            .finish()
    }
}

impl Default for Renderer {
    fn default() -> Self {
        Self::new()
    }
}

impl Renderer {
    /// Loads the standard library and the fonts embedded in the binary.
    pub fn new() -> Self {
        let fonts: Vec<Font> = fonts::files()
            .iter()
            .flat_map(|file| Font::iter(file.clone()))
            .collect();
        let book = FontBook::from_fonts(&fonts);
        Renderer {
            shared: Arc::new(Shared {
                library: LazyHash::new(Library::default()),
                book: LazyHash::new(book),
                fonts,
                codes: code::CodeCache::default(),
            }),
        }
    }

    /// Typesets the question paper, with its recorded [`Layout`] in [`Rendered::layout`].
    pub fn question_paper(&self, paper: &PaperDocument) -> Result<Rendered, RenderError> {
        self.export(paper, DocumentKind::QuestionPaper)
    }

    /// Typesets the mark scheme.
    pub fn mark_scheme(&self, paper: &PaperDocument) -> Result<Rendered, RenderError> {
        self.export(paper, DocumentKind::MarkScheme)
    }

    /// Lays out the question paper and returns its recorded [`Layout`], without exporting a PDF
    /// (the same layout as [`Renderer::question_paper`] gives).
    pub fn question_paper_layout(&self, paper: &PaperDocument) -> Result<Layout, RenderError> {
        let (document, _) = self.layout(paper, DocumentKind::QuestionPaper)?;
        layout::read(&document, paper, source::content_area())
    }

    /// Counts the question paper's pages by laying it out, without exporting a PDF.
    pub fn question_paper_pages(&self, paper: &PaperDocument) -> Result<usize, RenderError> {
        let (document, _) = self.layout(paper, DocumentKind::QuestionPaper)?;
        Ok(document.pages().len())
    }

    /// Counts both documents' pages by laying them out, without exporting PDFs.
    pub fn page_counts(&self, paper: &PaperDocument) -> Result<PageCounts, RenderError> {
        let (question_paper, _) = self.layout(paper, DocumentKind::QuestionPaper)?;
        let (mark_scheme, _) = self.layout(paper, DocumentKind::MarkScheme)?;
        Ok(PageCounts {
            question_paper: question_paper.pages().len(),
            mark_scheme: mark_scheme.pages().len(),
        })
    }

    /// Typesets both documents and returns typst's warnings (for example an unknown symbol or
    /// font), as `"<document>: <message>"`. An empty list means a clean paper.
    pub fn warnings(&self, paper: &PaperDocument) -> Result<Vec<String>, RenderError> {
        let mut all = Vec::new();
        for kind in [DocumentKind::QuestionPaper, DocumentKind::MarkScheme] {
            let (_, warnings) = self.layout(paper, kind)?;
            all.extend(
                warnings
                    .into_iter()
                    .map(|w| format!("{}: {w}", ident(kind))),
            );
        }
        Ok(all)
    }

    fn export(&self, paper: &PaperDocument, kind: DocumentKind) -> Result<Rendered, RenderError> {
        let (document, _) = self.layout(paper, kind)?;
        let options = typst_pdf::PdfOptions {
            ident: Smart::Custom(format!(
                "examkit/{}/{}/{}",
                paper.paper_id,
                paper.revision,
                ident(kind)
            )),
            creator: Smart::Custom(Some("examkit".to_owned())),
            timestamp: None,
            ..Default::default()
        };
        let pdf = typst_pdf::pdf(&document, &options)
            .map_err(|errors| RenderError::Export(describe(&errors)))?;
        let layout = match kind {
            DocumentKind::QuestionPaper => {
                Some(layout::read(&document, paper, source::content_area())?)
            }
            DocumentKind::MarkScheme => None,
        };
        Ok(Rendered {
            pdf,
            pages: document.pages().len(),
            layout,
        })
    }

    fn layout(
        &self,
        paper: &PaperDocument,
        kind: DocumentKind,
    ) -> Result<(PagedDocument, Vec<String>), RenderError> {
        let generated = match kind {
            DocumentKind::QuestionPaper => source::question_paper(paper)?,
            DocumentKind::MarkScheme => source::mark_scheme(paper)?,
        };
        let code = PageCode {
            kind,
            paper_id: paper.paper_id,
            revision: paper.revision,
            page: 1,
        };
        let world = world::PaperWorld::new(
            &self.shared,
            generated.text,
            generated.files,
            world::Codes::Paper(code),
        );
        let Warned { output, warnings } = typst::compile::<PagedDocument>(&world);
        // Keep typst's memoisation caches bounded in a long-running service.
        typst::comemo::evict(10);
        let document = output.map_err(|errors| RenderError::Typeset(describe(&errors)))?;
        let warnings = warnings
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(|d| d.message.to_string())
            .collect();
        Ok((document, warnings))
    }
}

/// Empties typst's process-wide memoisation caches, so the next render starts cold, as after a
/// restart (the fonts a [`Renderer`] loaded stay loaded). For benchmarks.
pub fn evict_caches() {
    typst::comemo::evict(0);
}

fn describe(diagnostics: &[SourceDiagnostic]) -> String {
    let mut out = String::new();
    for (i, d) in diagnostics.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        out.push_str(&d.message);
        for hint in &d.hints {
            out.push_str(" (hint: ");
            out.push_str(&hint.v);
            out.push(')');
        }
    }
    if out.is_empty() {
        out.push_str("unknown error");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_space_spellings_round_trip() {
        for s in ["smart", "none", "1-page", "2-pages", "3-pages"] {
            let w: WritingSpace = s.parse().expect("known spelling");
            assert_eq!(w.as_str(), s);
            assert_eq!(w.to_string(), s);
        }
        assert_eq!("2-pages".parse(), Ok(WritingSpace::Pages(2)));
    }

    #[test]
    fn writing_space_rejects_unknown_spellings() {
        for s in [
            "", "Smart", "1-pages", "2-page", "4-pages", "0-pages", " none", "pages",
        ] {
            let err = s.parse::<WritingSpace>().expect_err(s);
            assert!(err.to_string().contains("unknown writing space"), "{err}");
        }
    }

    #[test]
    fn renderer_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Renderer>();
    }
}
