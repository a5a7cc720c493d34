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
use crate::results::returned::builds::{self, BuildError, BuildKey, Kind};
use crate::results::returned::{self, ReturnedError};
use crate::store::{now_ms, utc_date};

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

static RETURNED_SET_PDF: Op = Op {
    name: "GET /v1/class-sets/{id}/returned.pdf",
    scopes: &[Scope::MarkingRead],
};
static RETURNED_SET_ZIP: Op = Op {
    name: "GET /v1/class-sets/{id}/returned.zip",
    scopes: &[Scope::MarkingRead],
};
static RETURNED_SESSION_PDF: Op = Op {
    name: "GET /v1/marking/sessions/{id}/returned.pdf",
    scopes: &[Scope::MarkingRead],
};

/// How a class's returned scripts are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Returned {
    /// One PDF, each script starting on an odd page.
    Pdf,
    /// A zip archive of one PDF per student.
    Zip,
}

/// The routes of results.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let [markbook_csv, markbook_xlsx, criteria_csv, analysis] =
        Sent::ALL.map(|sent| route(state.clone(), sent));
    let query = || warp::query::raw().or(warp::any().map(String::new)).unify();
    let returned_set = |segment: &'static str, op: &'static Op, returned: Returned| {
        warp::path("v1")
            .and(warp::path("class-sets"))
            .and(warp::path::param::<String>())
            .and(warp::path(segment))
            .and(warp::path::end())
            .and(warp::get())
            .and(query())
            .and(ctx(state.clone()))
            .then(move |id: String, query: String, ctx: Ctx| {
                ctx.run(op, move |ctx, p| async move {
                    returned_of_set(ctx, p, id, query, returned).await
                })
            })
            .boxed()
    };
    let set_pdf = returned_set("returned.pdf", &RETURNED_SET_PDF, Returned::Pdf);
    let set_zip = returned_set("returned.zip", &RETURNED_SET_ZIP, Returned::Zip);
    let session_pdf = warp::path!("v1" / "marking" / "sessions" / String / "returned.pdf")
        .and(warp::get())
        .and(query())
        .and(ctx(state))
        .then(|id: String, query: String, ctx: Ctx| {
            ctx.run(&RETURNED_SESSION_PDF, move |ctx, p| async move {
                returned_of_session(ctx, p, id, query).await
            })
        });
    markbook_csv
        .or(markbook_xlsx)
        .unify()
        .or(criteria_csv)
        .unify()
        .or(analysis)
        .unify()
        .or(set_pdf)
        .unify()
        .or(set_zip)
        .unify()
        .or(session_pdf)
        .unify()
        .boxed()
}

/// The `draft` parameter: `true` or `false` (the default), and nothing else.
fn draft(query: &str) -> Result<bool, ApiError> {
    let mut draft = None;
    let mut errors = Vec::new();
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        match (name.as_ref(), value.as_ref()) {
            ("draft", _) if draft.is_some() => errors.push(FieldError::new(
                "draft",
                "repeated_parameter",
                "give draft once",
            )),
            ("draft", "true") => draft = Some(true),
            ("draft", "false") => draft = Some(false),
            ("draft", other) => errors.push(FieldError::new(
                "draft",
                "type",
                format!("draft is true or false, not {other:?}"),
            )),
            (other, _) => errors.push(FieldError::new(
                other,
                "unknown_parameter",
                "the only parameter is draft",
            )),
        }
    }
    if errors.is_empty() {
        Ok(draft.unwrap_or(false))
    } else {
        Err(invalid_parameters(errors))
    }
}

