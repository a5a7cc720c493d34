//! The typst world of one compilation: the generated main source, the diagram files held in
//! memory, the page code images (made on request), and the renderer's shared library and fonts.
//! Nothing is read from disk.

use std::collections::HashMap;

use typst::diag::{FileError, FileResult};
use typst::foundations::{Bytes, Datetime, Duration};
use typst::syntax::{FileId, RootedPath, Source, VirtualPath, VirtualRoot};
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, World};

use crate::Shared;
use crate::code::{AnyCode, CopyCode, ExtraSheetCode, MAX_CODED_PAGES, MAX_COPIES, PageCode};

/// The virtual path of the main source.
const MAIN_PATH: &str = "/main.typ";

/// The folder of the page code images: `/codes/<page>.svg`.
const CODES_DIR: &str = "/codes/";

/// The folder of the copy code images of a print run: `/copies/<copy>/<page>.svg`.
const COPIES_DIR: &str = "/copies/";

/// The code image of a print run's extra answer sheet.
pub(crate) const EXTRA_PATH: &str = "/extra.svg";

/// Which codes the document's pages carry.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Codes {
    /// The page codes of one document; this is its first page's code, and other pages differ
    /// only in their number.
    Paper(PageCode),
    /// The copy codes of one print run.
    Run(uuid::Uuid),
    /// No codes: a document its caller generated, reading only the files it was given.
    None,
}

/// A world with one main source and in-memory files.
pub(crate) struct PaperWorld<'a> {
    shared: &'a Shared,
    main: Source,
    files: HashMap<FileId, Bytes>,
    codes: Codes,
}

/// Interns a virtual path of the project root.
pub(crate) fn file_id(path: &str) -> Option<FileId> {
    let vpath = VirtualPath::new(path).ok()?;
    Some(RootedPath::new(VirtualRoot::Project, vpath).intern())
}

/// A number in a path: decimal, no leading zero, within `range`.
fn path_number(s: &str, range: std::ops::RangeInclusive<u32>) -> Option<u32> {
    if s.is_empty() || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = s.parse().ok()?;
    range.contains(&n).then_some(n)
}

impl<'a> PaperWorld<'a> {
    /// Builds the world; `files` maps virtual paths (`/assets/<uuid>.svg`) to their bytes, and
    /// `codes` says which codes the pages carry.
    pub(crate) fn new(
        shared: &'a Shared,
        text: String,
        files: Vec<(String, Vec<u8>)>,
        codes: Codes,
    ) -> Self {
        // MAIN_PATH is a valid constant path, so interning it cannot fail.
        let main_id = file_id(MAIN_PATH).unwrap_or_else(|| unreachable!("valid main path"));
        let files = files
            .into_iter()
            .filter_map(|(path, bytes)| Some((file_id(&path)?, Bytes::new(bytes))))
            .collect();
        PaperWorld {
            shared,
            main: Source::new(main_id, text),
            files,
            codes,
        }
    }

    /// The code a code image path names: `/codes/<page>.svg` in a paper's document,
    /// `/copies/<copy>/<page>.svg` in a print run's.
    fn code_of(&self, id: FileId) -> Option<AnyCode> {
        let rooted = id.get();
        if *rooted.root() != VirtualRoot::Project {
            return None;
        }
        let path = rooted.vpath().get_with_slash();
        match self.codes {
            Codes::None => None,
            Codes::Paper(code) => {
                let name = path.strip_prefix(CODES_DIR)?.strip_suffix(".svg")?;
                let page = path_number(name, 1..=MAX_CODED_PAGES)?;
                Some(AnyCode::Page(PageCode { page, ..code }))
            }
            Codes::Run(run_id) if path == EXTRA_PATH => {
                Some(AnyCode::Extra(ExtraSheetCode { run_id }))
            }
            Codes::Run(run_id) => {
                let name = path.strip_prefix(COPIES_DIR)?.strip_suffix(".svg")?;
                let (copy, page) = name.split_once('/')?;
                Some(AnyCode::Copy(CopyCode {
                    run_id,
                    copy: path_number(copy, 1..=MAX_COPIES)?,
                    page: path_number(page, 1..=MAX_CODED_PAGES)?,
                }))
            }
        }
    }

    /// The QR image of a code path, made on request.
    fn code_image(&self, id: FileId) -> Option<Bytes> {
        self.shared.codes.image(self.code_of(id)?)
    }
}

impl World for PaperWorld<'_> {
    fn library(&self) -> &LazyHash<Library> {
        &self.shared.library
    }

    fn book(&self) -> &LazyHash<FontBook> {
        &self.shared.book
    }

    fn main(&self) -> FileId {
        self.main.id()
    }

    fn source(&self, id: FileId) -> FileResult<Source> {
        if id == self.main.id() {
            Ok(self.main.clone())
        } else if self.files.contains_key(&id) || self.code_of(id).is_some() {
            Err(FileError::NotSource)
        } else {
            Err(FileError::AccessDenied)
        }
    }

    fn file(&self, id: FileId) -> FileResult<Bytes> {
        if id == self.main.id() {
            return Ok(Bytes::from_string(self.main.clone()));
        }
        if let Some(bytes) = self.files.get(&id) {
            return Ok(bytes.clone());
        }
        self.code_image(id).ok_or(FileError::AccessDenied)
    }

    fn font(&self, index: usize) -> Option<Font> {
        self.shared.fonts.get(index).cloned()
    }

    fn today(&self, _offset: Option<Duration>) -> Option<Datetime> {
        // No clock: documents carry no date, so rendering is deterministic.
        None
    }
}
