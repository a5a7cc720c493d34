//! The results of a class (an extension of the specification, scope `marking:read`): a class
//! set's markbook as CSV and XLSX, its long list of criterion decisions as CSV and its item
//! analysis as JSON; the same for any list of sessions made from one paper revision
//! (`/v1/marking/…?sessions=id,id,…`). Requests are parsed here; `crate::results` loads and lays
//! out the results.

use std::sync::Arc;

use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use super::fields::{FieldError, invalid_parameters};
use super::{ApiError, AppState, Ctx, Op, Principal, Reply, ctx, parse_id};
use crate::auth::Scope;
use crate::results::analysis;
use crate::results::class::{self, ClassResults, MAX_SESSIONS, ResultsError};
use crate::results::download::Download;

/// What a route sends: a file, or the item analysis as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    File(Download),
    Analysis,
}

impl Sent {
    const ALL: [Sent; 4] = [
        Sent::File(Download::MarkbookCsv),
        Sent::File(Download::MarkbookXlsx),
        Sent::File(Download::CriteriaCsv),
        Sent::Analysis,
    ];

    fn segment(self) -> &'static str {
        match self {
            Sent::File(download) => download.file_name(),
            Sent::Analysis => "analysis",
        }
    }

    fn index(self) -> usize {
        Sent::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }

    fn of_set(self) -> &'static Op {
        static OPS: [Op; 4] = [
            Op {
                name: "GET /v1/class-sets/{id}/markbook.csv",
                scopes: &[Scope::MarkingRead],
            },
            Op {
                name: "GET /v1/class-sets/{id}/markbook.xlsx",
                scopes: &[Scope::MarkingRead],
            },
            Op {
                name: "GET /v1/class-sets/{id}/criteria.csv",
                scopes: &[Scope::MarkingRead],
            },
            Op {
                name: "GET /v1/class-sets/{id}/analysis",
                scopes: &[Scope::MarkingRead],
            },
        ];
        &OPS[self.index()]
    }

    fn of_sessions(self) -> &'static Op {
        static OPS: [Op; 4] = [
            Op {
                name: "GET /v1/marking/markbook.csv",
                scopes: &[Scope::MarkingRead],
            },
            Op {
                name: "GET /v1/marking/markbook.xlsx",
                scopes: &[Scope::MarkingRead],
            },
            Op {
                name: "GET /v1/marking/criteria.csv",
                scopes: &[Scope::MarkingRead],
            },
            Op {
                name: "GET /v1/marking/analysis",
                scopes: &[Scope::MarkingRead],
            },
        ];
        &OPS[self.index()]
    }
}

/// The routes of results.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let [markbook_csv, markbook_xlsx, criteria_csv, analysis] =
        Sent::ALL.map(|sent| route(state.clone(), sent));
    markbook_csv
        .or(markbook_xlsx)
        .unify()
        .or(criteria_csv)
        .unify()
        .or(analysis)
        .unify()
        .boxed()
}

/// The two routes of one download: of a class set, and of a list of sessions.
fn route(state: Arc<AppState>, sent: Sent) -> BoxedFilter<(Response,)> {
    let of_set = warp::path("v1")
        .and(warp::path("class-sets"))
        .and(warp::path::param::<String>())
        .and(warp::path(sent.segment()))
        .and(warp::path::end())
        .and(warp::get())
        .and(ctx(state.clone()))
        .then(move |id: String, ctx: Ctx| {
            ctx.run(sent.of_set(), move |ctx, p| async move {
                of_set(ctx, p, id, sent).await
            })
        });
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    let of_sessions = warp::path("v1")
        .and(warp::path("marking"))
        .and(warp::path(sent.segment()))
        .and(warp::path::end())
        .and(warp::get())
        .and(query)
        .and(ctx(state))
        .then(move |query: String, ctx: Ctx| {
            ctx.run(sent.of_sessions(), move |ctx, p| async move {
                of_sessions(ctx, p, query, sent).await
            })
        });
    of_set.or(of_sessions).unify().boxed()
}

async fn of_set(ctx: Ctx, p: Principal, id: String, sent: Sent) -> Result<Reply, ApiError> {
    let id = parse_id(&id, "class set")?;
    let results = class::of_class_set(&ctx.state.store, &p.user.id, &id)
        .await
        .map_err(api_error)?;
    reply(&results, sent, &format!("class-set-{id}"))
}

async fn of_sessions(ctx: Ctx, p: Principal, query: String, sent: Sent) -> Result<Reply, ApiError> {
    let ids = session_ids(&query)?;
    let results = class::of_sessions(&ctx.state.store, &p.user.id, &ids)
        .await
        .map_err(api_error)?;
    reply(&results, sent, "sessions")
}

