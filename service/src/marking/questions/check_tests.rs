//! [`check_answer`], the check every marker's answer passes before it is saved, on hand-built
//! requests: each of its refusals (label, page selections, the rubric against a structured scheme,
//! evidence on pages that are not the student's work), the cases it lets through, and the
//! refusals left to the engine behind it in [`answer_check`]; and reading what indexing stored,
//! where a corrupt record fails the question rather than reading as empty.

use super::check::{answer_check, check_answer};
use super::records::{answer_regions, comparison_of, labels_of, structured_scheme, words_of};
use crate::marking::failure::FailureCode;
use crate::marking::jobs::JobFailure;
use crate::marking::marker::MarkRequest;
use crate::marking::marker::Rect;
use crate::marking::marker::Scheme;
use crate::marking::marker::SchemePage;
use crate::marking::marker::WorkPage;
use crate::store::words::PageRole;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::marking::marker::structured_rubric;

const WORK: &str = "5b0f6a2e-8c1d-4e7a-9b3f-2d4c6e8f0a11";
const SCHEME: &str = "c7e2d9b4-1a3f-4c5e-8d7b-9f0e1a2b3c44";

/// Why page 2 is not evidence: a page of the script with nothing written on it.
const BLANK_REASON: &str = "nothing was written on this page of the script";
/// Why page 3 is not evidence: the clean question paper.
const CLEAN_REASON: &str = "the page is the clean question paper";

fn work(n: u32) -> String {
    format!("{WORK}:p{n}")
}

fn s1() -> String {
    format!("{SCHEME}:p1")
}

/// Page 1: the student's writing; page 2: a blank page of the script; page 3: the clean question
/// paper; page 4: a page that is not evidence, with no reason recorded.
fn work_pages() -> Vec<WorkPage> {
    let page = |n: u32, evidence: bool, blank: bool, flagged: Option<&str>| WorkPage {
        page_id: work(n),
        asset_id: WORK.into(),
        page: n,
        width_px: 800,
        height_px: 1100,
        orientation: 0,
        evidence,
        blank,
        flagged: flagged.map(str::to_owned),
        words: Vec::new(),
        ink: Some(Vec::new()),
        ink_lines: Vec::new(),
        fit: None,
        unaligned: None,
        laid_out: false,
        answer_regions: Vec::new(),
        image: None,
    };
    vec![
        page(1, true, false, None),
        page(2, false, true, Some(BLANK_REASON)),
        page(3, false, false, Some(CLEAN_REASON)),
        page(4, false, false, None),
    ]
}

fn parts() -> Value {
    json!([{ "id": "a", "maxMarks": 2 }, { "id": "b", "maxMarks": 1 }])
}

fn criteria() -> Value {
    json!([
        { "id": "q1-M1", "partId": "a", "code": "M1", "requirement": "Sets up a correct equation",
          "conditions": [], "dependsOn": [], "sourcePageIds": [s1()], "answers": [], "notes": [] },
        { "id": "q1-A1", "partId": "a", "code": "A1", "requirement": "x = 3",
          "conditions": [], "dependsOn": ["q1-M1"], "sourcePageIds": [s1()],
          "answers": ["x = 3"], "notes": ["cao"] },
        { "id": "q1-B1", "partId": "b", "code": "B1", "requirement": "States the range",
          "conditions": ["Uses strict inequalities"], "conditionMode": "all",
          "dependsOn": [], "sourcePageIds": [s1()], "answers": [], "notes": [] },
    ])
}

fn structured() -> Scheme {
    Scheme::Structured {
        parts: parts(),
        criteria: criteria(),
    }
}

fn request(scheme: Scheme) -> MarkRequest {
    let mut selections = Map::new();
    selections.insert(WORK.into(), json!([1, 2, 3, 4]));
    selections.insert(SCHEME.into(), json!([1]));
    MarkRequest {
        question_id: "q".into(),
        session_id: "s".into(),
        label: "1".into(),
        scheme,
        work_pages: work_pages(),
        scheme_pages: vec![SchemePage {
            page_id: s1(),
            asset_id: SCHEME.into(),
            page: 1,
            width_px: 800,
            height_px: 1100,
            image: None,
        }],
        page_selections: selections,
        assets: json!([
            { "id": WORK, "kind": "work", "pageCount": 5 },
            { "id": SCHEME, "kind": "scheme", "pageCount": 2 },
        ]),
    }
}

