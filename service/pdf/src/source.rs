//! Generation of the typst source of a question paper and a mark scheme.
//!
//! Safety rule: author text never reaches typst outside a string literal or a maths segment.
//! Plain text is emitted as typst string literals (so `*`, `_`, `#`, `[`, `@`, `<`, `//`… print as
//! themselves), and every maths segment is parsed on its own first and rejected unless it is a
//! single well-formed equation with no code (`#`) and no comments.

use std::fmt::Write as _;

use examkit_bank::{Block, ConditionMode, Criterion, Revision};
use typst::syntax::{SyntaxKind, SyntaxNode};

use crate::code::{self, DocumentKind};
use crate::layout::ContentArea;
use crate::{PaperDocument, PaperQuestion, RenderError, WritingSpace};

/// Minutes of the time guide per mark, in tenths of a minute (1.2 minutes per mark).
pub const MINUTES_PER_MARK_TENTHS: u32 = 12;

/// Ruled answer lines per mark of a part with [`WritingSpace::Smart`](crate::WritingSpace::Smart)
/// (each line 8 mm apart); a part always gets at least this many lines.
pub const LINES_PER_MARK: u32 = 3;

/// The estimated grade guide: each grade and the percentage of the paper's total marks it needs.
/// An estimate for practice only, not an official grade boundary.
pub const GRADE_GUIDE: [(&str, u32); 6] = [
    ("A*", 80),
    ("A", 70),
    ("B", 60),
    ("C", 50),
    ("D", 40),
    ("E", 30),
];

/// The time guide for a paper of `marks` marks: 1.2 minutes per mark rounded up to a multiple of
/// 5 minutes (at least 5 minutes).
pub fn time_guide_minutes(marks: u32) -> u32 {
    let tenths = u64::from(marks) * u64::from(MINUTES_PER_MARK_TENTHS);
    // Round up to a multiple of 50 tenths (5 minutes).
    let fives = tenths.div_ceil(50).max(1);
    u32::try_from(fives * 5).unwrap_or(u32::MAX)
}

/// Marks needed for a percentage of the total, rounded up.
/// The marks a grade of the estimated guide needs on a paper of `total` marks: `percent` of the
/// total, rounded up.
pub fn grade_marks(total: u32, percent: u32) -> u32 {
    let needed = (u64::from(total) * u64::from(percent)).div_ceil(100);
    u32::try_from(needed).unwrap_or(u32::MAX)
}

fn format_minutes(minutes: u32) -> String {
    let (h, m) = (minutes / 60, minutes % 60);
    let hours = match h {
        0 => String::new(),
        1 => "1 hour".to_owned(),
        n => format!("{n} hours"),
    };
    match (h, m) {
        (0, m) => format!("{m} minutes"),
        (_, 0) => hours,
        (_, m) => format!("{hours} {m} minutes"),
    }
}

/// The generated main source and the virtual files it reads.
pub(crate) struct Generated {
    pub(crate) text: String,
    pub(crate) files: Vec<(String, Vec<u8>)>,
}

/// A typst string literal holding `s` exactly.
pub(crate) fn lit(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A piece of text with inline maths.
pub(crate) enum Segment<'a> {
    /// Plain text, with `\$` unescaped.
    Text(String),
    /// The maths between two dollars, as written.
    Math(&'a str),
}

/// Splits text on unescaped `$`; `\$` outside maths is a literal dollar sign.
pub(crate) fn segments(text: &str) -> Result<Vec<Segment<'_>>, String> {
    let mut out = Vec::new();
    let mut plain = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some((_, '$'))) => {
                chars.next();
                plain.push('$');
            }
            '$' => {
                let start = i + 1;
                let mut end = None;
                while let Some((j, d)) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '$' => {
                            end = Some(j);
                            break;
                        }
                        _ => {}
                    }
                }
                let Some(end) = end else {
                    return Err(
                        "a `$` opens maths that is never closed (write `\\$` for a dollar sign)"
                            .to_owned(),
                    );
                };
                if !plain.is_empty() {
                    out.push(Segment::Text(std::mem::take(&mut plain)));
                }
                out.push(Segment::Math(&text[start..end]));
            }
            c => plain.push(c),
        }
    }
    if !plain.is_empty() {
        out.push(Segment::Text(plain));
    }
    Ok(out)
}

