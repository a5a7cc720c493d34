//! Sessions for automated marking (scope `marking:submit`): `POST /v1/marking/sessions`,
//! `…/from-builder`, `…/{id}/assets`, `…/{id}/start`, and the page index of an uploaded page,
//! `GET /v1/marking/assets/{id}/pages/{page}` (scope `marking:read`, an extension of the
//! specification). Requests are parsed here; the store and `crate::marking` do the work.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use super::fields::{FieldError, parse_json, pointer_token};
use super::imports::{checked_title, receive_asset};
use super::marking::{indexing_view, page_view, question_view, session_view};
use super::{ApiError, AppState, Body, Ctx, Op, Principal, Reply, body, ctx, parse_id, read_body};
use crate::auth::Scope;
use crate::marking::questions::QuestionRequest;
use crate::store::automated::questions::{CancelOutcome, NewQuestion, QueueOutcome};
use crate::store::automated::{ORIGIN, PageToIndex, PaperBinding, StartOutcome};
use crate::store::marking::SessionRow;
use crate::store::words::{AssetKind, IndexingState, SessionStatus};

const SUBMIT: &[Scope] = &[Scope::MarkingSubmit];
static CREATE: Op = Op {
    name: "POST /v1/marking/sessions",
    scopes: SUBMIT,
};
static FROM_BUILDER: Op = Op {
    name: "POST /v1/marking/sessions/from-builder",
    scopes: &[Scope::MarkingSubmit, Scope::PapersRead],
};
static UPLOAD: Op = Op {
    name: "POST /v1/marking/sessions/{id}/assets",
    scopes: SUBMIT,
};
static START: Op = Op {
    name: "POST /v1/marking/sessions/{id}/start",
    scopes: SUBMIT,
};
static QUESTION: Op = Op {
    name: "POST /v1/marking/sessions/{id}/questions",
    scopes: SUBMIT,
};
static CANCEL: Op = Op {
    name: "POST /v1/marking/questions/{id}/cancel",
    scopes: SUBMIT,
};
static PAGE: Op = Op {
    name: "GET /v1/marking/assets/{id}/pages/{page}",
    scopes: &[Scope::MarkingRead],
};

/// The largest JSON body of these routes.
const MAX_BODY: usize = 64 * 1024;

/// The routes of sessions for automated marking.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let create = warp::path!("v1" / "marking" / "sessions")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|ctx: Ctx, body: Body| {
            ctx.run(
                &CREATE,
                move |ctx, p| async move { create(ctx, p, body).await },
            )
        });
    let from_builder = warp::path!("v1" / "marking" / "sessions" / "from-builder")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|ctx: Ctx, body: Body| {
            ctx.run(&FROM_BUILDER, move |ctx, p| async move {
                from_builder(ctx, p, body).await
            })
        });
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    let upload = warp::path!("v1" / "marking" / "sessions" / String / "assets")
        .and(warp::post())
        .and(query)
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, query: String, ctx: Ctx, body: Body| {
            ctx.run(&UPLOAD, move |ctx, p| async move {
                upload(ctx, p, id, query, body).await
            })
        });
    let start = warp::path!("v1" / "marking" / "sessions" / String / "start")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, ctx: Ctx, body: Body| {
            ctx.run(&START, move |ctx, p| async move {
                start(ctx, p, id, body).await
            })
        });
    let question = warp::path!("v1" / "marking" / "sessions" / String / "questions")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, ctx: Ctx, body: Body| {
            ctx.run(&QUESTION, move |ctx, p| async move {
                mark_question(ctx, p, id, body).await
            })
        });
    let cancel = warp::path!("v1" / "marking" / "questions" / String / "cancel")
        .and(warp::post())
        .and(ctx(state.clone()))
        .then(|id: String, ctx: Ctx| {
            ctx.run(
                &CANCEL,
                move |ctx, p| async move { cancel(ctx, p, id).await },
            )
        });
    let page = warp::path!("v1" / "marking" / "assets" / String / "pages" / String)
        .and(warp::get())
        .and(ctx(state))
        .then(|id: String, page: String, ctx: Ctx| {
            ctx.run(&PAGE, move |ctx, p| async move {
                page_index(ctx, p, id, page).await
            })
        });
    create
        .or(from_builder)
        .unify()
        .or(upload)
        .unify()
        .or(start)
        .unify()
        .or(question)
        .unify()
        .or(cancel)
        .unify()
        .or(page)
        .unify()
        .boxed()
}

