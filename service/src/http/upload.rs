//! One uploaded file, as every upload route receives it (a session's or an import's assets, a
//! class set's scans): the query's `name`, the declared and sniffed content type, the size and
//! page limits.

use super::{ApiError, Body, Ctx, read_body};
use crate::inspect::{self, FileType, InspectError, MAX_FILE_BYTES, MAX_PDF_PAGES};

/// The longest upload name, in characters.
pub const MAX_NAME_CHARS: usize = 180;

/// A received file.
#[derive(Debug)]
pub struct ReceivedFile {
    /// The name it was uploaded with.
    pub name: String,
    /// Its type, declared and sniffed alike.
    pub file_type: FileType,
    /// Its pages.
    pub pages: usize,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

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
    check(&ctx.state.marking, name, declared_type, bytes).await
}

/// Checks a file's bytes: not empty, of the type declared, readable, within the page limit.
/// The bytes are read through the page processes ([`crate::untrusted`]).
pub async fn check(
    marking: &crate::marking::MarkingConfig,
    name: String,
    declared_type: FileType,
    bytes: Vec<u8>,
) -> Result<ReceivedFile, ApiError> {
    if bytes.is_empty() {
        return Err(ApiError::EmptyBody);
    }
    match FileType::sniff(&bytes) {
        Some(actual) if actual == declared_type => {}
        Some(actual) => {
            return Err(ApiError::ContentTypeMismatch(format!(
                "the body is {} but Content-Type says {}",
                actual.media_type(),
                declared_type.media_type()
            )));
        }
        None => {
            return Err(ApiError::ContentTypeMismatch(format!(
                "the body is not a PDF, PNG, JPEG or WebP file, although Content-Type says {}",
                declared_type.media_type()
            )));
        }
    }
    let dpi = marking.dpi;
    let pages = marking.pages.clone();
    let (bytes, counted) = tokio::task::spawn_blocking(move || {
        let counted = inspect::page_count(&pages, declared_type, &bytes, dpi);
        (bytes, counted)
    })
    .await
    .map_err(|_| ApiError::Internal)?;
    let pages = match counted {
        Ok(pages) if pages > MAX_PDF_PAGES => return Err(ApiError::TooManyPages(pages)),
        Ok(pages) => pages,
        Err(InspectError::Unreadable(message)) => {
            return Err(ApiError::UnreadableFile(message));
        }
        Err(InspectError::Unavailable(message)) => {
            tracing::error!(error = %message, "an upload could not be checked");
            return Err(ApiError::ServiceUnavailable(
                "the file cannot be checked now; try again shortly".into(),
            ));
        }
    };
    Ok(ReceivedFile {
        name,
        file_type: declared_type,
        pages,
        bytes,
    })
}
