//! Saved papers (scopes `papers:read`, `papers:write`): `GET /v1/papers`, `POST /v1/papers`,
//! `GET` and `PATCH /v1/papers/{id}`, `GET /v1/papers/{id}/revisions/{revision}`, and the two PDFs
//! of a revision: `POST …/revisions/{revision}/exports` prepares them,
//! `GET …/exports/question-paper|mark-scheme` downloads them.
//!
//! Rules (also in `service/README.md` and the OpenAPI document):
//! - A paper is created with the client's UUID. The identical id and body again returns the same
//!   paper (revision 1, 201); the same id with other content is 409 `paper_exists`. Ids are per
//!   account: another account's paper is 404 and never blocks an id.
//! - Pins are checked against the bank: the question revision must exist and be published (or,
//!   when a change keeps a pin the paper already has, withdrawn since), and its content and scheme
//!   versions must equal the pin's; otherwise 422 `invalid_fields` with `pin_unknown`,
//!   `pin_mismatch` or `pin_withdrawn` at the pin's pointer.
//! - Each save typesets the paper to count its pages: the question paper and the mark scheme may
//!   each have at most [`MAX_PAGES`] pages (the upload limit for one PDF, so a printed paper
//!   scanned whole is one work file), else 422 `paper_too_long`.
//! - `PATCH` takes the current `revision` and any of `title`, `questions`, `writingSpace`,
//!   `gradeGuide`; a stale revision is 409 `stale_revision`. A change that changes nothing saves
//!   nothing and returns the current revision.
//! - Exports are prepared per revision, stored, and served from storage; preparation is safe to
//!   retry and is 503 `pdf_export_disabled` when the configuration turns PDF export off.

use std::sync::Arc;

use serde_json::{Value, json};
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use super::fields::{FieldError, invalid_fields, invalid_parameters};
use super::{
    ApiError, AppState, Body, Ctx, Op, Principal, Reply, body, ctx, read_body, require_json,
};
use crate::auth::Scope;
use crate::fields::{integer, uuid};
use crate::papers;
use crate::papers::request as paper_body;
use crate::store::papers::{ExportKind, StoredPaper};

const READ: &[Scope] = &[Scope::PapersRead];
const WRITE: &[Scope] = &[Scope::PapersWrite];
static LIST: Op = Op {
    name: "GET /v1/papers",
    scopes: READ,
};
static CREATE: Op = Op {
    name: "POST /v1/papers",
    scopes: WRITE,
};
static LATEST: Op = Op {
    name: "GET /v1/papers/{id}",
    scopes: READ,
};
static UPDATE: Op = Op {
    name: "PATCH /v1/papers/{id}",
    scopes: WRITE,
};
static REVISION: Op = Op {
    name: "GET /v1/papers/{id}/revisions/{revision}",
    scopes: READ,
};
static PREPARE: Op = Op {
    name: "POST /v1/papers/{id}/revisions/{revision}/exports",
    scopes: WRITE,
};
static DOWNLOAD: Op = Op {
    name: "GET /v1/papers/{id}/revisions/{revision}/exports/{kind}",
    scopes: READ,
};

/// The largest paper request body (create, update, export preparation), in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
pub use crate::papers::{DEFAULT_MAX_PAPERS, GRADE_GUIDE_NOTE, MAX_PAGES};

fn body_too_large(size: usize) -> ApiError {
    ApiError::PayloadTooLarge {
        size,
        limit: MAX_BODY_BYTES,
    }
}

/// The paper routes.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let list = warp::path!("v1" / "papers")
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|ctx: Ctx| ctx.run(&LIST, |ctx, p| async move { list(ctx, p).await }));
    let create = warp::path!("v1" / "papers")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|ctx: Ctx, body: Body| {
            ctx.run(
                &CREATE,
                move |ctx, p| async move { create(ctx, p, body).await },
            )
        });
    let latest = warp::path!("v1" / "papers" / String)
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|id: String, ctx: Ctx| {
            ctx.run(&LATEST, move |ctx, p| async move {
                read(ctx, p, id, None).await
            })
        });
    let update = warp::path!("v1" / "papers" / String)
        .and(warp::patch())
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, ctx: Ctx, body: Body| {
            ctx.run(&UPDATE, move |ctx, p| async move {
                update(ctx, p, id, body).await
            })
        });
    let revision = warp::path!("v1" / "papers" / String / "revisions" / String)
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|id: String, revision: String, ctx: Ctx| {
            ctx.run(&REVISION, move |ctx, p| async move {
                read(ctx, p, id, Some(revision)).await
            })
        });
    let prepare = warp::path!("v1" / "papers" / String / "revisions" / String / "exports")
        .and(warp::post())
        .and(ctx(state.clone()))
        .and(body())
        .then(|id: String, revision: String, ctx: Ctx, body: Body| {
            ctx.run(&PREPARE, move |ctx, p| async move {
                prepare(ctx, p, id, revision, body).await
            })
        });
    let download =
        warp::path!("v1" / "papers" / String / "revisions" / String / "exports" / String)
            .and(warp::get())
            .and(ctx(state))
            .then(|id: String, revision: String, kind: String, ctx: Ctx| {
                ctx.run(&DOWNLOAD, move |ctx, p| async move {
                    download(ctx, p, id, revision, kind).await
                })
            });
    list.or(create)
        .unify()
        .or(latest)
        .unify()
        .or(update)
        .unify()
        .or(revision)
        .unify()
        .or(prepare)
        .unify()
        .or(download)
        .unify()
        .boxed()
}

