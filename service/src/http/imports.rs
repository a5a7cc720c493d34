//! Imports of externally marked work (scope `marking:import`):
//! `POST /v1/marking/imports`, `…/{id}/assets`, `…/{id}/validate`, `…/{id}/complete`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use examkit_engine::Outcome;
use examkit_engine::limits::MAX_DOCUMENT_BYTES;

use super::fields::parse_json;
use super::marking::{asset_view, session_view};
use super::{
    ApiError, AppState, Body, Ctx, Op, Principal, Reply, body, ctx, document_too_large, parse_id,
    read_body, require_json,
};
use crate::auth::{Scope, sha256_hex};
use crate::inspect::ReceivedFile;
use crate::marked::engine::{engine_assets, question_status, run_engine};
use crate::store::marking::{AddAssetError, AssetRow, Completion, QuestionData, SessionRow};
use crate::store::words::{AssetKind, Origin, SessionStatus};

const IMPORT: &[Scope] = &[Scope::MarkingImport];
static CREATE: Op = Op {
    name: "POST /v1/marking/imports",
    scopes: IMPORT,
};
static UPLOAD: Op = Op {
    name: "POST /v1/marking/imports/{id}/assets",
    scopes: IMPORT,
};
static VALIDATE: Op = Op {
    name: "POST /v1/marking/imports/{id}/validate",
    scopes: IMPORT,
};
static COMPLETE: Op = Op {
    name: "POST /v1/marking/imports/{id}/complete",
    scopes: IMPORT,
};

pub use super::upload::MAX_NAME_CHARS;
/// The longest import title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

/// The import routes.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let create = warp::path!("v1" / "marking" / "imports")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|ctx: Ctx, body: Body| {
            ctx.run(
                &CREATE,
                move |ctx, p| async move { create(ctx, p, body).await },
            )
        });
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    let upload = warp::path!("v1" / "marking" / "imports" / String / "assets")
        .and(warp::post())
        .and(query)
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, query: String, ctx: Ctx, body: Body| {
            ctx.run(&UPLOAD, move |ctx, p| async move {
                upload(ctx, p, id, query, body).await
            })
        });
    let validate = warp::path!("v1" / "marking" / "imports" / String / "validate")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, ctx: Ctx, body: Body| {
            ctx.run(&VALIDATE, move |ctx, p| async move {
                validate(ctx, p, id, body).await
            })
        });
    let complete = warp::path!("v1" / "marking" / "imports" / String / "complete")
        .and(warp::post())
        .and(ctx(state))
        .and(body())
        .then(|id: String, ctx: Ctx, body: Body| {
            ctx.run(&COMPLETE, move |ctx, p| async move {
                complete(ctx, p, id, body).await
            })
        });
    create
        .or(upload)
        .unify()
        .or(validate)
        .unify()
        .or(complete)
        .unify()
        .boxed()
}

