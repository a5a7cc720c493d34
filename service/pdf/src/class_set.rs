//! A class set for the printer: every copy of a print run in one PDF.
//!
//! The question paper is typeset once without page codes; each copy's pages are that paper's
//! pages placed whole (so every copy has exactly the paper's layout and answer spaces) with the
//! copy's code in the corner where the page code would be, the line a person can type beside it
//! (`Copy 017 · page 3 of 12 · 9b1c0d2e`), and, for a named copy, the student's name at the top
//! of every page. Each copy starts on an odd page for double-sided printing: a copy with an odd
//! number of pages ends on a blank back that carries the next page number's code, so that every
//! sheet of a scanned stack can be accounted for.

use std::fmt::Write as _;

use typst::diag::Warned;
use typst::foundations::Smart;
use typst_layout::PagedDocument;
use uuid::Uuid;

use crate::code::{self, CopyCode, MAX_CODED_PAGES, MAX_COPIES};
use crate::source::{self, CAPTION_GAP_MM, CODE_RIGHT_MM, CODE_TOP_MM, MARGIN_X_MM, lit};
use crate::{PaperDocument, RenderError, Renderer, describe, world};

/// One print run of a paper revision: the copies to print, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassSetDocument {
    /// The print run's id, in every copy code.
    pub run_id: Uuid,
    /// The copies, each printed once in this order.
    pub copies: Vec<CopyLabel>,
}

/// One copy of a print run and, for a named copy, the student it is meant for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyLabel {
    /// The copy number, 1 to [`MAX_COPIES`], in its code and its printed line.
    pub copy: u32,
    /// The student's name, printed at the top of every page of the copy.
    pub name: Option<String>,
    /// The student's candidate number, printed beside the name.
    pub candidate_number: Option<String>,
}

/// A typeset class set.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedSet {
    /// The PDF of every copy.
    pub pdf: Vec<u8>,
    /// Its number of pages.
    pub pages: usize,
    /// The paper's pages: every copy prints these.
    pub paper_pages: u32,
    /// The pages each copy takes in the PDF: the paper's pages, plus a blank back when they are
    /// odd.
    pub pages_per_copy: u32,
}

impl RenderedSet {
    /// The 1-based page of the set's PDF that is page `page` of the `index`-th copy (0-based, in
    /// print order), or `None` outside the copy.
    pub fn pdf_page(&self, index: usize, page: u32) -> Option<usize> {
        let index = u32::try_from(index).ok()?;
        (1..=self.pages_per_copy)
            .contains(&page)
            .then(|| (index * self.pages_per_copy + page) as usize)
    }
}

/// The pages a copy of a paper with `paper_pages` pages takes in a set: even, so the next copy
/// starts on an odd page.
pub fn pages_per_copy(paper_pages: u32) -> u32 {
    paper_pages + paper_pages % 2
}

/// The virtual path of the uncoded question paper in the set's world.
const BASE_PATH: &str = "/base.pdf";

impl Renderer {
    /// Typesets every copy of a print run of `paper` in one PDF (see the module's description).
    pub fn class_set(
        &self,
        paper: &PaperDocument,
        set: &ClassSetDocument,
    ) -> Result<RenderedSet, RenderError> {
        check(set)?;
        let base = self.uncoded_question_paper(paper)?;
        let paper_pages = u32::try_from(base.pages().len())
            .ok()
            .filter(|n| (1..MAX_CODED_PAGES).contains(n) || *n == MAX_CODED_PAGES)
            .ok_or_else(|| {
                RenderError::InvalidClassSet(format!(
                    "the question paper has {} pages: a class set prints papers of 1 to {MAX_CODED_PAGES}",
                    base.pages().len()
                ))
            })?;
        let per_copy = pages_per_copy(paper_pages);
        if per_copy > MAX_CODED_PAGES {
            return Err(RenderError::InvalidClassSet(format!(
                "the question paper has {paper_pages} pages: with its blank back a copy would need \
                 a code for page {per_copy}, beyond {MAX_CODED_PAGES}"
            )));
        }
        let options = typst_pdf::PdfOptions {
            ident: Smart::Custom(format!(
                "examkit/{}/{}/base",
                paper.paper_id, paper.revision
            )),
            creator: Smart::Custom(Some("examkit".to_owned())),
            timestamp: None,
            ..Default::default()
        };
        let base_pdf = typst_pdf::pdf(&base, &options)
            .map_err(|errors| RenderError::Export(describe(&errors)))?;
        drop(base);

        let text = set_source(paper, set, paper_pages);
        let world = world::PaperWorld::new(
            &self.shared,
            text,
            vec![(BASE_PATH.to_owned(), base_pdf)],
            world::Codes::Run(set.run_id),
        );
        let Warned { output, .. } = typst::compile::<PagedDocument>(&world);
        typst::comemo::evict(10);
        let document = output.map_err(|errors| RenderError::Typeset(describe(&errors)))?;
        let options = typst_pdf::PdfOptions {
            ident: Smart::Custom(format!("examkit/class-set/{}", set.run_id)),
            creator: Smart::Custom(Some("examkit".to_owned())),
            timestamp: None,
            ..Default::default()
        };
        let pdf = typst_pdf::pdf(&document, &options)
            .map_err(|errors| RenderError::Export(describe(&errors)))?;
        Ok(RenderedSet {
            pdf,
            pages: document.pages().len(),
            paper_pages,
            pages_per_copy: per_copy,
        })
    }