fn enabled(ctx: &Ctx) -> Result<(), ApiError> {
    if ctx.state.marking.enabled {
        Ok(())
    } else {
        Err(ApiError::AutomatedMarkingDisabled)
    }
}

/// Parses a JSON body, which must be an object of type `T`, after checking its content type.
fn parse_object<T: serde::de::DeserializeOwned>(ctx: &Ctx, bytes: &[u8]) -> Result<T, ApiError> {
    super::require_json(ctx)?;
    parse_json(bytes)
}

fn too_large(size: usize) -> ApiError {
    ApiError::PayloadTooLarge {
        size,
        limit: MAX_BODY,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateSession {
    title: String,
}

async fn create(ctx: Ctx, p: Principal, body: Body) -> Result<Reply, ApiError> {
    enabled(&ctx)?;
    let bytes = read_body(&ctx, body, MAX_BODY, too_large).await?;
    ctx.idempotent(&p, &CREATE, &bytes, || async {
        let request: CreateSession = parse_object(&ctx, &bytes)?;
        let title = checked_title(&request.title)?;
        let store = &ctx.state.store;
        let session = store
            .create_automated_session(&p.user.id, title, None)
            .await?;
        let view = session_view(store, &session).await?;
        Reply::json(StatusCode::CREATED, &json!({ "session": view }))
    })
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FromBuilder {
    paper_id: String,
    #[serde(deserialize_with = "super::fields::integer_field")]
    revision: i64,
}

async fn from_builder(ctx: Ctx, p: Principal, body: Body) -> Result<Reply, ApiError> {
    enabled(&ctx)?;
    let bytes = read_body(&ctx, body, MAX_BODY, too_large).await?;
    ctx.idempotent(&p, &FROM_BUILDER, &bytes, || async {
        let request: FromBuilder = parse_object(&ctx, &bytes)?;
        let paper_id = uuid::Uuid::parse_str(&request.paper_id)
            .map_err(|_| ApiError::InvalidBody("paperId must be a UUID".into()))?
            .hyphenated()
            .to_string();
        if request.revision < 1 {
            return Err(ApiError::InvalidBody(
                "revision must be an integer of at least 1".into(),
            ));
        }
        let (paper, bank) =
            crate::papers::ensure_exports(&ctx.state, &p.user.id, &paper_id, request.revision)
                .await?;
        let scheme = crate::marking::paper_scheme::paper_scheme(&paper.content.questions, &bank)?;
        let store = &ctx.state.store;
        let mark_scheme = store
            .paper_export(
                &p.user.id,
                &paper_id,
                request.revision,
                crate::store::papers::ExportKind::MarkScheme,
            )
            .await?
            .ok_or(ApiError::ExportsNotReady)?;
        let binding = PaperBinding {
            paper_id: paper_id.clone(),
            revision: request.revision,
            scheme_json: scheme.to_string(),
        };
        let session = store
            .create_automated_session(&p.user.id, &paper.content.title, Some(&binding))
            .await?;
        let name = format!("paper-{paper_id}-r{}-mark-scheme.pdf", request.revision);
        let sha = crate::auth::sha256_hex(&mark_scheme);
        store
            .add_asset(
                &p.user.id,
                &session.id,
                ORIGIN,
                AssetKind::Scheme,
                &name,
                "application/pdf",
                paper.figures.scheme_pages,
                &sha,
                &mark_scheme,
            )
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "attaching the mark scheme failed");
                ApiError::Internal
            })?;
        let session = store
            .session(&p.user.id, &session.id)
            .await?
            .ok_or(ApiError::Internal)?;
        let view = session_view(store, &session).await?;
        Reply::json(StatusCode::CREATED, &json!({ "session": view }))
    })
    .await
}

