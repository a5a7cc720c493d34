//! Marking reads and reviews: `GET /v1/marking/sessions`, `GET /v1/marking/sessions/{id}`,
//! `GET /v1/marking/assets/{id}` (scope `marking:read`) and `PATCH /v1/marking/questions/{id}`
//! (scope `marking:review`).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use examkit_engine::limits::MAX_DOCUMENT_BYTES;

use super::fields::parse_json;
use super::{
    ApiError, AppState, Body, Ctx, Op, Principal, Reply, body, ctx, document_too_large, parse_id,
    read_body, require_json,
};
use crate::auth::Scope;
use crate::fields::FieldError;
use crate::marked::{MarkedError, MarkedQuestion};
use crate::review::ReviewError;
use crate::store::automated::PageRecord;
use crate::store::class_sets::stacks::STACK_ORIGIN;
use crate::store::marking::{AssetRow, QuestionRow, Reviewer, ReviewerKind, SessionRow};
use crate::store::words::{AssetKind, IndexingState, PageRole, PageState, QuestionStatus};
use crate::store::{Store, rfc3339};

static LIST: Op = Op {
    name: "GET /v1/marking/sessions",
    scopes: &[Scope::MarkingRead],
};
static READ: Op = Op {
    name: "GET /v1/marking/sessions/{id}",
    scopes: &[Scope::MarkingRead],
};
static ASSET: Op = Op {
    name: "GET /v1/marking/assets/{id}",
    scopes: &[Scope::MarkingRead],
};
static REVIEW: Op = Op {
    name: "PATCH /v1/marking/questions/{id}",
    scopes: &[Scope::MarkingReview],
};

/// Sessions listed by `GET /v1/marking/sessions`.
pub const SESSION_LIST_LIMIT: i64 = 50;

/// The marking routes.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let list = warp::path!("v1" / "marking" / "sessions")
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|ctx: Ctx| ctx.run(&LIST, |ctx, p| async move { list(ctx, p).await }));
    let read = warp::path!("v1" / "marking" / "sessions" / String)
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|id: String, ctx: Ctx| {
            ctx.run(&READ, move |ctx, p| async move { read(ctx, p, id).await })
        });
    let asset = warp::path!("v1" / "marking" / "assets" / String)
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|id: String, ctx: Ctx| {
            ctx.run(&ASSET, move |ctx, p| async move { asset(ctx, p, id).await })
        });
    let review = warp::path!("v1" / "marking" / "questions" / String)
        .and(warp::patch())
        .and(ctx(state))
        .and(body())
        .then(|id: String, ctx: Ctx, body: Body| {
            ctx.run(&REVIEW, move |ctx, p| async move {
                review(ctx, p, id, body).await
            })
        });
    list.or(read)
        .unify()
        .or(asset)
        .unify()
        .or(review)
        .unify()
        .boxed()
}

/// An asset's public fields.
pub fn asset_view(a: &AssetRow) -> Value {
    json!({
        "id": a.id,
        "sessionId": a.session_id,
        "kind": a.kind,
        "name": a.name,
        "contentType": a.content_type,
        "size": a.size_bytes,
        "pageCount": a.page_count,
        "sha256": a.sha256,
        "createdAt": rfc3339(a.created_at),
    })
}

fn score(awarded: i64, possible: i64, max: i64) -> Value {
    json!({ "awarded": awarded, "possible": possible, "max": max })
}

/// A marking question with its result, as `/v1` sends it (see [`MarkedQuestion::to_v1`]).
pub fn question_view(
    q: &QuestionRow,
    kinds: &HashMap<String, AssetKind>,
) -> Result<Value, ApiError> {
    match MarkedQuestion::from_row(q, kinds) {
        Ok(marked) => Ok(marked.to_v1()),
        Err(e) => {
            tracing::error!(question = %q.id, error = %e, code = e.code(), "a stored marking question cannot be read");
            Err(ApiError::Internal)
        }
    }
}

