//! `examkit marker calibrate` on the shipped reference set (examples/calibration: three papers,
//! handwritten scans with turned, skewed and noisy pages, right, wrong and blank answers), with
//! the vision-model marker against the test provider.
//!
//! The provider answers each question from the trusted decisions, citing the page the prompt
//! gives each part's answer space on, with a box hint in the wrong corner, and departs from them
//! four times on purpose:
//! - pure-1 question 1 c3 (the student's wrong final answer `x = -1`): awarded, a false award that
//!   stands, since the student wrote there;
//! - statistics-1 question 2 c1 (left blank): awarded, which the guards turn `uncertain`;
//! - international-1 question 3 b2 (a wrong statement): `uncertain`;
//! - pure-1 question 3 b4 (right): withheld, a missed award.
//!
//! So the report's figures are known exactly: 53 criteria, agreement 51/53, one false award,
//! one missed award, two left uncertain, every award's box on the trusted answer space, and no
//! award on a clean, blank or scheme page. This proves calibration's plumbing and arithmetic on
//! realistic scans, not any model's quality.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::provider::{self, Reply, Seen, decision};
use serde_json::{Value, json};

const MODEL: &str = "test-vision-model";
const TOKEN: &str = "sk-calibration-0123456789";

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/calibration")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("readable")).expect("JSON")
}

/// One trusted question: its script, label, requirements, and decisions by scheme criterion id.
struct TrustedQuestion {
    script: String,
    label: String,
    requirements: Vec<String>,
    decisions: HashMap<String, (String, String)>,
}

fn trusted_questions() -> Vec<TrustedQuestion> {
    let dir = reference_dir();
    let manifest = read_json(&dir.join("reference.json"));
    let mut out = Vec::new();
    for script in manifest["scripts"].as_array().expect("scripts") {
        let name = script["name"].as_str().expect("name");
        let trusted = read_json(&dir.join(script["trusted"].as_str().expect("trusted")));
        for q in trusted["questions"].as_array().expect("questions") {
            let label = q["label"].as_str().expect("label").to_owned();
            let prefix = format!("{label}.");
            let requirements = q["rubric"]["criteria"]
                .as_array()
                .expect("criteria")
                .iter()
                .map(|c| c["requirement"].as_str().expect("requirement").to_owned())
                .collect();
            let decisions = q["decisions"]
                .as_array()
                .expect("decisions")
                .iter()
                .map(|d| {
                    let id = d["criterionId"].as_str().expect("id");
                    let quote = d["evidence"][0]["quote"].as_str().expect("quote");
                    let quote = if quote.starts_with("blank:") {
                        ""
                    } else {
                        quote
                    };
                    (
                        id.strip_prefix(&prefix).unwrap_or(id).to_owned(),
                        (
                            d["outcome"].as_str().expect("outcome").to_owned(),
                            quote.to_owned(),
                        ),
                    )
                })
                .collect();
            out.push(TrustedQuestion {
                script: name.to_owned(),
                label,
                requirements,
                decisions,
            });
        }
    }
    out
}

