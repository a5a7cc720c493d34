//! The recorded layout of a question paper: for every question part, where its text is and where
//! its answer space is, read from typst's introspection after layout.
//!
//! The generated source puts invisible `metadata` marks, all labelled `<examkit-layout>`, at the
//! corners of what is recorded (see `template.typ`): the question number (`q:N`), the top left of
//! each part and the right edge where its text ends (`ps:N:I`, `pe:N:I`), the top left and bottom
//! right of each ruled answer line (`ls:N:I`, `le:N:I`) and of the ruled area of each writing page
//! (`ws:N`, `we:N`). `N` is the question's number, `I` the part's index in the question. The
//! cover's name line is marked `ns:0` (above its left end, where the name is written) and `ne:0`
//! (below its right end).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use typst::foundations::{Label, Selector, Value};
use typst::introspection::{Introspector as _, MetadataElem};
use typst::utils::PicoStr;
use typst_layout::PagedDocument;
use uuid::Uuid;

use crate::{PaperDocument, RenderError, WritingSpace};

/// The label of every layout mark in the generated source.
pub(crate) const MARK_LABEL: &str = "examkit-layout";

/// Where everything a marker needs is on the question paper: the pages' sizes and, for each
/// question, the page it starts on and each part's text and answer space.
///
/// Stored as JSON (camelCase) with each export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Layout {
    /// The paper's id.
    pub paper_id: Uuid,
    /// The paper's revision.
    pub revision: u32,
    /// The writing space of the paper, spelt as by [`WritingSpace::as_str`] (`"smart"`,
    /// `"none"`, `"1-page"`…).
    pub writing_space: String,
    /// Every page of the question paper, in order (page 1 first).
    pub pages: Vec<PageGeometry>,
    /// Every question, in paper order.
    pub questions: Vec<QuestionLayout>,
    /// Where the candidate writes their name on the cover (the space above the name line);
    /// absent from layouts recorded before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_space: Option<Region>,
}

/// The size of one page as displayed, in PDF points (1/72 inch).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageGeometry {
    /// Width in points (595.28 for A4 portrait).
    pub width_pt: f64,
    /// Height in points (841.89 for A4 portrait).
    pub height_pt: f64,
}

/// Where one question is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionLayout {
    /// The question's number in the paper (1-based).
    pub number: u32,
    /// The bank question's id.
    pub question_id: Uuid,
    /// The page on which the question's number is printed, where the question starts (1-based).
    pub label_page: u32,
    /// The answer space that belongs to the whole question rather than to one part: the ruled
    /// area of each writing page that follows the question with a `1-page`, `2-pages` or
    /// `3-pages` writing space (one region per page). Empty with `smart` and `none`.
    pub answer_space: Vec<Region>,
    /// The question's parts, in order.
    pub parts: Vec<PartLayout>,
}

/// Where one part of a question is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartLayout {
    /// The part's id in the bank revision.
    pub part_id: String,
    /// The part's printed label, such as `"(a)"`; `None` for an undivided question.
    pub label: Option<String>,
    /// Where the part's label and text are (several regions when the text breaks across pages).
    pub prompt: Vec<Region>,
    /// Where the candidate writes the answer to this part, one region per page:
    /// - `smart`: the part's own ruled lines, just after its text (several regions when they
    ///   break across pages);
    /// - `1-page`, `2-pages`, `3-pages`: the writing pages are shared by all parts of the
    ///   question, so every part lists the question's [`QuestionLayout::answer_space`];
    /// - `none`: empty (answers are written on separate paper).
    pub answer_space: Vec<Region>,
}

/// A rectangle on one page, in coordinates normalised to the displayed page: `x` and `width` are
/// fractions of the page width, `y` and `height` fractions of its height, from the top left corner.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    /// The page, 1-based.
    pub page: u32,
    /// Left edge, 0 (page's left edge) to 1.
    pub x: f64,
    /// Top edge, 0 (page's top edge) to 1.
    pub y: f64,
    /// Width, as a fraction of the page width.
    pub width: f64,
    /// Height, as a fraction of the page height.
    pub height: f64,
}

impl Region {
    /// Whether two regions on the same page overlap by more than `tolerance` (a normalised
    /// length) in both directions.
    pub fn overlaps(&self, other: &Region, tolerance: f64) -> bool {
        self.page == other.page
            && self.x + self.width - tolerance > other.x
            && other.x + other.width - tolerance > self.x
            && self.y + self.height - tolerance > other.y
            && other.y + other.height - tolerance > self.y
    }
}

