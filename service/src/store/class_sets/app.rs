//! What the app's list of class sets shows of every set at once, in two queries rather than a
//! stack and its scripts read per set: each set's paper title and how far its stack is read, and
//! each current script's progress (see `crate::class_sets::overview`).

use super::{SET_COLUMNS, SetRow};
use crate::store::{Store, StoreError};

/// A set with its paper's title and its stack's progress.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SetSummaryRow {
    /// The set.
    #[sqlx(flatten)]
    pub set: SetRow,
    /// The title of the paper revision printed.
    pub paper_title: Option<String>,
    /// Files of its stack.
    pub files: i64,
    /// Pages of those files.
    pub pages: i64,
    /// Of those, the pages indexing has finished with (read, or failed).
    pub pages_read: i64,
}

/// One current script's progress, for a list.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ScriptCountRow {
    /// The set.
    pub set_id: String,
    /// The copy.
    pub copy: i64,
    /// Its questions.
    pub questions: i64,
    /// Of those, queued or being marked.
    pub waiting: i64,
    /// Its session's jobs still queued or running.
    pub pending_jobs: i64,
}

impl Store {
    /// The account's class sets, newest first (at most [`super::LIST_LIMIT`]), each
    /// with its paper's title and its stack's progress.
    pub async fn class_set_summaries(
        &self,
        user_id: &str,
    ) -> Result<Vec<SetSummaryRow>, StoreError> {
        let columns: String = SET_COLUMNS
            .split(", ")
            .map(|c| format!("s.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(
            sqlx::query_as::<_, SetSummaryRow>(sqlx::AssertSqlSafe(format!(
                "SELECT {columns}, \
             (SELECT r.title FROM paper_revisions r WHERE r.user_id = s.user_id \
                 AND r.paper_id = s.paper_id AND r.revision = s.revision) AS paper_title, \
             (SELECT COUNT(*) FROM assets a WHERE a.session_id = s.stack_session_id) AS files, \
             (SELECT CAST(COALESCE(SUM(a.page_count), 0) AS BIGINT) FROM assets a \
                 WHERE a.session_id = s.stack_session_id) AS pages, \
             (SELECT COUNT(*) FROM asset_pages p WHERE p.session_id = s.stack_session_id) \
                 AS pages_read \
             FROM class_sets s WHERE s.user_id = $1 \
             ORDER BY s.created_at DESC, s.id LIMIT $2"
            )))
            .bind(user_id)
            .bind(super::LIST_LIMIT)
            .fetch_all(self.pool())
            .await?,
        )
    }

    /// The current scripts of every class set of the account, with their progress.
    pub async fn class_set_script_counts(
        &self,
        user_id: &str,
    ) -> Result<Vec<ScriptCountRow>, StoreError> {
        Ok(sqlx::query_as::<_, ScriptCountRow>(
            "SELECT c.class_set_id AS set_id, c.copy AS copy, \
             (SELECT COUNT(*) FROM marking_questions q WHERE q.session_id = c.session_id) \
                 AS questions, \
             (SELECT COUNT(*) FROM marking_questions q WHERE q.session_id = c.session_id \
                 AND q.status IN ('queued', 'running')) AS waiting, \
             (SELECT COUNT(*) FROM marking_jobs j WHERE j.session_id = c.session_id \
                 AND j.state IN ('queued', 'running')) AS pending_jobs \
             FROM class_set_scripts c JOIN class_sets s ON s.id = c.class_set_id \
             WHERE s.user_id = $1 AND c.superseded_at IS NULL ORDER BY c.class_set_id, c.copy",
        )
        .bind(user_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// The title of a paper revision of the account.
    pub async fn paper_revision_title(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: i64,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT title FROM paper_revisions \
             WHERE user_id = $1 AND paper_id = $2 AND revision = $3",
        )
        .bind(user_id)
        .bind(paper_id)
        .bind(revision)
        .fetch_optional(self.pool())
        .await?)
    }
}
