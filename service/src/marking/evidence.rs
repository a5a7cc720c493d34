//! Placing a marker's evidence on the student's ink, and the guards that hold whatever a marker
//! says.
//!
//! A marker that reads page images (a vision-language model) names, for each decision, the
//! student's words it rests on (`quote`), a page, and a box that is only a hint. The service
//! places the evidence itself, by the first rule that applies:
//! 1. **words**: the quote found among the page's indexed words (tolerant of case, spacing and
//!    the ways maths is typed) → those words' box. Only a **specific** quote locates evidence
//!    ([`specific`]: at least 3 characters, spaces aside, 2 of them letters or digits, or a
//!    number of at least 2 digits), never a lone digit, letter or sign, which any page shows
//!    somewhere. On a page compared with its clean page, only words on added ink count, so a
//!    quote of the printed question is never the student's. Where the page holds the part's
//!    answer space, only words inside it count: a quote found on the page only in another
//!    part's or question's space, or outside every space, is not evidence for this part;
//! 2. **ink**: the ink indexing found added inside the part's answer space, the regions nearest
//!    the hint → their union (only on a page lined up with its clean page);
//! 3. **hint**: the model's box, when its centre lies inside the part's answer space, clipped to
//!    that space; or, on a foreign page (no clean page, no recorded layout), when it covers ink,
//!    shrunk to that ink;
//! 4. **answer space**: otherwise the evidence could not be located, and is boxed on the answer
//!    space (or the hint, or the page).
//!
//! A blank answer (an empty quote) is located on the part's answer space, where the page holds
//! one.
//!
//! Guards, applied to every award of every marker (the vision model's after placement, in
//! [`guard`]; every marker's answer again before it is scored, in [`guard_answer`]), first
//! reason first; each has a stable [`GuardCode`]:
//! - nothing on a page that is not the student's work (a blank page of the script) supports an
//!   award (`not_student_work`). (Pages that can be evidence of nothing, the clean paper or a
//!   mark scheme, are never shown to a marker as work, and an answer citing one is refused.);
//! - an award that quotes nothing of the student's work (`no_quote`);
//! - nothing on a page that has a clean page but could not be lined up with it (or whose
//!   comparison cannot be right: added ink over [`MAX_ADDED_FRACTION`] of the page, or one added
//!   region over [`MAX_ADDED_REGION`] of it, see [`implausible_fit`]) supports an award: such a
//!   page never yields "ink", and nothing on it is verified as the student's writing
//!   (`page_not_aligned`, the reason naming the page);
//! - nothing on a page of the paper that holds no answer space of the criterion's part supports
//!   its award: the part is not on that page (`part_not_on_page`);
//! - a quote found on the page only outside the part's answer space (`quote_outside_part`);
//! - evidence that could not be located (`not_located`);
//! - a box outside the part's answer space, where the page holds it (`outside_answer_space`);
//! - a box over [`MAX_EVIDENCE_AREA`] of the page: larger than the writing one mark rests on can
//!   be (`box_too_large`);
//! - a box wider than the part's answer space it lies in (`wider_than_answer_space`);
//! - an award located where no ink was added (or, on a foreign page, where the page has no dark
//!   marks of writing's size) (`no_ink`).
//!
//! Each such award becomes `uncertain`, its reason saying why before the marker's own; the
//! question then needs review.
//!
//! A **foreign** page (no clean page exists: a session made without a paper, a page whose page
//! code could not be read or names another document) is not an unaligned one: there is nothing to
//! line it up with, so "ink" can only mean dark marks of a size that writing has. Printed text
//! counts too, so awards there rest on the marker's reading and a specific quote found on the
//! page, and the size guard; a person sees them flagged only when a guard fails.
//!
//! Dependencies, conditions and totals are the engine's, never the marker's.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::answers;
use super::marker::{MarkRequest, Rect, WorkPage};

/// The largest share of the page's area that the evidence of an award may cover: the writing one
/// mark rests on is a line or a few lines, never most of the page.
pub const MAX_EVIDENCE_AREA: f64 = 0.15;

/// How much wider than the answer space region it lies in an award's box may be, as a fraction
/// of the page width (writing that runs a little past the space's edge).
pub const SPACE_WIDTH_SLACK: f64 = 0.01;

/// A comparison whose added ink covers more than this share of the page did not line the page up
/// with its clean page: no student writes over a quarter of a page's pixels.
pub const MAX_ADDED_FRACTION: f64 = 0.25;

/// A comparison with one region of added ink over more than this share of the page's area did not
/// line the page up (a shadow, the desk, the whole page shifted).
pub const MAX_ADDED_REGION: f64 = 0.5;

/// Which rule placed a piece of evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The quote was found among the page's words.
    Words,
    /// Ink added in the part's answer space, near the hint.
    Ink,
    /// The line of the part's writing the model's transcription puts the quote on, where the
    /// page's words could not be read.
    Line,
    /// The model's box.
    Hint,
    /// The answer space: the evidence could not be located (or the answer is blank).
    AnswerSpace,
}

/// Where a decision's evidence ends up.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// The page it is on.
    pub page_id: String,
    /// The box, normalized to the displayed page.
    pub rect: Rect,
    /// The rule that placed it.
    pub placement: Placement,
    /// Whether the evidence was located (a blank answer on its answer space is located).
    pub located: bool,
    /// The quote is on the page, but only outside the part's answer space: not located, and not
    /// evidence for this part.
    pub quoted_elsewhere: bool,
}

macro_rules! guard_codes {
    ($($variant:ident = $code:literal, $doc:literal;)*) => {
        /// Why a guard turned an award `uncertain`: a stable code, published in
        /// `schemas/openapi.json` (a question's `markerRun`) and `schemas/README.md`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum GuardCode {
            $(#[doc = $doc] $variant,)*
        }

        impl GuardCode {
            /// Every code, in the order the guards apply.
            pub const ALL: &'static [GuardCode] = &[$(GuardCode::$variant,)*];

            /// The code as sent.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(GuardCode::$variant => $code,)*
                }
            }

            /// What the code means.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(GuardCode::$variant => $doc,)*
                }
            }
        }
    };
}

guard_codes! {
    NotStudentWork = "not_student_work", "The evidence is on a page that is not the student's work (a blank page of the script).";
    NoQuote = "no_quote", "The award quotes nothing of the student's work.";
    PageNotAligned = "page_not_aligned", "The page has a clean page but could not be lined up with it (or the fit found cannot be right): nothing on it is verified as the student's writing.";
    PartNotOnPage = "part_not_on_page", "The page is a page of the paper that holds no answer space of the criterion's part.";
    QuoteOutsidePart = "quote_outside_part", "The quote is on the page only outside the part's answer space (another part's or question's space, or no space).";
    NotLocated = "not_located", "The evidence could not be located: no specific quote found in the part's space, no ink or box there.";
    OutsideAnswerSpace = "outside_answer_space", "The evidence box lies outside the part's answer space on the page.";
    BoxTooLarge = "box_too_large", "The evidence box covers more of the page than the writing one mark rests on can (over 15 %).";
    WiderThanAnswerSpace = "wider_than_answer_space", "The evidence box is wider than the answer space it lies in.";
    NoInk = "no_ink", "No ink was added where the evidence is (on a foreign page: no dark marks of writing's size).";
    QuoteNotTranscribed = "quote_not_transcribed", "The vision model's quote for the award is not in its own transcription of the part.";
    InstructionsOnPage = "instructions_on_page", "Text addressed to a marker is written on the page, and the award's quote was not found among the page's words.";
    QuoteNotFound = "quote_not_found", "The award's quote was not found among the page's words, and the deployment requires it (--marker-require-quote).";
    ModelRubric = "model_rubric", "The criterion is in a rubric the model wrote from scheme pages: a person accepts it before its mark counts.";
}

impl std::fmt::Display for GuardCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for GuardCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A guard's verdict on an award.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guard {
    /// The decision stands.
    Stands,
    /// The award becomes `uncertain`: the guard's code, and why in words.
    Uncertain(GuardCode, String),
}

/// What placement needs to know about one decision.
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    /// The part the criterion belongs to.
    pub part_id: &'a str,
    /// The student's words the decision rests on (empty: a blank answer).
    pub quote: &'a str,
    /// The marker's box, normalized.
    pub hint: Option<Rect>,
    /// Whether the marker awards the mark.
    pub awarded: bool,
    /// Which of the part's lines of writing on the page holds the quote, counted from its first
    /// ([`Transcript::line_of`]); `None` when that is not known.
    pub line: Option<usize>,
}

/// Reads where a page has ink inside a box (dark pixels of its displayed raster), for pages that
/// could not be compared with a clean page; the tightest box around that ink, or `None`.
pub trait PageInk {
    /// The ink inside `rect` on `page`.
    fn ink_within(&self, page: &WorkPage, rect: Rect) -> Option<Rect>;
}

/// Dark marks of writing's size in the page images a request carries ([`WorkPage::image`]), each
/// image decoded once; a page without an image has no ink this can see.
#[derive(Debug, Default)]
pub struct RasterInk {
    decoded: RefCell<HashMap<String, Option<image::GrayImage>>>,
}

