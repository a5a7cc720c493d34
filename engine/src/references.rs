//! References.
use crate::{Asset, error::ValidationError, submission::Submission};
pub(crate) fn check(_s: &Submission, _a: Option<&[Asset]>, _e: &mut Vec<ValidationError>) {}
