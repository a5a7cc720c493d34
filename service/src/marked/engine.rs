//! The engine as the service runs it: the assets a document is checked against, running the
//! engine (off the async threads unless the document is small), and the names of its statuses.
//! Imports, reviews and automated marking all score questions through here.

use examkit_engine::{Asset, Outcome, Status};

use crate::store::marking::AssetRow;
use crate::store::words::QuestionStatus;

/// Why the engine could not be run.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A stored asset cannot be given to the engine (its id is not a UUID, or its page count is
    /// out of range).
    #[error("asset {0} cannot be given to the engine")]
    UnusableAsset(String),
    /// The blocking task that ran the engine stopped before it answered.
    #[error("the engine's task stopped: {0}")]
    Stopped(#[from] tokio::task::JoinError),
}

impl EngineError {
    /// The stable code of the failure.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::UnusableAsset(_) => "unusable_asset",
            EngineError::Stopped(_) => "engine_stopped",
        }
    }
}

/// The engine's view of a session's assets: every one of them, or an error naming the first that
/// cannot be given to it.
pub fn engine_assets(assets: &[AssetRow]) -> Result<Vec<Asset>, EngineError> {
    assets
        .iter()
        .map(|a| {
            a.to_engine()
                .ok_or_else(|| EngineError::UnusableAsset(a.id.clone()))
        })
        .collect()
}

/// Documents up to this size are checked on the async thread that received them. The typical
/// import is about 10 KiB and the engine checks it in about 65 µs, about what a hand-over to the
/// blocking pool and back costs in wake-ups; larger documents (up to the engine's 4 MiB limit,
/// milliseconds of work) go to the blocking pool so they never hold up other requests.
const INLINE_BYTES: usize = 16 * 1024;

/// Runs the engine: in place for a small document, otherwise off the async threads. The document
/// is handed back with the outcome.
pub async fn run_engine(
    document: Vec<u8>,
    assets: Vec<Asset>,
) -> Result<(Vec<u8>, Outcome), EngineError> {
    if document.len() <= INLINE_BYTES {
        let outcome = examkit_engine::validate(&document, Some(&assets));
        return Ok((document, outcome));
    }
    let checked = tokio::task::spawn_blocking(move || {
        let outcome = examkit_engine::validate(&document, Some(&assets));
        (document, outcome)
    })
    .await?;
    Ok(checked)
}

/// The question status an engine status saves as.
pub fn question_status(status: Status) -> QuestionStatus {
    match status {
        Status::Completed => QuestionStatus::Completed,
        Status::NeedsReview => QuestionStatus::NeedsReview,
    }
}
