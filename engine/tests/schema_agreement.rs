//! The published JSON Schemas agree with the engine on every shared test vector.
//!
//! 1. `schemas/service-marking-import-v1.schema.json` and `schemas/validation-outcome.schema.json`
//!    are valid draft 2020-12 schemas.
//! 2. The submission schema accepts exactly the vectors marked `"schema": "accept"` and rejects
//!    exactly those marked `"reject"` (`"skip"` marks documents the schema language cannot judge).
//!    Independently of the marks, whatever the schema rejects the engine must reject too: the
//!    schema only states rules the engine enforces.
//! 3. The engine's outcome for every vector is valid against the outcome schema.
//!
//! Every failing vector is reported at once, by file name.

use std::path::{Path, PathBuf};

use examkit_engine::{Asset, Outcome};
use jsonschema::Validator;
use serde_json::Value;

mod common;

/// The shared vectors are a suite of well over this many files; fewer means they are missing.
const MIN_VECTORS: usize = 80;

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

fn workspace_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn submission_schema() -> Value {
    read_json(&workspace_dir().join("schemas/service-marking-import-v1.schema.json"))
}

fn outcome_schema() -> Value {
    read_json(&workspace_dir().join("schemas/validation-outcome.schema.json"))
}

/// A draft 2020-12 validator that asserts formats and refuses formats it does not know.
fn compile(schema: &Value, name: &str) -> Validator {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .build(schema)
        .unwrap_or_else(|e| panic!("{name} does not compile as a draft 2020-12 schema: {e}"))
}

/// Every error of `instance` against `validator`, one line each, for failure messages.
fn schema_errors(validator: &Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {:?}", e, e.instance_path().as_str()))
        .collect()
}

fn check_schema_document(schema: &Value, name: &str) {
    assert_eq!(
        schema["$schema"], DRAFT_2020_12,
        "{name} must declare draft 2020-12"
    );
    assert!(
        schema["$id"].as_str().is_some_and(|id| id.ends_with(name)),
        "{name} must have an $id ending in its file name"
    );
    for key in ["title", "description"] {
        assert!(
            schema[key].as_str().is_some_and(|s| !s.is_empty()),
            "{name} must have a {key}"
        );
    }
    if let Err(error) = jsonschema::draft202012::meta::validate(schema) {
        panic!("{name} is not a valid draft 2020-12 schema: {error}");
    }
    compile(schema, name);
}

#[test]
fn submission_schema_is_a_valid_draft_2020_12_schema() {
    check_schema_document(
        &submission_schema(),
        "service-marking-import-v1.schema.json",
    );
}

#[test]
fn outcome_schema_is_a_valid_draft_2020_12_schema() {
    check_schema_document(&outcome_schema(), "validation-outcome.schema.json");
}

/// Every property in the published submission schema is documented.
#[test]
fn every_submission_schema_property_has_a_description() {
    fn walk(node: &Value, at: &str, undocumented: &mut Vec<String>) {
        match node {
            Value::Object(map) => {
                // Properties inside if/then only restate a documented property for a condition.
                let conditional = at.ends_with("/if") || at.ends_with("/then");
                if let (Some(Value::Object(properties)), false) =
                    (map.get("properties"), conditional)
                {
                    for (name, property) in properties {
                        if property
                            .get("description")
                            .and_then(Value::as_str)
                            .is_none_or(str::is_empty)
                        {
                            undocumented.push(format!("{at}/properties/{name}"));
                        }
                    }
                }
                for (key, child) in map {
                    walk(child, &format!("{at}/{key}"), undocumented);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(child, &format!("{at}/{i}"), undocumented);
                }
            }
            _ => {}
        }
    }
    for (name, schema) in [
        ("service-marking-import-v1.schema.json", submission_schema()),
        ("validation-outcome.schema.json", outcome_schema()),
    ] {
        let mut undocumented = Vec::new();
        walk(&schema, "", &mut undocumented);
        assert!(
            undocumented.is_empty(),
            "{name}: properties without a description: {undocumented:?}"
        );
        let defs = schema["$defs"].as_object().expect("$defs");
        let bare: Vec<&String> = defs
            .iter()
            .filter(|(_, d)| d.get("description").and_then(Value::as_str).is_none())
            .map(|(k, _)| k)
            .collect();
        assert!(
            bare.is_empty(),
            "{name}: $defs without a description: {bare:?}"
        );
    }
}

