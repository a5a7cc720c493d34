//! The HTTP API end to end: a real server on 127.0.0.1, real requests, SQLite and PostgreSQL.

use crate::common;

use common::{Db, generous, png_chunk, start, tiny_image};
use examkit::auth::Scope;
use examkit::store::now_ms;
use examkit::store::rate::Limits;
use reqwest::Method;
use serde_json::{Value, json};

const ALL: &[Scope] = Scope::ALL;

/// A route, the scope it needs, its headers and body.
type RouteCase = (
    Method,
    String,
    Scope,
    Vec<(&'static str, &'static str)>,
    Option<Vec<u8>>,
);

on_both!(
    truncated_upload,
    oversized_headers,
    upload_names,
    malformed_path_ids,
    authentication_errors,
    identity,
    scope_matrix,
    routing_and_body_errors,
    import_flow,
    upload_errors,
    idempotency,
    concurrent_retries_run_once,
    per_key_minute_limits,
    account_and_daily_limits,
    review,
    other_accounts_get_404,
    session_file_limit,
    documentation,
    counters_are_shared_between_servers,
    idempotency_is_shared_between_servers,
    daily_limit,
    unknown_routes_count_against_no_quota,
    changes_to_keys_reach_the_other_server_at_once,
    limits_are_exact_under_concurrency_on_two_servers,
    validation_reads_the_imports_own_files,
);

/// A path no route has is answered before the key is read: no rate-limit headers, and the key's
/// allowance is untouched.
async fn unknown_routes_count_against_no_quota(db: Db) {
    let s = start(db, Limits::default()).await;
    let user = s.user("Lost").await;
    let key = s.key(&user, ALL).await;
    let first = s.get("/v1/me", &key).await;
    let remaining = first
        .header("x-ratelimit-remaining")
        .expect("counted")
        .to_owned();
    for path in ["/v1/no-such-route", "/v1/me/extra", "/nothing"] {
        let lost = s.get(path, &key).await;
        lost.assert_error(404, "route_not_found");
        assert!(lost.header("x-ratelimit-remaining").is_none(), "{path}");
        assert!(
            lost.header("x-ratelimit-daily-remaining").is_none(),
            "{path}"
        );
    }
    let wrong = s
        .send(Method::DELETE, "/v1/me", Some(&key), &[], None)
        .await;
    wrong.assert_error(405, "method_not_allowed");
    assert!(wrong.header("x-ratelimit-remaining").is_none());
    let next = s.get("/v1/me", &key).await;
    let after: i64 = next
        .header("x-ratelimit-remaining")
        .expect("counted")
        .parse()
        .expect("a number");
    assert_eq!(after, remaining.parse::<i64>().expect("a number") - 1);
}

/// Two servers on one database (one PostgreSQL database, or one SQLite file) share the rate
/// counters: with the specification's limits, the 121st `GET /v1/me` of a key within one minute,
/// sent alternately to the two servers, is refused with `Retry-After`.
async fn counters_are_shared_between_servers(db: Db) {
    let first = start(db, Limits::default()).await;
    let second = common::start_on(&first.database_url, Limits::default()).await;
    let user = first.user("Two servers").await;
    let (statuses, limited) = common::within_one_minute(3, |_| async {
        let key = first.key(&user, ALL).await;
        let mut statuses = Vec::new();
        let mut last = None;
        for i in 0..121 {
            let server = if i % 2 == 0 { &first } else { &second };
            let resp = server.get("/v1/me", &key).await;
            statuses.push(resp.status);
            last = Some(resp);
        }
        (statuses, last.expect("121 responses"))
    })
    .await;
    assert!(
        statuses[..120].iter().all(|s| *s == 200),
        "120 admitted across both servers: {statuses:?}"
    );
    limited.assert_error(429, "rate_limited");
    let retry: i64 = limited
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("integer");
    assert!((1..=60).contains(&retry), "retry after {retry}");
    assert_eq!(limited.header("x-ratelimit-remaining"), Some("0"));
}

/// Each server keeps the keys it has authenticated in memory. A change made through one server
/// (or any other writer) reaches the other before its next request: revocation is 401 there at
/// once, a restricted account is 403 and an unrestricted one admitted again, and the requests
/// refused on the way consume none of the allowance.
async fn changes_to_keys_reach_the_other_server_at_once(db: Db) {
    let first = start(db, generous()).await;
    let second = common::start_on(&first.database_url, generous()).await;
    let user = first.user("Two servers").await;
    let (key, key_id) = first.key_expiring(&user, ALL, now_ms() + 86_400_000).await;
    let remaining = |r: &common::Resp| -> i64 {
        r.header("x-ratelimit-remaining")
            .expect("remaining")
            .parse()
            .expect("a number")
    };
    // Both servers have read the key.
    assert_eq!(first.get("/v1/me", &key).await.status, 200);
    let warm = second.get("/v1/me", &key).await;
    assert_eq!(warm.status, 200);
    let before = remaining(&warm);

    assert!(
        first
            .store
            .update_user(&user, None, Some(true))
            .await
            .expect("restrict")
    );
    second
        .get("/v1/me", &key)
        .await
        .assert_error(403, "account_restricted");
    assert!(
        first
            .store
            .update_user(&user, None, Some(false))
            .await
            .expect("unrestrict")
    );
    let again = second.get("/v1/me", &key).await;
    assert_eq!(again.status, 200, "a refusal is never remembered");
    assert_eq!(
        remaining(&again),
        before - 1,
        "the refused request was not counted"
    );

    assert!(first.store.revoke_key(&key_id).await.expect("revoke"));
    second
        .get("/v1/me", &key)
        .await
        .assert_error(401, "revoked_api_key");
    first
        .get("/v1/me", &key)
        .await
        .assert_error(401, "revoked_api_key");

    // A key that expires is refused at once by a server that has it in memory.
    let (short, _) = first.key_expiring(&user, ALL, now_ms() + 1_500).await;
    assert_eq!(second.get("/v1/me", &short).await.status, 200);
    tokio::time::sleep(std::time::Duration::from_millis(1_600)).await;
    second
        .get("/v1/me", &short)
        .await
        .assert_error(401, "expired_api_key");
}

/// Sixteen connections at once, half to each of two servers on one database, one key: exactly
/// 120 requests are admitted in the minute, each told a different number of requests left, and
/// every request is in the usage records once both servers have written them.
async fn limits_are_exact_under_concurrency_on_two_servers(db: Db) {
    const REQUESTS: usize = 200;
    const CONNECTIONS: usize = 16;
    let first = start(db, Limits::default()).await;
    let second = common::start_on(&first.database_url, Limits::default()).await;
    let user = first.user("Concurrent").await;
    let (statuses, key_id) = common::within_one_minute(3, |_| async {
        let (key, key_id) = first.key_expiring(&user, ALL, now_ms() + 86_400_000).await;
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results = futures_util::future::join_all((0..CONNECTIONS).map(|_| async {
            let mut seen = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= REQUESTS {
                    return seen;
                }
                let server = [&first, &second][i % 2];
                let resp = server.get("/v1/me", &key).await;
                seen.push((
                    resp.status,
                    resp.header("x-ratelimit-remaining").map(str::to_owned),
                ));
            }
        }))
        .await;
        (results.concat(), key_id)
    })
    .await;
    assert_eq!(statuses.len(), REQUESTS);
    let mut left: Vec<i64> = statuses
        .iter()
        .filter(|(status, _)| *status == 200)
        .map(|(_, r)| r.as_deref().expect("remaining").parse().expect("a number"))
        .collect();
    left.sort_unstable();
    assert_eq!(
        left,
        (0..120).collect::<Vec<i64>>(),
        "120 admitted, each with its own count"
    );
    assert!(
        statuses
            .iter()
            .filter(|(status, _)| *status != 200)
            .all(|(status, r)| *status == 429 && r.as_deref() == Some("0")),
        "the rest are refused: {statuses:?}"
    );
    // Usage: both servers write what they recorded; every request is there.
    second.store.flush_usage().await.expect("flush");
    let usage = first.store.usage(&key_id, now_ms()).await.expect("usage");
    let requests = |status: u16| -> i64 {
        usage
            .iter()
            .filter(|row| row.status == status && row.operation == "GET /v1/me")
            .map(|row| row.requests)
            .sum()
    };
    assert_eq!((requests(200), requests(429)), (120, 80), "{usage:?}");
    let key_row = first.store.key(&key_id).await.expect("key").expect("a key");
    assert_eq!(key_row.request_count, 200);
    assert_eq!(key_row.error_count, 80);
}

/// Two servers on one database share idempotency records: a create replayed on the other server
/// returns the stored response, and the same key with another body is a conflict there too.
async fn idempotency_is_shared_between_servers(db: Db) {
    let first = start(db, generous()).await;
    let second = common::start_on(&first.database_url, generous()).await;
    let user = first.user("Two servers").await;
    let key = first.key(&user, ALL).await;
    let body = br#"{"title":"Shared idempotency"}"#;
    let created = first
        .post_json("/v1/marking/imports", &key, Some("shared-key-0001"), body)
        .await;
    assert_eq!(created.status, 201);
    assert_eq!(created.header("idempotent-replayed"), None);
    let replayed = second
        .post_json("/v1/marking/imports", &key, Some("shared-key-0001"), body)
        .await;
    assert_eq!(replayed.status, 201);
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        replayed.body, created.body,
        "the stored response, byte for byte"
    );
    second
        .post_json(
            "/v1/marking/imports",
            &key,
            Some("shared-key-0001"),
            br#"{"title":"Something else"}"#,
        )
        .await
        .assert_error(409, "idempotency_key_reused");
    let list = second.get("/v1/marking/sessions", &key).await.json();
    assert_eq!(
        list["sessions"].as_array().expect("sessions").len(),
        1,
        "the create ran once"
    );
}

