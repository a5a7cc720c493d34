//! `GET /healthz` and `GET /readyz` on a real server, SQLite and PostgreSQL: readiness turns 503
//! naming the failing check when the database goes away, its migrations are not this binary's, the
//! object store fails or the workers stop beating, while health stays 200; both recover. The
//! answer names checks and says `failed`, never why: no path, URL, bucket or driver text.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Db, Server, generous, start, start_with};
use examkit::marking::jobs::Pulse;
use examkit::store::Durability;
use examkit::store::rate::Limits;
use serde_json::Value;

on_both!(
    health_answers_without_a_key_or_the_database,
    readiness_names_unknown_migrations,
    readiness_needs_the_workers_to_beat,
    readiness_follows_the_database_away_and_back,
    readiness_hides_why_the_asset_store_failed,
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

/// A readiness answer says of each check only `ok`, `failed` or (workers) `none in this process`,
/// and holds none of `hidden` (paths, addresses, names of the deployment) anywhere.
fn reveals_nothing(body: &Value, hidden: &[&str]) {
    let checks = if body["checks"].is_object() {
        &body["checks"]
    } else {
        &body["error"]["details"]["checks"]
    };
    let checks = checks.as_object().expect("checks");
    assert_eq!(checks.len(), 5, "{body}");
    for (name, said) in checks {
        let said = said.as_str().expect("a word");
        let words: &[&str] = if name == "marker" {
            &[
                "not required",
                "qualified",
                "not qualified",
                "drifted",
                "failed",
            ]
        } else {
            &["ok", "failed", "none in this process"]
        };
        assert!(words.contains(&said), "{name}: {said}");
    }
    let text = body.to_string();
    for secret in hidden {
        assert!(!text.contains(secret), "{secret:?} in {text}");
    }
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
    let s = start(db, tight).await;
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
        assert_eq!(body["checks"]["marker"], "not required", "{body}");
        reveals_nothing(&body, &["builtin"]);
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
    let s = start(db, generous()).await;
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
    assert_eq!(body["error"]["details"]["checks"]["migrations"], "failed");
    assert_eq!(body["error"]["details"]["checks"]["database"], "ok");
    reveals_nothing(&body, &["99990101", "does not know"]);
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
    let s = start_with(db, generous(), move |state| {
        state.readiness.pulse = Some(beating);
        state.readiness.max_silence_ms = 1_500;
    })
    .await;
    pulse.beat();
    assert_eq!(probe(&s, "/readyz").await.0, 200);
    tokio::time::sleep(Duration::from_millis(1_700)).await;
    let (status, body) = probe(&s, "/readyz").await;
    assert_eq!(status, 503);
    assert_eq!(body["error"]["message"], "not ready: workers");
    assert_eq!(body["error"]["details"]["checks"]["workers"], "failed");
    reveals_nothing(&body, &["alive"]);
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
            let s = start(db, generous()).await;
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
            assert_eq!(body["error"]["details"]["checks"]["database"], "failed");
            let dir = file.parent().expect("dir").display().to_string();
            reveals_nothing(&body, &[&dir, "examkit.db", "cannot be opened", "os error"]);
            assert_eq!(probe(&s, "/healthz").await.0, 200);
            std::fs::rename(&aside, &file).expect("moved back");
            ready_within(&s, 200).await;
        }
        Db::Postgres => {
            // Built for PostgreSQL, the test needs its server's address to cut it off.
            let url = std::env::var("EXAMKIT_TEST_POSTGRES_URL")
                .expect("EXAMKIT_TEST_POSTGRES_URL names the PostgreSQL server the tests use");
            let dir = tempfile::tempdir().expect("dir");
            let fresh = common::fresh_database(db, dir.path()).await;
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
            assert_eq!(body["error"]["details"]["checks"]["database"], "failed");
            assert_eq!(body["error"]["details"]["checks"]["migrations"], "failed");
            let relay_address = relay.addr.to_string();
            reveals_nothing(
                &body,
                &[
                    &relay_address,
                    "examkit_test_",
                    "postgres",
                    "pool",
                    "timed out",
                    "refused",
                    "communicating",
                ],
            );
            assert_eq!(probe(&s, "/healthz").await.0, 200);
            relay.restore();
            ready_within(&s, 200).await;
        }
    }
}

