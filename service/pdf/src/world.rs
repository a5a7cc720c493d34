//! The typst world of one compilation: the generated main source, the diagram files held in
//! memory, and the renderer's shared library and fonts. Nothing is read from disk.

use std::collections::HashMap;

use typst::diag::{FileError, FileResult};
use typst::foundations::{Bytes, Datetime, Duration};
use typst::syntax::{FileId, RootedPath, Source, VirtualPath, VirtualRoot};
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, World};

use crate::Shared;

/// The virtual path of the main source.
const MAIN_PATH: &str = "/main.typ";

/// A world with one main source and in-memory files.
pub(crate) struct PaperWorld<'a> {
    shared: &'a Shared,
    main: Source,
    files: HashMap<FileId, Bytes>,
}

/// Interns a virtual path of the project root.
pub(crate) fn file_id(path: &str) -> Option<FileId> {
    let vpath = VirtualPath::new(path).ok()?;
    Some(RootedPath::new(VirtualRoot::Project, vpath).intern())
}

impl<'a> PaperWorld<'a> {
    /// Builds the world; `files` maps virtual paths (`/assets/<uuid>.svg`) to their bytes.
    pub(crate) fn new(shared: &'a Shared, text: String, files: Vec<(String, Vec<u8>)>) -> Self {
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
        }
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
        } else if self.files.contains_key(&id) {
            Err(FileError::NotSource)
        } else {
            Err(FileError::AccessDenied)
        }
    }

    fn file(&self, id: FileId) -> FileResult<Bytes> {
        if id == self.main.id() {
            return Ok(Bytes::from_string(self.main.clone()));
        }
        self.files.get(&id).cloned().ok_or(FileError::AccessDenied)
    }

    fn font(&self, index: usize) -> Option<Font> {
        self.shared.fonts.get(index).cloned()
    }

    fn today(&self, _offset: Option<Duration>) -> Option<Datetime> {
        // No clock: documents carry no date, so rendering is deterministic.
        None
    }
}
