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

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use super::fields::{FieldError, integer, invalid_fields, invalid_parameters, uuid};
use super::paper_body::{self, CreatePaper};
use super::{
    ApiError, AppState, Body, Ctx, Op, Principal, Reply, body, ctx, read_body, require_json,
};
use crate::auth::{Scope, sha256_hex};
use crate::store::now_ms;
use crate::store::papers::{
    BankRevision, Created, ExportKind, PaperContent, PaperFigures, Pin, StoredPaper, Updated,
};
use crate::typeset::TypesetError;

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
/// The most pages the question paper, and separately the mark scheme, of a paper may have.
pub const MAX_PAGES: usize = 80;
/// The most papers one account may hold, by default.
pub const DEFAULT_MAX_PAPERS: usize = 1000;
/// What the estimated grade guide says of itself, in the paper and on the mark scheme.
pub const GRADE_GUIDE_NOTE: &str = "An estimated grade guide for practice, not an official grade boundary: each grade needs the given percentage of the paper's total marks, rounded up.";

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

/// The SHA-256 of a creation body's checked content: identical retries compare equal whatever
/// their key order, spacing or id case.
fn create_hash(paper: &CreatePaper) -> String {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Canonical<'a> {
        id: &'a str,
        title: &'a str,
        questions: &'a [Pin],
        writing_space: &'a str,
        grade_guide: bool,
    }
    let canonical = Canonical {
        id: &paper.id,
        title: &paper.content.title,
        questions: &paper.content.questions,
        writing_space: &paper.content.writing_space,
        grade_guide: paper.content.grade_guide,
    };
    sha256_hex(&serde_json::to_vec(&canonical).unwrap_or_default())
}

/// Checks each pin against the bank; `kept` are the pins of the revision being changed, which
/// may have been withdrawn since they were chosen.
async fn check_pins(ctx: &Ctx, pins: &[Pin], kept: &[Pin]) -> Result<Vec<BankRevision>, ApiError> {
    let mut errors = Vec::new();
    let mut found = Vec::with_capacity(pins.len());
    for (i, pin) in pins.iter().enumerate() {
        let at = format!("/questions/{i}");
        let stored = ctx
            .state
            .store
            .bank_revision(&pin.question_id, pin.revision)
            .await?;
        let Some(stored) = stored.filter(|r| r.status != "draft") else {
            errors.push(FieldError::new(
                &at,
                "pin_unknown",
                format!(
                    "the bank has no published revision {} of question {}; copy pins unchanged from search results",
                    pin.revision, pin.question_id
                ),
            ));
            continue;
        };
        if stored.content_version != pin.content_version {
            errors.push(FieldError::new(
                &format!("{at}/contentVersion"),
                "pin_mismatch",
                format!(
                    "this is not the content version of revision {} of question {}; copy pins unchanged from search results",
                    pin.revision, pin.question_id
                ),
            ));
        }
        if stored.scheme_version != pin.scheme_version {
            errors.push(FieldError::new(
                &format!("{at}/schemeVersion"),
                "pin_mismatch",
                format!(
                    "this is not the scheme version of revision {} of question {}; copy pins unchanged from search results",
                    pin.revision, pin.question_id
                ),
            ));
        }
        if stored.status == "withdrawn" && !kept.contains(pin) {
            errors.push(FieldError::new(
                &at,
                "pin_withdrawn",
                format!(
                    "revision {} of question {} has been withdrawn and cannot be added to a paper; search for its current revision",
                    pin.revision, pin.question_id
                ),
            ));
        }
        found.push(stored);
    }
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(invalid_fields(errors))
    }
}

/// Loads the bank revisions of pins already saved in a paper (no status check: a saved paper
/// keeps its question versions).
async fn saved_revisions(ctx: &Ctx, pins: &[Pin]) -> Result<Vec<BankRevision>, ApiError> {
    let mut found = Vec::with_capacity(pins.len());
    for pin in pins {
        let stored = ctx
            .state
            .store
            .bank_revision(&pin.question_id, pin.revision)
            .await?
            .ok_or_else(|| {
                ApiError::RevisionNotExportable(format!(
                    "revision {} of question {} is no longer in the bank",
                    pin.revision, pin.question_id
                ))
            })?;
        found.push(stored);
    }
    Ok(found)
}

