//! The one error registry: every condition a request can end in, each with its stable code and
//! HTTP status, and its rendering as the API's error body. The API sends it, the app turns it
//! into words on its pages, and the domain rooms answer with it.
//!
//! Every error response has the body `{"error": {"code", "message", "requiredScopes"?, "details"?},
//! "requestId"}` and the header `X-Request-Id`; 429 also carries `Retry-After`.

use serde::Serialize;
use serde_json::value::RawValue;
use warp::http::StatusCode;

use crate::auth::Scope;
use crate::fields::FieldError;

/// An API error: one variant per distinct condition, each with a stable code.
#[derive(Debug, Clone)]
pub enum ApiError {
    /// No `Authorization` header.
    MissingApiKey,
    /// `Authorization` is present but not `Bearer <key>`.
    InvalidAuthorization,
    /// The key is malformed or unknown.
    InvalidApiKey,
    /// The key was revoked.
    RevokedApiKey,
    /// The key has expired.
    ExpiredApiKey,
    /// The account is not verified.
    AccountUnverified,
    /// The account is restricted.
    AccountRestricted,
    /// The key lacks a scope the operation requires.
    InsufficientScope(&'static [Scope]),
    /// No route matches the path.
    RouteNotFound,
    /// The path exists but not with this method.
    MethodNotAllowed,
    /// The resource does not exist or belongs to another account.
    NotFound(&'static str),
    /// The body is not JSON.
    InvalidJson(String),
    /// The JSON body has the wrong shape.
    InvalidBody(String),
    /// A query parameter is missing or invalid.
    InvalidQuery(String),
    /// The upload body is empty.
    EmptyBody,
    /// The `Idempotency-Key` header is missing.
    IdempotencyKeyRequired,
    /// The `Idempotency-Key` header does not match `^[A-Za-z0-9._:-]{8,128}$`.
    InvalidIdempotencyKey,
    /// The idempotency key was already used for a different request.
    IdempotencyKeyReused,
    /// The first request with this idempotency key is still running.
    IdempotencyRequestInProgress,
    /// The import is completed and was completed with a different submission.
    ImportAlreadyCompleted,
    /// The import is completed and takes no more files.
    ImportCompleted,
    /// The revision sent is not the current one.
    StaleRevision(i64),
    /// The JSON body is larger than the route's limit.
    PayloadTooLarge {
        /// The body's size as far as it was read, or as declared.
        size: usize,
        /// The route's limit in bytes.
        limit: usize,
    },
    /// The uploaded file is larger than 25 MiB.
    FileTooLarge(usize),
    /// The session's files would exceed 300 MiB in total.
    SessionTooLarge,
    /// The request's content type is not one this route accepts.
    UnsupportedMediaType(String),
    /// The file's bytes are not of the declared content type.
    ContentTypeMismatch(String),
    /// The submission is invalid; details hold the engine's errors.
    ValidationFailed {
        /// A summary sentence.
        message: String,
        /// `{"errors": [...], "truncated": bool}`, serialised.
        details: Box<RawValue>,
    },
    /// A readiness check failed; details hold every check's result.
    NotReady {
        /// The failing checks, named.
        message: String,
        /// `{"checks": {"database": "ok" | "failed: …", …}}`, serialised.
        details: Box<RawValue>,
    },
    /// The file could not be read as its type.
    UnreadableFile(String),
    /// A PDF has more than 80 pages.
    TooManyPages(usize),
    /// The session already holds 100 files.
    TooManyFiles,
    /// A rate limit is exhausted.
    RateLimited {
        /// Seconds until the window resets.
        retry_after: i64,
    },
    /// The service cannot complete the request now.
    ServiceUnavailable(String),
    /// The service is busy with the same or like work: retry after `retry_after` seconds (503
    /// `service_unavailable` with `Retry-After`).
    Busy {
        /// What it is busy with, for the message.
        message: String,
        /// Seconds to wait before retrying.
        retry_after: i64,
    },
    /// An unexpected failure; details are logged, not sent.
    Internal,
    /// Query or path parameters are invalid; details list each one.
    InvalidParameters {
        /// A summary sentence.
        message: String,
        /// Each invalid parameter, sent as
        /// `{"errors": [{path, code, message}], "truncated": false}`.
        errors: Vec<crate::fields::FieldError>,
    },
    /// JSON body fields are invalid; details list each one at its JSON Pointer.
    InvalidFields {
        /// A summary sentence.
        message: String,
        /// Each invalid field, sent as
        /// `{"errors": [{path, code, message}], "truncated": false}`.
        errors: Vec<crate::fields::FieldError>,
    },
    /// A paper with this id exists in the account with other content.
    PaperExists,
    /// The account holds the most papers it may.
    TooManyPapers(usize),
    /// The paper's question paper or mark scheme would be longer than the page limit.
    PaperTooLong {
        /// The question paper's pages.
        question_paper: usize,
        /// The mark scheme's pages.
        mark_scheme: usize,
        /// The limit for each document.
        limit: usize,
    },
    /// The paper's questions cannot be typeset (a defect of the bank's content).
    PaperNotTypesettable(String),
    /// The revision's PDFs have not been prepared.
    ExportsNotReady,
    /// A `Range` header asks for bytes past the end of a file of this size.
    RangeNotSatisfiable(u64),
    /// The revision's PDFs cannot be produced.
    RevisionNotExportable(String),
    /// PDF export is turned off in this service's configuration.
    PdfExportDisabled,
    /// Automated marking is turned off in this service's configuration.
    AutomatedMarkingDisabled,
    /// The session was started: it takes no more files, and a new start is a conflict.
    SessionStarted,
    /// Starting needs at least one work file.
    WorkRequired,
    /// Starting needs a mark scheme: an uploaded scheme file or one attached from a paper.
    SchemeRequired,
    /// The session's indexing has not finished: its pages cannot be selected yet.
    IndexingNotFinished,
    /// A class set's scripts cannot be made yet: why.
    StackNotReady(String),
    /// The marking question has already ended (completed, needs_review, failed or cancelled).
    QuestionFinished(String),
    /// The marking question has no result to review (queued, running, failed or cancelled).
    QuestionNotMarked(String),
    /// Scripts asked for as final have questions not marked finally; details name them.
    ScriptsNotFinal {
        /// A summary sentence.
        message: String,
        /// `{"scripts": [{"student", "questions": [label, …]}]}`, serialised.
        details: Box<RawValue>,
    },
    /// The account's automated-marking allowance for today would be exceeded.
    AllowanceExhausted {
        /// What is exhausted, for the message.
        message: String,
        /// Seconds until the allowance renews (the next UTC day).
        retry_after: i64,
    },
}

examkit_engine::code_table! {
    /// What went wrong, without its particulars: one kind per stable error code, with its HTTP
    /// status and meaning. This table is the one registry of the service's errors:
    /// [`ApiError::status`] and [`ApiError::code`] read it, and `schemas/service-error-codes.json`,
    /// the OpenAPI document's list of codes and the guide's are checked against it by tests.
    pub enum ErrorKind {
        /// The HTTP status code.
        fn status_code -> u16;
        MissingApiKey = "missing_api_key", 401, "No Authorization header; send Authorization: Bearer <API_KEY>.";
        InvalidAuthorization = "invalid_authorization", 401, "The Authorization header is not of the form Bearer <API_KEY>.";
        InvalidApiKey = "invalid_api_key", 401, "The key is malformed, fails its checksum or is unknown.";
        RevokedApiKey = "revoked_api_key", 401, "The key was revoked.";
        ExpiredApiKey = "expired_api_key", 401, "The key has expired.";
        AccountUnverified = "account_unverified", 401, "The key's account is not verified.";
        AccountRestricted = "account_restricted", 403, "The key's account is restricted.";
        InsufficientScope = "insufficient_scope", 403, "The key lacks a scope the operation requires; see requiredScopes.";
        RouteNotFound = "route_not_found", 404, "No route has this path.";
        NotFound = "not_found", 404, "The resource does not exist or belongs to another account.";
        MethodNotAllowed = "method_not_allowed", 405, "The path exists but not with this method.";
        InvalidJson = "invalid_json", 400, "The request body is not well-formed JSON.";
        InvalidBody = "invalid_body", 400, "The JSON request body does not have the expected fields and types.";
        InvalidQuery = "invalid_query", 400, "A query parameter is missing or invalid.";
        EmptyBody = "empty_body", 400, "The upload body is empty.";
        IdempotencyKeyRequired = "idempotency_key_required", 400, "The operation needs an Idempotency-Key header.";
        InvalidIdempotencyKey = "invalid_idempotency_key", 400, "The Idempotency-Key header does not match ^[A-Za-z0-9._:-]{8,128}$.";
        IdempotencyKeyReused = "idempotency_key_reused", 409, "The Idempotency-Key was already used with this API key for a different request (another route or body).";
        IdempotencyRequestInProgress = "idempotency_request_in_progress", 409, "The first request with this Idempotency-Key is still running; retry shortly.";
        ImportAlreadyCompleted = "import_already_completed", 409, "The import was completed with a different submission; a replacement needs a new import.";
        ImportCompleted = "import_completed", 409, "The import is completed and takes no more files.";
        StaleRevision = "stale_revision", 409, "The revision sent is not the current one; read the resource and retry.";
        PayloadTooLarge = "payload_too_large", 413, "The JSON body is larger than the route's limit: 4 MiB (4,194,304 bytes) for import submissions, 64 KiB (65,536 bytes) for paper bodies.";
        FileTooLarge = "file_too_large", 413, "The uploaded file is larger than 25 MiB.";
        SessionTooLarge = "session_too_large", 413, "The session's files would exceed 300 MiB in total.";
        UnsupportedMediaType = "unsupported_media_type", 415, "The Content-Type is not one this route accepts.";
        ContentTypeMismatch = "content_type_mismatch", 415, "The file's bytes are not of the declared Content-Type.";
        ValidationFailed = "validation_failed", 422, "The submission is invalid; error.details.errors lists every error with its JSON Pointer.";
        UnreadableFile = "unreadable_file", 422, "A page of the file cannot be read as its type (a damaged or encrypted PDF, one with no pages, an image that does not decode) or would exceed the page pixel limit of 40,000,000.";
        TooManyPages = "too_many_pages", 422, "A PDF has more than 80 pages.";
        TooManyFiles = "too_many_files", 422, "The session already holds 100 files.";
        RateLimited = "rate_limited", 429, "A rate limit is exhausted; wait Retry-After seconds.";
        ServiceUnavailable = "service_unavailable", 503, "The service cannot complete the request now; back off and retry with the same operation ids.";
        Internal = "internal_error", 500, "An unexpected failure; retry later.";
        InvalidParameters = "invalid_parameters", 422, "Query or path parameters are invalid; error.details.errors lists each, its path being the parameter's name.";
        InvalidFields = "invalid_fields", 422, "JSON body fields are invalid; error.details.errors lists each, its path being the field's JSON Pointer.";
        PaperExists = "paper_exists", 409, "A paper with this id already exists in the account with other content; a new paper needs a new id.";
        TooManyPapers = "too_many_papers", 422, "The account already holds the most saved papers it may (1,000).";
        PaperTooLong = "paper_too_long", 422, "The question paper or the mark scheme would be longer than 80 pages; choose fewer questions or less writing space.";
        PaperNotTypesettable = "paper_not_typesettable", 422, "A chosen question cannot be typeset; choose another revision of it.";
        ExportsNotReady = "exports_not_ready", 409, "The revision's PDFs have not been prepared; POST its exports first.";
        RevisionNotExportable = "revision_not_exportable", 409, "The revision's PDFs cannot be produced.";
        PdfExportDisabled = "pdf_export_disabled", 503, "PDF export is turned off in this service's configuration.";
        AutomatedMarkingDisabled = "automated_marking_disabled", 503, "Automated marking is turned off in this service's configuration; imports still work.";
        SessionStarted = "session_started", 409, "The marking session was already started: it takes no more files, and starting it again needs the first start's Idempotency-Key.";
        WorkRequired = "work_required", 422, "Starting a marking session needs at least one uploaded work file (a completed student scan).";
        SchemeRequired = "scheme_required", 422, "Starting a marking session needs a mark scheme: an uploaded scheme file, or the one attached by from-builder.";
        StackNotReady = "stack_not_ready", 409, "The class set's scripts cannot be marked yet: no page of its stack is uploaded, pages are still being read, or every copy is absent.";
        IndexingNotFinished = "indexing_not_finished", 409, "The session's pages are still being indexed (or it was not started); wait until the session says indexingFinished, then request the question.";
        QuestionFinished = "question_finished", 409, "The marking question has already ended (completed, needs_review, failed or cancelled) and cannot be cancelled.";
        ScriptsNotFinal = "scripts_not_final", 409, "A script asked for as final has questions not marked finally (waiting, being marked, needing review, failed or cancelled; or none marked): error.details.scripts names each script's student and questions. Ask for a draft (draft=true) to have it anyway, marked Draft on every page.";
        QuestionNotMarked = "question_not_marked", 409, "The marking question has no result to review: it is queued, running, failed or cancelled.";
        AllowanceExhausted = "marking_allowance_exhausted", 429, "The account's daily automated-marking allowance (pages indexed, questions marked) would be exceeded; nothing was enqueued. Wait Retry-After seconds (the next UTC day).";
        NotReady = "not_ready", 503, "A readiness check failed (GET /readyz): error.details.checks gives each check's result: database, migrations, assets, workers.";
        RangeNotSatisfiable = "range_not_satisfiable", 416, "The Range header asks only for bytes past the end of the file; Content-Range: bytes */<size> gives its size.";
    }
}

impl ErrorKind {
    /// The stable code sent in `error.code` (the table's [`ErrorKind::as_str`]).
    pub const fn code(self) -> &'static str {
        self.as_str()
    }

    /// The HTTP status.
    pub fn status(self) -> StatusCode {
        StatusCode::from_u16(self.status_code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
}

/// What an unexpected failure says.
const UNEXPECTED: &str = "an unexpected error occurred; retry later";

impl ApiError {
    /// The kind of error, which gives its code and status.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ApiError::MissingApiKey => ErrorKind::MissingApiKey,
            ApiError::InvalidAuthorization => ErrorKind::InvalidAuthorization,
            ApiError::InvalidApiKey => ErrorKind::InvalidApiKey,
            ApiError::RevokedApiKey => ErrorKind::RevokedApiKey,
            ApiError::ExpiredApiKey => ErrorKind::ExpiredApiKey,
            ApiError::AccountUnverified => ErrorKind::AccountUnverified,
            ApiError::AccountRestricted => ErrorKind::AccountRestricted,
            ApiError::InsufficientScope(_) => ErrorKind::InsufficientScope,
            ApiError::RouteNotFound => ErrorKind::RouteNotFound,
            ApiError::NotFound(_) => ErrorKind::NotFound,
            ApiError::MethodNotAllowed => ErrorKind::MethodNotAllowed,
            ApiError::InvalidJson(_) => ErrorKind::InvalidJson,
            ApiError::InvalidBody(_) => ErrorKind::InvalidBody,
            ApiError::InvalidQuery(_) => ErrorKind::InvalidQuery,
            ApiError::EmptyBody => ErrorKind::EmptyBody,
            ApiError::IdempotencyKeyRequired => ErrorKind::IdempotencyKeyRequired,
            ApiError::InvalidIdempotencyKey => ErrorKind::InvalidIdempotencyKey,
            ApiError::IdempotencyKeyReused => ErrorKind::IdempotencyKeyReused,
            ApiError::IdempotencyRequestInProgress => ErrorKind::IdempotencyRequestInProgress,
            ApiError::ImportAlreadyCompleted => ErrorKind::ImportAlreadyCompleted,
            ApiError::ImportCompleted => ErrorKind::ImportCompleted,
            ApiError::StaleRevision(_) => ErrorKind::StaleRevision,
            ApiError::PayloadTooLarge { .. } => ErrorKind::PayloadTooLarge,
            ApiError::FileTooLarge(_) => ErrorKind::FileTooLarge,
            ApiError::SessionTooLarge => ErrorKind::SessionTooLarge,
            ApiError::UnsupportedMediaType(_) => ErrorKind::UnsupportedMediaType,
            ApiError::ContentTypeMismatch(_) => ErrorKind::ContentTypeMismatch,
            ApiError::ValidationFailed { .. } => ErrorKind::ValidationFailed,
            ApiError::NotReady { .. } => ErrorKind::NotReady,
            ApiError::UnreadableFile(_) => ErrorKind::UnreadableFile,
            ApiError::TooManyPages(_) => ErrorKind::TooManyPages,
            ApiError::TooManyFiles => ErrorKind::TooManyFiles,
            ApiError::RateLimited { .. } => ErrorKind::RateLimited,
            ApiError::ServiceUnavailable(_) | ApiError::Busy { .. } => {
                ErrorKind::ServiceUnavailable
            }
            ApiError::Internal => ErrorKind::Internal,
            ApiError::InvalidParameters { .. } => ErrorKind::InvalidParameters,
            ApiError::InvalidFields { .. } => ErrorKind::InvalidFields,
            ApiError::PaperExists => ErrorKind::PaperExists,
            ApiError::TooManyPapers(_) => ErrorKind::TooManyPapers,
            ApiError::PaperTooLong { .. } => ErrorKind::PaperTooLong,
            ApiError::PaperNotTypesettable(_) => ErrorKind::PaperNotTypesettable,
            ApiError::ExportsNotReady => ErrorKind::ExportsNotReady,
            ApiError::RangeNotSatisfiable(_) => ErrorKind::RangeNotSatisfiable,
            ApiError::RevisionNotExportable(_) => ErrorKind::RevisionNotExportable,
            ApiError::PdfExportDisabled => ErrorKind::PdfExportDisabled,
            ApiError::AutomatedMarkingDisabled => ErrorKind::AutomatedMarkingDisabled,
            ApiError::SessionStarted => ErrorKind::SessionStarted,
            ApiError::WorkRequired => ErrorKind::WorkRequired,
            ApiError::SchemeRequired => ErrorKind::SchemeRequired,
            ApiError::AllowanceExhausted { .. } => ErrorKind::AllowanceExhausted,
            ApiError::IndexingNotFinished => ErrorKind::IndexingNotFinished,
            ApiError::StackNotReady(_) => ErrorKind::StackNotReady,
            ApiError::QuestionFinished(_) => ErrorKind::QuestionFinished,
            ApiError::QuestionNotMarked(_) => ErrorKind::QuestionNotMarked,
            ApiError::ScriptsNotFinal { .. } => ErrorKind::ScriptsNotFinal,
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.kind().status()
    }

    /// The stable error code.
    pub fn code(&self) -> &'static str {
        self.kind().code()
    }

    /// A sentence for people.
    pub fn message(&self) -> String {
        match self.fixed_message() {
            Some(sentence) => sentence.to_owned(),
            None => self.detailed_message(),
        }
    }

    /// The sentence of an error that says the same thing every time; `None` for an error whose
    /// sentence carries its own detail.
    fn fixed_message(&self) -> Option<&'static str> {
        Some(match self {
            ApiError::MissingApiKey => "send the header Authorization: Bearer <API_KEY>",
            ApiError::InvalidAuthorization => {
                "the Authorization header must be Bearer <API_KEY>; browser sessions are not accepted"
            }
            ApiError::InvalidApiKey => "the API key is not valid",
            ApiError::RevokedApiKey => "the API key was revoked",
            ApiError::ExpiredApiKey => "the API key has expired",
            ApiError::AccountUnverified => "the key's account is not verified",
            ApiError::AccountRestricted => "the key's account is restricted",
            ApiError::RouteNotFound => "no route has this path",
            ApiError::MethodNotAllowed => "this path does not accept this method",
            ApiError::EmptyBody => "the request body is empty; send the file's raw bytes",
            ApiError::IdempotencyKeyRequired => "this operation needs an Idempotency-Key header",
            ApiError::InvalidIdempotencyKey => {
                "the Idempotency-Key header must match ^[A-Za-z0-9._:-]{8,128}$"
            }
            ApiError::IdempotencyKeyReused => {
                "this Idempotency-Key was already used for a different request; use a new key for a different operation"
            }
            ApiError::IdempotencyRequestInProgress => {
                "a request with this Idempotency-Key is still running; retry shortly"
            }
            ApiError::ImportAlreadyCompleted => {
                "the import was completed with a different submission; a replacement needs a new import"
            }
            ApiError::ImportCompleted => "the import is completed and takes no more files",
            ApiError::SessionTooLarge => "the session's files would exceed 300 MiB in total",
            ApiError::TooManyFiles => "the session already holds 100 files, the limit",
            ApiError::Internal => UNEXPECTED,
            ApiError::PaperExists => {
                "a paper with this id already exists with other content; repeat the exact creation body to get it back, or create a new paper with a new id"
            }
            ApiError::ExportsNotReady => {
                "this revision's PDFs have not been prepared; POST {} to its exports first"
            }
            ApiError::PdfExportDisabled => {
                "PDF export is turned off in this service's configuration"
            }
            ApiError::AutomatedMarkingDisabled => {
                "automated marking is turned off in this service's configuration"
            }
            ApiError::SessionStarted => {
                "this marking session was already started; it takes no more files, and a repeated start must reuse the first start's Idempotency-Key"
            }
            ApiError::WorkRequired => {
                "upload at least one work file (a completed student scan) before starting"
            }
            ApiError::SchemeRequired => {
                "upload a mark scheme (kind=scheme), or create the session from a paper, before starting"
            }
            ApiError::IndexingNotFinished => {
                "the session's pages are not indexed yet; wait until the session says indexingFinished"
            }
            _ => return None,
        })
    }

