//! The published error-code list (`schemas/service-error-codes.json`) matches the service.
//! Regenerate it with `EXAMKIT_BLESS=1 cargo test -p examkit --test published`.

use examkit::http::ApiError;
use serde_json::{Value, json};

fn expected() -> Value {
    let codes: Vec<Value> = ApiError::CODES
        .iter()
        .map(
            |(code, status, meaning)| json!({ "code": code, "status": status, "meaning": meaning }),
        )
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
