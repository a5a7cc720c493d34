//! Reading one question revision and its diagram files (`GET /v1/questions/{id}/revisions/{n}`).

use super::{Store, StoreError};

/// A stored revision that may be served: published or withdrawn.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ServedRevision {
    /// `published` or `withdrawn`.
    pub status: String,
    /// The pin's content version.
    pub content_version: String,
    /// The pin's scheme version.
    pub scheme_version: String,
    /// The revision object of the bank format, as JSON.
    pub body: String,
}

impl Store {
    /// A published or withdrawn revision; `None` for a draft or an unknown question or revision.
    pub async fn served_revision(
        &self,
        question_id: &str,
        revision: i64,
    ) -> Result<Option<ServedRevision>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT status, content_version, scheme_version, body FROM bank_revisions \
             WHERE question_id = $1 AND revision = $2 AND status IN ('published', 'withdrawn')",
        )
        .bind(question_id)
        .bind(revision)
        .fetch_optional(self.pool())
        .await?)
    }

    /// The bytes of a diagram file of a published or withdrawn revision; `None` when the asset is
    /// not one of that revision's.
    pub async fn revision_asset(
        &self,
        question_id: &str,
        revision: i64,
        asset_id: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(sqlx::query_scalar::<_, Vec<u8>>(
            "SELECT a.bytes FROM bank_revision_assets ra \
             JOIN bank_revisions r ON r.question_id = ra.question_id AND r.revision = ra.revision \
             JOIN bank_assets a ON a.id = ra.asset_id AND a.question_id = ra.question_id \
             WHERE ra.question_id = $1 AND ra.revision = $2 AND ra.asset_id = $3 \
             AND r.status IN ('published', 'withdrawn')",
        )
        .bind(question_id)
        .bind(revision)
        .bind(asset_id)
        .fetch_optional(self.pool())
        .await?)
    }
}