/// A session's title as given: 1 to [`MAX_TITLE_CHARS`] characters, no control characters
/// anywhere, not only spaces (the published schemas' `title` pattern says the same). Returns it
/// without its surrounding spaces, as it is stored.
pub fn checked_title(title: &str) -> Result<&str, ApiError> {
    let chars = title.chars().count();
    if chars == 0
        || chars > MAX_TITLE_CHARS
        || title.chars().any(char::is_control)
        || title.trim().is_empty()
    {
        return Err(ApiError::InvalidBody(format!(
            "title must be 1 to {MAX_TITLE_CHARS} characters, without control characters, and not only spaces"
        )));
    }
    Ok(title.trim())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateImport {
    title: String,
}

async fn create(ctx: Ctx, p: Principal, body: Body) -> Result<Reply, ApiError> {
    let bytes = read_body(&ctx, body, MAX_DOCUMENT_BYTES, document_too_large).await?;
    ctx.idempotent(&p, &CREATE, &bytes, || async {
        require_json(&ctx)?;
        let request: CreateImport = parse_json(&bytes)?;
        let title = checked_title(&request.title)?;
        let store = &ctx.state.store;
        let session = store
            .create_session(&p.user.id, title, Origin::Import)
            .await?;
        let view = session_view(store, &session).await?;
        Reply::json(StatusCode::CREATED, &serde_json::json!({ "session": view }))
    })
    .await
}

/// An import of this account, or 404.
async fn owned_import(ctx: &Ctx, p: &Principal, raw_id: &str) -> Result<SessionRow, ApiError> {
    let id = parse_id(raw_id, "import")?;
    match ctx.state.store.session(&p.user.id, &id).await? {
        Some(session) if session.origin == Origin::Import => Ok(session),
        _ => Err(ApiError::NotFound("import")),
    }
}

/// An import of this account with its files, in one read.
async fn owned_import_with_assets(
    ctx: &Ctx,
    p: &Principal,
    raw_id: &str,
) -> Result<(SessionRow, Vec<AssetRow>), ApiError> {
    let id = parse_id(raw_id, "import")?;
    match ctx.state.store.session_with_assets(&p.user.id, &id).await? {
        Some((session, assets)) if session.origin == Origin::Import => Ok((session, assets)),
        _ => Err(ApiError::NotFound("import")),
    }
}

async fn upload(
    ctx: Ctx,
    p: Principal,
    id: String,
    query: String,
    body: Body,
) -> Result<Reply, ApiError> {
    let session = owned_import(&ctx, &p, &id).await?;
    receive_asset(&ctx, &p, &session, &query, body, ApiError::ImportCompleted).await
}

/// Receives one uploaded file into a draft session (an import or a session for automated
/// marking): the query's `kind` and `name`, the declared and sniffed content type, the size and
/// page limits, then the store's per-session limits. `closed` is the error for a session that
/// takes no more files.
pub async fn receive_asset(
    ctx: &Ctx,
    p: &Principal,
    session: &SessionRow,
    query: &str,
    body: Body,
    closed: ApiError,
) -> Result<Reply, ApiError> {
    let mut kind = None;
    let mut name = None;
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        match key.as_ref() {
            "kind" => kind = Some(value.into_owned()),
            "name" => name = Some(value.into_owned()),
            _ => {}
        }
    }
    let kind = match kind.as_deref() {
        Some("work") => AssetKind::Work,
        Some("scheme") => AssetKind::Scheme,
        Some(other) => {
            return Err(ApiError::InvalidQuery(format!(
                "kind must be work or scheme, not {other:?}"
            )));
        }
        None => {
            return Err(ApiError::InvalidQuery(
                "the query parameter kind (work or scheme) is required".into(),
            ));
        }
    };
    let open = if session.status == SessionStatus::Draft {
        Ok(())
    } else {
        Err(closed.clone())
    };
    let file = super::upload::receive_file(ctx, name, body, open).await?;
    let ReceivedFile {
        name,
        file_type: declared_type,
        pages,
        bytes,
    } = file;
    let sha = sha256_hex(&bytes);
    let added = ctx
        .state
        .store
        .add_asset(
            &p.user.id,
            &session.id,
            session.origin,
            kind,
            &name,
            declared_type.media_type(),
            i64::try_from(pages).unwrap_or(i64::MAX),
            &sha,
            &bytes,
        )
        .await;
    let asset = match added {
        Ok(asset) => asset,
        Err(AddAssetError::NotFound) => {
            return Err(ApiError::NotFound(if session.origin == Origin::Import {
                "import"
            } else {
                "marking session"
            }));
        }
        Err(AddAssetError::Completed) => return Err(closed),
        Err(AddAssetError::TooManyFiles) => return Err(ApiError::TooManyFiles),
        Err(AddAssetError::SessionTooLarge) => return Err(ApiError::SessionTooLarge),
        Err(AddAssetError::Store(e)) => return Err(e.into()),
    };
    Reply::json(
        StatusCode::CREATED,
        &serde_json::json!({ "asset": asset_view(&asset) }),
    )
}

/// The 422 error for an invalid outcome, carrying the engine's errors.
pub fn validation_failed(outcome: &Outcome) -> ApiError {
    #[derive(Serialize)]
    struct Details<'a> {
        errors: &'a [examkit_engine::ValidationError],
        truncated: bool,
    }
    let truncated = matches!(outcome, Outcome::Invalid(r) if r.truncated);
    let errors = outcome.errors();
    let details = serde_json::to_string(&Details { errors, truncated })
        .ok()
        .and_then(|s| RawValue::from_string(s).ok());
    let Some(details) = details else {
        return ApiError::Internal;
    };
    let count = errors.len();
    ApiError::ValidationFailed {
        message: format!(
            "the submission is invalid: {count}{} error{}; see error.details.errors",
            if truncated { "+" } else { "" },
            if count == 1 { "" } else { "s" }
        ),
        details,
    }
}

