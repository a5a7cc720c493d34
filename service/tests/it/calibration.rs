//! `examkit marker calibrate` on the shipped reference set (examples/calibration: three papers,
//! handwritten scans with turned, skewed and noisy pages, right, wrong and blank answers), with
//! the vision-model marker against the test provider.
//!
//! The provider answers each question from the trusted decisions, citing the page the prompt
//! gives each part's answer space on, with a box hint in the wrong corner, and departs from them
//! on purpose, in every script of the paper (it tells scripts apart by their questions only):
//! - pure question 1 c3 (the student's wrong final answer `x = -1`): awarded, a false award that
//!   stands, since the student wrote there;
//! - statistics question 2 c1 (left blank): awarded, which the guards turn `uncertain`;
//! - international question 3 b2 (a wrong statement): `uncertain`;
//! - pure question 3 b4 (right): withheld, a missed award.
//!
//! The set has five scripts: the first of each paper, and the same answers again on the pure
//! paper as a document feeder scans them (skewed, shrunk on a grey bed, blurred, noisy) and on the
//! statistics paper as a phone photographs them. So the report's figures are known exactly: 91
//! criteria, agreement 87/91, two false awards, two missed awards, three left uncertain, every
//! award's box on the trusted answer space, no award on a clean, blank or scheme page, and the
//! feeder's and the phone's scripts faring exactly as the flatbed scans of the same answers. This
//! proves calibration's plumbing and arithmetic on realistic scans, not any model's quality.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::provider::{self, Reply, Seen, decision};
use serde_json::{Value, json};

const MODEL: &str = "test-vision-model";
const TOKEN: &str = "sk-calibration-0123456789";

pub(crate) fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/calibration")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("readable")).expect("JSON")
}

/// One trusted question: its script, label, requirements, and decisions by scheme criterion id.
pub(crate) struct TrustedQuestion {
    script: String,
    label: String,
    requirements: Vec<String>,
    decisions: HashMap<String, (String, String)>,
}

pub(crate) fn trusted_questions() -> Vec<TrustedQuestion> {
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
    answer_with(seen, trusted, departure)
}

/// The trusted decisions of the question the prompt shows (found by its label and its criteria's
/// requirements), each outcome changed where `depart` (script, label, criterion) says.
pub(crate) fn answer_with(
    seen: &Seen,
    trusted: &[TrustedQuestion],
    depart: impl Fn(&str, &str, &str) -> Option<&'static str>,
) -> Reply {
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
                depart(&question.script, &question.label, id).map_or(outcome, str::to_owned);
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
    Reply::Answer(provider::answer_of(decisions))
}

