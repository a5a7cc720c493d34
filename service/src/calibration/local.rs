//! A private examkit: the service's own HTTP server (on a loopback port) and workers over a
//! throwaway SQLite database, driven through its public API. Calibration marks reference scripts this way so that what it
//! measures is exactly what an API client gets (indexing, planning, the marker, placement, guards
//! and the engine), without touching any real database.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};
use warp::http::StatusCode;

use crate::auth::Scope;
use crate::marking::MarkingConfig;
use crate::marking::worker::Workers;
use crate::papers::DEFAULT_MAX_PAPERS;
use crate::server::AppState;
use crate::store::Store;
use crate::store::automated::Allowance;
use crate::store::rate::Limits;
use crate::typeset::Typesetter;

/// A running private examkit.
pub struct Local {
    _dir: tempfile::TempDir,
    base: String,
    client: reqwest::Client,
    key: String,
    workers: Option<Workers>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

/// A paper saved and exported: the layout its export recorded and both PDFs.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The layout of the question paper (`examkit_pdf::Layout` as JSON).
    pub layout: Value,
    /// The question-paper PDF.
    pub question_paper: Vec<u8>,
    /// The mark-scheme PDF.
    pub mark_scheme: Vec<u8>,
}

/// An answer of the private service.
struct Answer {
    status: StatusCode,
    body: Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn expect(self, wanted: StatusCode, what: &str) -> Result<Answer, String> {
        if self.status == wanted {
            Ok(self)
        } else {
            let detail = self.json()["error"]["message"].as_str().map_or_else(
                || String::from_utf8_lossy(&self.body).into_owned(),
                str::to_owned,
            );
            Err(format!("{what}: {} {detail}", self.status.as_u16()))
        }
    }
}

fn idempotency_key() -> String {
    format!("calibrate-{}", uuid::Uuid::new_v4().simple())
}

/// Whether a session view has finished: indexing done and `questions` questions listed, none
/// queued or running.
pub fn finished(view: &Value, questions: usize) -> bool {
    let listed = view["questions"].as_array().map_or(&[][..], Vec::as_slice);
    view["indexingFinished"] == true
        && listed.len() >= questions
        && listed
            .iter()
            .all(|q| !matches!(q["status"].as_str(), Some("queued" | "running")))
}

impl Local {
    /// Starts a private examkit with `marking`'s marker and settings (at least one worker, no
    /// daily allowance to run out), and the bank in `bank` (`None`: the built-in sample bank).
    pub async fn start(
        marking: MarkingConfig,
        bank: Option<&std::path::Path>,
    ) -> Result<Local, String> {
        Local::start_with(marking, bank, None).await
    }

