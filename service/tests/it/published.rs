//! The service's one error registry ([`ErrorKind`]) is what is published: the error-code list
//! (`schemas/service-error-codes.json`), the OpenAPI document's enumeration of `error.code`, and
//! the guide's table of codes. Regenerate the list and the guide's table with
//! `EXAMKIT_BLESS=1 cargo test -p examkit --test it published::`.

use examkit::http::ErrorKind;
use serde_json::{Value, json};

fn expected() -> Value {
    let codes: Vec<Value> = ErrorKind::ALL
        .iter()
        .map(|k| json!({ "code": k.code(), "status": k.status_code(), "meaning": k.meaning() }))
        .collect();
    json!({
        "description": "Every error code the examkit HTTP service sends in error.code, with its HTTP status. Submission defects are reported under validation_failed, in error.details.errors, with the engine's codes (schemas/error-codes.json).",
        "codes": codes,
    })
}

#[test]
fn service_error_codes_are_published() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schemas/service-error-codes.json");
    let expected = expected();
    if std::env::var_os("EXAMKIT_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&expected).expect("json") + "\n";
        std::fs::write(&path, text).expect("write the published list");
    }
    let published: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the published list exists"))
            .expect("json");
    assert_eq!(published, expected, "regenerate with EXAMKIT_BLESS=1");
}

#[test]
fn openapi_is_valid_json_describing_version_1() {
    let openapi: Value = serde_json::from_str(examkit::http::docs::OPENAPI).expect("json");
    assert_eq!(openapi["openapi"], "3.1.0");
    assert_eq!(openapi["info"]["version"], "1.0.0");
    // Every $ref points at a component that exists.
    fn refs(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    if k == "$ref" {
                        out.push(v.as_str().unwrap_or_default().to_owned());
                    }
                    refs(v, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    refs(&openapi, &mut all);
    assert!(!all.is_empty());
    for r in all {
        let pointer = r.strip_prefix('#').expect("local reference");
        assert!(openapi.pointer(pointer).is_some(), "{r} resolves");
    }
}

#[test]
fn openapi_enumerates_every_error_code() {
    let openapi: Value = serde_json::from_str(examkit::http::docs::OPENAPI).expect("json");
    let listed: Vec<&str> = openapi
        .pointer("/components/schemas/Error/properties/error/properties/code/enum")
        .and_then(Value::as_array)
        .expect("Error.error.code has an enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let codes: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
    assert_eq!(
        listed, codes,
        "the OpenAPI enum lists the registry's codes in order"
    );
}

/// The guide's table of error codes, as the registry gives it.
fn guide_table() -> String {
    let mut table = String::from(
        "Error codes\n-----------\nEvery code the service sends in error.code, with its HTTP status.\n\n",
    );
    for kind in ErrorKind::ALL {
        table.push_str(&format!(
            "{} {:<32} {}\n",
            kind.status_code(),
            kind.code(),
            kind.meaning()
        ));
    }
    table
}

#[test]
fn the_guide_lists_every_error_code() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/http/guide.txt");
    let guide = std::fs::read_to_string(&path).expect("the guide");
    let heading = "Error codes\n-----------\n";
    let before = guide
        .find(heading)
        .map_or(guide.as_str(), |at| &guide[..at]);
    let expected = format!("{before}{}", guide_table());
    if std::env::var_os("EXAMKIT_BLESS").is_some() {
        std::fs::write(&path, &expected).expect("write the guide");
    }
    assert_eq!(
        examkit::http::docs::GUIDE,
        expected,
        "the guide ends with the table of every error code; regenerate with EXAMKIT_BLESS=1"
    );
}
