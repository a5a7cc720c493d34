//! The vision-model marker's throughput and the service's own cost per question, against a stub
//! OpenAI-compatible provider that this program starts and that answers after a fixed delay.
//!
//! ```text
//! OMP_THREAD_LIMIT=1 cargo run --release -p examkit --example vision_bench -- \
//!     [--questions 24] [--workers 4] [--concurrency 4] [--delay-ms 2000] [--rounds 6]
//! ```
//!
//! A paper of the sample bank's questions is saved and exported in a private examkit, answered in
//! a handwriting font by the scan maker, uploaded and marked once (the stub answering at once).
//! Then:
//! 1. **The service's own cost per question**: question 1 is marked again with twelve work pages
//!    selected, five times, one at a time, and each run's `durationMs − latencyMs` (loading, page
//!    images, placement, the engine, saving; the provider's time set aside) is printed.
//! 2. **Throughput**: with the stub answering after `--delay-ms`, `rounds × workers × concurrency`
//!    questions are queued at once and timed until the last is marked; the ideal is
//!    `workers × concurrency / delay` questions a second.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use examkit::calibration::local::Local;
use examkit::marking::openai::{OpenAiConfig, StructuredOutput};
use examkit::marking::{MarkerChoice, MarkingConfig};
use reqwest::Method;
use serde_json::{Value, json};
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

/// The stub's answer to one request: every criterion withheld as blank, on the first work page,
/// with one `not_met` check per condition.
fn stub_answer(body: &Value) -> Value {
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
    let page = decision["pageId"]["enum"][0].as_str().unwrap_or_default();
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
    let content = json!({ "transcription": "", "rubric": null, "decisions": decisions });
    json!({
        "id": "bench", "object": "chat.completion", "created": 0, "model": "bench",
        "choices": [{ "index": 0, "finish_reason": "stop",
                      "message": { "role": "assistant", "content": content.to_string() } }],
        "usage": { "prompt_tokens": 1000, "completion_tokens": 200 },
    })
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
    let session = local.session(paper_id).await?;
    let session_id = session["id"].as_str().ok_or("session id")?.to_owned();
    let scheme_id = session["assets"][0]["id"]
        .as_str()
        .ok_or("scheme id")?
        .to_owned();
    let work = local
        .upload(&session_id, "scan.pdf", "application/pdf", scan)
        .await?;
    let work_id = work["id"].as_str().ok_or("work id")?.to_owned();
    let pages = work["pageCount"].as_u64().ok_or("page count")?;
    local.start_marking(&session_id).await?;
    let view = wait_for(&local, &session_id, o.questions).await?;
    let listed = view["questions"].as_array().ok_or("questions")?.clone();
    println!(
        "paper: {} questions on {pages} pages, marked once ({} failed)",
        listed.len(),
        listed.iter().filter(|q| q["status"] == "failed").count()
    );

    // 1. The service's own cost for a question over twelve work pages.
    let first = listed
        .iter()
        .find(|q| q["label"] == "1")
        .ok_or("question 1")?;
    let scheme_pages = first["sourceDocuments"]["pageSelections"][&scheme_id].clone();
    let twelve: Vec<u64> = (1..=pages.min(12)).collect();
    let body = json!({
        "label": "1", "workAssetIds": [work_id], "schemeAssetIds": [scheme_id],
        "pageSelections": { work_id.as_str(): twelve, scheme_id.as_str(): scheme_pages },
    });
    let path = format!("/v1/marking/sessions/{session_id}/questions");
    let mut own = Vec::new();
    let mut listed_now = listed.len();
    for _ in 0..5 {
        let (status, answer) = local
            .request(Method::POST, &path, Some(&body), true)
            .await?;
        if status != 202 {
            return Err(format!("marking question 1 again: {status} {answer}").into());
        }
        listed_now += 1;
        let view = wait_for(&local, &session_id, listed_now).await?;
        let id = &answer["question"]["id"];
        let question = view["questions"]
            .as_array()
            .and_then(|qs| qs.iter().find(|q| &q["id"] == id))
            .ok_or("the new question")?;
        let run = &question["markerRun"];
        let (total, provider) = (
            run["durationMs"].as_f64().ok_or("durationMs")?,
            run["latencyMs"].as_f64().ok_or("latencyMs")?,
        );
        own.push(total - provider);
    }
    println!(
        "service's own cost per {}-page question (loading, page images, placement, engine, saving): median {:.0} ms, min {:.0} ms, max {:.0} ms over {} runs",
        twelve.len(),
        median(own.clone()),
        own.iter().copied().fold(f64::INFINITY, f64::min),
        own.iter().copied().fold(0.0, f64::max),
        own.len()
    );

    // 2. Throughput against a provider answering after a fixed delay.
    delay.store(o.delay_ms, Ordering::SeqCst);
    let total = o.rounds * o.workers * o.concurrency;
    let started = Instant::now();
    for n in 0..total {
        let q = &listed[n % listed.len()];
        let body = json!({
            "label": q["label"], "workAssetIds": [work_id], "schemeAssetIds": [scheme_id],
            "pageSelections": q["sourceDocuments"]["pageSelections"],
        });
        let (status, answer) = local
            .request(Method::POST, &path, Some(&body), true)
            .await?;
        if status != 202 {
            return Err(format!("queueing: {status} {answer}").into());
        }
    }
    let view = wait_for(&local, &session_id, listed_now + total).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let failed = view["questions"].as_array().map_or(0, |qs| {
        qs.iter().filter(|q| q["status"] == "failed").count()
    });
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
