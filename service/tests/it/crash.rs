//! Crash safety of `complete` and graceful shutdown, with the real `examkit serve` binary.
//!
//! The server runs as a child process on a temporary SQLite database (and on PostgreSQL when
//! `EXAMKIT_TEST_POSTGRES_URL` is set). A 24-question × 100-criteria submission from
//! `examkit-fixtures` is completed while the process is killed with SIGKILL at chosen moments;
//! after a restart on the same database the import must be either entirely absent from the
//! marking area (and then complete normally) or entirely present, never partial.
//!
//! To land a kill inside the completion transaction reliably, the server is started with the test
//! hook `EXAMKIT_TEST_COMPLETE_DELAY_MS`: it pauses that long after each question row it inserts
//! and announces each insert on standard error.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::Db;
use examkit::store::Store;
use serde_json::Value;

/// A running `examkit serve` child process: its base URL and its standard error lines.
struct Served {
    child: Child,
    base: String,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn examkit() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_examkit"));
    command
        .env_remove("DATABASE_URL")
        .env_remove("EXAMKIT_TEST_COMPLETE_DELAY_MS");
    command
}

fn admin(database: &str, args: &[&str]) -> String {
    let output = examkit()
        .args(args)
        .arg("--database")
        .arg(database)
        .output()
        .expect("examkit runs");
    assert!(
        output.status.success(),
        "examkit {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

/// Starts `examkit serve` on `database`; `delay_ms` turns on the completion test hook.
fn serve(database: &str, delay_ms: Option<u64>) -> Served {
    let mut command = examkit();
    command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--rate-limits",
            "off",
            "--database",
        ])
        .arg(database)
        .env("EXAMKIT_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(ms) = delay_ms {
        command.env("EXAMKIT_TEST_COMPLETE_DELAY_MS", ms.to_string());
    }
    let mut child = command.spawn().expect("examkit serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut line = String::new();
    BufReader::new(stdout)
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
        stderr: rx,
    }
}

impl Served {
    /// Waits for the hook's announcement that question `n` (1-based) was inserted.
    fn wait_for_insert(&self, n: usize) {
        let marker = format!("question {n} of ");
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.contains("test hook") && line.contains(&marker) => return,
                Ok(_) => {}
                Err(e) => panic!("no announcement of question {n}: {e}"),
            }
        }
    }

    fn kill(mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }
}

/// An account, a key with every scope, and the maximum fixture.
struct Setup {
    database: String,
    key: String,
    client: reqwest::Client,
    fixture: examkit_fixtures::Fixture,
}

impl Setup {
    fn new(database: String) -> Setup {
        let user = admin(&database, &["users", "create", "--name", "Crash School"]);
        let key = admin(
            &database,
            &[
                "keys",
                "create",
                "--user",
                &user,
                "--name",
                "crash",
                "--scopes",
                "marking:import,marking:read,marking:review",
                "--expires",
                "30d",
            ],
        );
        Setup {
            database,
            key,
            client: examkit::tls::client(),
            fixture: examkit_fixtures::maximum(),
        }
    }

