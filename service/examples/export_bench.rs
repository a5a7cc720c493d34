//! Paper export benchmark: serves the sample bank on loopback and times, over HTTP, saving a
//! 24-question paper (which typesets it to count its pages) and preparing its two PDFs, cold (the
//! first paper a fresh process typesets) and warm (later papers and revisions). Run by
//! `service/bench/export.sh`.
//!
//! ```text
//! export_bench <database-url> [--questions N] [--runs N] [--writing-space SPACE]
//! ```

use std::time::{Duration, Instant};

use examkit::auth::{Scope, generate_key};
use examkit::server::AppState;
use examkit::store::Store;
use examkit::store::rate::Limits;
use serde_json::{Value, json};

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

struct Client {
    http: reqwest::Client,
    base: String,
    auth: String,
}

impl Client {
    /// Sends a request; returns the status, the body and the time to the last byte.
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Vec<u8>, Duration), Box<dyn std::error::Error>> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("authorization", &self.auth);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(serde_json::to_vec(body)?);
        }
        let started = Instant::now();
        let response = request.send().await?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await?.to_vec();
        Ok((status, bytes, started.elapsed()))
    }

    /// Sends a request that must answer `expected`; returns the JSON body (if any) and the time.
    async fn expect(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        expected: u16,
    ) -> Result<(Value, Duration, usize), Box<dyn std::error::Error>> {
        let (status, bytes, took) = self.send(method.clone(), path, body).await?;
        if status != expected {
            return Err(format!(
                "{method} {path}: {status} (expected {expected}): {}",
                String::from_utf8_lossy(&bytes)
            )
            .into());
        }
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Ok((value, took, bytes.len()))
    }
}

impl Client {
    /// Prepares a revision's PDFs; returns the time taken.
    async fn prepare(
        &self,
        id: &str,
        revision: usize,
    ) -> Result<Duration, Box<dyn std::error::Error>> {
        let path = format!("/v1/papers/{id}/revisions/{revision}/exports");
        let (_, took, _) = self
            .expect(reqwest::Method::POST, &path, Some(&json!({})), 200)
            .await?;
        Ok(took)
    }

    /// Downloads one PDF of a revision; returns the time taken and its size.
    async fn download(
        &self,
        id: &str,
        revision: usize,
        kind: &str,
    ) -> Result<(Duration, usize), Box<dyn std::error::Error>> {
        let path = format!("/v1/papers/{id}/revisions/{revision}/exports/{kind}");
        let (_, took, size) = self.expect(reqwest::Method::GET, &path, None, 200).await?;
        Ok((took, size))
    }
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let url = args.get(1).ok_or(
        "usage: export_bench <database-url> [--questions N] [--runs N] [--writing-space SPACE]",
    )?;
    let questions: usize = arg(&args, "--questions").unwrap_or("24").parse()?;
    let runs: usize = arg(&args, "--runs").unwrap_or("5").parse()?;
    let space = arg(&args, "--writing-space").unwrap_or("smart");
    let store = Store::open(url).await?;
    store.import_sample_bank().await?;
    let user = store.create_user("Benchmark", true, false).await?;
    let new = generate_key().map_err(|e| format!("randomness: {e}"))?;
    store
        .create_key(
            &user.id,
            "bench",
            &new.prefix,
            &new.fingerprint,
            &[Scope::QuestionsRead, Scope::PapersRead, Scope::PapersWrite],
            examkit::store::now_ms() + 86_400_000,
        )
        .await?;
    // A fresh typesetter: nothing has been typeset in this process yet.
    let state = std::sync::Arc::new(AppState::new(store.clone(), Limits::unlimited()));
    let (addr, server) =
        examkit::server::bind(state, "127.0.0.1:0".parse()?, std::future::pending()).await?;
    tokio::spawn(server);
    let client = Client {
        http: examkit::tls::client(),
        base: format!("http://{addr}"),
        auth: format!("Bearer {}", new.secret),
    };