    fn uncoded_question_paper(&self, paper: &PaperDocument) -> Result<PagedDocument, RenderError> {
        let generated = source::question_paper_uncoded(paper)?;
        let world = world::PaperWorld::new(
            &self.shared,
            generated.text,
            generated.files,
            world::Codes::Run(Uuid::nil()),
        );
        let Warned { output, .. } = typst::compile::<PagedDocument>(&world);
        typst::comemo::evict(10);
        output.map_err(|errors| RenderError::Typeset(describe(&errors)))
    }
}

/// Copies numbered 1 to [`MAX_COPIES`], each once; names and candidate numbers without control
/// characters.
fn check(set: &ClassSetDocument) -> Result<(), RenderError> {
    if set.copies.is_empty() || set.copies.len() > MAX_COPIES as usize {
        return Err(RenderError::InvalidClassSet(format!(
            "a class set prints 1 to {MAX_COPIES} copies, not {}",
            set.copies.len()
        )));
    }
    let mut seen = std::collections::HashSet::new();
    for label in &set.copies {
        if !(1..=MAX_COPIES).contains(&label.copy) || !seen.insert(label.copy) {
            return Err(RenderError::InvalidClassSet(format!(
                "copy number {} is out of range or repeated",
                label.copy
            )));
        }
        for text in [&label.name, &label.candidate_number].into_iter().flatten() {
            if text.chars().any(char::is_control) {
                return Err(RenderError::InvalidClassSet(format!(
                    "copy {}: a name or candidate number holds a control character",
                    label.copy
                )));
            }
        }
    }
    Ok(())
}

/// A code in the top right corner, where a paper's page code goes, with its line beside it:
/// typst code placing the image at `image` (a typst expression for its path) and the text
/// `line` (a typst expression).
fn corner_code(image: &str, alt: &str, line: &str) -> String {
    let image_mm = code::image_size_mm();
    let quiet_mm = (image_mm - code::PAGE_CODE_SIZE_MM) / 2.0;
    format!(
        r#"place(top + right, dx: {image_dx:.3}mm, dy: {image_dy:.3}mm,
    image({image}, width: {image_mm:.3}mm, alt: {alt}))
  place(top + right, dx: {caption_dx:.3}mm, dy: {caption_dy:.3}mm,
    text(font: "DejaVu Sans Mono", size: 7.5pt, fill: luma(20), top-edge: "cap-height",
      bottom-edge: "baseline", {line}))"#,
        image_dx = -(CODE_RIGHT_MM - quiet_mm),
        image_dy = CODE_TOP_MM - quiet_mm,
        caption_dx = -(CODE_RIGHT_MM + code::PAGE_CODE_SIZE_MM + quiet_mm + CAPTION_GAP_MM),
        // The line's baseline sits on the code's bottom edge (cap height about 2 mm at 7.5 pt).
        caption_dy = CODE_TOP_MM + code::PAGE_CODE_SIZE_MM - 2.0,
        alt = lit(alt),
    )
}

