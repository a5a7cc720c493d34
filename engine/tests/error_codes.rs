//! The published code lists agree with the engine.
//!
//! `schemas/error-codes.json` and the code enums of `schemas/validation-outcome.schema.json` must
//! list exactly the error codes and review flags the engine defines, in the same order and (for the
//! code list) with the same meanings; and every code the engine defines must be raised somewhere in
//! its sources, so that no published code is one the engine can never emit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use examkit_engine::{ErrorCode, FlagCode};
use serde_json::Value;

/// The error codes `import-contract.md` section 4 requires at least.
const CONTRACT_ERROR_CODES: &[&str] = &[
    "invalid_json",
    "unknown_field",
    "required",
    "type",
    "const",
    "enum",
    "pattern",
    "format",
    "min_items",
    "max_items",
    "minimum",
    "maximum",
    "payload_too_large",
    "duplicate_label",
    "duplicate_part_id",
    "duplicate_criterion_id",
    "unknown_part",
    "part_max_mismatch",
    "unknown_dependency",
    "self_dependency",
    "cross_question_dependency",
    "dependency_cycle",
    "dependent_code_without_dependencies",
    "condition_mode_required",
    "missing_decision",
    "duplicate_decision",
    "unknown_criterion",
    "condition_check_missing",
    "condition_check_duplicate",
    "condition_index_out_of_range",
    "invalid_page_id",
    "page_not_selected",
    "unknown_asset",
    "page_out_of_range",
    "asset_role_mismatch",
    "missing_page_role",
    "box_out_of_bounds",
    "box_not_positive",
    "model_required",
    "coverage_mismatch",
];

/// The review flags `import-contract.md` section 4 requires.
const CONTRACT_FLAG_CODES: &[&str] = &[
    "uncertain_decision",
    "condition_conflict",
    "condition_uncertain",
    "dependency_withheld",
    "dependency_uncertain",
    "reported_score_mismatch",
    "completion_claim_overridden",
];

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn schemas_dir() -> PathBuf {
    manifest_dir().join("..").join("schemas")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// `(code, meaning)` pairs of one list in `error-codes.json`, checking each entry's shape.
fn published_list(document: &Value, list: &str) -> Vec<(String, String)> {
    let entries = document[list]
        .as_array()
        .unwrap_or_else(|| panic!("error-codes.json: \"{list}\" is not an array"));
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let object = entry
                .as_object()
                .unwrap_or_else(|| panic!("error-codes.json: {list}[{i}] is not an object"));
            let keys: BTreeSet<&str> = object.keys().map(String::as_str).collect();
            assert_eq!(
                keys,
                BTreeSet::from(["code", "meaning"]),
                "error-codes.json: {list}[{i}] must have exactly \"code\" and \"meaning\""
            );
            let field = |name: &str| {
                object[name]
                    .as_str()
                    .unwrap_or_else(|| {
                        panic!("error-codes.json: {list}[{i}].{name} is not a string")
                    })
                    .to_owned()
            };
            (field("code"), field("meaning"))
        })
        .collect()
}

fn engine_errors() -> Vec<(String, String)> {
    ErrorCode::ALL
        .iter()
        .map(|c| (c.as_str().to_owned(), c.meaning().to_owned()))
        .collect()
}

fn engine_flags() -> Vec<(String, String)> {
    FlagCode::ALL
        .iter()
        .map(|c| (c.as_str().to_owned(), c.meaning().to_owned()))
        .collect()
}

/// Prints a readable difference between two ordered lists of codes and meanings.
fn describe_difference(published: &[(String, String)], engine: &[(String, String)]) -> String {
    let mut lines = Vec::new();
    for i in 0..published.len().max(engine.len()) {
        let left = published.get(i);
        let right = engine.get(i);
        if left != right {
            lines.push(format!(
                "  #{i}: published {left:?}\n       engine    {right:?}"
            ));
        }
    }
    lines.join("\n")
}

