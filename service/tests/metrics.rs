//! Prometheus metrics on their own listener, scraped and read with a Prometheus text-format
//! parser: after a scripted run, the counters moved by exactly the requests made, and route
//! labels are templates, never the raw paths clients sent.
//!
//! The recorder is the process's, so this file holds one test, which runs on SQLite and then on
//! PostgreSQL (when configured) and compares scrapes taken before and after each run.

mod common;

use std::collections::HashMap;

use common::{Db, Server, generous};
use examkit::auth::Scope;
use openmetrics_parser::PrometheusValue;

/// Every sample's value (counters, gauges, and each histogram's count of observations), keyed by
/// metric name and sorted labels, as a Prometheus text-format parser reads the scrape.
fn scrape_text(text: &str) -> HashMap<String, f64> {
    let exposition = openmetrics_parser::prometheus::parse_prometheus(text)
        .unwrap_or_else(|e| panic!("not the Prometheus text format: {e:?}\n{text}"));
    let mut values = HashMap::new();
    for (name, family) in &exposition.families {
        for sample in family.iter_samples() {
            let labelset = sample.get_labelset().expect("labels");
            let mut labels: Vec<String> =
                labelset.iter().map(|(k, v)| format!("{k}={v}")).collect();
            labels.sort();
            let value = match &sample.value {
                PrometheusValue::Unknown(n) | PrometheusValue::Gauge(n) => n.as_f64(),
                PrometheusValue::Counter(c) => c.value.as_f64(),
                PrometheusValue::Histogram(h) => h.count.map_or(0.0, |c| c as f64),
                PrometheusValue::Summary(_) => continue,
            };
            values.insert(format!("{name}{{{}}}", labels.join(",")), value);
        }
    }
    values
}

async fn scrape(client: &reqwest::Client, url: &str) -> (String, HashMap<String, f64>) {
    let response = client.get(url).send().await.expect("scraped");
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .expect("type")
        .to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = response.text().await.expect("text");
    let values = scrape_text(&text);
    (text, values)
}

fn moved(before: &HashMap<String, f64>, after: &HashMap<String, f64>, key: &str) -> f64 {
    after.get(key).copied().unwrap_or(0.0) - before.get(key).copied().unwrap_or(0.0)
}

async fn run(db: Db, metrics: &str) -> bool {
    let Some(s): Option<Server> = common::start(db, generous()).await else {
        return false;
    };
    let client = reqwest::Client::new();
    let user = s.user("Measured").await;
    let key = s.key(&user, Scope::ALL).await;
    let (_, before) = scrape(&client, metrics).await;

    for _ in 0..3 {
        assert_eq!(s.get("/v1/me", &key).await.status, 200);
    }
    // Bad keys are authentication failures, counted by code.
    let bad = "ek_live_000000000000000000000000000000000000";
    assert_eq!(s.get("/v1/me", bad).await.status, 401);
    assert_eq!(
        s.send(reqwest::Method::GET, "/v1/me", None, &[], None)
            .await
            .status,
        401
    );
    // Ids and unknown paths never become labels.
    let id = uuid::Uuid::new_v4();
    assert_eq!(s.get(&format!("/v1/papers/{id}"), &key).await.status, 404);
    assert_eq!(s.get("/v1/no-such-route-xyz123", &key).await.status, 404);
    let health = client
        .get(format!("{}/healthz", s.base))
        .send()
        .await
        .expect("sent");
    assert_eq!(health.status().as_u16(), 200);

    let (text, after) = scrape(&client, metrics).await;
    let requests = |route: &str, method: &str, status: u16| {
        format!("examkit_http_requests_total{{method={method},route={route},status={status}}}")
    };
    assert_eq!(
        moved(&before, &after, &requests("/v1/me", "GET", 200)),
        3.0,
        "{text}"
    );
    assert_eq!(moved(&before, &after, &requests("/v1/me", "GET", 401)), 2.0);
    assert_eq!(
        moved(&before, &after, &requests("/v1/papers/{id}", "GET", 404)),
        1.0,
        "{text}"
    );
    assert_eq!(
        moved(&before, &after, &requests("unmatched", "GET", 404)),
        1.0
    );
    assert_eq!(
        moved(&before, &after, &requests("/healthz", "GET", 200)),
        1.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            "examkit_http_request_duration_seconds{method=GET,route=/v1/me}"
        ),
        5.0,
        "the latency histogram counts every request of the route"
    );
    assert_eq!(
        moved(
            &before,
            &after,
            "examkit_auth_failures_total{code=invalid_api_key}"
        ),
        1.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            "examkit_auth_failures_total{code=missing_api_key}"
        ),
        1.0
    );
    assert!(!text.contains(&id.to_string()), "a raw id became a label");
    assert!(!text.contains("xyz123"), "a raw path became a label");
    // Gauges read at the scrape: the pools and the job queue.
    assert!(
        after
            .keys()
            .any(|k| k.starts_with("examkit_db_connections{pool=")),
        "{text}"
    );
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_move_by_exactly_the_requests_made_and_labels_are_templates() {
    let handle = examkit::telemetry::install().expect("recorder");
    let store_dir = tempfile::tempdir().expect("dir");
    let url = common::fresh_database(Db::Sqlite, store_dir.path())
        .await
        .expect("sqlite");
    let store = examkit::store::Store::open(&url).await.expect("store");
    let (addr, server) = examkit::telemetry::serve(
        handle,
        store,
        "127.0.0.1:0".parse().expect("addr"),
        std::future::pending(),
    )
    .await
    .expect("metrics listener");
    tokio::spawn(server);
    let metrics = format!("http://{addr}/metrics");
    assert!(run(Db::Sqlite, &metrics).await);
    if std::env::var_os("EXAMKIT_TEST_POSTGRES_URL").is_some() {
        assert!(run(Db::Postgres, &metrics).await, "PostgreSQL configured");
    } else {
        assert!(
            std::env::var_os("EXAMKIT_REQUIRE_POSTGRES").is_none(),
            "PostgreSQL is required but not configured"
        );
    }
}