/// The printable area of every page, in points from the page's top left corner, used when a
/// part's text breaks across pages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ContentArea {
    pub(crate) top: f64,
    pub(crate) bottom_margin: f64,
}

/// One mark found in the laid-out document.
#[derive(Debug, Clone, Copy)]
struct Mark {
    page: u32,
    x: f64,
    y: f64,
}

/// A rectangle in points on one page.
#[derive(Debug, Clone, Copy)]
struct Rect {
    page: u32,
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
}

impl Rect {
    fn union(self, other: Rect) -> Rect {
        Rect {
            page: self.page,
            left: self.left.min(other.left),
            top: self.top.min(other.top),
            right: self.right.max(other.right),
            bottom: self.bottom.max(other.bottom),
        }
    }
}

/// The marks of one part.
#[derive(Debug, Default)]
struct PartMarks {
    start: Option<Mark>,
    end: Option<Mark>,
    line_starts: Vec<Mark>,
    line_ends: Vec<Mark>,
}

/// The marks of one question.
#[derive(Debug, Default)]
struct QuestionMarks {
    label: Option<Mark>,
    parts: BTreeMap<usize, PartMarks>,
    writing_starts: Vec<Mark>,
    writing_ends: Vec<Mark>,
    name_start: Option<Mark>,
    name_end: Option<Mark>,
}

fn layout_error(what: String) -> RenderError {
    RenderError::Typeset(format!(
        "the answer-space layout cannot be recorded: {what}"
    ))
}

/// Reads the layout of a laid-out question paper from its marks.
pub(crate) fn read(
    document: &PagedDocument,
    paper: &PaperDocument,
    area: ContentArea,
) -> Result<Layout, RenderError> {
    let pages: Vec<PageGeometry> = document
        .pages()
        .iter()
        .map(|p| PageGeometry {
            width_pt: p.frame.width().to_pt(),
            height_pt: p.frame.height().to_pt(),
        })
        .collect();
    let mut marks = collect_marks(document)?;
    // Number 0 is the cover, not a question.
    let name_space = marks.remove(&0).and_then(|cover| {
        let (start, end) = (cover.name_start?, cover.name_end?);
        pair_rects(&[start], &[end])
            .into_iter()
            .next()
            .map(|r| normalise(r, &pages))
    });

    let mut questions = Vec::with_capacity(paper.questions.len());
    for (index, q) in paper.questions.iter().enumerate() {
        let number = index + 1;
        let empty = QuestionMarks::default();
        let found = marks.get(&number).unwrap_or(&empty);
        let label = found
            .label
            .ok_or_else(|| layout_error(format!("question {number} has no position")))?;
        let writing: Vec<Region> = pair_rects(&found.writing_starts, &found.writing_ends)
            .into_iter()
            .map(|r| normalise(r, &pages))
            .collect();
        let mut parts = Vec::with_capacity(q.revision.content.parts.len());
        for (i, part) in q.revision.content.parts.iter().enumerate() {
            let no_marks = PartMarks::default();
            let pm = found.parts.get(&i).unwrap_or(&no_marks);
            let (Some(start), Some(end)) = (pm.start, pm.end) else {
                return Err(layout_error(format!(
                    "part {} of question {number} has no position",
                    part.id
                )));
            };
            let prompt = span(start, end, &pages, area)
                .into_iter()
                .map(|r| normalise(r, &pages))
                .collect();
            let answer_space = match paper.writing_space {
                WritingSpace::Smart => per_page(pair_rects(&pm.line_starts, &pm.line_ends))
                    .into_iter()
                    .map(|r| normalise(r, &pages))
                    .collect(),
                WritingSpace::Pages(_) => writing.clone(),
                WritingSpace::None => Vec::new(),
            };
            parts.push(PartLayout {
                part_id: part.id.clone(),
                label: part.label.clone(),
                prompt,
                answer_space,
            });
        }
        questions.push(QuestionLayout {
            number: u32::try_from(number).unwrap_or(u32::MAX),
            question_id: q.question_id,
            label_page: label.page,
            answer_space: writing,
            parts,
        });
    }
    Ok(Layout {
        paper_id: paper.paper_id,
        revision: paper.revision,
        writing_space: paper.writing_space.to_string(),
        pages,
        questions,
        name_space,
    })
}

