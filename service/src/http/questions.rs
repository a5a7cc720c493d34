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

use super::fields::{FieldError, integer, invalid_parameters, uuid};
use super::{ApiError, AppState, Ctx, Op, Principal, Reply, ctx};
use crate::auth::Scope;
use crate::store::search::{SearchFilters, query_words};

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

/// The longest `q`, in characters.
pub const MAX_Q_CHARS: usize = 160;
/// The longest id filter (`module`, `board`, `tag`, `topic`, `subtopic`), in characters.
pub const MAX_ID_CHARS: usize = 120;
/// The most `excludeIds`.
pub const MAX_EXCLUDE_IDS: usize = 1000;
/// The default page size.
pub const DEFAULT_LIMIT: i64 = 30;
/// The largest page size.
pub const MAX_LIMIT: i64 = 100;

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

/// Validated `GET /v1/questions` parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchParams {
    /// The normalised filters.
    pub filters: SearchFilters,
    /// The cursor id, canonical.
    pub cursor: Option<String>,
    /// Page size.
    pub limit: i64,
    /// A random sample instead of a page.
    pub random: bool,
}

const LEVELS: &[&str] = &[
    "as-level",
    "a-level",
    "international-as-level",
    "international-a-level",
];
const SUBJECTS: &[&str] = &["maths", "further-maths"];
const FREQUENCIES: &[&str] = &["frequent", "occasional", "rare"];
const SINGLE: &[&str] = &[
    "q",
    "module",
    "level",
    "subject",
    "board",
    "year",
    "tag",
    "topic",
    "subtopic",
    "difficulty",
    "minMarks",
    "maxMarks",
    "random",
    "favouritesOnly",
    "frequency",
    "cursor",
    "limit",
];

fn text(errors: &mut Vec<FieldError>, name: &str, value: &str, max: usize) -> Option<String> {
    let chars = value.chars().count();
    if chars == 0 {
        errors.push(FieldError::new(
            name,
            "min_length",
            format!("{name} must be 1 to {max} characters, not empty"),
        ));
        None
    } else if chars > max {
        errors.push(FieldError::new(
            name,
            "max_length",
            format!("{name} must be 1 to {max} characters, not {chars}"),
        ));
        None
    } else {
        Some(value.to_owned())
    }
}

fn one_of(
    errors: &mut Vec<FieldError>,
    name: &str,
    value: &str,
    allowed: &[&str],
) -> Option<String> {
    if allowed.contains(&value) {
        Some(value.to_owned())
    } else {
        errors.push(FieldError::new(
            name,
            "enum",
            format!(
                "{name} must be one of {}, not {value:?}",
                allowed.join(", ")
            ),
        ));
        None
    }
}

fn boolean(errors: &mut Vec<FieldError>, name: &str, value: &str) -> Option<bool> {
    match value {
        "true" => Some(true),
        "false" => Some(false),
        _ => {
            errors.push(FieldError::new(
                name,
                "type",
                format!("{name} must be true or false, not {value:?}"),
            ));
            None
        }
    }
}

