//! Placing a marker's evidence on the student's ink, and the guards that hold whatever a marker
//! says.
//!
//! A marker that reads page images (a vision-language model) names, for each decision, the
//! student's words it rests on (`quote`), a page, and a box that is only a hint. The service
//! places the evidence itself, by the first rule that applies:
//! 1. **words**: the quote found among the page's indexed words (tolerant of case, spacing and
//!    the ways maths is typed) → those words' box; on a page compared with its clean page, only
//!    words on added ink count, so a quote of the printed question is never the student's;
//! 2. **ink**: the ink indexing found added inside the part's answer space, the regions nearest
//!    the hint → their union;
//! 3. **hint**: the model's box, when its centre lies inside the part's answer space, clipped to
//!    that space; or, on a page with no recorded layout (a foreign paper), when it covers ink,
//!    shrunk to that ink;
//! 4. **answer space**: otherwise the evidence could not be located, and is boxed on the answer
//!    space (or the hint, or the page).
//!
//! A blank answer (an empty quote) is located on the part's answer space, where the page holds
//! one.
//!
//! Guards, applied to every decision after placement:
//! - an award whose evidence could not be located is `uncertain`;
//! - an award located where no ink was added (or, with no clean page to compare, where the page
//!   has no ink) is `uncertain`;
//! - an award that quotes nothing of the student's work is `uncertain`;
//! - nothing on a page that is not the student's work (a blank page of the script) supports an
//!   award: such an award is `uncertain`. (Pages that can be evidence of nothing, the clean paper
//!   or a mark scheme, are never shown to a marker as work, and an answer citing one is refused.)
//!
//! On a page that could not be compared with its clean page (a foreign paper, or a scan that
//! could not be aligned), "ink" can only mean dark marks of a size that writing has: printed text
//! counts too, so such awards rest on the marker's reading and the quote found on the page.
//!
//! Dependencies, conditions and totals are the engine's, never the marker's.

use serde::Serialize;

use super::answers;
use super::marker::{Rect, WorkPage};

/// Which rule placed a piece of evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The quote was found among the page's words.
    Words,
    /// Ink added in the part's answer space, near the hint.
    Ink,
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
}

/// A guard's verdict on an award.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guard {
    /// The decision stands.
    Stands,
    /// The award becomes `uncertain`, for this reason.
    Uncertain(String),
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
}

/// Reads where a page has ink inside a box (dark pixels of its displayed raster), for pages that
/// could not be compared with a clean page; the tightest box around that ink, or `None`.
pub trait PageInk {
    /// The ink inside `rect` on `page`.
    fn ink_within(&self, page: &WorkPage, rect: Rect) -> Option<Rect>;
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

fn grown(r: &Rect, by: f64) -> Rect {
    Rect {
        x: r.x - by,
        y: r.y - by,
        width: r.width + 2.0 * by,
        height: r.height + 2.0 * by,
    }
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

fn in_space(page: &WorkPage, part_id: &str, rect: &Rect) -> bool {
    page.answer_regions
        .iter()
        .any(|r| r.part_id == part_id && r.rect.holds_centre_of(rect))
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
    let placed = |rect: Rect, placement: Placement, located: bool| Placed {
        page_id: page.page_id.clone(),
        rect,
        placement,
        located,
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
    // 1. The quote among the page's words: in the part's answer space first, then nearest the
    // hint; on a compared page, only words on added ink.
    let mut runs: Vec<Rect> = quote_runs(page, claim.quote)
        .into_iter()
        .filter(|r| page.ink.as_ref().is_none_or(|ink| on_added_ink(ink, r)))
        .collect();
    runs = nearest_first(runs, claim.hint);
    if let Some(rect) = runs
        .iter()
        .find(|r| in_space(page, claim.part_id, r))
        .or(if space.is_none() { runs.first() } else { None })
    {
        return placed(*rect, Placement::Words, true);
    }
    // 2. Ink added in the part's answer space, nearest the hint: the regions the hint touches,
    // else the nearest region and those on its line.
    if let Some(ink) = &page.ink {
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
    // 3. The hint: inside the part's answer space, or on a page without a layout where it covers
    // ink, shrunk to that ink.
    if let Some(hint) = claim.hint {
        if let Some(region) = page
            .answer_regions
            .iter()
            .find(|r| r.part_id == claim.part_id && r.rect.holds_centre_of(&hint))
            && let Some(clipped) = hint.intersection(&region.rect)
        {
            return placed(clipped, Placement::Hint, true);
        }
        if page.answer_regions.is_empty()
            && let Some(ink) = ink_reader.ink_within(page, hint)
        {
            return placed(ink, Placement::Hint, true);
        }
    }
    // 4. Not located.
    placed(fallback, Placement::AnswerSpace, false)
}

/// Whether an award of `claim`, placed at `placed` on `page`, may stand.
pub fn guard(
    page: &WorkPage,
    claim: &Claim<'_>,
    placed: &Placed,
    ink_reader: &dyn PageInk,
) -> Guard {
    if !page.evidence {
        let why = page
            .flagged
            .clone()
            .unwrap_or_else(|| "it is not the student's work".into());
        return Guard::Uncertain(format!(
            "the marker awarded this mark on page {}, but {why}: a person checks it",
            page.page_id
        ));
    }
    if comparable(claim.quote).is_empty() {
        return Guard::Uncertain(
            "the marker awarded this mark without quoting the student's work it rests on; a person checks it".into(),
        );
    }
    if !placed.located {
        return Guard::Uncertain(
            "evidence could not be located: the marker's quote was not found on the page and nothing written was found where it pointed; a person checks it".into(),
        );
    }
    let inked = match &page.ink {
        Some(ink) => on_added_ink(ink, &placed.rect),
        None => ink_reader.ink_within(page, placed.rect).is_some(),
    };
    if inked {
        Guard::Stands
    } else if page.ink.is_some() {
        Guard::Uncertain(
            "no ink was added to the printed page where the evidence is: the award cannot rest on the student's writing; a person checks it".into(),
        )
    } else {
        Guard::Uncertain(
            "the page has no ink where the evidence is: the award cannot rest on the student's writing; a person checks it".into(),
        )
    }
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
            Guard::Uncertain(why) => assert!(why.contains("no ink was added"), "{why}"),
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
            Guard::Uncertain(why) => assert!(why.contains("could not be located"), "{why}"),
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
            Guard::Uncertain(why) => assert!(why.contains("clean question paper"), "{why}"),
            Guard::Stands => panic!("an award on a clean page stood"),
        }
    }

    #[test]
    fn an_award_quoting_nothing_does_not_stand() {
        let page = page();
        let empty = claim("", hint_rect([0, 0, 1000, 1000]));
        let placed = place(&page, &empty, &Ink(None));
        match guard(&page, &empty, &placed, &Ink(None)) {
            Guard::Uncertain(why) => assert!(why.contains("without quoting"), "{why}"),
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
            Guard::Uncertain(_)
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
}
