//! Located field errors: the `error.details` of a 422 that lists every invalid query parameter,
//! path parameter or body field at once.
//!
//! `details` is `{"errors": [{"path", "code", "message"}], "truncated": false}`. For parameters the
//! path is the parameter's name; for JSON bodies it is the field's RFC 6901 JSON Pointer.

use serde_json::Value;

use super::ApiError;

/// One invalid parameter or field: the domain's [`crate::fields::FieldError`].
pub use crate::fields::FieldError;

pub use crate::error::{invalid_fields, invalid_parameters};

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
    fn pointer_tokens_are_escaped() {
        assert_eq!(pointer_token("a/b~c"), "a~1b~0c");
    }
}
