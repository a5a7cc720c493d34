//! The vision-model marker's throughput and the service's own cost per question, against a stub
//! OpenAI-compatible provider that this program starts and that answers after a fixed delay.
//!
//! ```text
//! OMP_THREAD_LIMIT=1 cargo run --release -p examkit --example vision_bench -- \
//!     [--questions 24] [--workers 4] [--concurrency 4] [--delay-ms 2000] [--rounds 6]
//! ```
//!
//! A paper of the sample bank's questions is saved and exported in a private examkit and answered
//! in a handwriting font by the scan maker. Sessions made with a title are given the scan as work
//! and the paper's mark scheme as scheme (indexed without OCR: the stub reads nothing), then:
//! 1. **The service's own cost per question**: a question over twelve work pages and one scheme
//!    page is marked five times, one at a time, and each run's `durationMs − latencyMs`
//!    (loading, page images, placement, the engine, saving; the provider's time set aside) is
//!    printed.
//! 2. **Throughput**: with the stub answering after `--delay-ms`, `rounds × workers × concurrency`
//!    questions of one work page and one scheme page (24 to a session) are queued at once and timed until the last is marked;
//!    the ideal is `workers × concurrency / delay` questions a second.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use examkit::calibration::local::Local;
use examkit::marking::openai::{OpenAiConfig, StructuredOutput};
use examkit::marking::{MarkerChoice, MarkingConfig};
use reqwest::Method;
use serde_json::{Value, json};
use support::stub_answer;
use warp::Filter;

type Error = Box<dyn std::error::Error>;

struct Options {
    questions: usize,
    workers: usize,
    concurrency: usize,
    delay_ms: u64,
    rounds: usize,
}

fn options() -> Result<Options, Error> {
    let mut o = Options {
        questions: 24,
        workers: 4,
        concurrency: 4,
        delay_ms: 2000,
        rounds: 6,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--questions" => o.questions = value()?.parse()?,
            "--workers" => o.workers = value()?.parse()?,
            "--concurrency" => o.concurrency = value()?.parse()?,
            "--delay-ms" => o.delay_ms = value()?.parse()?,
            "--rounds" => o.rounds = value()?.parse()?,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    Ok(o)
}

/// Starts the stub on loopback; `delay` is read at each request.
async fn stub(delay: Arc<AtomicU64>) -> Result<String, Error> {
    let route = warp::post()
        .and(warp::path!("v1" / "chat" / "completions"))
        .and(warp::body::json())
        .then(move |body: Value| {
            let delay = delay.load(Ordering::SeqCst);
            async move {
                tokio::time::sleep(Duration::from_millis(delay)).await;
                warp::reply::json(&stub_answer(&body))
            }
        });
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(warp::serve(route).incoming(listener).run());
    Ok(format!("http://{addr}/v1"))
}

/// Each part's first accepted answer for the first `n` published sample-bank questions.
fn sample_answers(n: usize) -> Result<Vec<(uuid::Uuid, Value)>, Error> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bank/sample");
    let mut files: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.ends_with("facets.json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let bank: Value = serde_json::from_slice(&std::fs::read(&file)?)?;
        for q in bank["questions"].as_array().into_iter().flatten() {
            let revision = &q["revisions"][0];
            if revision["status"] != "published" || out.len() >= n {
                continue;
            }
            let mut parts = serde_json::Map::new();
            for c in revision["scheme"]["criteria"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let (Some(part), Some(answer)) = (c["partId"].as_str(), c["answers"][0].as_str())
                {
                    parts
                        .entry(part.to_owned())
                        .or_insert(json!(answer.replace('$', "")));
                }
            }
            out.push((
                q["id"].as_str().unwrap_or_default().parse()?,
                Value::Object(parts),
            ));
        }
    }
    Ok(out)
}

