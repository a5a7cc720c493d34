//! A class's returned scripts: one PDF with every script, each starting on an odd page for
//! double-sided printing, or one PDF per student in a zip archive.
//!
//! Both are made script by script: a script is typeset on its own, its PDF's pages are copied
//! into the class PDF (with lopdf, which examkit-scan links already) or its PDF written as an
//! entry of the archive, and the script and its images are dropped before the next is loaded.
//! What grows is the output alone. Scripts joined into a class PDF are typeset untagged: a
//! script's structure tree would not follow its pages into another document.

use std::collections::HashSet;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::sync::Arc;

use lopdf::{Dictionary, Document, Object, ObjectId, Stream, Writer, dictionary};
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

/// A script of a class to return: its marking session, what its cover says, and which of its
/// questions are not marked finally (as the class's results read them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassScript {
    /// The script's marking session.
    pub session_id: String,
    /// Its student, paper and date.
    pub heading: ScriptHeading,
    /// The labels of its questions not marked finally, in paper order; `None` when it has no
    /// question.
    pub unfinished: Option<Vec<String>>,
}

impl ClassScript {
    /// The script as a refusal names it, when it is not marked finally.
    fn refusal(&self) -> Option<Unfinished> {
        match &self.unfinished {
            Some(questions) if questions.is_empty() => None,
            open => Some(Unfinished {
                student: self.heading.student.clone(),
                questions: open.clone().unwrap_or_default(),
            }),
        }
    }
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

/// A class PDF being written, script by script, to `W`: each script's objects are written out as
/// it is appended, and only the page tree's references (one per page) are held until
/// [`ClassPdf::finish`] writes the tree, the cross-reference table and the trailer.
pub struct ClassPdf<W: Write> {
    out: Counted<W>,
    /// Each object written: its number, generation and where it starts.
    offsets: Vec<(u32, u16, u64)>,
    next_id: u32,
    pages_id: ObjectId,
    kids: Vec<Object>,
    starts: Vec<usize>,
}

impl<W: Write> std::fmt::Debug for ClassPdf<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClassPdf")
            .field("pages", &self.kids.len())
            .field("written", &self.out.written)
            .finish()
    }
}

/// A writer that counts the bytes written through it.
struct Counted<W: Write> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn output(e: std::io::Error) -> ReturnedError {
    ReturnedError::Output(e.to_string())
}

