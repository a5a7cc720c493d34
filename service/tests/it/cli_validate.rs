//! `examkit validate` end to end: the built binary, real files, real exit codes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/submissions")
}

fn valid_example() -> PathBuf {
    examples().join("a-level-pure-paper.json")
}

fn invalid_example() -> PathBuf {
    examples().join("a-level-pure-paper.invalid.json")
}

fn assets_example() -> PathBuf {
    examples().join("a-level-pure-paper.assets.json")
}

fn examkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the examkit binary runs")
}

fn examkit_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the examkit binary starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        // The process may stop reading early; a broken pipe is not this test's concern.
        let _ = stdin.write_all(&input);
    });
    let output = child
        .wait_with_output()
        .expect("the examkit binary finishes");
    writer.join().expect("the stdin writer finishes");
    output
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

fn engine_assets() -> Vec<examkit_engine::Asset> {
    let bytes = std::fs::read(assets_example()).expect("assets example is readable");
    examkit_engine::assets_from_json(&bytes).expect("assets example is well formed")
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

fn temp_file(contents: &[u8]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    file.write_all(contents).expect("temp file written");
    file.flush().expect("temp file flushed");
    file
}

fn error_codes(outcome: &Value) -> Vec<String> {
    outcome["errors"]
        .as_array()
        .expect("an invalid outcome lists errors")
        .iter()
        .map(|e| {
            e["code"]
                .as_str()
                .expect("each error has a code")
                .to_owned()
        })
        .collect()
}

#[test]
fn valid_submission_prints_the_engines_exact_bytes_and_exits_0() {
    let output = examkit(&[
        "validate",
        path_str(&valid_example()),
        "--assets",
        path_str(&assets_example()),
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document = std::fs::read(valid_example()).expect("example is readable");
    let expected = examkit_engine::validate(&document, Some(&engine_assets())).to_json() + "\n";
    assert_eq!(String::from_utf8_lossy(&output.stdout), expected);
    assert!(output.stderr.is_empty());

    let outcome = stdout_json(&output);
    assert_eq!(outcome["valid"], Value::Bool(true));
    assert_eq!(outcome["assetsChecked"], Value::Bool(true));
    assert_eq!(outcome["schemaVersion"], "service-marking-import-v1");
}

#[test]
fn without_assets_the_outcome_says_assets_were_not_checked() {
    let output = examkit(&["validate", path_str(&valid_example())]);
    assert_eq!(output.status.code(), Some(0));
    let outcome = stdout_json(&output);
    assert_eq!(outcome["valid"], Value::Bool(true));
    assert_eq!(outcome["assetsChecked"], Value::Bool(false));
}

#[test]
fn invalid_submission_lists_every_error_and_exits_1() {
    let output = examkit(&[
        "validate",
        path_str(&invalid_example()),
        "--assets",
        path_str(&assets_example()),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let document = std::fs::read(invalid_example()).expect("example is readable");
    let expected = examkit_engine::validate(&document, Some(&engine_assets())).to_json() + "\n";
    assert_eq!(String::from_utf8_lossy(&output.stdout), expected);

    let outcome = stdout_json(&output);
    assert_eq!(outcome["valid"], Value::Bool(false));
    assert_eq!(outcome["truncated"], Value::Bool(false));
    let codes = error_codes(&outcome);
    for code in [
        "format",
        "model_required",
        "duplicate_label",
        "coverage_mismatch",
        "part_max_mismatch",
        "missing_decision",
        "dependency_cycle",
        "box_out_of_bounds",
        "asset_role_mismatch",
    ] {
        assert!(
            codes.iter().any(|c| c == code),
            "expected {code} among {codes:?}"
        );
    }
}

#[test]
fn dash_reads_the_submission_from_stdin() {
    let document = std::fs::read(valid_example()).expect("example is readable");
    let from_stdin = examkit_with_stdin(&["validate", "-"], &document);
    let from_file = examkit(&["validate", path_str(&valid_example())]);
    assert_eq!(from_stdin.status.code(), Some(0));
    assert_eq!(from_stdin.stdout, from_file.stdout);

    let invalid = examkit_with_stdin(&["validate", "-"], b"{\"schemaVersion\": 1}");
    assert_eq!(invalid.status.code(), Some(1));
    assert_eq!(stdout_json(&invalid)["valid"], Value::Bool(false));
}

#[test]
fn missing_submission_file_exits_2_with_a_message() {
    let output = examkit(&["validate", "/nonexistent/submission.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("/nonexistent/submission.json"),
        "stderr: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "one-line message: {stderr}"
    );
}

#[test]
fn a_directory_is_not_a_readable_submission() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = examkit(&["validate", path_str(dir.path())]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
}

#[test]
fn bad_assets_files_exit_2() {
    let valid = valid_example();
    let missing = examkit(&[
        "validate",
        path_str(&valid),
        "--assets",
        "/nonexistent/assets.json",
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(missing.stdout.is_empty());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/assets.json"));

    let malformed = temp_file(b"{\"id\": 1}");
    let output = examkit(&[
        "validate",
        path_str(&valid),
        "--assets",
        path_str(malformed.path()),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("assets"), "stderr: {stderr}");

    let id = "5b0f6a2e-8c1d-4e7a-9b3f-2d4c6e8f0a11";
    let duplicate = temp_file(
        format!(
            r#"[{{"id":"{id}","kind":"work","pageCount":2}},{{"id":"{id}","kind":"scheme","pageCount":1}}]"#
        )
        .as_bytes(),
    );
    let output = examkit(&[
        "validate",
        path_str(&valid),
        "--assets",
        path_str(duplicate.path()),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains(id));

    let unknown_field = temp_file(
        format!(r#"[{{"id":"{id}","kind":"work","pageCount":2,"name":"scan.pdf"}}]"#).as_bytes(),
    );
    let output = examkit(&[
        "validate",
        path_str(&valid),
        "--assets",
        path_str(unknown_field.path()),
    ]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn empty_file_is_invalid_json() {
    let empty = temp_file(b"");
    let output = examkit(&["validate", path_str(empty.path())]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(error_codes(&stdout_json(&output)), ["invalid_json"]);
}

#[test]
fn non_utf8_file_reaches_the_engine_as_invalid_json() {
    let latin1 = temp_file(b"{\"schemaVersion\": \"caf\xe9\"}");
    let output = examkit(&["validate", path_str(latin1.path())]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(error_codes(&stdout_json(&output)), ["invalid_json"]);
    let expected =
        examkit_engine::validate(b"{\"schemaVersion\": \"caf\xe9\"}", None).to_json() + "\n";
    assert_eq!(String::from_utf8_lossy(&output.stdout), expected);
}

#[test]
fn five_mib_file_is_payload_too_large_with_its_real_size() {
    let size = 5 * 1024 * 1024;
    let mut big = vec![b' '; size];
    big[0] = b'{';
    big[size - 1] = b'}';
    let file = temp_file(&big);
    let output = examkit(&["validate", path_str(file.path())]);
    assert_eq!(output.status.code(), Some(1));
    let outcome = stdout_json(&output);
    assert_eq!(error_codes(&outcome), ["payload_too_large"]);
    assert_eq!(outcome["errors"][0]["path"], "");
    let message = outcome["errors"][0]["message"].as_str().expect("message");
    assert!(
        message.contains(&size.to_string()),
        "the real size is reported: {message}"
    );

    let from_stdin = examkit_with_stdin(&["validate", "-"], &big);
    assert_eq!(from_stdin.status.code(), Some(1));
    assert_eq!(from_stdin.stdout, output.stdout);
}

#[test]
fn pretty_output_is_the_same_json() {
    let valid = path_str(&valid_example()).to_owned();
    let assets = path_str(&assets_example()).to_owned();
    for file in [valid.as_str(), path_str(&invalid_example())] {
        let compact = examkit(&["validate", file, "--assets", &assets]);
        let pretty = examkit(&["validate", file, "--assets", &assets, "--pretty"]);
        assert_eq!(compact.status.code(), pretty.status.code());
        assert_ne!(compact.stdout, pretty.stdout);
        assert!(String::from_utf8_lossy(&pretty.stdout).lines().count() > 10);
        assert_eq!(stdout_json(&compact), stdout_json(&pretty));
        let document = std::fs::read(file).expect("example is readable");
        let expected =
            examkit_engine::validate(&document, Some(&engine_assets())).to_json_pretty() + "\n";
        assert_eq!(String::from_utf8_lossy(&pretty.stdout), expected);
    }
}

#[test]
fn explain_prints_the_engines_report_with_the_same_exit_codes() {
    let assets = path_str(&assets_example()).to_owned();
    for (file, code) in [(valid_example(), 0), (invalid_example(), 1)] {
        let output = examkit(&[
            "validate",
            path_str(&file),
            "--assets",
            &assets,
            "--explain",
        ]);
        assert_eq!(output.status.code(), Some(code));
        let text = String::from_utf8(output.stdout).expect("the report is UTF-8");
        let document = std::fs::read(&file).expect("example is readable");
        let outcome = examkit_engine::validate(&document, Some(&engine_assets()));
        let mut expected = examkit_engine::explain(&document, &outcome);
        if !expected.ends_with('\n') {
            expected.push('\n');
        }
        assert_eq!(text, expected);
        assert!(!text.trim().is_empty());
        // A valid paper's report says, under each allocation, why: the requirement, the
        // marker's reason and the evidence.
        if code == 0 {
            for prefix in ["requirement: ", "reason: ", "evidence, page "] {
                assert!(
                    text.lines()
                        .any(|line| line.trim_start().starts_with(prefix)),
                    "no {prefix:?} line in:\n{text}"
                );
            }
        }
    }
}

#[test]
fn example_paper_scores_and_explains_as_documented() {
    let output = examkit(&[
        "validate",
        path_str(&valid_example()),
        "--assets",
        path_str(&assets_example()),
    ]);
    let outcome = stdout_json(&output);
    // Question 3 has an uncertain condition and an uncertain decision: 2 marks awarded, 4 possible.
    assert_eq!(outcome["status"], "needs_review");
    assert_eq!(
        outcome["score"],
        serde_json::json!({"awarded": 9, "possible": 11, "max": 11})
    );
    let statuses: Vec<&str> = outcome["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .map(|q| q["status"].as_str().expect("status"))
        .collect();
    assert_eq!(statuses, ["completed", "completed", "needs_review"]);
    let assets = path_str(&assets_example()).to_owned();
    for file in [valid_example(), invalid_example()] {
        let output = examkit(&[
            "validate",
            path_str(&file),
            "--assets",
            &assets,
            "--explain",
        ]);
        let text = String::from_utf8(output.stdout).expect("the report is UTF-8");
        assert!(
            serde_json::from_str::<Value>(&text).is_err(),
            "a report, not JSON: {text}"
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(examkit(&["validate"]).status.code(), Some(2));
    assert_eq!(examkit(&[]).status.code(), Some(2));
    assert_eq!(
        examkit(&["validate", "a.json", "--bogus"]).status.code(),
        Some(2)
    );
    let both = examkit(&[
        "validate",
        path_str(&valid_example()),
        "--pretty",
        "--explain",
    ]);
    assert_eq!(both.status.code(), Some(2));
    assert!(both.stdout.is_empty());
}