/// The typesetter's view of a paper revision: its pinned bank revisions and their diagram files.
pub(crate) async fn document(
    ctx: &Ctx,
    id: &str,
    revision: i64,
    content: &PaperContent,
    bank: &[BankRevision],
) -> Result<examkit_pdf::PaperDocument, ApiError> {
    let corrupt = |what: String| {
        tracing::error!(paper = %id, revision, "{what}");
        ApiError::Internal
    };
    let mut questions = Vec::with_capacity(bank.len());
    for (pin, stored) in content.questions.iter().zip(bank) {
        let revision: examkit_bank::Revision = serde_json::from_str(&stored.body).map_err(|e| {
            corrupt(format!(
                "stored question {} is not a revision: {e}",
                pin.question_id
            ))
        })?;
        let mut assets = BTreeMap::new();
        for (asset_id, bytes) in ctx
            .state
            .store
            .bank_revision_files(&pin.question_id, pin.revision)
            .await?
        {
            let asset_id = uuid::Uuid::parse_str(&asset_id)
                .map_err(|e| corrupt(format!("stored asset id {asset_id}: {e}")))?;
            assets.insert(asset_id, bytes);
        }
        questions.push(examkit_pdf::PaperQuestion {
            question_id: uuid::Uuid::parse_str(&pin.question_id)
                .map_err(|e| corrupt(format!("pinned question id: {e}")))?,
            revision,
            assets,
        });
    }
    Ok(examkit_pdf::PaperDocument {
        paper_id: uuid::Uuid::parse_str(id).map_err(|e| corrupt(format!("paper id: {e}")))?,
        revision: u32::try_from(revision).map_err(|e| corrupt(format!("revision: {e}")))?,
        title: content.title.clone(),
        writing_space: content
            .writing_space
            .parse()
            .map_err(|e| corrupt(format!("writing space: {e}")))?,
        grade_guide: content.grade_guide,
        questions,
    })
}

