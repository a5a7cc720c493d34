//! Structure.
use crate::error::ValidationError;
use crate::json::Node;
use crate::submission::Submission;
pub(crate) fn read(_root: &Node<'_>, _errors: &mut Vec<ValidationError>) -> Submission { Submission }