/// Path parameters: the paper id, and the revision and export kind where the route has them.
fn path(
    id: &str,
    revision: Option<&str>,
    kind: Option<&str>,
) -> Result<(String, Option<i64>, Option<ExportKind>), ApiError> {
    let mut errors = Vec::new();
    let id = uuid(&mut errors, "id", id);
    let revision =
        revision.and_then(|raw| integer(&mut errors, "revision", raw, 1, i64::from(u32::MAX)));
    let kind = kind.and_then(|raw| match raw {
        "question-paper" => Some(ExportKind::QuestionPaper),
        "mark-scheme" => Some(ExportKind::MarkScheme),
        _ => {
            errors.push(FieldError::new(
                "kind",
                "enum",
                format!("kind must be question-paper or mark-scheme, not {raw:?}"),
            ));
            None
        }
    });
    match id {
        Some(id) if errors.is_empty() => Ok((id, revision, kind)),
        _ => Err(invalid_parameters(errors)),
    }
}

/// Reads a JSON body of a paper route: JSON content type, at most [`MAX_BODY_BYTES`].
async fn json_body(ctx: &Ctx, body: Body) -> Result<Value, ApiError> {
    require_json(ctx)?;
    let bytes = read_body(ctx, body, MAX_BODY_BYTES, body_too_large).await?;
    if bytes.is_empty() {
        return Err(ApiError::InvalidJson(
            "the body is empty; send a JSON object".into(),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| ApiError::InvalidJson(e.to_string()))
}

/// The `Paper` object of a stored revision.
pub fn paper_view(paper: &StoredPaper) -> Value {
    let base = format!(
        "/v1/papers/{}/revisions/{}/exports",
        paper.id, paper.revision
    );
    let total = u32::try_from(paper.figures.total_marks).unwrap_or(u32::MAX);
    let grade_guide = paper.content.grade_guide.then(|| {
        let grades: Vec<Value> = examkit_pdf::GRADE_GUIDE
            .iter()
            .map(|(grade, percent)| {
                json!({
                    "grade": grade,
                    "percent": percent,
                    "marks": examkit_pdf::grade_marks(total, *percent),
                })
            })
            .collect();
        json!({ "estimate": true, "note": GRADE_GUIDE_NOTE, "grades": grades })
    });
    json!({
        "id": paper.id,
        "revision": paper.revision,
        "latestRevision": paper.latest_revision,
        "title": paper.content.title,
        "questions": paper.content.questions,
        "writingSpace": paper.content.writing_space,
        "gradeGuide": paper.content.grade_guide,
        "questionCount": paper.content.questions.len(),
        "totalMarks": paper.figures.total_marks,
        "timeGuideMinutes": examkit_pdf::time_guide_minutes(total),
        "pages": {
            "questionPaper": paper.figures.paper_pages,
            "markScheme": paper.figures.scheme_pages,
        },
        "estimatedGradeGuide": grade_guide,
        "exports": {
            "ready": paper.exports_ready,
            "questionPaper": format!("{base}/question-paper"),
            "markScheme": format!("{base}/mark-scheme"),
        },
        "createdAt": crate::store::rfc3339(paper.created_at),
        "savedAt": crate::store::rfc3339(paper.saved_at),
    })
}

fn paper_reply(status: StatusCode, paper: &StoredPaper) -> Result<Reply, ApiError> {
    Reply::json(status, &json!({ "paper": paper_view(paper) }))
}

async fn list(ctx: Ctx, p: Principal) -> Result<Reply, ApiError> {
    let papers: Vec<Value> = ctx
        .state
        .store
        .papers(&p.user.id)
        .await?
        .into_iter()
        .map(|paper| {
            json!({
                "id": paper.id,
                "revision": paper.revision,
                "title": paper.title,
                "questionCount": paper.question_count,
                "totalMarks": paper.total_marks,
                "writingSpace": paper.writing_space,
                "gradeGuide": paper.grade_guide,
                "createdAt": crate::store::rfc3339(paper.created_at),
                "updatedAt": crate::store::rfc3339(paper.updated_at),
            })
        })
        .collect();
    Reply::json(StatusCode::OK, &json!({ "papers": papers }))
}

async fn create(ctx: Ctx, p: Principal, body: Body) -> Result<Reply, ApiError> {
    let value = json_body(&ctx, body).await?;
    let paper = paper_body::create(&value).map_err(invalid_fields)?;
    let first = papers::create(&ctx.state, &p.user.id, &paper).await?;
    paper_reply(StatusCode::CREATED, &first)
}

async fn read(
    ctx: Ctx,
    p: Principal,
    id: String,
    revision: Option<String>,
) -> Result<Reply, ApiError> {
    let (id, revision, _) = path(&id, revision.as_deref(), None)?;
    let paper = papers::stored(&ctx.state, &p.user.id, &id, revision).await?;
    paper_reply(StatusCode::OK, &paper)
}

async fn update(ctx: Ctx, p: Principal, id: String, body: Body) -> Result<Reply, ApiError> {
    let (id, _, _) = path(&id, None, None)?;
    let value = json_body(&ctx, body).await?;
    let change = paper_body::update(&value).map_err(invalid_fields)?;
    let paper = papers::update(&ctx.state, &p.user.id, &id, &change).await?;
    paper_reply(StatusCode::OK, &paper)
}

async fn prepare(
    ctx: Ctx,
    p: Principal,
    id: String,
    revision: String,
    body: Body,
) -> Result<Reply, ApiError> {
    let (id, revision, _) = path(&id, Some(&revision), None)?;
    let revision = revision.ok_or(ApiError::Internal)?;
    let value = json_body(&ctx, body).await?;
    paper_body::export(&value).map_err(invalid_fields)?;
    papers::stored(&ctx.state, &p.user.id, &id, Some(revision)).await?;
    if !ctx.state.typesetter.export_enabled() {
        return Err(ApiError::PdfExportDisabled);
    }
    papers::ensure_exports(&ctx.state, &p.user.id, &id, revision).await?;
    // The question paper's recorded layout (each part's text and answer space), for clients that
    // place or read answers on its pages.
    let layout = ctx
        .state
        .store
        .export_layout(&p.user.id, &id, revision)
        .await?
        .flatten()
        .and_then(|layout| serde_json::from_str::<Value>(&layout).ok())
        .unwrap_or(Value::Null);
    Reply::json(
        StatusCode::OK,
        &json!({ "ready": true, "paperId": id, "revision": revision, "layout": layout }),
    )
}

async fn download(
    ctx: Ctx,
    p: Principal,
    id: String,
    revision: String,
    kind: String,
) -> Result<Reply, ApiError> {
    let (id, revision, kind) = path(&id, Some(&revision), Some(&kind))?;
    let (revision, kind) = revision.zip(kind).ok_or(ApiError::Internal)?;
    let paper = papers::stored(&ctx.state, &p.user.id, &id, Some(revision)).await?;
    if !paper.exports_ready {
        return Err(if ctx.state.typesetter.export_enabled() {
            ApiError::ExportsNotReady
        } else {
            ApiError::PdfExportDisabled
        });
    }
    let store = &ctx.state.store;
    let size = store
        .paper_export_size(&p.user.id, &id, revision, kind)
        .await?
        .ok_or(ApiError::ExportsNotReady)?;
    let range = ctx
        .headers
        .get(warp::http::header::RANGE)
        .and_then(|v| v.to_str().ok());
    let reply = match super::range::wanted(range, size) {
        super::range::Wanted::Unsatisfiable => return Err(ApiError::RangeNotSatisfiable(size)),
        super::range::Wanted::Whole => {
            let pdf = store
                .paper_export(&p.user.id, &id, revision, kind)
                .await?
                .ok_or(ApiError::ExportsNotReady)?;
            Reply::bytes("application/pdf", pdf)
        }
        super::range::Wanted::Part(part) => {
            let bytes = store
                .paper_export_range(&p.user.id, &id, revision, kind, part.clone())
                .await?
                .ok_or(ApiError::ExportsNotReady)?;
            Reply::bytes("application/pdf", bytes)
                .with_status(warp::http::StatusCode::PARTIAL_CONTENT)
                .with_header("content-range", &super::range::content_range(&part, size))
        }
    };
    let name = match kind {
        ExportKind::QuestionPaper => "question-paper",
        ExportKind::MarkScheme => "mark-scheme",
    };
    Ok(super::range::download_headers(
        reply,
        &format!("paper-{id}-r{revision}-{name}.pdf"),
    ))
}