async fn validate(ctx: Ctx, p: Principal, id: String, body: Body) -> Result<Reply, ApiError> {
    let (_, assets) = owned_import_with_assets(&ctx, &p, &id).await?;
    require_json(&ctx)?;
    let bytes = read_body(&ctx, body, MAX_DOCUMENT_BYTES, document_too_large).await?;
    let (_, outcome) = run_engine(bytes, engine_assets(&assets)?).await?;
    if outcome.is_valid() {
        Ok(Reply::raw_json(
            StatusCode::OK,
            outcome.to_json().into_bytes(),
        ))
    } else {
        Err(validation_failed(&outcome))
    }
}

async fn complete(ctx: Ctx, p: Principal, id: String, body: Body) -> Result<Reply, ApiError> {
    let session = owned_import(&ctx, &p, &id).await?;
    require_json(&ctx)?;
    let bytes = read_body(&ctx, body, MAX_DOCUMENT_BYTES, document_too_large).await?;
    ctx.idempotent(&p, &COMPLETE, &bytes, || async {
        let store = &ctx.state.store;
        let sha = sha256_hex(&bytes);
        let current = store.session_with_assets(&p.user.id, &session.id).await?;
        if let Some((current, _)) = &current
            && current.status == SessionStatus::Completed
        {
            return completed_reply(&ctx, &p, current, &sha).await;
        }
        let assets = current.map(|(_, assets)| assets).unwrap_or_default();
        let (bytes, outcome) = run_engine(bytes.clone(), engine_assets(&assets)?).await?;
        let Outcome::Valid(report) = &outcome else {
            return Err(validation_failed(&outcome));
        };
        let document: Value = serde_json::from_slice(&bytes).map_err(|_| ApiError::Internal)?;
        let questions = document["questions"].as_array().ok_or(ApiError::Internal)?;
        let mut data = Vec::with_capacity(questions.len());
        for (question, result) in questions.iter().zip(&report.questions) {
            data.push(QuestionData {
                label: result.label.clone(),
                status: question_status(result.status),
                awarded: i64::from(result.score.awarded),
                possible: i64::from(result.score.possible),
                max_marks: i64::from(result.score.max),
                question_json: question.to_string(),
                result_json: serde_json::to_string(result).map_err(|_| ApiError::Internal)?,
            });
        }
        let source = document["source"].to_string();
        let coverage_kind = document["coverage"]["kind"].as_str().unwrap_or("partial");
        let completion = store
            .complete_import(
                &p.user.id,
                &session.id,
                &sha,
                &source,
                coverage_kind,
                &outcome.to_json(),
                &data,
            )
            .await?;
        match completion {
            Completion::NotFound => Err(ApiError::NotFound("import")),
            Completion::Completed | Completion::AlreadyCompleted { .. } => {
                let current = store
                    .session(&p.user.id, &session.id)
                    .await?
                    .ok_or(ApiError::NotFound("import"))?;
                completed_reply(&ctx, &p, &current, &sha).await
            }
        }
    })
    .await
}

/// The response for a completed import: the same body for every repeat of the same submission,
/// 409 for a different one.
async fn completed_reply(
    ctx: &Ctx,
    _p: &Principal,
    session: &SessionRow,
    sha: &str,
) -> Result<Reply, ApiError> {
    if session.submission_sha256.as_deref() != Some(sha) {
        return Err(ApiError::ImportAlreadyCompleted);
    }
    let view = session_view(&ctx.state.store, session).await?;
    let outcome = session.outcome_json.clone().ok_or(ApiError::Internal)?;
    let outcome = RawValue::from_string(outcome).map_err(|_| ApiError::Internal)?;
    #[derive(Serialize)]
    struct Completed {
        session: Value,
        outcome: Box<RawValue>,
    }
    Reply::json(
        StatusCode::OK,
        &Completed {
            session: view,
            outcome,
        },
    )
}
