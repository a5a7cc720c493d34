//! The question bank (scope `questions:read`): `GET /v1/questions/facets`, `GET /v1/questions`,
//! `GET /v1/questions/{questionId}/revisions/{revision}` and its `…/assets/{assetId}`.
//!
//! Every invalid query or path parameter is reported at once: 422 `invalid_parameters`, with
//! `error.details.errors` listing `{path, code, message}` per problem, `path` being the parameter's
//! name.

use std::sync::Arc;

use serde_json::Value;
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use super::fields::invalid_parameters;
use super::{ApiError, AppState, Ctx, Op, Principal, Reply, ctx};
use crate::auth::Scope;
use crate::fields::{integer, uuid};
use crate::questions::parse_search;

const READ: &[Scope] = &[Scope::QuestionsRead];
static FACETS: Op = Op {
    name: "GET /v1/questions/facets",
    scopes: READ,
};
static SEARCH: Op = Op {
    name: "GET /v1/questions",
    scopes: READ,
};
static REVISION: Op = Op {
    name: "GET /v1/questions/{questionId}/revisions/{revision}",
    scopes: READ,
};
static ASSET: Op = Op {
    name: "GET /v1/questions/{questionId}/revisions/{revision}/assets/{assetId}",
    scopes: READ,
};

/// The question routes.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let query = || warp::query::raw().or(warp::any().map(String::new)).unify();
    let facets = warp::path!("v1" / "questions" / "facets")
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|ctx: Ctx| ctx.run(&FACETS, move |ctx, _| async move { facets(ctx).await }));
    let search = warp::path!("v1" / "questions")
        .and(warp::get())
        .and(query())
        .and(ctx(state.clone()))
        .then(|query: String, ctx: Ctx| {
            ctx.run(
                &SEARCH,
                move |ctx, p| async move { search(ctx, p, query).await },
            )
        });
    let revision = warp::path!("v1" / "questions" / String / "revisions" / String)
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(|id: String, revision: String, ctx: Ctx| {
            ctx.run(&REVISION, move |ctx, _| async move {
                read_revision(ctx, id, revision).await
            })
        });
    let asset = warp::path!("v1" / "questions" / String / "revisions" / String / "assets" / String)
        .and(warp::get())
        .and(ctx(state))
        .then(|id: String, revision: String, asset: String, ctx: Ctx| {
            ctx.run(&ASSET, move |ctx, _| async move {
                read_asset(ctx, id, revision, asset).await
            })
        });
    facets
        .or(search)
        .unify()
        .or(revision)
        .unify()
        .or(asset)
        .unify()
        .boxed()
}

async fn facets(ctx: Ctx) -> Result<Reply, ApiError> {
    let view = ctx.state.store.facets().await?;
    Reply::json(StatusCode::OK, &view)
}

async fn search(ctx: Ctx, p: Principal, query: String) -> Result<Reply, ApiError> {
    let params = parse_search(&query).map_err(invalid_parameters)?;
    let page = crate::questions::search(&ctx.state.store, &p.user.id, &params).await?;
    Ok(Reply::raw_json(StatusCode::OK, page.to_json()))
}

/// Checks the path parameters of the revision routes.
fn revision_path(
    id: &str,
    revision: &str,
    asset: Option<&str>,
) -> Result<(String, i64, Option<String>), ApiError> {
    let mut errors = Vec::new();
    let id = uuid(&mut errors, "questionId", id);
    let revision = integer(&mut errors, "revision", revision, 1, i64::from(u32::MAX));
    let asset = asset.and_then(|a| uuid(&mut errors, "assetId", a));
    match (id, revision) {
        (Some(id), Some(revision)) if errors.is_empty() => Ok((id, revision, asset)),
        _ => Err(invalid_parameters(errors)),
    }
}

async fn read_revision(ctx: Ctx, id: String, revision: String) -> Result<Reply, ApiError> {
    let (id, revision, _) = revision_path(&id, &revision, None)?;
    let Some(stored) = ctx.state.store.served_revision(&id, revision).await? else {
        return Err(ApiError::NotFound("question revision"));
    };
    let body: Value = serde_json::from_str(&stored.body).map_err(|e| {
        tracing::error!(error = %e, question = %id, revision, "stored revision is not JSON");
        ApiError::Internal
    })?;
    let field = |name: &str| body.get(name).cloned().unwrap_or(Value::Null);
    let diagrams: Vec<Value> = body
        .get("assets")
        .and_then(Value::as_array)
        .map(|assets| {
            assets
                .iter()
                .map(|a| {
                    let asset_id = a.get("id").and_then(Value::as_str).unwrap_or_default();
                    serde_json::json!({
                        "id": asset_id,
                        "mediaType": a.get("mediaType").cloned().unwrap_or(Value::Null),
                        "description": a.get("description").cloned().unwrap_or(Value::Null),
                        "href": format!("/v1/questions/{id}/revisions/{revision}/assets/{asset_id}"),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut question = serde_json::json!({
        "id": id,
        "revision": revision,
        "status": stored.status,
        "pin": {
            "questionId": id,
            "revision": revision,
            "contentVersion": stored.content_version,
            "schemeVersion": stored.scheme_version,
        },
        "title": field("title"),
        "summary": field("summary"),
        "sources": field("sources"),
        "topic": field("topic"),
        "subtopic": field("subtopic"),
        "tags": field("tags"),
        "difficulty": field("difficulty"),
        "frequency": field("frequency"),
        "marks": field("marks"),
        "moduleProfiles": field("moduleProfiles"),
        "content": field("content"),
        "scheme": field("scheme"),
        "diagrams": diagrams,
    });
    if let (Some(note), Some(map)) = (body.get("changeNote"), question.as_object_mut()) {
        map.insert("changeNote".into(), note.clone());
    }
    Reply::json(StatusCode::OK, &serde_json::json!({ "question": question }))
}

async fn read_asset(
    ctx: Ctx,
    id: String,
    revision: String,
    asset: String,
) -> Result<Reply, ApiError> {
    let (id, revision, asset) = revision_path(&id, &revision, Some(&asset))?;
    let asset = asset.ok_or(ApiError::Internal)?;
    let Some(bytes) = ctx
        .state
        .store
        .revision_asset(&id, revision, &asset)
        .await?
    else {
        return Err(ApiError::NotFound("diagram"));
    };
    Ok(Reply::bytes("application/octet-stream", bytes)
        .with_header("x-content-type-options", "nosniff")
        .with_header(
            "content-disposition",
            &format!("attachment; filename=\"{asset}\""),
        )
        .with_header("cache-control", "private, no-store"))
}
