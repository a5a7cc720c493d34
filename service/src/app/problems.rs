//! The problems of a refused request as a page lists them: the `{path, code, message}` of each
//! field or parameter the shared error registry ([`crate::http::ApiError`]) reports, read back
//! from the details it carries, so a form shows the same sentences an API client reads.

use serde::Deserialize;

use crate::http::ApiError;
use crate::http::fields::FieldError;

/// One problem: where, its stable code, and the sentence for people.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Listed {
    /// The field's JSON Pointer or the parameter's name.
    pub path: String,
    /// The stable code.
    pub code: String,
    /// What is wrong.
    pub message: String,
}

#[derive(Deserialize)]
struct Details {
    errors: Vec<Listed>,
}

/// The problems an error lists (`invalid_fields`, `invalid_parameters`); `None` for another error.
pub fn listed(e: &ApiError) -> Option<Vec<Listed>> {
    let details = match e {
        ApiError::InvalidFields { details, .. } | ApiError::InvalidParameters { details, .. } => {
            details
        }
        _ => return None,
    };
    serde_json::from_str::<Details>(details.get())
        .ok()
        .map(|d| d.errors)
}

/// Field problems found before any request was made.
pub fn from_fields(errors: Vec<FieldError>) -> Vec<Listed> {
    errors
        .into_iter()
        .map(|e| Listed {
            path: e.path,
            code: e.code.to_owned(),
            message: e.message,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_details_read_back() {
        let e = crate::http::fields::invalid_fields(vec![
            FieldError::new("/title", "max_length", "too long"),
            FieldError::new("/questions/0", "pin_unknown", "no such pin"),
        ]);
        let listed = listed(&e).expect("listed");
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[1].path, "/questions/0");
        assert_eq!(listed[1].code, "pin_unknown");
        assert_eq!(listed[1].message, "no such pin");
        assert_eq!(super::listed(&ApiError::PaperExists), None);
    }
}
