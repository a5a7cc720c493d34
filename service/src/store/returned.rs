//! What returning marked scripts reads beyond the rest of the store: which stack file each work
//! file of a class-set script's session views.

use super::{Store, StoreError};

impl Store {
    /// The views among a session's assets, each with the asset it views: `(view, source)`, in
    /// upload order. A class-set script's work files are views of the stack's files.
    pub async fn view_sources(
        &self,
        session_id: &str,
    ) -> Result<Vec<(String, String)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, source_asset_id FROM assets \
             WHERE session_id = $1 AND source_asset_id IS NOT NULL ORDER BY created_at, id",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?)
    }
}