    /// The sentence of an error that carries its own detail (a name, a size, a limit, a reason).
    fn detailed_message(&self) -> String {
        match self {
            ApiError::InsufficientScope(scopes) => {
                let names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
                format!("this operation needs the scope(s) {}", names.join(", "))
            }
            ApiError::NotFound(what) => format!("{what} not found"),
            ApiError::InvalidJson(m) => format!("the request body is not valid JSON: {m}"),
            ApiError::InvalidBody(m) | ApiError::InvalidQuery(m) => m.clone(),
            ApiError::StaleRevision(current) => {
                format!(
                    "the revision sent is not the current one; the current revision is {current}"
                )
            }
            ApiError::PayloadTooLarge { size, limit } => {
                format!(
                    "the body is {size} bytes or more; the limit for this route is {limit} bytes"
                )
            }
            ApiError::FileTooLarge(size) => {
                format!("the file is {size} bytes or more; the limit is 26214400 bytes (25 MiB)")
            }
            ApiError::UnsupportedMediaType(m) | ApiError::ContentTypeMismatch(m) => m.clone(),
            ApiError::ValidationFailed { message, .. }
            | ApiError::NotReady { message, .. }
            | ApiError::ScriptsNotFinal { message, .. } => message.clone(),
            ApiError::UnreadableFile(m) => m.clone(),
            ApiError::TooManyPages(pages) => {
                format!("the PDF has {pages} pages; the limit is 80 pages per file")
            }
            ApiError::RateLimited { retry_after } => {
                format!("rate limit reached; retry after {retry_after} seconds")
            }
            ApiError::ServiceUnavailable(m) => m.clone(),
            ApiError::Busy {
                message,
                retry_after,
            } => format!("{message}; retry after {retry_after} seconds"),
            ApiError::InvalidParameters { message, .. }
            | ApiError::InvalidFields { message, .. } => message.clone(),
            ApiError::TooManyPapers(limit) => {
                format!("the account already holds {limit} saved papers, the most it may")
            }
            ApiError::PaperTooLong {
                question_paper,
                mark_scheme,
                limit,
            } => format!(
                "the question paper would have {question_paper} pages and the mark scheme {mark_scheme}; each may have at most {limit} pages: choose fewer questions or less writing space"
            ),
            ApiError::PaperNotTypesettable(m) => {
                format!("the paper cannot be typeset: {m}")
            }
            ApiError::RangeNotSatisfiable(size) => {
                format!("the range asked for starts past the end of the file ({size} bytes)")
            }
            ApiError::RevisionNotExportable(m) => {
                format!("this revision's PDFs cannot be produced: {m}")
            }
            ApiError::StackNotReady(why) => why.clone(),
            ApiError::QuestionFinished(status) => {
                format!("the marking question has already ended ({status})")
            }
            ApiError::QuestionNotMarked(status) => {
                format!("the marking question has no result to review ({status})")
            }
            ApiError::AllowanceExhausted {
                message,
                retry_after,
            } => {
                format!("{message}; the allowance renews in {retry_after} seconds")
            }
            // Every other error has a fixed sentence.
            _ => self.fixed_message().unwrap_or(UNEXPECTED).to_owned(),
        }
    }