async fn daily_limit(db: Db) {
    let limits = Limits {
        key_per_day: 3,
        ..Limits::default()
    };
    let s = start(db, limits).await;
    let user = s.user("Daily").await;
    let key = s.key(&user, ALL).await;
    let statuses: Vec<u16> = {
        let mut v = Vec::new();
        for _ in 0..3 {
            let resp = s.get("/v1/me", &key).await;
            v.push(resp.status);
        }
        v
    };
    assert_eq!(statuses, [200, 200, 200]);
    let limited = s.get("/v1/me", &key).await;
    limited.assert_error(429, "rate_limited");
    assert_eq!(limited.header("x-ratelimit-daily-remaining"), Some("0"));
    let retry: i64 = limited
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("integer");
    assert!(
        (1..=86_400).contains(&retry),
        "until the next UTC day: {retry}"
    );
    // Another key of the same account has its own daily quota.
    let other = s.key(&user, ALL).await;
    assert_eq!(s.get("/v1/me", &other).await.status, 200);
}

/// 300 MiB per session: twelve 25 MiB files fit exactly, one more byte does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_size_limit_on_sqlite() {
    let s = start(Db::Sqlite, generous()).await;
    let user = s.user("Large").await;
    let key = s.key(&user, ALL).await;
    let import = s.import(&key, "large scans").await;
    let mut file = examkit::inspect::blank_pdf(1);
    file.resize(25 * 1024 * 1024, b'\n');
    for i in 0..12 {
        let resp = s
            .upload(
                &key,
                &import,
                "work",
                &format!("scan-{i}.pdf"),
                "application/pdf",
                file.clone(),
            )
            .await;
        assert_eq!(resp.status, 201, "file {i}");
    }
    let png = tiny_image("png");
    s.upload(&key, &import, "work", "one-more.png", "image/png", png)
        .await
        .assert_error(413, "session_too_large");
}

/// Connections the database closes while they sit unused (a restarted PostgreSQL server, an
/// administrator's `pg_terminate_backend`) are replaced before their next use: once they have
/// been unused for a second, every request succeeds, rate-limit admissions included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(examkit_postgres_tests),
    ignore = "PostgreSQL not configured: set EXAMKIT_TEST_POSTGRES_URL"
)]
async fn connections_the_database_closed_are_replaced() {
    use sqlx::Connection;
    let s = start(Db::Postgres, Limits::default()).await;
    let user = s.user("Reconnects").await;
    let key = s.key(&user, ALL).await;
    assert_eq!(s.get("/v1/me", &key).await.status, 200);
    sqlx::any::install_default_drivers();
    let mut admin = sqlx::AnyConnection::connect(&s.database_url)
        .await
        .expect("connect");
    let closed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t",
    )
    .fetch_one(&mut admin)
    .await
    .expect("close the server's connections");
    // At least the pool's connection and the admission thread's.
    assert!(closed >= 2, "closed {closed} connections");
    tokio::time::sleep(std::time::Duration::from_millis(1_200)).await;
    for i in 0..5 {
        let resp = s.get("/v1/me", &key).await;
        assert_eq!(resp.status, 200, "request {i} after the connections closed");
        assert!(
            resp.header("x-ratelimit-remaining").is_some(),
            "request {i} admitted"
        );
    }
}

async fn authentication_errors(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Ada").await;
    let good = s.key(&user, ALL).await;

    s.send(Method::GET, "/v1/me", None, &[], None)
        .await
        .assert_error(401, "missing_api_key");
    let basic = s
        .send(
            Method::GET,
            "/v1/me",
            None,
            &[("authorization", "Basic dXNlcjpwYXNz")],
            None,
        )
        .await;
    basic.assert_error(401, "invalid_authorization");
    let cookie = s
        .send(
            Method::GET,
            "/v1/me",
            None,
            &[("cookie", "session=abc")],
            None,
        )
        .await;
    cookie.assert_error(401, "missing_api_key");
    s.get("/v1/me", "not-a-key")
        .await
        .assert_error(401, "invalid_api_key");
    // A typo fails the checksum; a well-formed key that was never issued is unknown.
    let mut typo: Vec<char> = good.chars().collect();
    typo[10] = if typo[10] == 'x' { 'y' } else { 'x' };
    s.get("/v1/me", &typo.into_iter().collect::<String>())
        .await
        .assert_error(401, "invalid_api_key");
    let never_issued = examkit::auth::generate_key().expect("randomness").secret;
    s.get("/v1/me", &never_issued)
        .await
        .assert_error(401, "invalid_api_key");

    let (expired, _) = s.key_expiring(&user, ALL, now_ms() - 1).await;
    s.get("/v1/me", &expired)
        .await
        .assert_error(401, "expired_api_key");

    let (revoked, revoked_id) = s.key_expiring(&user, ALL, now_ms() + 86_400_000).await;
    assert_eq!(s.get("/v1/me", &revoked).await.status, 200);
    assert!(s.store.revoke_key(&revoked_id).await.expect("revoke"));
    s.get("/v1/me", &revoked)
        .await
        .assert_error(401, "revoked_api_key");

    let unverified_user = s
        .store
        .create_user("Unverified", false, false)
        .await
        .expect("user")
        .id;
    let unverified = s.key(&unverified_user, ALL).await;
    s.get("/v1/me", &unverified)
        .await
        .assert_error(401, "account_unverified");

    let restricted_user = s
        .store
        .create_user("Restricted", true, true)
        .await
        .expect("user")
        .id;
    let restricted = s.key(&restricted_user, ALL).await;
    s.get("/v1/me", &restricted)
        .await
        .assert_error(403, "account_restricted");

    // An account that stops being verified makes its keys unusable at once.
    assert!(
        s.store
            .update_user(&user, Some(false), None)
            .await
            .expect("update")
    );
    s.get("/v1/me", &good)
        .await
        .assert_error(401, "account_unverified");
    assert!(
        s.store
            .update_user(&user, Some(true), None)
            .await
            .expect("update")
    );
    assert_eq!(s.get("/v1/me", &good).await.status, 200);
}

async fn identity(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Grace").await;
    let key = s.key(&user, &[Scope::MarkingRead]).await;
    let resp = s.get("/v1/me", &key).await;
    assert_eq!(resp.status, 200);
    let body = resp.json();
    assert_eq!(body["user"]["id"], user.as_str());
    assert_eq!(body["user"]["name"], "Grace");
    assert_eq!(body["key"]["scopes"], json!(["marking:read"]));
    assert!(
        body["key"]["id"]
            .as_str()
            .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok())
    );
    assert!(
        !resp
            .body
            .windows(20)
            .any(|w| key.as_bytes().windows(20).any(|k| k == w)),
        "the secret is never echoed"
    );
    assert_eq!(resp.header("x-ratelimit-daily-remaining"), Some("999999"));
}

