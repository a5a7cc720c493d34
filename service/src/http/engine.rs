//! How the engine's failures answer over HTTP. Running the engine is
//! [`crate::marked::engine`]'s.

use super::ApiError;
use crate::marked::engine::EngineError;

impl From<EngineError> for ApiError {
    /// The engine could not be run: the service's fault, logged and not sent.
    fn from(e: EngineError) -> Self {
        tracing::error!(error = %e, code = e.code(), "the engine could not be run");
        ApiError::Internal
    }
}
