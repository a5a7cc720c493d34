//! Prometheus metrics, in the text format, through the `metrics` facade and
//! `metrics-exporter-prometheus`: the recorder and every name recorded. They are served on a
//! listener of their own (`--metrics-listen`, off by default; see [`crate::server::metrics`],
//! which also reads the gauges read at each scrape).
//!
//! Every name starts `examkit_`. Route labels are route templates (`/v1/papers/{id}`), the app's
//! prefix (`/app`) or `unmatched`, never a raw path, and method labels are the methods examkit
//! serves ([`METHODS`]) or `other`, never a method as the client spelt it, so no client can grow
//! the label set. What is measured:
//! - HTTP: `examkit_http_requests_total{route,method,status}` and the latency histogram
//!   `examkit_http_request_duration_seconds{route,method}`; `examkit_auth_failures_total{code}`;
//!   `examkit_rate_limited_total`.
//! - The database, read at each scrape: `examkit_db_connections{pool,state}` (open and idle
//!   connections of each pool) and the job queue's depth `examkit_jobs{kind,state}`.
//! - Jobs: `examkit_job_attempts_total{kind}`, `examkit_job_failures_total{kind,permanent}`,
//!   `examkit_job_duration_seconds{kind,outcome}`.
//! - Indexing: `examkit_pages_indexed_total{outcome}` and `examkit_page_index_seconds{text_source}`
//!   (the time to read one page, OCR included).
//! - Markers: `examkit_marker_calls_total{marker}`, `examkit_marker_latency_seconds{marker}`,
//!   `examkit_marker_tokens_total{marker,kind}` (prompt, completion).
//! - A marker's qualification (`--marker-qualify`, `--marker-seed-every`), as questions are
//!   marked: `examkit_marker_qualified{marker}` and `examkit_marker_drifted{marker}` (1 or 0),
//!   `examkit_marker_seeds_total{marker,agreed}` and the last seeds' running agreement
//!   `examkit_marker_seed_agreement{marker}`.
//! - PDFs: `examkit_typeset_seconds{document}`.
//! - Password checks (the bound of [`crate::password::checks`]), read at each scrape:
//!   `examkit_password_checks_in_flight`, its high-water mark since start
//!   `examkit_password_checks_in_flight_max`, and `examkit_password_check_permits`; and
//!   `examkit_password_checks_refused_total`, checks refused because no permit came free in time.
//! - Where an API request's time goes: `examkit_request_phase_seconds{phase}`, for `authenticate`
//!   (reading the key, from memory or the database), `admit` (the rate counters), `handle` (the
//!   operation) and `finish` (rendering, the usage record and the log line). The sums over a run
//!   against `examkit_http_request_duration_seconds` show what each costs.
//!
//! Without `--metrics-listen` no recorder is installed and every record is a no-op.

use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// Histogram buckets, in seconds: 1 ms to 5 minutes.
const BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process's recorder (once; later calls return the same handle).
pub fn install() -> Result<PrometheusHandle, String> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let handle = PrometheusBuilder::new()
        .set_buckets(BUCKETS)
        .map_err(|e| format!("metrics buckets: {e}"))?
        .install_recorder()
        .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;
    Ok(HANDLE.get_or_init(|| handle).clone())
}

/// The route label of a response, set by whatever answered it.
#[derive(Debug, Clone, Copy)]
pub struct Route(pub &'static str);

/// The methods some route answers (`HEAD` with every `GET`): each is its own `method` label; any
/// other method a client sends is counted as `other`.
pub const METHODS: [&str; 4] = ["GET", "HEAD", "POST", "PATCH"];

/// The `method` label of a request's method.
pub fn method_label(method: &str) -> &'static str {
    METHODS
        .into_iter()
        .find(|known| *known == method)
        .unwrap_or("other")
}

/// Records one HTTP request.
pub fn request(route: &'static str, method: &str, status: u16, elapsed: Duration) {
    let method = method_label(method);
    metrics::counter!(
        "examkit_http_requests_total",
        "route" => route,
        "method" => method,
        "status" => status.to_string()
    )
    .increment(1);
    metrics::histogram!(
        "examkit_http_request_duration_seconds",
        "route" => route,
        "method" => method
    )
    .record(elapsed.as_secs_f64());
}

/// Records the time one phase of an API request took (see the module's documentation).
pub fn phase(phase: &'static str, elapsed: Duration) {
    metrics::histogram!("examkit_request_phase_seconds", "phase" => phase)
        .record(elapsed.as_secs_f64());
}

/// Records a request refused at authentication, by its error code.
pub fn auth_failure(code: &'static str) {
    metrics::counter!("examkit_auth_failures_total", "code" => code).increment(1);
}