/// The session's assets as the engine knows them: page 5 of the work and page 2 of the scheme
/// exist but are not selected.
fn engine_assets() -> Vec<examkit_engine::Asset> {
    let id = |s: &str| uuid::Uuid::parse_str(s).expect("uuid");
    vec![
        examkit_engine::Asset {
            id: id(WORK),
            kind: examkit_engine::AssetKind::Work,
            page_count: 5,
        },
        examkit_engine::Asset {
            id: id(SCHEME),
            kind: examkit_engine::AssetKind::Scheme,
            page_count: 2,
        },
    ]
}

fn evidence(page: &str, quote: &str) -> Value {
    json!({
        "pageId": page,
        "quote": quote,
        "box": { "x": 0.2, "y": 0.5, "width": 0.12, "height": 0.04 },
    })
}

fn decision(criterion: &str, outcome: &str, page: &str, checks: Value) -> Value {
    json!({
        "criterionId": criterion,
        "outcome": outcome,
        "reason": format!("{outcome} by hand"),
        "evidence": [evidence(page, "x = 3")],
        "conditionChecks": checks,
    })
}

/// A sound answer: the scheme's rubric, part a awarded on the student's page, part b withheld
/// on the blank page of the script where its answer space is.
fn answer() -> Value {
    let rubric = structured_rubric(&parts(), &criteria()).expect("rubric");
    json!({
        "label": "1",
        "pageSelections": { WORK: [1, 2, 3, 4], SCHEME: [1] },
        "rubric": rubric,
        "decisions": [
            decision("q1-M1", "awarded", &work(1), json!([])),
            decision("q1-A1", "awarded", &work(1), json!([])),
            decision("q1-B1", "withheld", &work(2), json!([{ "index": 0, "result": "uncertain" }])),
        ],
    })
}

/// The refusal of `question`, which must be permanent and carry `code`.
fn refused(request: &MarkRequest, question: &Value, code: &str) -> String {
    match check_answer(request, question) {
        Ok(()) => panic!("expected {code}, the answer was accepted: {question}"),
        Err(failure) => {
            assert_eq!(failure.code, code, "{}", failure.message);
            assert!(failure.permanent, "{code} must not be retried");
            assert_eq!(failure.details, None);
            failure.message
        }
    }
}

fn criterion_mut<'a>(question: &'a mut Value, id: &str) -> &'a mut Value {
    question["rubric"]["criteria"]
        .as_array_mut()
        .expect("criteria")
        .iter_mut()
        .find(|c| c["id"] == id)
        .expect("criterion")
}

fn decision_mut<'a>(question: &'a mut Value, id: &str) -> &'a mut Value {
    question["decisions"]
        .as_array_mut()
        .expect("decisions")
        .iter_mut()
        .find(|d| d["criterionId"] == id)
        .expect("decision")
}

/// The engine's codes for `question` through the whole check.
fn engine_codes(request: &MarkRequest, question: &Value) -> Vec<String> {
    let assets = engine_assets();
    let check = answer_check(request, &assets, "builtin");
    match check(question) {
        Ok(()) => Vec::new(),
        Err(problems) => problems
            .into_iter()
            .map(|p| p.code.as_str().to_owned())
            .collect(),
    }
}

#[test]
fn a_sound_answer_passes_the_check_and_the_engine() {
    let request = request(structured());
    assert_eq!(check_answer(&request, &answer()), Ok(()));
    // The base answer of every refusal below is one the engine accepts too, so each refusal is
    // the one change the test makes.
    assert_eq!(engine_codes(&request, &answer()), Vec::<String>::new());
}

