//! A scanned file added to a set's stack, whoever sends it: the file (already checked by
//! [`crate::inspect::check`]) is stored with its pages queued to be read, within the set's
//! file and size limits and the account's daily pages. `POST /v1/class-sets/{id}/scans` and the
//! app's upload form both come here; a file sent later joins the same stack.

use crate::auth::sha256_hex;
use crate::error::ApiError;
use crate::inspect::ReceivedFile;
use crate::server::state::AppState;
use crate::store::class_sets::stacks::{AddStackFileError, NewStackFile};

/// Adds `file` to the stack of the account's set `set_id`: the stored file.
pub async fn add(
    state: &AppState,
    user_id: &str,
    set_id: &str,
    file: &ReceivedFile,
) -> Result<crate::store::marking::AssetRow, ApiError> {
    let config = &state.marking;
    let sha = sha256_hex(&file.bytes);
    let added = state
        .store
        .add_stack_file(
            user_id,
            set_id,
            &NewStackFile {
                name: &file.name,
                content_type: file.file_type.media_type(),
                page_count: i64::try_from(file.pages).unwrap_or(i64::MAX),
                sha256: &sha,
                bytes: &file.bytes,
            },
            &config.allowance,
            config.max_attempts,
        )
        .await;
    match added {
        Ok(asset) => Ok(asset),
        Err(AddStackFileError::NotFound) => Err(ApiError::NotFound("class set")),
        Err(AddStackFileError::TooManyFiles) => Err(ApiError::TooManyFiles),
        Err(AddStackFileError::TooLarge) => Err(ApiError::SessionTooLarge),
        Err(AddStackFileError::AllowanceExceeded {
            used,
            needed,
            retry_after,
        }) => Err(ApiError::AllowanceExhausted {
            message: format!(
                "reading this file needs {needed} pages; {used} of today's {} pages are used",
                config.allowance.pages_per_day
            ),
            retry_after,
        }),
        Err(AddStackFileError::Store(e)) => Err(e.into()),
    }
}
