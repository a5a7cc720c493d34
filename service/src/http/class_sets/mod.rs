//! Class sets (`/v1/class-sets`, an extension of the specification): make one from a paper
//! revision and a number of copies or a roster (scopes `marking:submit` and `papers:read`, with
//! an `Idempotency-Key` like the marking routes), list and read them, and download the PDF of
//! every copy (`marking:read`; byte ranges as for a paper's exports) and the set's extra answer
//! sheet. Requests are parsed here; `crate::class_sets` holds the rules (a decision and a
//! start go through `crate::class_sets::actions`, as the app's forms do) and the store the rows.

mod view;

use std::sync::Arc;

use serde_json::Value;
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use super::fields::invalid_fields;
use super::{ApiError, AppState, Body, Ctx, Op, Principal, Reply, body, ctx, parse_id, read_body};
use crate::auth::Scope;
use crate::class_sets::actions::{self, Actor, DecideError, StartError};
use crate::class_sets::overview::{self, LoadError, StackNow};
use crate::class_sets::{self, NewClassSet};
use crate::store::class_sets::{CopyRow, SetRow};

static CREATE: Op = Op {
    name: "POST /v1/class-sets",
    scopes: &[Scope::MarkingSubmit, Scope::PapersRead],
};
static LIST: Op = Op {
    name: "GET /v1/class-sets",
    scopes: &[Scope::MarkingRead],
};
static READ: Op = Op {
    name: "GET /v1/class-sets/{id}",
    scopes: &[Scope::MarkingRead],
};
static EXTRA_SHEET: Op = Op {
    name: "GET /v1/class-sets/{id}/extra-sheet",
    scopes: &[Scope::MarkingRead],
};
static EXPORT: Op = Op {
    name: "GET /v1/class-sets/{id}/export",
    scopes: &[Scope::MarkingRead],
};
static SCANS: Op = Op {
    name: "POST /v1/class-sets/{id}/scans",
    scopes: &[Scope::MarkingSubmit],
};
static DECISIONS: Op = Op {
    name: "POST /v1/class-sets/{id}/decisions",
    scopes: &[Scope::MarkingSubmit],
};
static START: Op = Op {
    name: "POST /v1/class-sets/{id}/start",
    scopes: &[Scope::MarkingSubmit],
};

/// The largest body of `POST /v1/class-sets/{id}/decisions`.
pub const MAX_DECISION_BODY: usize = 4 * 1024;

/// The largest body of `POST /v1/class-sets`: a roster of 300 students with the longest names
/// fits in about 150 KiB of JSON.
pub const MAX_BODY: usize = 256 * 1024;

/// The routes of class sets.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let create = warp::path!("v1" / "class-sets")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|ctx: Ctx, body: Body| {
            ctx.run(
                &CREATE,
                move |ctx, p| async move { create(ctx, p, body).await },
            )
        });
    let list = warp::path!("v1" / "class-sets")
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|ctx: Ctx| ctx.run(&LIST, move |ctx, p| async move { list(ctx, p).await }));
    let read = warp::path!("v1" / "class-sets" / String)
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|id: String, ctx: Ctx| {
            ctx.run(&READ, move |ctx, p| async move { read(ctx, p, id).await })
        });
    let extra = warp::path!("v1" / "class-sets" / String / "extra-sheet")
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|id: String, ctx: Ctx| {
            ctx.run(&EXTRA_SHEET, move |ctx, p| async move {
                extra_sheet(ctx, p, id).await
            })
        });
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    let scans = warp::path!("v1" / "class-sets" / String / "scans")
        .and(warp::post())
        .and(query)
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, query: String, ctx: Ctx, body: Body| {
            ctx.run(&SCANS, move |ctx, p| async move {
                scans(ctx, p, id, query, body).await
            })
        });
    let decisions = warp::path!("v1" / "class-sets" / String / "decisions")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, ctx: Ctx, body: Body| {
            ctx.run(&DECISIONS, move |ctx, p| async move {
                decide(ctx, p, id, body).await
            })
        });
    let start = warp::path!("v1" / "class-sets" / String / "start")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, ctx: Ctx, body: Body| {
            ctx.run(&START, move |ctx, p| async move {
                start(ctx, p, id, body).await
            })
        });
    let export = warp::path!("v1" / "class-sets" / String / "export")
        .and(warp::get())
        .and(ctx(state))
        .then(|id: String, ctx: Ctx| {
            ctx.run(
                &EXPORT,
                move |ctx, p| async move { export(ctx, p, id).await },
            )
        });
    create
        .or(list)
        .unify()
        .or(read)
        .unify()
        .or(export)
        .unify()
        .or(extra)
        .unify()
        .or(scans)
        .unify()
        .or(decisions)
        .unify()
        .or(start)
        .unify()
        .boxed()
}

