//! A class's returned scripts: one PDF with every script, each starting on an odd page for
//! double-sided printing, or one PDF per student in a zip archive.
//!
//! Both are made script by script: a script is typeset on its own, its PDF's pages are copied
//! into the class PDF (with lopdf, which examkit-scan links already) or its PDF written as an
//! entry of the archive, and the script and its images are dropped before the next is loaded.
//! What grows is the output alone. Scripts joined into a class PDF are typeset untagged: a
//! script's structure tree would not follow its pages into another document.

use std::collections::HashSet;
use std::io::{Seek, Write};

use lopdf::{Dictionary, Document, Object, ObjectId, Stream, dictionary};
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use super::draw::typeset_parts;
use super::load::{ScriptHeading, load_script};
use super::{ReturnedError, ReturnedScript};
use crate::store::Store;

/// The longest file name stem of an archive entry, in characters.
const MAX_STEM_CHARS: usize = 80;

/// An A4 page, points: the size of a blank page after a script whose last page has none.
const A4_POINTS: [f32; 2] = [595.276, 841.89];

/// A script of a class to return: its marking session and what its cover says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassScript {
    /// The script's marking session.
    pub session_id: String,
    /// Its student, paper and date.
    pub heading: ScriptHeading,
}

/// A script of a class that is not marked finally: its student and the labels of its questions
/// not marked finally (none when it has no question).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    /// The student.
    pub student: String,
    /// The questions not marked finally, in paper order.
    pub questions: Vec<String>,
}

/// A class PDF being put together, script by script.
#[derive(Debug)]
pub struct ClassPdf {
    document: Document,
    pages_id: ObjectId,
    kids: Vec<Object>,
    starts: Vec<usize>,
}

impl Default for ClassPdf {
    fn default() -> Self {
        Self::new()
    }
}

impl ClassPdf {
    /// An empty class PDF.
    pub fn new() -> ClassPdf {
        let mut document = Document::with_version("1.7");
        let pages_id = document.new_object_id();
        ClassPdf {
            document,
            pages_id,
            kids: Vec::new(),
            starts: Vec::new(),
        }
    }

    /// Typesets `script` (refused unless final, when `draft` is false) and appends it.
    /// Returns the page, from 1, it starts on.
    pub fn push(&mut self, script: ReturnedScript, draft: bool) -> Result<usize, ReturnedError> {
        let student = script.student.clone();
        let (pdf, _) = typeset_parts(script, draft, false).map_err(|e| in_class(e, student))?;
        self.push_pdf(&pdf)
    }

    /// Appends one script's PDF: its pages, then a blank page when they are odd, so that the
    /// next script starts on an odd page. Returns the page, from 1, it starts on.
    pub fn push_pdf(&mut self, pdf: &[u8]) -> Result<usize, ReturnedError> {
        let join = |e: lopdf::Error| ReturnedError::Join(e.to_string());
        let mut script = Document::load_mem(pdf).map_err(join)?;
        // Drops what the file held but does not use (object and cross-reference streams).
        script.prune_objects();
        script.renumber_objects_with(self.document.max_id + 1);
        let pages: Vec<ObjectId> = script.get_pages().into_values().collect();
        if pages.is_empty() {
            return Err(ReturnedError::Join("a script's PDF has no page".into()));
        }
        let start = self.kids.len() + 1;
        let mut media_box = None;
        for &id in &pages {
            let inherited = inherited(&script, id);
            let page = script.get_dictionary_mut(id).map_err(join)?;
            for (key, value) in inherited {
                if !page.has(&key) {
                    page.set(key, value);
                }
            }
            page.set("Parent", self.pages_id);
            page.remove(b"StructParents");
            media_box = page.get(b"MediaBox").ok().cloned();
            self.kids.push(Object::Reference(id));
        }
        let max_id = script.max_id;
        for (id, object) in script.objects {
            let tree = object
                .as_dict()
                .is_ok_and(|d| d.has_type(b"Catalog") || d.has_type(b"Pages"));
            if !tree {
                self.document.objects.insert(id, object);
            }
        }
        self.document.max_id = self.document.max_id.max(max_id);
        if pages.len() % 2 == 1 {
            self.blank(media_box);
        }
        self.starts.push(start);
        Ok(start)
    }

