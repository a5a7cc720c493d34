//! The typst document of a returned script: the cover with the marks, then each page.
//!
//! Pages are A4. A scanned page's image, turned upright, fills the text area's width (or its
//! height, for a page wider than tall) from its top-left corner; the right margin holds the
//! questions' marks. Every box and mark is placed in millimetres computed here, from the
//! evidence's fractions of the displayed page turned with the image, so typst places nothing by
//! itself that the marks depend on. Text from people (names, titles, labels, codes, captions)
//! reaches the source only as string literals.

use std::fmt::Write as _;
use std::sync::OnceLock;

use examkit_pdf::{Renderer, SourceDocument, typst_string as lit};

use super::{ReturnedError, ReturnedScript, ScannedPage, ScriptPage};
use crate::marked::{EvidenceBox, MarkedQuestion, NOT_SCANNED, Outcome};
use crate::marking::marker::Rect;
use crate::marking::pages::turned;

/// The page's width, millimetres (A4).
pub(super) const PAGE_WIDTH_MM: f64 = 210.0;
/// The page's height, millimetres (A4).
pub(super) const PAGE_HEIGHT_MM: f64 = 297.0;
/// The left margin.
pub(super) const MARGIN_LEFT_MM: f64 = 12.0;
/// The right margin, where the questions' marks go.
pub(super) const MARGIN_RIGHT_MM: f64 = 30.0;
/// The top margin, with the header.
pub(super) const MARGIN_TOP_MM: f64 = 18.0;
/// The bottom margin, with the page number.
pub(super) const MARGIN_BOTTOM_MM: f64 = 16.0;
/// Room under a scanned page for its caption.
const CAPTION_MM: f64 = 6.0;
/// The width of a criterion's code beside its box.
const LABEL_MM: f64 = 12.0;
/// The least distance between two marks in the margin, top to top.
const MARK_STEP_MM: f64 = 13.0;
/// The step between the codes of criteria decided on one box.
const CODE_STEP_MM: f64 = 4.0;

/// A rectangle on the page, millimetres from its top-left corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Mm {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// Where a scanned page's upright image is on its page: at the top-left corner of the text
/// area, as large as the area allows (less the caption's room), keeping its proportions.
pub(super) fn image_area(page: &ScannedPage) -> Mm {
    let (w, h) = upright_size(page);
    let room_w = PAGE_WIDTH_MM - MARGIN_LEFT_MM - MARGIN_RIGHT_MM;
    let room_h = PAGE_HEIGHT_MM - MARGIN_TOP_MM - MARGIN_BOTTOM_MM - CAPTION_MM;
    let scale = (room_w / w).min(room_h / h);
    Mm {
        x: MARGIN_LEFT_MM,
        y: MARGIN_TOP_MM,
        width: w * scale,
        height: h * scale,
    }
}

/// The page's image size upright, pixels (at least one each way).
fn upright_size(page: &ScannedPage) -> (f64, f64) {
    let (w, h) = (
        f64::from(page.width_px.max(1)),
        f64::from(page.height_px.max(1)),
    );
    if page.quarter_turns % 2 == 1 {
        (h, w)
    } else {
        (w, h)
    }
}

/// An evidence box (fractions of the displayed page) as fractions of the page turned upright by
/// `quarter_turns` clockwise, as the review page turns its boxes with the page.
pub(super) fn upright_box(region: &EvidenceBox, quarter_turns: u8) -> Rect {
    let displayed = Rect {
        x: region.x.value(),
        y: region.y.value(),
        width: region.width.value(),
        height: region.height.value(),
    };
    turned(displayed, u32::from(quarter_turns % 4) * 90)
}

/// An evidence box on the page, millimetres.
pub(super) fn box_on_page(area: Mm, upright: Rect) -> Mm {
    Mm {
        x: area.x + upright.x * area.width,
        y: area.y + upright.y * area.height,
        width: upright.width * area.width,
        height: upright.height * area.height,
    }
}

/// The colour names of the source for an outcome.
fn outcome_name(outcome: Outcome) -> &'static str {
    outcome.as_str()
}

/// A question's mark as printed: `3/5`, `2–3/5` while uncertain marks remain, `–` unmarked,
/// `not scanned` when its page was not scanned.
pub(super) fn mark_text(q: &MarkedQuestion) -> String {
    if q.not_scanned() {
        return NOT_SCANNED.to_owned();
    }
    if !q.status.is_marked() {
        return "–".to_owned();
    }
    if q.score.possible > q.score.awarded {
        format!("{}–{}/{}", q.score.awarded, q.score.possible, q.score.max)
    } else {
        format!("{}/{}", q.score.awarded, q.score.max)
    }
}