#[test]
fn an_answer_for_another_label_is_refused() {
    let request = request(structured());
    let mut question = answer();
    question["label"] = json!("2");
    let message = refused(&request, &question, "marker_answer_invalid");
    assert!(
        message.contains("answered for label \"2\", not 1"),
        "{message}"
    );

    // A missing label, and a label that is a number rather than the string, are other labels.
    question["label"] = json!(1);
    let message = refused(&request, &question, "marker_answer_invalid");
    assert!(message.contains("label 1, not 1"), "{message}");
    if let Some(object) = question.as_object_mut() {
        object.remove("label");
    }
    let message = refused(&request, &question, "marker_answer_invalid");
    assert!(message.contains("label null, not 1"), "{message}");
}

#[test]
fn the_label_is_checked_before_anything_else() {
    let request = request(structured());
    let mut question = answer();
    question["label"] = json!("2");
    question["pageSelections"] = json!({});
    question["rubric"] = json!(null);
    let message = refused(&request, &question, "marker_answer_invalid");
    assert!(message.contains("label"), "{message}");
}

#[test]
fn page_selections_other_than_the_requests_are_refused() {
    let request = request(structured());
    let changes = [
        ("a page left out", json!({ WORK: [1, 2, 3], SCHEME: [1] })),
        (
            "a page added",
            json!({ WORK: [1, 2, 3, 4, 5], SCHEME: [1] }),
        ),
        ("another page", json!({ WORK: [1, 2, 3, 5], SCHEME: [1] })),
        ("the scheme left out", json!({ WORK: [1, 2, 3, 4] })),
        (
            "another asset",
            json!({ WORK: [1, 2, 3, 4], SCHEME: [1], "0f0e0d0c-0b0a-4908-8706-050403020100": [1] }),
        ),
        (
            "the pages reordered",
            json!({ WORK: [4, 3, 2, 1], SCHEME: [1] }),
        ),
        (
            "pages as strings",
            json!({ WORK: ["1", "2", "3", "4"], SCHEME: ["1"] }),
        ),
        ("none", json!({})),
        ("not an object", json!(null)),
    ];
    for (what, selections) in changes {
        let mut question = answer();
        question["pageSelections"] = selections;
        let message = refused(&request, &question, "marker_answer_invalid");
        assert!(
            message.contains("pageSelections are not the question's"),
            "{what}: {message}"
        );
    }
    // Absent altogether.
    let mut question = answer();
    if let Some(object) = question.as_object_mut() {
        object.remove("pageSelections");
    }
    let message = refused(&request, &question, "marker_answer_invalid");
    assert!(message.contains("pageSelections"), "{message}");
}

#[test]
fn a_rubric_that_is_not_the_schemes_is_refused() {
    let request = request(structured());
    type Change = fn(&mut Value);
    let changes: [(&str, Change); 14] = [
        ("a criterion left out", |q| {
            if let Some(list) = q["rubric"]["criteria"].as_array_mut() {
                list.retain(|c| c["id"] != "q1-A1");
            }
        }),
        ("a criterion added", |q| {
            if let Some(list) = q["rubric"]["criteria"].as_array_mut() {
                let mut extra = list[1].clone();
                extra["id"] = json!("q1-A2");
                extra["code"] = json!("A1");
                list.push(extra);
            }
        }),
        ("a code changed", |q| {
            criterion_mut(q, "q1-A1")["code"] = json!("B1");
        }),
        ("a part changed", |q| {
            criterion_mut(q, "q1-B1")["partId"] = json!("a");
        }),
        ("an id changed", |q| {
            criterion_mut(q, "q1-M1")["id"] = json!("q1-M2");
        }),
        ("a code dropped", |q| {
            if let Some(c) = criterion_mut(q, "q1-A1").as_object_mut() {
                c.remove("code");
            }
        }),
        ("an id of another type", |q| {
            criterion_mut(q, "q1-M1")["id"] = json!(1);
        }),
        ("no criteria", |q| {
            q["rubric"]["criteria"] = json!([]);
        }),
        // Each of these would let a marker raise the score the engine computes.
        ("a dependency dropped", |q| {
            criterion_mut(q, "q1-A1")["dependsOn"] = json!([]);
        }),
        ("a condition dropped", |q| {
            criterion_mut(q, "q1-B1")["conditions"] = json!([]);
        }),
        ("the condition mode changed", |q| {
            criterion_mut(q, "q1-B1")["conditionMode"] = json!("any");
        }),
        ("a requirement changed", |q| {
            criterion_mut(q, "q1-A1")["requirement"] = json!("x = 3 or x = 4");
        }),
        ("a dependency added", |q| {
            criterion_mut(q, "q1-B1")["dependsOn"] = json!(["q1-M1"]);
        }),
        ("no rubric", |q| {
            q["rubric"] = json!(null);
        }),
    ];
    for (what, change) in changes {
        let mut question = answer();
        change(&mut question);
        let message = refused(&request, &question, "marker_rubric_mismatch");
        assert!(
            message.contains("rubric is not the scheme's"),
            "{what}: {message}"
        );
    }
}