    fn blank(&mut self, media_box: Option<Object>) {
        let contents = self
            .document
            .add_object(Stream::new(Dictionary::new(), Vec::new()));
        let media_box = media_box.unwrap_or_else(|| {
            Object::Array(vec![
                0.into(),
                0.into(),
                A4_POINTS[0].into(),
                A4_POINTS[1].into(),
            ])
        });
        let page = self.document.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => self.pages_id,
            "MediaBox" => media_box,
            "Resources" => Dictionary::new(),
            "Contents" => contents,
        });
        self.kids.push(Object::Reference(page));
    }

    /// The pages so far, blank pages included.
    pub fn pages(&self) -> usize {
        self.kids.len()
    }

    /// The page, from 1, each script starts on, in the order appended.
    pub fn starts(&self) -> &[usize] {
        &self.starts
    }

    /// The PDF.
    pub fn finish(mut self) -> Result<Vec<u8>, ReturnedError> {
        let count = i64::try_from(self.kids.len()).unwrap_or(i64::MAX);
        let pages = dictionary! {
            "Type" => "Pages",
            "Kids" => std::mem::take(&mut self.kids),
            "Count" => count,
        };
        self.document
            .objects
            .insert(self.pages_id, Object::Dictionary(pages));
        let catalog = self.document.add_object(dictionary! {
            "Type" => "Catalog",
            "Pages" => self.pages_id,
        });
        let info = self.document.add_object(dictionary! {
            "Creator" => Object::string_literal("examkit"),
        });
        self.document.trailer.set("Root", catalog);
        self.document.trailer.set("Info", info);
        self.document.prune_objects();
        let mut out = Vec::new();
        self.document
            .save_to(&mut out)
            .map_err(|e| ReturnedError::Join(e.to_string()))?;
        Ok(out)
    }
}

/// The attributes a page inherits from the page tree above it (what a page whose tree is
/// replaced must carry itself).
fn inherited(document: &Document, page: ObjectId) -> Vec<(Vec<u8>, Object)> {
    const INHERITABLE: [&[u8]; 4] = [b"Resources", b"MediaBox", b"CropBox", b"Rotate"];
    let mut found: Vec<(Vec<u8>, Object)> = Vec::new();
    let mut seen = HashSet::new();
    let mut node = document
        .get_dictionary(page)
        .ok()
        .and_then(|d| d.get(b"Parent").ok())
        .and_then(|p| p.as_reference().ok());
    while let Some(id) = node.filter(|id| seen.insert(*id)) {
        let Ok(parent) = document.get_dictionary(id) else {
            break;
        };
        for key in INHERITABLE {
            if !found.iter().any(|(k, _)| k == key)
                && let Ok(value) = parent.get(key)
            {
                found.push((key.to_vec(), value.clone()));
            }
        }
        node = parent
            .get(b"Parent")
            .ok()
            .and_then(|p| p.as_reference().ok());
    }
    found
}

/// A zip archive of one PDF per student, being written script by script.
pub struct ClassZip<W: Write + Seek> {
    writer: ZipWriter<W>,
    taken: HashSet<String>,
}

impl<W: Write + Seek> std::fmt::Debug for ClassZip<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClassZip")
            .field("entries", &self.taken.len())
            .finish()
    }
}

impl<W: Write + Seek> ClassZip<W> {
    /// An archive written to `inner`.
    pub fn new(inner: W) -> ClassZip<W> {
        ClassZip {
            writer: ZipWriter::new(inner),
            taken: HashSet::new(),
        }
    }

    /// Typesets `script` (refused unless final, when `draft` is false) and writes it as the
    /// student's entry. Returns the entry's name.
    pub fn push(&mut self, script: ReturnedScript, draft: bool) -> Result<String, ReturnedError> {
        let student = script.student.clone();
        let (pdf, _) =
            typeset_parts(script, draft, true).map_err(|e| in_class(e, student.clone()))?;
        self.push_pdf(&student, &pdf)
    }