    /// [`Local::start`], its workers marking with `marker` when one is given. The private
    /// service marks whatever the deployment's bar: `--marker-qualify` and the seeds are not its.
    pub async fn start_with(
        mut marking: MarkingConfig,
        bank: Option<&std::path::Path>,
        marker: Option<Arc<dyn crate::marking::marker::Marker>>,
    ) -> Result<Local, String> {
        marking.qualify = None;
        marking.seeds = None;
        let dir = tempfile::tempdir().map_err(|e| format!("cannot make a working folder: {e}"))?;
        let url = format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("examkit.db").display()
        );
        let store = Store::open(&url)
            .await
            .map_err(|e| format!("cannot open the working database: {e}"))?;
        match bank {
            None => store.import_sample_bank().await.map(drop),
            Some(path) => store.import_bank_path(path).await.map(drop),
        }
        .map_err(|e| format!("cannot import the bank: {e}"))?;
        marking.enabled = true;
        marking.workers = marking.workers.max(1);
        marking.allowance = Allowance {
            pages_per_day: i64::MAX / 4,
            questions_per_day: i64::MAX / 4,
        };
        let user = store
            .create_user("calibration", true, false)
            .await
            .map_err(|e| format!("cannot make the working account: {e}"))?;
        let new = crate::auth::generate_key().map_err(|e| format!("no randomness: {e}"))?;
        store
            .create_key(
                &user.id,
                "calibration",
                &new.prefix,
                &new.fingerprint,
                Scope::ALL,
                crate::store::now_ms() + 7 * 86_400_000,
            )
            .await
            .map_err(|e| format!("cannot make the working key: {e}"))?;
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let state = Arc::new(AppState {
            store: store.clone(),
            limits: Limits::unlimited(),
            typesetter: Typesetter::new(true, cores),
            max_papers: DEFAULT_MAX_PAPERS,
            marking: marking.clone(),
            app: crate::config::AppConfig::default(),
            readiness: Default::default(),
            builds: Default::default(),
            maths: Default::default(),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let (addr, server) = crate::server::bind(state, loopback, async {
            let _ = stopped.await;
        })
        .await
        .map_err(|e| format!("cannot listen on a loopback port: {e}"))?;
        let server = tokio::spawn(server);
        let client = crate::tls::client_builder()
            .timeout(Duration::from_secs(600))
            .build()
            .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
        // The service marks with the recorded marker, or the configured one; never with seeds.
        let marker = match marker {
            Some(marker) => marker,
            None => marking.marker.build()?,
        };
        let workers = crate::marking::worker::spawn_with(store, marking, marker, None);
        Ok(Local {
            _dir: dir,
            base: format!("http://{addr}"),
            client,
            key: new.secret,
            workers: Some(workers),
            stop: Some(stop),
            server: Some(server),
        })
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Answer, String> {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.key);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let failed = |e: reqwest::Error| format!("the working service did not answer {path}: {e}");
        let response = request.body(body).send().await.map_err(failed)?;
        let status = StatusCode::from_u16(response.status().as_u16())
            .map_err(|e| format!("the working service answered {path} oddly: {e}"))?;
        let body = response.bytes().await.map_err(failed)?;
        Ok(Answer { status, body })
    }

    async fn get(&self, path: &str) -> Result<Answer, String> {
        self.call(reqwest::Method::GET, path, &[], Vec::new()).await
    }

    async fn post_json(
        &self,
        path: &str,
        body: &Value,
        idempotent: bool,
    ) -> Result<Answer, String> {
        let key = idempotency_key();
        let mut headers = vec![("content-type", "application/json")];
        if idempotent {
            headers.push(("idempotency-key", &key));
        }
        self.call(
            reqwest::Method::POST,
            path,
            &headers,
            body.to_string().into_bytes(),
        )
        .await
    }

    /// Any JSON call to the private service (with an idempotency key when `idempotent`): the
    /// status and the answer's JSON (`null` when it is not JSON).
    pub async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        idempotent: bool,
    ) -> Result<(u16, Value), String> {
        let key = idempotency_key();
        let mut headers = vec![("content-type", "application/json")];
        if idempotent {
            headers.push(("idempotency-key", &key));
        }
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let answer = self.call(method, path, &headers, bytes).await?;
        Ok((answer.status.as_u16(), answer.json()))
    }

    /// Saves revision 1 of a paper of these bank questions under `id`, exports it, and fetches
    /// both PDFs.
    pub async fn paper(
        &self,
        id: uuid::Uuid,
        title: &str,
        writing_space: &str,
        questions: &[(uuid::Uuid, u32)],
    ) -> Result<Exported, String> {
        let mut pins = Vec::new();
        for (question, revision) in questions {
            let answer = self
                .get(&format!("/v1/questions/{question}/revisions/{revision}"))
                .await?
                .expect(
                    StatusCode::OK,
                    &format!("bank question {question} revision {revision}"),
                )?;
            pins.push(answer.json()["question"]["pin"].clone());
        }
        let id = id.hyphenated().to_string();
        let body = json!({ "id": id, "title": title, "questions": pins,
                           "writingSpace": writing_space, "gradeGuide": false });
        self.post_json("/v1/papers", &body, false)
            .await?
            .expect(StatusCode::CREATED, &format!("saving paper {id}"))?;
        let exported = self
            .post_json(
                &format!("/v1/papers/{id}/revisions/1/exports"),
                &json!({}),
                false,
            )
            .await?
            .expect(StatusCode::OK, &format!("exporting paper {id}"))?;
        let layout = exported.json()["layout"].clone();
        let mut pdfs = Vec::new();
        for kind in ["question-paper", "mark-scheme"] {
            let pdf = self
                .get(&format!("/v1/papers/{id}/revisions/1/exports/{kind}"))
                .await?
                .expect(
                    StatusCode::OK,
                    &format!("fetching the {kind} of paper {id}"),
                )?;
            pdfs.push(pdf.body.to_vec());
        }
        let mark_scheme = pdfs.pop().unwrap_or_default();
        let question_paper = pdfs.pop().unwrap_or_default();
        Ok(Exported {
            layout,
            question_paper,
            mark_scheme,
        })
    }

