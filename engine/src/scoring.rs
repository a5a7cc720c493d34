//! Scoring.
use crate::{outcome::Report, submission::Submission};
pub(crate) fn score(_s: &Submission, _o: &[Vec<usize>], assets_checked: bool) -> Report { Report::new(assets_checked, Vec::new()) }