/// Every route, with a key holding every scope but the one it needs: 403 with `requiredScopes`;
/// with exactly its scope: not 403.
async fn scope_matrix(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Scopes").await;
    let full = s.key(&user, ALL).await;
    let (import, submission, work, _) = s.import_with_example(&full).await;
    let completed = s.import(&full, "completed").await;
    let question = {
        let (import, submission, _, _) = s.import_with_example(&full).await;
        let resp = s
            .post_json(
                &format!("/v1/marking/imports/{import}/complete"),
                &full,
                Some("complete-for-scopes"),
                submission.as_bytes(),
            )
            .await;
        assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
        resp.json()["session"]["questions"][0]["id"]
            .as_str()
            .expect("question id")
            .to_owned()
    };
    let _ = completed;
    let pdf = examkit::inspect::blank_pdf(1);
    let automated = s.automated_session(&full, "automated").await;
    let routes: Vec<RouteCase> = vec![
        (
            Method::POST,
            "/v1/marking/imports".into(),
            Scope::MarkingImport,
            vec![
                ("content-type", "application/json"),
                ("idempotency-key", "scope-create-1"),
            ],
            Some(br#"{"title":"t"}"#.to_vec()),
        ),
        (
            Method::POST,
            format!("/v1/marking/imports/{import}/assets?kind=work&name=a.pdf"),
            Scope::MarkingImport,
            vec![("content-type", "application/pdf")],
            Some(pdf),
        ),
        (
            Method::POST,
            format!("/v1/marking/imports/{import}/validate"),
            Scope::MarkingImport,
            vec![("content-type", "application/json")],
            Some(submission.clone().into_bytes()),
        ),
        (
            Method::POST,
            format!("/v1/marking/imports/{import}/complete"),
            Scope::MarkingImport,
            vec![
                ("content-type", "application/json"),
                ("idempotency-key", "scope-complete-1"),
            ],
            Some(submission.clone().into_bytes()),
        ),
        (
            Method::GET,
            "/v1/marking/sessions".into(),
            Scope::MarkingRead,
            vec![],
            None,
        ),
        (
            Method::GET,
            format!("/v1/marking/sessions/{import}"),
            Scope::MarkingRead,
            vec![],
            None,
        ),
        (
            Method::GET,
            format!("/v1/marking/assets/{work}"),
            Scope::MarkingRead,
            vec![],
            None,
        ),
        (
            Method::POST,
            "/v1/marking/sessions".into(),
            Scope::MarkingSubmit,
            vec![
                ("content-type", "application/json"),
                ("idempotency-key", "scope-automated-1"),
            ],
            Some(br#"{"title":"t"}"#.to_vec()),
        ),
        (
            Method::POST,
            format!("/v1/marking/sessions/{automated}/assets?kind=work&name=a.pdf"),
            Scope::MarkingSubmit,
            vec![("content-type", "application/pdf")],
            Some(examkit::inspect::blank_pdf(1)),
        ),
        (
            Method::POST,
            format!("/v1/marking/sessions/{automated}/start"),
            Scope::MarkingSubmit,
            vec![("idempotency-key", "scope-automated-2")],
            None,
        ),
        (
            Method::POST,
            format!("/v1/marking/sessions/{automated}/questions"),
            Scope::MarkingSubmit,
            vec![
                ("content-type", "application/json"),
                ("idempotency-key", "scope-automated-3"),
            ],
            Some(br#"{}"#.to_vec()),
        ),
        (
            Method::POST,
            format!("/v1/marking/questions/{question}/cancel"),
            Scope::MarkingSubmit,
            vec![],
            None,
        ),
        (
            Method::GET,
            format!("/v1/marking/assets/{work}/pages/1"),
            Scope::MarkingRead,
            vec![],
            None,
        ),
        (
            Method::PATCH,
            format!("/v1/marking/questions/{question}"),
            Scope::MarkingReview,
            vec![("content-type", "application/json")],
            Some(br#"{"revision": 99, "decisions": [{"criterionId": "q1a-m1"}]}"#.to_vec()),
        ),
    ];
    for (method, path, needed, headers, body) in routes {
        let others: Vec<Scope> = ALL.iter().copied().filter(|s| *s != needed).collect();
        let expires = examkit::store::now_ms() + 86_400_000;
        let (without, without_id) = s.key_expiring(&user, &others, expires).await;
        let resp = s
            .send(
                method.clone(),
                &path,
                Some(&without),
                &headers,
                body.clone(),
            )
            .await;
        let error = resp.assert_error(403, "insufficient_scope");
        assert_eq!(
            error["error"]["requiredScopes"],
            json!([needed.as_str()]),
            "{method} {path}"
        );

        let (only, only_id) = s.key_expiring(&user, &[needed], expires).await;
        let resp = s
            .send(method.clone(), &path, Some(&only), &headers, body)
            .await;
        // An account holds at most 20 active keys: these two have done their part.
        for id in [&without_id, &only_id] {
            s.store.revoke_key(id).await.expect("revoke");
        }
        assert_ne!(
            resp.status,
            403,
            "{method} {path} with {}: {}",
            needed.as_str(),
            String::from_utf8_lossy(&resp.body)
        );
        assert_ne!(resp.status, 401);
    }
    // /v1/me needs no particular scope.
    let any = s.key(&user, &[Scope::QuestionsRead]).await;
    assert_eq!(s.get("/v1/me", &any).await.status, 200);
}

async fn routing_and_body_errors(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Routes").await;
    let key = s.key(&user, ALL).await;

    s.get("/v1/nothing-here", &key)
        .await
        .assert_error(404, "route_not_found");
    s.get("/v2/me", &key)
        .await
        .assert_error(404, "route_not_found");
    s.send(Method::DELETE, "/v1/me", Some(&key), &[], None)
        .await
        .assert_error(405, "method_not_allowed");
    s.send(Method::GET, "/v1/marking/imports", Some(&key), &[], None)
        .await
        .assert_error(405, "method_not_allowed");
    // Every path of the document, with every method it does not list: 405 with `Allow` naming
    // the methods it does list.
    let openapi: serde_json::Value =
        serde_json::from_str(examkit::http::docs::OPENAPI).expect("the document is JSON");
    let methods = ["GET", "POST", "PUT", "PATCH", "DELETE"];
    let mut checked = 0;
    for (template, operations) in openapi["paths"].as_object().expect("paths") {
        let listed: Vec<&str> = methods
            .iter()
            .copied()
            .filter(|m| operations.get(m.to_ascii_lowercase()).is_some())
            .collect();
        let path: String = template
            .split('/')
            .map(|segment| match segment {
                "{revision}" | "{page}" => "1".to_owned(),
                "{kind}" => "question-paper".to_owned(),
                s if s.starts_with('{') => uuid::Uuid::new_v4().to_string(),
                s => s.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("/");
        for method in methods.iter().filter(|m| !listed.contains(m)) {
            let method = Method::from_bytes(method.as_bytes()).expect("method");
            let resp = s.send(method.clone(), &path, Some(&key), &[], None).await;
            resp.assert_error(405, "method_not_allowed");
            assert_eq!(
                resp.header("allow"),
                Some(listed.join(", ").as_str()),
                "{method} {path}"
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} method and path pairs");

    let form = s
        .send(
            Method::POST,
            "/v1/marking/imports",
            Some(&key),
            &[
                ("content-type", "application/x-www-form-urlencoded"),
                ("idempotency-key", "routes-0001"),
            ],
            Some(b"title=x".to_vec()),
        )
        .await;
    form.assert_error(415, "unsupported_media_type");
    s.post_json(
        "/v1/marking/imports",
        &key,
        Some("routes-0002"),
        b"{\"title\": ",
    )
    .await
    .assert_error(400, "invalid_json");
    s.post_json(
        "/v1/marking/imports",
        &key,
        Some("routes-0003"),
        b"{\"title\": 5}",
    )
    .await
    .assert_error(400, "invalid_body");
    s.post_json(
        "/v1/marking/imports",
        &key,
        Some("routes-0004"),
        br#"{"title": "x", "extra": 1}"#,
    )
    .await
    .assert_error(400, "invalid_body");
    s.post_json(
        "/v1/marking/imports",
        &key,
        Some("routes-0005"),
        br#"{"title": "   "}"#,
    )
    .await
    .assert_error(400, "invalid_body");

    let import = s.import(&key, "limits").await;
    let big = vec![b' '; 4 * 1024 * 1024 + 1];
    s.post_json(
        &format!("/v1/marking/imports/{import}/validate"),
        &key,
        None,
        &big,
    )
    .await
    .assert_error(413, "payload_too_large");
    // Exactly 4 MiB is accepted by the service and judged by the engine.
    let mut exact = vec![b' '; 4 * 1024 * 1024];
    exact[0] = b'{';
    exact[4 * 1024 * 1024 - 1] = b'}';
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/validate"),
            &key,
            None,
            &exact,
        )
        .await;
    let body = resp.assert_error(422, "validation_failed");
    assert!(
        body["error"]["details"]["errors"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
    );
    let text = s
        .send(
            Method::POST,
            &format!("/v1/marking/imports/{import}/validate"),
            Some(&key),
            &[("content-type", "text/plain")],
            Some(b"{}".to_vec()),
        )
        .await;
    text.assert_error(415, "unsupported_media_type");
    // Malformed JSON sent for validation is the engine's invalid_json, reported as a 422.
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/validate"),
            &key,
            None,
            b"{\"schemaVersion\":",
        )
        .await;
    let body = resp.assert_error(422, "validation_failed");
    assert_eq!(
        body["error"]["details"]["errors"][0]["code"],
        "invalid_json"
    );

    s.get("/v1/marking/sessions/not-a-uuid", &key)
        .await
        .assert_error(404, "not_found");
    s.get(
        &format!("/v1/marking/sessions/{}", uuid::Uuid::new_v4()),
        &key,
    )
    .await
    .assert_error(404, "not_found");
    s.get(
        &format!("/v1/marking/assets/{}", uuid::Uuid::new_v4()),
        &key,
    )
    .await
    .assert_error(404, "not_found");
    s.post_json(
        &format!("/v1/marking/imports/{}/validate", uuid::Uuid::new_v4()),
        &key,
        None,
        b"{}",
    )
    .await
    .assert_error(404, "not_found");
}

async fn import_flow(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Importer").await;
    let key = s.key(&user, ALL).await;
    let (import, submission, work, scheme) = s.import_with_example(&key).await;

    // The asset bytes come back unchanged, with their type.
    let asset = s.get(&format!("/v1/marking/assets/{work}"), &key).await;
    assert_eq!(asset.status, 200);
    assert_eq!(asset.header("content-type"), Some("application/pdf"));
    assert_eq!(asset.body, examkit::inspect::blank_pdf(6));

    // Validation: exactly the engine's outcome bytes, computed with the import's real assets.
    let assets = vec![
        examkit_engine::Asset {
            id: uuid::Uuid::parse_str(&work).expect("uuid"),
            kind: examkit_engine::AssetKind::Work,
            page_count: 6,
        },
        examkit_engine::Asset {
            id: uuid::Uuid::parse_str(&scheme).expect("uuid"),
            kind: examkit_engine::AssetKind::Scheme,
            page_count: 4,
        },
    ];
    let expected = examkit_engine::validate(submission.as_bytes(), Some(&assets));
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/validate"),
            &key,
            None,
            submission.as_bytes(),
        )
        .await;
    assert_eq!(resp.status, 200);
    assert_eq!(String::from_utf8_lossy(&resp.body), expected.to_json());
    assert_eq!(resp.json()["assetsChecked"], true);

    // An invalid submission: 422 with the engine's errors in details.
    let invalid = common::example("a-level-pure-paper.invalid.json")
        .replace(common::EXAMPLE_WORK, &work)
        .replace(common::EXAMPLE_SCHEME, &scheme);
    let engine_invalid = examkit_engine::validate(invalid.as_bytes(), Some(&assets));
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/validate"),
            &key,
            None,
            invalid.as_bytes(),
        )
        .await;
    let body = resp.assert_error(422, "validation_failed");
    let engine_json: Value = serde_json::from_str(&engine_invalid.to_json()).expect("json");
    assert_eq!(body["error"]["details"]["errors"], engine_json["errors"]);
    assert_eq!(body["error"]["details"]["truncated"], false);
    // Completing an invalid submission saves nothing.
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/complete"),
            &key,
            Some("complete-invalid-1"),
            invalid.as_bytes(),
        )
        .await;
    resp.assert_error(422, "validation_failed");
    let session = s
        .get(&format!("/v1/marking/sessions/{import}"), &key)
        .await
        .json();
    assert_eq!(session["session"]["status"], "draft");
    assert_eq!(session["session"]["questions"], json!([]));

    // A page beyond the uploaded scheme's 4 pages is caught because the service passes real assets.
    let out_of_range = submission.replace(
        &format!("\"{scheme}\": [\n          1\n        ]"),
        &format!("\"{scheme}\": [\n          9\n        ]"),
    );
    assert_ne!(
        out_of_range, submission,
        "the example's selection layout changed"
    );
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/validate"),
            &key,
            None,
            out_of_range.as_bytes(),
        )
        .await;
    let body = resp.assert_error(422, "validation_failed");
    let codes: Vec<&str> = body["error"]["details"]["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["code"].as_str())
        .collect();
    assert!(codes.contains(&"page_out_of_range"), "{codes:?}");

    // Completion: every question saved, with results.
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/complete"),
            &key,
            Some("complete-good-1"),
            submission.as_bytes(),
        )
        .await;
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
    let completed = resp.json();
    assert_eq!(
        completed["outcome"],
        serde_json::from_str::<Value>(&expected.to_json()).expect("json")
    );
    let session = &completed["session"];
    assert_eq!(session["status"], "completed");
    assert_eq!(session["needsReview"], true);
    assert_eq!(session["kind"], "import");
    assert_eq!(session["source"]["kind"], "ai");
    assert_eq!(session["coverageKind"], "partial");
    let questions = session["questions"].as_array().expect("questions");
    assert_eq!(questions.len(), 3);
    assert_eq!(
        session["score"],
        json!({"awarded": 9, "possible": 11, "max": 11})
    );
    let q3 = &questions[2];
    assert_eq!(q3["label"], "3");
    assert_eq!(q3["status"], "needs_review");
    assert_eq!(q3["revision"], 1);
    assert_eq!(q3["score"], json!({"awarded": 2, "possible": 4, "max": 4}));
    assert_eq!(q3["sourceDocuments"]["workAssetIds"], json!([work]));
    assert_eq!(q3["sourceDocuments"]["schemeAssetIds"], json!([scheme]));
    let allocation = &q3["allocations"][3];
    assert_eq!(allocation["criterionId"], "q3b-b1");
    assert_eq!(allocation["submitted"], "uncertain");
    assert_eq!(allocation["decision"], "uncertain");
    assert_eq!(allocation["flags"], json!(["uncertain_decision"]));
    assert!(
        allocation["explanation"]
            .as_str()
            .is_some_and(|e| e.contains("smudged"))
    );
    assert_eq!(allocation["evidence"][0]["box"]["width"], 0.6);

    // The same submission again (new idempotency key): the same result.
    let again = s
        .post_json(
            &format!("/v1/marking/imports/{import}/complete"),
            &key,
            Some("complete-good-2"),
            submission.as_bytes(),
        )
        .await;
    assert_eq!(again.status, 200);
    assert_eq!(again.json(), completed);
    // A changed submission: 409.
    let changed = submission.replace("Department marking pipeline", "Another pipeline");
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/complete"),
            &key,
            Some("complete-changed-1"),
            changed.as_bytes(),
        )
        .await;
    resp.assert_error(409, "import_already_completed");
    // A completed import takes no more files.
    let resp = s
        .upload(
            &key,
            &import,
            "work",
            "late.pdf",
            "application/pdf",
            examkit::inspect::blank_pdf(1),
        )
        .await;
    resp.assert_error(409, "import_completed");

    // Reads.
    let read = s.get(&format!("/v1/marking/sessions/{import}"), &key).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["session"], completed["session"]);
    let list = s.get("/v1/marking/sessions", &key).await.json();
    // Automated marking is on by default; imports are listed with its sessions.
    assert_eq!(list["enabled"], true);
    let sessions = list["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["id"], import.as_str());
    assert_eq!(sessions[0]["questionCount"], 3);
    assert_eq!(sessions[0]["assetCount"], 2);
    assert!(
        sessions[0].get("questions").is_none(),
        "list entries are lightweight"
    );
}

/// Validation checks page references against the files of the import named in the path, and
/// only of an import: another import's files, or none, give the engine's outcome for those.
async fn validation_reads_the_imports_own_files(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Validating School").await;
    let key = s.key(&user, ALL).await;
    let (import, submission, work, scheme) = s.import_with_example(&key).await;
    let validate = |id: String, body: String| {
        let s = &s;
        let key = &key;
        async move {
            s.post_json(
                &format!("/v1/marking/imports/{id}/validate"),
                key,
                None,
                body.as_bytes(),
            )
            .await
        }
    };
    let engine_errors = |body: &str, assets: &[examkit_engine::Asset]| -> Value {
        let outcome = examkit_engine::validate(body.as_bytes(), Some(assets));
        let json: Value = serde_json::from_str(&outcome.to_json()).expect("json");
        json["errors"].clone()
    };

    // Its own two files: valid.
    let resp = validate(import.clone(), submission.clone()).await;
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));

    // An import with no files: every page reference names a file it does not have.
    let empty = s.import(&key, "No files yet").await;
    let body = validate(empty, submission.clone())
        .await
        .assert_error(422, "validation_failed");
    let none = engine_errors(&submission, &[]);
    assert_eq!(body["error"]["details"]["errors"], none);
    for id in [&work, &scheme] {
        assert!(none.to_string().contains(id.as_str()), "{id} not reported");
    }

    // Another import with a 2-page file of its own: the first import's files are not its files,
    // and its own file is checked for what it is.
    let other = s.import(&key, "One file").await;
    let upload = s
        .upload(
            &key,
            &other,
            "work",
            "w.pdf",
            "application/pdf",
            examkit::inspect::blank_pdf(2),
        )
        .await;
    assert_eq!(
        upload.status,
        201,
        "{}",
        String::from_utf8_lossy(&upload.body)
    );
    let own = upload.json()["asset"]["id"]
        .as_str()
        .expect("asset id")
        .to_owned();
    let own_assets = [examkit_engine::Asset {
        id: uuid::Uuid::parse_str(&own).expect("uuid"),
        kind: examkit_engine::AssetKind::Work,
        page_count: 2,
    }];
    let body = validate(other.clone(), submission.clone())
        .await
        .assert_error(422, "validation_failed");
    assert_eq!(body["error"]["details"]["errors"], none);
    let naming_own = submission.replace(work.as_str(), &own);
    let body = validate(other, naming_own.clone())
        .await
        .assert_error(422, "validation_failed");
    let expected = engine_errors(&naming_own, &own_assets);
    assert_eq!(body["error"]["details"]["errors"], expected);
    assert_ne!(
        expected,
        engine_errors(&naming_own, &[]),
        "the file was not read"
    );

    // A session for automated marking is not an import, whatever files it has.
    let automated = s.automated_session(&key, "automated").await;
    validate(automated, submission.clone())
        .await
        .assert_error(404, "not_found");
}