    /// A bank question's revision, as `GET /v1/questions/{id}/revisions/{revision}` shows it.
    pub async fn bank_question(&self, id: uuid::Uuid, revision: u32) -> Result<Value, String> {
        let answer = self
            .get(&format!("/v1/questions/{id}/revisions/{revision}"))
            .await?
            .expect(
                StatusCode::OK,
                &format!("bank question {id} revision {revision}"),
            )?;
        Ok(answer.json()["question"].clone())
    }

    /// A marking session for revision 1 of a saved paper: its view.
    pub async fn session(&self, paper: uuid::Uuid) -> Result<Value, String> {
        let answer = self
            .post_json(
                "/v1/marking/sessions/from-builder",
                &json!({ "paperId": paper.hyphenated().to_string(), "revision": 1 }),
                true,
            )
            .await?
            .expect(StatusCode::CREATED, "making a marking session")?;
        Ok(answer.json()["session"].clone())
    }

    /// Uploads a file of the student's work: the asset's view.
    pub async fn upload(
        &self,
        session: &str,
        name: &str,
        content_type: &str,
        bytes: Vec<u8>,
    ) -> Result<Value, String> {
        self.upload_as(session, "work", name, content_type, bytes)
            .await
    }

    /// Uploads a file as an asset of `kind` (`work` or `scheme`): the asset's view.
    pub async fn upload_as(
        &self,
        session: &str,
        kind: &str,
        name: &str,
        content_type: &str,
        bytes: Vec<u8>,
    ) -> Result<Value, String> {
        let query: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("kind", kind)
            .append_pair("name", name)
            .finish();
        let answer = self
            .call(
                reqwest::Method::POST,
                &format!("/v1/marking/sessions/{session}/assets?{query}"),
                &[("content-type", content_type)],
                bytes,
            )
            .await?
            .expect(StatusCode::CREATED, &format!("uploading {name}"))?;
        Ok(answer.json()["asset"].clone())
    }

    /// Starts indexing and marking.
    pub async fn start_marking(&self, session: &str) -> Result<(), String> {
        let key = idempotency_key();
        self.call(
            reqwest::Method::POST,
            &format!("/v1/marking/sessions/{session}/start"),
            &[("idempotency-key", &key)],
            Vec::new(),
        )
        .await?
        .expect(StatusCode::ACCEPTED, "starting marking")
        .map(drop)
    }

    /// The session's view.
    pub async fn view(&self, session: &str) -> Result<Value, String> {
        let answer = self
            .get(&format!("/v1/marking/sessions/{session}"))
            .await?
            .expect(StatusCode::OK, "reading the session")?;
        Ok(answer.json()["session"].clone())
    }

    /// Waits until the session has finished with `questions` questions, at most `limit`;
    /// `progress` is told each new state.
    pub async fn wait(
        &self,
        session: &str,
        questions: usize,
        limit: Duration,
        mut progress: impl FnMut(&Value),
    ) -> Result<Value, String> {
        let deadline = Instant::now() + limit;
        loop {
            let view = self.view(session).await?;
            progress(&view);
            if finished(&view, questions) {
                return Ok(view);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "marking did not finish within {} s",
                    limit.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Stops the workers and the server, and removes the working database.
    pub async fn shutdown(mut self) {
        if let Some(workers) = self.workers.take() {
            workers.shutdown().await;
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}