/// Checks that `wrapped` (`$…$`) parses as exactly one equation with no code and no comments.
pub(crate) fn check_equation(wrapped: &str) -> Result<(), String> {
    // The bank's rule, checked on the raw text; the syntax tree is checked as well below.
    if wrapped.contains('#') {
        return Err("maths may not contain `#` (code)".to_owned());
    }
    if wrapped.contains("//") || wrapped.contains("/*") {
        return Err("maths may not contain comments (`//` or `/*`)".to_owned());
    }
    let root = typst::syntax::parse(wrapped);
    let significant: Vec<&SyntaxNode> = root
        .children()
        .filter(|n| n.kind() != SyntaxKind::Space)
        .collect();
    fn forbidden(node: &SyntaxNode) -> Option<&'static str> {
        match node.kind() {
            SyntaxKind::Hash => Some("maths may not contain `#` (code)"),
            SyntaxKind::LineComment | SyntaxKind::BlockComment => {
                Some("maths may not contain comments (`//` or `/*`)")
            }
            _ => node.children().find_map(forbidden),
        }
    }
    if let Some(reason) = forbidden(&root) {
        return Err(reason.to_owned());
    }
    let (errors, _) = root.errors_and_warnings();
    if let Some(e) = errors.first() {
        return Err(format!("typst reads it as: {}", e.message));
    }
    if significant.len() != 1 || significant[0].kind() != SyntaxKind::Equation {
        return Err("it is not a single piece of maths".to_owned());
    }
    // No `std` (its `eval` runs code) and no nesting deep enough to exhaust a thread's stack.
    check_bounded(wrapped)
}

/// The deepest syntax tree (of the maths with its dollars) [`crate::Renderer::math_svg`] typesets.
/// Typst typesets nested maths by recursion: a chain of 150 superscripts (`x^x^x^…`) overflows a
/// 2 MiB thread stack (tokio's blocking threads have 2 MiB). Within this depth every construct
/// was measured to typeset in 768 KiB; real maths reaches about 15.
pub const MAX_MATH_DEPTH: usize = 40;

/// Refuses what [`check_equation`] lets through but would make typesetting unbounded:
/// maths that names `std` (in typst maths, `std` is the whole standard library: `std.eval` runs
/// code, `std.link` makes a link), and maths nested deeper than [`MAX_MATH_DEPTH`] (deep
/// recursion overflows the stack, which aborts the process). `wrapped` is the maths with its
/// dollars.
pub(crate) fn check_bounded(wrapped: &str) -> Result<(), String> {
    /// Whether the tree names `std`, and its depth.
    fn walk(node: &SyntaxNode) -> (bool, usize) {
        let mut std = matches!(node.kind(), SyntaxKind::MathIdent | SyntaxKind::Ident)
            && node.leaf_text() == "std";
        let mut depth = 0;
        for child in node.children() {
            let (child_std, child_depth) = walk(child);
            std |= child_std;
            depth = depth.max(child_depth);
        }
        (std, depth + 1)
    }
    // The parser itself is iterative enough for 400 characters (measured with 400 nested
    // brackets); the typesetter is not.
    let (std, depth) = walk(&typst::syntax::parse(wrapped));
    if std {
        return Err("maths may not use `std` (the standard library)".to_owned());
    }
    if depth > MAX_MATH_DEPTH {
        return Err(format!(
            "the maths is nested too deeply ({depth} levels, at most {MAX_MATH_DEPTH})"
        ));
    }
    Ok(())
}

/// The source of the parts of one question, with the question's number for error messages.
struct Writer<'a> {
    number: usize,
    question: &'a PaperQuestion,
}

