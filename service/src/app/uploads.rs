//! Uploading a class set's scanned stack from its page: several files in one form
//! (`multipart/form-data`, a file input with `multiple`), or one file a request from the page's
//! script, which shows each file's progress. Each file is checked as `POST
//! /v1/class-sets/{id}/scans` checks it ([`crate::inspect::check`], through the page
//! processes) and added by the same path ([`crate::class_sets::uploads::add`]); a file found
//! later joins the same stack. Each file's outcome is said in words: added with its pages, or
//! refused and why (too large, unreadable, too many pages, not a PDF or image).
//!
//! The form's first field is the session's CSRF token: no file is read before it is checked.

use bytes::Bytes;
use futures_util::StreamExt;
use maud::{Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use super::layout::{Section, page};
use super::session::{self, CSRF_FIELD};
use super::{AppError, Form, Signed, Visit, html, limits};
use crate::error::ApiError;
use crate::http::Body;
use crate::inspect::{FileType, MAX_FILE_BYTES, MAX_PDF_PAGES};

/// The most files one upload form may carry.
pub const MAX_FILES: usize = 20;

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Its name.
    pub name: String,
    /// Its pages when added; why not otherwise.
    pub result: Result<usize, String>,
}

/// A refused file's reason, in words a teacher reads.
pub fn reason(e: &ApiError) -> String {
    let mib = MAX_FILE_BYTES / (1024 * 1024);
    match e {
        ApiError::FileTooLarge(_) | ApiError::PayloadTooLarge { .. } => {
            format!("too large: a file may have at most {mib} MiB")
        }
        ApiError::UnreadableFile(why) => format!("unreadable: {why}"),
        ApiError::TooManyPages(pages) => {
            format!("too many pages: {pages}, and a file may have at most {MAX_PDF_PAGES}")
        }
        ApiError::ContentTypeMismatch(_) | ApiError::UnsupportedMediaType(_) => {
            "not a PDF or image: send a PDF, PNG, JPEG or WebP file".to_owned()
        }
        ApiError::EmptyBody => "empty: the file has no bytes".to_owned(),
        ApiError::TooManyFiles => "the set already has as many files as it can take".to_owned(),
        ApiError::SessionTooLarge => "the set's files are as large as it can take".to_owned(),
        ApiError::AllowanceExhausted { message, .. } => {
            format!("today's pages are used up: {message}")
        }
        other => other.message(),
    }
}

/// The file type a part declares: its content type, or its name's extension when the browser
/// sent none it knows.
fn declared(content_type: Option<&str>, name: &str) -> Option<FileType> {
    content_type
        .and_then(FileType::from_content_type)
        .or_else(|| {
            let lower = name.to_ascii_lowercase();
            let ext = lower.rsplit_once('.').map(|(_, e)| e)?;
            FileType::from_content_type(match ext {
                "pdf" => "application/pdf",
                "png" => "image/png",
                "jpg" | "jpeg" => "image/jpeg",
                "webp" => "image/webp",
                _ => return None,
            })
        })
}