/// The reference set's README shows each script's figures as this run found them, between its
/// `<!-- figures -->` markers; `EXAMKIT_UPDATE_README=1` writes them there instead of checking (and
/// the guide's table: [`table_in_the_guide`]).
fn figures_in_the_sets_readme(report: &Value) {
    let share = |v: &Value| {
        v.as_f64()
            .map_or_else(|| "–".to_owned(), |f| format!("{:.1} %", f * 100.0))
    };
    let mut table = String::from(
        "| script | criteria | agreement | false awards | missed | uncertain | box misses |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for (script, f) in report["byScript"].as_object().expect("byScript") {
        table.push_str(&format!(
            "| `{script}` | {} | {:.3} | {} | {} | {} | {} |\n",
            f["criteria"],
            f["agreement"].as_f64().expect("agreement"),
            f["falseAwards"],
            f["missedAwards"],
            share(&f["uncertain"]),
            share(&f["boxMisses"]),
        ));
    }
    let path = reference_dir().join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README");
    let (open, close) = ("<!-- figures -->\n", "<!-- /figures -->");
    let start = readme.find(open).expect("the README has figures markers") + open.len();
    let end = readme[start..].find(close).expect("closing marker") + start;
    if std::env::var("EXAMKIT_UPDATE_README").as_deref() == Ok("1") {
        let updated = format!("{}{table}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).expect("README written");
    } else {
        assert_eq!(
            &readme[start..end],
            table,
            "examples/calibration/README.md shows these figures (EXAMKIT_UPDATE_README=1 writes them)"
        );
    }
}

/// A reference set of the shipped set's script `name` alone, in a folder of its own.
pub(crate) fn one_script_set(name: &str) -> tempfile::TempDir {
    let copy = tempfile::tempdir().expect("dir");
    let source = reference_dir();
    let mut manifest = read_json(&source.join("reference.json"));
    let script = manifest["scripts"]
        .as_array()
        .expect("scripts")
        .iter()
        .find(|s| s["name"] == name)
        .cloned()
        .expect("the script is in the set");
    manifest["scripts"] = json!([script]);
    let trusted = script["trusted"].as_str().expect("trusted").to_owned();
    let files = script["files"].as_array().expect("files");
    let paths = files
        .iter()
        .map(|f| f["path"].as_str().expect("path").to_owned())
        .chain([trusted]);
    for path in paths {
        std::fs::create_dir_all(copy.path().join(&path).parent().expect("parent")).expect("mkdir");
        std::fs::copy(source.join(&path), copy.path().join(&path)).expect("copy");
    }
    std::fs::write(copy.path().join("reference.json"), manifest.to_string()).expect("write");
    copy
}

fn calibrate(provider: &provider::Provider, extra: &[&str]) -> (i32, String, String) {
    calibrate_set(provider, &reference_dir(), extra)
}

fn calibrate_set(
    provider: &provider::Provider,
    set: &Path,
    extra: &[&str],
) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args(["marker", "calibrate", "--reference"])
        .arg(set)
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
    assert_eq!(trusted.len(), 15, "five scripts of three questions");
    let script = trusted.clone();
    let provider =
        provider::start(MODEL, Some(TOKEN), true, move |seen| answer(seen, &script)).await;

    let (code, stdout, stderr) = calibrate(&provider, &["--json", "--min-agreement", "0.95"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    provider.assert_clean();
    assert_eq!(provider.log().len(), 15, "one call per question: {stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("JSON report");
    assert_eq!(report["marker"], "openai");
    assert_eq!(report["model"], MODEL);
    assert_eq!(report["scripts"], 5);
    assert_eq!(report["passed"], true);
    assert_eq!(report["questions"], 15);
    assert_eq!(report["failedQuestions"], 0);
    let overall = &report["overall"];
    assert_eq!(overall["criteria"], 91, "{overall}");
    let close = |v: &Value, expected: f64| (v.as_f64().expect("number") - expected).abs() < 1e-9;
    assert!(close(&overall["agreement"], 87.0 / 91.0), "{overall}");
    assert_eq!(overall["falseAwards"], 2, "{overall}");
    assert_eq!(overall["missedAwards"], 2, "{overall}");
    assert!(close(&overall["uncertain"], 3.0 / 91.0), "{overall}");
    assert!(
        close(&overall["boxMisses"], 0.0),
        "every award is on its answer space: {report}"
    );
    assert_eq!(
        report["falseAwards"],
        json!([
            { "script": "pure-1", "question": "1", "criterion": "c3", "code": "A1" },
            { "script": "pure-2", "question": "1", "criterion": "c3", "code": "A1" },
        ])
    );
    assert_eq!(report["nonWorkPageAwards"], json!([]));
    // The false award moves question 1 of each pure script by one mark and the missed one
    // question 3: 4 of 15 questions differ by 1.
    assert!(
        close(&report["meanAbsoluteMarkDifference"], 4.0 / 15.0),
        "{report}"
    );
    // The same answers and the same model's decisions: the feeder's skewed scan and the phone's
    // photos fare exactly as the flatbed scans of the same scripts, every award on its answer
    // space.
    for (scan, like) in [("pure-2", "pure-1"), ("statistics-2", "statistics-1")] {
        assert_eq!(
            report["byScript"][scan], report["byScript"][like],
            "{report}"
        );
    }
    for (script, figures) in report["byScript"].as_object().expect("byScript") {
        assert!(close(&figures["boxMisses"], 0.0), "{script}: {figures}");
    }
    figures_in_the_sets_readme(&report);
    for family in ["M", "A", "B"] {
        assert!(
            report["families"][family]["criteria"].as_u64() > Some(5),
            "{report}"
        );
    }
    assert_eq!(report["families"]["A"]["falseAwards"], 2);
    assert_eq!(report["criteria"].as_object().map(|c| c.len()), Some(53));

    // Below the bar: a table for people, exit status 1.
    let (code, table, stderr) = calibrate(&provider, &["--min-agreement", "0.99"]);
    assert_eq!(code, 1, "{table}\n{stderr}");
    assert!(
        table.contains("Failed: agreement 0.956 is below the required 0.990."),
        "{table}"
    );
    assert!(
        table.contains("False awards: pure-1 question 1 c3 (A1); pure-2 question 1 c3 (A1)"),
        "{table}"
    );
    let summary: String = table
        .lines()
        .take_while(|l| !l.starts_with("by criterion"))
        .collect::<Vec<_>>()
        .join("\n");
    table_in_the_guide(summary.trim_end());
}

/// The vision-model guide shows calibration's table as it is printed (down to the per-criterion
/// rows), between its `<!-- calibration -->` markers; `EXAMKIT_UPDATE_README=1`, which rewrites the
/// reference set's README, writes it there too instead of checking.
fn table_in_the_guide(summary: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/vision-model.md");
    let guide = std::fs::read_to_string(&path).expect("the vision-model guide");
    let (open, close) = ("<!-- calibration -->\n", "<!-- /calibration -->");
    let start = guide.find(open).expect("the guide has calibration markers") + open.len();
    let end = guide[start..].find(close).expect("closing marker") + start;
    let shown = format!("```text\n{summary}\n```\n");
    if std::env::var("EXAMKIT_UPDATE_README").as_deref() == Ok("1") {
        let updated = format!("{}{shown}{}", &guide[..start], &guide[end..]);
        std::fs::write(&path, updated).expect("guide written");
    } else {
        assert_eq!(
            &guide[start..end],
            shown,
            "docs/vision-model.md shows calibration's table as it is printed (EXAMKIT_UPDATE_README=1 writes it)"
        );
    }
}

/// With a second opinion configured, calibration measures each model alone, then the pair (the
/// report's top level, which the exit status is about). The second model withholds every mark of
/// question 1 (pure): the pair awards none of it, so its two false awards there (c3 of each pure
/// script) are gone, and what the first alone awarded there is left uncertain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_opinion_is_calibrated_alone_and_as_a_pair() {
    const SECOND: &str = "second-model";
    let trusted = std::sync::Arc::new(trusted_questions());
    let script = trusted.clone();
    let first = provider::start(MODEL, Some(TOKEN), true, move |seen| answer(seen, &script)).await;
    let script = trusted.clone();
    let second = provider::start(SECOND, Some("sk-second"), true, move |seen| {
        let mut reply = answer(seen, &script);
        if let Reply::Answer(value) = &mut reply
            && seen.label == "1"
        {
            for d in value["decisions"].as_array_mut().into_iter().flatten() {
                d["outcome"] = json!("withheld");
            }
        }
        reply
    })
    .await;
    let (code, stdout, stderr) = calibrate(
        &first,
        &[
            "--json",
            "--marker-second-model",
            SECOND,
            "--marker-second-url",
            &second.base_url,
            "--marker-second-token",
            "sk-second",
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    first.assert_clean();
    second.assert_clean();
    assert_eq!(first.log().len(), 30, "alone, then in the pair: {stderr}");
    assert_eq!(second.log().len(), 30, "alone, then in the pair: {stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("JSON report");
    assert_eq!(report["model"], format!("{MODEL} + {SECOND}"));
    let alone = report["alone"].as_array().expect("each model alone");
    assert_eq!(alone.len(), 2);
    assert_eq!(
        (alone[0]["model"].as_str(), alone[1]["model"].as_str()),
        (Some(MODEL), Some(SECOND))
    );
    assert_eq!(alone[0]["overall"]["falseAwards"], 2, "{}", alone[0]);
    assert_eq!(report["overall"]["falseAwards"], 0, "{report}");
    let uncertain = |r: &Value| r["overall"]["uncertain"].as_f64().expect("share");
    assert!(uncertain(&report) > uncertain(&alone[0]), "{report}");
    assert_eq!(
        report["overall"]["criteria"],
        alone[0]["overall"]["criteria"]
    );
}

on_both!(a_saved_calibration_is_recorded_in_the_deployments_database);

/// `--save` records the run's figures, the set's digest and the bar in the database `serve` would
/// use (given as `--database`), for the marker and model; saves are kept, the latest first.
async fn a_saved_calibration_is_recorded_in_the_deployments_database(db: common::Db) {
    let trusted = std::sync::Arc::new(trusted_questions());
    let script = trusted.clone();
    let provider =
        provider::start(MODEL, Some(TOKEN), true, move |seen| answer(seen, &script)).await;
    let set = one_script_set("pure-1");
    let dir = tempfile::tempdir().expect("dir");
    let url = common::fresh_database(db, dir.path()).await;
    let (code, stdout, stderr) = calibrate_set(
        &provider,
        set.path(),
        &[
            "--json",
            "--min-agreement",
            "0.5",
            "--save",
            "--database",
            &url,
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("saved as calibration"), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("JSON report");
    let store = examkit::store::Store::open(&url)
        .await
        .expect("the database");
    let saved = store
        .qualifications("openai", Some(MODEL))
        .await
        .expect("readable");
    assert_eq!(saved.len(), 1, "{saved:?}");
    let row = &saved[0];
    let overall = &report["overall"];
    assert_eq!(row.saved.marker, "openai");
    assert_eq!(row.saved.model.as_deref(), Some(MODEL));
    assert_eq!(json!(row.saved.criteria), overall["criteria"]);
    assert!(row.saved.criteria > 0);
    assert_eq!(json!(row.saved.false_awards), overall["falseAwards"]);
    let agreement = overall["agreement"].as_f64().expect("agreement");
    assert!((row.agreement - agreement).abs() < 1e-9, "{row:?}");
    assert_eq!(row.saved.kappa, overall["kappa"].as_f64());
    assert_eq!(row.saved.min_agreement, 0.5);
    assert_eq!(json!(row.saved.passed), report["passed"]);
    assert_eq!(row.saved.scripts, 1);
    let digest = examkit::calibration::reference::load(set.path())
        .expect("the set")
        .digest;
    assert_eq!(row.saved.reference_digest, digest);
    assert_ne!(
        digest,
        examkit::calibration::reference::load(&reference_dir())
            .expect("the shipped set")
            .digest,
        "another set has another digest"
    );
    assert!(
        (examkit::store::now_ms() - row.created_at).abs() < 86_400_000,
        "dated now"
    );
    // Nothing is saved for another model, and a later save is the latest of its history.
    assert!(
        store
            .latest_qualification("openai", Some("another-model"))
            .await
            .expect("readable")
            .is_none()
    );
    let mut later = row.saved.clone();
    later.false_awards += 1;
    let later = store.save_qualification(&later).await.expect("saved");
    let history = store
        .qualifications("openai", Some(MODEL))
        .await
        .expect("readable");
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].id, later.id);
    assert_eq!(
        store
            .latest_qualification("openai", Some(MODEL))
            .await
            .expect("readable")
            .map(|q| q.id),
        Some(later.id)
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

    // The marking flags are checked as `serve` checks them.
    for (flags, said) in [
        (&["--marker-qualify", "1.5"][..], "between 0 and 1"),
        (&["--marker-qualify", "most"][..], "not a number"),
        (&["--marker-seed-every", "0"][..], "--marker-seed-every"),
        (
            &["--marker-seed-every", "5", "--marker-qualify", "0.9"][..],
            "--marker-seed-every needs --marker-seeds DIR",
        ),
        (
            &[
                "--marker-seed-every",
                "5",
                "--marker-seeds",
                "examples/calibration",
            ][..],
            "needs --marker-qualify",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_examkit"))
            .args(["marker", "calibrate", "--reference", "x"])
            .args(flags)
            .output()
            .expect("examkit runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(said), "{flags:?}: {stderr}");
    }
}
