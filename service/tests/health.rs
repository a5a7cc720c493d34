//! `GET /healthz` and `GET /readyz` on a real server, SQLite and PostgreSQL: readiness turns 503
//! naming the failing check when the database goes away, its migrations are not this binary's, or
//! the workers stop beating, while health stays 200; both recover.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Db, Server, generous, start, start_with};
use examkit::marking::worker::Pulse;
use examkit::store::Durability;
use examkit::store::rate::Limits;
use serde_json::Value;

on_both!(
    health_answers_without_a_key_or_the_database,
    readiness_names_unknown_migrations,
    readiness_needs_the_workers_to_beat,
    readiness_follows_the_database_away_and_back,
);

async fn probe(s: &Server, path: &str) -> (u16, Value) {
    let response = s
        .client
        .get(format!("{}{path}", s.base))
        .send()
        .await
        .expect("sent");
    let status = response.status().as_u16();
    assert!(response.headers().contains_key("x-request-id"), "{path}");
    let body = response.json::<Value>().await.expect("json");
    (status, body)
}

async fn health_answers_without_a_key_or_the_database(db: Db) {
    // Limits no authenticated client could pass twice a minute: probes are not rate limited.
    let tight = Limits {
        key_per_minute: 1,
        account_per_minute: 1,
        key_per_day: 1,
        account_per_day: 1,
        key_writes_per_minute: 1,
        account_writes_per_minute: 1,
    };
    let Some(s) = start(db, tight).await else {
        return;
    };
    for _ in 0..5 {
        assert_eq!(
            probe(&s, "/healthz").await,
            (200, serde_json::json!({ "status": "ok" }))
        );
        let (status, body) = probe(&s, "/readyz").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["status"], "ready");
        for check in ["database", "migrations", "assets"] {
            assert_eq!(body["checks"][check], "ok", "{check}");
        }
        assert_eq!(body["checks"]["workers"], "none in this process");
    }
    let usage: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM usage_daily")
        .fetch_one(s.store.pool())
        .await
        .expect("count");
    assert_eq!(usage, 0, "probes are not usage");
    // Only GET and HEAD.
    let posted = s
        .client
        .post(format!("{}/readyz", s.base))
        .send()
        .await
        .expect("sent");
    assert_eq!(posted.status().as_u16(), 405);
}

async fn readiness_names_unknown_migrations(db: Db) {
    let Some(s) = start(db, generous()).await else {
        return;
    };
    let insert = "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time) \
                  VALUES (99990101, 'from a newer release', CURRENT_TIMESTAMP, TRUE, X'00', 0)";
    let insert = if db == Db::Postgres {
        insert.replace("X'00'", "'\\x00'::bytea")
    } else {
        insert.to_owned()
    };
    s.store
        .execute_write(Durability::Saved, sqlx::query(sqlx::AssertSqlSafe(insert)))
        .await
        .expect("a migration of a newer release");
    let (status, body) = probe(&s, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "not_ready");
    assert_eq!(body["error"]["message"], "not ready: migrations");
    let said = body["error"]["details"]["checks"]["migrations"]
        .as_str()
        .expect("text");
    assert!(
        said.contains("does not know") && said.contains("99990101"),
        "{said}"
    );
    assert_eq!(body["error"]["details"]["checks"]["database"], "ok");
    assert_eq!(probe(&s, "/healthz").await.0, 200);
    s.store
        .execute_write(
            Durability::Saved,
            sqlx::query("DELETE FROM _sqlx_migrations WHERE version = 99990101"),
        )
        .await
        .expect("removed");
    assert_eq!(probe(&s, "/readyz").await.0, 200);
}