/// Every layout mark, by question number.
fn collect_marks(document: &PagedDocument) -> Result<BTreeMap<usize, QuestionMarks>, RenderError> {
    let mut out: BTreeMap<usize, QuestionMarks> = BTreeMap::new();
    let Some(label) = Label::new(PicoStr::intern(MARK_LABEL)) else {
        return Err(layout_error("no label".to_owned()));
    };
    let introspector = document.introspector();
    for content in introspector.query(&Selector::Label(label)) {
        let Some(meta) = content.to_packed::<MetadataElem>() else {
            continue;
        };
        let Value::Str(text) = &meta.value else {
            continue;
        };
        let Some(position) = content
            .location()
            .and_then(|location| introspector.position(location))
        else {
            continue;
        };
        let mark = Mark {
            page: u32::try_from(position.page.get()).unwrap_or(u32::MAX),
            x: position.point.x.to_pt(),
            y: position.point.y.to_pt(),
        };
        let mut fields = text.as_str().split(':');
        let kind = fields.next().unwrap_or_default();
        let Some(number) = fields.next().and_then(|n| n.parse::<usize>().ok()) else {
            return Err(layout_error(format!("a malformed mark {text:?}")));
        };
        let part = fields.next().and_then(|n| n.parse::<usize>().ok());
        let question = out.entry(number).or_default();
        match (kind, part) {
            ("q", None) => {
                question.label.get_or_insert(mark);
            }
            ("ws", None) => question.writing_starts.push(mark),
            ("ns", None) if number == 0 => question.name_start = Some(mark),
            ("ne", None) if number == 0 => question.name_end = Some(mark),
            ("we", None) => question.writing_ends.push(mark),
            ("ps", Some(i)) => {
                question
                    .parts
                    .entry(i)
                    .or_default()
                    .start
                    .get_or_insert(mark);
            }
            ("pe", Some(i)) => question.parts.entry(i).or_default().end = Some(mark),
            ("ls", Some(i)) => question.parts.entry(i).or_default().line_starts.push(mark),
            ("le", Some(i)) => question.parts.entry(i).or_default().line_ends.push(mark),
            _ => return Err(layout_error(format!("a malformed mark {text:?}"))),
        }
    }
    Ok(out)
}

/// Rectangles from matching top-left and bottom-right marks, in document order.
fn pair_rects(starts: &[Mark], ends: &[Mark]) -> Vec<Rect> {
    starts
        .iter()
        .zip(ends)
        .map(|(s, e)| Rect {
            page: s.page,
            left: s.x.min(e.x),
            top: s.y.min(e.y),
            right: s.x.max(e.x),
            bottom: s.y.max(e.y),
        })
        .collect()
}

/// Consecutive rectangles on the same page merged into one.
fn per_page(rects: Vec<Rect>) -> Vec<Rect> {
    let mut out: Vec<Rect> = Vec::new();
    for r in rects {
        match out.last_mut() {
            Some(last) if last.page == r.page => *last = last.union(r),
            _ => out.push(r),
        }
    }
    out
}

/// The rectangles covered from the top-left mark `start` to the end mark `end` (whose x is the
/// right edge), page by page when they are on different pages.
fn span(start: Mark, end: Mark, pages: &[PageGeometry], area: ContentArea) -> Vec<Rect> {
    let right = end.x.max(start.x);
    if end.page <= start.page {
        return vec![Rect {
            page: start.page,
            left: start.x,
            top: start.y,
            right,
            bottom: end.y.max(start.y),
        }];
    }
    let bottom_of = |page: u32| {
        let height = usize::try_from(page)
            .ok()
            .and_then(|p| pages.get(p.wrapping_sub(1)))
            .map_or(0.0, |g| g.height_pt);
        (height - area.bottom_margin).max(area.top)
    };
    let mut out = vec![Rect {
        page: start.page,
        left: start.x,
        top: start.y,
        right,
        bottom: bottom_of(start.page).max(start.y),
    }];
    for page in start.page + 1..end.page {
        out.push(Rect {
            page,
            left: start.x,
            top: area.top,
            right,
            bottom: bottom_of(page),
        });
    }
    out.push(Rect {
        page: end.page,
        left: start.x,
        top: area.top,
        right,
        bottom: end.y.max(area.top),
    });
    out
}

