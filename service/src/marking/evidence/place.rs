//! Placing one claim's evidence on the student's ink, by the first rule of the module's
//! documentation that applies ([`place`]).

use super::boxes::{centre, grown};
use super::quotes::{Basis, basis, comparable, quote_runs, spaces_known, specific};
use super::spaces::{
    answer_space, in_space, nearest_first, on_added_ink, part_lines, region_holding,
};
use super::{Claim, PageInk, Placed, Placement};
use crate::marking::marker::Rect;
use crate::marking::marker::WorkPage;

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
    if let Basis::Added(ink) = &basis
        && let Some(rect) = ink_near_hint(page, claim, ink)
    {
        return placed(rect, Placement::Ink, true);
    }
    // 4. The hint: inside the part's answer space, or on a foreign page where it covers ink,
    // shrunk to that ink.
    if let Some(rect) = by_hint(page, claim, &basis, ink_reader) {
        return placed(rect, Placement::Hint, true);
    }
    // 5. Not located.
    placed(fallback, Placement::AnswerSpace, false)
}

/// The union of the ink added in the part's answer space nearest the claim's hint: the regions
/// the hint touches, else the nearest region and those on its line; all of it without a hint.
fn ink_near_hint(page: &WorkPage, claim: &Claim<'_>, ink: &[Rect]) -> Option<Rect> {
    let inside: Vec<Rect> = ink
        .iter()
        .filter(|r| in_space(page, claim.part_id, r))
        .copied()
        .collect();
    if inside.is_empty() {
        return None;
    }
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
    Rect::union(chosen)
}

/// The claim's hint as evidence: clipped to the part's answer space when its centre lies in it,
/// or, on a foreign page, shrunk to the ink it covers.
fn by_hint(
    page: &WorkPage,
    claim: &Claim<'_>,
    basis: &Basis<'_>,
    ink_reader: &dyn PageInk,
) -> Option<Rect> {
    let hint = claim.hint?;
    if let Some(region) = region_holding(page, claim.part_id, &hint)
        && let Some(clipped) = hint.intersection(region)
    {
        return Some(clipped);
    }
    if !spaces_known(page) && matches!(basis, Basis::Dark) {
        return ink_reader.ink_within(page, hint);
    }
    None
}
