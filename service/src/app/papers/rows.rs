//! A paper's questions as its pages show them: each pin with its title, marks and content, the
//! maths typeset before the page is drawn.

use crate::app::{AppError, Signed, content};
use crate::store::papers::Pin;

/// One question of a paper as the builder shows it.
pub(super) struct Row {
    pub(super) pin: Pin,
    pub(super) title: String,
    pub(super) marks: i64,
    pub(super) revision: Option<examkit_bank::Revision>,
}

pub(super) async fn rows(signed: &Signed, pins: &[Pin]) -> Result<Vec<Row>, AppError> {
    let store = &signed.visit.state.store;
    let mut rows = Vec::with_capacity(pins.len());
    for pin in pins {
        let stored = store.bank_revision(&pin.question_id, pin.revision).await?;
        let revision = stored
            .as_ref()
            .and_then(|s| content::read(&s.body, &pin.question_id));
        rows.push(Row {
            pin: pin.clone(),
            title: revision.as_ref().map_or_else(
                || "A question no longer in the bank".to_owned(),
                |r| r.title.clone(),
            ),
            marks: stored.as_ref().map_or(0, |s| s.marks),
            revision,
        });
    }
    // Every piece of maths the rows show, typeset before the page is drawn.
    signed
        .visit
        .state
        .maths
        .prepare(
            rows.iter()
                .filter_map(|r| r.revision.as_ref())
                .flat_map(content::texts),
        )
        .await;
    Ok(rows)
}