/// The script's total and percentage: marks awarded by marked questions (with those still
/// uncertain or not scanned, when some are) of the marks of every question. A total that is a
/// range has no percentage: it is printed once every mark is settled.
fn totals(script: &ReturnedScript) -> (String, String, String) {
    let marked = || script.questions.iter().filter(|q| q.status.is_marked());
    let awarded: i64 = marked().map(|q| q.score.awarded).sum();
    let possible: i64 = marked().map(|q| q.score.possible).sum();
    let max: i64 = script.questions.iter().map(|q| q.score.max).sum();
    let total = if possible > awarded {
        format!("{awarded}–{possible}")
    } else {
        awarded.to_string()
    };
    let percentage = if possible > awarded {
        "– (until every mark is settled)".to_owned()
    } else if max > 0 {
        // Marks are small whole numbers: exact in f64.
        format!("{}%", (awarded as f64 * 100.0 / max as f64).round())
    } else {
        "–".to_owned()
    };
    (total, max.to_string(), percentage)
}

/// The file extension typst reads an image by: JPEG or PNG.
fn extension(image: &[u8]) -> Option<&'static str> {
    if image.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("jpg")
    } else if image.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("png")
    } else {
        None
    }
}

/// The virtual path of the `index`-th page's image.
fn image_path(index: usize, extension: &str) -> String {
    format!("/pages/{index}.{extension}")
}

/// The process's typesetter: fonts loaded once.
fn renderer() -> &'static Renderer {
    static RENDERER: OnceLock<Renderer> = OnceLock::new();
    RENDERER.get_or_init(Renderer::new)
}

/// The PDF of `script`: refused unless every question is marked finally, when `draft` is false
/// ([`ReturnedError::NotFinal`]); a draft says "Draft" on every page. The PDF is tagged for
/// accessibility. CPU-bound: call it from a blocking thread.
pub fn typeset(script: &ReturnedScript, draft: bool) -> Result<Vec<u8>, ReturnedError> {
    let source = source(script, draft)?;
    let files = script
        .pages
        .iter()
        .enumerate()
        .filter_map(|(i, page)| match page {
            ScriptPage::Scanned(scan) => Some((i, scan.image.clone())),
            ScriptPage::NotScanned { .. } => None,
        });
    render(script, source, files, true).map(|(pdf, _)| pdf)
}

/// [`typeset`], taking the script so that its images move into the typesetter rather than
/// being copied.
pub fn typeset_owned(script: ReturnedScript, draft: bool) -> Result<Vec<u8>, ReturnedError> {
    typeset_parts(script, draft, true).map(|(pdf, _)| pdf)
}

/// The PDF of `script` and its page count, tagged or not (a PDF joined into another is better
/// untagged: its structure tree would not follow its pages).
pub(super) fn typeset_parts(
    mut script: ReturnedScript,
    draft: bool,
    tagged: bool,
) -> Result<(Vec<u8>, usize), ReturnedError> {
    let source = source(&script, draft)?;
    let images: Vec<(usize, Vec<u8>)> = script
        .pages
        .iter_mut()
        .enumerate()
        .filter_map(|(i, page)| match page {
            ScriptPage::Scanned(scan) => Some((i, std::mem::take(&mut scan.image))),
            ScriptPage::NotScanned { .. } => None,
        })
        .collect();
    render(&script, source, images, tagged)
}

fn render(
    script: &ReturnedScript,
    source: String,
    images: impl IntoIterator<Item = (usize, Vec<u8>)>,
    tagged: bool,
) -> Result<(Vec<u8>, usize), ReturnedError> {
    let mut files = Vec::new();
    for (i, image) in images {
        // The source names each image by the extension it was checked to have.
        let Some(extension) = extension(&image) else {
            continue;
        };
        files.push((image_path(i, extension), image));
    }
    let rendered = renderer().typeset_source(SourceDocument {
        source,
        files,
        ident: format!(
            "examkit/returned/{}/{}/{}",
            script.student, script.paper_title, script.date
        ),
        tagged,
    })?;
    Ok((rendered.pdf, rendered.pages))
}

