//! The shared test vectors of `tests/vectors/`, run against the engine.
//!
//! Each vector file holds one submission document (as JSON, raw text or base64 bytes), the import's
//! assets (or `null`) and the exact outcome every surface must return, with the human-readable
//! `message` members left out. `tests/vectors/README.md` describes the format; the Python and WASM
//! suites run the same files.
//!
//! Every mismatching vector is reported at once, each with a readable difference, so one run shows
//! the whole picture.

use std::collections::BTreeSet;
use std::path::Path;

use examkit_engine::{Asset, ErrorCode, FlagCode};
use serde_json::Value;

mod common;

/// The suite holds well over this many vectors; fewer means files are missing.
const MIN_VECTORS: usize = 80;
/// No vector file may reach this size (the big cases are made by `generate.py`).
const MAX_FILE_BYTES: u64 = 300 * 1024;
/// The members a vector file may have.
const MEMBERS: &[&str] = &[
    "name",
    "description",
    "assets",
    "submission",
    "submissionText",
    "submissionBase64",
    "padToBytes",
    "schema",
    "expected",
];
/// Codes of documents that cannot be parsed (or are too large to be): the schema cannot judge them.
const PARSE_CODES: &[&str] = &["invalid_json", "nesting_too_deep", "payload_too_large"];
/// Codes of defects the published JSON Schema expresses itself (box bounds are handled apart).
const STRUCTURAL_CODES: &[&str] = &[
    "unknown_field",
    "required",
    "type",
    "const",
    "enum",
    "pattern",
    "format",
    "min_length",
    "max_length",
    "min_items",
    "max_items",
    "unique_items",
    "minimum",
    "maximum",
    "model_required",
    "condition_mode_required",
    "dependent_code_without_dependencies",
    "invalid_page_id",
    "box_not_positive",
];

/// One vector, read and checked for form.
struct Vector {
    name: String,
    document: Vec<u8>,
    assets: Option<Vec<Asset>>,
    expected: Value,
}

/// Reads every vector; panics listing every file that is malformed.
fn read_all() -> Vec<Vector> {
    let files = common::vector_files();
    assert!(
        files.len() >= MIN_VECTORS,
        "tests/vectors holds {} vector files; the suite has at least {MIN_VECTORS}",
        files.len()
    );
    let mut vectors = Vec::with_capacity(files.len());
    let mut problems = Vec::new();
    for file in &files {
        match read_vector(file) {
            Ok(vector) => vectors.push(vector),
            Err(why) => problems.push(format!("{}: {why}", file.display())),
        }
    }
    assert!(
        problems.is_empty(),
        "{} malformed vector files:\n{}",
        problems.len(),
        problems.join("\n")
    );
    vectors
}

fn read_vector(path: &Path) -> Result<Vector, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot stat: {e}"))?
        .len();
    if size >= MAX_FILE_BYTES {
        return Err(format!(
            "{size} bytes; vector files stay under {MAX_FILE_BYTES}"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read as UTF-8: {e}"))?;
    let file: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(members) = &file else {
        return Err(String::from("a vector file is a JSON object"));
    };
    if let Some(unknown) = members.keys().find(|key| !MEMBERS.contains(&key.as_str())) {
        return Err(format!("unknown member {unknown:?}"));
    }

    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = file["name"]
        .as_str()
        .ok_or("\"name\" must be a string")?
        .to_owned();
    if name != stem {
        return Err(format!(
            "\"name\" is {name:?} but the file is named {stem:?}"
        ));
    }
    if file["description"]
        .as_str()
        .is_none_or(|d| d.trim().is_empty())
    {
        return Err(String::from("\"description\" must be a non-empty string"));
    }

    let document = common::document_bytes(&text, &file)?;

    if !members.contains_key("assets") {
        return Err(String::from("\"assets\" must be present (null or a list)"));
    }
    let assets = common::assets(&file)?;

    let expected = members
        .get("expected")
        .cloned()
        .ok_or("\"expected\" is missing")?;
    check_expected_form(&expected)?;
    let schema = file["schema"]
        .as_str()
        .ok_or("\"schema\" must be a string")?;
    let wanted = schema_mark(&expected);
    if schema != wanted {
        return Err(format!(
            "\"schema\" is {schema:?}, but an outcome like this one is marked {wanted:?}"
        ));
    }
    Ok(Vector {
        name,
        document,
        assets,
        expected,
    })
}

/// What the published schema must say about a document with this expected outcome.
fn schema_mark(expected: &Value) -> &'static str {
    let Some(errors) = expected["errors"].as_array() else {
        return "accept";
    };
    let codes: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| {
            (
                e["code"].as_str().unwrap_or(""),
                e["path"].as_str().unwrap_or(""),
            )
        })
        .collect();
    if codes.iter().any(|(code, _)| PARSE_CODES.contains(code)) {
        return "skip";
    }
    let structural = codes.iter().any(|(code, path)| {
        STRUCTURAL_CODES.contains(code)
            || (*code == "box_out_of_bounds" && (path.ends_with("/x") || path.ends_with("/y")))
    });
    if structural { "reject" } else { "accept" }
}