/// What the schema should say about a vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expectation {
    Accept,
    Reject,
    Skip,
}

/// One shared test vector, as `tests/vectors/README.md` describes it: the document is the
/// `submission` member's own text without whitespace, the `submissionText` string or the decoded
/// `submissionBase64` bytes, padded with spaces to `padToBytes` when given.
struct Vector {
    name: String,
    schema: Expectation,
    /// The submitted bytes, exactly as given to the engine.
    bytes: Vec<u8>,
    assets: Option<Vec<Asset>>,
}

/// Reads one vector file, or says why it cannot be read.
fn read_vector(path: &Path) -> Result<Vector, String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let file: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    let schema = match file.get("schema").and_then(Value::as_str) {
        Some("accept") => Expectation::Accept,
        Some("reject") => Expectation::Reject,
        Some("skip") => Expectation::Skip,
        other => {
            return Err(format!(
                "\"schema\" must be accept, reject or skip, not {other:?}"
            ));
        }
    };
    let bytes = common::document_bytes(&text, &file)?;
    let assets = common::assets(&file)?;
    Ok(Vector {
        name,
        schema,
        bytes,
        assets,
    })
}

fn read_all_vectors() -> Vec<Vector> {
    let files = common::vector_files();
    assert!(
        files.len() >= MIN_VECTORS,
        "tests/vectors holds {} JSON files; the shared suite has at least {MIN_VECTORS}, so vectors \
         are missing and this agreement test would prove nothing",
        files.len()
    );
    let mut vectors = Vec::new();
    let mut unreadable = Vec::new();
    for path in &files {
        match read_vector(path) {
            Ok(vector) => vectors.push(vector),
            Err(why) => unreadable.push(format!("{}: {why}", path.display())),
        }
    }
    assert!(
        unreadable.is_empty(),
        "unreadable vectors:\n{}",
        unreadable.join("\n")
    );
    vectors
}

fn run(vector: &Vector) -> Outcome {
    examkit_engine::validate(&vector.bytes, vector.assets.as_deref())
}

#[test]
fn submission_schema_accepts_and_rejects_exactly_the_marked_vectors() {
    let vectors = read_all_vectors();
    let validator = compile(
        &submission_schema(),
        "service-marking-import-v1.schema.json",
    );
    let mut failures = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    for vector in &vectors {
        if vector.schema == Expectation::Skip {
            continue;
        }
        // A document that is not JSON is an instance of no schema: it counts as rejected.
        let instance: Option<Value> = serde_json::from_slice(&vector.bytes).ok();
        let errors = match &instance {
            Some(instance) => schema_errors(&validator, instance),
            None => vec![String::from("not JSON")],
        };
        match (vector.schema, errors.is_empty()) {
            (Expectation::Accept, true) => accepted += 1,
            (Expectation::Reject, false) => rejected += 1,
            (Expectation::Accept, false) => failures.push(format!(
                "{}: marked accept, but the schema rejects it:\n    {}",
                vector.name,
                errors.join("\n    ")
            )),
            (Expectation::Reject, true) => failures.push(format!(
                "{}: marked reject, but the schema accepts it",
                vector.name
            )),
            (Expectation::Skip, _) => unreachable!("skipped above"),
        }
    }
    assert!(
        failures.is_empty(),
        "{} vectors disagree with the schema:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        accepted > 0,
        "no vector is marked accept: the schema's acceptance is untested"
    );
    assert!(
        rejected > 0,
        "no vector is marked reject: the schema's rejection is untested"
    );
    println!(
        "{accepted} vectors accepted and {rejected} rejected by the submission schema, as marked"
    );
}