/// An automated-marking session of this account, or 404.
async fn owned_session(ctx: &Ctx, p: &Principal, raw_id: &str) -> Result<SessionRow, ApiError> {
    let id = parse_id(raw_id, "marking session")?;
    match ctx.state.store.session(&p.user.id, &id).await? {
        Some(session) if session.origin == ORIGIN => Ok(session),
        _ => Err(ApiError::NotFound("marking session")),
    }
}

async fn upload(
    ctx: Ctx,
    p: Principal,
    id: String,
    query: String,
    body: Body,
) -> Result<Reply, ApiError> {
    enabled(&ctx)?;
    let session = owned_session(&ctx, &p, &id).await?;
    receive_asset(&ctx, &p, &session, &query, body, ApiError::SessionStarted).await
}

async fn start(ctx: Ctx, p: Principal, id: String, body: Body) -> Result<Reply, ApiError> {
    enabled(&ctx)?;
    let session = owned_session(&ctx, &p, &id).await?;
    let bytes = read_body(&ctx, body, MAX_BODY, too_large).await?;
    ctx.idempotent(&p, &START, &bytes, || async {
        if session.status != SessionStatus::Draft {
            return Err(ApiError::SessionStarted);
        }
        let store = &ctx.state.store;
        let assets = store.session_assets(&session.id).await?;
        if !assets.iter().any(|a| a.kind == AssetKind::Work) {
            return Err(ApiError::WorkRequired);
        }
        if !assets.iter().any(|a| a.kind == AssetKind::Scheme) && session.paper.is_none() {
            return Err(ApiError::SchemeRequired);
        }
        let pages: Vec<PageToIndex> = assets
            .iter()
            .flat_map(|a| {
                (1..=a.page_count).map(|page| PageToIndex {
                    asset_id: a.id.clone(),
                    page,
                })
            })
            .collect();
        let config = &ctx.state.marking;
        let outcome = store
            .start_indexing(
                &p.user.id,
                &session.id,
                &pages,
                &config.allowance,
                config.max_attempts,
            )
            .await?;
        match outcome {
            StartOutcome::Started => {}
            StartOutcome::AlreadyStarted => return Err(ApiError::SessionStarted),
            StartOutcome::NotFound => return Err(ApiError::NotFound("marking session")),
            StartOutcome::AllowanceExceeded {
                used,
                needed,
                retry_after,
            } => {
                return Err(ApiError::AllowanceExhausted {
                    message: format!(
                        "indexing this session needs {needed} pages; {used} of today's {} pages are used",
                        config.allowance.pages_per_day
                    ),
                    retry_after,
                });
            }
        }
        let session = store
            .session(&p.user.id, &session.id)
            .await?
            .ok_or(ApiError::NotFound("marking session"))?;
        let pages = store.session_pages(&session.id).await?;
        Reply::json(
            StatusCode::ACCEPTED,
            &json!({ "indexing": indexing_view(&session, &pages, &assets) }),
        )
    })
    .await
}

async fn page_index(ctx: Ctx, p: Principal, id: String, page: String) -> Result<Reply, ApiError> {
    let id = parse_id(&id, "asset")?;
    let page = page
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 1 && !page.starts_with('0'))
        .ok_or(ApiError::NotFound("page"))?;
    let store = &ctx.state.store;
    let asset = store
        .asset(&p.user.id, &id)
        .await?
        .ok_or(ApiError::NotFound("asset"))?;
    let record = store
        .page_record(&p.user.id, &id, page)
        .await?
        .ok_or(ApiError::NotFound("indexed page"))?;
    let pages = store.session_pages(&asset.session_id).await?;
    let script = crate::marking::indexing::scripts(&pages).contains(&asset.id);
    let mut view = page_view(&record, asset.kind.as_str(), script);
    view["words"] = serde_json::from_str(&record.words_json).map_err(|_| ApiError::Internal)?;
    Reply::json(StatusCode::OK, &json!({ "page": view }))
}

