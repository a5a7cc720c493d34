//! A part's answer space on a page: its box ([`answer_space`]), its lines of writing
//! ([`part_lines`]), and whether a box belongs to it.

use super::boxes::{area, distance, grown};
use crate::marking::marker::Rect;
use crate::marking::marker::WorkPage;

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
pub(super) fn on_added_ink(ink: &[Rect], rect: &Rect) -> bool {
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
pub(super) fn region_holding<'a>(
    page: &'a WorkPage,
    part_id: &str,
    rect: &Rect,
) -> Option<&'a Rect> {
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

pub(super) fn in_space(page: &WorkPage, part_id: &str, rect: &Rect) -> bool {
    region_holding(page, part_id, rect).is_some()
}

pub(super) fn nearest_first(mut candidates: Vec<Rect>, hint: Option<Rect>) -> Vec<Rect> {
    if let Some(hint) = hint {
        candidates.sort_by(|a, b| distance(a, &hint).total_cmp(&distance(b, &hint)));
    }
    candidates
}