#[test]
fn the_engine_rejects_everything_the_schema_rejects() {
    let vectors = read_all_vectors();
    let validator = compile(
        &submission_schema(),
        "service-marking-import-v1.schema.json",
    );
    let mut failures = Vec::new();
    let mut compared = 0;
    for vector in &vectors {
        let Ok(instance) = serde_json::from_slice::<Value>(&vector.bytes) else {
            continue;
        };
        compared += 1;
        let errors = schema_errors(&validator, &instance);
        if !errors.is_empty() && run(vector).is_valid() {
            failures.push(format!(
                "{}: the engine accepts it, but the schema rejects it:\n    {}",
                vector.name,
                errors.join("\n    ")
            ));
        }
    }
    assert!(compared > 0, "no vector is JSON");
    assert!(
        failures.is_empty(),
        "{} vectors disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_engine_outcome_matches_the_outcome_schema() {
    let vectors = read_all_vectors();
    let validator = compile(&outcome_schema(), "validation-outcome.schema.json");
    let mut failures = Vec::new();
    let (mut valid, mut invalid) = (0, 0);
    for vector in &vectors {
        let outcome = run(vector);
        if outcome.is_valid() {
            valid += 1;
        } else {
            invalid += 1;
        }
        let json = outcome.to_json();
        let value: Value = match serde_json::from_str(&json) {
            Ok(value) => value,
            Err(e) => {
                failures.push(format!(
                    "{}: the outcome is not JSON ({e}): {json}",
                    vector.name
                ));
                continue;
            }
        };
        if value["valid"] != Value::Bool(outcome.is_valid()) {
            failures.push(format!(
                "{}: \"valid\" disagrees with is_valid(): {json}",
                vector.name
            ));
        }
        let errors = schema_errors(&validator, &value);
        if !errors.is_empty() {
            failures.push(format!(
                "{}: the outcome does not match the outcome schema:\n    {}\n    outcome: {json}",
                vector.name,
                errors.join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} outcomes disagree with the schema:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        valid > 0 && invalid > 0,
        "the vectors must give both valid ({valid}) and invalid ({invalid}) outcomes"
    );
    println!("{valid} valid and {invalid} invalid outcomes match the outcome schema");
}

/// The outcome schema is strict: it refuses outcomes the engine must never produce.
#[test]
fn outcome_schema_refuses_malformed_outcomes() {
    let validator = compile(&outcome_schema(), "validation-outcome.schema.json");
    let invalid = examkit_engine::validate_str("{}", None);
    let good: Value = serde_json::from_str(&invalid.to_json()).expect("outcome JSON");
    assert!(
        validator.is_valid(&good),
        "the engine's outcome for {{}} must match the schema: {:?}",
        schema_errors(&validator, &good)
    );
    let mut unknown_code = good.clone();
    unknown_code["errors"][0]["code"] = Value::from("no_such_code");
    let mut bad_pointer = good.clone();
    bad_pointer["errors"][0]["path"] = Value::from("source");
    let mut extra = good.clone();
    extra["extra"] = Value::from(1);
    let mut no_errors = good.clone();
    no_errors["errors"] = Value::Array(Vec::new());
    let mut claims_valid = good.clone();
    claims_valid["valid"] = Value::Bool(true);
    for (what, bad) in [
        ("an unknown error code", unknown_code),
        ("a path that is not a JSON Pointer", bad_pointer),
        ("an unknown field", extra),
        ("an invalid outcome without errors", no_errors),
        ("an error list claiming validity", claims_valid),
    ] {
        assert!(
            !validator.is_valid(&bad),
            "the outcome schema accepts {what}: {bad}"
        );
    }
}

/// One boundary case: edits to the valid base vector (JSON Pointer, new value as JSON text) and
/// whether the schema accepts the result.
struct Probe {
    what: &'static str,
    edits: Vec<(&'static str, String)>,
    accepts: bool,
}

fn probe(what: &'static str, accepts: bool, edits: &[(&'static str, &str)]) -> Probe {
    let edits = edits
        .iter()
        .map(|(pointer, value)| (*pointer, (*value).to_owned()))
        .collect();
    Probe {
        what,
        edits,
        accepts,
    }
}

/// Boundary cases the schema and the engine must judge alike. Each changes structural values
/// only, so the engine must accept the document exactly when the schema does.
fn probes() -> Vec<Probe> {
    const BOX: &str = "/questions/0/decisions/0/evidence/0/box";
    const PAGES: &str = "/questions/0/pageSelections/3f2b8c1e-5a47-4d2e-9b61-0c8e7a5d4f10";
    const MARKED_AT: &str = "/source/markedAt";
    const LABEL: &str = "/questions/0/label";
    const COVERED: &str = "/coverage/questionLabels/0";
    let emoji_40 = format!("{:?}", "\u{1F600}".repeat(40));
    let x_41 = format!("{:?}", "x".repeat(41));
    let id_65 = format!("{:?}", "a".repeat(65));
    vec![
        probe(
            "x at 1 with a tiny width",
            true,
            &[(BOX, r#"{"x":1,"y":0,"width":1e-10,"height":1}"#)],
        ),
        probe(
            "x just past 1",
            false,
            &[(BOX, r#"{"x":1.0000001,"y":0,"width":1e-10,"height":1}"#)],
        ),
        probe(
            "a full-page box",
            true,
            &[(BOX, r#"{"x":0,"y":0,"width":1,"height":1}"#)],
        ),
        probe(
            "width and height past 1 within the tolerance",
            true,
            &[(
                BOX,
                r#"{"x":0,"y":0,"width":1.0000000005,"height":1.0000000005}"#,
            )],
        ),
        probe(
            "width past 1 beyond the tolerance",
            false,
            &[(BOX, r#"{"x":0,"y":0,"width":1.1,"height":0.5}"#)],
        ),
        probe(
            "negative zero x",
            true,
            &[(BOX, r#"{"x":-0.0,"y":0,"width":0.5,"height":0.5}"#)],
        ),
        probe(
            "negative zero width",
            false,
            &[(BOX, r#"{"x":0,"y":0,"width":-0.0,"height":0.5}"#)],
        ),
        probe(
            "negative totalMarks",
            false,
            &[("/coverage/totalMarks", "-1")],
        ),
        probe(
            "fractional totalMarks",
            false,
            &[("/coverage/totalMarks", "4.5")],
        ),
        probe(
            "criterion maxMarks 1.0",
            true,
            &[("/questions/0/rubric/criteria/0/maxMarks", "1.0")],
        ),
        probe(
            "criterion maxMarks 0",
            false,
            &[("/questions/0/rubric/criteria/0/maxMarks", "0")],
        ),
        probe("an empty coverage label", false, &[(COVERED, r#""""#)]),
        probe(
            "a leap second at 23:59:60 UTC",
            true,
            &[(MARKED_AT, r#""2016-12-31T23:59:60Z""#)],
        ),
        probe(
            "lower-case t and z",
            true,
            &[(MARKED_AT, r#""2025-06-14t16:20:00.5z""#)],
        ),
        probe(
            "an offset without a colon",
            false,
            &[(MARKED_AT, r#""2025-06-14T16:20:00+0100""#)],
        ),
        probe(
            "a model with a human source",
            true,
            &[("/source/model", r#""m-1""#)],
        ),
        probe("null complete", false, &[("/questions/0/complete", "null")]),
        probe(
            "a label of 40 astral characters",
            true,
            &[(LABEL, &emoji_40), (COVERED, &emoji_40)],
        ),
        probe(
            "a label of 41 characters",
            false,
            &[(LABEL, &x_41), (COVERED, &x_41)],
        ),
        probe(
            "a criterion id of 65 characters",
            false,
            &[("/questions/0/rubric/criteria/0/id", &id_65)],
        ),
        probe(
            "page 10000 spelled 10000.0",
            true,
            &[(PAGES, "[1,2,10000.0]")],
        ),
        probe("page 10001", false, &[(PAGES, "[1,2,10001]")]),
        probe("page 2 twice, once as 2.0", false, &[(PAGES, "[1,2,2.0]")]),
        probe(
            "condition check index -1",
            false,
            &[("/questions/0/decisions/2/conditionChecks/0/index", "-1")],
        ),
        // A pattern's end is the string's end: a final line break is not before it (as `$` would
        // have it in Python's `re` and other engines).
        probe(
            "a code with a final line break",
            false,
            &[("/questions/0/rubric/criteria/0/code", r#""M1\n""#)],
        ),
        probe(
            "a criterion id with a final line break, named so by its decision",
            false,
            &[
                ("/questions/0/rubric/criteria/0/id", r#""q1a-M1\n""#),
                ("/questions/0/decisions/0/criterionId", r#""q1a-M1\n""#),
            ],
        ),
        probe(
            "a source page id with a final line break",
            false,
            &[(
                "/questions/0/rubric/criteria/0/sourcePageIds/0",
                r#""9a1d4e7b-2c3f-4b8a-8e5d-6f7a1b2c3d40:p1\n""#,
            )],
        ),
        probe(
            "an evidence page id with a final line break",
            false,
            &[(
                "/questions/0/decisions/0/evidence/0/pageId",
                r#""3f2b8c1e-5a47-4d2e-9b61-0c8e7a5d4f10:p1\n""#,
            )],
        ),
        probe(
            "a pageSelections key with a final line break",
            false,
            &[(
                "/questions/0/pageSelections/3f2b8c1e-5a47-4d2e-9b61-0c8e7a5d4f10\n",
                "[1]",
            )],
        ),
        probe(
            "a markedAt with a final line break",
            false,
            &[(MARKED_AT, r#""2025-06-14T16:20:00Z\n""#)],
        ),
        probe(
            "a code with a final carriage return",
            false,
            &[("/questions/0/rubric/criteria/0/code", r#""M1\r""#)],
        ),
        probe(
            "a label with a final line break (labels have no pattern)",
            true,
            &[(LABEL, r#""1\n""#), (COVERED, r#""1\n""#)],
        ),
    ]
}

/// Sets the value at `pointer`, adding an object member or replacing an existing array item.
fn set(document: &mut Value, pointer: &str, value: &str) -> Result<(), String> {
    let value: Value =
        serde_json::from_str(value).map_err(|e| format!("{value} is not JSON: {e}"))?;
    let (parent, last) = pointer
        .rsplit_once('/')
        .ok_or("a probe pointer has a parent")?;
    match document.pointer_mut(parent) {
        Some(Value::Object(members)) => {
            members.insert(last.to_owned(), value);
            Ok(())
        }
        Some(Value::Array(items)) => {
            match last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                Some(item) => {
                    *item = value;
                    Ok(())
                }
                None => Err(format!("{pointer} is not in the base vector")),
            }
        }
        _ => Err(format!("{parent} is not a container in the base vector")),
    }
}

#[test]
fn boundary_probes_agree_with_the_engine() {
    let path = workspace_dir().join("tests/vectors/valid-base.json");
    let base = read_json(&path)["submission"].clone();
    assert!(
        base.is_object(),
        "{} has no submission document",
        path.display()
    );
    let base_text = serde_json::to_string(&base).expect("base document");
    assert!(
        examkit_engine::validate_str(&base_text, None).is_valid(),
        "the base vector must be valid"
    );
    let validator = compile(
        &submission_schema(),
        "service-marking-import-v1.schema.json",
    );
    let mut failures = Vec::new();
    for Probe {
        what,
        edits,
        accepts,
    } in probes()
    {
        let mut document = base.clone();
        if let Err(why) = edits
            .iter()
            .try_for_each(|(pointer, value)| set(&mut document, pointer, value))
        {
            failures.push(format!("{what}: {why}"));
            continue;
        }
        // serde_json writes a float with a zero fraction as such (1.0, -0.0), so spellings survive.
        let text = serde_json::to_string(&document).expect("probe document");
        let errors = schema_errors(&validator, &document);
        if errors.is_empty() != accepts {
            let verdict = if accepts { "rejects" } else { "accepts" };
            failures.push(format!("{what}: the schema {verdict} it {errors:?}"));
        }
        let outcome = examkit_engine::validate_str(&text, None);
        if outcome.is_valid() != accepts {
            let verdict = if accepts { "rejects" } else { "accepts" };
            failures.push(format!(
                "{what}: the engine {verdict} it: {}",
                outcome.to_json()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} probes disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