/// The error of a refused or failed return.
fn returned_error(e: ReturnedError, student: &str) -> ApiError {
    let not_final = |scripts: Vec<(String, Vec<String>)>| {
        let message = match scripts.as_slice() {
            [(student, questions)] if questions.is_empty() => {
                format!(
                    "nothing of {student}'s script is marked yet: ask for a draft (draft=true) to have it anyway"
                )
            }
            [(student, questions)] => format!(
                "questions {} of {student}'s script are not marked finally: review them, or ask for a draft (draft=true)",
                questions.join(", ")
            ),
            many => format!(
                "{} scripts are not marked finally: review them, or ask for drafts (draft=true)",
                many.len()
            ),
        };
        let details = serde_json::json!({
            "scripts": scripts
                .iter()
                .map(|(student, questions)| serde_json::json!({ "student": student, "questions": questions }))
                .collect::<Vec<_>>(),
        });
        match serde_json::value::to_raw_value(&details) {
            Ok(details) => ApiError::ScriptsNotFinal { message, details },
            Err(_) => ApiError::Internal,
        }
    };
    match e {
        ReturnedError::NotFinal { questions } => not_final(vec![(student.to_owned(), questions)]),
        ReturnedError::NothingMarked => not_final(vec![(student.to_owned(), Vec::new())]),
        ReturnedError::ClassNotFinal { scripts } => not_final(
            scripts
                .into_iter()
                .map(|u| (u.student, u.questions))
                .collect(),
        ),
        ReturnedError::NotFound => ApiError::NotFound("marking session"),
        ReturnedError::Store(e) => e.into(),
        e => {
            tracing::error!(error = %e, code = e.code(), "returning marked scripts failed");
            ApiError::Internal
        }
    }
}

async fn returned_of_set(
    ctx: Ctx,
    p: Principal,
    id: String,
    query: String,
    returned: Returned,
) -> Result<Reply, ApiError> {
    let id = parse_id(&id, "class set")?;
    let draft = draft(&query)?;
    let store = &ctx.state.store;
    let results = class::of_class_set(store, &p.user.id, &id)
        .await
        .map_err(api_error)?;
    let scripts = results.scripts_to_return(&utc_date(now_ms()));
    let (kind, content_type, name) = match returned {
        Returned::Pdf => (Kind::Pdf, "application/pdf", "returned.pdf"),
        Returned::Zip => (Kind::Zip, "application/zip", "returned.zip"),
    };
    let key = BuildKey {
        user_id: p.user.id.clone(),
        set_id: id.clone(),
        kind,
        draft,
    };
    let made = builds::class_file(ctx.state.returned_sources(), key, &results, &scripts)
        .await
        .map_err(|e| match e {
            BuildError::Returned(e) => returned_error(e, ""),
            BuildError::Busy {
                message,
                retry_after,
            } => ApiError::Busy {
                message,
                retry_after: i64::try_from(retry_after).unwrap_or(i64::MAX),
            },
        })?;
    Ok(named(
        Reply::file(content_type, made.file, made.len),
        &format!("class-set-{id}-{name}"),
    ))
}

async fn returned_of_session(
    ctx: Ctx,
    p: Principal,
    id: String,
    query: String,
) -> Result<Reply, ApiError> {
    let id = parse_id(&id, "marking session")?;
    let draft = draft(&query)?;
    let script = returned::load_session_script(
        &ctx.state.store,
        &ctx.state.marking.pages,
        &p.user.id,
        &id,
        utc_date(now_ms()),
    )
    .await
    .map_err(|e| returned_error(e, "the session"))?;
    let student = script.student.clone();
    if !draft {
        script
            .check_final()
            .map_err(|e| returned_error(e, &student))?;
    }
    let slot = ctx
        .state
        .typesetter
        .slot()
        .await
        .map_err(|e| crate::papers::typeset_failure(e, "the returned script"))?;
    let pdf = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        returned::typeset_owned(script, draft)
    })
    .await
    .map_err(|_| ApiError::Internal)?
    .map_err(|e| returned_error(e, &student))?;
    Ok(attachment(
        "application/pdf",
        pdf,
        &format!("session-{id}-returned.pdf"),
    ))
}

fn attachment(content_type: &str, bytes: Vec<u8>, name: &str) -> Reply {
    named(Reply::bytes(content_type, bytes), name)
}

/// A reply sent as a download named `name`.
fn named(reply: Reply, name: &str) -> Reply {
    reply
        .with_header(
            "content-disposition",
            &format!("attachment; filename=\"{name}\""),
        )
        .with_header("x-content-type-options", "nosniff")
        .with_header("cache-control", "private, no-store")
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
    Ok(attachment(
        file.content_type,
        file.bytes,
        &format!("{stem}-{}", download.file_name()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(query: &str) -> Vec<(String, String)> {
        match session_ids(query) {
            Ok(_) => Vec::new(),
            Err(ApiError::InvalidParameters { errors, .. }) => errors
                .into_iter()
                .map(|e| (e.path, e.code.to_owned()))
                .collect(),
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
