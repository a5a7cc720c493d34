//! Located field errors: the `error.details` of a 422 that lists every invalid query parameter,
//! path parameter or body field at once.
//!
//! `details` is `{"errors": [{"path", "code", "message"}], "truncated": false}`. For parameters the
//! path is the parameter's name; for JSON bodies it is the field's RFC 6901 JSON Pointer.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::ApiError;

/// One invalid parameter or field: the domain's [`crate::fields::FieldError`].
pub use crate::fields::FieldError;

/// `{"errors": [...], "truncated": false}`: the `error.details` of a 422 that lists field errors,
/// the one place they become part of a response.
pub(super) fn details(errors: &[FieldError]) -> Option<Box<RawValue>> {
    #[derive(Serialize)]
    struct Details<'a> {
        errors: &'a [FieldError],
        truncated: bool,
    }
    serde_json::to_string(&Details {
        errors,
        truncated: false,
    })
    .ok()
    .and_then(|s| RawValue::from_string(s).ok())
}

fn summary(kind: &str, errors: &[FieldError]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for e in errors {
        let name = if e.path.is_empty() {
            "(the body)"
        } else {
            e.path.as_str()
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    format!(
        "invalid {kind}{} {}; see error.details.errors",
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    )
}

/// The 422 for invalid query or path parameters (`invalid_parameters`).
pub fn invalid_parameters(errors: Vec<FieldError>) -> ApiError {
    ApiError::InvalidParameters {
        message: summary("parameter", &errors),
        errors,
    }
}

/// The 422 for invalid JSON body fields (`invalid_fields`).
pub fn invalid_fields(errors: Vec<FieldError>) -> ApiError {
    ApiError::InvalidFields {
        message: summary("field", &errors),
        errors,
    }
}

/// Escapes one reference token of a JSON Pointer (`~` → `~0`, `/` → `~1`): the engine's, so every
/// surface locates a field as the engine does.
pub use examkit_engine::pointer_token;

/// Integers as JSON Schema reads them, shared with the domain rooms that read bodies.
pub use crate::fields::{integer_field, json_integer};

/// Parses a JSON request body into `T`, telling syntax errors (`invalid_json`) from shape errors
/// (`invalid_body`). The body must be a JSON object: serde's derived structs would also read a
/// JSON array as a struct, field by field in order, so an array (or a string, a number, `null`)
/// is refused here before `T` sees it. The request types it is used with are flat (their nested
/// values are checked field by field, or by the engine), so the top level is the only place a
/// struct can be read.
pub fn parse_json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => {
            ApiError::InvalidBody(format!("the body does not have the expected fields: {e}"))
        }
        _ => ApiError::InvalidJson(e.to_string()),
    })?;
    if !value.is_object() {
        return Err(ApiError::InvalidBody(format!(
            "the body must be a JSON object, not {}",
            json_kind(&value)
        )));
    }
    serde_json::from_value(value).map_err(|e| {
        ApiError::InvalidBody(format!("the body does not have the expected fields: {e}"))
    })
}

pub use crate::fields::json_kind;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_name_each_path_once() {
        let errors = vec![
            FieldError::new("/title", "type", "x"),
            FieldError::new("/title", "min_length", "y"),
            FieldError::new("", "unknown_field", "z"),
        ];
        assert_eq!(
            summary("field", &errors),
            "invalid fields /title, (the body); see error.details.errors"
        );
        let ApiError::InvalidFields { errors, .. } = invalid_fields(errors) else {
            panic!("invalid_fields");
        };
        let details = details(&errors).expect("details");
        let value: serde_json::Value = serde_json::from_str(details.get()).expect("json");
        assert_eq!(value["errors"][1]["code"], "min_length");
        assert_eq!(value["truncated"], false);
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(pointer_token("a/b~c"), "a~1b~0c");
    }
}