impl PageInk for RasterInk {
    fn ink_within(&self, page: &WorkPage, rect: Rect) -> Option<Rect> {
        let mut decoded = self.decoded.borrow_mut();
        let raster = decoded.entry(page.page_id.clone()).or_insert_with(|| {
            let png = page.image.as_deref()?;
            image::load_from_memory(png).ok().map(|i| i.into_luma8())
        });
        let raster = raster.as_ref()?;
        let (w, h) = raster.dimensions();
        let area = rect.width * f64::from(w) * rect.height * f64::from(h);
        let min_pixels = ((area * 0.002) as usize).max(25);
        // Marks thinner than writing (ruled answer lines, dotted leaders, specks) are not ink.
        let extent = super::pages::WRITING_MIN_EXTENT * 2.0;
        dark_box(raster, rect, 128, min_pixels)
            .filter(|found| found.width >= extent && found.height >= extent)
    }
}

/// A box from the model's `[x0, y0, x1, y1]` in thousandths, or `None` when it is empty.
pub fn hint_rect(corners: [u32; 4]) -> Option<Rect> {
    let [x0, y0, x1, y1] = corners.map(|v| f64::from(v.min(1000)) / 1000.0);
    let (left, right) = (x0.min(x1), x0.max(x1));
    let (top, bottom) = (y0.min(y1), y0.max(y1));
    (right > left && bottom > top).then_some(Rect {
        x: left,
        y: top,
        width: right - left,
        height: bottom - top,
    })
}

fn centre(r: &Rect) -> (f64, f64) {
    (r.x + r.width / 2.0, r.y + r.height / 2.0)
}

fn distance(a: &Rect, b: &Rect) -> f64 {
    let (ax, ay) = centre(a);
    let (bx, by) = centre(b);
    ((ax - bx).powi(2) + (ay - by).powi(2)).sqrt()
}

/// `r` grown by `by` on every side.
pub(crate) fn grown(r: &Rect, by: f64) -> Rect {
    Rect {
        x: r.x - by,
        y: r.y - by,
        width: r.width + 2.0 * by,
        height: r.height + 2.0 * by,
    }
}

fn area(r: &Rect) -> f64 {
    r.width.max(0.0) * r.height.max(0.0)
}

/// A comparable form of text for finding a quote among words: [`answers::normalise`], lower
/// case, without spaces.
fn comparable(text: &str) -> String {
    answers::normalise(text)
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// Whether a quote is specific enough to locate evidence among a page's words: in its comparable
/// form (maths normalised, spaces removed), at least 3 characters of which at least 2 are letters
/// or digits (`x = 3`, `7cm`, `0.2`, `yes`), or a whole number of at least 2 digits (`12`). A lone
/// digit, letter or sign (`3`, `x`, `=`, `-1`, `(b)`) is on almost every page, in the question's
/// numbering and the other parts' answers, so finding it proves nothing.
pub fn specific(quote: &str) -> bool {
    let text = comparable(quote);
    let chars = text.chars().count();
    let alphanumeric = text.chars().filter(|c| c.is_alphanumeric()).count();
    (chars >= 3 && alphanumeric >= 2) || (chars >= 2 && text.chars().all(|c| c.is_ascii_digit()))
}

/// Why a comparison reported as aligned cannot be right, so that its page must be taken as not
/// lined up with its clean page; `None` when it can be. `added_fraction` is the share of the
/// page's pixels the comparison found added (when it reports one), `added` its regions of added
/// ink: over [`MAX_ADDED_FRACTION`] of the page added, or one region over [`MAX_ADDED_REGION`] of
/// its area, is a wrong fit, not writing.
pub fn implausible_fit(added_fraction: Option<f64>, added: &[Rect]) -> Option<String> {
    if let Some(fraction) = added_fraction.filter(|f| *f > MAX_ADDED_FRACTION) {
        return Some(format!(
            "the comparison found {:.0} % of the page added, more than any writing: the fit cannot be right",
            fraction * 100.0
        ));
    }
    let largest = added.iter().map(area).fold(0.0, f64::max);
    (largest > MAX_ADDED_REGION).then(|| {
        format!(
            "the comparison found one region of added ink over {:.0} % of the page: the fit cannot be right",
            largest * 100.0
        )
    })
}

/// What the service can vouch for about the ink on a page.
enum Basis<'a> {
    /// Lined up with its clean page: the regions of ink added to it.
    Added(&'a [Rect]),
    /// It has a clean page but could not be lined up with it, for this reason.
    Unaligned(String),
    /// No clean page exists (a foreign page): only dark marks of writing's size.
    Dark,
}

fn basis(page: &WorkPage) -> Basis<'_> {
    if let Some(why) = &page.unaligned {
        return Basis::Unaligned(why.clone());
    }
    match &page.ink {
        Some(ink) => match implausible_fit(None, ink) {
            Some(why) => Basis::Unaligned(why),
            None => Basis::Added(ink),
        },
        None => Basis::Dark,
    }
}

/// Whether the page's answer spaces are known: a page of the session's paper with a recorded
/// layout (or one that lists some), on which a part without a region is not on the page.
fn spaces_known(page: &WorkPage) -> bool {
    page.laid_out || !page.answer_regions.is_empty()
}

/// The words of `page` that may be the student's, in the order indexing read them: on a page
/// lined up with its clean page, those on added ink; elsewhere every word (printed text too).
pub fn student_words(page: &WorkPage) -> impl Iterator<Item = &super::marker::PageWord> {
    let ink = match basis(page) {
        Basis::Added(ink) => Some(ink),
        Basis::Unaligned(_) | Basis::Dark => None,
    };
    page.words
        .iter()
        .filter(move |w| ink.is_none_or(|ink| on_added_ink(ink, &w.bbox)))
}

/// Runs of consecutive words whose text, taken together, is the quote: each as the union of
/// their boxes.
fn quote_runs(page: &WorkPage, quote: &str) -> Vec<Rect> {
    let wanted = comparable(quote);
    if wanted.is_empty() {
        return Vec::new();
    }
    let texts: Vec<String> = page.words.iter().map(|w| comparable(&w.text)).collect();
    let mut runs = Vec::new();
    for start in 0..texts.len() {
        let mut joined = String::new();
        for (end, text) in texts.iter().enumerate().skip(start) {
            joined.push_str(text);
            if joined.len() >= wanted.len() {
                if (joined == wanted || (end == start && joined.contains(&wanted)))
                    && let Some(rect) = Rect::union(page.words[start..=end].iter().map(|w| w.bbox))
                {
                    runs.push(rect);
                }
                break;
            }
            if !wanted.starts_with(&joined) {
                break;
            }
        }
    }
    runs
}

/// The model's transcription of a question, line by line, for finding which line of a part's
/// writing a quote is on when the page's words cannot be read, and whether it holds a quote.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// Each written line, in order.
    lines: Vec<Line>,
}

/// A line of a transcription.
#[derive(Debug, Clone)]
struct Line {
    /// The part it is labelled with (`(a)`, `a)`, `a.` at its start), if any.
    label: Option<String>,
    /// Its text in comparable form, label removed.
    text: String,
    /// Its text as written, label removed.
    raw: String,
}

/// A part label opening a transcribed line: `(a)`, `a)` or `a.` followed by a space, a
/// bracket or the end, for a label of one letter or a roman numeral; the label and the rest.
pub(crate) fn part_label(line: &str) -> Option<(String, &str)> {
    let line = line.trim_start();
    let (inner, rest) = if let Some(after) = line.strip_prefix('(') {
        let close = after.find(')')?;
        (&after[..close], &after[close + 1..])
    } else {
        let end = line.find([')', '.'])?;
        (&line[..end], &line[end + 1..])
    };
    let letter = inner.len() == 1 && inner.chars().all(|c| c.is_ascii_lowercase());
    let roman =
        (1..=4).contains(&inner.len()) && inner.chars().all(|c| matches!(c, 'i' | 'v' | 'x'));
    let ok = (letter || roman)
        && (rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace() || c == '('));
    ok.then(|| (inner.to_owned(), rest))
}

impl Transcript {
    /// Reads a transcription: its non-empty lines, in order.
    pub fn new(transcription: &str) -> Transcript {
        let lines = transcription
            .lines()
            .filter_map(|line| {
                let (label, raw) = match part_label(line) {
                    Some((label, rest)) => (Some(label), rest),
                    None => (None, line),
                };
                let text = comparable(raw);
                (!text.is_empty()).then(|| Line {
                    label,
                    text,
                    raw: raw.to_owned(),
                })
            })
            .collect();
        Transcript { lines }
    }

    /// The lines of part `part_id`: from its label to the next label; `None` when no line is
    /// labelled with it.
    fn part(&self, part_id: &str) -> Option<&[Line]> {
        let start = self
            .lines
            .iter()
            .position(|l| l.label.as_deref() == Some(part_id))?;
        let end = self.lines[start + 1..]
            .iter()
            .position(|l| l.label.is_some())
            .map_or(self.lines.len(), |n| start + 1 + n);
        Some(&self.lines[start..end])
    }

