//! The guards: one award after placement ([`guard`]), and every award of a marker's answer
//! before it is scored ([`guard_answer`]); dark marks of writing's size on a foreign page
//! ([`dark_box`]).

use super::boxes::area;
use super::codes::{Guard, GuardCode};
use super::quotes::{Basis, basis, comparable, spaces_known};
use super::spaces::{answer_space, on_added_ink, region_holding};
use super::{Claim, MAX_EVIDENCE_AREA, PageInk, Placed, Placement, SPACE_WIDTH_SLACK};
use crate::marking::marker::MarkRequest;
use crate::marking::marker::Rect;
use crate::marking::marker::WorkPage;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

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
/// [`crate::marking::questions::check_answer`]), whatever marker made it: each piece of an award's evidence
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