impl Writer<'_> {
    fn math_error(&self, math: &str, reason: String) -> RenderError {
        RenderError::InvalidMath {
            question: self.number,
            math: math.to_owned(),
            reason,
        }
    }

    fn invalid(&self, reason: String) -> RenderError {
        RenderError::InvalidQuestion {
            question: self.number,
            reason,
        }
    }

    /// Inline maths `$…$`, checked.
    fn inline_math(&self, math: &str) -> Result<String, RenderError> {
        let trimmed = math.trim();
        if trimmed.is_empty() {
            return Err(self.math_error(math, "the maths is empty".to_owned()));
        }
        // A trailing backslash would escape the closing dollar.
        let wrapped = format!("${trimmed}$");
        check_equation(&wrapped).map_err(|r| self.math_error(math, r))?;
        Ok(wrapped)
    }

    /// Displayed maths `$ … $`, checked.
    fn display_math(&self, math: &str) -> Result<String, RenderError> {
        let trimmed = math.trim();
        if trimmed.is_empty() {
            return Err(self.math_error(math, "the maths is empty".to_owned()));
        }
        let wrapped = format!("$ {trimmed} $");
        check_equation(&wrapped).map_err(|r| self.math_error(math, r))?;
        Ok(wrapped)
    }

    /// Text with inline maths as a typst code expression giving content (`{"…"; $…$; "…"}`).
    fn rich(&self, text: &str) -> Result<String, RenderError> {
        let parts = segments(text).map_err(|r| self.math_error(text, r))?;
        if parts.is_empty() {
            return Ok("[]".to_owned());
        }
        let mut out = String::from("{");
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            match part {
                Segment::Text(t) => out.push_str(&lit(t)),
                Segment::Math(m) => out.push_str(&self.inline_math(m)?),
            }
        }
        out.push('}');
        Ok(out)
    }

    /// Content blocks as one code expression; `marks` is appended at the right margin of the last
    /// paragraph (or on a line of its own).
    fn blocks(&self, blocks: &[Block], marks: Option<u32>) -> Result<String, RenderError> {
        let mut items: Vec<String> = Vec::new();
        let last = blocks.len().checked_sub(1);
        let mut marks_placed = false;
        for (i, block) in blocks.iter().enumerate() {
            let item = match block {
                Block::Text { text } => {
                    let rich = self.rich(text)?;
                    match marks {
                        Some(m) if Some(i) == last => {
                            marks_placed = true;
                            format!("par({{{rich}; marks-tag({m})}})")
                        }
                        _ => format!("par({rich})"),
                    }
                }
                Block::Math { math } => {
                    format!("block(width: 100%, {})", self.display_math(math)?)
                }
                Block::List { items } => {
                    let rendered: Result<Vec<String>, RenderError> =
                        items.iter().map(|t| self.rich(t)).collect();
                    format!("list({})", rendered?.join(", "))
                }
                Block::Diagram { asset, alt, width } => {
                    if !(width.is_finite() && *width > 0.0 && *width <= 1.0) {
                        return Err(self.invalid(format!(
                            "the diagram of asset {asset} has width {width}, expected a fraction in (0, 1]"
                        )));
                    }
                    if !self.question.assets.contains_key(asset) {
                        return Err(RenderError::MissingAsset {
                            question: self.number,
                            asset: *asset,
                        });
                    }
                    format!(
                        "align(center, block(above: 0.8em, below: 0.8em, image({}, width: {:.3}%, alt: {})))",
                        lit(&asset_path(asset)),
                        width * 100.0,
                        lit(alt)
                    )
                }
            };
            items.push(item);
        }
        if let Some(m) = marks
            && !marks_placed
        {
            items.push(format!("marks-line({m})"));
        }
        if items.is_empty() {
            return Ok("[]".to_owned());
        }
        Ok(format!("{{\n  {}\n}}", items.join(";\n  ")))
    }

    fn revision(&self) -> &Revision {
        &self.question.revision
    }

    fn part_label(&self, part_id: &str) -> Result<Option<&str>, RenderError> {
        self.revision()
            .content
            .parts
            .iter()
            .find(|p| p.id == part_id)
            .map(|p| p.label.as_deref())
            .ok_or_else(|| self.invalid(format!("the scheme names an unknown part {part_id:?}")))
    }
}

