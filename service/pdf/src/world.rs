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
use crate::code::{MAX_CODED_PAGES, PageCode};

/// The virtual path of the main source.
const MAIN_PATH: &str = "/main.typ";

/// The folder of the page code images: `/codes/<page>.svg`.
const CODES_DIR: &str = "/codes/";

/// A world with one main source and in-memory files.
pub(crate) struct PaperWorld<'a> {
    shared: &'a Shared,
    main: Source,
    files: HashMap<FileId, Bytes>,
    /// The page code of page 1 of the document; other pages differ only in their number.
    code: PageCode,
}

/// Interns a virtual path of the project root.
pub(crate) fn file_id(path: &str) -> Option<FileId> {
    let vpath = VirtualPath::new(path).ok()?;
    Some(RootedPath::new(VirtualRoot::Project, vpath).intern())
}

impl<'a> PaperWorld<'a> {
    /// Builds the world; `files` maps virtual paths (`/assets/<uuid>.svg`) to their bytes, and
    /// `code` is the page code of the document's first page.
    pub(crate) fn new(
        shared: &'a Shared,
        text: String,
        files: Vec<(String, Vec<u8>)>,
        code: PageCode,
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
            code,
        }
    }

    /// The page of a page code image path `/codes/<page>.svg`, 1 to [`MAX_CODED_PAGES`].
    fn code_page(id: FileId) -> Option<u32> {
        let rooted = id.get();
        if *rooted.root() != VirtualRoot::Project {
            return None;
        }
        let name = rooted
            .vpath()
            .get_with_slash()
            .strip_prefix(CODES_DIR)?
            .strip_suffix(".svg")?;
        if name.starts_with('0') || !name.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let page: u32 = name.parse().ok()?;
        (1..=MAX_CODED_PAGES).contains(&page).then_some(page)
    }

    /// The QR image of a page code path, made on request.
    fn code_image(&self, id: FileId) -> Option<Bytes> {
        let page = Self::code_page(id)?;
        self.shared.codes.image(PageCode { page, ..self.code })
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
        } else if self.files.contains_key(&id) || Self::code_page(id).is_some() {
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