impl From<MarkedError> for ApiError {
    /// A stored question that cannot be read is the service's fault: logged, not sent.
    fn from(e: MarkedError) -> Self {
        tracing::error!(error = %e, code = e.code(), "a stored marking question cannot be read");
        ApiError::Internal
    }
}

/// A full marking session: assets, questions with results, feedback.
pub async fn session_view(store: &Store, s: &SessionRow) -> Result<Value, ApiError> {
    let assets = store.session_assets(&s.id).await?;
    let questions = store.session_questions(&s.id).await?;
    let kinds: HashMap<String, AssetKind> = assets.iter().map(|a| (a.id.clone(), a.kind)).collect();
    let views = questions
        .iter()
        .map(|q| question_view(q, &kinds))
        .collect::<Result<Vec<_>, _>>()?;
    let total = |f: fn(&QuestionRow) -> i64| questions.iter().map(f).sum::<i64>();
    let mut view = header_view(s);
    view["assets"] = Value::Array(assets.iter().map(asset_view).collect());
    view["questions"] = Value::Array(views);
    view["feedback"] = json!([]);
    view["score"] = score(
        total(|q| q.awarded),
        total(|q| q.possible),
        total(|q| q.max_marks),
    );
    view["needsReview"] = json!(
        questions
            .iter()
            .any(|q| q.status == QuestionStatus::NeedsReview)
    );
    if s.origin == crate::store::automated::ORIGIN {
        let pages = store.session_pages(&s.id).await?;
        view["indexing"] = if s.indexing_state.is_some() {
            indexing_view(s, &pages, &assets)
        } else {
            Value::Null
        };
    }
    Ok(view)
}

/// Whether a session's indexing has finished, so that its question list is complete.
fn indexing_finished(s: &SessionRow) -> bool {
    s.indexing_state.is_some_and(IndexingState::is_finished)
}

/// One indexed page: where it is, which way up, what it is (and whether it can be evidence of a
/// student's answer), the questions found on it and how, and its page code.
pub fn page_view(p: &PageRecord, asset_kind: &str, script: bool) -> Value {
    // A page with nothing added, on an asset that has the student's writing elsewhere, is a blank
    // page of the script: it locates blank answers, never supports an award.
    let (role, reason) = if script && p.role == PageRole::CleanPaper {
        (
            "blank",
            "nothing was written on this page of the student's script: it locates blank answers and never supports an award".to_owned(),
        )
    } else {
        (p.role.as_str(), p.role_reason.clone())
    };
    let parse = |text: &Option<String>| {
        text.as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .unwrap_or(Value::Null)
    };
    json!({
        "assetId": p.asset_id,
        "page": p.page,
        "pageId": format!("{}:p{}", p.asset_id, p.page),
        "kind": asset_kind,
        "state": p.state,
        "error": p.error,
        "orientation": p.orientation,
        "textSource": p.text_source,
        "widthPx": p.width_px,
        "heightPx": p.height_px,
        "role": role,
        "evidence": p.state == PageState::Ok && p.role == PageRole::Work,
        "reason": reason,
        "questions": serde_json::from_str::<Value>(&p.labels_json).unwrap_or(Value::Null),
        "pageCode": parse(&p.code_json),
        "comparison": parse(&p.compare_json),
        "indexedAt": rfc3339(p.indexed_at),
    })
}