#[test]
fn the_rubric_is_checked_before_the_evidence() {
    let request = request(structured());
    let mut question = answer();
    criterion_mut(&mut question, "q1-A1")["code"] = json!("B1");
    decision_mut(&mut question, "q1-M1")["evidence"] = json!([evidence(&work(3), "printed")]);
    refused(&request, &question, "marker_rubric_mismatch");
}

#[test]
fn the_rubric_may_list_the_schemes_criteria_in_another_order() {
    let request = request(structured());
    let mut question = answer();
    if let Some(list) = question["rubric"]["criteria"].as_array_mut() {
        list.reverse();
    }
    assert_eq!(check_answer(&request, &question), Ok(()));
}

#[test]
fn without_a_structured_scheme_the_rubric_is_the_markers() {
    // A scheme of pages: the marker reads the rubric from them, so any rubric passes this check.
    let request = request(Scheme::Pages);
    let mut question = answer();
    criterion_mut(&mut question, "q1-A1")["code"] = json!("B1");
    if let Some(list) = question["rubric"]["criteria"].as_array_mut() {
        list.retain(|c| c["id"] != "q1-M1");
    }
    assert_eq!(check_answer(&request, &question), Ok(()));
    // Its other checks still hold.
    decision_mut(&mut question, "q1-A1")["evidence"] = json!([evidence(&work(3), "printed")]);
    refused(&request, &question, "evidence_not_student_work");
}

#[test]
fn evidence_on_the_clean_question_paper_is_refused_whatever_the_outcome() {
    let request = request(structured());
    for outcome in ["awarded", "withheld", "uncertain"] {
        let mut question = answer();
        let d = decision_mut(&mut question, "q1-A1");
        d["outcome"] = json!(outcome);
        d["evidence"] = json!([evidence(&work(3), "the printed question")]);
        let message = refused(&request, &question, "evidence_not_student_work");
        assert_eq!(
            message,
            format!(
                "the marker cites page {} as evidence, but {CLEAN_REASON}",
                work(3)
            ),
            "{outcome}"
        );
    }
}

#[test]
fn evidence_among_other_evidence_is_each_checked() {
    // One good item does not cover a bad one after it.
    let request = request(structured());
    let mut question = answer();
    decision_mut(&mut question, "q1-M1")["evidence"] = json!([
        evidence(&work(1), "x = 3"),
        evidence(&work(3), "the printed question"),
    ]);
    let message = refused(&request, &question, "evidence_not_student_work");
    assert!(message.contains(&work(3)), "{message}");
}

#[test]
fn a_page_flagged_without_a_reason_is_refused_as_not_the_students_work() {
    let request = request(structured());
    let mut question = answer();
    decision_mut(&mut question, "q1-M1")["evidence"] = json!([evidence(&work(4), "x = 3")]);
    let message = refused(&request, &question, "evidence_not_student_work");
    assert_eq!(
        message,
        format!(
            "the marker cites page {} as evidence, but not a student's work",
            work(4)
        )
    );
}

#[test]
fn a_blank_page_of_the_script_never_supports_an_award() {
    let request = request(structured());
    let mut question = answer();
    decision_mut(&mut question, "q1-B1")["outcome"] = json!("awarded");
    let message = refused(&request, &question, "evidence_not_student_work");
    assert_eq!(
        message,
        format!(
            "the marker cites page {} as evidence, but {BLANK_REASON}",
            work(2)
        )
    );
}