impl<W: Write> ClassPdf<W> {
    /// An empty class PDF written to `out`; its header is written at once.
    pub fn new(out: W) -> Result<ClassPdf<W>, ReturnedError> {
        let mut out = Counted {
            inner: out,
            written: 0,
        };
        // The second line's bytes above 127 mark the file as binary to tools that guess.
        out.write_all(b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n")
            .map_err(output)?;
        Ok(ClassPdf {
            out,
            offsets: Vec::new(),
            // Object 1 is the page tree, written last.
            next_id: 2,
            pages_id: (1, 0),
            kids: Vec::new(),
            starts: Vec::new(),
        })
    }

    /// Writes `object` as indirect object `id`, framed as lopdf frames it.
    fn write_object(&mut self, id: ObjectId, object: &Object) -> Result<(), ReturnedError> {
        self.offsets.push((id.0, id.1, self.out.written));
        let before = if Writer::need_separator(object) {
            " "
        } else {
            ""
        };
        let after = if Writer::need_end_separator(object) {
            " "
        } else {
            ""
        };
        write!(self.out, "{} {} obj\n{before}", id.0, id.1).map_err(output)?;
        Writer::write_object(&mut self.out, object).map_err(output)?;
        write!(self.out, "{after}\nendobj\n").map_err(output)
    }

    /// Writes `object` under the next free number.
    fn add_object(&mut self, object: Object) -> Result<ObjectId, ReturnedError> {
        let id = (self.next_id, 0);
        self.next_id += 1;
        self.write_object(id, &object)?;
        Ok(id)
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
        script.renumber_objects_with(self.next_id);
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
        self.next_id = self.next_id.max(script.max_id + 1);
        for (id, object) in std::mem::take(&mut script.objects) {
            let tree = object
                .as_dict()
                .is_ok_and(|d| d.has_type(b"Catalog") || d.has_type(b"Pages"));
            if !tree {
                self.write_object(id, &object)?;
            }
        }
        if pages.len() % 2 == 1 {
            self.blank(media_box)?;
        }
        self.starts.push(start);
        Ok(start)
    }

    fn blank(&mut self, media_box: Option<Object>) -> Result<(), ReturnedError> {
        let contents =
            self.add_object(Object::Stream(Stream::new(Dictionary::new(), Vec::new())))?;
        let media_box = media_box.unwrap_or_else(|| {
            Object::Array(vec![
                0.into(),
                0.into(),
                A4_POINTS[0].into(),
                A4_POINTS[1].into(),
            ])
        });
        let page = self.add_object(Object::Dictionary(dictionary! {
            "Type" => "Page",
            "Parent" => self.pages_id,
            "MediaBox" => media_box,
            "Resources" => Dictionary::new(),
            "Contents" => contents,
        }))?;
        self.kids.push(Object::Reference(page));
        Ok(())
    }

    /// The pages so far, blank pages included.
    pub fn pages(&self) -> usize {
        self.kids.len()
    }

    /// The page, from 1, each script starts on, in the order appended.
    pub fn starts(&self) -> &[usize] {
        &self.starts
    }

    /// Writes the page tree, the catalogue, the cross-reference table and the trailer, and
    /// returns what the PDF was written to.
    pub fn finish(mut self) -> Result<W, ReturnedError> {
        let count = i64::try_from(self.kids.len()).unwrap_or(i64::MAX);
        let pages = dictionary! {
            "Type" => "Pages",
            "Kids" => std::mem::take(&mut self.kids),
            "Count" => count,
        };
        self.write_object(self.pages_id, &Object::Dictionary(pages))?;
        let catalog = self.add_object(Object::Dictionary(dictionary! {
            "Type" => "Catalog",
            "Pages" => self.pages_id,
        }))?;
        let info = self.add_object(Object::Dictionary(dictionary! {
            "Creator" => Object::string_literal("examkit"),
        }))?;
        let xref_at = self.out.written;
        self.offsets.sort_unstable();
        // Subsections of consecutive numbers; object 0 heads the table, free.
        let mut table = String::from("xref\n");
        let mut section: Vec<String> = vec!["0000000000 65535 f\r\n".to_owned()];
        let mut first = 0u32;
        let mut last = 0u32;
        for &(id, generation, offset) in &self.offsets {
            if id != last + 1 {
                table.push_str(&format!("{first} {}\n", section.len()));
                table.extend(section.drain(..));
                first = id;
            }
            section.push(format!("{offset:010} {generation:05} n\r\n"));
            last = id;
        }
        table.push_str(&format!("{first} {}\n", section.len()));
        table.extend(section.drain(..));
        self.out.write_all(table.as_bytes()).map_err(output)?;
        let trailer = dictionary! {
            "Size" => i64::from(last + 1),
            "Root" => catalog,
            "Info" => info,
        };
        self.out.write_all(b"trailer\n").map_err(output)?;
        Writer::write_object(&mut self.out, &Object::Dictionary(trailer)).map_err(output)?;
        write!(self.out, "\nstartxref\n{xref_at}\n%%EOF\n").map_err(output)?;
        self.out.flush().map_err(output)?;
        Ok(self.out.inner)
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
    let mut pdf = ClassPdf::new(Vec::new())?;
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

/// A class's returned scripts, written to a temporary file that is removed once the last
/// [`ClassFile`] of it is dropped (open handles read on): the file, read from its start, and its
/// length in bytes.
#[derive(Debug)]
pub struct ClassFile {
    /// The file, at its start.
    pub file: std::fs::File,
    /// Its length.
    pub len: u64,
    path: Arc<tempfile::TempPath>,
}

/// A class file being written: the file, and its path to read it again by.
pub(super) struct Writing {
    out: BufWriter<std::fs::File>,
    path: tempfile::TempPath,
}

impl Write for Writing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl Seek for Writing {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.out.seek(to)
    }
}

impl ClassFile {
    /// A new temporary file to write to.
    pub(super) fn create() -> Result<Writing, ReturnedError> {
        let (file, path) = tempfile::NamedTempFile::new().map_err(output)?.into_parts();
        Ok(Writing {
            out: BufWriter::new(file),
            path,
        })
    }

    /// The file `written` was written to, rewound.
    pub(super) fn written(written: Writing) -> Result<ClassFile, ReturnedError> {
        let mut file = written
            .out
            .into_inner()
            .map_err(|e| output(e.into_error()))?;
        let len = file.seek(SeekFrom::End(0)).map_err(output)?;
        file.seek(SeekFrom::Start(0)).map_err(output)?;
        Ok(ClassFile {
            file,
            len,
            path: Arc::new(written.path),
        })
    }

    /// The same file opened again, read from its start (for another reader).
    pub fn reopen(&self) -> std::io::Result<ClassFile> {
        Ok(ClassFile {
            file: std::fs::File::open(&*self.path)?,
            len: self.len,
            path: Arc::clone(&self.path),
        })
    }
}

/// The scripts of `scripts` not marked finally: every one must be before a class's final PDFs
/// are made.
pub fn unfinished(scripts: &[ClassScript]) -> Vec<Unfinished> {
    scripts.iter().filter_map(ClassScript::refusal).collect()
}

/// Runs `work` on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ReturnedError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ReturnedError::Task(e.to_string()))
}

/// Unless `draft`, [`ReturnedError::ClassNotFinal`] naming every script of `scripts` not
/// marked finally.
fn check_final(scripts: &[ClassScript], draft: bool) -> Result<(), ReturnedError> {
    let open = unfinished(scripts);
    if draft || open.is_empty() {
        Ok(())
    } else {
        Err(ReturnedError::ClassNotFinal { scripts: open })
    }
}

/// What a class's scripts are written into, one at a time, ending as a file.
trait ClassSink: Send + 'static {
    /// Typesets `script` and appends it.
    fn append(&mut self, script: ReturnedScript, draft: bool) -> Result<(), ReturnedError>;
    /// Ends what is written and returns the file it was written to.
    fn end(self) -> Result<Writing, ReturnedError>;
}