/// The `indexing` object: state, progress and, page by page, what indexing found.
pub fn indexing_view(s: &SessionRow, pages: &[PageRecord], assets: &[AssetRow]) -> Value {
    let kinds: HashMap<&str, &str> = assets
        .iter()
        .map(|a| (a.id.as_str(), a.kind.as_str()))
        .collect();
    let scripts = crate::marking::indexing::scripts(pages);
    json!({
        "state": s.indexing_state,
        "finished": indexing_finished(s),
        "pagesDone": s.pages_done,
        "pagesTotal": s.pages_total,
        "pagesFailed": pages.iter().filter(|p| p.state == PageState::Failed).count(),
        "startedAt": s.started_at.map(rfc3339),
        "finishedAt": s.indexed_at.map(rfc3339),
        // Every page belongs to one of the session's assets; one whose asset is not listed (never
        // expected) is left out rather than given a kind it may not have.
        "pages": pages
            .iter()
            .filter_map(|p| {
                let kind = kinds.get(p.asset_id.as_str())?;
                Some(page_view(p, kind, scripts.contains(&p.asset_id)))
            })
            .collect::<Vec<_>>(),
    })
}

fn header_view(s: &SessionRow) -> Value {
    let source = s
        .source_json
        .as_deref()
        .and_then(|j| serde_json::from_str::<Value>(j).ok());
    let mut view = json!({
        "id": s.id,
        "title": s.title,
        "kind": s.origin,
        "status": s.status,
        "createdAt": rfc3339(s.created_at),
        "updatedAt": rfc3339(s.updated_at),
        "completedAt": s.completed_at.map(rfc3339),
        "source": source,
        "coverageKind": s.coverage_kind,
    });
    if s.origin == crate::store::automated::ORIGIN {
        view["paper"] = json!(
            s.paper
                .as_ref()
                .map(|(id, revision)| json!({ "id": id, "revision": revision }))
        );
        view["indexingState"] = json!(s.indexing_state);
        view["indexingFinished"] = json!(indexing_finished(s));
    }
    view
}

async fn list(ctx: Ctx, p: Principal) -> Result<Reply, ApiError> {
    let rows = ctx
        .state
        .store
        .recent_sessions(&p.user.id, SESSION_LIST_LIMIT)
        .await?;
    let sessions: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut view = header_view(&r.session);
            view.as_object_mut().map(|o| o.remove("source"));
            view["assetCount"] = json!(r.asset_count);
            view["questionCount"] = json!(r.question_count);
            view["score"] = score(r.score.0, r.score.1, r.score.2);
            view
        })
        .collect();
    Reply::json(
        StatusCode::OK,
        &json!({ "enabled": ctx.state.marking.enabled, "sessions": sessions }),
    )
}

async fn read(ctx: Ctx, p: Principal, id: String) -> Result<Reply, ApiError> {
    // `/v1/marking/sessions/from-builder` is a route of its own (POST only), not a session.
    if id == "from-builder" {
        return Err(ApiError::MethodNotAllowed);
    }
    let id = parse_id(&id, "marking session")?;
    let store = &ctx.state.store;
    // A class set's stack is read through its class set.
    let session = store
        .session(&p.user.id, &id)
        .await?
        .filter(|s| s.origin != STACK_ORIGIN)
        .ok_or(ApiError::NotFound("marking session"))?;
    Reply::json(
        StatusCode::OK,
        &json!({ "session": session_view(store, &session).await? }),
    )
}

