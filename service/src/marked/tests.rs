//! The model against stored rows: `tests/fixtures/marked/` holds question rows as the test suites
//! that mark questions stored them (every status, imported and automated work), each beside the
//! `/v1` JSON the service sent for it before the model existed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::store::marking::QuestionRow;
use crate::store::words::AssetKind;

pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/marked")
}

/// A fixture's row and its session's asset kinds.
pub(crate) fn load(path: &Path) -> (QuestionRow, HashMap<String, AssetKind>) {
    let text = std::fs::read_to_string(path).expect("a fixture");
    let fixture: Value = serde_json::from_str(&text).expect("JSON");
    let row = &fixture["row"];
    let text_of = |key: &str| row[key].as_str().map(str::to_owned);
    let number = |key: &str| row[key].as_i64().expect("a number");
    let question = QuestionRow {
        id: text_of("id").expect("id"),
        session_id: text_of("session_id").expect("session"),
        position: number("position"),
        label: text_of("label").expect("label"),
        status: QuestionStatus::try_from(text_of("status").expect("status")).expect("a status"),
        revision: number("revision"),
        awarded: number("awarded"),
        possible: number("possible"),
        max_marks: number("max_marks"),
        question_json: text_of("question_json").expect("question"),
        result_json: text_of("result_json").expect("result"),
        created_at: number("created_at"),
        updated_at: number("updated_at"),
        error_json: text_of("error_json"),
        marker_json: text_of("marker_json"),
        marker_run_json: text_of("marker_run_json"),
    };
    let kinds = serde_json::from_value(fixture["assetKinds"].clone()).expect("asset kinds");
    (question, kinds)
}