    /// The seconds a client should wait before retrying, sent as `Retry-After`.
    pub fn retry_after(&self) -> Option<i64> {
        match self {
            ApiError::RateLimited { retry_after }
            | ApiError::Busy { retry_after, .. }
            | ApiError::AllowanceExhausted { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }

    /// The size a `Content-Range: bytes */<size>` header gives with a 416.
    pub fn unsatisfied_range(&self) -> Option<u64> {
        match self {
            ApiError::RangeNotSatisfiable(size) => Some(*size),
            _ => None,
        }
    }

    /// The error body for a request.
    pub fn body(&self, request_id: &str) -> Vec<u8> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            error: Inner<'a>,
            request_id: &'a str,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Inner<'a> {
            code: &'static str,
            message: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            required_scopes: Option<Vec<&'static str>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            details: Option<&'a RawValue>,
        }
        let listed = match self {
            ApiError::InvalidParameters { errors, .. } | ApiError::InvalidFields { errors, .. } => {
                details(errors)
            }
            _ => None,
        };
        let body = Body {
            error: Inner {
                code: self.code(),
                message: self.message(),
                required_scopes: match self {
                    ApiError::InsufficientScope(scopes) => {
                        Some(scopes.iter().map(|s| s.as_str()).collect())
                    }
                    _ => None,
                },
                details: match self {
                    ApiError::ValidationFailed { details, .. }
                    | ApiError::NotReady { details, .. }
                    | ApiError::ScriptsNotFinal { details, .. } => Some(details),
                    _ => listed.as_deref(),
                },
            },
            request_id,
        };
        serde_json::to_vec(&body).unwrap_or_default()
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        tracing::error!(error = %e, "store failure");
        match e {
            crate::store::StoreError::Objects(_) => ApiError::ServiceUnavailable(
                "the file store did not answer; retry with the same operation ids".into(),
            ),
            _ => ApiError::Internal,
        }
    }
}

/// `{"errors": [...], "truncated": false}`: the `error.details` of a 422 that lists field errors,
/// the one place they become part of a response.
fn details(errors: &[FieldError]) -> Option<Box<RawValue>> {
    #[derive(Serialize)]
    struct Details<'a> {
        errors: &'a [FieldError],
        truncated: bool,
    }
    serde_json::to_string(&Details {
        errors,
        truncated: false,
    })
    .ok()
    .and_then(|s| RawValue::from_string(s).ok())
}