/// One criterion's evidence on a page: its code, outcome and box, upright.
struct Tick<'a> {
    code: &'a str,
    outcome: Outcome,
    upright: Rect,
}

/// A question's mark in the margin of a page: its label, mark and top, a fraction of the page.
struct Margin<'a> {
    label: &'a str,
    mark: String,
    top: f64,
}

/// The typst source of `script` (its images at [`image_path`]), after the final check.
pub(super) fn source(script: &ReturnedScript, draft: bool) -> Result<String, ReturnedError> {
    if !draft {
        script.check_final()?;
    }
    let mut extensions = Vec::with_capacity(script.pages.len());
    for page in &script.pages {
        extensions.push(match page {
            ScriptPage::Scanned(scan) => {
                Some(
                    extension(&scan.image).ok_or_else(|| ReturnedError::PageImage {
                        page_id: scan.page_id.clone(),
                        reason: "the image is neither JPEG nor PNG".into(),
                    })?,
                )
            }
            ScriptPage::NotScanned { .. } => None,
        });
    }
    let mut out = String::new();
    preamble(&mut out, script, draft);
    cover(&mut out, script, draft);
    let margins = margins(script);
    for (i, page) in script.pages.iter().enumerate() {
        match page {
            ScriptPage::Scanned(scan) => {
                let ticks = ticks(script, scan);
                let here: Vec<&Margin> = margins
                    .iter()
                    .filter(|(page, _)| *page == i)
                    .map(|(_, m)| m)
                    .collect();
                let extension = extensions[i].unwrap_or("png");
                scanned_page(&mut out, scan, &image_path(i, extension), &ticks, &here);
            }
            ScriptPage::NotScanned { paper_page } => placeholder(&mut out, *paper_page),
        }
    }
    Ok(out)
}

/// The evidence of every criterion on page `scan`, in paper and rubric order.
fn ticks<'a>(script: &'a ReturnedScript, scan: &ScannedPage) -> Vec<Tick<'a>> {
    let mut ticks = Vec::new();
    for q in &script.questions {
        for c in &q.criteria {
            for e in c
                .decision
                .evidence
                .iter()
                .filter(|e| e.page_id == scan.page_id)
            {
                ticks.push(Tick {
                    code: &c.code,
                    outcome: c.effective,
                    upright: upright_box(&e.region, scan.quarter_turns),
                });
            }
        }
    }
    ticks
}

/// Where each question's mark goes: beside its highest piece of evidence on the first scanned
/// page holding some, else at the top of the first scanned page it was marked from; a question
/// on no scanned page has its mark on the cover only. By page index.
fn margins(script: &ReturnedScript) -> Vec<(usize, Margin<'_>)> {
    let scans: Vec<(usize, &ScannedPage)> = script
        .pages
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match p {
            ScriptPage::Scanned(scan) => Some((i, scan)),
            ScriptPage::NotScanned { .. } => None,
        })
        .collect();
    let mut margins = Vec::new();
    for q in script.questions.iter().filter(|q| q.status.is_marked()) {
        let with_evidence = scans.iter().find_map(|(i, scan)| {
            q.criteria
                .iter()
                .flat_map(|c| &c.decision.evidence)
                .filter(|e| e.page_id == scan.page_id)
                .map(|e| upright_box(&e.region, scan.quarter_turns).y)
                .min_by(f64::total_cmp)
                .map(|top| (*i, top))
        });
        let found = with_evidence.or_else(|| {
            let work = q.sources.work_pages();
            scans
                .iter()
                .find(|(_, scan)| {
                    work.iter()
                        .any(|(asset, n)| format!("{asset}:p{n}") == scan.page_id)
                })
                .map(|(i, _)| (*i, 0.0))
        });
        if let Some((i, top)) = found {
            margins.push((
                i,
                Margin {
                    label: &q.label,
                    mark: mark_text(q),
                    top: top.clamp(0.0, 1.0),
                },
            ));
        }
    }
    margins
}