#[test]
fn a_blank_page_of_the_script_locates_a_withheld_or_uncertain_decision() {
    let request = request(structured());
    for outcome in ["withheld", "uncertain"] {
        let mut question = answer();
        decision_mut(&mut question, "q1-B1")["outcome"] = json!(outcome);
        assert_eq!(check_answer(&request, &question), Ok(()), "{outcome}");
    }
}

#[test]
fn evidence_of_a_condition_check_is_checked_too() {
    let request = request(structured());
    // On the clean paper, in a decision that is not an award: refused.
    let mut question = answer();
    decision_mut(&mut question, "q1-B1")["conditionChecks"] = json!([{
        "index": 0,
        "result": "met",
        "evidence": [evidence(&work(3), "x > 2")],
    }]);
    let message = refused(&request, &question, "evidence_not_student_work");
    assert!(message.contains(&work(3)), "{message}");
    assert!(message.contains(CLEAN_REASON), "{message}");

    // On the blank page, under an award: refused; under a withheld decision: accepted.
    let mut question = answer();
    let d = decision_mut(&mut question, "q1-B1");
    d["evidence"] = json!([evidence(&work(1), "x > 2")]);
    d["conditionChecks"] = json!([{
        "index": 0,
        "result": "met",
        "evidence": [evidence(&work(2), "x > 2")],
    }]);
    d["outcome"] = json!("awarded");
    let message = refused(&request, &question, "evidence_not_student_work");
    assert!(message.contains(&work(2)), "{message}");
    decision_mut(&mut question, "q1-B1")["outcome"] = json!("withheld");
    assert_eq!(check_answer(&request, &question), Ok(()));
}

#[test]
fn evidence_on_a_scheme_page_or_an_unselected_page_is_refused_by_the_engine() {
    // check_answer knows only the selected work pages that are not evidence; evidence on a scheme
    // page or on a page outside the selection is refused by the engine, in the same check.
    let request = request(structured());
    let cases = [
        (s1(), "asset_role_mismatch"),
        (format!("{SCHEME}:p2"), "page_not_selected"),
        (work(5), "page_not_selected"),
    ];
    for (page, code) in cases {
        let mut question = answer();
        decision_mut(&mut question, "q1-A1")["evidence"] = json!([evidence(&page, "x = 3")]);
        assert_eq!(
            engine_codes(&request, &question),
            vec![code.to_owned()],
            "{page}"
        );
    }
}

#[test]
fn a_refusal_of_check_answer_reaches_the_marker_with_its_code() {
    // answer_check, the check offered to markers for a repair, stops at check_answer's refusal
    // and reports its code.
    let request = request(structured());
    let mut question = answer();
    criterion_mut(&mut question, "q1-B1")["partId"] = json!("a");
    decision_mut(&mut question, "q1-M1")["evidence"] = json!([evidence(&work(3), "printed")]);
    assert_eq!(
        engine_codes(&request, &question),
        vec!["marker_rubric_mismatch".to_owned()]
    );
}

/// A stored page index as indexing writes it, every JSON field readable.
fn stored_page() -> crate::store::automated::PageRecord {
    crate::store::automated::PageRecord {
        asset_id: WORK.into(),
        page: 1,
        state: crate::store::words::PageState::Ok,
        error: None,
        orientation: 0,
        text_source: "ocr".into(),
        width_px: 1240,
        height_px: 1754,
        role: PageRole::Work,
        role_reason: "ink was added".into(),
        code_json: None,
        labels_json: r#"[{"label": "1"}]"#.into(),
        words_json: r#"[{"text": "x", "bbox": {"x": 0.1, "y": 0.1, "width": 0.05, "height": 0.02}, "confidence": 90}]"#.into(),
        compare_json: Some(
            r#"{"available": true, "aligned": true, "addedRegions": [{"x": 0.1, "y": 0.1, "width": 0.2, "height": 0.05}]}"#
                .into(),
        ),
        indexed_at: 0,
    }
}