    async fn send(
        &self,
        base: &str,
        path: &str,
        content_type: &str,
        idem: Option<&str>,
        body: Vec<u8>,
    ) -> reqwest::Result<(u16, Value)> {
        let mut request = self
            .client
            .post(format!("{base}{path}"))
            .bearer_auth(&self.key)
            .header("content-type", content_type)
            .body(body);
        if let Some(idem) = idem {
            request = request.header("idempotency-key", idem);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await?;
        Ok((
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        ))
    }

    /// Creates an import, uploads the fixture's two PDFs, and returns the import id and the
    /// fixture rewritten to the uploaded asset ids.
    async fn import(&self, base: &str, n: usize) -> (String, String) {
        let (status, created) = self
            .send(
                base,
                "/v1/marking/imports",
                "application/json",
                Some(&format!("crash-create-{n:04}")),
                format!(r#"{{"title":"Crash {n}"}}"#).into_bytes(),
            )
            .await
            .expect("create");
        assert_eq!(status, 201, "{created}");
        let import = created["session"]["id"].as_str().expect("id").to_owned();
        let mut document = self.fixture.document.clone();
        for asset in self.fixture.assets() {
            let kind = asset["kind"].as_str().expect("kind");
            let pages = asset["pageCount"].as_u64().expect("pages");
            let pdf = examkit::inspect::blank_pdf(usize::try_from(pages).expect("pages"));
            let (status, uploaded) = self
                .send(
                    base,
                    &format!("/v1/marking/imports/{import}/assets?kind={kind}&name={kind}.pdf"),
                    "application/pdf",
                    None,
                    pdf,
                )
                .await
                .expect("upload");
            assert_eq!(status, 201, "{uploaded}");
            document = document.replace(
                asset["id"].as_str().expect("id"),
                uploaded["asset"]["id"].as_str().expect("asset id"),
            );
        }
        (import, document)
    }

    /// Sends `complete` in the background.
    fn complete(
        &self,
        base: &str,
        import: &str,
        document: &str,
        idem: &str,
    ) -> tokio::task::JoinHandle<reqwest::Result<(u16, Value)>> {
        let this = (self.client.clone(), self.key.clone());
        let url = format!("{base}/v1/marking/imports/{import}/complete");
        let body = document.as_bytes().to_vec();
        let idem = idem.to_owned();
        tokio::spawn(async move {
            let response = this
                .0
                .post(url)
                .bearer_auth(&this.1)
                .header("content-type", "application/json")
                .header("idempotency-key", idem)
                .body(body)
                .send()
                .await?;
            let status = response.status().as_u16();
            let bytes = response.bytes().await?;
            Ok((
                status,
                serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            ))
        })
    }

    /// What a restarted server and the database hold for the import: `false` when it is absent
    /// from the marking area (still a draft, no question rows), `true` when it is entirely
    /// present (completed, 24 questions with their results). Anything else fails the test.
    async fn saved(&self, base: &str, import: &str) -> bool {
        let response = self
            .client
            .get(format!("{base}/v1/marking/sessions/{import}"))
            .bearer_auth(&self.key)
            .send()
            .await
            .expect("read");
        assert_eq!(response.status().as_u16(), 200);
        let body: Value = response.json().await.expect("JSON");
        let session = &body["session"];
        let questions = session["questions"].as_array().expect("questions").len();
        let store = Store::open(&self.database).await.expect("open the store");
        let rows = common::stored_questions(&store, import).await;
        store.close().await;
        match session["status"].as_str() {
            Some("draft") => {
                assert_eq!((questions, rows), (0, (0, 0)), "a draft has no questions");
                false
            }
            Some("completed") => {
                assert_eq!(questions, examkit_fixtures::QUESTIONS, "{session}");
                assert_eq!(rows, (24, 24), "one row per question");
                for question in session["questions"].as_array().expect("questions") {
                    let allocations = question["allocations"].as_array().expect("allocations");
                    assert_eq!(
                        allocations.len(),
                        examkit_fixtures::CRITERIA_PER_QUESTION,
                        "every criterion is saved"
                    );
                    assert!(
                        allocations
                            .iter()
                            .all(|a| !a["submitted"].is_null() || !a["decision"].is_null()),
                        "every criterion has its result: {}",
                        question["label"]
                    );
                }
                true
            }
            other => panic!("unexpected status {other:?}: {session}"),
        }
    }
}

/// Kills the server at several moments of a large completion and checks all-or-nothing.
async fn kill_during_complete(db: Db) {
    let dir = tempfile::tempdir().expect("temp dir");
    let database = common::fresh_database(db, dir.path()).await;
    let setup = Setup::new(database);
    /// When the server is killed after `complete` is sent.
    enum Kill {
        /// Once the hook announces this question's insert (1-based): inside the transaction.
        Insert(usize),
        /// This many milliseconds after sending, wherever the request has got to.
        Ms(u64),
        /// After the 200 response.
        Response,
    }
    // (the hook's delay per question insert, when to kill)
    let plan = [
        (Some(100), Kill::Insert(1)),
        (Some(100), Kill::Insert(12)),
        (Some(100), Kill::Insert(24)),
        (None, Kill::Ms(0)),
        (None, Kill::Ms(150)),
        (None, Kill::Ms(600)),
        (None, Kill::Response),
    ];
    let mut outcomes = Vec::new();
    for (n, (delay, kill)) in plan.iter().enumerate() {
        let server = serve(&setup.database, *delay);
        let (import, document) = setup.import(&server.base, n).await;
        let idem = format!("crash-complete-{import}");
        let request = setup.complete(&server.base, &import, &document, &idem);
        match kill {
            Kill::Insert(q) => server.wait_for_insert(*q),
            Kill::Ms(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
            Kill::Response => {
                let (status, body) = request.await.expect("task").expect("response");
                assert_eq!(status, 200, "{body}");
                server.kill();
                let restarted = serve(&setup.database, None);
                assert!(
                    setup.saved(&restarted.base, &import).await,
                    "a 200 is durable"
                );
                outcomes.push(true);
                continue;
            }
        }
        server.kill();
        let answered = request.await.expect("task");
        let restarted = serve(&setup.database, None);
        let saved = setup.saved(&restarted.base, &import).await;
        if let Kill::Insert(q) = kill
            && *q < examkit_fixtures::QUESTIONS
        {
            assert!(!saved, "killed after question {q} of 24: nothing is saved");
        }
        if let Ok((200, _)) = answered {
            assert!(saved, "a 200 is durable");
        }
        if !saved {
            // The import is untouched, so it completes normally after the restart. The killed
            // request's Idempotency-Key may still be claimed (a claim abandoned by a dead process
            // is retaken after 10 minutes), so the retry uses a new key; the import's own
            // check still guarantees a single completion.
            let (status, body) = setup
                .complete(
                    &restarted.base,
                    &import,
                    &document,
                    &format!("{idem}-retry"),
                )
                .await
                .expect("task")
                .expect("response");
            assert_eq!(status, 200, "{body}");
            assert_eq!(
                body["session"]["questions"].as_array().map(Vec::len),
                Some(examkit_fixtures::QUESTIONS)
            );
            assert!(setup.saved(&restarted.base, &import).await);
        }
        outcomes.push(saved);
    }
    assert!(
        outcomes.contains(&false) && outcomes.contains(&true),
        "{outcomes:?}"
    );
}

/// SIGTERM while a completion is in flight: the request finishes with 200, the process exits 0.
async fn graceful_shutdown(db: Db) {
    let dir = tempfile::tempdir().expect("temp dir");
    let database = common::fresh_database(db, dir.path()).await;
    let setup = Setup::new(database);
    let mut server = serve(&setup.database, Some(50));
    let (import, document) = setup.import(&server.base, 0).await;
    let request = setup.complete(&server.base, &import, &document, "graceful-complete");
    server.wait_for_insert(2);
    let pid = server.child.id().to_string();
    let term = Command::new("bash")
        .args(["-c", "kill -TERM \"$1\"", "kill", &pid])
        .status()
        .expect("bash runs kill");
    assert!(term.success());
    let (status, body) = request
        .await
        .expect("task")
        .expect("the in-flight request is answered");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["session"]["questions"].as_array().map(Vec::len),
        Some(examkit_fixtures::QUESTIONS)
    );
    let exit = server.child.wait().expect("the server exits");
    assert_eq!(exit.code(), Some(0), "a clean exit after SIGTERM");
    // New connections are refused once it has stopped.
    assert!(
        setup
            .client
            .get(format!("{}/v1/openapi.json", server.base))
            .send()
            .await
            .is_err()
    );
    drop(server);
    let restarted = serve(&setup.database, None);
    assert!(setup.saved(&restarted.base, &import).await);
}

on_both!(kill_during_complete, graceful_shutdown);