fn preamble(out: &mut String, script: &ReturnedScript, draft: bool) {
    let heading = format!("{} · {}", script.student, script.paper_title);
    let (draft_word, watermark) = if draft {
        (
            r##"text(size: 10pt, weight: "bold", fill: colours.uncertain, "Draft")"##,
            r##"place(center + horizon, rotate(-35deg, text(size: 96pt, weight: "bold", fill: luma(0, 8%), "Draft")))"##,
        )
    } else {
        ("[]", "none")
    };
    let _ = writeln!(
        out,
        r##"#set document(title: {title}, date: none)
#let colours = (awarded: rgb("#0a8a2a"), withheld: rgb("#d01c1c"), uncertain: rgb("#d97000"), mark: rgb("#1d3f9a"))
#let symbols = (awarded: "✓", withheld: "✗", uncertain: "?")
#set page(paper: "a4", margin: (left: {left}mm, right: {right}mm, top: {top}mm, bottom: {bottom}mm),
  header: align(bottom, grid(columns: (1fr, auto), column-gutter: 4mm,
    text(size: 8.5pt, fill: luma(90), {heading}), {draft_word})),
  footer: context align(center, text(size: 8.5pt, fill: luma(90))[Page #counter(page).display() of #counter(page).final().first()]),
  foreground: {watermark})
#set text(font: "Libertinus Serif", size: 10.5pt, lang: "en", region: "gb")
#let tick(s, c) = curve(stroke: (paint: c, thickness: s * 0.14, cap: "round", join: "round"),
  curve.move((s * 0.1, s * 0.55)), curve.line((s * 0.4, s * 0.85)), curve.line((s * 0.92, s * 0.12)))
#let cross(s, c) = {{
  let line = (paint: c, thickness: s * 0.14, cap: "round")
  place(top + left, curve(stroke: line, curve.move((s * 0.15, s * 0.15)), curve.line((s * 0.85, s * 0.85))))
  place(top + left, curve(stroke: line, curve.move((s * 0.85, s * 0.15)), curve.line((s * 0.15, s * 0.85))))
}}
#let query(s, c) = align(center + horizon, text(size: s * 1.1, weight: "bold", fill: c, "?"))
// One piece of evidence: its box, the outcome at the box, the criterion's code beside it.
#let evidence(x, y, w, h, s, sx, sy, outcome, code, lx, ly, la) = {{
  let c = colours.at(outcome)
  place(top + left, dx: x, dy: y, rect(width: w, height: h,
    stroke: (paint: c.transparentize(45%), thickness: 0.7pt, dash: "dashed")))
  place(top + left, dx: sx, dy: sy, box(width: s, height: s,
    if outcome == "awarded" {{ tick(s, c) }} else if outcome == "withheld" {{ cross(s, c) }} else {{ query(s, c) }}))
  place(top + left, dx: lx, dy: ly, box(width: {label}mm, align(la,
    box(fill: white.transparentize(20%), inset: 1pt, text(size: 8pt, weight: "bold", fill: luma(25), code)))))
}}
// A question's mark in the margin.
#let question-mark(x, y, label, mark) = place(top + left, dx: x, dy: y,
  box(stroke: 0.9pt + colours.mark, radius: 1.5pt, inset: (x: 3pt, y: 2.5pt),
    stack(spacing: 2.5pt, text(size: 7pt, fill: colours.mark, "Question " + label),
      text(size: 12pt, weight: "bold", fill: colours.mark, mark))))
// A criterion and its outcome on the cover.
#let criterion(code, outcome) = box(text(code) + h(1.5pt)
  + text(font: "DejaVu Sans Mono", weight: "bold", fill: colours.at(outcome), symbols.at(outcome)))
#let criteria(..items) = if items.pos().len() == 0 {{ [] }} else {{
  items.pos().map(((code, outcome)) => criterion(code, outcome)).join(h(3.5mm))
}}"##,
        title = lit(&format!("{} – {}", script.student, script.paper_title)),
        left = MARGIN_LEFT_MM,
        right = MARGIN_RIGHT_MM,
        top = MARGIN_TOP_MM,
        bottom = MARGIN_BOTTOM_MM,
        heading = lit(&heading),
        label = LABEL_MM,
    );
}