/// What the stored comparison of `page` says of its ink, and why it was not lined up.
#[allow(clippy::type_complexity)]
fn ink_and_reason(
    page: &crate::store::automated::PageRecord,
) -> Result<(Option<Vec<Rect>>, Option<String>), JobFailure> {
    comparison_of(page).map(|c| (c.ink, c.unaligned))
}

#[test]
fn a_stored_index_that_cannot_be_read_fails_the_question_instead_of_reading_as_empty() {
    let page = stored_page();
    assert_eq!(labels_of(&page).expect("labels"), ["1"]);
    assert_eq!(words_of(&page).expect("words").len(), 1);
    let (ink, unaligned) = ink_and_reason(&page).expect("ink");
    assert_eq!((ink.map(|r| r.len()), unaligned), (Some(1), None));
    let no_comparison = crate::store::automated::PageRecord {
        compare_json: None,
        ..stored_page()
    };
    assert_eq!(ink_and_reason(&no_comparison).expect("ink"), (None, None));

    let broken = crate::store::automated::PageRecord {
        labels_json: "[{".into(),
        words_json: "not json".into(),
        compare_json: Some("{".into()),
        ..stored_page()
    };
    for failure in [
        labels_of(&broken).expect_err("labels"),
        words_of(&broken).expect_err("words"),
        ink_and_reason(&broken).expect_err("comparison"),
    ] {
        assert_eq!(failure.code, FailureCode::PageNotIndexed);
        assert!(failure.permanent);
        assert!(
            failure
                .message
                .contains(&format!("page 1 of asset {WORK} cannot be read")),
            "{}",
            failure.message
        );
    }
}

/// A page with a comparison stored as `compare`.
fn compared(compare: Value) -> crate::store::automated::PageRecord {
    crate::store::automated::PageRecord {
        compare_json: Some(compare.to_string()),
        ..stored_page()
    }
}

#[test]
fn a_page_that_could_not_be_lined_up_has_no_ink_and_says_why() {
    let failed = compared(json!({
        "available": true, "aligned": false, "addedFraction": 0.0, "addedRegions": [],
        "note": "alignment failed: only 22 % of the reference's ink matches the work page",
    }));
    let (ink, unaligned) = ink_and_reason(&failed).expect("read");
    assert_eq!(ink, None);
    assert!(
        unaligned
            .as_deref()
            .is_some_and(|u| u.contains("only 22 %")),
        "{unaligned:?}"
    );
    // Without a note, it still says it was not lined up.
    let silent = compared(json!({ "available": true, "aligned": false }));
    assert_eq!(
        ink_and_reason(&silent).expect("read").1.as_deref(),
        Some("alignment failed")
    );
}

#[test]
fn a_fit_that_cannot_be_right_is_taken_as_not_lined_up() {
    // The phone photo: 45 % of the page "added", one region over 98 % of it.
    let photo = compared(json!({
        "available": true, "aligned": true, "addedFraction": 0.45,
        "addedRegions": [{ "x": 0.01, "y": 0.0, "width": 0.98, "height": 1.0 }],
    }));
    let (ink, unaligned) = ink_and_reason(&photo).expect("read");
    assert_eq!(ink, None);
    assert!(
        unaligned.as_deref().is_some_and(|u| u.contains("45 %")),
        "{unaligned:?}"
    );
    // Too much added ink alone.
    let dense = compared(json!({
        "available": true, "aligned": true, "addedFraction": 0.3,
        "addedRegions": [{ "x": 0.1, "y": 0.1, "width": 0.2, "height": 0.05 }],
    }));
    assert_eq!(ink_and_reason(&dense).expect("read").0, None);
    // One region over half the page alone.
    let giant = compared(json!({
        "available": true, "aligned": true, "addedFraction": 0.05,
        "addedRegions": [{ "x": 0.0, "y": 0.0, "width": 0.8, "height": 0.7 }],
    }));
    let (ink, unaligned) = ink_and_reason(&giant).expect("read");
    assert_eq!(ink, None);
    assert!(
        unaligned
            .as_deref()
            .is_some_and(|u| u.contains("one region")),
        "{unaligned:?}"
    );
    // Writing of a plausible extent is ink.
    let written = compared(json!({
        "available": true, "aligned": true, "addedFraction": 0.02,
        "addedRegions": [{ "x": 0.1, "y": 0.4, "width": 0.5, "height": 0.2 }],
    }));
    assert_eq!(
        ink_and_reason(&written).expect("read"),
        (
            Some(vec![Rect {
                x: 0.1,
                y: 0.4,
                width: 0.5,
                height: 0.2
            }]),
            None
        )
    );
}