fn asset_path(asset: &uuid::Uuid) -> String {
    format!("/assets/{asset}.svg")
}

/// The page margins, in millimetres: top (below the page code), bottom (with the footer) and
/// left and right.
pub(crate) const MARGIN_TOP_MM: f64 = 28.0;
pub(crate) const MARGIN_BOTTOM_MM: f64 = 24.0;
pub(crate) const MARGIN_X_MM: f64 = 20.0;
/// Where the page code's dark modules start: this far below the top edge of the page, and
/// ending this far from its right edge (aligned with the text).
pub(crate) const CODE_TOP_MM: f64 = 6.0;
pub(crate) const CODE_RIGHT_MM: f64 = 20.0;
/// The gap between the page code's caption and its quiet zone.
pub(crate) const CAPTION_GAP_MM: f64 = 1.5;

/// The text area's top edge and the bottom margin, in points, for the layout reader.
pub(crate) fn content_area() -> ContentArea {
    const PT_PER_MM: f64 = 72.0 / 25.4;
    ContentArea {
        top: MARGIN_TOP_MM * PT_PER_MM,
        bottom_margin: MARGIN_BOTTOM_MM * PT_PER_MM,
    }
}

/// The page setup, fonts and layout functions common to both documents.
fn preamble(
    paper: &PaperDocument,
    document: DocumentKind,
    total: u32,
    extra: &[(String, String)],
    coded: bool,
) -> String {
    let kind = match document {
        DocumentKind::QuestionPaper => "Question paper",
        DocumentKind::MarkScheme => "Mark scheme",
    };
    let reference = format!("Paper {} · Revision {}", paper.paper_id, paper.revision);
    // The caption without its page number, which typst appends per page.
    let caption_prefix = code::caption_prefix(document, paper.paper_id, paper.revision);
    let image_mm = code::image_size_mm();
    let quiet_mm = (image_mm - code::PAGE_CODE_SIZE_MM) / 2.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "#set document(title: {} + \" – \" + {}, date: none)",
        lit(&paper.title),
        lit(kind)
    );
    let _ = writeln!(
        out,
        r#"// The page code: a QR code naming the document, the paper revision and the page, with a
// caption for people, in the top right corner of every page up to the page limit.
#let page-code(p) = if p <= {max_pages} {{
  place(top + right, dx: {image_dx:.3}mm, dy: {image_dy:.3}mm,
    image("/codes/" + str(p) + ".svg", width: {image_mm:.3}mm, alt: "page code"))
  place(top + right, dx: {caption_dx:.3}mm, dy: {caption_dy:.3}mm,
    text(font: "DejaVu Sans Mono", size: 6.5pt, fill: luma(40), top-edge: "cap-height",
      bottom-edge: "baseline", {caption} + str(p)))
}}
#set page(paper: "a4", margin: (top: {top}mm, bottom: {bottom}mm, x: {x}mm),
  background: context page-code(here().page()),
  footer: context {{
    set text(size: 8.5pt, fill: luma(60))
    line(length: 100%, stroke: 0.4pt + luma(150))
    v(-0.5em)
    grid(columns: (1fr, auto), align: (left, right), {reference},
      "Page " + str(counter(page).get().first()) + " of " + str(counter(page).final().first()))
  }})