/// Every fixture: its name, row, asset kinds and the `/v1` bytes saved with it.
fn every_fixture() -> Vec<(String, QuestionRow, HashMap<String, AssetKind>, String)> {
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(fixtures()).expect("the fixtures") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let Some(stem) = name.strip_suffix(".row.json") else {
            continue;
        };
        let (row, kinds) = load(&path);
        let v1 = std::fs::read_to_string(fixtures().join(format!("{stem}.v1.json")))
            .expect("the saved /v1 JSON");
        rows.push((stem.to_owned(), row, kinds, v1));
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

#[test]
fn every_stored_row_is_sent_byte_for_byte_as_before() {
    let rows = every_fixture();
    assert!(rows.len() >= 20, "{} fixtures", rows.len());
    for (name, row, kinds, v1) in &rows {
        let marked = MarkedQuestion::from_row(row, kinds)
            .unwrap_or_else(|e| panic!("{name}: {e} ({})", e.code()));
        let sent = serde_json::to_string(&marked.to_v1()).expect("JSON");
        assert_eq!(&sent, v1, "{name}");
    }
    // The corpus holds every status, imported and automated work, reviewed questions, and a
    // question whose page was not scanned.
    for status in QuestionStatus::ALL {
        assert!(
            rows.iter().any(|(_, r, _, _)| r.status == *status),
            "no {} fixture",
            status.as_str()
        );
    }
    let has = |test: &dyn Fn(&MarkedQuestion) -> bool| {
        rows.iter()
            .any(|(_, row, kinds, _)| MarkedQuestion::from_row(row, kinds).is_ok_and(|m| test(&m)))
    };
    assert!(has(&|m| m.marked_by.is_none() && !m.criteria.is_empty()));
    assert!(has(&|m| m.marked_by.is_some() && !m.criteria.is_empty()));
    assert!(has(&|m| m.revision > 1 && m.marked_by.is_none()));
    assert!(has(&|m| m.revision > 1 && m.marked_by.is_some()));
    assert!(has(&|m| {
        m.criteria.is_empty()
            && m.review_flags
                .iter()
                .flatten()
                .any(|f| f.code == "page_not_scanned")
    }));
    assert!(has(&|m| m.criteria.iter().any(|c| {
        c.decision
            .condition_checks
            .iter()
            .any(|k| k.evidence.is_some())
    })));
    assert!(has(&|m| m.criteria.iter().any(|c| {
        c.decision.condition_checks.iter().any(|k| k.note.is_some())
    })));
    assert!(has(&|m| m.criteria.iter().any(|c| {
        c.decision.evidence.iter().any(|e| e.placement.is_some())
    })));
    assert!(has(&|m| m.criteria.iter().any(|c| !c.flags.is_empty())));
    assert!(has(&|m| m
        .error
        .as_ref()
        .is_some_and(|e| e.details.is_some())));
}

#[test]
fn a_marked_question_writes_back_as_it_was_stored() {
    for (name, row, kinds, _) in every_fixture() {
        let marked = MarkedQuestion::from_row(&row, &kinds).expect("readable");
        let stored: Value = serde_json::from_str(&row.question_json).expect("JSON");
        match marked.contract_question() {
            Some(question) => {
                assert_eq!(question, stored, "{name}");
                assert_eq!(question.to_string(), stored.to_string(), "{name}");
            }
            None => assert_eq!(stored, json!({}), "{name}"),
        }
    }
}

#[test]
fn evidence_carries_how_its_box_was_placed_where_the_run_recorded_it() {
    let (row, kinds) = load(&fixtures().join("completed-automated-openai-words.row.json"));
    let marked = MarkedQuestion::from_row(&row, &kinds).expect("readable");
    let evidence = &marked.criteria[0].decision.evidence[0];
    let placement = evidence.placement.as_ref().expect("a placement");
    assert_eq!(placement.rule, PlacementRule::Words);
    assert!(placement.located);
    assert_eq!(
        marked.sources.work_pages(),
        marked
            .sources
            .work_asset_ids
            .iter()
            .flat_map(|a| {
                marked.sources.page_selections.as_ref().expect("pages")[a]
                    .iter()
                    .map(|n| (a.clone(), n.value()))
            })
            .collect::<Vec<_>>()
    );
    // An import records no run: nothing says how its boxes were placed.
    let (row, kinds) = load(&fixtures().join("completed-imported-rev3.row.json"));
    let marked = MarkedQuestion::from_row(&row, &kinds).expect("readable");
    assert!(
        marked
            .criteria
            .iter()
            .all(|c| { c.decision.evidence.iter().all(|e| e.placement.is_none()) })
    );
}

/// A marked fixture with `edit` applied to its stored question.
fn with_question(edit: impl FnOnce(&mut Value)) -> Result<MarkedQuestion, MarkedError> {
    let (mut row, kinds) = load(&fixtures().join("needs-review-imported.row.json"));
    let mut question: Value = serde_json::from_str(&row.question_json).expect("JSON");
    edit(&mut question);
    row.question_json = question.to_string();
    MarkedQuestion::from_row(&row, &kinds)
}

fn with_row(edit: impl FnOnce(&mut QuestionRow)) -> Result<MarkedQuestion, MarkedError> {
    let (mut row, kinds) = load(&fixtures().join("completed-automated-openai-words.row.json"));
    edit(&mut row);
    MarkedQuestion::from_row(&row, &kinds)
}

#[test]
fn a_row_that_cannot_be_read_is_an_error_not_a_default() {
    assert!(with_question(|_| {}).is_ok());
    let unreadable = |e: Result<MarkedQuestion, MarkedError>, what: &str| match e {
        Err(MarkedError::Unreadable { what: w, .. }) => assert_eq!(w, what),
        other => panic!("expected an unreadable {what}, got {other:?}"),
    };
    unreadable(
        with_row(|r| r.question_json = "{\"label\":".into()),
        "question",
    );
    unreadable(
        with_question(|q| {
            if let Some(c) = q["rubric"]["criteria"][0].as_object_mut() {
                c.remove("id");
            }
        }),
        "question",
    );
    unreadable(
        with_question(|q| q["rubric"]["criteria"][0]["conditionMode"] = Value::Null),
        "question",
    );
    unreadable(
        with_question(|q| q["decisions"][0]["evidence"][0]["box"]["x"] = json!("0.1")),
        "question",
    );
    unreadable(
        with_question(|q| q["decisions"][0]["outcome"] = json!("maybe")),
        "question",
    );
    unreadable(with_question(|q| q["surprise"] = json!(true)), "question");
    unreadable(
        with_question(|q| {
            if let Some(pages) = q["pageSelections"].as_object_mut() {
                for numbers in pages.values_mut() {
                    *numbers = json!([1.5]);
                }
            }
        }),
        "question",
    );
    unreadable(with_row(|r| r.result_json = "[]".into()), "result");
    unreadable(with_row(|r| r.error_json = Some("oops".into())), "failure");
    unreadable(with_row(|r| r.marker_json = Some("{}".into())), "source");
    unreadable(
        with_row(|r| r.marker_run_json = Some("[1]".into())),
        "marker run record",
    );
    unreadable(
        with_row(|r| r.marker_run_json = Some(r#"{"placements":[{"pageId":"x"}]}"#.into())),
        "marker run record's placements",
    );

    let missing = with_question(|q| {
        if let Some(decisions) = q["decisions"].as_array_mut() {
            decisions.remove(0);
        }
    });
    assert!(
        matches!(missing, Err(MarkedError::MissingDecision(_))),
        "{missing:?}"
    );
    let repeated = with_question(|q| {
        let first = q["decisions"][0].clone();
        if let Some(decisions) = q["decisions"].as_array_mut() {
            decisions.push(first);
        }
    });
    assert!(
        matches!(repeated, Err(MarkedError::UnknownCriterion(_))),
        "{repeated:?}"
    );
    let label = with_row(|r| r.label = "9".into());
    assert!(
        matches!(label, Err(MarkedError::LabelMismatch { .. })),
        "{label:?}"
    );
    let unmatched = with_row(|r| {
        let mut result: Value = serde_json::from_str(&r.result_json).expect("JSON");
        if let Some(criteria) = result["criteria"].as_array_mut() {
            criteria.pop();
        }
        r.result_json = result.to_string();
    });
    assert!(
        matches!(unmatched, Err(MarkedError::UnmatchedResult(_))),
        "{unmatched:?}"
    );
    // A question with no result, or a result with no question, is not half a question.
    let half = with_row(|r| r.result_json = "{}".into());
    assert!(
        matches!(half, Err(MarkedError::UnmatchedResult(_))),
        "{half:?}"
    );
    let stray = with_row(|r| r.question_json = "{}".into());
    assert!(
        matches!(stray, Err(MarkedError::UnmatchedResult(_))),
        "{stray:?}"
    );
}

#[test]
fn a_question_not_marked_yet_has_no_result_and_no_criteria() {
    let (row, kinds) = load(&fixtures().join("queued-automated.row.json"));
    let marked = MarkedQuestion::from_row(&row, &kinds).expect("readable");
    assert_eq!(marked.status, QuestionStatus::Queued);
    assert!(marked.criteria.is_empty());
    assert!(marked.parts.is_none() && marked.review_flags.is_none());
    assert!(marked.sources.page_selections.is_none());
    assert!(marked.contract_question().is_none());
    let (row, kinds) = load(&fixtures().join("failed-automated-marker-answer-invalid.row.json"));
    let marked = MarkedQuestion::from_row(&row, &kinds).expect("readable");
    let error = marked.error.expect("a failure");
    assert_eq!(error.code, "marker_answer_invalid");
}

#[test]
fn a_question_a_held_back_marker_did_not_mark_is_unmarked_but_not_unscanned() {
    let path = fixtures().join("needs-review-automated-page-not-scanned.row.json");
    let (row, kinds) = load(&path);
    let mut question = MarkedQuestion::from_row(&row, &kinds).expect("a marked question");
    assert!(question.not_scanned() && question.unmarked() && !question.held_back());
    for code in ["marker_unqualified", "marker_drifted"] {
        if let Some(flags) = question.review_flags.as_mut() {
            for flag in flags.iter_mut() {
                flag.code = code.into();
            }
        }
        assert!(question.held_back(), "{code}");
        assert!(question.unmarked() && !question.not_scanned(), "{code}");
    }
    question.status = QuestionStatus::Completed;
    assert!(!question.held_back() && !question.unmarked());
}
