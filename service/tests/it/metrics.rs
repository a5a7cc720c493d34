//! Prometheus metrics on their own listener, scraped and read with a Prometheus text-format
//! parser: after a scripted run, the counters moved by exactly the requests made, route labels are
//! templates, never the raw paths clients sent, and method labels are the served methods or
//! `other`, never a method a client made up.
//!
//! The recorder is the process's, so one test measures, in a process of its own, on SQLite and then on PostgreSQL (when
//! configured), comparing scrapes taken before and after each run. The other runs `examkit serve`
//! and `examkit worker` as processes of their own: their metrics listener, and its bad addresses.

use crate::common;

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
    let s: Server = common::start(db, generous()).await;
    let client = examkit::tls::client();
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
    made_up_methods_share_one_label(&s, &client, metrics).await;
    true
}

/// The `method` label values of the request counter in a scrape.
fn method_labels(values: &HashMap<String, f64>) -> std::collections::BTreeSet<String> {
    values
        .keys()
        .filter_map(|k| k.strip_prefix("examkit_http_requests_total{"))
        .filter_map(|labels| {
            labels
                .trim_end_matches('}')
                .split(',')
                .find_map(|l| l.strip_prefix("method="))
                .map(str::to_owned)
        })
        .collect()
}

/// 300 requests with methods no route serves add at most one label value, `other`, and count
/// there.
async fn made_up_methods_share_one_label(s: &Server, client: &reqwest::Client, metrics: &str) {
    let (_, before) = scrape(client, metrics).await;
    for n in 0..300 {
        let method = reqwest::Method::from_bytes(format!("X{n:03}METHOD").as_bytes())
            .expect("a method token");
        let path = if n % 2 == 0 { "/v1/me" } else { "/app/" };
        let response = client
            .request(method, format!("{}{path}", s.base))
            .send()
            .await
            .expect("sent");
        assert!(response.status().is_client_error(), "{}", response.status());
    }
    let (text, after) = scrape(client, metrics).await;
    let (was, is) = (method_labels(&before), method_labels(&after));
    let added: Vec<&String> = is.difference(&was).collect();
    assert!(
        added.is_empty() || added == [&"other".to_owned()],
        "new method labels: {added:?}"
    );
    assert!(!text.contains("METHOD"), "a made-up method became a label");
    let others: f64 = after
        .keys()
        .filter(|k| k.starts_with("examkit_http_requests_total{") && k.contains("method=other"))
        .map(|k| moved(&before, &after, k))
        .sum();
    assert_eq!(others, 300.0, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_move_by_exactly_the_requests_made_and_labels_are_templates() {
    if !common::alone(
        "metrics::counters_move_by_exactly_the_requests_made_and_labels_are_templates",
    ) {
        return;
    }
    let handle = examkit::telemetry::install().expect("recorder");
    let store_dir = tempfile::tempdir().expect("dir");
    let url = common::fresh_database(Db::Sqlite, store_dir.path()).await;
    let store = examkit::store::Store::open(&url).await.expect("store");
    let (addr, server) = examkit::server::metrics::serve(
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

/// Runs `examkit ARGS` on a fresh data directory until it prints a line holding `wanted` or
/// exits; returns what it printed and its exit status if it exited.
fn examkit_until(
    args: &[&str],
    wanted: &str,
) -> (
    String,
    Option<std::process::ExitStatus>,
    std::process::Child,
    tempfile::TempDir,
) {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().expect("dir");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args(args)
        .arg("--data-dir")
        .arg(dir.path())
        .env_remove("DATABASE_URL")
        .env("OMP_THREAD_LIMIT", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("examkit runs");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut printed = String::new();
    for line in stdout.lines().map_while(Result::ok) {
        printed.push_str(&line);
        printed.push('\n');
        if line.contains(wanted) {
            return (printed, None, child, dir);
        }
    }
    let status = child.wait().expect("exited");
    let mut stderr = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read");
    printed.push_str(&stderr);
    (printed, Some(status), child, dir)
}

#[test]
fn serve_and_worker_serve_metrics_and_refuse_bad_addresses() {
    for command in ["serve", "worker"] {
        let mut args = vec![command, "--metrics-listen", "127.0.0.1:0"];
        if command == "serve" {
            args.extend(["--listen", "127.0.0.1:0"]);
        }
        let (printed, exited, mut child, _dir) = examkit_until(&args, "metrics on http://");
        assert!(exited.is_none(), "{command}: {printed}");
        let url = printed
            .lines()
            .find_map(|l| l.strip_prefix("metrics on "))
            .expect("the address")
            .to_owned();
        let response = plain::get(&url);
        assert!(
            response.contains("content-type: text/plain; version=0.0.4"),
            "{command}: {response}"
        );
        let _ = child.kill();
        let _ = child.wait();

        // Not an address: a usage error naming the flag.
        let (printed, exited, _, _) =
            examkit_until(&[command, "--metrics-listen", "port 9"], "never");
        assert_eq!(exited.and_then(|s| s.code()), Some(2), "{printed}");
        assert!(printed.contains("--metrics-listen"), "{printed}");
        // An address already in use.
        let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bound");
        let addr = taken.local_addr().expect("addr").to_string();
        let mut args = vec![command, "--metrics-listen", addr.as_str()];
        if command == "serve" {
            args.extend(["--listen", "127.0.0.1:0"]);
        }
        let (printed, exited, _, _) = examkit_until(&args, "never");
        assert_eq!(exited.and_then(|s| s.code()), Some(1), "{printed}");
        assert!(printed.contains("cannot listen for metrics"), "{printed}");
    }
}

mod plain {
    /// A GET over a plain TCP connection (the test needs no async runtime): the whole response.
    pub fn get(url: &str) -> String {
        use std::io::{Read, Write};
        let rest = url.strip_prefix("http://").expect("http");
        let (host, path) = rest.split_once('/').expect("path");
        let mut stream = std::net::TcpStream::connect(host).expect("connected");
        write!(
            stream,
            "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .expect("sent");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("read");
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        response
    }
}