    /// Whether the transcription of part `part_id` (every line, when it labels no line with the
    /// part) holds `quote`, over a line break too: in lower case without spaces as written, or in
    /// comparable form (maths normalised, which reads a quote alone and the line around it
    /// alike only most of the time). A blank quote is held.
    pub fn holds(&self, part_id: &str, quote: &str) -> bool {
        let bare = |text: &str| -> String {
            text.chars()
                .filter(|c| !c.is_whitespace())
                .flat_map(char::to_lowercase)
                .collect()
        };
        let wanted = comparable(quote);
        if wanted.is_empty() {
            return true;
        }
        let lines = self.part(part_id).unwrap_or(&self.lines);
        let joined: String = lines.iter().map(|l| l.text.as_str()).collect();
        let raw: String = lines.iter().map(|l| bare(&l.raw)).collect();
        joined.contains(&wanted) || raw.contains(&bare(quote))
    }

    /// The index, among `lines`, of the line holding `quote`: the first line that holds it
    /// whole, else (a quote over several lines) the last line it holds whole.
    fn find(lines: &[Line], quote: &str) -> Option<usize> {
        let quote = comparable(quote);
        if quote.is_empty() {
            return None;
        }
        lines
            .iter()
            .position(|l| l.text.contains(&quote))
            .or_else(|| lines.iter().rposition(|l| quote.contains(l.text.as_str())))
    }

    /// Which of `ink_lines` lines of part `part_id`'s writing on a page (counted from its first,
    /// as the page reads) holds `quote`, given the quotes of every decision of the part
    /// (`part_quotes`, this one among them). Where the transcription labels its parts, the part's
    /// own lines are matched to the ink's lines in order (in proportion when there are more or
    /// fewer); where it does not, the part's last quoted line is taken to be its last line of
    /// ink, and the others counted back from it. `None` when the part has fewer than two lines
    /// of ink or the quote is not in the transcription.
    pub fn line_of(
        &self,
        part_id: &str,
        quote: &str,
        part_quotes: &[&str],
        ink_lines: usize,
    ) -> Option<usize> {
        if ink_lines < 2 {
            return None;
        }
        let labelled = self.lines.iter().any(|l| l.label.is_some());
        if labelled {
            let own = self.part(part_id)?;
            let k = Self::find(own, quote)?;
            let m = own.len();
            return Some(if m == ink_lines {
                k
            } else if m == 1 {
                ink_lines - 1
            } else {
                ((k as f64) * (ink_lines - 1) as f64 / (m - 1) as f64).round() as usize
            });
        }
        let k = Self::find(&self.lines, quote)?;
        let last = part_quotes
            .iter()
            .filter_map(|q| Self::find(&self.lines, q))
            .max()
            .unwrap_or(k)
            .max(k);
        Some((ink_lines - 1).saturating_sub(last - k))
    }
}

/// The lines of writing added in part `part_id`'s answer space on `page`, in the order the
/// page reads.
pub fn part_lines(page: &WorkPage, part_id: &str) -> Vec<Rect> {
    page.ink_lines
        .iter()
        .filter(|line| region_holding(page, part_id, line).is_some())
        .copied()
        .collect()
}

/// Whether `rect` touches ink that indexing found added to the clean page.
fn on_added_ink(ink: &[Rect], rect: &Rect) -> bool {
    ink.iter().any(|r| grown(r, 0.002).overlap(rect) > 0.0)
}

/// The answer space of `part_id` on `page`: the union of its regions there.
pub fn answer_space(page: &WorkPage, part_id: &str) -> Option<Rect> {
    Rect::union(
        page.answer_regions
            .iter()
            .filter(|r| r.part_id == part_id)
            .map(|r| r.rect),
    )
}

/// The share of a box that must lie in an answer space for the box to belong to it when its
/// centre does not: writing that runs over the edge of a small space (a one-line space, the
/// last line of a long answer) is still that space's writing.
const BELONGS_SHARE: f64 = 0.25;

/// The region of `part_id`'s answer space on `page` that `rect` belongs to: the one holding its
/// centre, or else the answer region of the page (of any part) sharing most of it, when that is
/// one of this part's and shares at least [`BELONGS_SHARE`] of it. A box mostly in another
/// part's space belongs to that part.
fn region_holding<'a>(page: &'a WorkPage, part_id: &str, rect: &Rect) -> Option<&'a Rect> {
    if let Some(region) = page
        .answer_regions
        .iter()
        .find(|r| r.part_id == part_id && r.rect.holds_centre_of(rect))
    {
        return Some(&region.rect);
    }
    if page
        .answer_regions
        .iter()
        .any(|r| r.part_id != part_id && r.rect.holds_centre_of(rect))
    {
        return None;
    }
    let best = page
        .answer_regions
        .iter()
        .map(|r| (r, r.rect.overlap(rect)))
        .filter(|(_, shared)| *shared > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    (best.0.part_id == part_id && best.1 >= BELONGS_SHARE * area(rect)).then_some(&best.0.rect)
}

fn in_space(page: &WorkPage, part_id: &str, rect: &Rect) -> bool {
    region_holding(page, part_id, rect).is_some()
}

fn nearest_first(mut candidates: Vec<Rect>, hint: Option<Rect>) -> Vec<Rect> {
    if let Some(hint) = hint {
        candidates.sort_by(|a, b| distance(a, &hint).total_cmp(&distance(b, &hint)));
    }
    candidates
}

/// Places one decision's evidence on `page` (the page the marker named, which must be one of
/// the request's work pages).
pub fn place(page: &WorkPage, claim: &Claim<'_>, ink_reader: &dyn PageInk) -> Placed {
    let space = answer_space(page, claim.part_id);
    let basis = basis(page);
    let placed = |rect: Rect, placement: Placement, located: bool| Placed {
        page_id: page.page_id.clone(),
        rect,
        placement,
        located,
        quoted_elsewhere: false,
    };
    let fallback = space.or(claim.hint).unwrap_or(Rect {
        x: 0.0,
        y: 0.0,
        width: 1.0,
        height: 1.0,
    });
    if comparable(claim.quote).is_empty() {
        // A blank answer is located on its answer space, where the page holds one.
        return placed(fallback, Placement::AnswerSpace, space.is_some());
    }
    if space.is_none() && spaces_known(page) {
        // The part is not on this page: nothing here is its evidence.
        return placed(fallback, Placement::AnswerSpace, false);
    }
    // 1. A specific quote among the page's words: in the part's answer space (nearest the hint),
    // or anywhere on a page without a layout; on a compared page, only words on added ink.
    if specific(claim.quote) {
        let runs: Vec<Rect> = quote_runs(page, claim.quote)
            .into_iter()
            .filter(|r| match &basis {
                Basis::Added(ink) => on_added_ink(ink, r),
                Basis::Unaligned(_) | Basis::Dark => true,
            })
            .collect();
        let runs = nearest_first(runs, claim.hint);
        if space.is_none() {
            if let Some(rect) = runs.first() {
                return placed(*rect, Placement::Words, true);
            }
        } else if let Some(rect) = runs.iter().find(|r| in_space(page, claim.part_id, r)) {
            return placed(*rect, Placement::Words, true);
        } else if !runs.is_empty() {
            // Written on this page, but not in this part's space: another part's words.
            return Placed {
                quoted_elsewhere: true,
                ..placed(fallback, Placement::AnswerSpace, false)
            };
        }
    }
    // 2. The line of the part's writing the model's transcription puts the quote on, on a page
    // lined up with its clean page: working and answer marks on their own lines. Only a specific
    // quote: a lone sign is on most lines of any transcription.
    if let (Basis::Added(_), Some(k), true) = (&basis, claim.line, specific(claim.quote))
        && let Some(line) = part_lines(page, claim.part_id).get(k)
    {
        return placed(*line, Placement::Line, true);
    }
    // 3. Ink added in the part's answer space, nearest the hint: the regions the hint touches,
    // else the nearest region and those on its line. Only a page lined up with its clean page
    // has added ink.
    if let Basis::Added(ink) = &basis {
        let inside: Vec<Rect> = ink
            .iter()
            .filter(|r| in_space(page, claim.part_id, r))
            .copied()
            .collect();
        if !inside.is_empty() {
            let chosen: Vec<Rect> = match claim.hint {
                Some(hint) => {
                    let touched: Vec<Rect> = inside
                        .iter()
                        .filter(|r| grown(&hint, 0.01).overlap(r) > 0.0)
                        .copied()
                        .collect();
                    if touched.is_empty() {
                        let nearest = nearest_first(inside.clone(), Some(hint))[0];
                        let (_, line) = centre(&nearest);
                        inside
                            .iter()
                            .filter(|r| (centre(r).1 - line).abs() <= nearest.height.max(0.01))
                            .copied()
                            .collect()
                    } else {
                        touched
                    }
                }
                None => inside,
            };
            if let Some(rect) = Rect::union(chosen) {
                return placed(rect, Placement::Ink, true);
            }
        }
    }
    // 4. The hint: inside the part's answer space, or on a foreign page where it covers ink,
    // shrunk to that ink.
    if let Some(hint) = claim.hint {
        if let Some(region) = region_holding(page, claim.part_id, &hint)
            && let Some(clipped) = hint.intersection(region)
        {
            return placed(clipped, Placement::Hint, true);
        }
        if !spaces_known(page)
            && matches!(basis, Basis::Dark)
            && let Some(ink) = ink_reader.ink_within(page, hint)
        {
            return placed(ink, Placement::Hint, true);
        }
    }
    // 5. Not located.
    placed(fallback, Placement::AnswerSpace, false)
}