/// Reads a MarkQuestion body into a request, every invalid field reported at its pointer.
fn read_mark_question(
    value: &Value,
    assets: &[crate::store::marking::AssetRow],
    live_labels: &[String],
) -> Result<(String, QuestionRequest), ApiError> {
    use super::fields::invalid_fields;
    let mut errors: Vec<FieldError> = Vec::new();
    let Some(object) = value.as_object() else {
        return Err(ApiError::InvalidBody(
            "the body must be a JSON object".into(),
        ));
    };
    for key in object.keys() {
        if !matches!(
            key.as_str(),
            "label" | "workAssetIds" | "schemeAssetIds" | "pageSelections"
        ) {
            errors.push(FieldError::new(
                &format!("/{}", pointer_token(key)),
                "unknown_field",
                format!("{key} is not a field of MarkQuestion"),
            ));
        }
    }
    let label = question_label(object.get("label"), live_labels, &mut errors);
    if live_labels.len() >= crate::store::automated::questions::MAX_QUESTIONS_PER_SESSION as usize {
        errors.push(FieldError::new(
            "",
            "too_many_questions",
            "a session holds at most 24 questions",
        ));
    }
    let work = asset_ids(object, "workAssetIds", AssetKind::Work, assets, &mut errors);
    let scheme = asset_ids(
        object,
        "schemeAssetIds",
        AssetKind::Scheme,
        assets,
        &mut errors,
    );
    let selections = match object.get("pageSelections") {
        None => {
            errors.push(FieldError::new(
                "/pageSelections",
                "required",
                "pageSelections is required",
            ));
            BTreeMap::new()
        }
        Some(Value::Object(map)) => page_selections(map, assets, &work, &scheme, &mut errors),
        Some(_) => {
            errors.push(FieldError::new(
                "/pageSelections",
                "type",
                "pageSelections is an object: asset id → page numbers",
            ));
            BTreeMap::new()
        }
    };
    if !errors.is_empty() {
        return Err(invalid_fields(errors));
    }
    Ok((
        label,
        QuestionRequest {
            work_asset_ids: work,
            scheme_asset_ids: scheme,
            page_selections: selections,
        },
    ))
}

/// A question's `label`: present, a string, not empty, short, printable, and new to the session.
fn question_label(
    label: Option<&Value>,
    live_labels: &[String],
    errors: &mut Vec<FieldError>,
) -> String {
    match label {
        None => {
            errors.push(FieldError::new("/label", "required", "label is required"));
            String::new()
        }
        Some(Value::String(label)) => {
            let chars = label.chars().count();
            if label.trim().is_empty() {
                errors.push(FieldError::new(
                    "/label",
                    "min_length",
                    "label must not be empty",
                ));
            } else if chars > examkit_engine::limits::MAX_LABEL_CHARS {
                errors.push(FieldError::new(
                    "/label",
                    "max_length",
                    "label must be at most 40 characters",
                ));
            } else if label.chars().any(char::is_control) {
                errors.push(FieldError::new(
                    "/label",
                    "pattern",
                    "label must not contain control characters",
                ));
            } else if live_labels.iter().any(|l| l == label) {
                errors.push(FieldError::new(
                    "/label",
                    "duplicate_label",
                    format!("the session already has question {label:?} queued or marked"),
                ));
            }
            label.clone()
        }
        Some(_) => {
            errors.push(FieldError::new("/label", "type", "label must be a string"));
            String::new()
        }
    }
}