async fn readiness_hides_why_the_asset_store_failed(db: Db) {
    let stores = tempfile::tempdir().expect("dir");
    let dir = stores.path().join("scans-of-a-school");
    let url = examkit::store::objects::AssetStoreUrl::File(dir.clone());
    let s = common::start_with_objects(db, generous(), &url, |_| {}).await;
    assert_eq!(probe(&s, "/readyz").await.0, 200);
    // The directory becomes a file: every read of the store fails, naming the path.
    std::fs::remove_dir_all(&dir).expect("removed");
    std::fs::write(&dir, b"not a directory").expect("a file in its place");
    let (status, body) = probe(&s, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["message"], "not ready: assets");
    assert_eq!(body["error"]["details"]["checks"]["assets"], "failed");
    assert_eq!(body["error"]["details"]["checks"]["database"], "ok");
    let path = stores.path().display().to_string();
    reveals_nothing(
        &body,
        &[&path, "scans-of-a-school", "file://", "readiness-probe"],
    );
    std::fs::remove_file(&dir).expect("removed");
    std::fs::create_dir(&dir).expect("back");
    assert_eq!(probe(&s, "/readyz").await.0, 200);
}

/// `examkit serve` on a new SQLite database with its files in `store`, reaching S3 at `endpoint`;
/// stopped on drop, when what it logged (standard error) can be read.
struct Served {
    child: std::process::Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Served {
    fn start(store: &examkit::store::objects::AssetStoreUrl, endpoint: &str) -> Served {
        use std::io::BufRead;
        let dir = tempfile::tempdir().expect("dir");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_examkit"))
            .args(["serve", "--listen", "127.0.0.1:0", "--sample-bank", "off"])
            .args([
                "--automated-marking",
                "off",
                "--asset-store",
                &store.to_string(),
            ])
            .arg("--data-dir")
            .arg(dir.path())
            .env_remove("DATABASE_URL")
            .env("AWS_ENDPOINT_URL", endpoint)
            .env("EXAMKIT_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("examkit serve runs");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the bound address is printed");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("listening line, got {line:?}"))
            .to_owned();
        Served {
            child,
            base,
            _dir: dir,
        }
    }

    /// Stops the server and returns what it logged.
    fn logged(mut self) -> String {
        use std::io::Read;
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut said = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut said);
        }
        said
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(examkit_s3_tests),
    ignore = "no S3 server: run the tests through tests/s3-server.sh"
)]
async fn readiness_hides_the_bucket_of_an_object_store_that_does_not_answer() {
    let store = common::s3::bucket().await;
    let examkit::store::objects::AssetStoreUrl::S3 { bucket, prefix } = &store else {
        panic!("an S3 store");
    };
    let endpoint = std::env::var("AWS_ENDPOINT_URL").expect("the S3 server");
    let relay = Relay::to(endpoint.trim_start_matches("http://").to_owned()).await;
    let served = Served::start(&store, &format!("http://{}", relay.addr));
    let client = examkit::tls::client();
    let probe = || async {
        let response = client
            .get(format!("{}/readyz", served.base))
            .send()
            .await
            .expect("sent");
        let status = response.status().as_u16();
        (status, response.json::<Value>().await.expect("json"))
    };
    assert_eq!(probe().await.0, 200);
    // The object store stops answering: connections are refused.
    relay.cut();
    let mut answer = None;
    for _ in 0..40 {
        let (status, body) = probe().await;
        if status == 503 {
            answer = Some(body);
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let body = answer.expect("/readyz turns 503");
    assert_eq!(body["error"]["message"], "not ready: assets");
    assert_eq!(body["error"]["details"]["checks"]["assets"], "failed");
    let relay_address = relay.addr.to_string();
    reveals_nothing(
        &body,
        &[
            bucket,
            &format!("/{prefix}"),
            "s3://",
            &relay_address,
            "did not answer",
            "readiness-probe",
        ],
    );
    relay.restore();
    let mut back = false;
    for _ in 0..40 {
        if probe().await.0 == 200 {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(back, "ready again once the store answers");
    // The reason is in the log, for the operator.
    let logged = served.logged();
    assert!(
        logged.contains("a readiness check failed") && logged.contains(bucket.as_str()),
        "{logged}"
    );
}