fn cover(out: &mut String, script: &ReturnedScript, draft: bool) {
    let _ = writeln!(
        out,
        r##"#page[
#stack(spacing: 3.5mm,
  text(size: 9.5pt, fill: luma(90), "Marked script"),
  text(size: 22pt, weight: "bold", {student}),
  text(size: 13pt, {paper}),
  text(size: 10.5pt, fill: luma(70), {date}))
#v(6mm)
#table(columns: (auto, 1fr, auto, auto), inset: (x: 5pt, y: 4.5pt), align: (left, left, right, right),
  stroke: (_, y) => if y == 0 {{ (bottom: 0.8pt) }} else {{ (bottom: 0.4pt + luma(200)) }},
  table.header([*Question*], [*Marks by criterion*], [*Mark*], [*Maximum*]),"##,
        student = lit(&script.student),
        paper = lit(&script.paper_title),
        date = lit(&script.date),
    );
    for q in &script.questions {
        let criteria = if q.not_scanned() {
            format!(
                r##"text(fill: luma(90), {})"##,
                lit("not scanned: its page is not in the script")
            )
        } else if q.status.is_marked() {
            let items: Vec<String> = q
                .criteria
                .iter()
                .map(|c| format!("({}, {:?})", lit(&c.code), outcome_name(c.effective)))
                .collect();
            format!("criteria({})", items.join(", "))
        } else {
            r##"text(fill: luma(90), "not marked")"##.to_owned()
        };
        let mark = mark_text(q);
        let awarded = mark.rsplit_once('/').map_or(mark.as_str(), |(a, _)| a);
        let _ = writeln!(
            out,
            "  {}, {criteria}, {}, {},",
            lit(&q.label),
            lit(awarded),
            lit(&q.score.max.to_string()),
        );
    }
    let (total, max, percentage) = totals(script);
    let _ = writeln!(
        out,
        r##"  [*Total*], [], text(weight: "bold", {total}), text(weight: "bold", {max}),
)
#v(3mm)
#text(size: 12pt)[Percentage: #text(weight: "bold", {percentage})]
#v(5mm)
#text(size: 9pt, fill: luma(70))[On the pages, #text(fill: colours.awarded, font: "DejaVu Sans Mono", "✓") marks a criterion awarded, #text(fill: colours.withheld, font: "DejaVu Sans Mono", "✗") one withheld and #text(fill: colours.uncertain, "?") one still uncertain, each at the work it was decided on, with the criterion's code beside it; each question's mark is in the margin.]"##,
        total = lit(&total),
        max = lit(&max),
        percentage = lit(&percentage),
    );
    let unfinished = script.unfinished();
    if draft && !unfinished.is_empty() {
        let _ = writeln!(
            out,
            "#v(3mm)\n#text(size: 10pt, weight: \"bold\", fill: colours.uncertain, {})",
            lit(&format!(
                "Draft: questions {} are not marked finally; their marks may change.",
                unfinished.join(", ")
            ))
        );
    }
    out.push_str("]\n");
}