/// The ids listed in `field`: at least one, each an asset of the session of role `kind`, once.
fn asset_ids(
    object: &serde_json::Map<String, Value>,
    field: &str,
    kind: AssetKind,
    assets: &[crate::store::marking::AssetRow],
    errors: &mut Vec<FieldError>,
) -> Vec<String> {
    let pointer = format!("/{field}");
    match object.get(field) {
        None => {
            errors.push(FieldError::new(
                &pointer,
                "required",
                format!("{field} is required"),
            ));
            Vec::new()
        }
        Some(Value::Array(items)) => {
            if items.is_empty() {
                errors.push(FieldError::new(
                    &pointer,
                    "min_items",
                    format!("{field} needs at least one {kind} asset"),
                ));
            }
            let mut seen = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let at = format!("{pointer}/{i}");
                let Some(id) = item.as_str() else {
                    errors.push(FieldError::new(&at, "type", "an asset id is a string"));
                    continue;
                };
                match assets.iter().find(|a| a.id == id) {
                    None => errors.push(FieldError::new(
                        &at,
                        "unknown_asset",
                        format!("{id} is not an asset of this session"),
                    )),
                    Some(a) if a.kind != kind => errors.push(FieldError::new(
                        &at,
                        "asset_role_mismatch",
                        format!("{id} is a {} asset, not {kind}", a.kind),
                    )),
                    Some(_) if seen.iter().any(|s: &String| s == id) => errors.push(
                        FieldError::new(&at, "unique_items", format!("{id} is listed twice")),
                    ),
                    Some(_) => seen.push(id.to_owned()),
                }
            }
            seen
        }
        Some(_) => {
            errors.push(FieldError::new(
                &pointer,
                "type",
                format!("{field} must be an array of asset ids"),
            ));
            Vec::new()
        }
    }
}

/// `pageSelections`: the pages chosen of every listed asset, and no more pages than a question
/// may be marked from.
fn page_selections(
    map: &serde_json::Map<String, Value>,
    assets: &[crate::store::marking::AssetRow],
    work: &[String],
    scheme: &[String],
    errors: &mut Vec<FieldError>,
) -> BTreeMap<String, Vec<u32>> {
    let mut selections = BTreeMap::new();
    let (mut work_pages, mut scheme_pages) = (0usize, 0usize);
    for (id, pages) in map {
        let at = format!("/pageSelections/{}", pointer_token(id));
        let Some(asset) = assets.iter().find(|a| &a.id == id) else {
            errors.push(FieldError::new(
                &at,
                "unknown_asset",
                format!("{id} is not an asset of this session"),
            ));
            continue;
        };
        if !work.contains(id) && !scheme.contains(id) {
            errors.push(FieldError::new(
                &at,
                "asset_not_listed",
                format!("{id} is not in workAssetIds or schemeAssetIds"),
            ));
            continue;
        }
        let Some(pages) = pages.as_array() else {
            errors.push(FieldError::new(
                &at,
                "type",
                "a selection is an array of page numbers",
            ));
            continue;
        };
        let chosen = chosen_pages(&at, pages, asset.page_count, errors);
        if asset.kind == AssetKind::Work {
            work_pages += chosen.len();
        } else {
            scheme_pages += chosen.len();
        }
        selections.insert(id.clone(), chosen);
    }
    for id in work.iter().chain(scheme.iter()) {
        if !map.contains_key(id) {
            errors.push(FieldError::new(
                "/pageSelections",
                "missing_selection",
                format!("select pages of asset {id}"),
            ));
        }
    }
    if work_pages > crate::marking::questions::MAX_WORK_PAGES {
        errors.push(FieldError::new(
            "/pageSelections",
            "too_many_work_pages",
            format!("{work_pages} work pages are selected; at most 12"),
        ));
    }
    if scheme_pages > crate::marking::questions::MAX_SCHEME_PAGES {
        errors.push(FieldError::new(
            "/pageSelections",
            "too_many_scheme_pages",
            format!("{scheme_pages} scheme pages are selected; at most 12"),
        ));
    }
    selections
}

/// The pages selected of one file (at `at`): at least one, each a page of its `page_count`, once.
fn chosen_pages(
    at: &str,
    pages: &[Value],
    page_count: i64,
    errors: &mut Vec<FieldError>,
) -> Vec<u32> {
    if pages.is_empty() {
        errors.push(FieldError::new(at, "min_items", "select at least one page"));
    }
    let mut chosen: Vec<u32> = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let at = format!("{at}/{i}");
        match super::fields::json_integer(page).and_then(|n| u32::try_from(n).ok()) {
            Some(n) if n >= 1 && i64::from(n) <= page_count => {
                if chosen.contains(&n) {
                    errors.push(FieldError::new(
                        &at,
                        "unique_items",
                        format!("page {n} is selected twice"),
                    ));
                } else {
                    chosen.push(n);
                }
            }
            Some(n) => errors.push(FieldError::new(
                &at,
                "page_out_of_range",
                format!("page {n} is not a page of the file (1 to {page_count})"),
            )),
            None => errors.push(FieldError::new(
                &at,
                "type",
                "a page number is an integer of at least 1",
            )),
        }
    }
    chosen
}