/// The typst source of the set: one page per copy page, the base page placed whole.
fn set_source(paper: &PaperDocument, set: &ClassSetDocument, paper_pages: u32) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"#set document(title: {title} + " – class set", date: none)
#set page(paper: "a4", margin: 0pt)
#set text(font: "Libertinus Serif", size: 10pt, lang: "en", region: "gb")
// The copy code and the line a person types when the code will not scan.
#let copy-code(copy, p, line) = {{
  {corner}
}}
// A named copy's student, at the top left of every page.
#let student(name) = if name != none {{
  place(top + left, dx: {x:.3}mm, dy: {name_dy:.3}mm,
    box(width: {name_width:.3}mm, text(size: 10pt, weight: "bold", name)))
}}
#let copy-page(copy, p, line, name) = page(background: {{
  place(top + left, image("{base}", page: p, width: 100%))
  copy-code(copy, p, line)
  student(name)
}})[]
#let blank-back(copy, p, line, name) = page(background: {{
  copy-code(copy, p, line)
  student(name)
}})[#align(center + horizon, text(fill: luma(110), "This page is intentionally blank."))]"#,
        title = lit(&paper.title),
        corner = corner_code(
            r#""/copies/" + str(copy) + "/" + str(p) + ".svg""#,
            "copy code",
            "line"
        ),
        x = MARGIN_X_MM,
        name_dy = CODE_TOP_MM + 1.0,
        // From the left margin to where the code's line starts at its longest.
        name_width = 210.0 - 2.0 * MARGIN_X_MM - code::PAGE_CODE_SIZE_MM - 70.0,
        base = BASE_PATH,
    );
    let per_copy = pages_per_copy(paper_pages);
    for label in &set.copies {
        let name = match (&label.name, &label.candidate_number) {
            (Some(name), Some(number)) => lit(&format!("{name} · Candidate {number}")),
            (Some(name), None) => lit(name),
            (None, Some(number)) => lit(&format!("Candidate {number}")),
            (None, None) => "none".to_owned(),
        };
        for page in 1..=per_copy {
            let code = CopyCode {
                run_id: set.run_id,
                copy: label.copy,
                page,
            };
            let function = if page > paper_pages {
                "blank-back"
            } else {
                "copy-page"
            };
            let _ = writeln!(
                out,
                "#{function}({}, {page}, {}, {name})",
                label.copy,
                lit(&code.caption(paper_pages))
            );
        }
    }
    out
}

impl Renderer {
    /// Typesets the extra answer sheet of a print run: one page with the run's extra-sheet code,
    /// boxes for the copy number and the question, a line for the name, and ruled lines. The
    /// same sheet serves every student of the run; a person assigns each one scanned.
    pub fn extra_sheet(&self, paper_title: &str, run_id: Uuid) -> Result<Vec<u8>, RenderError> {
        let caption = code::ExtraSheetCode { run_id }.caption();
        let text = format!(
            r#"#set document(title: "Extra answer sheet", date: none)
#set page(paper: "a4", margin: (top: 28mm, bottom: 20mm, x: {x:.3}mm), background: {{
  {corner}
}})
#set text(font: "Libertinus Serif", size: 11pt, lang: "en", region: "gb")
#let box-row(n) = stack(dir: ltr, spacing: 1.5mm, ..range(n).map(_ => rect(width: 8mm, height: 10mm, stroke: 0.8pt)))
#text(size: 16pt, weight: "bold")[Extra answer sheet]
#v(-0.4em)
#text(fill: luma(60), {title})
#v(0.6em)
#grid(columns: (auto, auto, 1fr, auto, auto), column-gutter: 4mm, align: horizon,
  strong[Copy number], box-row(3), [], strong[Question], rect(width: 30mm, height: 10mm, stroke: 0.8pt))
#v(0.4em)
#grid(columns: (auto, 1fr), column-gutter: 4mm, align: bottom,
  strong[Name], line(length: 100%, stroke: 0.6pt))
#v(0.4em)
#text(size: 9.5pt, fill: luma(60))[Write the copy number printed at the top of your paper and the question you answer here: one question per sheet. Hand it in with your paper.]
#v(0.6em)
#grid(columns: (1fr,), rows: (8mm,) * 20, stroke: (bottom: 0.5pt + luma(150)))
"#,
            x = MARGIN_X_MM,
            corner = corner_code(&lit(world::EXTRA_PATH), "extra sheet code", &lit(&caption)),
            title = lit(paper_title),
        );
        let world =
            world::PaperWorld::new(&self.shared, text, Vec::new(), world::Codes::Run(run_id));
        let Warned { output, .. } = typst::compile::<PagedDocument>(&world);
        typst::comemo::evict(10);
        let document = output.map_err(|errors| RenderError::Typeset(describe(&errors)))?;
        if document.pages().len() != 1 {
            return Err(RenderError::InvalidClassSet(format!(
                "the extra answer sheet took {} pages, not one",
                document.pages().len()
            )));
        }
        let options = typst_pdf::PdfOptions {
            ident: Smart::Custom(format!("examkit/class-set/{run_id}/extra-sheet")),
            creator: Smart::Custom(Some("examkit".to_owned())),
            timestamp: None,
            ..Default::default()
        };
        typst_pdf::pdf(&document, &options).map_err(|errors| RenderError::Export(describe(&errors)))
    }
}
