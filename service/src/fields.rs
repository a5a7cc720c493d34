//! A problem with one field of a request: where it is (a JSON Pointer, or a parameter's name), a
//! stable code, and a sentence for people. The domain rooms report every problem they find as
//! these (a class set's body, a roster, a paper's body, a search's parameters, a reviewer's
//! decisions); the HTTP layer turns a list of them into its 422 in one place
//! (`http::fields`), and the app lists them on its forms as they are.

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