/// Reads one part whole, up to [`MAX_FILE_BYTES`]; a larger one is read to its end and dropped.
async fn read_part(field: &mut multer::Field<'static>) -> Result<Option<Vec<u8>>, multer::Error> {
    let mut bytes = Vec::new();
    let mut over = false;
    while let Some(chunk) = field.chunk().await? {
        if over || bytes.len() + chunk.len() > MAX_FILE_BYTES {
            over = true;
            bytes = Vec::new();
            continue;
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((!over).then_some(bytes))
}

/// One file: checked, then added to the stack.
async fn take(
    signed: &Signed,
    set_id: &str,
    name: String,
    declared: Option<FileType>,
    bytes: Option<Vec<u8>>,
) -> Outcome {
    let state = &signed.visit.state;
    let result = async {
        let declared = declared.ok_or_else(|| ApiError::UnsupportedMediaType(String::new()))?;
        let bytes = bytes.ok_or(ApiError::FileTooLarge(MAX_FILE_BYTES + 1))?;
        let file = crate::inspect::check(&state.marking, name.clone(), declared, bytes).await?;
        crate::class_sets::uploads::add(state, &signed.user.id, set_id, &file).await?;
        Ok::<usize, ApiError>(file.pages)
    }
    .await;
    Outcome {
        name,
        result: result.map_err(|e| reason(&e)),
    }
}

/// `POST /app/class-sets/{id}/scans`: the files of the form, each checked and added.
pub async fn receive(visit: Visit, id: String, body: Body) -> Result<Response, AppError> {
    let signed = session::require(&visit).await?;
    limits::admit(&signed, (1, true)).await?;
    let set = super::class_sets::owned_set(&signed, &id).await?;
    if !visit.state.marking.enabled {
        return Err(AppError::Api(ApiError::AutomatedMarkingDisabled));
    }
    let boundary = visit
        .headers
        .get(warp::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| multer::parse_boundary(v).ok())
        .ok_or_else(|| {
            AppError::BadForm(
                "the files must be sent as a form with files (multipart/form-data)".into(),
            )
        })?;
    let stream = body.map(|chunk| chunk.map(|b: Bytes| b).map_err(std::io::Error::other));
    let limits = multer::Constraints::new().size_limit(
        multer::SizeLimit::new().whole_stream((MAX_FILE_BYTES * (MAX_FILES + 1)) as u64),
    );
    let mut form = multer::Multipart::with_constraints(stream, boundary, limits);
    let bad = |e: multer::Error| AppError::BadForm(format!("the form could not be read: {e}"));
    // The CSRF token comes first: nothing else is read before it is checked.
    let first = form
        .next_field()
        .await
        .map_err(bad)?
        .ok_or(AppError::Csrf)?;
    if first.name() != Some(CSRF_FIELD) {
        return Err(AppError::Csrf);
    }
    let token = first.text().await.map_err(bad)?;
    session::check_csrf(&signed, &Form(vec![(CSRF_FIELD.to_owned(), token)]))?;
    let mut outcomes = Vec::new();
    while let Some(mut field) = form.next_field().await.map_err(bad)? {
        if field.name() != Some("files") {
            continue;
        }
        let name = field.file_name().unwrap_or_default().trim().to_owned();
        let content_type = field.content_type().map(|m| m.essence_str().to_owned());
        let bytes = read_part(&mut field).await.map_err(bad)?;
        if name.is_empty() && bytes.as_ref().is_some_and(Vec::is_empty) {
            continue; // the file input was left empty
        }
        if outcomes.len() == MAX_FILES {
            outcomes.push(Outcome {
                name,
                result: Err(format!(
                    "not read: one upload takes at most {MAX_FILES} files; send it again"
                )),
            });
            continue;
        }
        let name = if name.is_empty() {
            "upload".to_owned()
        } else {
            name
        };
        let kind = declared(content_type.as_deref(), &name);
        outcomes.push(take(&signed, &set.id, name, kind, bytes).await);
    }
    if outcomes.is_empty() {
        return Err(AppError::BadForm(
            "choose at least one file to upload".into(),
        ));
    }
    let list = outcome_list(&outcomes);
    if visit.from_script() {
        return Ok(html(StatusCode::OK, list));
    }
    let body = html! {
        p.crumbs { a href="/app/class-sets" { "Class sets" } " › " a href={ "/app/class-sets/" (set.id) } { (set.title) } " › Upload" }
        h1 { "Uploaded to " (set.title) }
        (list)
        p { a href={ "/app/class-sets/" (set.id) "#stack" } { "Back to the set's stack" } }
    };
    Ok(html(
        StatusCode::OK,
        page("Uploaded", Some(&signed), Section::ClassSets, body),
    ))
}

fn outcome_list(outcomes: &[Outcome]) -> Markup {
    // The status role on a wrapper: on the list itself it would hide the list from readers.
    html! {
        div role="status" {
            ul.outcomes #upload-outcomes {
                @for o in outcomes {
                    @match &o.result {
                        Ok(pages) => li.added data-outcome="added" { strong { (o.name) } ": added, " (pages) (if *pages == 1 { " page" } else { " pages" }) " to read" },
                        Err(why) => li.refused data-outcome="refused" { strong { (o.name) } ": refused, " (why) },
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_type_is_the_declared_one_or_its_extension() {
        assert_eq!(declared(Some("application/pdf"), "x"), Some(FileType::Pdf));
        assert_eq!(
            declared(Some("application/octet-stream"), "Scan 1.PDF"),
            Some(FileType::Pdf)
        );
        assert_eq!(declared(None, "photo.jpeg"), Some(FileType::Jpeg));
        assert_eq!(declared(None, "notes.docx"), None);
        assert_eq!(declared(Some("text/plain"), "notes"), None);
    }

    #[test]
    fn every_refusal_is_said_in_words() {
        let cases = [
            (ApiError::FileTooLarge(1), "too large"),
            (
                ApiError::UnreadableFile("broken xref".into()),
                "unreadable: broken xref",
            ),
            (ApiError::TooManyPages(900), "too many pages: 900"),
            (
                ApiError::ContentTypeMismatch(String::new()),
                "not a PDF or image",
            ),
            (ApiError::EmptyBody, "empty"),
            (ApiError::TooManyFiles, "as many files"),
        ];
        for (e, said) in cases {
            assert!(reason(&e).contains(said), "{e:?}: {}", reason(&e));
        }
    }
}