#set text(font: "New Computer Modern", size: 11pt, lang: "en", region: "gb")
#show math.equation: set text(font: "New Computer Modern Math")
#set par(leading: 0.7em, spacing: 1.1em)
#set list(indent: 0.6em, body-indent: 0.6em)
#set table(stroke: 0.5pt + luma(110))"#,
        // Uncoded pages (the base of a class set's copies) print no code and no caption.
        max_pages = if coded { code::MAX_CODED_PAGES } else { 0 },
        image_dx = -(CODE_RIGHT_MM - quiet_mm),
        image_dy = CODE_TOP_MM - quiet_mm,
        image_mm = image_mm,
        caption_dx = -(CODE_RIGHT_MM + code::PAGE_CODE_SIZE_MM + quiet_mm + CAPTION_GAP_MM),
        // The caption's baseline sits on the bottom edge of the code (its cap height is about
        // 1.6 mm at 6.5 pt).
        caption_dy = CODE_TOP_MM + code::PAGE_CODE_SIZE_MM - 1.6,
        caption = lit(&caption_prefix),
        top = MARGIN_TOP_MM,
        bottom = MARGIN_BOTTOM_MM,
        x = MARGIN_X_MM,
        reference = lit(&reference)
    );
    out.push_str(include_str!("template.typ"));
    let _ = writeln!(
        out,
        "#let meta = (title: {}, kind: {}, id: {}, revision: {}, questions: {}, total: {}, extra: ({}))",
        lit(&paper.title),
        lit(kind),
        lit(&paper.paper_id.to_string()),
        paper.revision,
        paper.questions.len(),
        total,
        extra
            .iter()
            .map(|(k, v)| format!("strong({}), {}, ", lit(k), lit(v)))
            .collect::<String>()
    );
    out
}

fn total_marks(paper: &PaperDocument) -> u32 {
    paper
        .questions
        .iter()
        .map(question_marks)
        .fold(0u32, u32::saturating_add)
}

fn question_marks(q: &PaperQuestion) -> u32 {
    q.revision
        .content
        .parts
        .iter()
        .map(|p| p.marks)
        .fold(0u32, u32::saturating_add)
}

fn asset_files(paper: &PaperDocument) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for q in &paper.questions {
        for (id, bytes) in &q.assets {
            files.push((asset_path(id), bytes.clone()));
        }
    }
    files
}

/// The typst source of the question paper.
pub(crate) fn question_paper(paper: &PaperDocument) -> Result<Generated, RenderError> {
    question_paper_with(paper, true)
}

/// The question paper with no page codes: the base every copy of a class set prints on, with
/// its copy's code in the corner where the page code would be.
pub(crate) fn question_paper_uncoded(paper: &PaperDocument) -> Result<Generated, RenderError> {
    question_paper_with(paper, false)
}