/// Whether an award of `claim`, placed at `placed` on `page`, may stand: the guards of this
/// module's opening, in order.
pub fn guard(
    page: &WorkPage,
    claim: &Claim<'_>,
    placed: &Placed,
    ink_reader: &dyn PageInk,
) -> Guard {
    let uncertain = |code: GuardCode, why: String| Guard::Uncertain(code, why);
    if !page.evidence {
        let why = page
            .flagged
            .clone()
            .unwrap_or_else(|| "it is not the student's work".into());
        return uncertain(
            GuardCode::NotStudentWork,
            format!(
                "the marker awarded this mark on page {}, but {why}: a person checks it",
                page.page_id
            ),
        );
    }
    if comparable(claim.quote).is_empty() {
        return uncertain(
            GuardCode::NoQuote,
            "the marker awarded this mark without quoting the student's work it rests on; a person checks it".into(),
        );
    }
    let basis = basis(page);
    if let Basis::Unaligned(why) = &basis {
        return uncertain(
            GuardCode::PageNotAligned,
            format!(
                "page {} could not be lined up with its clean page ({why}): nothing on it is verified as the student's writing, so it supports no award; a person checks it",
                page.page_id
            ),
        );
    }
    let part = claim.part_id;
    if answer_space(page, part).is_none() && spaces_known(page) {
        return uncertain(
            GuardCode::PartNotOnPage,
            format!(
                "page {} holds no answer space of part {part}: nothing on it is evidence for this part; a person checks it",
                page.page_id
            ),
        );
    }
    if placed.quoted_elsewhere {
        return uncertain(
            GuardCode::QuoteOutsidePart,
            format!(
                "the marker's quote is written on page {} only outside the answer space of part {part} (in another part's or question's space, or outside every space): it is not evidence for this part; a person checks it",
                page.page_id
            ),
        );
    }
    if !placed.located {
        return uncertain(
            GuardCode::NotLocated,
            "evidence could not be located: the marker's quote was not found on the page as specific words in the part's answer space, and nothing written was found where it pointed; a person checks it".into(),
        );
    }
    box_guard(page, part, &placed.rect, &basis, ink_reader)
}

/// The guards on where an award's box is: inside the part's space, no larger than writing, on
/// ink.
fn box_guard(
    page: &WorkPage,
    part: &str,
    rect: &Rect,
    basis: &Basis<'_>,
    ink_reader: &dyn PageInk,
) -> Guard {
    let region = region_holding(page, part, rect);
    if region.is_none() && answer_space(page, part).is_some() {
        return Guard::Uncertain(
            GuardCode::OutsideAnswerSpace,
            format!(
                "the evidence on page {} lies outside the answer space of part {part}: it is not evidence for this part; a person checks it",
                page.page_id
            ),
        );
    }
    if area(rect) > MAX_EVIDENCE_AREA {
        return Guard::Uncertain(
            GuardCode::BoxTooLarge,
            format!(
                "the evidence box covers {:.0} % of page {}, more than the writing one mark rests on can (at most {:.0} %); a person checks it",
                area(rect) * 100.0,
                page.page_id,
                MAX_EVIDENCE_AREA * 100.0
            ),
        );
    }
    if let Some(region) = region
        && rect.width > region.width + SPACE_WIDTH_SLACK
    {
        return Guard::Uncertain(
            GuardCode::WiderThanAnswerSpace,
            format!(
                "the evidence box is wider than the answer space of part {part} it lies in on page {}: it holds more than the student's writing there; a person checks it",
                page.page_id
            ),
        );
    }
    match basis {
        Basis::Added(ink) if on_added_ink(ink, rect) => Guard::Stands,
        Basis::Added(_) => Guard::Uncertain(
            GuardCode::NoInk,
            "no ink was added to the printed page where the evidence is: the award cannot rest on the student's writing; a person checks it".into(),
        ),
        Basis::Dark if ink_reader.ink_within(page, *rect).is_some() => Guard::Stands,
        Basis::Dark | Basis::Unaligned(_) => Guard::Uncertain(
            GuardCode::NoInk,
            "the page has no ink where the evidence is: the award cannot rest on the student's writing; a person checks it".into(),
        ),
    }
}

/// An award a guard turned `uncertain` in a marker's answer, for the run record (`markerRun`'s
/// `guards`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Guarded {
    /// The criterion.
    pub criterion_id: String,
    /// The page of the evidence that failed the guard.
    pub page_id: String,
    /// Why, in words.
    pub guard: String,
    /// Why, as a stable code.
    pub guard_code: GuardCode,
}