/// Records a request refused by a rate limit.
pub fn rate_limited() {
    metrics::counter!("examkit_rate_limited_total").increment(1);
}

/// Records a password check refused because no permit came free within the wait.
pub fn password_check_refused() {
    metrics::counter!("examkit_password_checks_refused_total").increment(1);
}

/// Records one attempt of a job and how it ended (`succeeded`, `retry`, `failed`, `lost`).
pub fn job(kind: &str, outcome: &'static str, elapsed: Duration) {
    let kind = kind.to_owned();
    metrics::counter!("examkit_job_attempts_total", "kind" => kind.clone()).increment(1);
    if outcome == "retry" || outcome == "failed" {
        metrics::counter!(
            "examkit_job_failures_total",
            "kind" => kind.clone(),
            "permanent" => if outcome == "failed" { "true" } else { "false" }
        )
        .increment(1);
    }
    metrics::histogram!(
        "examkit_job_duration_seconds",
        "kind" => kind,
        "outcome" => outcome
    )
    .record(elapsed.as_secs_f64());
}

/// Records one page read by indexing: `ok` or `failed`, and how its text was found.
pub fn page_indexed(outcome: &'static str, text_source: &str, elapsed: Duration) {
    metrics::counter!("examkit_pages_indexed_total", "outcome" => outcome).increment(1);
    metrics::histogram!(
        "examkit_page_index_seconds",
        "text_source" => text_source.to_owned()
    )
    .record(elapsed.as_secs_f64());
}

/// Records a marker's calls for one question: how many, their total latency, their tokens.
pub fn marker(marker: &str, calls: u64, latency: Duration, prompt: u64, completion: u64) {
    let marker = marker.to_owned();
    metrics::counter!("examkit_marker_calls_total", "marker" => marker.clone()).increment(calls);
    metrics::histogram!("examkit_marker_latency_seconds", "marker" => marker.clone())
        .record(latency.as_secs_f64());
    metrics::counter!("examkit_marker_tokens_total", "marker" => marker.clone(), "kind" => "prompt")
        .increment(prompt);
    metrics::counter!("examkit_marker_tokens_total", "marker" => marker, "kind" => "completion")
        .increment(completion);
}

/// Records the configured marker's standing as a question is marked (see
/// [`crate::marking::qualification`]): `examkit_marker_qualified{marker}` and
/// `examkit_marker_drifted{marker}`, 1 or 0.
pub fn marker_standing(marker: &str, qualified: bool, drifted: bool) {
    metrics::gauge!("examkit_marker_qualified", "marker" => marker.to_owned())
        .set(f64::from(u8::from(qualified)));
    metrics::gauge!("examkit_marker_drifted", "marker" => marker.to_owned())
        .set(f64::from(u8::from(drifted)));
}

/// Records a seeded reference question the live marker marked: whether it agreed with every
/// trusted decision (`examkit_marker_seeds_total{marker,agreed}`), and the running agreement of the
/// last seeds when there is one (`examkit_marker_seed_agreement{marker}`).
pub fn marker_seed(marker: &str, agreed: bool, running: Option<f64>) {
    metrics::counter!(
        "examkit_marker_seeds_total",
        "marker" => marker.to_owned(),
        "agreed" => if agreed { "true" } else { "false" }
    )
    .increment(1);
    if let Some(share) = running {
        metrics::gauge!("examkit_marker_seed_agreement", "marker" => marker.to_owned()).set(share);
    }
}

/// Records the typesetting of one PDF (`question_paper` or `mark_scheme`).
pub fn typeset(document: &'static str, elapsed: Duration) {
    metrics::histogram!("examkit_typeset_seconds", "document" => document)
        .record(elapsed.as_secs_f64());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_markers_standing_and_seeds_are_gauged_and_counted() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, || {
            marker_standing("openai", true, false);
            marker_seed("openai", true, Some(1.0));
            marker_seed("openai", false, Some(0.75));
            marker_standing("openai", true, true);
        });
        let text = handle.render();
        for line in [
            "examkit_marker_qualified{marker=\"openai\"} 1",
            "examkit_marker_drifted{marker=\"openai\"} 1",
            "examkit_marker_seeds_total{marker=\"openai\",agreed=\"true\"} 1",
            "examkit_marker_seeds_total{marker=\"openai\",agreed=\"false\"} 1",
            "examkit_marker_seed_agreement{marker=\"openai\"} 0.75",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }

    #[test]
    fn methods_are_labelled_from_a_fixed_set() {
        for method in METHODS {
            assert_eq!(method_label(method), method);
        }
        for made_up in ["X000METHOD", "get", "PUT", "DELETE", "OPTIONS", "TRACE", ""] {
            assert_eq!(method_label(made_up), "other", "{made_up:?}");
        }
    }
}
