//! The typed submission.
pub(crate) struct Submission;