/// Typesets a paper about to be saved: its marks and pages, within [`MAX_PAGES`].
async fn measure(
    ctx: &Ctx,
    id: &str,
    revision: i64,
    content: &PaperContent,
    bank: &[BankRevision],
) -> Result<PaperFigures, ApiError> {
    let doc = document(ctx, id, revision, content, bank).await?;
    let pages = ctx
        .state
        .typesetter
        .page_counts(doc)
        .await
        .map_err(|e| match e {
            TypesetError::Render(e) => ApiError::PaperNotTypesettable(e.to_string()),
            TypesetError::Timeout(_) => {
                ApiError::ServiceUnavailable("typesetting is busy; retry the save shortly".into())
            }
            TypesetError::Task(e) => {
                tracing::error!(error = %e, "typesetting task failed");
                ApiError::Internal
            }
        })?;
    if pages.question_paper > MAX_PAGES || pages.mark_scheme > MAX_PAGES {
        return Err(ApiError::PaperTooLong {
            question_paper: pages.question_paper,
            mark_scheme: pages.mark_scheme,
            limit: MAX_PAGES,
        });
    }
    let as_i64 = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    Ok(PaperFigures {
        total_marks: bank.iter().map(|r| r.marks).sum(),
        paper_pages: as_i64(pages.question_paper),
        scheme_pages: as_i64(pages.mark_scheme),
    })
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

async fn stored(
    ctx: &Ctx,
    p: &Principal,
    id: &str,
    revision: Option<i64>,
) -> Result<StoredPaper, ApiError> {
    ctx.state
        .store
        .paper(&p.user.id, id, revision)
        .await?
        .ok_or(ApiError::NotFound(if revision.is_some() {
            "paper revision"
        } else {
            "paper"
        }))
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

/// The reply to a creation whose id the account already has.
async fn existing(
    ctx: &Ctx,
    p: &Principal,
    paper: &CreatePaper,
    stored_hash: &str,
    hash: &str,
) -> Result<Reply, ApiError> {
    if stored_hash != hash {
        return Err(ApiError::PaperExists);
    }
    let first = stored(ctx, p, &paper.id, Some(1)).await?;
    paper_reply(StatusCode::CREATED, &first)
}

async fn create(ctx: Ctx, p: Principal, body: Body) -> Result<Reply, ApiError> {
    let value = json_body(&ctx, body).await?;
    let paper = paper_body::create(&value).map_err(invalid_fields)?;
    let hash = create_hash(&paper);
    let store = &ctx.state.store;
    if let Some(stored_hash) = store.paper_create_hash(&p.user.id, &paper.id).await? {
        return existing(&ctx, &p, &paper, &stored_hash, &hash).await;
    }
    let bank = check_pins(&ctx, &paper.content.questions, &[]).await?;
    let figures = measure(&ctx, &paper.id, 1, &paper.content, &bank).await?;
    let created = store
        .create_paper(
            &p.user.id,
            &paper.id,
            &hash,
            &paper.content,
            &figures,
            ctx.state.max_papers,
            now_ms(),
        )
        .await?;
    match created {
        Created::New => {
            let first = stored(&ctx, &p, &paper.id, Some(1)).await?;
            paper_reply(StatusCode::CREATED, &first)
        }
        Created::Existing { create_hash } => existing(&ctx, &p, &paper, &create_hash, &hash).await,
        Created::LimitReached => Err(ApiError::TooManyPapers(ctx.state.max_papers)),
    }
}

async fn read(
    ctx: Ctx,
    p: Principal,
    id: String,
    revision: Option<String>,
) -> Result<Reply, ApiError> {
    let (id, revision, _) = path(&id, revision.as_deref(), None)?;
    let paper = stored(&ctx, &p, &id, revision).await?;
    paper_reply(StatusCode::OK, &paper)
}

async fn update(ctx: Ctx, p: Principal, id: String, body: Body) -> Result<Reply, ApiError> {
    let (id, _, _) = path(&id, None, None)?;
    let value = json_body(&ctx, body).await?;
    let change = paper_body::update(&value).map_err(invalid_fields)?;
    let current = stored(&ctx, &p, &id, None).await?;
    if change.revision != current.revision {
        return Err(ApiError::StaleRevision(current.revision));
    }
    let content = change.apply(&current.content);
    if content == current.content {
        return paper_reply(StatusCode::OK, &current);
    }
    let next = current.revision + 1;
    let bank = check_pins(&ctx, &content.questions, &current.content.questions).await?;
    let figures = measure(&ctx, &id, next, &content, &bank).await?;
    let saved = ctx
        .state
        .store
        .update_paper(
            &p.user.id,
            &id,
            change.revision,
            &content,
            &figures,
            now_ms(),
        )
        .await?;
    match saved {
        Updated::Saved(revision) => {
            let paper = stored(&ctx, &p, &id, Some(revision)).await?;
            paper_reply(StatusCode::OK, &paper)
        }
        Updated::Stale(current) => Err(ApiError::StaleRevision(current)),
        Updated::Missing => Err(ApiError::NotFound("paper")),
    }
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
    stored(&ctx, &p, &id, Some(revision)).await?;
    if !ctx.state.typesetter.export_enabled() {
        return Err(ApiError::PdfExportDisabled);
    }
    ensure_exports(&ctx, &p, &id, revision).await?;
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

/// Prepares a revision's PDFs when they are not prepared yet (typeset once, stored, with the
/// answer-space layout of the question paper), and returns the revision and its bank revisions.
/// Exports prepared before layouts were recorded get theirs typeset again (the same bytes).
pub(crate) async fn ensure_exports(
    ctx: &Ctx,
    p: &Principal,
    id: &str,
    revision: i64,
) -> Result<(StoredPaper, Vec<BankRevision>), ApiError> {
    let paper = stored(ctx, p, id, Some(revision)).await?;
    let bank = saved_revisions(ctx, &paper.content.questions).await?;
    let layout_missing = paper.exports_ready
        && matches!(
            ctx.state
                .store
                .export_layout(&p.user.id, id, revision)
                .await?,
            Some(None)
        );
    if paper.exports_ready && !layout_missing {
        return Ok((paper, bank));
    }
    if !ctx.state.typesetter.export_enabled() {
        return Err(ApiError::PdfExportDisabled);
    }
    let doc = document(ctx, id, revision, &paper.content, &bank).await?;
    let pdfs = ctx
        .state
        .typesetter
        .render(doc)
        .await
        .map_err(|e| typeset_failure(e, "the PDFs were not ready"))?;
    if paper.exports_ready {
        ctx.state
            .store
            .save_export_layout(&p.user.id, id, revision, &pdfs.layout_json)
            .await?;
    } else {
        ctx.state
            .store
            .save_paper_exports(
                &p.user.id,
                id,
                revision,
                &pdfs.question_paper,
                &pdfs.mark_scheme,
                &pdfs.layout_json,
                now_ms(),
            )
            .await?;
    }
    let paper = stored(ctx, p, id, Some(revision)).await?;
    Ok((paper, bank))
}

/// The answer to a typesetting that produced nothing: the revision cannot be typeset (409), it
/// took too long (503: `what` was not ready, retry), or the task failed (500, logged).
pub(crate) fn typeset_failure(e: TypesetError, what: &str) -> ApiError {
    match e {
        TypesetError::Render(e) => ApiError::RevisionNotExportable(e.to_string()),
        TypesetError::Timeout(limit) => ApiError::ServiceUnavailable(format!(
            "{what} within {} seconds; retry the same request",
            limit.as_secs()
        )),
        TypesetError::Task(e) => {
            tracing::error!(error = %e, "typesetting task failed");
            ApiError::Internal
        }
    }
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
    let paper = stored(&ctx, &p, &id, Some(revision)).await?;
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
