//! What the results of a set of scripts read beyond their questions: who last decided each
//! criterion, for every question of a session at once (see `crate::results`).

use std::collections::HashMap;

use sqlx::FromRow;

use super::marking::{LoggedDecision, LoggedRow};
use super::{Store, StoreError};

/// The latest logged review of each criterion, by question id and then criterion id.
pub type SessionReviews = HashMap<String, HashMap<String, LoggedDecision>>;

impl Store {
    /// The latest logged review of each criterion of every question of a session, in one query.
    pub async fn session_reviews(&self, session_id: &str) -> Result<SessionReviews, StoreError> {
        let rows: Vec<QuestionLoggedRow> = sqlx::query_as(
            "SELECT r.question_id, r.criterion_id, r.revision, r.outcome, r.reviewer_kind, \
             r.reviewer_name, r.decided_at FROM review_log r \
             JOIN marking_questions q ON q.id = r.question_id \
             WHERE q.session_id = $1 ORDER BY r.question_id, r.revision",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?;
        let mut latest: SessionReviews = HashMap::new();
        for row in rows {
            latest
                .entry(row.question_id)
                .or_default()
                .insert(row.logged.criterion_id, row.logged.decision);
        }
        Ok(latest)
    }
}

/// A `review_log` row with its question.
#[derive(FromRow)]
struct QuestionLoggedRow {
    question_id: String,
    #[sqlx(flatten)]
    logged: LoggedRow,
}