fn question_paper_with(paper: &PaperDocument, coded: bool) -> Result<Generated, RenderError> {
    let total = total_marks(paper);
    let minutes = time_guide_minutes(total);
    let extra = vec![(
        "Time guide".to_owned(),
        format!(
            "{} (suggested: 1.2 minutes per mark)",
            format_minutes(minutes)
        ),
    )];
    let mut out = preamble(paper, DocumentKind::QuestionPaper, total, &extra, coded);
    out.push_str("#cover-head(meta)\n#candidate-box\n");
    let space_instruction = match paper.writing_space {
        WritingSpace::None => {
            "Write your answers on separate paper, numbering each answer clearly."
        }
        WritingSpace::Smart => {
            "Answer the questions in the spaces provided – there may be more space than you need."
        }
        WritingSpace::Pages(_) => {
            "Answer each question on the ruled pages that follow it – there may be more space than you need."
        }
    };
    let _ = writeln!(
        out,
        r#"#boxed("Instructions", list(
  "Use black ink or ball-point pen.",
  "Answer all questions.",
  {space},
  "You should show sufficient working to make your methods clear. Answers without working may not gain full credit.",
  "Inexact answers should be given to three significant figures unless otherwise stated.",
))
#boxed("Information", list(
  "There are " + plural(meta.questions, "question") + " in this question paper. The total mark for this paper is " + str(meta.total) + ".",
  "The marks for each question are shown in brackets – use this as a guide as to how much time to spend on each question.",
  "The time guide is a suggestion for practice: " + {guide} + ", at 1.2 minutes per mark rounded up to 5 minutes.",
))
#boxed("Advice", list(
  "Read each question carefully before you start to answer it.",
  "Try to answer every question.",
  "Check your answers if you have time at the end.",
))"#,
        space = lit(space_instruction),
        guide = lit(&format_minutes(minutes)),
    );
    if paper.grade_guide {
        out.push_str(
            "#boxed(\"Estimated grade guide\", [The mark scheme for this paper includes an estimated grade guide. It is an estimate for practice only, not an official grade boundary.])\n",
        );
    }
    out.push_str("#pagebreak()\n");

    let count = paper.questions.len();
    for (index, q) in paper.questions.iter().enumerate() {
        let number = index + 1;
        let w = Writer {
            number,
            question: q,
        };
        let marks = question_marks(q);
        let mut body = String::from("{\n");
        if !q.revision.content.stem.is_empty() {
            let _ = writeln!(body, "{};", w.blocks(&q.revision.content.stem, None)?);
        }
        if q.revision.content.parts.is_empty() {
            return Err(w.invalid("the question has no parts".to_owned()));
        }
        for (i, part) in q.revision.content.parts.iter().enumerate() {
            let label = part.label.as_deref().map_or("none".to_owned(), lit);
            let text = w.blocks(&part.body, Some(part.marks))?;
            let part_body = if paper.writing_space == WritingSpace::Smart {
                let lines = part
                    .marks
                    .saturating_mul(LINES_PER_MARK)
                    .max(LINES_PER_MARK);
                format!(
                    "{{ {text}; prompt-end({number}, {i}); answer-lines({number}, {i}, {lines}) }}"
                )
            } else {
                format!("{{ {text}; prompt-end({number}, {i}) }}")
            };
            let _ = writeln!(body, "part({number}, {i}, {label}, {part_body});");
        }
        let _ = writeln!(body, "question-total({number}, {marks})");
        body.push('}');
        if matches!(paper.writing_space, WritingSpace::Pages(_)) && index > 0 {
            out.push_str("#pagebreak(weak: true)\n");
        }
        let _ = writeln!(out, "#question({number}, {body})");
        let last = index + 1 == count;
        match paper.writing_space {
            WritingSpace::Pages(k) => {
                let k = k.max(1);
                for i in 1..=k {
                    let ending = if last && i == k {
                        "paper-end(meta.total)"
                    } else {
                        "none"
                    };
                    let _ = writeln!(out, "#writing-page({number}, {i}, {k}, {ending})");
                }
            }
            _ => {
                if !last {
                    out.push_str("#separator\n");
                }
            }
        }
    }
    if !matches!(paper.writing_space, WritingSpace::Pages(_)) || count == 0 {
        out.push_str("#separator\n#paper-end(meta.total)\n");
    }
    Ok(Generated {
        text: out,
        files: asset_files(paper),
    })
}

/// "dep. on M1 in (a)" for each dependency of a criterion.
fn dependency_text(w: &Writer<'_>, criterion: &Criterion) -> Result<Option<String>, RenderError> {
    if criterion.depends_on.is_empty() {
        return Ok(None);
    }
    let criteria = &w.revision().scheme.criteria;
    let mut names = Vec::new();
    for dep in &criterion.depends_on {
        let Some(target) = criteria.iter().find(|c| &c.id == dep) else {
            return Err(w.invalid(format!(
                "criterion {:?} depends on an unknown criterion {dep:?}",
                criterion.id
            )));
        };
        let mut name = target.code.clone();
        // Disambiguate when the part has several criteria with this code.
        let same: Vec<&Criterion> = criteria
            .iter()
            .filter(|c| c.part_id == target.part_id && c.code == target.code)
            .collect();
        if same.len() > 1 {
            let ordinal = same.iter().position(|c| c.id == target.id).unwrap_or(0) + 1;
            let _ = write!(name, " ({})", ordinal_word(ordinal));
        }
        if target.part_id != criterion.part_id
            && let Some(label) = w.part_label(&target.part_id)?
        {
            let _ = write!(name, " in {label}");
        }
        names.push(name);
    }
    Ok(Some(format!("dep. on {}", names.join(" and "))))
}