async fn upload_errors(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Uploader").await;
    let key = s.key(&user, ALL).await;
    let import = s.import(&key, "uploads").await;
    let png = tiny_image("png");
    let jpeg = tiny_image("jpeg");
    let webp = tiny_image("webp");

    for (content_type, bytes) in [
        ("image/png", png.clone()),
        ("image/jpeg", jpeg),
        ("image/webp", webp),
    ] {
        let resp = s
            .upload(&key, &import, "work", "photo", content_type, bytes)
            .await;
        assert_eq!(resp.status, 201, "{content_type}");
        assert_eq!(resp.json()["asset"]["pageCount"], 1);
        assert_eq!(resp.json()["asset"]["contentType"], content_type);
    }
    let pdf = s
        .upload(
            &key,
            &import,
            "scheme",
            "ms.pdf",
            "application/pdf",
            examkit::inspect::blank_pdf(80),
        )
        .await;
    assert_eq!(pdf.status, 201);
    assert_eq!(pdf.json()["asset"]["pageCount"], 80);
    assert_eq!(pdf.json()["asset"]["kind"], "scheme");

    s.upload(
        &key,
        &import,
        "work",
        "big.pdf",
        "application/pdf",
        examkit::inspect::blank_pdf(81),
    )
    .await
    .assert_error(422, "too_many_pages");
    s.upload(
        &key,
        &import,
        "work",
        "bad.pdf",
        "application/pdf",
        b"%PDF-1.7\nthis is not a PDF".to_vec(),
    )
    .await
    .assert_error(422, "unreadable_file");
    s.upload(
        &key,
        &import,
        "work",
        "x.pdf",
        "application/pdf",
        png.clone(),
    )
    .await
    .assert_error(415, "content_type_mismatch");
    s.upload(
        &key,
        &import,
        "work",
        "x.gif",
        "image/png",
        b"GIF89a....".to_vec(),
    )
    .await
    .assert_error(415, "content_type_mismatch");
    s.upload(
        &key,
        &import,
        "work",
        "x.gif",
        "image/gif",
        b"GIF89a....".to_vec(),
    )
    .await
    .assert_error(415, "unsupported_media_type");
    s.upload(&key, &import, "work", "x.png", "image/png", Vec::new())
        .await
        .assert_error(400, "empty_body");
    s.upload(&key, &import, "essay", "x.png", "image/png", png.clone())
        .await
        .assert_error(400, "invalid_query");
    let path = format!("/v1/marking/imports/{import}/assets?name=x.png");
    s.send(
        Method::POST,
        &path,
        Some(&key),
        &[("content-type", "image/png")],
        Some(png.clone()),
    )
    .await
    .assert_error(400, "invalid_query");
    let path = format!("/v1/marking/imports/{import}/assets?kind=work");
    s.send(
        Method::POST,
        &path,
        Some(&key),
        &[("content-type", "image/png")],
        Some(png.clone()),
    )
    .await
    .assert_error(400, "invalid_query");
    let long = "n".repeat(181);
    s.upload(&key, &import, "work", &long, "image/png", png.clone())
        .await
        .assert_error(400, "invalid_query");
    let just_fits = "é".repeat(180);
    let encoded: String = form_urlencoded::byte_serialize(just_fits.as_bytes()).collect();
    assert_eq!(
        s.upload(&key, &import, "work", &encoded, "image/png", png.clone())
            .await
            .status,
        201
    );

    let mut huge = examkit::inspect::blank_pdf(1);
    huge.resize(25 * 1024 * 1024 + 1, b' ');
    s.upload(&key, &import, "work", "huge.pdf", "application/pdf", huge)
        .await
        .assert_error(413, "file_too_large");
    let mut largest = examkit::inspect::blank_pdf(1);
    largest.resize(25 * 1024 * 1024, b'\n');
    assert_eq!(
        s.upload(
            &key,
            &import,
            "work",
            "largest.pdf",
            "application/pdf",
            largest
        )
        .await
        .status,
        201
    );

    // Files whose signature is right but whose pages cannot all be read are refused at upload,
    // never stored, so that indexing never meets them.
    for (name, content_type, bytes, says) in unreadable_files() {
        let body = s
            .upload(&key, &import, "work", name, content_type, bytes)
            .await
            .assert_error(422, "unreadable_file");
        let message = body["error"]["message"].as_str().expect("message");
        assert!(message.contains(says), "{name}: {message}");
    }
    let session = s
        .get(&format!("/v1/marking/sessions/{import}"), &key)
        .await
        .json();
    assert_eq!(
        session["session"]["assets"]
            .as_array()
            .expect("assets")
            .len(),
        6
    );
    s.upload(
        &key,
        &uuid::Uuid::new_v4().to_string(),
        "work",
        "x.png",
        "image/png",
        png,
    )
    .await
    .assert_error(404, "not_found");
}