#[test]
fn error_codes_json_has_exactly_two_lists() {
    let document = read_json(&schemas_dir().join("error-codes.json"));
    let keys: BTreeSet<&str> = document
        .as_object()
        .expect("error-codes.json must be an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, BTreeSet::from(["errors", "reviewFlags"]));
}

#[test]
fn error_codes_json_lists_the_engine_error_codes_in_order_with_their_meanings() {
    let document = read_json(&schemas_dir().join("error-codes.json"));
    let published = published_list(&document, "errors");
    let engine = engine_errors();
    assert!(
        published == engine,
        "schemas/error-codes.json \"errors\" differs from ErrorCode::ALL:\n{}",
        describe_difference(&published, &engine)
    );
}

#[test]
fn error_codes_json_lists_the_engine_review_flags_in_order_with_their_meanings() {
    let document = read_json(&schemas_dir().join("error-codes.json"));
    let published = published_list(&document, "reviewFlags");
    let engine = engine_flags();
    assert!(
        published == engine,
        "schemas/error-codes.json \"reviewFlags\" differs from FlagCode::ALL:\n{}",
        describe_difference(&published, &engine)
    );
}

#[test]
fn codes_are_unique_snake_case_and_round_trip() {
    let mut seen = BTreeSet::new();
    for code in ErrorCode::ALL {
        let text = code.as_str();
        assert!(seen.insert(text), "error code {text} is defined twice");
        assert!(
            !text.is_empty() && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "error code {text:?} is not snake_case"
        );
        assert_eq!(ErrorCode::from_code(text), Some(*code));
        assert_eq!(code.to_string(), text);
        assert!(
            !code.meaning().is_empty(),
            "error code {text} has no meaning"
        );
    }
    let mut seen_flags = BTreeSet::new();
    for flag in FlagCode::ALL {
        let text = flag.as_str();
        assert!(seen_flags.insert(text), "flag code {text} is defined twice");
        assert!(
            !text.is_empty() && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "flag code {text:?} is not snake_case"
        );
        assert_eq!(FlagCode::from_code(text), Some(*flag));
        assert_eq!(flag.to_string(), text);
        assert!(
            !flag.meaning().is_empty(),
            "flag code {text} has no meaning"
        );
    }
    assert_eq!(ErrorCode::from_code("no_such_code"), None);
    assert_eq!(FlagCode::from_code("no_such_flag"), None);
    // A flag is not an error and an error is not a flag.
    assert!(
        seen.is_disjoint(&seen_flags),
        "a code is both an error and a flag"
    );
}

#[test]
fn the_engine_defines_every_code_the_contract_requires() {
    let errors: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let missing: Vec<&&str> = CONTRACT_ERROR_CODES
        .iter()
        .filter(|c| !errors.contains(c))
        .collect();
    assert!(
        missing.is_empty(),
        "error codes required by the contract are missing: {missing:?}"
    );

    let flags: Vec<&str> = FlagCode::ALL.iter().map(|c| c.as_str()).collect();
    let mut expected = CONTRACT_FLAG_CODES.to_vec();
    expected.sort_unstable();
    let mut actual = flags.clone();
    actual.sort_unstable();
    assert_eq!(
        actual, expected,
        "review flags must be exactly the contract's"
    );
}

/// The `enum` of `$defs/<name>` in the outcome schema.
fn outcome_schema_enum(name: &str) -> Vec<String> {
    let schema = read_json(&schemas_dir().join("validation-outcome.schema.json"));
    let values = schema["$defs"][name]["enum"].as_array().unwrap_or_else(|| {
        panic!("validation-outcome.schema.json has no enum at /$defs/{name}/enum")
    });
    values
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("/$defs/{name}/enum holds a non-string: {v}"))
                .to_owned()
        })
        .collect()
}

#[test]
fn outcome_schema_error_code_enum_equals_the_engine_codes() {
    let engine: Vec<String> = ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(outcome_schema_enum("errorCode"), engine);
}

#[test]
fn outcome_schema_flag_code_enum_equals_the_engine_flags() {
    let engine: Vec<String> = FlagCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(outcome_schema_enum("flagCode"), engine);
}

#[test]
fn outcome_schema_uses_the_code_enums_where_codes_appear() {
    let schema = read_json(&schemas_dir().join("validation-outcome.schema.json"));
    let defs = &schema["$defs"];
    assert_eq!(
        defs["validationError"]["properties"]["code"]["$ref"],
        "#/$defs/errorCode"
    );
    assert_eq!(
        defs["reviewFlag"]["properties"]["code"]["$ref"],
        "#/$defs/flagCode"
    );
    assert_eq!(
        defs["criterionReport"]["properties"]["flags"]["items"]["$ref"],
        "#/$defs/flagCode"
    );
}

/// The engine's production sources: every `.rs` file under `engine/src` except `error.rs`, each
/// cut at its first `#[cfg(test)]` (unit tests come last in a file and raise nothing), with line
/// comments removed.
fn production_sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut pending = vec![manifest_dir().join("src")];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "error.rs")
            {
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
                let production = text.split("#[cfg(test)]").next().unwrap_or_default();
                let code: String = production
                    .lines()
                    .map(|line| match line.find("//") {
                        Some(at) => &line[..at],
                        None => line,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                files.push((path, code));
            }
        }
    }
    files.sort();
    assert!(files.len() > 1, "found no engine sources besides error.rs");
    files
}

/// Whether `text` holds `needle` not followed by another identifier character.
fn mentions(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(at, _)| {
        text[at + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

#[test]
fn every_error_code_is_raised_somewhere_in_the_engine() {
    let sources = production_sources();
    let unused: Vec<String> = ErrorCode::ALL
        .iter()
        .map(|c| format!("{c:?}"))
        .filter(|name| {
            let needle = format!("ErrorCode::{name}");
            !sources.iter().any(|(_, text)| mentions(text, &needle))
        })
        .collect();
    assert!(
        unused.is_empty(),
        "these ErrorCode variants appear in no engine source besides error.rs, so the engine can \
         never emit them: {unused:?}"
    );
}

#[test]
fn every_review_flag_is_raised_somewhere_in_the_engine() {
    let sources = production_sources();
    let unused: Vec<String> = FlagCode::ALL
        .iter()
        .map(|c| format!("{c:?}"))
        .filter(|name| {
            let needle = format!("FlagCode::{name}");
            !sources.iter().any(|(_, text)| mentions(text, &needle))
        })
        .collect();
    assert!(
        unused.is_empty(),
        "these FlagCode variants appear in no engine source besides error.rs, so the engine can \
         never raise them: {unused:?}"
    );
}
