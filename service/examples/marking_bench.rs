//! Automated marking of a whole paper, timed as a client sees it: a paper of the sample bank's
//! questions is saved and exported, a student's answers (each part's first accepted answer) are
//! written into its answer spaces in a handwriting font by the bundled scan maker, and the scan is
//! marked through the HTTP API: a session from the paper, the upload, one `start`, then polling
//! until every question is terminal.
//!
//! ```text
//! OMP_THREAD_LIMIT=1 cargo run --release -p examkit --example marking_bench -- \
//!     [DATABASE_URL] [--questions 24] [--workers 2] [--dpi 150] [--ocr on|off] [--font PATH]
//! ```
//!
//! Without a URL it uses a fresh SQLite file in a temporary directory; a `postgres://` URL must
//! name an empty database. It prints the time from `start` to the end of indexing (pages per
//! second), from the end of indexing to the last terminal question (questions per second through
//! the built-in marker, with the queue's overhead), and from `start` to the last terminal status.

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use examkit::marking::MarkingConfig;
use serde_json::{Value, json};
use support::{Bench, Error};

struct Options {
    url: Option<String>,
    questions: usize,
    workers: usize,
    dpi: u32,
    ocr: bool,
    font: String,
}

fn options() -> Result<Options, Error> {
    let mut o = Options {
        url: None,
        questions: 24,
        workers: 2,
        dpi: 150,
        ocr: true,
        font: "/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--questions" => o.questions = value()?.parse()?,
            "--workers" => o.workers = value()?.parse()?,
            "--dpi" => o.dpi = value()?.parse()?,
            "--ocr" => o.ocr = value()? != "off",
            "--font" => o.font = value()?,
            other if !other.starts_with("--") => o.url = Some(other.to_owned()),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    Ok(o)
}

/// The sample bank's published questions, in file order, with what a student who gets every
/// final answer right writes for each part (the first accepted answer of each part's criteria).
fn sample_answers() -> Result<Vec<(String, Value)>, Error> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bank/sample");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for file in files {
        let bank: Value = serde_json::from_slice(&std::fs::read(&file)?)?;
        let Some(questions) = bank["questions"].as_array() else {
            continue;
        };
        for q in questions {
            let revision = &q["revisions"][0];
            if revision["status"] != "published" {
                continue;
            }
            let mut parts = serde_json::Map::new();
            for c in revision["scheme"]["criteria"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let (Some(part), Some(answer)) = (c["partId"].as_str(), c["answers"][0].as_str())
                else {
                    continue;
                };
                let answer = answer.replace('$', "");
                let entry = parts.entry(part.to_owned()).or_insert(json!(""));
                let joined = match entry.as_str() {
                    Some("") | None => answer,
                    Some(before) => format!("{before}\n{answer}"),
                };
                *entry = json!(joined);
            }
            let id = q["id"].as_str().unwrap_or_default().to_owned();
            out.push((id, Value::Object(parts)));
        }
    }
    Ok(out)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let o = options()?;
    let bench = Bench::start(o.url.clone()).await?;
    let (client, store) = (&bench.client, bench.store.clone());
    let dir = tempfile::tempdir()?;
    // The paper and its export.
    let chosen: Vec<(String, Value)> = sample_answers()?.into_iter().take(o.questions).collect();
    let mut pins = Vec::new();
    for (id, _) in &chosen {
        let q = client
            .get(&format!("/v1/questions/{id}/revisions/1"))
            .await?;
        pins.push(q["question"]["pin"].clone());
    }
    let paper = uuid::Uuid::new_v4().to_string();
    client
        .post(
            "/v1/papers",
            &json!({ "id": paper, "title": "Benchmark paper", "questions": pins, "writingSpace": "smart", "gradeGuide": false }),
            false,
        )
        .await?;
    let export = client
        .post(
            &format!("/v1/papers/{paper}/revisions/1/exports"),
            &json!({}),
            false,
        )
        .await?;
    let qp = client
        .bytes(&format!(
            "/v1/papers/{paper}/revisions/1/exports/question-paper"
        ))
        .await?;

    // The completed scan.
    let write = |name: &str, bytes: &[u8]| -> Result<String, Error> {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes)?;
        Ok(path.to_string_lossy().into_owned())
    };
    let answers: serde_json::Map<String, Value> = chosen.into_iter().collect();
    let paper_pdf = write("paper.pdf", &qp)?;
    let layout = write("layout.json", export["layout"].to_string().as_bytes())?;
    let answers = write(
        "answers.json",
        Value::Object(answers).to_string().as_bytes(),
    )?;
    let scan = dir.path().join("scan.pdf").to_string_lossy().into_owned();
    let dpi = o.dpi.to_string();
    let made = Instant::now();
    examkit_scanmaker::make(&[
        "--paper",
        &paper_pdf,
        "--layout",
        &layout,
        "--answers",
        &answers,
        "--out",
        &scan,
        "--rotate",
        "2:180",
        "--skew",
        "0.6",
        "--noise",
        "0.01",
        "--seed",
        "1",
        "--dpi",
        &dpi,
        "--font",
        &o.font,
    ])
    .map_err(|e| e.to_string())?;
    let scan = std::fs::read(&scan)?;
    eprintln!("scan made in {:.1} s", made.elapsed().as_secs_f64());

    // The session, the upload, one start.
    let session = client
        .post(
            "/v1/marking/sessions/from-builder",
            &json!({ "paperId": paper, "revision": 1 }),
            true,
        )
        .await?;
    let session = session["session"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    client
        .call(
            reqwest::Method::POST,
            &format!("/v1/marking/sessions/{session}/assets?kind=work&name=scan.pdf"),
            Some(("application/pdf", scan)),
            false,
        )
        .await?;
    let config = MarkingConfig {
        workers: o.workers,
        ocr: o.ocr,
        dpi: o.dpi,
        poll: Duration::from_millis(50),
        ..MarkingConfig::default()
    };
    let workers = examkit::marking::launch::spawn(store.clone(), config)?;
    let started = Instant::now();
    client
        .call(
            reqwest::Method::POST,
            &format!("/v1/marking/sessions/{session}/start"),
            None,
            true,
        )
        .await?;
    let mut indexed_at = None;
    let view = loop {
        let view = client
            .get(&format!("/v1/marking/sessions/{session}"))
            .await?["session"]
            .clone();
        if indexed_at.is_none() && view["indexingFinished"] == true {
            indexed_at = Some(started.elapsed());
        }
        let questions = view["questions"].as_array().cloned().unwrap_or_default();
        let done = view["indexingFinished"] == true
            && questions.len() == o.questions
            && questions
                .iter()
                .all(|q| !matches!(q["status"].as_str(), Some("queued" | "running")));
        if done || view["indexing"]["state"] == "failed" {
            break view;
        }
        if started.elapsed() > Duration::from_secs(3600) {
            return Err("marking did not finish within an hour".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let total = started.elapsed();
    workers.shutdown().await;
    let database = bench.database();
    bench.stop();

    let indexed = indexed_at.unwrap_or(total);
    let pages = view["indexing"]["pagesTotal"].as_u64().unwrap_or(0);
    let questions = view["questions"].as_array().cloned().unwrap_or_default();
    let count = |status: &str| questions.iter().filter(|q| q["status"] == status).count();
    let awards: usize = questions
        .iter()
        .flat_map(|q| q["allocations"].as_array().cloned().unwrap_or_default())
        .filter(|a| a["decision"] == "awarded")
        .count();
    let marking = total.saturating_sub(indexed);
    println!(
        "{} questions, {pages} pages (scan and attached scheme) at {} dpi, OCR {}, {} workers, {}",
        questions.len(),
        o.dpi,
        if o.ocr { "on" } else { "off" },
        o.workers,
        database
    );
    println!(
        "indexing: {:.2} s ({:.2} pages/s)",
        indexed.as_secs_f64(),
        pages as f64 / indexed.as_secs_f64()
    );
    println!(
        "marking after indexing: {:.2} s ({:.1} questions/s)",
        marking.as_secs_f64(),
        questions.len() as f64 / marking.as_secs_f64().max(1e-9)
    );
    println!(
        "start to last terminal status: {:.2} s",
        total.as_secs_f64()
    );
    println!(
        "statuses: {} completed, {} needs_review, {} failed, {} cancelled; {awards} marks awarded",
        count("completed"),
        count("needs_review"),
        count("failed"),
        count("cancelled")
    );
    Ok(())
}