/// A two-page PDF whose second page's content stream claims a JPEG encoding but holds none.
fn pdf_with_unreadable_page() -> Vec<u8> {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /MediaBox [0 0 595 842] >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /Contents 5 0 R >>".to_owned(),
        "<< /Length 19 /Filter /DCTDecode >>\nstream\nnot deflated at all\nendstream".to_owned(),
    ];
    examkit::inspect::pdf_of(&objects)
}

/// Uploads that look like their type by their first bytes but cannot be indexed, each with a
/// word its refusal must say: (name, content type, bytes, the word).
fn unreadable_files() -> Vec<(&'static str, &'static str, Vec<u8>, &'static str)> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let noise: Vec<u8> = (0..20_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect();
    let fake_jpeg = [b"\xff\xd8\xff".as_slice(), &noise].concat();
    // A PNG of 60000 x 60000 pixels (3.6 gigapixels) in 3.5 MB: refused from its header.
    let mut bomb = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&60_000u32.to_be_bytes());
    ihdr.extend_from_slice(&60_000u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    png_chunk(&mut bomb, b"IHDR", &ihdr);
    png_chunk(&mut bomb, b"IDAT", &vec![0u8; 3_500_000]);
    png_chunk(&mut bomb, b"IEND", &[]);
    let png = tiny_image("png");
    vec![
        ("noise.jpg", "image/jpeg", fake_jpeg, "unreadable"),
        ("bomb.png", "image/png", bomb, "60000x60000"),
        (
            "cut.png",
            "image/png",
            png[..png.len() / 2].to_vec(),
            "unreadable",
        ),
        (
            "page-2.pdf",
            "application/pdf",
            pdf_with_unreadable_page(),
            "page 2",
        ),
    ]
}

async fn idempotency(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Idem").await;
    let key = s.key(&user, ALL).await;
    let other_key = s.key(&user, ALL).await;
    let body = br#"{"title":"Mock exam"}"#;

    s.post_json("/v1/marking/imports", &key, None, body)
        .await
        .assert_error(400, "idempotency_key_required");
    for bad in ["short", "has space here", "bad/slash-key", &"k".repeat(129)] {
        s.post_json("/v1/marking/imports", &key, Some(bad), body)
            .await
            .assert_error(400, "invalid_idempotency_key");
    }
    let first = s
        .post_json(
            "/v1/marking/imports",
            &key,
            Some("mock-exam:2025.06_a"),
            body,
        )
        .await;
    assert_eq!(first.status, 201);
    assert_eq!(first.header("idempotent-replayed"), None);
    let replay = s
        .post_json(
            "/v1/marking/imports",
            &key,
            Some("mock-exam:2025.06_a"),
            body,
        )
        .await;
    assert_eq!(replay.status, 201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.json(), first.json());
    // The same key with a different body is a conflict; keys are isolated per API key.
    let resp = s
        .post_json(
            "/v1/marking/imports",
            &key,
            Some("mock-exam:2025.06_a"),
            br#"{"title":"Other"}"#,
        )
        .await;
    resp.assert_error(409, "idempotency_key_reused");
    let isolated = s
        .post_json(
            "/v1/marking/imports",
            &other_key,
            Some("mock-exam:2025.06_a"),
            br#"{"title":"Other"}"#,
        )
        .await;
    assert_eq!(isolated.status, 201);
    assert_ne!(
        isolated.json()["session"]["id"],
        first.json()["session"]["id"]
    );
    // A client error is stored and replayed too, with the new request's id.
    let bad = s
        .post_json(
            "/v1/marking/imports",
            &key,
            Some("bad-title-0001"),
            br#"{"title":""}"#,
        )
        .await;
    bad.assert_error(400, "invalid_body");
    let bad_again = s
        .post_json(
            "/v1/marking/imports",
            &key,
            Some("bad-title-0001"),
            br#"{"title":""}"#,
        )
        .await;
    let replayed = bad_again.assert_error(400, "invalid_body");
    assert_ne!(replayed["requestId"], bad.json()["requestId"]);

    let list = s.get("/v1/marking/sessions", &key).await.json();
    assert_eq!(
        list["sessions"].as_array().expect("sessions").len(),
        2,
        "one per API key, none from replays"
    );

    // Completion needs a key as well, and reusing it for another import conflicts.
    let (import, submission, _, _) = s.import_with_example(&key).await;
    let path = format!("/v1/marking/imports/{import}/complete");
    s.post_json(&path, &key, None, submission.as_bytes())
        .await
        .assert_error(400, "idempotency_key_required");
    assert_eq!(
        s.post_json(&path, &key, Some("complete-0001"), submission.as_bytes())
            .await
            .status,
        200
    );
    let (second, submission2, _, _) = s.import_with_example(&key).await;
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{second}/complete"),
            &key,
            Some("complete-0001"),
            submission2.as_bytes(),
        )
        .await;
    resp.assert_error(409, "idempotency_key_reused");
}