/// The `sessions` parameter: 1 to 300 session ids, comma-separated, each once.
fn session_ids(query: &str) -> Result<Vec<String>, ApiError> {
    let mut value: Option<String> = None;
    let mut errors = Vec::new();
    for (name, v) in form_urlencoded::parse(query.as_bytes()) {
        match name.as_ref() {
            "sessions" if value.is_some() => errors.push(FieldError::new(
                "sessions",
                "repeated_parameter",
                "give sessions once, its ids separated by commas",
            )),
            "sessions" => value = Some(v.into_owned()),
            other => errors.push(FieldError::new(
                other,
                "unknown_parameter",
                "the only parameter is sessions",
            )),
        }
    }
    let Some(value) = value else {
        errors.push(FieldError::new(
            "sessions",
            "required",
            "sessions is required: the session ids, separated by commas",
        ));
        return Err(invalid_parameters(errors));
    };
    let mut ids: Vec<String> = Vec::new();
    for raw in value.split(',') {
        match uuid::Uuid::parse_str(raw.trim()) {
            Ok(id) => {
                let id = id.hyphenated().to_string();
                if ids.contains(&id) {
                    errors.push(FieldError::new(
                        "sessions",
                        "duplicate_session",
                        format!("session {id} is given twice"),
                    ));
                } else {
                    ids.push(id);
                }
            }
            Err(_) => errors.push(FieldError::new(
                "sessions",
                "format",
                format!("{raw:?} is not a session id (a UUID)"),
            )),
        }
    }
    if ids.len() > MAX_SESSIONS {
        errors.push(FieldError::new(
            "sessions",
            "max_items",
            format!("at most {MAX_SESSIONS} sessions; {} were given", ids.len()),
        ));
    }
    if errors.is_empty() {
        Ok(ids)
    } else {
        Err(invalid_parameters(errors))
    }
}

fn api_error(e: ResultsError) -> ApiError {
    match e {
        ResultsError::NotFound(what) => ApiError::NotFound(what),
        ResultsError::NotOnePaper(why) => {
            invalid_parameters(vec![FieldError::new("sessions", "not_one_paper", why)])
        }
        ResultsError::Store(e) => e.into(),
        e @ (ResultsError::Unprepared(_)
        | ResultsError::Marked { .. }
        | ResultsError::Corrupt(_)) => {
            tracing::error!(error = %e, "a class's results cannot be read");
            ApiError::Internal
        }
    }
}

fn reply(results: &ClassResults, sent: Sent, stem: &str) -> Result<Reply, ApiError> {
    let download = match sent {
        Sent::Analysis => {
            return Reply::json(
                StatusCode::OK,
                &serde_json::json!({ "analysis": analysis::analyse(results) }),
            );
        }
        Sent::File(download) => download,
    };
    let file = download.write(results).map_err(|e| {
        tracing::error!(error = %e, "writing a class's results failed");
        ApiError::Internal
    })?;
    Ok(Reply::bytes(file.content_type, file.bytes)
        .with_header(
            "content-disposition",
            &format!("attachment; filename=\"{stem}-{}\"", download.file_name()),
        )
        .with_header("x-content-type-options", "nosniff")
        .with_header("cache-control", "private, no-store"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(query: &str) -> Vec<(String, String)> {
        match session_ids(query) {
            Ok(_) => Vec::new(),
            Err(ApiError::InvalidParameters { details, .. }) => {
                let details: serde_json::Value =
                    serde_json::from_str(details.get()).expect("details are JSON");
                details["errors"]
                    .as_array()
                    .expect("errors")
                    .iter()
                    .map(|e| {
                        (
                            e["path"].as_str().unwrap_or("").to_owned(),
                            e["code"].as_str().unwrap_or("").to_owned(),
                        )
                    })
                    .collect()
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_sessions_parameter_is_checked() {
        let a = "8a834eff-5ac7-5e3d-902e-0c7342b819d4";
        let b = "9b834eff-5ac7-5e3d-902e-0c7342b819d4";
        assert_eq!(
            session_ids(&format!("sessions={a},{b}")).expect("valid"),
            [a, b]
        );
        let pair = |p: &str, c: &str| (p.to_owned(), c.to_owned());
        assert_eq!(codes(""), [pair("sessions", "required")]);
        assert_eq!(codes("sessions=x"), [pair("sessions", "format")]);
        assert_eq!(codes("sessions="), [pair("sessions", "format")]);
        assert_eq!(
            codes(&format!("sessions={a},{a}")),
            [pair("sessions", "duplicate_session")]
        );
        assert_eq!(
            codes(&format!("sessions={a}&sessions={b}")),
            [pair("sessions", "repeated_parameter")]
        );
        assert_eq!(
            codes(&format!("sessions={a}&format=csv")),
            [pair("format", "unknown_parameter")]
        );
        let many: Vec<String> = (0..=MAX_SESSIONS)
            .map(|n| format!("00000000-0000-4000-8000-{n:012}"))
            .collect();
        assert_eq!(
            codes(&format!("sessions={}", many.join(","))),
            [pair("sessions", "max_items")]
        );
    }
}
