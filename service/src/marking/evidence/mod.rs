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
//!
//! # Files
//!
//! - `mod.rs`: the limits, what a claim and a placement are, and how ink is read ([`PageInk`]).
//! - `codes.rs`: the guard codes ([`GuardCode`]) and a guard's verdict ([`Guard`]).
//! - `boxes.rs`: box arithmetic and the model's hints ([`hint_rect`]).
//! - `quotes.rs`: the student's words, specific quotes and transcriptions ([`Transcript`]).
//! - `spaces.rs`: a part's answer space and its lines on a page ([`answer_space`]).
//! - `place.rs`: placing evidence ([`place`]).
//! - `guard.rs`: the guards ([`guard`], [`guard_answer`]).
//! - `tests.rs`, `guard_tests.rs`: their tests.

mod boxes;
mod codes;
mod guard;
#[cfg(test)]
mod guard_tests;
mod place;
mod quotes;
mod spaces;
#[cfg(test)]
mod tests;

use super::marker::Rect;
use super::marker::WorkPage;
use boxes::area;
pub(crate) use boxes::grown;
pub use boxes::hint_rect;
pub use codes::{Guard, GuardCode};
pub use guard::{Guarded, dark_box, guard, guard_answer};
pub use place::place;
pub(crate) use quotes::part_label;
pub use quotes::{Transcript, specific, student_words};
use serde::Serialize;
pub use spaces::{answer_space, part_lines};
use std::cell::RefCell;
use std::collections::HashMap;

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
