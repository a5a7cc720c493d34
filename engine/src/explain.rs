//! Explain.
use crate::Outcome;
/// A human-readable report of an outcome.
pub fn explain(outcome: &Outcome) -> String { outcome.to_json_pretty() }
