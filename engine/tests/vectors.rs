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
use std::path::{Path, PathBuf};

use examkit_engine::{Asset, ErrorCode, FlagCode};
use serde_json::Value;

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

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

fn vector_files() -> Vec<PathBuf> {
    let dir = vectors_dir();
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

/// Reads every vector; panics listing every file that is malformed.
fn read_all() -> Vec<Vector> {
    let files = vector_files();
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

    let given: Vec<&str> = ["submission", "submissionText", "submissionBase64"]
        .into_iter()
        .filter(|key| members.contains_key(*key))
        .collect();
    let mut document = match given.as_slice() {
        // The document keeps the file's own text (key order, number spelling), minus whitespace.
        ["submission"] => minify(raw_member(&text, "submission")?).into_bytes(),
        ["submissionText"] => file["submissionText"]
            .as_str()
            .ok_or("\"submissionText\" must be a string")?
            .as_bytes()
            .to_vec(),
        ["submissionBase64"] => base64_decode(
            file["submissionBase64"]
                .as_str()
                .ok_or("\"submissionBase64\" must be a string")?,
        )?,
        other => {
            return Err(format!(
                "needs exactly one of submission, submissionText, submissionBase64; has {other:?}"
            ));
        }
    };
    if let Some(pad) = members.get("padToBytes") {
        let pad = pad
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or("\"padToBytes\" must be a non-negative integer")?;
        if document.len() > pad {
            return Err(format!(
                "the document is {} bytes, more than padToBytes {pad}",
                document.len()
            ));
        }
        document.resize(pad, b' ');
    }

    let assets = match members.get("assets") {
        None => return Err(String::from("\"assets\" must be present (null or a list)")),
        Some(Value::Null) => None,
        Some(list) => {
            let json =
                serde_json::to_vec(list).map_err(|e| format!("cannot serialise assets: {e}"))?;
            Some(examkit_engine::assets_from_json(&json).map_err(|e| format!("bad assets: {e}"))?)
        }
    };

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

/// The raw text of a top-level member of a JSON object (already known to be valid JSON).
fn raw_member<'a>(text: &'a str, key: &str) -> Result<&'a str, String> {
    let bytes = text.as_bytes();
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return Err(String::from("a vector file is a JSON object"));
    }
    at += 1;
    loop {
        at = skip_ws(bytes, at);
        match bytes.get(at) {
            Some(b'"') => {}
            _ => return Err(format!("no member {key:?}")),
        }
        let key_end = skip_value(bytes, at);
        let this_key = &text[at + 1..key_end - 1];
        at = skip_ws(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return Err(String::from("malformed member"));
        }
        let start = skip_ws(bytes, at + 1);
        let end = skip_value(bytes, start);
        if this_key == key {
            return Ok(&text[start..end]);
        }
        at = skip_ws(bytes, end);
        match bytes.get(at) {
            Some(b',') => at += 1,
            _ => return Err(format!("no member {key:?}")),
        }
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        at += 1;
    }
    at
}

/// The index just past the JSON value starting at `at`.
fn skip_value(bytes: &[u8], mut at: usize) -> usize {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    while let Some(&b) = bytes.get(at) {
        at += 1;
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                if depth == 0 {
                    return at;
                }
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return at - 1;
                }
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            b',' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return at - 1,
            _ => {}
        }
    }
    at
}

/// Removes the whitespace between JSON tokens, leaving strings and numbers exactly as written.
fn minify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for ch in text.chars() {
        if in_string {
            out.push(ch);
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_string = false;
            }
        } else if !matches!(ch, ' ' | '\t' | '\n' | '\r') {
            in_string = ch == '"';
            out.push(ch);
        }
    }
    out
}

/// Standard base64 (RFC 4648, with padding).
fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    fn sextet(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return Err(String::from(
            "submissionBase64 length is not a multiple of 4",
        ));
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for chunk in bytes.chunks(4) {
        let padding = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 {
            return Err(String::from("submissionBase64 has too much padding"));
        }
        let mut word = 0u32;
        for &c in &chunk[..4 - padding] {
            word =
                (word << 6) | sextet(c).ok_or("submissionBase64 holds a non-base64 character")?;
        }
        word <<= 6 * padding as u32;
        let decoded = word.to_be_bytes();
        out.extend_from_slice(&decoded[1..4 - padding]);
    }
    Ok(out)
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
        minify("{ \"a b\" : [ 1.0 ,\n 2 ] , \"c\\\" d\" : \"e f\" }"),
        "{\"a b\":[1.0,2],\"c\\\" d\":\"e f\"}"
    );
    let file =
        "{\n  \"name\": \"x\",\n  \"submission\": {\"k\": [1, {\"z\": \"}\"}]},\n  \"n\": 5}";
    assert_eq!(
        raw_member(file, "submission"),
        Ok("{\"k\": [1, {\"z\": \"}\"}]}")
    );
    assert_eq!(raw_member(file, "n"), Ok("5"));
    assert!(raw_member(file, "missing").is_err());
    assert_eq!(base64_decode("eyJhIjoxfQ=="), Ok(b"{\"a\":1}".to_vec()));
    assert_eq!(base64_decode("/w=="), Ok(vec![0xff]));
    assert_eq!(base64_decode("YWJj"), Ok(b"abc".to_vec()));
    assert!(base64_decode("YW*j").is_err());

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
