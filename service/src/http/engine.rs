//! The engine behind the HTTP layer: the assets it checks against, running it off the async
//! threads, and the names of its statuses. Shared by imports and automated marking.

use examkit_engine::{Asset, Outcome};

use super::ApiError;
use crate::store::marking::AssetRow;

/// The engine's view of a session's assets.
pub fn engine_assets(assets: &[AssetRow]) -> Result<Vec<Asset>, ApiError> {
    assets
        .iter()
        .map(|a| a.to_engine().ok_or(ApiError::Internal))
        .collect()
}

/// Runs the engine off the async threads.
pub async fn run_engine(
    document: Vec<u8>,
    assets: Vec<Asset>,
) -> Result<(Vec<u8>, Outcome), ApiError> {
    tokio::task::spawn_blocking(move || {
        let outcome = examkit_engine::validate(&document, Some(&assets));
        (document, outcome)
    })
    .await
    .map_err(|_| ApiError::Internal)
}

/// The stable name of a status.
pub fn status_str(status: examkit_engine::Status) -> &'static str {
    match status {
        examkit_engine::Status::Completed => "completed",
        examkit_engine::Status::NeedsReview => "needs_review",
    }
}