/// Parses and checks the query string of `GET /v1/questions`, reporting every problem.
pub fn parse_search(query: &str) -> Result<SearchParams, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut filters = SearchFilters::default();
    let mut cursor = None;
    let mut limit = DEFAULT_LIMIT;
    let mut random = false;
    let mut exclude = Vec::new();
    let mut exclude_count = 0usize;
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        let name = name.as_ref();
        if name == "excludeIds" {
            exclude_count += 1;
            if let Some(id) = uuid(&mut errors, "excludeIds", &value) {
                exclude.push(id);
            }
            continue;
        }
        if !SINGLE.contains(&name) {
            errors.push(FieldError::new(
                name,
                "unknown_parameter",
                format!(
                    "unknown parameter {name:?}; the parameters are {} and excludeIds",
                    SINGLE.join(", ")
                ),
            ));
            continue;
        }
        if seen.iter().any(|s| s == name) {
            if !errors
                .iter()
                .any(|e| e.path == name && e.code == "repeated_parameter")
            {
                errors.push(FieldError::new(
                    name,
                    "repeated_parameter",
                    format!("{name} may be given once"),
                ));
            }
            continue;
        }
        seen.push(name.to_owned());
        let e = &mut errors;
        match name {
            "q" => {
                // Words the index leaves out are dropped; a q of only such words (the, above,
                // a) searches as if it were absent.
                if let Some(q) = text(e, name, &value, MAX_Q_CHARS) {
                    filters.words = query_words(&q);
                }
            }
            "module" => filters.module = text(e, name, &value, MAX_ID_CHARS),
            "board" => filters.board = text(e, name, &value, MAX_ID_CHARS),
            "tag" => filters.tag = text(e, name, &value, MAX_ID_CHARS),
            "topic" => filters.topic = text(e, name, &value, MAX_ID_CHARS),
            "subtopic" => filters.subtopic = text(e, name, &value, MAX_ID_CHARS),
            "level" => filters.level = one_of(e, name, &value, LEVELS),
            "subject" => filters.subject = one_of(e, name, &value, SUBJECTS),
            "frequency" => filters.frequency = one_of(e, name, &value, FREQUENCIES),
            "year" => filters.year = integer(e, name, &value, 1900, 2100),
            "difficulty" => filters.difficulty = integer(e, name, &value, 1, 5),
            "minMarks" => filters.min_marks = integer(e, name, &value, 0, 100),
            "maxMarks" => filters.max_marks = integer(e, name, &value, 0, 100),
            "limit" => {
                if let Some(n) = integer(e, name, &value, 1, MAX_LIMIT) {
                    limit = n;
                }
            }
            "random" => random = boolean(e, name, &value).unwrap_or(false),
            "favouritesOnly" => {
                filters.favourites_only = boolean(e, name, &value).unwrap_or(false);
            }
            "cursor" => cursor = uuid(e, name, &value),
            _ => {}
        }
    }
    if exclude_count > MAX_EXCLUDE_IDS {
        errors.push(FieldError::new(
            "excludeIds",
            "max_items",
            format!("excludeIds may hold at most {MAX_EXCLUDE_IDS} ids, not {exclude_count}"),
        ));
    }
    if let (Some(min), Some(max)) = (filters.min_marks, filters.max_marks)
        && min > max
    {
        errors.push(FieldError::new(
            "minMarks",
            "range",
            format!("minMarks ({min}) is greater than maxMarks ({max})"),
        ));
    }
    if random && seen.iter().any(|s| s == "cursor") {
        errors.push(FieldError::new(
            "cursor",
            "conflict",
            "a random sample has no cursor: cursor cannot be combined with random=true",
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    exclude.sort_unstable();
    exclude.dedup();
    filters.exclude_ids = exclude;
    Ok(SearchParams {
        filters,
        cursor,
        limit,
        random,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(query: &str) -> Vec<(String, &'static str)> {
        parse_search(query)
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| (e.path, e.code))
            .collect()
    }

    #[test]
    fn defaults() {
        let params = parse_search("").expect("valid");
        assert_eq!(params.limit, 30);
        assert!(!params.random);
        assert_eq!(params.filters, SearchFilters::default());
    }

    #[test]
    fn every_problem_is_reported() {
        assert_eq!(
            codes("limit=0&year=1899&level=gcse&random=yes&colour=red&q=&limit=5"),
            [
                ("limit".to_owned(), "minimum"),
                ("year".to_owned(), "minimum"),
                ("level".to_owned(), "enum"),
                ("random".to_owned(), "type"),
                ("colour".to_owned(), "unknown_parameter"),
                ("q".to_owned(), "min_length"),
                ("limit".to_owned(), "repeated_parameter"),
            ]
        );
        assert_eq!(
            codes("minMarks=9&maxMarks=3"),
            [("minMarks".to_owned(), "range")]
        );
        assert_eq!(
            codes("random=true&cursor=6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"),
            [("cursor".to_owned(), "conflict")]
        );
        assert_eq!(codes("year=2019.0"), [("year".to_owned(), "type")]);
        assert_eq!(codes("year=+2019"), [("year".to_owned(), "type")]);
        assert_eq!(
            codes("difficulty=99999999999999999999999"),
            [("difficulty".to_owned(), "maximum")]
        );
    }

    #[test]
    fn words_the_index_leaves_out_are_dropped() {
        for q in ["q=the+of", "q=above", "q=a", "q=!!!"] {
            let params = parse_search(q).expect("a valid q");
            assert_eq!(params.filters, SearchFilters::default(), "{q}");
        }
        let params = parse_search("q=above+integration&subject=maths").expect("valid");
        assert_eq!(params.filters.words, ["integration"]);
        assert_eq!(params.filters.subject.as_deref(), Some("maths"));
    }

    #[test]
    fn exclude_ids_are_normalised() {
        let params = parse_search(
            "excludeIds=6F1C2B0E-1D2A-4C3B-9E8F-0A1B2C3D4E5F&excludeIds=6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f",
        )
        .expect("valid");
        assert_eq!(
            params.filters.exclude_ids,
            ["6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"]
        );
        assert_eq!(
            codes("excludeIds=nope"),
            [("excludeIds".to_owned(), "format")]
        );
    }
}