impl ClassSink for ClassPdf<Writing> {
    fn append(&mut self, script: ReturnedScript, draft: bool) -> Result<(), ReturnedError> {
        self.push(script, draft).map(drop)
    }

    fn end(self) -> Result<Writing, ReturnedError> {
        self.finish()
    }
}

impl ClassSink for ClassZip<Writing> {
    fn append(&mut self, script: ReturnedScript, draft: bool) -> Result<(), ReturnedError> {
        self.push(script, draft).map(drop)
    }

    fn end(self) -> Result<Writing, ReturnedError> {
        self.finish()
    }
}

/// Checks the scripts unless `draft` ([`check_final`]), then loads each in turn
/// ([`load_script`]) and appends it to `sink` on the blocking pool, so that one script's images
/// are held at a time; then ends the file.
async fn load_class<S: ClassSink>(
    store: &Store,
    pages: &crate::untrusted::Pages,
    user_id: &str,
    scripts: &[ClassScript],
    draft: bool,
    mut sink: S,
) -> Result<ClassFile, ReturnedError> {
    check_final(scripts, draft)?;
    for s in scripts {
        let script = load_script(store, pages, user_id, &s.session_id, s.heading.clone()).await?;
        let (back, appended) = blocking(move || {
            let appended = sink.append(script, draft);
            (sink, appended)
        })
        .await?;
        sink = back;
        appended?;
    }
    ClassFile::written(blocking(move || sink.end()).await??)
}

/// [`class_pdf`] of the scripts of account `user_id` marked by `scripts`' sessions, loaded one
/// at a time and typeset on the blocking pool, written to a temporary file as it is made: the
/// service holds one script, never the class. Unless `draft`, every script is checked first,
/// as the class's results read its questions: [`ReturnedError::ClassNotFinal`] names every
/// script not marked finally, and nothing is typeset.
pub async fn load_class_pdf(
    store: &Store,
    pages: &crate::untrusted::Pages,
    user_id: &str,
    scripts: &[ClassScript],
    draft: bool,
) -> Result<ClassFile, ReturnedError> {
    let pdf = ClassPdf::new(ClassFile::create()?)?;
    load_class(store, pages, user_id, scripts, draft, pdf).await
}

/// [`class_zip`] of the scripts of account `user_id` marked by `scripts`' sessions, loaded and
/// typeset one at a time and written to a temporary file as by [`load_class_pdf`], and checked
/// first in the same way.
pub async fn load_class_zip(
    store: &Store,
    pages: &crate::untrusted::Pages,
    user_id: &str,
    scripts: &[ClassScript],
    draft: bool,
) -> Result<ClassFile, ReturnedError> {
    let zip = ClassZip::new(ClassFile::create()?);
    load_class(store, pages, user_id, scripts, draft, zip).await
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
