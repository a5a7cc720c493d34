//! Snapshots of the `--explain` report and the outcome JSON for realistic papers and for shared
//! vectors whose decisions have conditions not met, uncertain checks with notes, and long or
//! multi-line texts.

use std::path::PathBuf;

use examkit_engine::{EXPLAIN_TEXT_CHARS, Outcome, assets_from_json, explain, validate};
use serde_json::Value;

mod common;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Validates a paper from `examples/submissions/` with its assets file, when one is named, and
/// returns the document with its outcome.
fn run(submission: &str, assets: Option<&str>) -> (Vec<u8>, Outcome) {
    let dir = repo().join("examples/submissions");
    let document = std::fs::read(dir.join(submission)).expect("example submission");
    let assets = assets.map(|name| {
        let bytes = std::fs::read(dir.join(name)).expect("example assets");
        assets_from_json(&bytes).expect("valid assets")
    });
    let outcome = validate(&document, assets.as_deref());
    (document, outcome)
}

/// A shared vector's document bytes, its assets and the parsed submission.
fn vector(name: &str) -> (Vec<u8>, Option<Vec<examkit_engine::Asset>>, Value) {
    let path = repo().join("tests/vectors").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).expect("vector file");
    let file: Value = serde_json::from_str(&text).expect("vector JSON");
    let bytes = common::document_bytes(&text, &file).expect("vector document");
    let assets = common::assets(&file).expect("vector assets");
    (bytes, assets, file["submission"].clone())
}

/// The report of a shared vector, which must be valid.
fn explain_vector(name: &str) -> String {
    let (bytes, assets, _) = vector(name);
    let outcome = validate(&bytes, assets.as_deref());
    assert!(outcome.is_valid(), "{name}: {}", outcome.to_json());
    explain(&bytes, &outcome)
}

#[test]
fn a_level_paper_with_assets() {
    let (document, outcome) = run(
        "a-level-pure-paper.json",
        Some("a-level-pure-paper.assets.json"),
    );
    assert!(outcome.is_valid());
    insta::assert_snapshot!(explain(&document, &outcome));
    insta::assert_snapshot!("a_level_paper_with_assets_json", outcome.to_json_pretty());
}

#[test]
fn a_level_paper_without_assets() {
    let (document, outcome) = run("a-level-pure-paper.json", None);
    assert!(outcome.is_valid());
    insta::assert_snapshot!(explain(&document, &outcome));
}

#[test]
fn a_level_paper_with_many_defects() {
    let (document, outcome) = run(
        "a-level-pure-paper.invalid.json",
        Some("a-level-pure-paper.assets.json"),
    );
    assert!(!outcome.is_valid());
    insta::assert_snapshot!(explain(&document, &outcome));
    insta::assert_snapshot!(
        "a_level_paper_with_many_defects_json",
        outcome.to_json_pretty()
    );
}

#[test]
fn further_maths_paper_needing_review() {
    let (document, outcome) = run(
        "further-maths-paper.json",
        Some("further-maths-paper.assets.json"),
    );
    assert!(outcome.is_valid());
    insta::assert_snapshot!(explain(&document, &outcome));
}

#[test]
fn vector_conditions_not_met_on_withheld_marks() {
    insta::assert_snapshot!(explain_vector("scoring-conditions-withheld"));
}

#[test]
fn vector_conditions_on_uncertain_marks() {
    insta::assert_snapshot!(explain_vector("scoring-conditions-uncertain"));
}

#[test]
fn vector_paper_needing_review_with_notes() {
    insta::assert_snapshot!(explain_vector("valid-a-level-paper-needs-review"));
}

/// Long and multi-line texts are put on one line each and cut with an ellipsis.
#[test]
fn vector_with_long_and_multi_line_texts() {
    let (_, _, mut submission) = vector("valid-base");
    let criterion = &mut submission["questions"][0]["rubric"]["criteria"][0];
    criterion["requirement"] = Value::from(format!(
        "Differentiates:\n  at least one term\r\n\tcorrect, {}",
        "and then much more ".repeat(10)
    ));
    let decision = &mut submission["questions"][0]["decisions"][0];
    decision["reason"] = Value::from("Line one.\n\nLine two,\u{1b}[31m in red?");
    decision["evidence"][0]["quote"] = Value::from("dy/dx =\n3x^2 - 12x + 9");
    let bytes = serde_json::to_vec(&submission).expect("document");
    let outcome = validate(&bytes, None);
    assert!(outcome.is_valid(), "{}", outcome.to_json());
    let report = explain(&bytes, &outcome);
    for line in report.lines() {
        assert!(
            line.chars().count() <= EXPLAIN_TEXT_CHARS + 40,
            "a line longer than its text allows: {line:?}"
        );
        assert!(!line.contains('\u{1b}'), "a control character: {line:?}");
    }
    insta::assert_snapshot!(report);
}

/// Every criterion of a valid document gets its requirement, reason and evidence, and the
/// report of an invalid one is its errors only.
#[test]
fn every_criterion_shows_what_it_requires_and_what_the_marker_saw() {
    for name in [
        "valid-base",
        "valid-two-questions",
        "valid-a-level-paper-completed",
    ] {
        let (bytes, assets, submission) = vector(name);
        let outcome = validate(&bytes, assets.as_deref());
        let report = explain(&bytes, &outcome);
        let criteria: usize = submission["questions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|q| q["rubric"]["criteria"].as_array().map_or(0, Vec::len))
            .sum();
        assert!(criteria > 0, "{name}");
        let count = |prefix: &str| {
            report
                .lines()
                .filter(|line| line.trim_start().starts_with(prefix))
                .count()
        };
        assert_eq!(count("requirement: "), criteria, "{name}:\n{report}");
        assert_eq!(count("reason: "), criteria, "{name}:\n{report}");
        assert!(count("evidence, page ") >= criteria, "{name}:\n{report}");
    }
    let (bytes, _, _) = vector("refs-missing-decision");
    let outcome = validate(&bytes, None);
    let report = explain(&bytes, &outcome);
    assert!(
        report.starts_with("Invalid submission: 1 error."),
        "{report}"
    );
    assert!(!report.contains("requirement: "), "{report}");
}

/// Bytes that are not the validated document leave the details out rather than failing.
#[test]
fn details_are_left_out_when_the_document_is_not_the_validated_one() {
    let (bytes, assets, _) = vector("valid-base");
    let outcome = validate(&bytes, assets.as_deref());
    let without = explain(b"not json", &outcome);
    let with = explain(&bytes, &outcome);
    assert!(!without.contains("requirement: "), "{without}");
    let allocation_lines = |report: &str| -> Vec<String> {
        report
            .lines()
            .filter(|line| !line.starts_with("      "))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(allocation_lines(&without), allocation_lines(&with));
}
