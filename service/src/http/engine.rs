//! The engine behind the HTTP layer: the assets it checks against, running it (off the async
//! threads unless the document is small), and the names of its statuses. Shared by imports and
//! automated marking.

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

/// Documents up to this size are checked on the async thread that received them. The typical
/// import is about 10 KiB and the engine checks it in about 65 µs, about what a hand-over to the
/// blocking pool and back costs in wake-ups; larger documents (up to the engine's 4 MiB limit,
/// milliseconds of work) go to the blocking pool so they never hold up other requests.
const INLINE_BYTES: usize = 16 * 1024;

/// Runs the engine: in place for a small document, otherwise off the async threads.
pub async fn run_engine(
    document: Vec<u8>,
    assets: Vec<Asset>,
) -> Result<(Vec<u8>, Outcome), ApiError> {
    if document.len() <= INLINE_BYTES {
        let outcome = examkit_engine::validate(&document, Some(&assets));
        return Ok((document, outcome));
    }
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
