//! Health and readiness, outside `/v1`, for load balancers and orchestrators: no key, no rate
//! limit, no usage record.
//!
//! - `GET /healthz`: the process answers. No database work: 200 `{"status":"ok"}`.
//! - `GET /readyz`: 200 `{"status":"ready","checks":{…}}` only when the database answers, its
//!   migrations are this binary's, stored files can be read and (when this process runs workers)
//!   a worker showed it is alive within the last [`crate::server::state::Readiness::max_silence_ms`]; otherwise
//!   `503 not_ready` naming each failing check in `error.details.checks`.
//!
//! Both answer anyone, so a check's result is one word (`ok`, `failed`, or for workers `none in
//! this process`): why a check failed (driver text, the database file's path, the object store's
//! bucket and prefix) is logged, never sent.
//!
//! `checks.marker` reports the configured marker's qualification (`not required` without
//! `--marker-qualify`, else `qualified`, `not qualified` or `drifted`; `failed` when it cannot be
//! read) and `marker` its figures (the bar, the latest calibration's agreement, kappa, false
//! awards and date, the seeds' running agreement), never naming the marker or model. It never
//! makes the service unready: a marker that may not mark leaves questions `needs_review`,
//! unmarked, while everything else serves.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use super::{ApiError, build, new_request_id, set_header};
use crate::server::state::AppState;
use crate::store::now_ms;

/// The health routes.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let health = warp::path!("healthz")
        .and(warp::get().or(warp::head()).unify())
        .map(|| {
            let mut response = respond(
                StatusCode::OK,
                json!({ "status": "ok" }).to_string().into_bytes(),
            );
            response
                .extensions_mut()
                .insert(crate::telemetry::Route("/healthz"));
            response
        });
    let ready = warp::path!("readyz")
        .and(warp::get().or(warp::head()).unify())
        .then(move || {
            let state = state.clone();
            async move {
                let mut response = ready(&state).await;
                response
                    .extensions_mut()
                    .insert(crate::telemetry::Route("/readyz"));
                response
            }
        });
    health.or(ready).unify().boxed()
}

fn respond(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = build(status, "application/json", body);
    set_header(&mut response, "cache-control", "no-store");
    set_header(&mut response, "x-request-id", &new_request_id());
    response
}

/// The public word for a check's result; the reason for a failure goes to the log.
fn outcome(check: &'static str, result: Result<(), String>) -> Value {
    match result {
        Ok(()) => json!("ok"),
        Err(reason) => {
            tracing::warn!(check, %reason, "a readiness check failed");
            json!("failed")
        }
    }
}

/// Runs every check.
pub async fn checks(state: &AppState) -> Map<String, Value> {
    let store = &state.store;
    let database = store.check_database().await;
    let mut checks = Map::new();
    let reachable = database.is_ok();
    checks.insert("database".into(), outcome("database", database));
    if reachable {
        let migrations = store.check_migrations().await;
        checks.insert("migrations".into(), outcome("migrations", migrations));
        let assets = store.check_assets().await;
        checks.insert("assets".into(), outcome("assets", assets));
    } else {
        // Not checked: without the database they cannot pass (the database's failure is logged).
        checks.insert("migrations".into(), json!("failed"));
        checks.insert("assets".into(), json!("failed"));
    }
    let workers = match &state.readiness.pulse {
        None => json!("none in this process"),
        Some(pulse) => {
            let silent = now_ms() - pulse.last();
            let alive = if silent <= state.readiness.max_silence_ms {
                Ok(())
            } else {
                Err(format!(
                    "no worker has shown it is alive for {} s",
                    silent / 1000
                ))
            };
            outcome("workers", alive)
        }
    };
    checks.insert("workers".into(), workers);
    checks
}

/// The configured marker's standing (see [`crate::marking::qualification`]): its word, and its
/// figures when they could be read.
async fn marker(state: &AppState, reachable: bool) -> (Value, Value) {
    if !reachable {
        return (json!("failed"), Value::Null);
    }
    match crate::marking::qualification::standing(&state.store, &state.marking).await {
        Ok(standing) => (json!(standing.word()), standing.figures()),
        Err(e) => {
            tracing::warn!(check = "marker", reason = %e, "a readiness check failed");
            (json!("failed"), Value::Null)
        }
    }
}

async fn ready(state: &AppState) -> Response {
    let mut checks = checks(state).await;
    // The marker's standing is reported, never a reason to be unready: an unqualified marker
    // marks nothing live, but the API, the app, imports and reviews serve as ever.
    let reachable = checks.get("database").and_then(Value::as_str) == Some("ok");
    let (word, figures) = marker(state, reachable).await;
    checks.insert("marker".into(), word);
    // Named in the order they are checked.
    let failing: Vec<&str> = ["database", "migrations", "assets", "workers"]
        .into_iter()
        .filter(|name| {
            checks
                .get(*name)
                .and_then(Value::as_str)
                .is_some_and(|s| s == "failed")
        })
        .collect();
    if failing.is_empty() {
        return respond(
            StatusCode::OK,
            json!({ "status": "ready", "checks": checks, "marker": figures })
                .to_string()
                .into_bytes(),
        );
    }
    tracing::warn!(failing = ?failing, "not ready");
    let error = match serde_json::value::RawValue::from_string(
        json!({ "checks": checks, "marker": figures }).to_string(),
    ) {
        Ok(details) => ApiError::NotReady {
            message: format!("not ready: {}", failing.join(", ")),
            details,
        },
        Err(_) => ApiError::Internal,
    };
    let request_id = new_request_id();
    let mut response = build(error.status(), "application/json", error.body(&request_id));
    set_header(&mut response, "cache-control", "no-store");
    set_header(&mut response, "x-request-id", &request_id);
    response
}