async fn mark_question(ctx: Ctx, p: Principal, id: String, body: Body) -> Result<Reply, ApiError> {
    enabled(&ctx)?;
    let session = owned_session(&ctx, &p, &id).await?;
    let bytes = read_body(&ctx, body, MAX_BODY, too_large).await?;
    ctx.idempotent(&p, &QUESTION, &bytes, || async {
        super::require_json(&ctx)?;
        let value: Value = parse_json(&bytes)?;
        let store = &ctx.state.store;
        let session = store
            .session(&p.user.id, &session.id)
            .await?
            .ok_or(ApiError::NotFound("marking session"))?;
        if !session
            .indexing_state
            .is_some_and(IndexingState::is_finished)
        {
            return Err(ApiError::IndexingNotFinished);
        }
        let assets = store.session_assets(&session.id).await?;
        let labels = store.live_labels(&session.id).await?;
        let (label, request) = read_mark_question(&value, &assets, &labels)?;
        let config = &ctx.state.marking;
        let new = NewQuestion {
            label,
            request_json: serde_json::to_string(&request).map_err(|_| ApiError::Internal)?,
            failed: None,
            unmarked: None,
        };
        let mut tx = store.begin_write().await?;
        let outcome = store
            .queue_questions(
                &mut tx,
                &p.user.id,
                &session.id,
                &[new],
                config.allowance.questions_per_day,
                config.max_attempts,
            )
            .await?;
        let id = match outcome {
            QueueOutcome::Queued(ids) => {
                tx.commit().await.map_err(crate::store::StoreError::from)?;
                ids.into_iter().next().ok_or(ApiError::Internal)?
            }
            QueueOutcome::DuplicateLabel(label) => {
                return Err(super::fields::invalid_fields(vec![
                    super::fields::FieldError::new(
                        "/label",
                        "duplicate_label",
                        format!("the session already has question {label:?} queued or marked"),
                    ),
                ]));
            }
            QueueOutcome::TooManyQuestions => {
                return Err(super::fields::invalid_fields(vec![
                    super::fields::FieldError::new(
                        "",
                        "too_many_questions",
                        "a session holds at most 24 questions",
                    ),
                ]));
            }
            QueueOutcome::AllowanceExceeded { used, retry_after } => {
                return Err(ApiError::AllowanceExhausted {
                    message: format!(
                        "{used} of today's {} questions are used",
                        config.allowance.questions_per_day
                    ),
                    retry_after,
                });
            }
        };
        let question = store
            .question(&p.user.id, &id)
            .await?
            .ok_or(ApiError::Internal)?;
        let kinds = crate::marking::questions::asset_kinds(&assets);
        Reply::json(
            StatusCode::ACCEPTED,
            &json!({ "question": question_view(&question, &kinds)? }),
        )
    })
    .await
}

async fn cancel(ctx: Ctx, p: Principal, id: String) -> Result<Reply, ApiError> {
    let id = parse_id(&id, "marking question")?;
    let store = &ctx.state.store;
    match store
        .cancel_question(&p.user.id, &id, "cancelled at the client's request")
        .await?
    {
        CancelOutcome::Cancelled => {}
        CancelOutcome::Finished(status) => return Err(ApiError::QuestionFinished(status)),
        CancelOutcome::NotFound => return Err(ApiError::NotFound("marking question")),
    }
    let question = store
        .question(&p.user.id, &id)
        .await?
        .ok_or(ApiError::NotFound("marking question"))?;
    let assets = store.session_assets(&question.session_id).await?;
    let kinds = crate::marking::questions::asset_kinds(&assets);
    Reply::json(
        StatusCode::OK,
        &json!({ "question": question_view(&question, &kinds)? }),
    )
}