async fn wait_for(local: &Local, session: &str, questions: usize) -> Result<Value, Error> {
    Ok(local
        .wait(session, questions, Duration::from_secs(1800), |_| {})
        .await?)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let o = options()?;
    let delay = Arc::new(AtomicU64::new(0));
    let base_url = stub(delay.clone()).await?;
    let marker = MarkerChoice::OpenAi(OpenAiConfig {
        base_url,
        model: "bench".into(),
        token: None,
        timeout: Duration::from_secs(120),
        image_long_edge: 1600,
        structured_output: StructuredOutput::JsonSchema,
        ..OpenAiConfig::default()
    });
    let config = MarkingConfig {
        workers: o.workers,
        marker_concurrency: o.concurrency,
        poll: Duration::from_millis(100),
        ocr: false,
        marker,
        ..MarkingConfig::default()
    };
    let local = Local::start(config, None).await?;
    let answers = sample_answers(o.questions)?;
    let paper_id = uuid::Uuid::new_v4();
    let questions: Vec<(uuid::Uuid, u32)> = answers.iter().map(|(id, _)| (*id, 1)).collect();
    let paper = local
        .paper(paper_id, "Benchmark paper", "smart", &questions)
        .await?;
    let dir = tempfile::tempdir()?;
    let write = |name: &str, bytes: &[u8]| -> Result<String, Error> {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes)?;
        Ok(path.to_string_lossy().into_owned())
    };
    let answers_json: serde_json::Map<String, Value> = answers
        .iter()
        .map(|(id, parts)| (id.to_string(), parts.clone()))
        .collect();
    let args = [
        "--paper".to_owned(),
        write("paper.pdf", &paper.question_paper)?,
        "--layout".to_owned(),
        write("layout.json", paper.layout.to_string().as_bytes())?,
        "--answers".to_owned(),
        write(
            "answers.json",
            Value::Object(answers_json).to_string().as_bytes(),
        )?,
        "--out".to_owned(),
        dir.path().join("scan.pdf").to_string_lossy().into_owned(),
        "--font".to_owned(),
        "/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf".to_owned(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let files = examkit_scanmaker::make(&args).map_err(|e| format!("scan maker: {e:?}"))?;
    let scan = std::fs::read(files.first().ok_or("no scan")?)?;
    let pages = u32::try_from(examkit::inspect::page_count(
        &examkit::untrusted::Pages::InProcess,
        examkit::inspect::FileType::Pdf,
        &scan,
        150,
    )?)?;
    let scheme_pages = u32::try_from(examkit::inspect::page_count(
        &examkit::untrusted::Pages::InProcess,
        examkit::inspect::FileType::Pdf,
        &paper.mark_scheme,
        150,
    )?)?;
    println!(
        "paper: {} questions on {pages} pages, mark scheme {scheme_pages} pages",
        answers.len()
    );

    // A session with a title, the scan as work and the mark scheme as scheme, indexed.
    let session = |n: usize| {
        let (local, scan, scheme) = (&local, scan.clone(), paper.mark_scheme.clone());
        async move {
            let (status, made) = local
                .request(
                    Method::POST,
                    "/v1/marking/sessions",
                    Some(&json!({ "title": format!("Benchmark {n}") })),
                    true,
                )
                .await?;
            if status != 201 {
                return Err::<(String, String, String), Error>(
                    format!("session: {status} {made}").into(),
                );
            }
            let id = made["session"]["id"]
                .as_str()
                .ok_or("session id")?
                .to_owned();
            let work = local
                .upload_as(&id, "work", "scan.pdf", "application/pdf", scan)
                .await?;
            let scheme = local
                .upload_as(&id, "scheme", "mark-scheme.pdf", "application/pdf", scheme)
                .await?;
            local.start_marking(&id).await?;
            wait_for(local, &id, 0).await?;
            let work = work["id"].as_str().ok_or("work id")?.to_owned();
            let scheme = scheme["id"].as_str().ok_or("scheme id")?.to_owned();
            Ok((id, work, scheme))
        }
    };
    let question =
        |label: String, work: &str, scheme: &str, work_pages: Vec<u32>, schemes: &[u32]| {
            json!({
                "label": label, "workAssetIds": [work], "schemeAssetIds": [scheme],
                "pageSelections": { work: work_pages, scheme: schemes },
            })
        };

    // 1. The service's own cost for a question over twelve work pages.
    let (first, work, scheme) = session(0).await?;
    let path = |session: &str| format!("/v1/marking/sessions/{session}/questions");
    let twelve: Vec<u32> = (1..=pages.min(12)).collect();
    let mut own = Vec::new();
    for n in 1..=5 {
        let body = question(format!("twelve-{n}"), &work, &scheme, twelve.clone(), &[1]);
        let (status, answer) = local
            .request(Method::POST, &path(&first), Some(&body), true)
            .await?;
        if status != 202 {
            return Err(format!("marking a twelve-page question: {status} {answer}").into());
        }
        let view = wait_for(&local, &first, n).await?;
        let id = &answer["question"]["id"];
        let marked = view["questions"]
            .as_array()
            .and_then(|qs| qs.iter().find(|q| &q["id"] == id))
            .ok_or("the new question")?;
        if marked["status"] == "failed" {
            return Err(format!("the twelve-page question failed: {}", marked["error"]).into());
        }
        let run = &marked["markerRun"];
        let (total, provider) = (
            run["durationMs"].as_f64().ok_or("durationMs")?,
            run["latencyMs"].as_f64().ok_or("latencyMs")?,
        );
        own.push(total - provider);
    }
    println!(
        "service's own cost per {}-page question (and one scheme page; loading, page images, placement, engine, saving): median {:.0} ms, min {:.0} ms, max {:.0} ms over {} runs",
        twelve.len(),
        median(own.clone()),
        own.iter().copied().fold(f64::INFINITY, f64::min),
        own.iter().copied().fold(0.0, f64::max),
        own.len()
    );

    // 2. Throughput against a provider answering after a fixed delay.
    let total = o.rounds * o.workers * o.concurrency;
    let mut sessions = Vec::new();
    for n in 0..total.div_ceil(24) {
        sessions.push(session(n + 1).await?);
    }
    delay.store(o.delay_ms, Ordering::SeqCst);
    let started = Instant::now();
    for n in 0..total {
        let (id, work, scheme) = &sessions[n / 24];
        let page = u32::try_from(n % 24)? % pages + 1;
        let body = question(format!("{}", n % 24 + 1), work, scheme, vec![page], &[1]);
        let (status, answer) = local
            .request(Method::POST, &path(id), Some(&body), true)
            .await?;
        if status != 202 {
            return Err(format!("queueing: {status} {answer}").into());
        }
    }
    let mut failed = 0;
    for (k, (id, _, _)) in sessions.iter().enumerate() {
        let expected = (total - k * 24).min(24);
        let view = wait_for(&local, id, expected).await?;
        failed += view["questions"].as_array().map_or(0, |qs| {
            qs.iter().filter(|q| q["status"] == "failed").count()
        });
    }
    let elapsed = started.elapsed().as_secs_f64();
    let rate = total as f64 / elapsed;
    let ideal = (o.workers * o.concurrency) as f64 / (o.delay_ms as f64 / 1000.0);
    println!(
        "throughput: {total} questions in {elapsed:.2} s with {} workers × {} in flight against a {} ms provider: {rate:.2} questions/s, {:.0}% of the ideal {ideal:.2} ({failed} failed)",
        o.workers,
        o.concurrency,
        o.delay_ms,
        100.0 * rate / ideal
    );
    local.shutdown().await;
    Ok(())
}