async fn concurrent_retries_run_once(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Racer").await;
    let key = s.key(&user, ALL).await;
    let s = std::sync::Arc::new(s);
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let s = s.clone();
        let key = key.clone();
        tasks.push(tokio::spawn(async move {
            s.post_json(
                "/v1/marking/imports",
                &key,
                Some("concurrent-create-1"),
                br#"{"title":"Race"}"#,
            )
            .await
        }));
    }
    let mut ids = std::collections::HashSet::new();
    for task in tasks {
        let resp = task.await.expect("task");
        assert_eq!(resp.status, 201, "{}", String::from_utf8_lossy(&resp.body));
        ids.insert(
            resp.json()["session"]["id"]
                .as_str()
                .expect("id")
                .to_owned(),
        );
    }
    assert_eq!(ids.len(), 1, "every retry got the one session");
    let list = s.get("/v1/marking/sessions", &key).await.json();
    assert_eq!(
        list["sessions"].as_array().expect("sessions").len(),
        1,
        "the operation ran once"
    );

    // 20 simultaneous completions of one import with one Idempotency-Key: saved once, one body.
    let (import, submission, _, _) = s.import_with_example(&key).await;
    let same_key = complete_concurrently(&s, &key, &import, &submission, |_| {
        "concurrent-complete".to_owned()
    })
    .await;
    assert_saved_once(&s, &user, &import, &same_key, 1).await;

    // 20 simultaneous completions of another import, each with its own Idempotency-Key: the same
    // payload repeated gives the same result, and the import is still saved once.
    let (import, submission, _, _) = s.import_with_example(&key).await;
    let own_keys = complete_concurrently(&s, &key, &import, &submission, |i| {
        format!("concurrent-complete-{i:02}")
    })
    .await;
    assert_saved_once(&s, &user, &import, &own_keys, 2).await;
}

/// Sends 20 identical `complete` requests at once and returns the 20 (status, body) pairs.
async fn complete_concurrently(
    s: &std::sync::Arc<common::Server>,
    key: &str,
    import: &str,
    submission: &str,
    idempotency_key: impl Fn(usize) -> String,
) -> Vec<(u16, Vec<u8>)> {
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(20));
    let mut tasks = Vec::new();
    for i in 0..20 {
        let s = s.clone();
        let key = key.to_owned();
        let path = format!("/v1/marking/imports/{import}/complete");
        let body = submission.to_owned();
        let idem = idempotency_key(i);
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let resp = s.post_json(&path, &key, Some(&idem), body.as_bytes()).await;
            (resp.status, resp.body)
        }));
    }
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.expect("task"));
    }
    out
}

/// Every response is 200 with one and the same body, and the database holds the import once:
/// completed, with exactly the example's three questions and no duplicate rows.
async fn assert_saved_once(
    s: &common::Server,
    user: &str,
    import: &str,
    responses: &[(u16, Vec<u8>)],
    completed_so_far: i64,
) {
    for (status, body) in responses {
        assert_eq!(*status, 200, "{}", String::from_utf8_lossy(body));
    }
    assert_eq!(responses.len(), 20);
    assert!(
        responses.windows(2).all(|w| w[0].1 == w[1].1),
        "all 20 responses have the same body"
    );
    let body: Value = serde_json::from_slice(&responses[0].1).expect("JSON");
    assert_eq!(body["session"]["id"], import);
    assert_eq!(body["outcome"]["valid"], true, "{body}");
    let questions = body["session"]["questions"].as_array().expect("questions");
    assert_eq!(questions.len(), 3, "{body}");
    assert_eq!(
        common::stored_questions(&s.store, import).await,
        (3, 3),
        "three question rows, one per position"
    );
    assert_eq!(
        common::completed_imports(&s.store, user).await,
        completed_so_far,
        "each import is completed once"
    );
    let read = s
        .get(
            &format!("/v1/marking/sessions/{import}"),
            &read_key(s, user).await,
        )
        .await;
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["session"], body["session"], "reads agree");
}

/// A fresh read key for `user`.
async fn read_key(s: &common::Server, user: &str) -> String {
    s.key(user, &[Scope::MarkingRead]).await
}

/// The specification's per-key limits: 120 requests a minute, 20 of them writes.
async fn per_key_minute_limits(db: Db) {
    let s = start(db, Limits::default()).await;
    let user = s.user("Busy").await;
    // A fixed window can roll over mid-test; then the counts restart and the burst is repeated
    // with a fresh key.
    let (remaining, limited, again) = common::within_one_minute(3, |_| async {
        let key = s.key(&user, &[Scope::MarkingRead]).await;
        let mut remaining = Vec::new();
        let mut limited = None;
        for _ in 0..121 {
            let resp = s.get("/v1/me", &key).await;
            if resp.status == 429 {
                limited = Some(resp);
                break;
            }
            assert_eq!(resp.status, 200);
            remaining.push(
                resp.header("x-ratelimit-remaining")
                    .expect("remaining")
                    .parse::<i64>()
                    .expect("integer"),
            );
        }
        let again = s.get("/v1/me", &key).await;
        (remaining, limited, again)
    })
    .await;
    assert_eq!(remaining.len(), 120, "120 requests are admitted");
    assert_eq!(remaining.first(), Some(&119));
    assert_eq!(remaining.last(), Some(&0));
    let limited = limited.expect("the 121st request is limited");
    limited.assert_error(429, "rate_limited");
    let retry: i64 = limited
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("integer");
    assert!((1..=60).contains(&retry), "retry after {retry}");
    assert_eq!(limited.header("x-ratelimit-remaining"), Some("0"));
    assert_eq!(limited.header("x-ratelimit-daily-remaining"), Some("9880"));
    // Refused requests consume nothing more: the daily count stays at 120.
    assert_eq!(again.status, 429);
    assert_eq!(again.header("x-ratelimit-daily-remaining"), Some("9880"));
    // They are recorded all the same.
    let key_row = s
        .store
        .keys(Some(&user))
        .await
        .expect("keys")
        .into_iter()
        .last()
        .expect("key");
    let usage = s.store.usage(&key_row.id, now_ms()).await.expect("usage");
    let limited_rows: i64 = usage
        .iter()
        .filter(|u| u.status == 429)
        .map(|u| u.requests)
        .sum();
    assert_eq!(limited_rows, 2);

    // Writes: 20 a minute per key, counted even when a scope check denies them.
    let statuses = common::within_one_minute(3, |_| async {
        let key = s.key(&user, &[Scope::MarkingRead]).await;
        let mut statuses = Vec::new();
        for i in 0..21 {
            let resp = s
                .post_json(
                    "/v1/marking/imports",
                    &key,
                    Some(&format!("write-limit-{i:04}")),
                    b"{\"title\":\"t\"}",
                )
                .await;
            statuses.push(resp.status);
        }
        statuses
    })
    .await;
    assert!(statuses[..20].iter().all(|s| *s == 403), "{statuses:?}");
    assert_eq!(statuses[20], 429);
}

async fn account_and_daily_limits(db: Db) {
    let limits = Limits {
        account_per_minute: 5,
        key_per_day: 7,
        account_per_day: 9,
        ..Limits::default()
    };
    let s = start(db, limits).await;
    // Each attempt uses a fresh account, so a burst cut by a minute boundary leaves nothing behind
    // that the repeat could trip over (its daily counts included).
    let (statuses, remaining) = common::within_one_minute(3, |attempt| {
        let s = &s;
        async move {
            let user = s.user(&format!("Shared {attempt}")).await;
            let a = s.key(&user, ALL).await;
            let b = s.key(&user, ALL).await;
            let mut statuses = Vec::new();
            let mut remaining = Vec::new();
            for i in 0..6 {
                let key = if i % 2 == 0 { &a } else { &b };
                let resp = s.get("/v1/me", key).await;
                statuses.push(resp.status);
                remaining.push(
                    resp.header("x-ratelimit-remaining")
                        .expect("header")
                        .parse::<i64>()
                        .expect("int"),
                );
            }
            (statuses, remaining)
        }
    })
    .await;
    assert_eq!(
        statuses,
        [200, 200, 200, 200, 200, 429],
        "extra keys do not bypass the account limit"
    );
    assert_eq!(
        remaining,
        [4, 3, 2, 1, 0, 0],
        "the account's minute quota is shared by both keys"
    );

    // Daily: key c may make at most 7 accepted requests, the account 9; checked on another account
    // sharing nothing with the first.
    let (daily, last) = common::within_one_minute(3, |attempt| {
        let s = &s;
        async move {
            let other = s.user(&format!("Daily {attempt}")).await;
            let c = s.key(&other, ALL).await;
            let d = s.key(&other, ALL).await;
            let mut daily = Vec::new();
            for _ in 0..5 {
                let resp = s.get("/v1/me", &c).await;
                daily.push(
                    resp.header("x-ratelimit-daily-remaining")
                        .map(str::to_owned),
                );
            }
            (daily, s.get("/v1/me", &d).await.status)
        }
    })
    .await;
    // The smaller of key (7) and account (9) quotas is reported.
    assert_eq!(daily[0].as_deref(), Some("6"));
    assert_eq!(daily[4].as_deref(), Some("2"));
    // The account minute quota (5) is exhausted by c.
    assert_eq!(last, 429);
}

