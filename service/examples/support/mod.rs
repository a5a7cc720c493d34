//! What the HTTP benchmarks share: an `examkit` server in this process over a fresh or given
//! database, with the sample bank, one account and a key, limits and an allowance that never
//! stop a run, and a client of it; and the answer of the stub OpenAI-compatible provider the
//! vision-model benchmarks run.

#![allow(dead_code)] // Each benchmark uses a part of it.
use std::sync::Arc;

use examkit::auth::{Scope, generate_key};
use examkit::server::AppState;
use examkit::store::Store;
use examkit::store::automated::Allowance;
use examkit::store::rate::Limits;
use serde_json::{Value, json};

/// A benchmark's error.
pub type Error = Box<dyn std::error::Error>;

/// The server and a client of it; dropping it leaves the server running until [`Bench::stop`].
pub struct Bench {
    /// The database.
    pub store: Store,
    /// Its URL.
    pub url: String,
    /// A client with the account's key.
    pub client: Client,
    stop: tokio::sync::oneshot::Sender<()>,
    _dir: tempfile::TempDir,
}

impl Bench {
    /// A server over `url`, or a fresh SQLite file in a temporary directory.
    pub async fn start(url: Option<String>) -> Result<Bench, Error> {
        let dir = tempfile::tempdir()?;
        let url =
            url.unwrap_or_else(|| format!("sqlite://{}/bench.db?mode=rwc", dir.path().display()));
        let store = Store::open(&url).await?;
        store.import_sample_bank().await?;
        let user = store.create_user("bench", true, false).await?.id;
        let new = generate_key().map_err(|e| format!("no randomness: {e}"))?;
        store
            .create_key(
                &user,
                "bench",
                &new.prefix,
                &new.fingerprint,
                Scope::ALL,
                examkit::store::now_ms() + 86_400_000,
            )
            .await?;
        let plenty = 1_000_000;
        let limits = Limits {
            key_per_minute: plenty,
            account_per_minute: plenty,
            key_per_day: plenty,
            account_per_day: plenty,
            key_writes_per_minute: plenty,
            account_writes_per_minute: plenty,
        };
        let mut state = AppState::new(store.clone(), limits);
        state.marking.allowance = Allowance {
            pages_per_day: plenty,
            questions_per_day: plenty,
        };
        let (stop, rx) = tokio::sync::oneshot::channel::<()>();
        let (addr, server) =
            examkit::server::bind(Arc::new(state), "127.0.0.1:0".parse()?, async move {
                let _ = rx.await;
            })
            .await?;
        tokio::spawn(server);
        Ok(Bench {
            store,
            url,
            client: Client {
                base: format!("http://{addr}"),
                key: new.secret,
                http: examkit::tls::client(),
            },
            stop,
            _dir: dir,
        })
    }

    /// Which database it runs on, for the printed figures.
    pub fn database(&self) -> &'static str {
        if self.url.starts_with("postgres") {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    }

    /// Stops the server.
    pub fn stop(self) {
        let _ = self.stop.send(());
    }
}

/// A client of the in-process server (or of any `examkit` server at `base`).
pub struct Client {
    base: String,
    key: String,
    /// The HTTP client.
    pub http: reqwest::Client,
}

impl Client {
    /// A client of the server at `base`, with API key `key`.
    pub fn new(base: String, key: String) -> Client {
        Client {
            base,
            key,
            http: examkit::tls::client(),
        }
    }