fn ordinal_word(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The typst source of the mark scheme.
pub(crate) fn mark_scheme(paper: &PaperDocument) -> Result<Generated, RenderError> {
    let total = total_marks(paper);
    let mut out = preamble(paper, DocumentKind::MarkScheme, total, &[], true);
    out.push_str("#cover-head(meta)\n");
    out.push_str(
        r#"#boxed("Marking codes", table(columns: (auto, 1fr), stroke: none, inset: (x: 0pt, y: 3pt), column-gutter: 10pt,
  strong("M"), "method mark: for a correct method applied to appropriate values",
  strong("A"), "accuracy mark: for a correct answer following a correct method",
  strong("B"), "independent mark: for a correct result or statement, whatever the method",
  strong("d"), "dependent: only awarded if the mark it depends on is awarded (shown as “dep. on …”)",
  strong("ft"), "follow through: credit a correct use of an earlier wrong answer",
  strong("*"), "answer given in the question: the working must be complete and correct",
))
#boxed("Marking notes", table(columns: (auto, 1fr), stroke: none, inset: (x: 0pt, y: 3pt), column-gutter: 10pt,
  strong("oe"), "or equivalent",
  strong("cao"), "correct answer only",
  strong("cso"), "correct solution only",
  strong("isw"), "ignore subsequent working",
  strong("awrt"), "answers which round to",
  strong("All of / Any of"), "every listed condition, or at least one of them, must hold for the mark",
))
"#,
    );
    if paper.grade_guide {
        out.push_str(
            "#boxed(\"Estimated grade guide\", {\n  par(\"This guide is an estimate for practice only, not an official grade boundary: boundaries are set for each real examination series. Marks are out of \" + str(meta.total) + \".\")\n  table(columns: (auto, auto, auto), align: (left, right, right), inset: 5pt,\n    table.header(strong(\"Grade\"), strong(\"Percentage\"), strong(\"Marks\")),\n",
        );
        for (grade, percent) in GRADE_GUIDE {
            let _ = writeln!(
                out,
                "    {}, \"{percent}%\", \"{} / {total}\",",
                lit(grade),
                grade_marks(total, percent)
            );
        }
        out.push_str("  )\n})\n");
    }
    out.push_str("#pagebreak()\n");

    for (index, q) in paper.questions.iter().enumerate() {
        let number = index + 1;
        let w = Writer {
            number,
            question: q,
        };
        let marks = question_marks(q);
        let _ = writeln!(
            out,
            "#block(above: 1.6em, below: 0.6em, breakable: false, grid(columns: (1fr, auto), text(weight: \"bold\", size: 13pt, \"Question {number}\"), text(size: 10pt, fill: luma(80), {})))",
            lit(&q.revision.title)
        );
        out.push_str(
            "#table(columns: (3.4em, 1fr, 3.8em, 26%), inset: 5pt, align: (x, y) => if x == 2 { center + top } else { left + top },\n  table.header(strong(\"Part\"), strong(\"Scheme\"), strong(\"Marks\"), strong(\"Notes\")),\n",
        );
        for criterion in &q.revision.scheme.criteria {
            let part = match w.part_label(&criterion.part_id)? {
                Some(label) => lit(label),
                None => lit(&number.to_string()),
            };
            let mut scheme = vec![w.rich(&criterion.requirement)?];
            if !criterion.answers.is_empty() {
                let answers: Result<Vec<String>, RenderError> =
                    criterion.answers.iter().map(|a| w.rich(a)).collect();
                scheme.push(format!(
                    "ms-row-extra({{emph(\"Accept: \"); {}}})",
                    answers?.join("; \" or \"; ")
                ));
            }
            if !criterion.conditions.is_empty() {
                let heading = match criterion.condition_mode {
                    Some(ConditionMode::Any) => "Any of:",
                    Some(ConditionMode::All) | None => "All of:",
                };
                let conditions: Result<Vec<String>, RenderError> =
                    criterion.conditions.iter().map(|c| w.rich(c)).collect();
                scheme.push(format!(
                    "ms-row-extra({{emph({}); list({})}})",
                    lit(heading),
                    conditions?.join(", ")
                ));
            }
            if let Some(dep) = dependency_text(&w, criterion)? {
                scheme.push(format!("ms-row-extra(emph({}))", lit(&dep)));
            }
            let notes = if criterion.notes.is_empty() {
                "[]".to_owned()
            } else {
                let notes: Result<Vec<String>, RenderError> =
                    criterion.notes.iter().map(|n| w.rich(n)).collect();
                format!("{{{}}}", notes?.join("; \"; \"; "))
            };
            let _ = writeln!(
                out,
                "  {part}, {{{}}}, strong({}), {notes},",
                scheme.join("; parbreak(); "),
                lit(&criterion.code)
            );
        }
        let _ = writeln!(
            out,
            "  table.cell(colspan: 2, align(right, strong(\"Total for Question {number}\"))), strong(\"{marks}\"), [],\n)"
        );
    }
    let _ = writeln!(
        out,
        "#v(1em)\n#align(right, text(weight: \"bold\", size: 12pt, \"TOTAL FOR PAPER IS \" + str(meta.total) + \" MARKS\"))\n#align(center, text(weight: \"bold\", \"END OF MARK SCHEME\"))"
    );
    Ok(Generated {
        text: out,
        files: asset_files(paper),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_literals_escape_quotes_backslashes_and_controls() {
        assert_eq!(lit("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
        assert_eq!(lit("\u{7}"), "\"\\u{7}\"");
        // Markup characters are left alone: a string literal prints them as they are.
        assert_eq!(lit("#let *x* $"), "\"#let *x* $\"");
    }

    #[test]
    fn segments_split_maths_and_unescape_dollars() {
        let parts = segments(r"Costs \$5 and $x^2$ m.").expect("valid");
        assert_eq!(parts.len(), 3);
        assert!(matches!(&parts[0], Segment::Text(t) if t == "Costs $5 and "));
        assert!(matches!(&parts[1], Segment::Math("x^2")));
        assert!(matches!(&parts[2], Segment::Text(t) if t == " m."));
        assert!(segments("open $x").is_err());
    }

    #[test]
    fn equations_with_code_comments_or_broken_syntax_are_rejected() {
        assert!(check_equation("$x^2 + 1$").is_ok());
        assert!(check_equation("$\"Var\"(X)$").is_ok());
        assert!(check_equation("$#read(\"x\")$").is_err());
        assert!(check_equation("$x // y$").is_err());
        assert!(check_equation("$x /* y */$").is_err());
        assert!(check_equation("$\"open$").is_err());
        assert!(check_equation("$x$ $y$").is_err());
        assert!(check_equation("$x\\$").is_err());
    }

    #[test]
    fn time_guide_rounds_up_to_five_minutes() {
        assert_eq!(time_guide_minutes(0), 5);
        assert_eq!(time_guide_minutes(1), 5);
        assert_eq!(time_guide_minutes(5), 10); // 6 minutes
        assert_eq!(time_guide_minutes(25), 30); // exactly 30
        assert_eq!(time_guide_minutes(75), 90);
        assert_eq!(time_guide_minutes(100), 120);
        assert_eq!(format_minutes(90), "1 hour 30 minutes");
        assert_eq!(format_minutes(120), "2 hours");
        assert_eq!(format_minutes(45), "45 minutes");
    }

    #[test]
    fn grade_marks_round_up() {
        assert_eq!(grade_marks(75, 80), 60);
        assert_eq!(grade_marks(73, 70), 52); // 51.1 → 52
        assert_eq!(ordinal_word(2), "2nd");
        assert_eq!(ordinal_word(11), "11th");
    }
}
