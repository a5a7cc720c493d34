//! A problem with one field of a request: where it is (a JSON Pointer, or a parameter's name), a
//! stable code, and a sentence for people. The domain rooms report every problem they find as
//! these (a class set's body, a roster, a paper's body, a search's parameters, a reviewer's
//! decisions); the HTTP layer turns a list of them into its 422 in one place
//! (`http::fields`), and the app lists them on its forms as they are. Integers are read as JSON
//! Schema reads them ([`json_integer`]), by every body reader alike.

use serde::Serialize;

/// One invalid field or parameter. Serialises as `{"path", "code", "message"}`, in that order,
/// as `error.details.errors` of a 422 lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// The body field's RFC 6901 JSON Pointer (`""` for the body), or the parameter's name.
    pub path: String,
    /// What is wrong, a stable code (the field-error codes of `schemas/README.md`, or an engine
    /// error code).
    pub code: &'static str,
    /// A sentence for people; not stable.
    pub message: String,
}

impl FieldError {
    /// A field error.
    pub fn new(path: &str, code: &'static str, message: impl Into<String>) -> FieldError {
        FieldError {
            path: path.to_owned(),
            code,
            message: message.into(),
        }
    }
}

/// The integer a JSON number holds, as JSON Schema reads it: `3` and `3.0` are both the integer 3
/// (a number whose fractional part is zero is an integer), `3.5` is not one. `None` for anything
/// else, and for integers outside `i64`.
pub fn json_integer(value: &serde_json::Value) -> Option<i64> {
    if let Some(n) = value.as_i64() {
        return Some(n);
    }
    let f = value.as_f64()?;
    // i64::MAX as f64 rounds up to 2^63, which is out of range.
    (f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64).then_some(f as i64)
}

/// Deserializes an integer field as [`json_integer`] reads it, so `"revision": 2.0` is 2 as the
/// published schemas say.
pub fn integer_field<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    use serde::Deserialize;
    let value = serde_json::Value::deserialize(deserializer)?;
    json_integer(&value).ok_or_else(|| {
        serde::de::Error::invalid_type(
            serde::de::Unexpected::Other(&value.to_string()),
            &"an integer",
        )
    })
}

/// What kind of JSON value this is, for error messages.
pub fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::FieldError;

    #[test]
    fn a_field_error_serialises_path_code_message_in_order() {
        let error = FieldError::new("/title", "max_length", "title is too long");
        assert_eq!(
            serde_json::to_string(&error).expect("serialises"),
            r#"{"path":"/title","code":"max_length","message":"title is too long"}"#
        );
    }
}
