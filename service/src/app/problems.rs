//! The problems of a refused request as a page lists them: the field errors
//! ([`crate::fields::FieldError`]) an `invalid_fields` or `invalid_parameters` error of the shared
//! registry ([`crate::error::ApiError`]) carries, so a form shows the same sentences an API client
//! reads.

use crate::error::ApiError;
use crate::fields::FieldError;

/// The problems an error lists (`invalid_fields`, `invalid_parameters`); `None` for another error.
pub fn listed(e: &ApiError) -> Option<Vec<FieldError>> {
    match e {
        ApiError::InvalidFields { errors, .. } | ApiError::InvalidParameters { errors, .. } => {
            Some(errors.clone())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_lists_its_field_errors() {
        let e = crate::error::invalid_fields(vec![
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