/// Applies the guards to every award of a marker's answer (an import question, already through
/// [`super::questions::check_answer`]), whatever marker made it: each piece of an award's evidence
/// is guarded where the marker put it, and an award any piece of which fails becomes `uncertain`,
/// its reason starting with the guard's. Returns the awards turned `uncertain`.
pub fn guard_answer(
    request: &MarkRequest,
    question: &mut Value,
    ink_reader: &dyn PageInk,
) -> Vec<Guarded> {
    let part_of: HashMap<String, String> = question["rubric"]["criteria"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter_map(|c| {
                    Some((
                        c["id"].as_str()?.to_owned(),
                        c["partId"].as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut guarded = Vec::new();
    let Some(decisions) = question["decisions"].as_array_mut() else {
        return guarded;
    };
    for decision in decisions {
        if decision["outcome"] != "awarded" {
            continue;
        }
        let criterion = decision["criterionId"].as_str().unwrap_or("").to_owned();
        let part = part_of.get(&criterion).map(String::as_str).unwrap_or("");
        let empty = Vec::new();
        let failed = decision["evidence"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .find_map(|evidence| {
                let page_id = evidence["pageId"].as_str().unwrap_or("");
                let verdict = guard_cited(request, part, evidence, ink_reader);
                match verdict {
                    Guard::Stands => None,
                    Guard::Uncertain(code, why) => Some((page_id.to_owned(), code, why)),
                }
            });
        if let Some((page_id, code, why)) = failed {
            let said = decision["reason"].as_str().unwrap_or("").to_owned();
            decision["outcome"] = Value::from("uncertain");
            decision["reason"] = Value::from(format!("{why}. The marker said: {said}"));
            guarded.push(Guarded {
                criterion_id: criterion,
                page_id,
                guard: why,
                guard_code: code,
            });
        }
    }
    guarded
}

/// The guards on one piece of a marker's evidence (`pageId`, `quote`, `box`), where the marker
/// put it.
fn guard_cited(
    request: &MarkRequest,
    part: &str,
    evidence: &Value,
    ink_reader: &dyn PageInk,
) -> Guard {
    let page_id = evidence["pageId"].as_str().unwrap_or("");
    let Some(page) = request.work_pages.iter().find(|p| p.page_id == page_id) else {
        return Guard::Uncertain(
            GuardCode::NotStudentWork,
            format!(
                "the marker awarded this mark on page {page_id}, which is not one of the question's work pages: a person checks it"
            ),
        );
    };
    let b = &evidence["box"];
    let number = |k: &str| b[k].as_f64().unwrap_or(0.0);
    let rect = Rect {
        x: number("x"),
        y: number("y"),
        width: number("width"),
        height: number("height"),
    };
    let claim = Claim {
        part_id: part,
        quote: evidence["quote"].as_str().unwrap_or(""),
        hint: None,
        awarded: true,
        line: None,
    };
    // Where the marker put it: located, by the marker's own box (which rule placed it is not
    // the guards' concern).
    let placed = Placed {
        page_id: page.page_id.clone(),
        rect,
        placement: Placement::Hint,
        located: true,
        quoted_elsewhere: false,
    };
    guard(page, &claim, &placed, ink_reader)
}

/// Dark pixels of a raster inside a box: the tightest box around pixels darker than `threshold`,
/// when at least `min_pixels` of them are there.
pub fn dark_box(
    image: &image::GrayImage,
    rect: Rect,
    threshold: u8,
    min_pixels: usize,
) -> Option<Rect> {
    let (w, h) = image.dimensions();
    if w == 0 || h == 0 {
        return None;
    }
    let to_px = |v: f64, size: u32| ((v.clamp(0.0, 1.0) * f64::from(size)) as u32).min(size);
    let (x0, x1) = (to_px(rect.x, w), to_px(rect.x + rect.width, w));
    let (y0, y1) = (to_px(rect.y, h), to_px(rect.y + rect.height, h));
    let (mut left, mut top, mut right, mut bottom) = (u32::MAX, u32::MAX, 0u32, 0u32);
    let mut count = 0usize;
    for y in y0..y1 {
        for x in x0..x1 {
            if image.get_pixel(x, y).0[0] < threshold {
                count += 1;
                left = left.min(x);
                right = right.max(x);
                top = top.min(y);
                bottom = bottom.max(y);
            }
        }
    }
    (count >= min_pixels).then(|| Rect {
        x: f64::from(left) / f64::from(w),
        y: f64::from(top) / f64::from(h),
        width: f64::from(right + 1 - left) / f64::from(w),
        height: f64::from(bottom + 1 - top) / f64::from(h),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::marking::marker::{AnswerRegion, PageWord};

    /// No raster: pages without a comparison have no ink anywhere but in `Some` boxes.
    struct Ink(Option<Rect>);
    impl PageInk for Ink {
        fn ink_within(&self, _page: &WorkPage, rect: Rect) -> Option<Rect> {
            let ink = self.0?;
            (ink.overlap(&rect) > 0.0).then_some(ink)
        }
    }

    fn r(x: f64, y: f64, width: f64, height: f64) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    fn word(text: &str, bbox: Rect) -> PageWord {
        PageWord {
            text: text.into(),
            bbox,
            confidence: 0.9,
        }
    }

    /// A page with part a's answer space in the middle, the printed question above it, the
    /// student's "x = 3" written in the space, and ink added where it is written.
    fn page() -> WorkPage {
        WorkPage {
            page_id: "w:p1".into(),
            asset_id: "w".into(),
            page: 1,
            width_px: 1000,
            height_px: 1400,
            orientation: 0,
            evidence: true,
            blank: false,
            flagged: None,
            words: vec![
                // Printed: "Show that x = 3" above the answer space.
                word("Show", r(0.1, 0.2, 0.05, 0.02)),
                word("that", r(0.16, 0.2, 0.04, 0.02)),
                word("x", r(0.21, 0.2, 0.01, 0.02)),
                word("=", r(0.23, 0.2, 0.01, 0.02)),
                word("3", r(0.25, 0.2, 0.01, 0.02)),
                // Written by the student.
                word("x=", r(0.2, 0.5, 0.04, 0.03)),
                word("3", r(0.25, 0.5, 0.02, 0.03)),
            ],
            ink: Some(vec![r(0.19, 0.49, 0.09, 0.05), r(0.6, 0.7, 0.1, 0.04)]),
            ink_lines: Vec::new(),
            fit: None,
            unaligned: None,
            laid_out: true,
            answer_regions: vec![AnswerRegion {
                part_id: "a".into(),
                rect: r(0.05, 0.4, 0.9, 0.4),
            }],
            image: None,
        }
    }

    fn claim_for_guard() -> Claim<'static> {
        claim("x = 3", None)
    }

    fn claim<'a>(quote: &'a str, hint: Option<Rect>) -> Claim<'a> {
        Claim {
            part_id: "a",
            quote,
            hint,
            awarded: true,
            line: None,
        }
    }

    fn close(a: Rect, b: Rect) -> bool {
        (a.x - b.x).abs() < 1e-9
            && (a.y - b.y).abs() < 1e-9
            && (a.width - b.width).abs() < 1e-9
            && (a.height - b.height).abs() < 1e-9
    }

    #[test]
    fn hints_are_read_in_thousandths_and_empty_ones_dropped() {
        assert!(close(
            hint_rect([100, 200, 300, 250]).unwrap(),
            r(0.1, 0.2, 0.2, 0.05)
        ));
        // Corners given the wrong way round are still a box.
        assert!(close(
            hint_rect([300, 250, 100, 200]).unwrap(),
            r(0.1, 0.2, 0.2, 0.05)
        ));
        assert_eq!(hint_rect([100, 200, 100, 900]), None);
        assert!(close(
            hint_rect([0, 0, 5000, 1000]).unwrap(),
            r(0.0, 0.0, 1.0, 1.0)
        ));
    }

    #[test]
    fn a_quote_is_placed_on_the_students_words_not_the_printed_ones() {
        let page = page();
        // The hint is in the wrong place (top-left corner); the words decide.
        let placed = place(
            &page,
            &claim("X = 3", hint_rect([0, 0, 50, 50])),
            &Ink(None),
        );
        assert_eq!(placed.placement, Placement::Words);
        assert!(placed.located);
        assert!(
            close(placed.rect, r(0.2, 0.5, 0.07, 0.03)),
            "{:?}",
            placed.rect
        );
        assert_eq!(
            guard(&page, &claim_for_guard(), &placed, &Ink(None)),
            Guard::Stands
        );
    }

    #[test]
    fn maths_typed_differently_still_matches() {
        let mut page = page();
        page.words = vec![
            word("x²", r(0.2, 0.5, 0.03, 0.03)),
            word("−", r(0.24, 0.5, 0.01, 0.03)),
            word("4", r(0.26, 0.5, 0.02, 0.03)),
        ];
        let placed = place(&page, &claim("x^2 - 4", None), &Ink(None));
        assert_eq!(placed.placement, Placement::Words, "{placed:?}");
    }

    #[test]
    fn without_readable_words_the_ink_near_the_hint_is_evidence() {
        let mut page = page();
        page.words.truncate(5);
        let placed = place(
            &page,
            &claim("x = 3", hint_rect([150, 450, 300, 560])),
            &Ink(None),
        );
        assert_eq!(placed.placement, Placement::Ink);
        assert!(
            close(placed.rect, r(0.19, 0.49, 0.09, 0.05)),
            "{:?}",
            placed.rect
        );
        // A hint far from any ink takes the nearest line of ink.
        let placed = place(
            &page,
            &claim("x = 3", hint_rect([300, 420, 350, 440])),
            &Ink(None),
        );
        assert_eq!(placed.placement, Placement::Ink);
        assert!(
            close(placed.rect, r(0.19, 0.49, 0.09, 0.05)),
            "{:?}",
            placed.rect
        );
    }

    #[test]
    fn a_quote_is_found_on_its_line_of_the_transcription() {
        // Unlabelled: the part's last quoted line is its last line of ink.
        let t = Transcript::new("3t^2 - 12t + 9 = 0\n\n3(t - 1)(t - 3) = 0\nt = 1 and t = 3\n");
        let quotes = ["3(t - 1)(t - 3) = 0", "t = 1 and t = 3"];
        assert_eq!(t.line_of("a", quotes[0], &quotes, 3), Some(1));
        assert_eq!(t.line_of("a", quotes[1], &quotes, 3), Some(2));
        // Two lines of ink: the answer on the last, the working on the one before.
        assert_eq!(t.line_of("a", quotes[0], &quotes, 2), Some(0));
        assert_eq!(t.line_of("a", quotes[1], &quotes, 2), Some(1));
        // One line of ink, or a quote the transcription does not hold: nothing to choose.
        assert_eq!(t.line_of("a", quotes[0], &quotes, 1), None);
        assert_eq!(t.line_of("a", "x = 9", &quotes, 3), None);
        // Maths typed differently still matches.
        assert_eq!(t.line_of("a", "3(t-1)(t-3)=0", &quotes, 3), Some(1));
        // Labelled: the part's own lines, matched in order or in proportion.
        let t = Transcript::new(
            "(a) g(3) = 2\nfg(3) = 7\n(b) x = 4\n2x = 8\nx = 4 or 5\nx = 4\n(c) k = 2",
        );
        assert_eq!(t.line_of("a", "fg(3) = 7", &[], 2), Some(1));
        assert_eq!(t.line_of("a", "g(3) = 2", &[], 2), Some(0));
        assert_eq!(t.line_of("b", "2x = 8", &[], 4), Some(1));
        assert_eq!(t.line_of("b", "x = 4 or 5", &[], 4), Some(2));
        // Four transcribed lines over two lines of ink: in proportion.
        assert_eq!(t.line_of("b", "x = 4 or 5", &[], 2), Some(1));
        assert_eq!(t.line_of("b", "2x = 8", &[], 2), Some(0));
        // A part the labelled transcription does not name, or a quote only another part holds.
        assert_eq!(t.line_of("d", "k = 2", &[], 2), None);
        assert_eq!(t.line_of("a", "k = 2", &[], 2), None);
        // Labels: brackets, a closing bracket, a full stop, roman numerals; not words.
        assert_eq!(part_label("(a) x"), Some(("a".into(), " x")));
        assert_eq!(part_label("b) x"), Some(("b".into(), " x")));
        assert_eq!(part_label("c."), Some(("c".into(), "")));
        assert_eq!(part_label("(ii) x"), Some(("ii".into(), " x")));
        assert_eq!(part_label("so. x"), None);
        assert_eq!(part_label("f(x) = 2"), None);
        assert_eq!(part_label("x)y"), None);
    }

    /// A page whose part `a` holds `n` lines of writing, each its own line of ink, no words read.
    fn lined(n: usize) -> (WorkPage, Vec<Rect>) {
        let mut page = page();
        page.words.truncate(5);
        let lines: Vec<Rect> = (0..n)
            .map(|i| r(0.1, 0.42 + 0.06 * i as f64, 0.3 + 0.05 * i as f64, 0.04))
            .collect();
        page.ink = Rect::union(lines.clone()).map(|all| vec![all]);
        page.ink_lines = lines.clone();
        (page, lines)
    }

    #[test]
    fn each_mark_lands_on_its_own_line_of_writing() {
        for n in 2..=5 {
            let (page, lines) = lined(n);
            let written: Vec<String> = (0..n)
                .map(|i| format!("step {i}: y = {}", i + 10))
                .collect();
            let transcription = written.join("\n");
            let transcript = Transcript::new(&transcription);
            let quotes: Vec<&str> = written.iter().map(String::as_str).collect();
            for (i, quote) in quotes.iter().enumerate() {
                // The model's box on the last line, as careless models put every box.
                let hint = hint_rect([100, 700, 400, 800]);
                let line = transcript.line_of("a", quote, &quotes, part_lines(&page, "a").len());
                assert_eq!(line, Some(i), "{n} lines, quote {i}");
                let claim = Claim {
                    line,
                    ..claim(quote, hint)
                };
                let (placed, verdict) = placed_and_guarded(&page, &claim);
                assert_eq!(placed.placement, Placement::Line, "{n} lines, quote {i}");
                assert!(
                    close(placed.rect, lines[i]),
                    "{n} lines, quote {i}: {placed:?}"
                );
                assert_eq!(verdict, Guard::Stands, "{n} lines, quote {i}");
            }
        }
        // A line another part's space holds is not this part's; without lines, the ink nearest
        // the box is taken as before.
        let (mut page, _) = lined(3);
        page.answer_regions[0].rect = r(0.05, 0.4, 0.9, 0.085);
        assert_eq!(part_lines(&page, "a").len(), 1);
        page.ink_lines.clear();
        let claim = Claim {
            line: Some(1),
            ..claim("x = 3", hint_rect([100, 420, 400, 460]))
        };
        assert_eq!(place(&page, &claim, &Ink(None)).placement, Placement::Ink);
    }

    #[test]
    fn writing_that_runs_over_a_small_space_is_still_its_parts() {
        // A one-line space for part b under part a's; the student's line runs below it, its
        // centre outside the space, and nothing else is near.
        let mut page = page();
        page.words.truncate(5);
        page.answer_regions.push(AnswerRegion {
            part_id: "b".into(),
            rect: r(0.05, 0.85, 0.9, 0.03),
        });
        page.ink = Some(vec![r(0.2, 0.86, 0.3, 0.035)]);
        let claim_b = Claim {
            part_id: "b",
            ..claim("x = 3", hint_rect([50, 850, 950, 880]))
        };
        let (placed, verdict) = placed_and_guarded(&page, &claim_b);
        assert_eq!(placed.placement, Placement::Ink);
        assert!(close(placed.rect, r(0.2, 0.86, 0.3, 0.035)), "{placed:?}");
        assert_eq!(verdict, Guard::Stands, "{placed:?}");
        // Part a's space shares none of it: it is not part a's writing.
        let (placed, verdict) = placed_and_guarded(&page, &claim_for_guard());
        assert!(!placed.located, "{placed:?}");
        assert_eq!(code_of(&verdict), Some(GuardCode::NotLocated));
        // Ink only grazing part b's space (a tenth of it inside) is not part b's writing.
        page.ink = Some(vec![r(0.2, 0.875, 0.3, 0.05)]);
        let unhinted = Claim {
            part_id: "b",
            ..claim("x = 3", None)
        };
        let (placed, verdict) = placed_and_guarded(&page, &unhinted);
        assert!(!placed.located, "{placed:?}");
        assert_eq!(code_of(&verdict), Some(GuardCode::NotLocated));
    }

    #[test]
    fn with_no_ink_the_hint_inside_the_space_places_it_and_the_guard_refuses_the_award() {
        let mut page = page();
        page.words.truncate(5);
        page.ink = Some(Vec::new());
        let placed = place(
            &page,
            &claim("x = 3", hint_rect([200, 500, 300, 530])),
            &Ink(None),
        );
        assert_eq!(placed.placement, Placement::Hint);
        assert!(placed.located);
        match guard(&page, &claim_for_guard(), &placed, &Ink(None)) {
            Guard::Uncertain(code, why) => {
                assert_eq!(code, GuardCode::NoInk);
                assert!(why.contains("no ink was added"), "{why}");
            }
            Guard::Stands => panic!("an award on no ink stood"),
        }
    }

    #[test]
    fn a_hint_outside_the_space_is_not_located() {
        let mut page = page();
        page.words.truncate(5);
        page.ink = Some(Vec::new());
        let placed = place(
            &page,
            &claim("x = 3", hint_rect([0, 0, 50, 50])),
            &Ink(None),
        );
        assert_eq!(placed.placement, Placement::AnswerSpace);
        assert!(!placed.located);
        assert!(close(placed.rect, r(0.05, 0.4, 0.9, 0.4)));
        match guard(&page, &claim_for_guard(), &placed, &Ink(None)) {
            Guard::Uncertain(code, why) => {
                assert_eq!(code, GuardCode::NotLocated);
                assert!(why.contains("could not be located"), "{why}");
            }
            Guard::Stands => panic!("an unlocated award stood"),
        }
    }

    #[test]
    fn a_blank_answer_is_placed_on_its_answer_space() {
        let page = page();
        let mut blank = claim("", hint_rect([0, 0, 10, 10]));
        blank.awarded = false;
        let placed = place(&page, &blank, &Ink(None));
        assert_eq!(placed.placement, Placement::AnswerSpace);
        assert!(placed.located);
        assert!(close(placed.rect, r(0.05, 0.4, 0.9, 0.4)));
    }

    #[test]
    fn on_a_foreign_page_the_hint_is_shrunk_to_the_ink_it_covers() {
        let mut page = page();
        page.answer_regions.clear();
        page.laid_out = false;
        page.ink = None;
        page.words.clear();
        let ink = Ink(Some(r(0.3, 0.3, 0.1, 0.02)));
        let placed = place(
            &page,
            &claim("x = 3", hint_rect([250, 250, 500, 400])),
            &ink,
        );
        assert_eq!(placed.placement, Placement::Hint);
        assert!(close(placed.rect, r(0.3, 0.3, 0.1, 0.02)));
        assert_eq!(
            guard(&page, &claim_for_guard(), &placed, &ink),
            Guard::Stands
        );
        // The same hint over a clean part of the page is not located.
        let placed = place(
            &page,
            &claim("x = 3", hint_rect([600, 600, 700, 700])),
            &ink,
        );
        assert!(!placed.located);
    }

    #[test]
    fn pages_that_are_not_the_students_work_support_no_award() {
        let mut clean = page();
        clean.evidence = false;
        clean.flagged = Some("it is the clean question paper".into());
        let placed = place(&clean, &claim("X = 3", None), &Ink(None));
        match guard(&clean, &claim_for_guard(), &placed, &Ink(None)) {
            Guard::Uncertain(code, why) => {
                assert_eq!(code, GuardCode::NotStudentWork);
                assert!(why.contains("clean question paper"), "{why}");
            }
            Guard::Stands => panic!("an award on a clean page stood"),
        }
    }

    #[test]
    fn an_award_quoting_nothing_does_not_stand() {
        let page = page();
        let empty = claim("", hint_rect([0, 0, 1000, 1000]));
        let placed = place(&page, &empty, &Ink(None));
        match guard(&page, &empty, &placed, &Ink(None)) {
            Guard::Uncertain(code, why) => {
                assert_eq!(code, GuardCode::NoQuote);
                assert!(why.contains("without quoting"), "{why}");
            }
            Guard::Stands => panic!("an award quoting nothing stood"),
        }
        // A blank answer on a page without its answer space is not located.
        let mut elsewhere = page.clone();
        elsewhere.answer_regions.clear();
        let mut blank = claim("", None);
        blank.awarded = false;
        assert!(!place(&elsewhere, &blank, &Ink(None)).located);
    }

    #[test]
    fn a_hint_centred_in_the_space_is_clipped_to_it() {
        let mut page = page();
        page.words.clear();
        page.ink = Some(vec![r(0.19, 0.2, 0.09, 0.05)]);
        // Nearly the whole page, centred inside part a's space: only the space is kept, and the
        // ink outside it (the printed question's area) does not make the award stand.
        let whole = claim("x = 3", hint_rect([0, 100, 1000, 1000]));
        let placed = place(&page, &whole, &Ink(None));
        assert_eq!(placed.placement, Placement::Hint);
        assert!(
            close(placed.rect, r(0.05, 0.4, 0.9, 0.4)),
            "{:?}",
            placed.rect
        );
        assert!(matches!(
            guard(&page, &whole, &placed, &Ink(None)),
            Guard::Uncertain(GuardCode::BoxTooLarge, _)
        ));
    }

    #[test]
    fn dark_pixels_are_found_inside_a_box_only() {
        let mut img = image::GrayImage::from_pixel(100, 100, image::Luma([255]));
        for y in 40..45 {
            for x in 20..60 {
                img.put_pixel(x, y, image::Luma([10]));
            }
        }
        let found = dark_box(&img, r(0.0, 0.0, 1.0, 1.0), 128, 20).unwrap();
        assert!(close(found, r(0.2, 0.4, 0.4, 0.05)), "{found:?}");
        assert_eq!(dark_box(&img, r(0.0, 0.6, 1.0, 0.4), 128, 20), None);
        assert_eq!(dark_box(&img, r(0.2, 0.4, 0.01, 0.01), 128, 20), None);
    }

    /// The guard's code, or `None` when the award stands.
    fn code_of(verdict: &Guard) -> Option<GuardCode> {
        match verdict {
            Guard::Stands => None,
            Guard::Uncertain(code, _) => Some(*code),
        }
    }

    fn why_of(verdict: &Guard) -> &str {
        match verdict {
            Guard::Stands => "",
            Guard::Uncertain(_, why) => why,
        }
    }

    /// Places `claim` on `page` and guards the award.
    fn placed_and_guarded(page: &WorkPage, claim: &Claim<'_>) -> (Placed, Guard) {
        let placed = place(page, claim, &Ink(None));
        let verdict = guard(page, claim, &placed, &Ink(None));
        (placed, verdict)
    }

    #[test]
    fn legitimate_awards_still_stand() {
        // A specific quote written in the part's own space, on ink.
        let page = page();
        let (placed, verdict) = placed_and_guarded(&page, &claim("x = 3", None));
        assert_eq!(placed.placement, Placement::Words);
        assert_eq!(verdict, Guard::Stands);
        // Ink in the part's own space, the words unreadable.
        let mut unread = page.clone();
        unread.words.truncate(5);
        let (placed, verdict) =
            placed_and_guarded(&unread, &claim("x = 3", hint_rect([150, 450, 300, 560])));
        assert_eq!(placed.placement, Placement::Ink);
        assert_eq!(verdict, Guard::Stands);
        // A short final answer on the student's ink in its own space: the words do not place it,
        // the ink does.
        let (placed, verdict) =
            placed_and_guarded(&page, &claim("3", hint_rect([240, 490, 280, 540])));
        assert_eq!(placed.placement, Placement::Ink);
        assert_eq!(verdict, Guard::Stands);
    }

    #[test]
    fn a_page_that_could_not_be_lined_up_supports_no_award_and_yields_no_ink() {
        let mut page = page();
        page.ink = None;
        page.unaligned =
            Some("alignment failed: only 22 % of the reference's ink matches the work page".into());
        // The quote is among the page's words, but nothing says they are the student's.
        let (placed, verdict) = placed_and_guarded(&page, &claim("x = 3", None));
        assert_eq!(placed.placement, Placement::Words);
        assert_eq!(code_of(&verdict), Some(GuardCode::PageNotAligned));
        let why = why_of(&verdict);
        assert!(
            why.contains("page w:p1") && why.contains("only 22 %"),
            "{why}"
        );
        // Without readable words, the hint stays a hint: never "ink", and the dark marks under it
        // are not taken for writing.
        page.words.truncate(5);
        let dark = Ink(Some(r(0.2, 0.5, 0.07, 0.03)));
        let hint = claim("x = 3", hint_rect([150, 450, 300, 560]));
        let placed = place(&page, &hint, &dark);
        assert_ne!(placed.placement, Placement::Ink);
        assert_eq!(
            code_of(&guard(&page, &hint, &placed, &dark)),
            Some(GuardCode::PageNotAligned)
        );
    }

    #[test]
    fn a_comparison_that_cannot_be_right_is_a_page_not_lined_up() {
        // The phone photo: one added region over 98 % of the page, "aligned".
        let mut page = page();
        page.words.truncate(5);
        page.ink = Some(vec![r(0.01, 0.0, 0.98, 1.0)]);
        let (placed, verdict) =
            placed_and_guarded(&page, &claim("x = 3", hint_rect([150, 450, 300, 560])));
        assert_ne!(placed.placement, Placement::Ink, "{placed:?}");
        assert_eq!(code_of(&verdict), Some(GuardCode::PageNotAligned));
        assert!(why_of(&verdict).contains("98 %"), "{}", why_of(&verdict));
        // The rule itself: too much added, or one region too large; writing is neither.
        assert!(implausible_fit(Some(0.45), &[]).is_some());
        assert!(implausible_fit(Some(0.26), &[r(0.1, 0.1, 0.1, 0.1)]).is_some());
        assert!(implausible_fit(None, &[r(0.0, 0.0, 0.8, 0.7)]).is_some());
        assert_eq!(implausible_fit(Some(0.05), &[r(0.1, 0.4, 0.8, 0.5)]), None);
        assert_eq!(implausible_fit(None, &[]), None);
    }

    #[test]
    fn a_box_larger_than_writing_can_be_does_not_stand() {
        // A region of "added ink" filling most of the part's space (not enough to condemn the
        // comparison): placed on it, the box is 32 % of the page.
        let mut page = page();
        page.words.truncate(5);
        page.ink = Some(vec![r(0.06, 0.41, 0.85, 0.38)]);
        let (placed, verdict) =
            placed_and_guarded(&page, &claim("x = 3", hint_rect([150, 450, 300, 560])));
        assert_eq!(placed.placement, Placement::Ink);
        assert_eq!(code_of(&verdict), Some(GuardCode::BoxTooLarge));
        assert!(why_of(&verdict).contains("32 %"), "{}", why_of(&verdict));
        // Just under the limit, it stands.
        page.ink = Some(vec![r(0.06, 0.41, 0.85, 0.17)]);
        let (_, verdict) =
            placed_and_guarded(&page, &claim("x = 3", hint_rect([150, 450, 300, 560])));
        assert_eq!(verdict, Guard::Stands);
    }

    #[test]
    fn a_box_wider_than_its_answer_space_does_not_stand() {
        // Added ink right across the page, centred in part a's space (0.9 of the page wide).
        let mut page = page();
        page.words.truncate(5);
        page.ink = Some(vec![r(0.0, 0.5, 1.0, 0.05)]);
        let (placed, verdict) =
            placed_and_guarded(&page, &claim("x = 3", hint_rect([150, 450, 300, 560])));
        assert_eq!(placed.placement, Placement::Ink);
        assert_eq!(code_of(&verdict), Some(GuardCode::WiderThanAnswerSpace));
        // Within the slack of the space's width, it stands.
        page.ink = Some(vec![r(0.045, 0.5, 0.905, 0.05)]);
        let (_, verdict) =
            placed_and_guarded(&page, &claim("x = 3", hint_rect([150, 450, 300, 560])));
        assert_eq!(verdict, Guard::Stands);
    }

    #[test]
    fn lone_digits_letters_and_signs_are_not_specific_quotes() {
        for quote in [
            "3", "x", "=", "+", "−", "-1", "(b)", "x2", "a)", " 7 ", "", "  ",
        ] {
            assert!(!specific(quote), "{quote:?}");
        }
        for quote in [
            "x = 3", "12", "0.2", "7cm", "yes", "x²", "= 0.2", "x = -1", "-12",
        ] {
            assert!(specific(quote), "{quote:?}");
        }
    }

    #[test]
    fn a_lone_digit_letter_or_sign_locates_nothing_among_the_words() {
        // A foreign page (no layout, no comparison): "3", "x" and "=" are printed in the question
        // and nothing is written near the hint, which lies on a clean part of the page.
        let mut page = page();
        page.answer_regions.clear();
        page.laid_out = false;
        page.ink = None;
        let ink = Ink(None);
        for quote in ["3", "x", "=", "-"] {
            let lone = claim(quote, hint_rect([600, 600, 700, 700]));
            let placed = place(&page, &lone, &ink);
            assert!(!placed.located, "{quote:?}: {placed:?}");
            assert_eq!(placed.placement, Placement::AnswerSpace, "{quote:?}");
            assert_eq!(
                code_of(&guard(&page, &lone, &placed, &ink)),
                Some(GuardCode::NotLocated),
                "{quote:?}"
            );
        }
        // A specific quote is found there.
        let placed = place(&page, &claim("x = 3", None), &ink);
        assert_eq!(placed.placement, Placement::Words);
        // On a page of the paper, a lone digit in the part's space is not placed by the words
        // either (the ink there places it, see `legitimate_awards_still_stand`).
        let page = super::tests::page();
        let mut bare = page.clone();
        bare.ink = Some(vec![r(0.6, 0.2, 0.05, 0.04)]);
        let lone = claim("3", None);
        let placed = place(&bare, &lone, &ink);
        assert_ne!(placed.placement, Placement::Words, "{placed:?}");
        assert_eq!(
            code_of(&guard(&bare, &lone, &placed, &ink)),
            Some(GuardCode::NotLocated)
        );
    }

    /// Page 1 with parts a and b: the student's "x = 3" written in part b's space, part a's space
    /// holding other ink.
    fn written_in_b() -> WorkPage {
        let mut page = page();
        page.answer_regions = vec![
            AnswerRegion {
                part_id: "a".into(),
                rect: r(0.05, 0.3, 0.9, 0.3),
            },
            AnswerRegion {
                part_id: "b".into(),
                rect: r(0.05, 0.65, 0.9, 0.3),
            },
        ];
        page.words = vec![
            word("x=", r(0.2, 0.7, 0.04, 0.03)),
            word("3", r(0.25, 0.7, 0.02, 0.03)),
        ];
        page.ink = Some(vec![r(0.19, 0.69, 0.09, 0.05), r(0.3, 0.4, 0.2, 0.04)]);
        page
    }

    #[test]
    fn a_quote_found_only_in_another_parts_space_is_not_evidence() {
        let page = written_in_b();
        let (placed, verdict) = placed_and_guarded(&page, &claim("x = 3", None));
        assert!(!placed.located);
        assert!(placed.quoted_elsewhere);
        assert_eq!(code_of(&verdict), Some(GuardCode::QuoteOutsidePart));
        assert!(why_of(&verdict).contains("part a"), "{}", why_of(&verdict));
        // For part b, it is.
        let mut b = claim("x = 3", None);
        b.part_id = "b";
        let (placed, verdict) = placed_and_guarded(&page, &b);
        assert_eq!(placed.placement, Placement::Words);
        assert_eq!(verdict, Guard::Stands);
    }

    #[test]
    fn a_quote_outside_every_space_is_not_evidence() {
        let mut page = written_in_b();
        // Written in the margin, below every space.
        page.words = vec![
            word("x=", r(0.2, 0.96, 0.04, 0.02)),
            word("3", r(0.25, 0.96, 0.02, 0.02)),
        ];
        page.ink = Some(vec![r(0.19, 0.955, 0.09, 0.03), r(0.3, 0.4, 0.2, 0.04)]);
        let (placed, verdict) = placed_and_guarded(&page, &claim("x = 3", None));
        assert!(placed.quoted_elsewhere, "{placed:?}");
        assert_eq!(code_of(&verdict), Some(GuardCode::QuoteOutsidePart));
    }

    #[test]
    fn nothing_on_a_page_without_the_parts_space_supports_its_award() {
        // Part c is not on this page, which holds part a's space: the student's words there are
        // part a's.
        let page = page();
        let mut c = claim("x = 3", hint_rect([150, 450, 300, 560]));
        c.part_id = "c";
        let (placed, verdict) = placed_and_guarded(&page, &c);
        assert!(!placed.located);
        assert_eq!(code_of(&verdict), Some(GuardCode::PartNotOnPage));
        assert!(why_of(&verdict).contains("part c"), "{}", why_of(&verdict));
        // A page of the paper holding none of this question's spaces supports none of its parts.
        let mut prompt_only = page.clone();
        prompt_only.answer_regions.clear();
        let (_, verdict) = placed_and_guarded(&prompt_only, &claim("x = 3", None));
        assert_eq!(code_of(&verdict), Some(GuardCode::PartNotOnPage));
    }

    /// The request of `pages`, for [`guard_answer`].
    fn request_of(pages: Vec<WorkPage>) -> MarkRequest {
        MarkRequest {
            question_id: "q".into(),
            session_id: "s".into(),
            label: "1".into(),
            scheme: crate::marking::marker::Scheme::Pages,
            work_pages: pages,
            scheme_pages: Vec::new(),
            page_selections: serde_json::Map::new(),
            assets: Value::Null,
        }
    }

    fn awarded(id: &str, page: &str, quote: &str, b: Rect) -> Value {
        serde_json::json!({
            "criterionId": id, "outcome": "awarded", "reason": "it is right",
            "evidence": [{ "pageId": page, "quote": quote,
                           "box": { "x": b.x, "y": b.y, "width": b.width, "height": b.height } }],
            "conditionChecks": [],
        })
    }

    #[test]
    fn every_markers_awards_are_guarded_where_the_marker_put_them() {
        let mut unaligned = page();
        unaligned.page_id = "w:p2".into();
        unaligned.ink = None;
        unaligned.unaligned = Some("alignment failed".into());
        let request = request_of(vec![page(), unaligned]);
        let mut question = serde_json::json!({
            "rubric": { "criteria": [
                { "id": "ok", "partId": "a" }, { "id": "giant", "partId": "a" },
                { "id": "outside", "partId": "a" }, { "id": "absent", "partId": "z" },
                { "id": "unaligned", "partId": "a" }, { "id": "bare", "partId": "a" },
                { "id": "withheld", "partId": "a" },
            ] },
            "decisions": [
                awarded("ok", "w:p1", "x = 3", r(0.2, 0.5, 0.07, 0.03)),
                awarded("giant", "w:p1", "x = 3", r(0.05, 0.4, 0.9, 0.4)),
                awarded("outside", "w:p1", "x = 3", r(0.6, 0.1, 0.1, 0.04)),
                awarded("absent", "w:p1", "x = 3", r(0.2, 0.5, 0.07, 0.03)),
                awarded("unaligned", "w:p2", "x = 3", r(0.2, 0.5, 0.07, 0.03)),
                awarded("bare", "w:p1", "x = 3", r(0.3, 0.6, 0.05, 0.03)),
                { "criterionId": "withheld", "outcome": "withheld", "reason": "blank",
                  "evidence": [{ "pageId": "w:p1", "quote": "blank",
                                 "box": { "x": 0.0, "y": 0.0, "width": 1.0, "height": 1.0 } }],
                  "conditionChecks": [] },
            ],
        });
        let guarded = guard_answer(&request, &mut question, &Ink(None));
        let codes: Vec<(&str, GuardCode)> = guarded
            .iter()
            .map(|g| (g.criterion_id.as_str(), g.guard_code))
            .collect();
        assert_eq!(
            codes,
            [
                ("giant", GuardCode::BoxTooLarge),
                ("outside", GuardCode::OutsideAnswerSpace),
                ("absent", GuardCode::PartNotOnPage),
                ("unaligned", GuardCode::PageNotAligned),
                ("bare", GuardCode::NoInk),
            ]
        );
        let outcomes: Vec<&str> = question["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["outcome"].as_str().unwrap())
            .collect();
        assert_eq!(
            outcomes,
            [
                "awarded",
                "uncertain",
                "uncertain",
                "uncertain",
                "uncertain",
                "uncertain",
                "withheld"
            ]
        );
        let reason = question["decisions"][1]["reason"].as_str().unwrap();
        assert!(
            reason.contains("covers 36 %") && reason.ends_with("The marker said: it is right"),
            "{reason}"
        );
        assert_eq!(guarded[3].page_id, "w:p2");
        // Guarding again changes nothing.
        assert!(guard_answer(&request, &mut question, &Ink(None)).is_empty());
    }

    #[test]
    fn an_award_on_a_page_not_in_the_request_does_not_stand() {
        let request = request_of(vec![page()]);
        let mut question = serde_json::json!({
            "rubric": { "criteria": [{ "id": "c", "partId": "a" }] },
            "decisions": [awarded("c", "w:p9", "x = 3", r(0.2, 0.5, 0.07, 0.03))],
        });
        let guarded = guard_answer(&request, &mut question, &Ink(None));
        assert_eq!(guarded.len(), 1);
        assert_eq!(guarded[0].guard_code, GuardCode::NotStudentWork);
        assert_eq!(question["decisions"][0]["outcome"], "uncertain");
    }

    fn root(path: &str) -> String {
        let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(path);
        std::fs::read_to_string(full).expect("readable")
    }

    fn ours() -> std::collections::BTreeSet<&'static str> {
        GuardCode::ALL.iter().map(|c| c.as_str()).collect()
    }

    #[test]
    fn guard_codes_are_unique_snake_case_and_documented() {
        assert_eq!(ours().len(), GuardCode::ALL.len());
        for code in GuardCode::ALL {
            let text = code.as_str();
            assert!(
                text.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{text}"
            );
            assert!(code.meaning().ends_with('.'), "{text}");
            assert_eq!(code.to_string(), text);
            assert_eq!(serde_json::to_value(code).unwrap(), text);
        }
    }

    #[test]
    fn the_openapi_document_lists_exactly_these_guard_codes() {
        let doc: Value = serde_json::from_str(&root("schemas/openapi.json")).expect("JSON");
        let run = &doc["components"]["schemas"]["MarkingQuestion"]["properties"]["markerRun"]["properties"];
        for list in ["placements", "guards"] {
            let listed: std::collections::BTreeSet<&str> =
                run[list]["items"]["properties"]["guardCode"]["enum"]
                    .as_array()
                    .unwrap_or_else(|| panic!("markerRun.{list}[].guardCode enum"))
                    .iter()
                    .filter_map(|v| v.as_str())
                    .collect();
            assert_eq!(listed, ours(), "{list}");
        }
    }

    #[test]
    fn the_schemas_readme_lists_exactly_these_guard_codes() {
        let readme = root("schemas/README.md");
        let start = readme
            .find("(`guardCode`) are")
            .expect("the published list");
        let end = start
            + readme[start..]
                .find(", in the order they apply")
                .expect("its end");
        let listed: std::collections::BTreeSet<&str> =
            readme[start..end].split('`').skip(3).step_by(2).collect();
        assert_eq!(listed, ours());
    }
}