    /// Writes `pdf` as the entry of `student`: named by [`entry_name`], and made unique (without
    /// regard to case) with ` (2)`, ` (3)`… Returns the entry's name.
    pub fn push_pdf(&mut self, student: &str, pdf: &[u8]) -> Result<String, ReturnedError> {
        let stem = entry_name(student);
        let mut name = format!("{stem}.pdf");
        let mut n = 1;
        while self.taken.contains(&name.to_lowercase()) {
            n += 1;
            name = format!("{stem} ({n}).pdf");
        }
        // PDFs are compressed already: entries are stored, dated as zip's epoch (1980) so that
        // the same scripts make the same archive.
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .last_modified_time(zip::DateTime::default())
            .unix_permissions(0o644);
        let archive = |e: std::io::Error| ReturnedError::Archive(e.to_string());
        self.writer
            .start_file(name.as_str(), options)
            .map_err(|e| ReturnedError::Archive(e.to_string()))?;
        self.writer.write_all(pdf).map_err(archive)?;
        self.taken.insert(name.to_lowercase());
        Ok(name)
    }

    /// Ends the archive and returns what it was written to.
    pub fn finish(self) -> Result<W, ReturnedError> {
        self.writer
            .finish()
            .map_err(|e| ReturnedError::Archive(e.to_string()))
    }
}

/// The file name stem (without `.pdf`) for a student's entry: the name with every character
/// that is not a letter, digit, space or one of `-_.,'()&+` made `-`, white space made one
/// space, other control characters dropped, no dot, space or `-` at either end, at most
/// [`MAX_STEM_CHARS`] characters; `script` when nothing is left, and a name a Windows device
/// has (`CON`, `NUL`, `COM1`…) with `_` before it.
pub fn entry_name(student: &str) -> String {
    let mut stem = String::with_capacity(student.len());
    for c in student.chars() {
        let c = if c.is_whitespace() {
            ' '
        } else if c.is_control() {
            continue;
        } else if c.is_alphanumeric() || "-_.,'()&+".contains(c) {
            c
        } else {
            '-'
        };
        if c == ' ' && (stem.is_empty() || stem.ends_with(' ')) {
            continue;
        }
        stem.push(c);
    }
    let trim = |s: &str| {
        s.trim_matches(|c: char| c == ' ' || c == '.' || c == '-')
            .to_owned()
    };
    let mut stem: String = trim(&stem).chars().take(MAX_STEM_CHARS).collect();
    stem = trim(&stem);
    if stem.is_empty() {
        return "script".to_owned();
    }
    let device = stem
        .split('.')
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase();
    let reserved = matches!(device.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((device.starts_with("COM") || device.starts_with("LPT"))
            && device.len() == 4
            && device.ends_with(|c: char| c.is_ascii_digit()));
    if reserved {
        stem.insert(0, '_');
    }
    stem
}

/// A script's refusal in a class, naming its student.
fn in_class(e: ReturnedError, student: String) -> ReturnedError {
    match e {
        ReturnedError::NotFinal { questions } => ReturnedError::ClassNotFinal {
            scripts: vec![Unfinished { student, questions }],
        },
        ReturnedError::NothingMarked => ReturnedError::ClassNotFinal {
            scripts: vec![Unfinished {
                student,
                questions: Vec::new(),
            }],
        },
        other => other,
    }
}

/// Every script in one PDF, in the order given, each starting on an odd page (a blank page
/// follows a script with an odd number of pages). Scripts are typeset one at a time: pass an
/// iterator that makes each when asked to hold one script's images at a time. Unless `draft`,
/// a script not marked finally stops it ([`ReturnedError::ClassNotFinal`]). CPU-bound.
pub fn class_pdf<I>(scripts: I, draft: bool) -> Result<Vec<u8>, ReturnedError>
where
    I: IntoIterator<Item = ReturnedScript>,
{
    let mut pdf = ClassPdf::new();
    for script in scripts {
        pdf.push(script, draft)?;
    }
    pdf.finish()
}

/// One PDF per student in a zip archive, in the order given, each named by [`entry_name`] and
/// made unique. Scripts are typeset one at a time, as by [`class_pdf`]. CPU-bound.
pub fn class_zip<I>(scripts: I, draft: bool) -> Result<Vec<u8>, ReturnedError>
where
    I: IntoIterator<Item = ReturnedScript>,
{
    let mut zip = ClassZip::new(std::io::Cursor::new(Vec::new()));
    for script in scripts {
        zip.push(script, draft)?;
    }
    Ok(zip.finish()?.into_inner())
}

/// The scripts of `scripts` not marked finally, read from their questions alone (no image is
/// loaded): every one must be before a class's final PDFs are made.
pub async fn unfinished(
    store: &Store,
    user_id: &str,
    scripts: &[ClassScript],
) -> Result<Vec<Unfinished>, ReturnedError> {
    let mut found = Vec::new();
    for script in scripts {
        let session = store
            .session(user_id, &script.session_id)
            .await?
            .ok_or(ReturnedError::NotFound)?;
        let questions = store.session_questions(&session.id).await?;
        let open: Vec<String> = questions
            .iter()
            .filter(|q| q.status != crate::marked::QuestionStatus::Completed.as_str())
            .map(|q| q.label.clone())
            .collect();
        if questions.is_empty() || !open.is_empty() {
            found.push(Unfinished {
                student: script.heading.student.clone(),
                questions: open,
            });
        }
    }
    Ok(found)
}

/// Runs `work` on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ReturnedError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ReturnedError::Task(e.to_string()))
}