fn too_large(size: usize) -> ApiError {
    ApiError::PayloadTooLarge {
        size,
        limit: MAX_BODY,
    }
}

async fn create(ctx: Ctx, p: Principal, body: Body) -> Result<Reply, ApiError> {
    let bytes = read_body(&ctx, body, MAX_BODY, too_large).await?;
    ctx.idempotent(&p, &CREATE, &bytes, || async {
        super::require_json(&ctx)?;
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|e| ApiError::InvalidJson(e.to_string()))?;
        if !value.is_object() {
            return Err(ApiError::InvalidBody(format!(
                "the body must be a JSON object, not {}",
                super::fields::json_kind(&value)
            )));
        }
        let request: NewClassSet = class_sets::parse_new(&value).map_err(invalid_fields)?;
        let (set, copies) = class_sets::printing::create(&ctx.state, &p.user.id, &request).await?;
        Reply::json(
            StatusCode::CREATED,
            &view::OneSet {
                class_set: view::class_set(&set, Some(&copies)),
            },
        )
    })
    .await
}

async fn list(ctx: Ctx, p: Principal) -> Result<Reply, ApiError> {
    let sets = ctx.state.store.class_sets(&p.user.id).await?;
    let class_sets = sets.iter().map(|s| view::class_set(s, None)).collect();
    Reply::json(StatusCode::OK, &view::Sets { class_sets })
}

/// A class set of this account, or 404 (another account's set is not found either).
async fn owned(ctx: &Ctx, p: &Principal, raw_id: &str) -> Result<SetRow, ApiError> {
    let id = parse_id(raw_id, "class set")?;
    ctx.state
        .store
        .class_set(&p.user.id, &id)
        .await?
        .ok_or(ApiError::NotFound("class set"))
}

async fn read(ctx: Ctx, p: Principal, id: String) -> Result<Reply, ApiError> {
    let set = owned(&ctx, &p, &id).await?;
    let copies = ctx.state.store.class_set_copies(&set.id).await?;
    full_view(&ctx, &set, &copies, StatusCode::OK).await
}

/// A set with its copies, its stack and its scripts, answered with `status`.
async fn full_view(
    ctx: &Ctx,
    set: &SetRow,
    copies: &[CopyRow],
    status: StatusCode,
) -> Result<Reply, ApiError> {
    let now = stack_of(ctx, set, copies).await?;
    let progress = ctx.state.store.script_progress(&set.id).await?;
    let writers = now.writers(copies);
    let mut class_set = view::class_set(set, Some(copies));
    class_set.stack = Some(view::stack_now(&now, copies));
    class_set.marking = Some(view::marking(&progress, copies, &writers, &now.stack));
    Reply::json(status, &view::OneSet { class_set })
}

/// A set's stack could not be loaded: the database failed, or the set's stored values are out
/// of range.
fn load_failed(e: LoadError) -> ApiError {
    match e {
        LoadError::Store(e) => e.into(),
        LoadError::Corrupt(_) => ApiError::Internal,
    }
}

/// The set's stack as it stands: its files, and the report with people's decisions.
async fn stack_of(ctx: &Ctx, set: &SetRow, copies: &[CopyRow]) -> Result<StackNow, ApiError> {
    overview::stack_now(&ctx.state.store, set, copies)
        .await
        .map_err(load_failed)
}

/// `POST /v1/class-sets/{id}/scans?name=…`: one file of the scanned stack.
async fn scans(
    ctx: Ctx,
    p: Principal,
    id: String,
    query: String,
    body: Body,
) -> Result<Reply, ApiError> {
    if !ctx.state.marking.enabled {
        return Err(ApiError::AutomatedMarkingDisabled);
    }
    let set = owned(&ctx, &p, &id).await?;
    let mut name = None;
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        if key == "name" {
            name = Some(value.into_owned());
        }
    }
    let file = super::upload::receive_file(&ctx, name, body, Ok(())).await?;
    let asset = class_sets::uploads::add(&ctx.state, &p.user.id, &set.id, &file).await?;
    Reply::json(
        StatusCode::CREATED,
        &view::Uploaded {
            file: view::file(&asset),
        },
    )
}

/// A body of at most [`MAX_DECISION_BODY`] bytes (a decision, or a start's).
async fn small_body(ctx: &Ctx, body: Body) -> Result<Vec<u8>, ApiError> {
    read_body(ctx, body, MAX_DECISION_BODY, |size| {
        ApiError::PayloadTooLarge {
            size,
            limit: MAX_DECISION_BODY,
        }
    })
    .await
}