#[test]
fn a_page_with_no_clean_page_is_foreign_not_unaligned() {
    let foreign = compared(json!({
        "available": false,
        "note": "the session was not made from a paper: there is no clean page to compare with",
    }));
    assert_eq!(ink_and_reason(&foreign).expect("read"), (None, None));
}

#[test]
fn a_stored_scheme_that_cannot_be_read_is_never_taken_for_a_scheme_of_pages() {
    let pages = [s1()];
    let stored =
        json!({ "questions": [{ "label": "1", "parts": parts(), "criteria": criteria() }] })
            .to_string();
    assert!(matches!(
        structured_scheme(Some(&stored), "1", &pages),
        Ok(Scheme::Structured { .. })
    ));
    assert!(matches!(
        structured_scheme(None, "1", &pages),
        Ok(Scheme::Pages)
    ));
    assert!(matches!(
        structured_scheme(Some(&stored), "7", &pages),
        Ok(Scheme::Pages)
    ));
    let failure =
        structured_scheme(Some("{\"questions\": ["), "1", &pages).expect_err("a corrupt scheme");
    assert_eq!(failure.code, FailureCode::SchemeUnreadable);
    assert!(failure.permanent);
}

#[test]
fn answer_spaces_are_carried_through_the_fit_that_lined_the_scan_up() {
    // A scan shrunk to 95 % and shifted: the transform from the stored comparison moves the
    // answer space with the page; without it, only the quarter turn applies.
    let stored = compared(json!({
        "available": true, "aligned": true, "addedFraction": 0.02,
        "addedRegions": [{ "x": 0.1, "y": 0.4, "width": 0.5, "height": 0.2 }],
        "transform": [[0.95, 0.0, 0.03], [0.0, 0.95, 0.02], [0.0, 0.0, 1.0]],
    }));
    let fit = comparison_of(&stored).expect("read").fit.expect("a fit");
    let layout: examkit_pdf::Layout = serde_json::from_value(json!({
        "paperId": "00000000-0000-4000-8000-000000000001", "revision": 1,
        "writingSpace": "smart",
        "pages": [{ "widthPt": 595.28, "heightPt": 841.89 }],
        "questions": [{
            "number": 1, "questionId": "00000000-0000-4000-8000-000000000002",
            "labelPage": 1, "answerSpace": [],
            "parts": [{ "partId": "a", "label": "(a)", "prompt": [],
                "answerSpace": [{ "page": 1, "x": 0.1, "y": 0.2, "width": 0.8, "height": 0.1 }] }],
        }],
    }))
    .expect("layout");
    let mapped = answer_regions(&layout, "1", 1, 0, Some(&fit));
    let r = mapped[0].rect;
    for (got, want) in [
        (r.x, 0.03 + 0.95 * 0.1),
        (r.y, 0.02 + 0.95 * 0.2),
        (r.width, 0.95 * 0.8),
        (r.height, 0.95 * 0.1),
    ] {
        assert!((got - want).abs() < 1e-9, "{r:?}");
    }
    let turned = answer_regions(&layout, "1", 1, 180, None);
    assert!((turned[0].rect.x - 0.1).abs() < 1e-9 && (turned[0].rect.y - 0.7).abs() < 1e-9);
    // A transform that is not a 3 x 3 matrix is a corrupt index, never "no transform".
    let broken = compared(json!({
        "available": true, "aligned": true, "addedFraction": 0.02, "addedRegions": [],
        "transform": [[1.0, 0.0], [0.0, 1.0]],
    }));
    assert_eq!(
        comparison_of(&broken).expect_err("corrupt").code,
        FailureCode::PageNotIndexed
    );
}