/// [`class_pdf`] of the scripts of account `user_id` marked by `scripts`' sessions, loaded one
/// at a time ([`load_script`]) and typeset on the blocking pool. Unless `draft`, every script is
/// checked first, from its questions alone: [`ReturnedError::ClassNotFinal`] names every script
/// not marked finally.
pub async fn load_class_pdf(
    store: &Store,
    user_id: &str,
    scripts: &[ClassScript],
    draft: bool,
) -> Result<Vec<u8>, ReturnedError> {
    if !draft {
        let open = unfinished(store, user_id, scripts).await?;
        if !open.is_empty() {
            return Err(ReturnedError::ClassNotFinal { scripts: open });
        }
    }
    let mut pdf = ClassPdf::new();
    for s in scripts {
        let script = load_script(store, user_id, &s.session_id, s.heading.clone()).await?;
        let (back, pushed) = blocking(move || {
            let pushed = pdf.push(script, draft);
            (pdf, pushed)
        })
        .await?;
        pdf = back;
        pushed?;
    }
    blocking(move || pdf.finish()).await?
}

/// [`class_zip`] of the scripts of account `user_id` marked by `scripts`' sessions, loaded and
/// typeset one at a time as by [`load_class_pdf`], and checked first in the same way.
pub async fn load_class_zip(
    store: &Store,
    user_id: &str,
    scripts: &[ClassScript],
    draft: bool,
) -> Result<Vec<u8>, ReturnedError> {
    if !draft {
        let open = unfinished(store, user_id, scripts).await?;
        if !open.is_empty() {
            return Err(ReturnedError::ClassNotFinal { scripts: open });
        }
    }
    let mut zip = ClassZip::new(std::io::Cursor::new(Vec::new()));
    for s in scripts {
        let script = load_script(store, user_id, &s.session_id, s.heading.clone()).await?;
        let (back, pushed) = blocking(move || {
            let pushed = zip.push(script, draft);
            (zip, pushed)
        })
        .await?;
        zip = back;
        pushed?;
    }
    Ok(zip.finish()?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_named_safely_by_its_student() {
        assert_eq!(entry_name("Ada Lovelace"), "Ada Lovelace");
        assert_eq!(entry_name("  Zoë   O'Brien-Smith "), "Zoë O'Brien-Smith");
        assert_eq!(entry_name("a/b\\c:d*e?f\"g<h>i|j"), "a-b-c-d-e-f-g-h-i-j");
        assert_eq!(entry_name("../../etc/passwd"), "etc-passwd");
        assert_eq!(entry_name("tab\there\u{7}"), "tab here");
        assert_eq!(entry_name(""), "script");
        assert_eq!(entry_name(" . - "), "script");
        assert_eq!(entry_name("con"), "_con");
        assert_eq!(entry_name("LPT1.txt"), "_LPT1.txt");
        assert_eq!(entry_name("Constance"), "Constance");
        assert_eq!(entry_name(&"x".repeat(200)).chars().count(), MAX_STEM_CHARS);
    }
}