async fn review(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Reviewer").await;
    let key = s.key(&user, ALL).await;
    let (import, submission, work, _) = s.import_with_example(&key).await;
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/complete"),
            &key,
            Some("complete-review"),
            submission.as_bytes(),
        )
        .await;
    assert_eq!(resp.status, 200);
    let q3 = resp.json()["session"]["questions"][2].clone();
    let id = q3["id"].as_str().expect("id").to_owned();
    let path = format!("/v1/marking/questions/{id}");
    let patch = |body: Value| {
        let s = &s;
        let key = key.clone();
        let path = path.clone();
        async move {
            s.send(
                Method::PATCH,
                &path,
                Some(&key),
                &[("content-type", "application/json")],
                Some(body.to_string().into_bytes()),
            )
            .await
        }
    };
    let evidence = json!([{ "pageId": format!("{work}:p4"), "quote": "since |r| < 1 the series converges", "box": { "x": 0.07, "y": 0.3, "width": 0.6, "height": 0.05 } }]);
    let decision = json!({ "criterionId": "q3b-b1", "outcome": "awarded", "reason": "Convergence justified on closer reading.", "evidence": evidence, "conditionChecks": [] });

    patch(json!({ "revision": 2, "decisions": [decision] }))
        .await
        .assert_error(409, "stale_revision");
    patch(json!({ "revision": 1, "decisions": [] }))
        .await
        .assert_error(400, "invalid_body");
    patch(json!({ "revision": 1, "decisions": [{ "criterionId": "nope" }] }))
        .await
        .assert_error(400, "invalid_body");
    patch(json!({ "revision": 1, "decisions": [decision, decision] }))
        .await
        .assert_error(400, "invalid_body");
    patch(json!({ "revision": 1 }))
        .await
        .assert_error(400, "invalid_body");
    let mut bad_box = decision.clone();
    bad_box["evidence"][0]["box"]["width"] = json!(0.99);
    let body = patch(json!({ "revision": 1, "decisions": [bad_box] }))
        .await
        .assert_error(422, "validation_failed");
    assert_eq!(
        body["error"]["details"]["errors"][0]["path"],
        "/decisions/0/evidence/0/box/width"
    );
    assert_eq!(
        body["error"]["details"]["errors"][0]["code"],
        "box_out_of_bounds"
    );
    let mut on_scheme = decision.clone();
    on_scheme["evidence"][0]["pageId"] = json!(format!(
        "{}:p3",
        q3["sourceDocuments"]["schemeAssetIds"][0]
            .as_str()
            .expect("scheme")
    ));
    let body = patch(json!({ "revision": 1, "decisions": [on_scheme] }))
        .await
        .assert_error(422, "validation_failed");
    assert_eq!(
        body["error"]["details"]["errors"][0]["code"],
        "asset_role_mismatch"
    );

    let resp = patch(json!({ "revision": 1, "decisions": [decision] })).await;
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
    let reviewed = resp.json()["question"].clone();
    assert_eq!(reviewed["revision"], 2);
    // q3b-b1 is now awarded; q3b-a1 still has an uncertain condition.
    assert_eq!(
        reviewed["score"],
        json!({"awarded": 3, "possible": 4, "max": 4})
    );
    assert_eq!(reviewed["status"], "needs_review");
    assert_eq!(reviewed["allocations"][3]["decision"], "awarded");
    assert_eq!(
        reviewed["allocations"][3]["explanation"],
        "Convergence justified on closer reading."
    );
    // The old revision is now stale.
    patch(json!({ "revision": 1, "decisions": [decision] }))
        .await
        .assert_error(409, "stale_revision");

    let check = json!({ "criterionId": "q3b-a1", "outcome": "awarded", "reason": "r = 0.8 used from (a).",
        "evidence": [{ "pageId": format!("{work}:p4"), "quote": "= 250", "box": { "x": 0.6, "y": 0.2, "width": 0.15, "height": 0.06 } }],
        "conditionChecks": [{ "index": 0, "result": "met" }] });
    let resp = patch(json!({ "revision": 2, "decisions": [check] })).await;
    assert_eq!(resp.status, 200);
    let q = resp.json()["question"].clone();
    assert_eq!(q["status"], "completed");
    assert_eq!(q["score"], json!({"awarded": 4, "possible": 4, "max": 4}));
    assert_eq!(q["reviewFlags"], json!([]));
    let session = s
        .get(&format!("/v1/marking/sessions/{import}"), &key)
        .await
        .json();
    assert_eq!(
        session["session"]["score"],
        json!({"awarded": 11, "possible": 11, "max": 11})
    );
    assert_eq!(session["session"]["status"], "completed");
    assert_eq!(session["session"]["needsReview"], false);
    assert_eq!(session["session"]["questions"][2], q);
}

async fn other_accounts_get_404(db: Db) {
    let s = start(db, generous()).await;
    let owner = s.user("Owner").await;
    let owner_key = s.key(&owner, ALL).await;
    let intruder = s.user("Intruder").await;
    let intruder_key = s.key(&intruder, ALL).await;
    let (import, submission, work, _) = s.import_with_example(&owner_key).await;
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/complete"),
            &owner_key,
            Some("owner-complete"),
            submission.as_bytes(),
        )
        .await;
    assert_eq!(resp.status, 200);
    let question = resp.json()["session"]["questions"][0]["id"]
        .as_str()
        .expect("id")
        .to_owned();

    s.get(&format!("/v1/marking/sessions/{import}"), &intruder_key)
        .await
        .assert_error(404, "not_found");
    s.get(&format!("/v1/marking/assets/{work}"), &intruder_key)
        .await
        .assert_error(404, "not_found");
    s.post_json(
        &format!("/v1/marking/imports/{import}/validate"),
        &intruder_key,
        None,
        submission.as_bytes(),
    )
    .await
    .assert_error(404, "not_found");
    s.post_json(
        &format!("/v1/marking/imports/{import}/complete"),
        &intruder_key,
        Some("intruder-complete"),
        submission.as_bytes(),
    )
    .await
    .assert_error(404, "not_found");
    s.upload(
        &intruder_key,
        &import,
        "work",
        "x.pdf",
        "application/pdf",
        examkit::inspect::blank_pdf(1),
    )
    .await
    .assert_error(404, "not_found");
    let path = format!("/v1/marking/questions/{question}");
    s.send(
        Method::PATCH,
        &path,
        Some(&intruder_key),
        &[("content-type", "application/json")],
        Some(br#"{"revision":1,"decisions":[{"criterionId":"q1a-m1"}]}"#.to_vec()),
    )
    .await
    .assert_error(404, "not_found");
    let list = s.get("/v1/marking/sessions", &intruder_key).await.json();
    assert_eq!(list["sessions"], json!([]));
}

async fn session_file_limit(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Files").await;
    let key = s.key(&user, ALL).await;
    let import = s.import(&key, "hundred files").await;
    let png = tiny_image("png");
    for i in 0..100 {
        let resp = s
            .upload(
                &key,
                &import,
                "work",
                &format!("page-{i}.png"),
                "image/png",
                png.clone(),
            )
            .await;
        assert_eq!(resp.status, 201, "upload {i}");
    }
    s.upload(&key, &import, "work", "page-100.png", "image/png", png)
        .await
        .assert_error(422, "too_many_files");
}

async fn documentation(db: Db) {
    let s = start(db, generous()).await;
    let resp = s
        .send(Method::GET, "/v1/openapi.json", None, &[], None)
        .await;
    assert_eq!(resp.status, 200);
    let openapi = resp.json();
    assert_eq!(openapi["openapi"], "3.1.0");
    assert_eq!(openapi["info"]["version"], "1.0.0");
    let paths = openapi["paths"].as_object().expect("paths");
    for (path, method) in [
        ("/v1/me", "get"),
        ("/v1/marking/imports", "post"),
        ("/v1/marking/imports/{id}/assets", "post"),
        ("/v1/marking/imports/{id}/validate", "post"),
        ("/v1/marking/imports/{id}/complete", "post"),
        ("/v1/marking/sessions", "get"),
        ("/v1/marking/sessions/{id}", "get"),
        ("/v1/marking/assets/{id}", "get"),
        ("/v1/marking/questions/{id}", "patch"),
        ("/v1/questions/facets", "get"),
        ("/v1/questions", "get"),
        ("/v1/questions/{questionId}/revisions/{revision}", "get"),
        (
            "/v1/questions/{questionId}/revisions/{revision}/assets/{assetId}",
            "get",
        ),
        ("/v1/papers", "get"),
        ("/v1/papers", "post"),
        ("/v1/papers/{id}", "get"),
        ("/v1/papers/{id}", "patch"),
        ("/v1/papers/{id}/revisions/{revision}", "get"),
        ("/v1/papers/{id}/revisions/{revision}/exports", "post"),
        ("/v1/papers/{id}/revisions/{revision}/exports/{kind}", "get"),
    ] {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path} is described"
        );
    }
    let guide = s.send(Method::GET, "/v1/guide.txt", None, &[], None).await;
    assert_eq!(guide.status, 200);
    assert!(
        guide
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/plain"))
    );
    let text = String::from_utf8(guide.body).expect("utf-8");
    assert!(text.contains("Idempotency-Key") && text.contains("/v1/marking/imports"));
}

/// A response read off a raw connection.
struct RawResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl RawResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Asserts a 4xx in the one error shape `{error:{code,message},requestId}`; returns the code.
    fn assert_spec_error(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        assert!(
            (400..500).contains(&self.status),
            "status {}: {text}",
            self.status
        );
        assert_eq!(self.header("content-type"), Some("application/json"));
        let body: Value = serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("error body is not JSON ({e}): {text}"));
        let code = body["error"]["code"]
            .as_str()
            .expect("error.code")
            .to_owned();
        assert!(!code.is_empty(), "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{body}"
        );
        let id = self.header("x-request-id").expect("X-Request-Id");
        assert!(id.starts_with("req_"), "{id}");
        assert_eq!(body["requestId"], id);
        code
    }
}