fn scanned_page(
    out: &mut String,
    scan: &ScannedPage,
    path: &str,
    ticks: &[Tick<'_>],
    margins: &[&Margin<'_>],
) {
    let area = image_area(scan);
    // Positions in the page's body are from the text area's top-left corner.
    let (ox, oy) = (MARGIN_LEFT_MM, MARGIN_TOP_MM);
    let (w, h) = (area.width, area.height);
    let (raw_w, raw_h) = if scan.quarter_turns % 2 == 1 {
        (h, w)
    } else {
        (w, h)
    };
    let image = format!(
        "image({}, width: {raw_w:.3}mm, height: {raw_h:.3}mm, fit: \"stretch\", alt: {})",
        lit(path),
        lit(&format!("Scan of {}", scan.caption.to_lowercase())),
    );
    let image = match scan.quarter_turns % 4 {
        0 => image,
        turns => format!(
            "rotate({}deg, reflow: true, {image})",
            u32::from(turns) * 90
        ),
    };
    let _ = writeln!(
        out,
        "#page[\n#place(top + left, dx: {:.3}mm, dy: {:.3}mm, box(width: {w:.3}mm, height: {h:.3}mm, stroke: 0.4pt + luma(190), place(top + left, {image})))",
        area.x - ox,
        area.y - oy,
    );
    // Several criteria decided on one box (a method mark and its accuracy mark on one answer)
    // stand side by side, from the box's right edge leftwards, their codes one under another.
    let mut drawn: Vec<[i64; 4]> = Vec::with_capacity(ticks.len());
    for tick in ticks {
        let b = box_on_page(area, tick.upright);
        let key = [b.x, b.y, b.width, b.height].map(|v| (v * 10.0).round() as i64);
        let before = drawn.iter().filter(|k| **k == key).count() as f64;
        drawn.push(key);
        let side = (b.height * 0.8)
            .clamp(3.5, 8.0)
            .min((b.width * 0.9).max(3.5));
        let sx = if b.width >= side + 1.6 {
            (b.x + b.width - side - 0.8 - before * (side + 1.0)).max(b.x + 0.8)
        } else {
            b.x + (b.width - side) / 2.0
        };
        let sy = b.y + (b.height - side) / 2.0;
        // The code to the right of the box, else to its left, else inside it.
        let below = before * CODE_STEP_MM;
        let (lx, ly, align) = if b.x + b.width + 1.0 + LABEL_MM <= area.x + area.width {
            (b.x + b.width + 1.0, b.y + below, "left")
        } else if b.x - 1.0 - LABEL_MM >= area.x {
            (b.x - 1.0 - LABEL_MM, b.y + below, "right")
        } else {
            (b.x + 0.8, b.y + 0.8 + below, "left")
        };
        let _ = writeln!(
            out,
            "#evidence({:.3}mm, {:.3}mm, {:.3}mm, {:.3}mm, {side:.3}mm, {:.3}mm, {:.3}mm, {:?}, {}, {:.3}mm, {:.3}mm, {align})",
            b.x - ox,
            b.y - oy,
            b.width,
            b.height,
            sx - ox,
            sy - oy,
            outcome_name(tick.outcome),
            lit(tick.code),
            lx - ox,
            ly - oy,
        );
    }
    let mut next = f64::MIN;
    let mut ordered: Vec<&&Margin> = margins.iter().collect();
    ordered.sort_by(|a, b| a.top.total_cmp(&b.top));
    for m in ordered {
        let y = (area.y + m.top * area.height).max(next);
        next = y + MARK_STEP_MM;
        let _ = writeln!(
            out,
            "#question-mark({:.3}mm, {:.3}mm, {}, {})",
            area.x + area.width + 3.0 - ox,
            y - oy,
            lit(m.label),
            lit(&m.mark),
        );
    }
    let _ = writeln!(
        out,
        "#place(top + left, dx: {:.3}mm, dy: {:.3}mm, text(size: 8pt, fill: luma(100), {}))\n]",
        area.x - ox,
        area.y + area.height + 1.5 - oy,
        lit(&scan.caption),
    );
}

fn placeholder(out: &mut String, paper_page: u32) {
    let _ = writeln!(
        out,
        r##"#page[
#align(center + horizon, block(width: 80%, inset: 12mm, radius: 2mm,
  stroke: (paint: luma(150), thickness: 0.8pt, dash: "dashed"), {{
  text(size: 16pt, weight: "bold", {title})
  v(3mm)
  text(fill: luma(60), "This page of the paper is not in the scanned script, so it cannot be shown here.")
}}))
]"##,
        title = lit(&format!("Page {paper_page} was not scanned")),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(width_px: u32, height_px: u32, quarter_turns: u8) -> ScannedPage {
        ScannedPage {
            page_id: "a:p1".into(),
            caption: "Page 1".into(),
            image: Vec::new(),
            width_px,
            height_px,
            quarter_turns,
        }
    }

    #[test]
    fn a_page_fills_the_text_area_upright_keeping_its_proportions() {
        let portrait = image_area(&page(1240, 1754, 0));
        assert!((portrait.width - 168.0).abs() < 1e-9, "{portrait:?}");
        assert!((portrait.height - 168.0 * 1754.0 / 1240.0).abs() < 1e-9);
        // A page scanned sideways is shown upright: as tall as it is wide turned.
        let sideways = image_area(&page(1754, 1240, 1));
        assert!((sideways.width - portrait.width).abs() < 1e-9);
        assert!((sideways.height - portrait.height).abs() < 1e-9);
        // A landscape page upright fills the width.
        let landscape = image_area(&page(1754, 1240, 0));
        assert!((landscape.width - 168.0).abs() < 1e-9);
        // A very tall one fills the height.
        let tall = image_area(&page(100, 1000, 0));
        assert!(
            (tall.height - (PAGE_HEIGHT_MM - MARGIN_TOP_MM - MARGIN_BOTTOM_MM - CAPTION_MM)).abs()
                < 1e-9
        );
    }

    #[test]
    fn only_jpeg_and_png_images_are_read() {
        assert_eq!(extension(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("jpg"));
        assert_eq!(extension(b"\x89PNG\r\n\x1a\n...."), Some("png"));
        assert_eq!(extension(b"GIF89a"), None);
        assert_eq!(extension(b""), None);
    }
}
