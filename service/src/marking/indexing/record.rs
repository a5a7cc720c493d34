//! The page's record as it is saved: its role and the reason for it (work, blank, the clean
//! paper, a mark scheme), whether added writing lies in an answer space, and its text source.

use super::SCHEME_MARK_CODES;
use super::reading::Found;
use super::reference::Reference;
use crate::marking::jobs::JobFailure;
use crate::marking::pages::WRITING_MIN_EXTENT;
use crate::marking::placement;
use crate::marking::placement::FoundLabel;
use crate::store::automated::PageRecord;
use crate::store::now_ms;
use crate::store::words::{AssetKind, PageRole, PageState};
use examkit_pdf::DocumentKind;
use examkit_pdf::Layout;
use examkit_scan::PageIndex;
use serde_json::json;

/// Whether a line of added writing, at least [`WRITING_MIN_EXTENT`] high and wide, lies in an
/// answer space of paper page `page`: `lines` are on the scan, `spaces` on the clean page, and
/// `to_clean` carries a box of the scan onto the clean page. A page with no answer space (or a
/// paper without a layout) is written on when any such line lies anywhere on it.
pub fn writes_in_answer_space(
    lines: &[examkit_scan::NormBox],
    spaces: &[examkit_scan::NormBox],
    to_clean: impl Fn(&examkit_scan::NormBox) -> Option<examkit_scan::NormBox>,
) -> bool {
    let mut writing = lines
        .iter()
        .filter(|l| l.height >= WRITING_MIN_EXTENT && l.width >= WRITING_MIN_EXTENT);
    if spaces.is_empty() {
        return writing.next().is_some();
    }
    writing.any(|line| {
        let on_clean = to_clean(line).unwrap_or(*line);
        spaces.iter().any(|space| space.intersects(&on_clean))
    })
}

/// The answer spaces a layout records on paper page `page`, on the clean page.
fn answer_spaces(layout: Option<&Layout>, page: u32) -> Vec<examkit_scan::NormBox> {
    let Some(layout) = layout else {
        return Vec::new();
    };
    layout
        .questions
        .iter()
        .flat_map(|q| {
            q.answer_space
                .iter()
                .chain(q.parts.iter().flat_map(|p| p.answer_space.iter()))
        })
        .filter(|r| r.page == page)
        .map(|r| examkit_scan::NormBox {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
        })
        .collect()
}

/// The page's role and the reason for it.
pub(super) fn role(kind: AssetKind, found: &Found, layout: Option<&Layout>) -> (PageRole, String) {
    if kind != AssetKind::Work {
        return (PageRole::Scheme, "uploaded as a mark scheme".into());
    }
    if let Some(code) = &found.code
        && code.kind == DocumentKind::MarkScheme
    {
        return (
            PageRole::SchemeAsWork,
            format!(
                "this page carries the page code of page {} of a mark scheme: a mark scheme is never evidence of a student's answer",
                code.page
            ),
        );
    }
    let codes = placement::mark_codes(&found.index.words);
    if found.code.is_none() && codes >= SCHEME_MARK_CODES {
        return (
            PageRole::SchemeAsWork,
            format!(
                "the page's text reads as a mark scheme ({codes} mark codes such as M1 and A1): a mark scheme is never evidence of a student's answer"
            ),
        );
    }
    if let (Some(comparison), Some(code)) = (&found.comparison, &found.code)
        && !found.by_copy
        && (found.identical
            || (comparison.aligned
                && !writes_in_answer_space(
                    &found.lines,
                    &answer_spaces(layout, code.page),
                    |line| comparison.to_clean(line),
                )))
    {
        return (
            PageRole::CleanPaper,
            format!(
                "nothing was added to page {} of the clean question paper: a clean question paper is never evidence of a student's answer",
                code.page
            ),
        );
    }
    (PageRole::Work, "student work".into())
}

pub(super) fn record(
    asset_id: &str,
    page: i64,
    kind: AssetKind,
    found: &Found,
    reference: Option<&Reference>,
) -> Result<PageRecord, JobFailure> {
    let to_json = |v: &serde_json::Value| v.to_string();
    let labels: Vec<FoundLabel> = match (&found.code, reference.and_then(|r| r.layout.as_ref())) {
        (Some(code), Some(layout))
            if code.kind == DocumentKind::QuestionPaper
                && reference.is_some_and(|r| {
                    r.paper_id == code.paper_id && r.revision == code.revision
                }) =>
        {
            placement::from_layout(layout, code.page)
        }
        _ => placement::from_text(&found.index.words),
    };
    let (role, reason) = role(kind, found, reference.and_then(|r| r.layout.as_ref()));
    let words = serde_json::to_string(&found.index.words)
        .map_err(|e| JobFailure::permanent(format!("the words cannot be stored: {e}")))?;
    let compare = match (&found.comparison, &found.compare_note) {
        (Some(c), _) => Some(to_json(&json!({
            "available": true,
            "aligned": c.aligned,
            "addedFraction": c.added_fraction,
            "addedRegions": c.added_regions,
            // The added ink split into lines of writing, in the order the clean page reads, so
            // that each mark's evidence can be put on its own line.
            "addedLines": found.lines,
            "note": c.note,
            // How the scan was lined up, so that answer spaces are carried onto it (marking)
            // and a person can see which fit was used and how well it held.
            "fit": c.fit,
            "residualPx": c.residual_px,
            "matches": c.matches,
            "transform": c.transform,
        }))),
        (None, Some(note)) => Some(to_json(&json!({ "available": false, "note": note }))),
        (None, None) => None,
    };
    Ok(PageRecord {
        asset_id: asset_id.to_owned(),
        page,
        state: PageState::Ok,
        error: None,
        orientation: i64::from(found.index.orientation.degrees()),
        text_source: text_source(&found.index),
        width_px: i64::from(found.index.width_px),
        height_px: i64::from(found.index.height_px),
        role,
        role_reason: reason,
        code_json: found.code.as_ref().map(|c| {
            to_json(&json!({
                "kind": match c.kind { DocumentKind::QuestionPaper => "question-paper", DocumentKind::MarkScheme => "mark-scheme" },
                "paperId": c.paper_id,
                "revision": c.revision,
                "page": c.page,
            }))
        }),
        labels_json: serde_json::to_string(&labels)
            .map_err(|e| JobFailure::permanent(format!("the labels cannot be stored: {e}")))?,
        words_json: words,
        compare_json: compare,
        indexed_at: now_ms(),
    })
}

