//! A saved paper's structured scheme, as a session made from the paper marks against it:
//! question by question in paper order, each question's label (its number), its bank question
//! and revision, and the parts and criteria the PDFs were typeset from.

use serde_json::{Value, json};

use crate::store::StoreError;
use crate::store::papers::{BankRevision, Pin};

/// The scheme of a paper of `pins`, from their bank revisions. A stored revision that is not
/// JSON is corrupt data.
pub fn paper_scheme(pins: &[Pin], bank: &[BankRevision]) -> Result<Value, StoreError> {
    let mut questions = Vec::with_capacity(bank.len());
    for (n, (pin, stored)) in pins.iter().zip(bank).enumerate() {
        let revision: Value = serde_json::from_str(&stored.body).map_err(|e| {
            StoreError::Corrupt(format!(
                "bank revision {}/{} is not JSON: {e}",
                pin.question_id, pin.revision
            ))
        })?;
        questions.push(json!({
            "label": (n + 1).to_string(),
            "questionId": pin.question_id,
            "revision": pin.revision,
            "title": revision["title"],
            "marks": revision["marks"],
            "parts": revision["scheme"]["parts"],
            "criteria": revision["scheme"]["criteria"],
        }));
    }
    Ok(json!({ "questions": questions }))
}