    // Pins of 2 × N questions of the sample bank: the first N for the cold paper and its
    // revisions, the next N for a new paper on a warm process.
    let (results, _, _) = client
        .expect(
            reqwest::Method::GET,
            &format!("/v1/questions?limit={}", (2 * questions).min(100)),
            None,
            200,
        )
        .await?;
    let pins: Vec<Value> = results["items"]
        .as_array()
        .ok_or("no items")?
        .iter()
        .map(|i| i["pin"].clone())
        .collect();
    if pins.len() < 2 * questions {
        return Err(format!(
            "the bank has {} questions; need {}",
            pins.len(),
            2 * questions
        )
        .into());
    }
    let first_id = uuid::Uuid::new_v4().to_string();
    let second_id = uuid::Uuid::new_v4().to_string();
    let create = |id: &str, title: &str, pins: &[Value]| json!({"id": id, "title": title, "questions": pins, "writingSpace": space, "gradeGuide": true});

    println!("{questions}-question paper, writing space {space}, {runs} warm runs");
    // Cold: the process's first paper.
    let (paper, cold_save, _) = client
        .expect(
            reqwest::Method::POST,
            "/v1/papers",
            Some(&create(&first_id, "Benchmark paper", &pins[..questions])),
            201,
        )
        .await?;
    // As after a restart: nothing of this paper's layout is cached any more.
    examkit_pdf::evict_caches();
    let cold_export = client.prepare(&first_id, 1).await?;
    let (qp_download, qp_bytes) = client.download(&first_id, 1, "question-paper").await?;
    let (ms_download, ms_bytes) = client.download(&first_id, 1, "mark-scheme").await?;
    let again = client.prepare(&first_id, 1).await?;
    println!(
        "pages: question paper {}, mark scheme {}; PDFs {qp_bytes} and {ms_bytes} bytes",
        paper["paper"]["pages"]["questionPaper"], paper["paper"]["pages"]["markScheme"]
    );
    println!("| case | time |");
    println!("| --- | --- |");
    println!(
        "| cold: save the process's first paper (typesets it to count pages) | {} |",
        ms(cold_save)
    );
    println!(
        "| cold: prepare its two PDFs, typst's caches emptied first (as after a restart) | {} |",
        ms(cold_export)
    );
    println!("| cold: save + prepare | {} |", ms(cold_save + cold_export));
    println!(
        "| prepare again (already prepared: stored) | {} |",
        ms(again)
    );
    println!(
        "| download question paper / mark scheme | {} / {} |",
        ms(qp_download),
        ms(ms_download)
    );

    // Warm, new content: another paper of other questions on the same process.
    let (_, new_save, _) = client
        .expect(
            reqwest::Method::POST,
            "/v1/papers",
            Some(&create(
                &second_id,
                "Second paper",
                &pins[questions..2 * questions],
            )),
            201,
        )
        .await?;
    let new_export = client.prepare(&second_id, 1).await?;
    println!(
        "| warm process, new paper of other questions: save | {} |",
        ms(new_save)
    );
    println!(
        "| warm process, new paper of other questions: prepare | {} |",
        ms(new_export)
    );

    // Warm, a new revision of the first paper (its questions reordered) each run.
    let mut saves = Vec::with_capacity(runs);
    let mut exports = Vec::with_capacity(runs);
    let mut order: Vec<Value> = pins[..questions].to_vec();
    for run in 0..runs {
        order.rotate_left(1);
        let revision = run + 1;
        let (_, save, _) = client
            .expect(
                reqwest::Method::PATCH,
                &format!("/v1/papers/{first_id}"),
                Some(&json!({"revision": revision, "questions": order})),
                200,
            )
            .await?;
        let export = client.prepare(&first_id, revision + 1).await?;
        saves.push(save);
        exports.push(export);
    }
    let save = median(saves);
    let export = median(exports);
    println!(
        "| warm: save a new revision (questions reordered), median | {} |",
        ms(save)
    );
    println!(
        "| warm: prepare its two PDFs (layout cached by the save), median | {} |",
        ms(export)
    );
    println!("| warm: save + prepare | {} |", ms(save + export));
    Ok(())
}