/// The expected outcome has the contract's shape, with only known codes and no messages.
fn check_expected_form(expected: &Value) -> Result<(), String> {
    match expected["valid"].as_bool() {
        Some(false) => {
            let errors = expected["errors"]
                .as_array()
                .ok_or("expected.errors must be a list")?;
            if errors.is_empty() {
                return Err(String::from("an invalid outcome has at least one error"));
            }
            if !expected["truncated"].is_boolean() {
                return Err(String::from("expected.truncated must be a boolean"));
            }
            for error in errors {
                let code = error["code"].as_str().unwrap_or("");
                if ErrorCode::from_code(code).is_none() {
                    return Err(format!("unknown error code {code:?}"));
                }
                if !error["path"].is_string() || error.get("message").is_some() {
                    return Err(format!(
                        "errors are {{path, code}} without message: {error}"
                    ));
                }
            }
        }
        Some(true) => {
            for (code, _) in flags_of(expected) {
                if FlagCode::from_code(code).is_none() {
                    return Err(format!("unknown flag code {code:?}"));
                }
            }
            let questions = expected["questions"]
                .as_array()
                .ok_or("expected.questions must be a list")?;
            for flag in questions
                .iter()
                .flat_map(|q| q["reviewFlags"].as_array().into_iter().flatten())
            {
                if flag.get("message").is_some() {
                    return Err(String::from("expected review flags carry no message"));
                }
            }
        }
        None => return Err(String::from("expected.valid must be a boolean")),
    }
    Ok(())
}

/// Every flag code of a valid outcome, from both `reviewFlags` and `criteria[].flags`.
fn flags_of(outcome: &Value) -> Vec<(&str, &'static str)> {
    let mut codes = Vec::new();
    for question in outcome["questions"].as_array().into_iter().flatten() {
        for flag in question["reviewFlags"].as_array().into_iter().flatten() {
            codes.push((flag["code"].as_str().unwrap_or(""), "reviewFlags"));
        }
        for criterion in question["criteria"].as_array().into_iter().flatten() {
            for flag in criterion["flags"].as_array().into_iter().flatten() {
                codes.push((flag.as_str().unwrap_or(""), "criteria"));
            }
        }
    }
    codes
}

/// Runs the engine on a vector and returns its canonical JSON.
fn run(vector: &Vector) -> String {
    examkit_engine::validate(&vector.document, vector.assets.as_deref()).to_json()
}

/// Checks that every `message` is a non-empty string and removes it; returns what is wrong.
fn strip_messages(outcome: &mut Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut strip = |item: &mut Value, at: String| {
        let Some(object) = item.as_object_mut() else {
            problems.push(format!("{at} is not an object"));
            return;
        };
        match object.remove("message") {
            Some(Value::String(message)) if !message.trim().is_empty() => {}
            other => problems.push(format!(
                "{at}.message must be a non-empty string, is {other:?}"
            )),
        }
    };
    if let Some(errors) = outcome.get_mut("errors").and_then(Value::as_array_mut) {
        for (i, error) in errors.iter_mut().enumerate() {
            strip(error, format!("errors[{i}]"));
        }
    }
    if let Some(questions) = outcome.get_mut("questions").and_then(Value::as_array_mut) {
        for (q, question) in questions.iter_mut().enumerate() {
            if let Some(flags) = question
                .get_mut("reviewFlags")
                .and_then(Value::as_array_mut)
            {
                for (i, flag) in flags.iter_mut().enumerate() {
                    strip(flag, format!("questions[{q}].reviewFlags[{i}]"));
                }
            }
        }
    }
    problems
}