fn prompt_text(seen: &Seen) -> String {
    seen.body["messages"][1]["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The page the prompt gives part `part`'s answer space on: `part <id> on <page id>: [...]`.
fn page_of_part(text: &str, part: &str) -> Option<String> {
    let needle = format!("part {part} on ");
    let at = text.find(&needle)? + needle.len();
    let rest = &text[at..];
    Some(rest[..rest.find(": [")?].to_owned())
}

/// The provider's departures from the trusted decisions: (script, label, criterion) → outcome.
fn departure(script: &str, label: &str, criterion: &str) -> Option<&'static str> {
    match (script, label, criterion) {
        ("pure-1", "1", "c3") => Some("awarded"),
        ("statistics-1", "2", "c1") => Some("awarded"),
        ("international-1", "3", "b2") => Some("uncertain"),
        ("pure-1", "3", "b4") => Some("withheld"),
        _ => None,
    }
}

fn answer(seen: &Seen, trusted: &[TrustedQuestion]) -> Reply {
    let text = prompt_text(seen);
    let Some(question) = trusted.iter().find(|q| {
        q.label == seen.label && q.requirements.iter().all(|r| text.contains(r.as_str()))
    }) else {
        return Reply::Status(400, None, format!("no trusted question for {}", seen.label));
    };
    let fallback = seen.work_pages.first().cloned().unwrap_or_default();
    let decisions: Vec<Value> = seen
        .criteria
        .iter()
        .map(|(id, part, _code)| {
            let (outcome, quote) = question
                .decisions
                .get(id)
                .cloned()
                .unwrap_or_else(|| ("uncertain".into(), String::new()));
            let outcome =
                departure(&question.script, &question.label, id).map_or(outcome, str::to_owned);
            let page = page_of_part(&text, part).unwrap_or_else(|| fallback.clone());
            let mut d = decision(id, &outcome, &quote, &page, [0, 0, 40, 40]);
            let mut checks = provider::checks_for(seen, id);
            if outcome != "awarded" {
                for c in &mut checks {
                    c["result"] = json!("not_met");
                }
            }
            d["conditionChecks"] = json!(checks);
            d
        })
        .collect();
    Reply::Answer(json!({ "transcription": "", "rubric": null, "decisions": decisions }))
}

fn calibrate(provider: &provider::Provider, extra: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args(["marker", "calibrate", "--reference"])
        .arg(reference_dir())
        .args([
            "--marker",
            "openai",
            "--marker-url",
            &provider.base_url,
            "--marker-model",
            MODEL,
            "--workers",
            "2",
            "--job-backoff-ms",
            "200",
        ])
        .args(extra)
        .env("EXAMKIT_MARKER_TOKEN", TOKEN)
        .env("OMP_THREAD_LIMIT", "1")
        .env_remove("DATABASE_URL")
        .output()
        .expect("examkit runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_reference_set_is_calibrated_against_the_test_provider() {
    let trusted = std::sync::Arc::new(trusted_questions());
    assert_eq!(trusted.len(), 9, "three papers of three questions");
    let script = trusted.clone();
    let provider =
        provider::start(MODEL, Some(TOKEN), true, move |seen| answer(seen, &script)).await;

    let (code, stdout, stderr) = calibrate(&provider, &["--json", "--min-agreement", "0.95"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    provider.assert_clean();
    assert_eq!(provider.log().len(), 9, "one call per question: {stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("JSON report");
    assert_eq!(report["marker"], "openai");
    assert_eq!(report["model"], MODEL);
    assert_eq!(report["scripts"], 3);
    assert_eq!(report["passed"], true);
    assert_eq!(report["questions"], 9);
    assert_eq!(report["failedQuestions"], 0);
    let overall = &report["overall"];
    assert_eq!(overall["criteria"], 53, "{overall}");
    let close = |v: &Value, expected: f64| (v.as_f64().expect("number") - expected).abs() < 1e-9;
    assert!(close(&overall["agreement"], 51.0 / 53.0), "{overall}");
    assert_eq!(overall["falseAwards"], 1, "{overall}");
    assert_eq!(overall["missedAwards"], 1, "{overall}");
    assert!(close(&overall["uncertain"], 2.0 / 53.0), "{overall}");
    assert!(
        close(&overall["boxMisses"], 0.0),
        "every award is on its answer space: {report}"
    );
    assert_eq!(
        report["falseAwards"],
        json!([{ "script": "pure-1", "question": "1", "criterion": "c3", "code": "A1" }])
    );
    assert_eq!(report["nonWorkPageAwards"], json!([]));
    // The false award moves question 1 of pure-1 by one mark and the missed one question 3:
    // 2 of 9 questions differ by 1.
    assert!(
        close(&report["meanAbsoluteMarkDifference"], 2.0 / 9.0),
        "{report}"
    );
    for family in ["M", "A", "B"] {
        assert!(
            report["families"][family]["criteria"].as_u64() > Some(5),
            "{report}"
        );
    }
    assert_eq!(report["families"]["A"]["falseAwards"], 1);
    assert_eq!(report["criteria"].as_object().map(|c| c.len()), Some(53));

    // Below the bar: a table for people, exit status 1.
    let (code, table, stderr) = calibrate(&provider, &["--min-agreement", "0.99"]);
    assert_eq!(code, 1, "{table}\n{stderr}");
    assert!(
        table.contains("Failed: agreement 0.962 is below the required 0.990."),
        "{table}"
    );
    assert!(
        table.contains("False awards: pure-1 question 1 c3 (A1)"),
        "{table}"
    );
    let summary: String = table
        .lines()
        .take_while(|l| !l.starts_with("by criterion"))
        .collect::<Vec<_>>()
        .join("\n");
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("README");
    assert!(
        readme.contains(summary.trim_end()),
        "the README shows calibration's table as it is printed:\n{summary}"
    );
}

#[test]
fn a_reference_set_that_is_not_one_is_refused_with_status_2() {
    let dir = tempfile::tempdir().expect("dir");
    let run = |dir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_examkit"))
            .args(["marker", "calibrate", "--reference"])
            .arg(dir)
            .output()
            .expect("examkit runs")
    };
    let output = run(dir.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("reference.json: cannot read"), "{stderr}");

    // A trusted document that does not fit the scan: the engine's codes name the problem.
    let copy = tempfile::tempdir().expect("dir");
    let source = reference_dir();
    let mut manifest = read_json(&source.join("reference.json"));
    let first = manifest["scripts"][0].clone();
    manifest["scripts"] = json!([first]);
    for file in first["files"].as_array().expect("files") {
        let path = file["path"].as_str().expect("path");
        std::fs::create_dir_all(copy.path().join(path).parent().expect("parent")).expect("mkdir");
        std::fs::copy(source.join(path), copy.path().join(path)).expect("copy");
    }
    let trusted_path = first["trusted"].as_str().expect("trusted");
    let mut trusted = read_json(&source.join(trusted_path));
    trusted["questions"][0]["decisions"][0]["evidence"][0]["pageId"] = json!(format!(
        "{}:p99",
        first["files"][0]["assetId"].as_str().expect("id")
    ));
    std::fs::write(copy.path().join(trusted_path), trusted.to_string()).expect("write");
    std::fs::write(copy.path().join("reference.json"), manifest.to_string()).expect("write");
    let output = run(copy.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("not a valid service-marking-import-v1 document"),
        "{stderr}"
    );

    let output = Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args([
            "marker",
            "calibrate",
            "--reference",
            "x",
            "--min-agreement",
            "1.5",
        ])
        .output()
        .expect("examkit runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("between 0 and 1"));
}
