//! Snapshots of the `--explain` report and the outcome JSON for realistic papers.

use std::path::PathBuf;

use examkit_engine::{assets_from_json, explain, validate};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Validates a paper from `examples/submissions/` with its assets file, when one is named.
fn run(submission: &str, assets: Option<&str>) -> examkit_engine::Outcome {
    let dir = repo().join("examples/submissions");
    let document = std::fs::read(dir.join(submission)).expect("example submission");
    let assets = assets.map(|name| {
        let bytes = std::fs::read(dir.join(name)).expect("example assets");
        assets_from_json(&bytes).expect("valid assets")
    });
    validate(&document, assets.as_deref())
}

#[test]
fn a_level_paper_with_assets() {
    let outcome = run(
        "a-level-pure-paper.json",
        Some("a-level-pure-paper.assets.json"),
    );
    assert!(outcome.is_valid());
    insta::assert_snapshot!(explain(&outcome));
    insta::assert_snapshot!("a_level_paper_with_assets_json", outcome.to_json_pretty());
}

#[test]
fn a_level_paper_without_assets() {
    let outcome = run("a-level-pure-paper.json", None);
    assert!(outcome.is_valid());
    insta::assert_snapshot!(explain(&outcome));
}

#[test]
fn a_level_paper_with_many_defects() {
    let outcome = run(
        "a-level-pure-paper.invalid.json",
        Some("a-level-pure-paper.assets.json"),
    );
    assert!(!outcome.is_valid());
    insta::assert_snapshot!(explain(&outcome));
    insta::assert_snapshot!(
        "a_level_paper_with_many_defects_json",
        outcome.to_json_pretty()
    );
}

#[test]
fn further_maths_paper_needing_review() {
    let outcome = run(
        "further-maths-paper.json",
        Some("further-maths-paper.assets.json"),
    );
    assert!(outcome.is_valid());
    insta::assert_snapshot!(explain(&outcome));
}
