//! The guards: what stands and what is turned `uncertain`, and the published guard codes.

#![allow(clippy::unwrap_used)]

use super::boxes::hint_rect;
use super::codes::Guard;
use super::guard::{guard, guard_answer};
use super::place::place;
use super::quotes::specific;
use super::{Placement, implausible_fit};
use crate::marking::marker::MarkRequest;
use crate::marking::marker::Rect;
use crate::marking::marker::WorkPage;
use serde_json::Value;

use super::tests::{Ink, claim, code_of, page, placed_and_guarded, r, why_of, word};
use super::*;
use crate::marking::marker::AnswerRegion;

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
    let (placed, verdict) = placed_and_guarded(&page, &claim("3", hint_rect([240, 490, 280, 540])));
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
    let (_, verdict) = placed_and_guarded(&page, &claim("x = 3", hint_rect([150, 450, 300, 560])));
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
    let (_, verdict) = placed_and_guarded(&page, &claim("x = 3", hint_rect([150, 450, 300, 560])));
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
    let run =
        &doc["components"]["schemas"]["MarkingQuestion"]["properties"]["markerRun"]["properties"];
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
