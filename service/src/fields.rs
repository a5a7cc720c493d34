//! A problem with one field of a request: where it is (a JSON Pointer, or a parameter's name), a
//! stable code, and a sentence for people. The domain rooms report every problem they find as
//! these (a class set's body, a roster, a paper's body, a search's parameters, a reviewer's
//! decisions); the HTTP layer turns a list of them into its 422 in one place
//! (`http::fields`), and the app lists them on its forms as they are. Integers are read as JSON
//! Schema reads them ([`json_integer`]), by every body reader alike; query and path parameters
//! are checked by [`integer`] and [`uuid`].

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

/// Checks an integer parameter in `min..=max`: `type`, `minimum` or `maximum` otherwise.
pub fn integer(
    errors: &mut Vec<FieldError>,
    name: &str,
    value: &str,
    min: i64,
    max: i64,
) -> Option<i64> {
    let digits = value.strip_prefix('-').unwrap_or(value);
    let parsed = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for i64 is still an integer, just out of range.
        Some(value.parse::<i64>().unwrap_or(if value.starts_with('-') {
            i64::MIN
        } else {
            i64::MAX
        }))
    } else {
        None
    };
    match parsed {
        None => {
            errors.push(FieldError::new(
                name,
                "type",
                format!("{name} must be an integer from {min} to {max}, not {value:?}"),
            ));
            None
        }
        Some(n) if n < min => {
            errors.push(FieldError::new(
                name,
                "minimum",
                format!("{name} must be at least {min}, not {value}"),
            ));
            None
        }
        Some(n) if n > max => {
            errors.push(FieldError::new(
                name,
                "maximum",
                format!("{name} must be at most {max}, not {value}"),
            ));
            None
        }
        Some(n) => Some(n),
    }
}

/// Checks a UUID parameter (canonical 36-character form, any case) and returns it lowercase
/// hyphenated: `format` otherwise.
pub fn uuid(errors: &mut Vec<FieldError>, name: &str, value: &str) -> Option<String> {
    match uuid::Uuid::try_parse(value) {
        Ok(id) if value.len() == 36 => Some(id.hyphenated().to_string()),
        _ => {
            errors.push(FieldError::new(
                name,
                "format",
                format!("{name} must be a UUID (8-4-4-4-12 hexadecimal digits), not {value:?}"),
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FieldError, integer, uuid};

    #[test]
    fn an_integer_parameter_is_read_or_located_with_its_code() {
        let mut errors = Vec::new();
        assert_eq!(integer(&mut errors, "limit", "20", 1, 100), Some(20));
        assert_eq!(integer(&mut errors, "offset", "-3", -5, 5), Some(-3));
        assert!(errors.is_empty());
        for (value, code) in [
            ("", "type"),
            ("2.5", "type"),
            ("1e3", "type"),
            ("+4", "type"),
            ("-", "type"),
            ("0", "minimum"),
            ("-99999999999999999999", "minimum"),
            ("101", "maximum"),
            ("99999999999999999999", "maximum"),
        ] {
            let mut errors = Vec::new();
            assert_eq!(
                integer(&mut errors, "limit", value, 1, 100),
                None,
                "{value:?}"
            );
            assert_eq!(errors.len(), 1, "{value:?}");
            assert_eq!(
                (errors[0].path.as_str(), errors[0].code),
                ("limit", code),
                "{value:?}"
            );
        }
    }

    #[test]
    fn a_uuid_parameter_is_lowercased_or_refused() {
        let mut errors = Vec::new();
        assert_eq!(
            uuid(
                &mut errors,
                "paperId",
                "6F9619FF-8B86-D011-B42D-00C04FC964FF"
            )
            .as_deref(),
            Some("6f9619ff-8b86-d011-b42d-00c04fc964ff")
        );
        assert!(errors.is_empty());
        for value in [
            "",
            "6f9619ff8b86d011b42d00c04fc964ff",
            "{6f9619ff-8b86-d011-b42d-00c04fc964ff}",
            "6f9619ff-8b86-d011-b42d-00c04fc964fg",
        ] {
            let mut errors = Vec::new();
            assert_eq!(uuid(&mut errors, "paperId", value), None, "{value:?}");
            assert_eq!(
                (errors[0].path.as_str(), errors[0].code),
                ("paperId", "format")
            );
        }
    }

    #[test]
    fn a_field_error_serialises_path_code_message_in_order() {
        let error = FieldError::new("/title", "max_length", "title is too long");
        assert_eq!(
            serde_json::to_string(&error).expect("serialises"),
            r#"{"path":"/title","code":"max_length","message":"title is too long"}"#
        );
    }
}