fn summary(kind: &str, errors: &[FieldError]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for e in errors {
        let name = if e.path.is_empty() {
            "(the body)"
        } else {
            e.path.as_str()
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    format!(
        "invalid {kind}{} {}; see error.details.errors",
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    )
}

/// The 422 for invalid query or path parameters (`invalid_parameters`).
pub fn invalid_parameters(errors: Vec<FieldError>) -> ApiError {
    ApiError::InvalidParameters {
        message: summary("parameter", &errors),
        errors,
    }
}

/// The 422 for invalid JSON body fields (`invalid_fields`).
pub fn invalid_fields(errors: Vec<FieldError>) -> ApiError {
    ApiError::InvalidFields {
        message: summary("field", &errors),
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_name_each_path_once() {
        let errors = vec![
            FieldError::new("/title", "type", "x"),
            FieldError::new("/title", "min_length", "y"),
            FieldError::new("", "unknown_field", "z"),
        ];
        assert_eq!(
            summary("field", &errors),
            "invalid fields /title, (the body); see error.details.errors"
        );
        let ApiError::InvalidFields { errors, .. } = invalid_fields(errors) else {
            panic!("invalid_fields");
        };
        let details = details(&errors).expect("details");
        let value: serde_json::Value = serde_json::from_str(details.get()).expect("json");
        assert_eq!(value["errors"][1]["code"], "min_length");
        assert_eq!(value["truncated"], false);
    }

    fn raw() -> Box<RawValue> {
        RawValue::from_string(r#"{"errors":[],"truncated":false}"#.into()).expect("raw")
    }

    /// One error of every variant. Adding a variant without adding it here fails
    /// `every_kind_is_sent_by_a_variant` only if its kind is new; the match in
    /// [`ApiError::kind`] makes the compiler ask for each variant's kind.
    fn one_of_each() -> Vec<ApiError> {
        vec![
            ApiError::MissingApiKey,
            ApiError::InvalidAuthorization,
            ApiError::InvalidApiKey,
            ApiError::RevokedApiKey,
            ApiError::ExpiredApiKey,
            ApiError::AccountUnverified,
            ApiError::AccountRestricted,
            ApiError::InsufficientScope(&[Scope::MarkingImport]),
            ApiError::RouteNotFound,
            ApiError::MethodNotAllowed,
            ApiError::NotFound("paper"),
            ApiError::InvalidJson("eof".into()),
            ApiError::InvalidBody("no".into()),
            ApiError::InvalidQuery("no".into()),
            ApiError::EmptyBody,
            ApiError::IdempotencyKeyRequired,
            ApiError::InvalidIdempotencyKey,
            ApiError::IdempotencyKeyReused,
            ApiError::IdempotencyRequestInProgress,
            ApiError::ImportAlreadyCompleted,
            ApiError::ImportCompleted,
            ApiError::StaleRevision(3),
            ApiError::PayloadTooLarge { size: 5, limit: 4 },
            ApiError::FileTooLarge(5),
            ApiError::SessionTooLarge,
            ApiError::UnsupportedMediaType("text/plain".into()),
            ApiError::ContentTypeMismatch("not a PDF".into()),
            ApiError::ValidationFailed {
                message: "invalid".into(),
                details: raw(),
            },
            ApiError::UnreadableFile("broken".into()),
            ApiError::NotReady {
                message: "not ready: database".into(),
                details: raw(),
            },
            ApiError::TooManyPages(81),
            ApiError::TooManyFiles,
            ApiError::RateLimited { retry_after: 5 },
            ApiError::ServiceUnavailable("busy".into()),
            ApiError::Busy {
                message: "the class's returned scripts are being made".into(),
                retry_after: 10,
            },
            ApiError::Internal,
            ApiError::InvalidParameters {
                message: "bad".into(),
                errors: vec![crate::fields::FieldError::new(
                    "/a",
                    "type",
                    "a must be a number",
                )],
            },
            ApiError::InvalidFields {
                message: "bad".into(),
                errors: vec![crate::fields::FieldError::new(
                    "/a",
                    "type",
                    "a must be a number",
                )],
            },
            ApiError::PaperExists,
            ApiError::TooManyPapers(1000),
            ApiError::PaperTooLong {
                question_paper: 90,
                mark_scheme: 20,
                limit: 80,
            },
            ApiError::PaperNotTypesettable("bad math".into()),
            ApiError::ExportsNotReady,
            ApiError::RangeNotSatisfiable(10),
            ApiError::RevisionNotExportable("gone".into()),
            ApiError::PdfExportDisabled,
            ApiError::AutomatedMarkingDisabled,
            ApiError::SessionStarted,
            ApiError::WorkRequired,
            ApiError::SchemeRequired,
            ApiError::IndexingNotFinished,
            ApiError::StackNotReady("pages are being read".into()),
            ApiError::QuestionFinished("completed".into()),
            ApiError::QuestionNotMarked("queued".into()),
            ApiError::ScriptsNotFinal {
                message: "questions 2 of Ada's script are not marked finally".into(),
                details: RawValue::from_string(
                    r#"{"scripts":[{"student":"Ada","questions":["2"]}]}"#.into(),
                )
                .expect("raw JSON"),
            },
            ApiError::AllowanceExhausted {
                message: "no pages left".into(),
                retry_after: 60,
            },
        ]
    }

    #[test]
    fn every_kind_is_sent_by_a_variant_with_its_code_and_status() {
        let errors = one_of_each();
        let mut seen = std::collections::HashSet::new();
        for error in &errors {
            let kind = error.kind();
            seen.insert(kind);
            assert_eq!(error.code(), kind.code());
            assert_eq!(error.status().as_u16(), kind.status_code());
            assert_eq!(error.status().as_u16(), kind.status().as_u16());
            let body: serde_json::Value =
                serde_json::from_slice(&error.body("req_1")).expect("json");
            assert_eq!(body["error"]["code"], kind.code(), "{kind:?}");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty()),
                "{kind:?}"
            );
            assert_eq!(body["requestId"], "req_1");
            assert_eq!(
                error.retry_after().is_some(),
                kind.status_code() == 429 || matches!(error, ApiError::Busy { .. }),
                "{kind:?}: Retry-After with every 429 and a busy 503, and nothing else"
            );
        }
        for kind in ErrorKind::ALL {
            assert!(seen.contains(kind), "no variant sends {kind:?}");
        }
        assert_eq!(seen.len(), ErrorKind::ALL.len());
    }

    #[test]
    fn codes_are_unique_and_statuses_are_errors() {
        let mut codes: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ErrorKind::ALL.len());
        for kind in ErrorKind::ALL {
            assert!(
                (400..600).contains(&kind.status_code()),
                "{kind:?} {}",
                kind.status_code()
            );
            assert_eq!(kind.status().as_u16(), kind.status_code(), "{kind:?}");
            assert!(!kind.meaning().is_empty());
            assert!(
                kind.code()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_'),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn every_kind_is_spelled_as_published_and_round_trips() {
        let spelled: &[(&str, u16)] = &[
            ("missing_api_key", 401),
            ("invalid_authorization", 401),
            ("invalid_api_key", 401),
            ("revoked_api_key", 401),
            ("expired_api_key", 401),
            ("account_unverified", 401),
            ("account_restricted", 403),
            ("insufficient_scope", 403),
            ("route_not_found", 404),
            ("not_found", 404),
            ("method_not_allowed", 405),
            ("invalid_json", 400),
            ("invalid_body", 400),
            ("invalid_query", 400),
            ("empty_body", 400),
            ("idempotency_key_required", 400),
            ("invalid_idempotency_key", 400),
            ("idempotency_key_reused", 409),
            ("idempotency_request_in_progress", 409),
            ("import_already_completed", 409),
            ("import_completed", 409),
            ("stale_revision", 409),
            ("payload_too_large", 413),
            ("file_too_large", 413),
            ("session_too_large", 413),
            ("unsupported_media_type", 415),
            ("content_type_mismatch", 415),
            ("validation_failed", 422),
            ("unreadable_file", 422),
            ("too_many_pages", 422),
            ("too_many_files", 422),
            ("rate_limited", 429),
            ("service_unavailable", 503),
            ("internal_error", 500),
            ("invalid_parameters", 422),
            ("invalid_fields", 422),
            ("paper_exists", 409),
            ("too_many_papers", 422),
            ("paper_too_long", 422),
            ("paper_not_typesettable", 422),
            ("exports_not_ready", 409),
            ("revision_not_exportable", 409),
            ("pdf_export_disabled", 503),
            ("automated_marking_disabled", 503),
            ("session_started", 409),
            ("work_required", 422),
            ("scheme_required", 422),
            ("stack_not_ready", 409),
            ("indexing_not_finished", 409),
            ("question_finished", 409),
            ("scripts_not_final", 409),
            ("question_not_marked", 409),
            ("marking_allowance_exhausted", 429),
            ("not_ready", 503),
            ("range_not_satisfiable", 416),
        ];
        let ours: Vec<(&str, u16)> = ErrorKind::ALL
            .iter()
            .map(|k| (k.code(), k.status_code()))
            .collect();
        assert_eq!(ours, spelled);
        for kind in ErrorKind::ALL {
            let json = serde_json::to_string(kind).expect("serialises");
            assert_eq!(json, format!("\"{}\"", kind.code()));
            assert_eq!(serde_json::from_str::<ErrorKind>(&json).ok(), Some(*kind));
            assert_eq!(kind.code().parse::<ErrorKind>(), Ok(*kind));
        }
        assert!("Internal".parse::<ErrorKind>().is_err());
    }

    #[test]
    fn insufficient_scope_lists_required_scopes() {
        let body = ApiError::InsufficientScope(&[Scope::MarkingRead]).body("req_1");
        let value: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(value["error"]["code"], "insufficient_scope");
        assert_eq!(
            value["error"]["requiredScopes"],
            serde_json::json!(["marking:read"])
        );
        assert_eq!(value["requestId"], "req_1");
    }
}