async fn asset(ctx: Ctx, p: Principal, id: String) -> Result<Reply, ApiError> {
    let id = parse_id(&id, "asset")?;
    // A class-set script's work file is a view of a stack file that holds other students'
    // pages too: it has no bytes of its own to send.
    if ctx.state.store.is_view(&id).await? {
        return Err(ApiError::NotFound("asset"));
    }
    let (asset, bytes) = ctx
        .state
        .store
        .asset_bytes(&p.user.id, &id)
        .await?
        .ok_or(ApiError::NotFound("asset"))?;
    Ok(Reply::bytes(&asset.content_type, bytes)
        .with_header("cache-control", "private, no-store")
        .with_header("x-content-type-options", "nosniff"))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewRequest {
    #[serde(deserialize_with = "super::fields::integer_field")]
    revision: i64,
    decisions: Vec<Value>,
}

async fn review(ctx: Ctx, p: Principal, id: String, body: Body) -> Result<Reply, ApiError> {
    let id = parse_id(&id, "marking question")?;
    let store = &ctx.state.store;
    // An unknown question is a 404 before anything of the body is read.
    store
        .question(&p.user.id, &id)
        .await?
        .ok_or(ApiError::NotFound("marking question"))?;
    require_json(&ctx)?;
    let bytes = read_body(&ctx, body, MAX_DOCUMENT_BYTES, document_too_large).await?;
    let request: ReviewRequest = parse_json(&bytes)?;
    let reviewer = Reviewer {
        kind: ReviewerKind::ApiKey,
        name: p.key.name.clone(),
    };
    let saved = crate::review::review(
        store,
        &p.user.id,
        &id,
        request.revision,
        request.decisions,
        &reviewer,
    )
    .await?;
    Reply::json(StatusCode::OK, &json!({ "question": saved.to_v1() }))
}

impl From<ReviewError> for ApiError {
    fn from(e: ReviewError) -> Self {
        match e {
            ReviewError::NotFound => ApiError::NotFound("marking question"),
            ReviewError::InvalidDecisions(message) => ApiError::InvalidBody(message),
            ReviewError::NotMarked(status) => ApiError::QuestionNotMarked(status),
            ReviewError::Stale(current) => ApiError::StaleRevision(current),
            ReviewError::Invalid(problems) => review_failed(&problems),
            ReviewError::Unreadable(e) => e.into(),
            ReviewError::Engine(e) => e.into(),
            ReviewError::Store(e) => e.into(),
            e @ (ReviewError::NoSource | ReviewError::Unwritable(_)) => {
                tracing::error!(error = %e, code = e.code(), "a review cannot be scored");
                ApiError::Internal
            }
        }
    }
}

/// The 422 of a review: the engine's errors, with paths into the reviewed decisions.
fn review_failed(problems: &[FieldError]) -> ApiError {
    /// One problem as the review's 422 has always listed it: `code`, `message`, `path`.
    #[derive(Serialize)]
    struct Problem<'a> {
        code: &'a str,
        message: &'a str,
        path: &'a str,
    }
    /// `error.details` of the review's 422.
    #[derive(Serialize)]
    struct Details<'a> {
        errors: Vec<Problem<'a>>,
        truncated: bool,
    }
    let details = Details {
        errors: problems
            .iter()
            .map(|p| Problem {
                code: p.code,
                message: &p.message,
                path: &p.path,
            })
            .collect(),
        truncated: false,
    };
    let count = details.errors.len();
    let details = serde_json::to_string(&details)
        .ok()
        .and_then(|s| serde_json::value::RawValue::from_string(s).ok());
    match details {
        Some(details) => ApiError::ValidationFailed {
            message: format!(
                "the reviewed question is invalid: {count} error(s); see error.details.errors"
            ),
            details,
        },
        None => ApiError::Internal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_that_fails_lists_its_problems_as_it_always_has() {
        let problems = [
            FieldError::new("/criteria/0/outcome", "invalid_value", "not an outcome"),
            FieldError::new("", "E_SCORE", "the score is out of range"),
        ];
        let body = review_failed(&problems).body("req-1");
        assert_eq!(
            String::from_utf8(body).expect("utf-8"),
            concat!(
                r#"{"error":{"code":"validation_failed","#,
                r#""message":"the reviewed question is invalid: 2 error(s); see error.details.errors","#,
                r#""details":{"errors":["#,
                r#"{"code":"invalid_value","message":"not an outcome","path":"/criteria/0/outcome"},"#,
                r#"{"code":"E_SCORE","message":"the score is out of range","path":""}"#,
                r#"],"truncated":false}},"requestId":"req-1"}"#
            )
        );
        let none = review_failed(&[]).body("req-2");
        assert!(
            String::from_utf8(none)
                .expect("utf-8")
                .contains(r#""details":{"errors":[],"truncated":false}"#)
        );
    }
}