/// Lines describing how `actual` differs from `expected`, by JSON Pointer.
fn differences(at: &str, expected: &Value, actual: &Value, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                match a.get(key) {
                    Some(other) => differences(&format!("{at}/{key}"), value, other, out),
                    None => out.push(format!("{at}/{key}: missing (expected {value})")),
                }
            }
            for (key, value) in a {
                if !e.contains_key(key) {
                    out.push(format!("{at}/{key}: unexpected {value}"));
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            for i in 0..e.len().max(a.len()) {
                match (e.get(i), a.get(i)) {
                    (Some(x), Some(y)) => differences(&format!("{at}/{i}"), x, y, out),
                    (Some(x), None) => out.push(format!("{at}/{i}: missing (expected {x})")),
                    (None, Some(y)) => out.push(format!("{at}/{i}: unexpected {y}")),
                    (None, None) => {}
                }
            }
        }
        _ if expected != actual => out.push(format!("{at}: expected {expected}, got {actual}")),
        _ => {}
    }
}

/// `code at path` lines of an invalid outcome's errors.
fn error_lines(outcome: &Value) -> Vec<String> {
    outcome["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            format!(
                "{} at {:?}",
                e["code"].as_str().unwrap_or("?"),
                e["path"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// A readable report of one mismatching vector.
fn describe_mismatch(expected: &Value, actual: &Value) -> String {
    const MAX_LINES: usize = 40;
    let mut lines = Vec::new();
    if expected["valid"] == Value::Bool(false) && actual["valid"] == Value::Bool(false) {
        let (e, a) = (error_lines(expected), error_lines(actual));
        lines.push(format!("  expected {} errors:", e.len()));
        lines.extend(e.iter().take(MAX_LINES).map(|l| format!("    {l}")));
        lines.push(format!("  got {} errors:", a.len()));
        lines.extend(a.iter().take(MAX_LINES).map(|l| format!("    {l}")));
        if expected["truncated"] != actual["truncated"] {
            lines.push(format!(
                "  truncated: expected {}, got {}",
                expected["truncated"], actual["truncated"]
            ));
        }
    } else {
        let mut diff = Vec::new();
        differences("", expected, actual, &mut diff);
        let total = diff.len();
        lines.extend(diff.into_iter().take(MAX_LINES).map(|l| format!("  {l}")));
        if total > MAX_LINES {
            lines.push(format!("  ... and {} more differences", total - MAX_LINES));
        }
    }
    lines.join("\n")
}

#[test]
fn vector_files_are_well_formed() {
    let vectors = read_all();
    let names: BTreeSet<&str> = vectors.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names.len(), vectors.len(), "vector names are unique");
    let valid = vectors
        .iter()
        .filter(|v| v.expected["valid"] == Value::Bool(true))
        .count();
    assert!(valid >= 10, "only {valid} vectors expect a valid outcome");
    assert!(
        vectors.len() - valid >= 10,
        "only {} vectors expect an invalid outcome",
        vectors.len() - valid
    );
    println!(
        "{} vectors: {valid} valid, {} invalid",
        vectors.len(),
        vectors.len() - valid
    );
}

#[test]
fn vectors_cover_every_error_code_and_flag() {
    let vectors = read_all();
    let mut seen = BTreeSet::new();
    for vector in &vectors {
        for error in vector.expected["errors"].as_array().into_iter().flatten() {
            seen.insert(error["code"].as_str().unwrap_or("").to_owned());
        }
        for (code, _) in flags_of(&vector.expected) {
            seen.insert(code.to_owned());
        }
    }
    let missing: Vec<&str> = ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(FlagCode::ALL.iter().map(|f| f.as_str()))
        .filter(|code| !seen.contains(*code))
        .collect();
    assert!(
        missing.is_empty(),
        "no vector expects these codes: {missing:?}"
    );
}

#[test]
fn every_vector_gives_its_expected_outcome() {
    let vectors = read_all();
    let mut failures = Vec::new();
    for vector in &vectors {
        let json = run(vector);
        let mut actual: Value = match serde_json::from_str(&json) {
            Ok(value) => value,
            Err(e) => {
                failures.push(format!(
                    "{}: the outcome is not JSON ({e}): {json}",
                    vector.name
                ));
                continue;
            }
        };
        let problems = strip_messages(&mut actual);
        if !problems.is_empty() {
            failures.push(format!(
                "{}: bad messages:\n  {}",
                vector.name,
                problems.join("\n  ")
            ));
        }
        if actual != vector.expected {
            failures.push(format!(
                "{}: the outcome differs from the expected one\n{}",
                vector.name,
                describe_mismatch(&vector.expected, &actual)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} vectors fail:\n\n{}\n\n({} of {} vectors fail)",
        failures.len(),
        vectors.len(),
        failures.join("\n\n"),
        failures.len(),
        vectors.len()
    );
}

#[test]
fn validation_is_deterministic() {
    let vectors = read_all();
    let mut failures = Vec::new();
    for vector in &vectors {
        let first = run(vector);
        let second = run(vector);
        if first != second {
            failures.push(format!(
                "{}: two runs differ:\n  {first}\n  {second}",
                vector.name
            ));
        }
        if let Ok(text) = std::str::from_utf8(&vector.document) {
            let via_str = examkit_engine::validate_str(text, vector.assets.as_deref()).to_json();
            if via_str != first {
                failures.push(format!(
                    "{}: validate_str differs from validate",
                    vector.name
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} vectors are not deterministic:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_harness_reads_documents_faithfully() {
    assert_eq!(
        common::minify("{ \"a b\" : [ 1.0 ,\n 2 ] , \"c\\\" d\" : \"e f\" }"),
        "{\"a b\":[1.0,2],\"c\\\" d\":\"e f\"}"
    );
    let text = "{\n  \"name\": \"x\",\n  \"submission\": {\"z\": [1.0, {\"a\": \"}\"}], \"b\": 1e2},\n  \"padToBytes\": 40}";
    let file: Value = serde_json::from_str(text).expect("json");
    let mut padded = b"{\"z\":[1.0,{\"a\":\"}\"}],\"b\":1e2}".to_vec();
    padded.resize(40, b' ');
    assert_eq!(common::document_bytes(text, &file), Ok(padded));
    let base64 = serde_json::json!({"submissionBase64": "/3s="});
    assert_eq!(common::document_bytes("", &base64), Ok(vec![0xff, b'{']));
    assert!(common::document_bytes("", &serde_json::json!({"submissionBase64": "YW*j"})).is_err());
    assert!(
        common::document_bytes(
            "",
            &serde_json::json!({"submissionText": "{}", "submissionBase64": "e30="})
        )
        .is_err()
    );

    let expected = serde_json::json!({"valid": true, "questions": [{"flags": ["a"], "score": 1}]});
    let actual = serde_json::json!({"valid": true, "questions": [{"flags": ["a", "b"], "score": 2}], "x": 0});
    let mut lines = Vec::new();
    differences("", &expected, &actual, &mut lines);
    assert_eq!(
        lines,
        [
            "/questions/0/flags/1: unexpected \"b\"",
            "/questions/0/score: expected 1, got 2",
            "/x: unexpected 0",
        ]
    );
    let mut outcome = serde_json::json!({"valid": false, "errors": [
        {"path": "", "code": "type", "message": "the document is not an object"},
        {"path": "/a", "code": "type", "message": " "}
    ], "truncated": false});
    let problems = strip_messages(&mut outcome);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(outcome["errors"][0].get("message").is_none());
}