async fn readiness_needs_the_workers_to_beat(db: Db) {
    let pulse = Pulse::new();
    let beating = pulse.clone();
    let Some(s) = start_with(db, generous(), move |state| {
        state.readiness.pulse = Some(beating);
        state.readiness.max_silence_ms = 1_500;
    })
    .await
    else {
        return;
    };
    pulse.beat();
    assert_eq!(probe(&s, "/readyz").await.0, 200);
    tokio::time::sleep(Duration::from_millis(1_700)).await;
    let (status, body) = probe(&s, "/readyz").await;
    assert_eq!(status, 503);
    assert_eq!(body["error"]["message"], "not ready: workers");
    assert!(
        body["error"]["details"]["checks"]["workers"]
            .as_str()
            .is_some_and(|w| w.starts_with("failed: no worker has shown it is alive")),
        "{body}"
    );
    assert_eq!(probe(&s, "/healthz").await.0, 200);
    pulse.beat();
    assert_eq!(probe(&s, "/readyz").await.0, 200);
}

/// A TCP relay to PostgreSQL that can be cut (every connection dropped, new ones refused) and
/// restored, standing in for a database that goes away under a running server.
struct Relay {
    addr: std::net::SocketAddr,
    cut: Arc<Mutex<bool>>,
    links: Arc<Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Relay {
    async fn to(target: String) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let cut = Arc::new(Mutex::new(false));
        let links: Arc<Mutex<Vec<tokio::task::AbortHandle>>> = Arc::default();
        let (cut2, links2) = (cut.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if *cut2.lock().expect("lock") {
                    continue; // dropped: refused
                }
                let target = target.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                links2.lock().expect("lock").push(link.abort_handle());
            }
        });
        Relay { addr, cut, links }
    }

    fn cut(&self) {
        *self.cut.lock().expect("lock") = true;
        for link in self.links.lock().expect("lock").drain(..) {
            link.abort();
        }
    }

    fn restore(&self) {
        *self.cut.lock().expect("lock") = false;
    }
}

async fn ready_within(s: &Server, want: u16) -> Value {
    let mut last = Value::Null;
    for _ in 0..40 {
        let (status, body) = probe(s, "/readyz").await;
        if status == want {
            return body;
        }
        last = body;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("/readyz never answered {want}: {last}");
}

async fn readiness_follows_the_database_away_and_back(db: Db) {
    match db {
        Db::Sqlite => {
            let Some(s) = start(db, generous()).await else {
                return;
            };
            // The database file moved away under the running server (its open connections would
            // still answer), then back.
            let file = std::path::PathBuf::from(
                s.database_url
                    .trim_start_matches("sqlite://")
                    .split('?')
                    .next()
                    .expect("path"),
            );
            let aside = file.with_extension("aside");
            std::fs::rename(&file, &aside).expect("moved away");
            let body = ready_within(&s, 503).await;
            assert_eq!(
                body["error"]["message"],
                "not ready: database, migrations, assets"
            );
            let said = body["error"]["details"]["checks"]["database"]
                .as_str()
                .expect("text");
            assert!(said.contains("cannot be opened"), "{said}");
            assert_eq!(probe(&s, "/healthz").await.0, 200);
            std::fs::rename(&aside, &file).expect("moved back");
            ready_within(&s, 200).await;
        }
        Db::Postgres => {
            let Some(url) = std::env::var("EXAMKIT_TEST_POSTGRES_URL").ok() else {
                return;
            };
            let dir = tempfile::tempdir().expect("dir");
            let Some(fresh) = common::fresh_database(db, dir.path()).await else {
                return;
            };
            let parsed = reqwest::Url::parse(&url).expect("url");
            let target = format!(
                "{}:{}",
                parsed.host_str().expect("host"),
                parsed.port().unwrap_or(5432)
            );
            let relay = Relay::to(target.clone()).await;
            let relayed = fresh.replacen(&target, &relay.addr.to_string(), 1);
            assert_ne!(relayed, fresh, "the URL names {target}");
            let s = common::start_on(&relayed, generous()).await;
            ready_within(&s, 200).await;
            relay.cut();
            let body = ready_within(&s, 503).await;
            assert_eq!(body["error"]["code"], "not_ready");
            let said = body["error"]["details"]["checks"]["database"]
                .as_str()
                .expect("text");
            assert!(said.starts_with("failed"), "{said}");
            assert_eq!(
                body["error"]["details"]["checks"]["migrations"],
                "failed: not checked: the database does not answer"
            );
            assert_eq!(probe(&s, "/healthz").await.0, 200);
            relay.restore();
            ready_within(&s, 200).await;
        }
    }
}