    /// A request; an error unless the answer is 2xx. JSON answers are parsed (others are null).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<(&str, Vec<u8>)>,
        idempotent: bool,
    ) -> Result<Value, Error> {
        let bytes = self.send(method, path, body, idempotent).await?;
        Ok(serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// A request's body; an error unless the answer is 2xx.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<(&str, Vec<u8>)>,
        idempotent: bool,
    ) -> Result<Vec<u8>, Error> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.key);
        if idempotent {
            request = request.header("idempotency-key", uuid::Uuid::new_v4().to_string());
        }
        if let Some((content_type, bytes)) = body {
            request = request.header("content-type", content_type).body(bytes);
        }
        let resp = request.send().await?;
        let status = resp.status();
        let bytes = resp.bytes().await?.to_vec();
        if !status.is_success() {
            return Err(format!("{path}: {status} {}", String::from_utf8_lossy(&bytes)).into());
        }
        Ok(bytes)
    }

    /// `GET` as JSON.
    pub async fn get(&self, path: &str) -> Result<Value, Error> {
        self.call(reqwest::Method::GET, path, None, false).await
    }

    /// `GET` as bytes.
    pub async fn bytes(&self, path: &str) -> Result<Vec<u8>, Error> {
        self.send(reqwest::Method::GET, path, None, false).await
    }

    /// `POST` of a JSON body.
    pub async fn post(&self, path: &str, body: &Value, idempotent: bool) -> Result<Value, Error> {
        let body = Some(("application/json", body.to_string().into_bytes()));
        self.call(reqwest::Method::POST, path, body, idempotent)
            .await
    }
}

/// The stub's answer to one request: every criterion withheld as blank, on the first work page,
/// with one `not_met` check per condition.
pub fn stub_answer(body: &Value) -> Value {
    let decision = &body["response_format"]["json_schema"]["schema"]["properties"]["decisions"]["items"]
        ["properties"];
    let ids: Vec<String> = decision["criterionId"]["enum"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let text: String = body["messages"][1]["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let after = |prefix: &str| -> Option<String> {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix).map(str::to_owned))
    };
    let page = after("Work page ").unwrap_or_default();
    // A scheme of pages: the stub reads one one-mark criterion from the first scheme page.
    let (ids, rubric) = if ids.is_empty() {
        let source = after("Scheme page ").unwrap_or_default();
        (
            vec!["c1".to_owned()],
            json!({ "parts": [{ "id": "a", "maxMarks": 1 }],
                    "criteria": [{ "id": "c1", "partId": "a", "code": "B1",
                                   "requirement": "the answer", "dependsOn": [],
                                   "sourcePageIds": [source] }] }),
        )
    } else {
        (ids, Value::Null)
    };
    let decisions: Vec<Value> = ids
        .iter()
        .map(|id| {
            let mut lines = text
                .lines()
                .skip_while(|l| !l.starts_with(&format!("- {id} (")));
            lines.next();
            let conditions = lines
                .next()
                .filter(|l| l.trim_start().starts_with("Conditions"))
                .map_or(0, |l| l.matches("; [").count() + 1);
            json!({
                "criterionId": id, "outcome": "withheld", "reason": "stub", "quote": "",
                "pageId": page, "box": [0, 0, 1000, 1000],
                "conditionChecks": (0..conditions)
                    .map(|i| json!({ "index": i, "result": "not_met" }))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let content = json!({ "transcription": "", "rubric": rubric, "decisions": decisions });
    json!({
        "id": "bench", "object": "chat.completion", "created": 0, "model": "bench",
        "choices": [{ "index": 0, "finish_reason": "stop",
                      "message": { "role": "assistant", "content": content.to_string() } }],
        "usage": { "prompt_tokens": 1000, "completion_tokens": 200 },
    })
}

/// The `examkit` binary at `given`, or else the one beside this program in its target
/// directory, built first (with the example `example`, so only the binary is linked) when this
/// program runs under `cargo run`.
pub fn examkit_binary(
    given: Option<&std::path::PathBuf>,
    example: &str,
) -> Result<std::path::PathBuf, Error> {
    if let Some(path) = given {
        return Ok(path.clone());
    }
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(|examples| examples.parent())
        .ok_or("this program is not in a target directory: give --examkit PATH")?;
    if let (Ok(cargo), Some(target_dir)) = (std::env::var("CARGO"), profile_dir.parent()) {
        let mut build = std::process::Command::new(cargo);
        build
            .args(["build", "-q", "-p", "examkit", "--bin", "examkit"])
            .args(["--example", example, "--manifest-path"])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .arg("--target-dir")
            .arg(target_dir);
        if !cfg!(debug_assertions) {
            build.arg("--release");
        }
        if !build.status()?.success() {
            return Err("building the examkit binary failed".into());
        }
    }
    Ok(profile_dir.join("examkit"))
}