/// Parses the first HTTP/1.1 response in `bytes`, or `None` when the server sent nothing.
fn parse_raw(bytes: &[u8]) -> Option<RawResponse> {
    if bytes.is_empty() {
        return None;
    }
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of headers in {:?}", String::from_utf8_lossy(bytes)));
    let head = std::str::from_utf8(&bytes[..split]).expect("ASCII response head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("status line");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .unwrap_or_else(|| panic!("status line {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = &bytes[split + 4..];
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(rest.len());
    Some(RawResponse {
        status,
        headers,
        body: rest[..length.min(rest.len())].to_vec(),
    })
}

/// Writes `request` on a fresh connection, shuts the write half when `shut_write` is set, and
/// reads until the server closes the connection, which must happen within 10 seconds.
async fn raw_exchange(base: &str, request: &[u8], shut_write: bool) -> Option<RawResponse> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    // The server may answer and close before reading everything, so a failed write is allowed.
    let _ = stream.write_all(request).await;
    if shut_write {
        let _ = stream.shutdown().await;
    }
    let mut out = Vec::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut out),
    )
    .await;
    assert!(read.is_ok(), "the server neither answered nor closed");
    parse_raw(&out)
}

/// `GET /v1/me` still answers 200.
async fn still_serving(s: &common::Server, key: &str) {
    let me = s.get("/v1/me", key).await;
    assert_eq!(me.status, 200, "{}", String::from_utf8_lossy(&me.body));
}

/// The session's assets as the API shows them.
async fn session_assets(s: &common::Server, key: &str, import: &str) -> Vec<Value> {
    let session = s.get(&format!("/v1/marking/sessions/{import}"), key).await;
    assert_eq!(session.status, 200);
    session.json()["session"]["assets"]
        .as_array()
        .expect("assets")
        .clone()
}

async fn truncated_upload(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Truncated School").await;
    let key = s.key(&user, ALL).await;
    let import = s.import(&key, "Truncated upload").await;
    let addr = s.base.trim_start_matches("http://");
    let mut request = format!(
        "POST /v1/marking/imports/{import}/assets?kind=work&name=a.pdf HTTP/1.1\r\n\
         Host: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/pdf\r\n\
         Content-Length: 100000\r\n\r\n"
    )
    .into_bytes();
    let mut body = examkit::inspect::blank_pdf(1);
    body.resize(1_000, b' ');
    request.extend_from_slice(&body);
    // The body ends early: hyper reports a body error, which is `400 invalid_body`. The server
    // may also close without answering; either way nothing is stored.
    if let Some(response) = raw_exchange(&s.base, &request, true).await {
        let code = response.assert_spec_error();
        assert_eq!(
            (response.status, code.as_str()),
            (400, "invalid_body"),
            "{}",
            String::from_utf8_lossy(&response.body)
        );
    }
    assert!(session_assets(&s, &key, &import).await.is_empty());
    still_serving(&s, &key).await;
}

async fn oversized_headers(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Header School").await;
    let key = s.key(&user, ALL).await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let head = |extra: &str| {
        format!(
            "GET /v1/me HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n{extra}\
             Connection: close\r\n\r\n"
        )
        .into_bytes()
    };

    // A 64 KiB header value fits hyper's read buffer (about 400 KiB) and is served normally.
    let big = format!("X-Padding: {}\r\n", "a".repeat(64 * 1024));
    let r = raw_exchange(&s.base, &head(&big), false)
        .await
        .expect("a response");
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        serde_json::from_slice::<Value>(&r.body).expect("JSON")["user"]["id"],
        user.as_str()
    );
    still_serving(&s, &key).await;

    // Past hyper's limits (a head over its read buffer, or more than 100 headers) hyper answers
    // 431 itself, before any route runs, with an empty body and the connection closed. This is
    // the one documented exception to the error body (see the README's decisions).
    let huge = format!("X-Padding: {}\r\n", "a".repeat(1024 * 1024));
    let many: String = (0..200).map(|i| format!("X-Header-{i}: {i}\r\n")).collect();
    for extra in [huge, many] {
        let r = raw_exchange(&s.base, &head(&extra), false)
            .await
            .expect("a response");
        assert_eq!(r.status, 431, "{}", String::from_utf8_lossy(&r.body));
        assert!(r.body.is_empty());
        assert_eq!(r.header("content-length"), Some("0"));
        assert_eq!(r.header("connection"), Some("close"));
        still_serving(&s, &key).await;
    }
}

async fn upload_names(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Names School").await;
    let key = s.key(&user, ALL).await;
    let import = s.import(&key, "Odd names").await;
    let pdf = || examkit::inspect::blank_pdf(1);

    // Names are metadata only: `/` and `..` are stored verbatim, never used as a path.
    for (sent, stored) in [
        ("..%2F..%2Fetc%2Fpasswd", "../../etc/passwd"),
        ("../../etc/passwd", "../../etc/passwd"),
        ("a%2Fb.pdf", "a/b.pdf"),
        ("..", ".."),
    ] {
        let resp = s
            .upload(&key, &import, "work", sent, "application/pdf", pdf())
            .await;
        assert_eq!(resp.status, 201, "{}", String::from_utf8_lossy(&resp.body));
        assert_eq!(resp.json()["asset"]["name"], stored);
    }
    let long_ok = "a".repeat(176) + ".pdf";
    let resp = s
        .upload(&key, &import, "work", &long_ok, "application/pdf", pdf())
        .await;
    assert_eq!(resp.status, 201, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(resp.json()["asset"]["name"], long_ok.as_str());

    // Control characters, empty and over-long names are refused.
    let too_long = "a".repeat(177) + ".pdf";
    for sent in [
        "a%00b.pdf",
        "%00",
        "a%01.pdf",
        "a%0Ab.pdf",
        "a%0Db.pdf",
        "a%09b.pdf",
        "a%7Fb.pdf",
        "a%C2%85b.pdf",
        "",
        "%20%20",
        too_long.as_str(),
    ] {
        s.upload(&key, &import, "work", sent, "application/pdf", pdf())
            .await
            .assert_error(400, "invalid_query");
    }
    let path = format!("/v1/marking/imports/{import}/assets?kind=work");
    s.send(
        Method::POST,
        &path,
        Some(&key),
        &[("content-type", "application/pdf")],
        Some(pdf()),
    )
    .await
    .assert_error(400, "invalid_query");

    let names: Vec<Value> = session_assets(&s, &key, &import)
        .await
        .iter()
        .map(|a| a["name"].clone())
        .collect();
    assert_eq!(
        names,
        vec![
            json!("../../etc/passwd"),
            json!("../../etc/passwd"),
            json!("a/b.pdf"),
            json!(".."),
            json!(long_ok),
        ]
    );

    // Nothing but the database lives in the data directory.
    let mut pending = vec![s.data_dir().to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("read data dir") {
            let entry = entry.expect("entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                name.starts_with("examkit.db"),
                "unexpected {} in the data directory",
                entry.path().display()
            );
            if entry.file_type().expect("type").is_dir() {
                pending.push(entry.path());
            }
        }
    }
    still_serving(&s, &key).await;
}

/// A method, a path, headers and a body.
type PathCase = (
    Method,
    &'static str,
    Vec<(&'static str, &'static str)>,
    Option<Vec<u8>>,
);

async fn malformed_path_ids(db: Db) {
    let s = start(db, generous()).await;
    let user = s.user("Path School").await;
    let key = s.key(&user, ALL).await;
    let pdf = examkit::inspect::blank_pdf(1);
    let cases: Vec<PathCase> = vec![
        (Method::GET, "/v1/marking/sessions/not-a-uuid", vec![], None),
        (Method::GET, "/v1/marking/sessions/%00", vec![], None),
        (Method::GET, "/v1/marking/assets/123", vec![], None),
        (
            Method::POST,
            "/v1/marking/imports/zzz/validate",
            vec![("content-type", "application/json")],
            Some(b"{}".to_vec()),
        ),
        (
            Method::POST,
            "/v1/marking/imports/zzz/complete",
            vec![
                ("content-type", "application/json"),
                ("idempotency-key", "complete-zzz-1"),
            ],
            Some(b"{}".to_vec()),
        ),
        (
            Method::POST,
            "/v1/marking/imports/..%2F..%2Fetc/assets?kind=work&name=a.pdf",
            vec![("content-type", "application/pdf")],
            Some(pdf),
        ),
        (
            Method::PATCH,
            "/v1/marking/questions/%00",
            vec![("content-type", "application/json")],
            Some(br#"{"revision":1,"decisions":[]}"#.to_vec()),
        ),
        (
            Method::PATCH,
            "/v1/marking/questions/%00/",
            vec![("content-type", "application/json")],
            Some(br#"{"revision":1,"decisions":[]}"#.to_vec()),
        ),
    ];
    // A path id that is not a UUID names nothing: 404 `not_found`, in the error shape.
    for (method, path, headers, body) in cases {
        let resp = s.send(method, path, Some(&key), &headers, body).await;
        resp.assert_error(404, "not_found");
        still_serving(&s, &key).await;
    }
}