pub(super) fn text_source(index: &PageIndex) -> String {
    match index.text_source {
        examkit_scan::TextSource::TextLayer => "textLayer",
        examkit_scan::TextSource::Ocr => "ocr",
        examkit_scan::TextSource::None => "none",
    }
    .to_owned()
}

#[cfg(test)]
mod tests {
    use examkit_scan::NormBox;
    use proptest::prelude::*;

    use super::writes_in_answer_space;
    use crate::marking::pages::WRITING_MIN_EXTENT;

    fn b(x: f64, y: f64, width: f64, height: f64) -> NormBox {
        NormBox {
            x,
            y,
            width,
            height,
        }
    }

    /// The answer spaces of a page: two parts' spaces, one under the other.
    fn spaces() -> Vec<NormBox> {
        vec![b(0.1, 0.2, 0.8, 0.2), b(0.1, 0.55, 0.8, 0.25)]
    }

    #[test]
    fn a_short_answer_in_an_answer_space_is_writing() {
        // "x = 3": about 0.04 of the width and 0.012 of the height, 0.0005 of the page.
        let answer = [b(0.6, 0.33, 0.04, 0.012)];
        assert!(writes_in_answer_space(&answer, &spaces(), |l| Some(*l)));
        // The same line beside the spaces (a doodle in the margin) is not an answer.
        let margin = [b(0.92, 0.33, 0.04, 0.012)];
        assert!(!writes_in_answer_space(&margin, &spaces(), |l| Some(*l)));
        // Thinner than the writing extent: a printed rule shifted by a pixel in scanning.
        let rule = [b(0.1, 0.3, 0.8, WRITING_MIN_EXTENT / 2.0)];
        assert!(!writes_in_answer_space(&rule, &spaces(), |l| Some(*l)));
        assert!(!writes_in_answer_space(&[], &spaces(), |l| Some(*l)));
    }

    #[test]
    fn lines_are_carried_onto_the_clean_page_before_they_are_judged() {
        // On the scan the line sits in the margin; the transform puts it in the first space.
        let line = [b(0.92, 0.05, 0.04, 0.012)];
        let shift = |l: &NormBox| Some(b(l.x - 0.4, l.y + 0.25, l.width, l.height));
        assert!(writes_in_answer_space(&line, &spaces(), shift));
        assert!(!writes_in_answer_space(&line, &spaces(), |l| Some(*l)));
    }

    #[test]
    fn without_answer_spaces_any_line_of_writing_counts() {
        let line = [b(0.92, 0.05, 0.04, 0.012)];
        assert!(writes_in_answer_space(&line, &[], |l| Some(*l)));
        assert!(!writes_in_answer_space(
            &[b(0.5, 0.5, 0.001, 0.3)],
            &[],
            |l| Some(*l)
        ));
    }

    proptest! {
        /// A line of writing inside an answer space counts however small it is, down to the
        /// writing extent, and whatever else is on the page.
        #[test]
        fn any_line_at_least_the_writing_extent_in_a_space_is_writing(
            space in (0.0f64..0.8, 0.0f64..0.8, 0.05f64..0.2, 0.05f64..0.2),
            at in (0.0f64..1.0, 0.0f64..1.0),
            size in (WRITING_MIN_EXTENT..0.05, WRITING_MIN_EXTENT..0.05),
            others in proptest::collection::vec((0.0f64..1.0, 0.0f64..1.0), 0..5),
        ) {
            let space = b(space.0, space.1, space.2, space.3);
            let line = b(
                space.x + at.0 * (space.width - size.0).max(0.0),
                space.y + at.1 * (space.height - size.1).max(0.0),
                size.0,
                size.1,
            );
            let mut lines: Vec<NormBox> =
                others.iter().map(|&(x, y)| b(x, y, WRITING_MIN_EXTENT / 2.0, 0.01)).collect();
            prop_assert!(!writes_in_answer_space(&lines, &[space], |l| Some(*l)));
            lines.push(line);
            prop_assert!(writes_in_answer_space(&lines, &[space], |l| Some(*l)));
        }
    }
}