/// `POST /v1/class-sets/{id}/decisions`: a person's decision about a page or a copy of the
/// stack, recorded with the key that made it.
async fn decide(ctx: Ctx, p: Principal, id: String, body: Body) -> Result<Reply, ApiError> {
    let set = owned(&ctx, &p, &id).await?;
    let bytes = small_body(&ctx, body).await?;
    ctx.idempotent(&p, &DECISIONS, &bytes, || async {
        super::require_json(&ctx)?;
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|e| ApiError::InvalidJson(e.to_string()))?;
        let by = Actor {
            key_id: &p.key.id,
            user_id: &p.user.id,
        };
        let decision = class_sets::decision::parse(&value).map_err(invalid_fields)?;
        let decided = actions::decide(&ctx.state.store, &ctx.state.marking, &set, &decision, by)
            .await
            .map_err(|e| match e {
                DecideError::Invalid(problems) => invalid_fields(problems),
                DecideError::Load(e) => load_failed(e),
            })?;
        let copies = ctx.state.store.class_set_copies(&set.id).await?;
        Reply::json(
            StatusCode::CREATED,
            &view::Decided {
                decision: view::decision(&decided.row),
                stack: view::stack_now(&decided.now, &copies),
            },
        )
    })
    .await
}

/// `POST /v1/class-sets/{id}/start`: marks every script of the stack as it stands (see
/// [`actions::start`]).
async fn start(ctx: Ctx, p: Principal, id: String, body: Body) -> Result<Reply, ApiError> {
    if !ctx.state.marking.enabled {
        return Err(ApiError::AutomatedMarkingDisabled);
    }
    let set = owned(&ctx, &p, &id).await?;
    let bytes = small_body(&ctx, body).await?;
    ctx.idempotent(&p, &START, &bytes, || async {
        let store = &ctx.state.store;
        let paper =
            crate::papers::ensure_exports(&ctx.state, &p.user.id, &set.paper_id, set.revision);
        actions::start(store, &ctx.state.marking, &p.user.id, &set, paper)
            .await
            .map_err(|e| match e {
                StartError::NotReady(why) => {
                    ApiError::StackNotReady(actions::not_ready_message(&why))
                }
                StartError::Paper(e) => e,
                StartError::ExportsNotReady => ApiError::ExportsNotReady,
                StartError::Allowance {
                    message,
                    retry_after,
                } => ApiError::AllowanceExhausted {
                    message,
                    retry_after,
                },
                StartError::Load(e) => load_failed(e),
            })?;
        let copies = store.class_set_copies(&set.id).await?;
        full_view(&ctx, &set, &copies, StatusCode::ACCEPTED).await
    })
    .await
}

/// The set's extra answer sheet, typeset on request (the same bytes every time).
async fn extra_sheet(ctx: Ctx, p: Principal, id: String) -> Result<Reply, ApiError> {
    let set = owned(&ctx, &p, &id).await?;
    let pdf = class_sets::printing::extra_sheet(&ctx.state, &set).await?;
    Ok(Reply::bytes("application/pdf", pdf)
        .with_header(
            "content-disposition",
            &format!(
                "attachment; filename=\"class-set-{}-extra-sheet.pdf\"",
                set.id
            ),
        )
        .with_header("x-content-type-options", "nosniff")
        .with_header("cache-control", "private, no-store"))
}

async fn export(ctx: Ctx, p: Principal, id: String) -> Result<Reply, ApiError> {
    let set = owned(&ctx, &p, &id).await?;
    let store = &ctx.state.store;
    let size = u64::try_from(set.pdf_size).map_err(|_| ApiError::Internal)?;
    let range = ctx
        .headers
        .get(warp::http::header::RANGE)
        .and_then(|v| v.to_str().ok());
    let reply = match super::range::wanted(range, size) {
        super::range::Wanted::Unsatisfiable => return Err(ApiError::RangeNotSatisfiable(size)),
        super::range::Wanted::Whole => {
            let pdf = store
                .class_set_pdf(&p.user.id, &set.id)
                .await?
                .ok_or(ApiError::NotFound("class set"))?;
            Reply::bytes("application/pdf", pdf)
        }
        super::range::Wanted::Part(part) => {
            let bytes = store
                .class_set_pdf_range(&p.user.id, &set.id, part.clone())
                .await?
                .ok_or(ApiError::NotFound("class set"))?;
            Reply::bytes("application/pdf", bytes)
                .with_status(StatusCode::PARTIAL_CONTENT)
                .with_header("content-range", &super::range::content_range(&part, size))
        }
    };
    Ok(super::range::download_headers(
        reply,
        &format!("class-set-{}.pdf", set.id),
    ))
}
