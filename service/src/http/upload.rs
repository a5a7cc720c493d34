//! One uploaded file, as every upload route receives it (a session's or an import's assets, a
//! class set's scans): the query's `name`, the declared content type and the size limit, then
//! the file's own check ([`crate::inspect::check`]); and how a refused file is answered.

use super::{ApiError, Body, Ctx, read_body};
use crate::inspect::{self, FileRefused, FileType, MAX_FILE_BYTES, ReceivedFile};

/// The longest upload name, in characters.
pub const MAX_NAME_CHARS: usize = 180;

/// Receives one file named `name` (the query's `name`). `open` is `Err` with the error to answer
/// when the file's destination takes no more files; it is answered after the name and content
/// type are checked and before the body is read.
pub async fn receive_file(
    ctx: &Ctx,
    name: Option<String>,
    body: Body,
    open: Result<(), ApiError>,
) -> Result<ReceivedFile, ApiError> {
    let name = name.unwrap_or_default();
    let name_chars = name.chars().count();
    if name.trim().is_empty() || name_chars > MAX_NAME_CHARS {
        return Err(ApiError::InvalidQuery(format!(
            "the query parameter name is required, 1 to {MAX_NAME_CHARS} characters"
        )));
    }
    // The name is metadata only: files live in the database, never at a path derived from it, so
    // `/` and `..` are kept verbatim. Control characters (NUL included) are refused because they
    // would corrupt logs, exports and the names shown to people.
    if name.chars().any(char::is_control) {
        return Err(ApiError::InvalidQuery(
            "the query parameter name must not contain control characters".into(),
        ));
    }
    let declared = ctx
        .headers
        .get(warp::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some(declared_type) = FileType::from_content_type(declared) else {
        return Err(ApiError::UnsupportedMediaType(format!(
            "uploads take Content-Type application/pdf, image/png, image/jpeg or image/webp, not {:?}",
            if declared.is_empty() {
                "(none)"
            } else {
                declared
            }
        )));
    };
    open?;
    let bytes = read_body(ctx, body, MAX_FILE_BYTES, ApiError::FileTooLarge).await?;
    Ok(inspect::check(&ctx.state.marking, name, declared_type, bytes).await?)
}

impl From<FileRefused> for ApiError {
    fn from(refused: FileRefused) -> ApiError {
        match refused {
            FileRefused::Empty => ApiError::EmptyBody,
            FileRefused::NotDeclaredType(message) => ApiError::ContentTypeMismatch(message),
            FileRefused::TooManyPages(pages) => ApiError::TooManyPages(pages),
            FileRefused::Unreadable(message) => ApiError::UnreadableFile(message),
            FileRefused::Unavailable(message) => {
                tracing::error!(error = %message, "an upload could not be checked");
                ApiError::ServiceUnavailable(
                    "the file cannot be checked now; try again shortly".into(),
                )
            }
            FileRefused::CheckStopped => ApiError::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_is_answered_with_its_own_code() {
        let answered = [
            (FileRefused::Empty, "empty_body", 400),
            (
                FileRefused::NotDeclaredType("png, not pdf".into()),
                "content_type_mismatch",
                415,
            ),
            (FileRefused::TooManyPages(81), "too_many_pages", 422),
            (
                FileRefused::Unreadable("bad xref".into()),
                "unreadable_file",
                422,
            ),
            (
                FileRefused::Unavailable("no page process".into()),
                "service_unavailable",
                503,
            ),
            (FileRefused::CheckStopped, "internal_error", 500),
        ];
        for (refused, code, status) in answered {
            let error = ApiError::from(refused.clone());
            assert_eq!(
                (error.code(), error.status().as_u16()),
                (code, status),
                "{refused:?}"
            );
        }
    }
}