/// A rectangle in points as a region normalised to its page, clamped to the page.
fn normalise(rect: Rect, pages: &[PageGeometry]) -> Region {
    let geometry = usize::try_from(rect.page)
        .ok()
        .and_then(|p| pages.get(p.wrapping_sub(1)))
        .copied()
        .unwrap_or(PageGeometry {
            width_pt: 1.0,
            height_pt: 1.0,
        });
    let fx = |v: f64| (v / geometry.width_pt).clamp(0.0, 1.0);
    let fy = |v: f64| (v / geometry.height_pt).clamp(0.0, 1.0);
    let (x0, x1) = (fx(rect.left), fx(rect.right));
    let (y0, y1) = (fy(rect.top), fy(rect.bottom));
    Region {
        page: rect.page,
        x: x0,
        y: y0,
        width: (x1 - x0).max(0.0),
        height: (y1 - y0).max(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a4() -> Vec<PageGeometry> {
        vec![
            PageGeometry {
                width_pt: 595.0,
                height_pt: 842.0,
            };
            3
        ]
    }

    #[test]
    fn a_span_across_pages_gives_one_region_per_page() {
        let area = ContentArea {
            top: 80.0,
            bottom_margin: 68.0,
        };
        let start = Mark {
            page: 1,
            x: 57.0,
            y: 700.0,
        };
        let end = Mark {
            page: 3,
            x: 538.0,
            y: 120.0,
        };
        let rects = span(start, end, &a4(), area);
        assert_eq!(rects.len(), 3);
        assert_eq!(rects[0].bottom, 842.0 - 68.0);
        assert_eq!(rects[1].top, 80.0);
        assert_eq!(rects[2].bottom, 120.0);
        let region = normalise(rects[2], &a4());
        assert_eq!(region.page, 3);
        assert!((region.x - 57.0 / 595.0).abs() < 1e-12);
        assert!((region.height - 40.0 / 842.0).abs() < 1e-12);
    }

    #[test]
    fn lines_on_one_page_merge_and_regions_overlap_only_on_the_same_page() {
        let m = |page, x, y| Mark { page, x, y };
        let rects = per_page(pair_rects(
            &[m(1, 60.0, 700.0), m(1, 60.0, 723.0), m(2, 60.0, 80.0)],
            &[m(1, 538.0, 723.0), m(1, 538.0, 746.0), m(2, 538.0, 103.0)],
        ));
        assert_eq!(rects.len(), 2);
        assert_eq!((rects[0].top, rects[0].bottom), (700.0, 746.0));
        let a = normalise(rects[0], &a4());
        let b = Region { page: 2, ..a };
        assert!(a.overlaps(&a, 0.0));
        assert!(!a.overlaps(&b, 0.0));
        let below = Region {
            y: a.y + a.height,
            ..a
        };
        assert!(!a.overlaps(&below, 1e-9));
    }

    #[test]
    fn layouts_serialise_in_camel_case() {
        let region = Region {
            page: 1,
            x: 0.1,
            y: 0.2,
            width: 0.3,
            height: 0.4,
        };
        let layout = Layout {
            paper_id: Uuid::nil(),
            revision: 1,
            writing_space: "smart".to_owned(),
            pages: vec![PageGeometry {
                width_pt: 595.0,
                height_pt: 842.0,
            }],
            questions: vec![QuestionLayout {
                number: 1,
                question_id: Uuid::nil(),
                label_page: 1,
                answer_space: vec![],
                parts: vec![PartLayout {
                    part_id: "a".to_owned(),
                    label: Some("(a)".to_owned()),
                    prompt: vec![region],
                    answer_space: vec![region],
                }],
            }],
            name_space: Some(region),
        };
        let json = serde_json::to_value(&layout).expect("serialises");
        assert_eq!(json["nameSpace"]["page"], 1);
        assert_eq!(json["paperId"], "00000000-0000-0000-0000-000000000000");
        assert_eq!(json["writingSpace"], "smart");
        assert_eq!(json["pages"][0]["widthPt"], 595.0);
        assert_eq!(json["questions"][0]["labelPage"], 1);
        assert_eq!(json["questions"][0]["questionId"], json["paperId"]);
        assert_eq!(json["questions"][0]["parts"][0]["partId"], "a");
        assert_eq!(
            json["questions"][0]["parts"][0]["answerSpace"][0]["page"],
            1
        );
        let back: Layout = serde_json::from_value(json).expect("deserialises");
        assert_eq!(back, layout);
    }
}
