//! Search benchmark: fills a database with a large generated bank, indexes it, serves it on
//! loopback and measures `GET /v1/questions` latencies (p50, p99) for a text query, a filtered
//! query and a random sample. Run by `service/bench/search.sh`.
//!
//! ```text
//! search_bench <database-url> [--questions N] [--requests N] [--concurrency N | --rate N]
//!              [--only TEXT]
//! ```
//!
//! `--concurrency N` (default 4) keeps N requests in flight, each client sending its next request
//! when its last reply is read: latencies there include the wait behind the others, and the
//! req/s column is the throughput at that concurrency. `--rate N` sends N requests a second on a
//! fixed schedule instead, never waiting for replies: the latency of a server under that load
//! (the sender reports how far it ran behind its schedule).
//! `--only` measures just the cases whose name contains `TEXT`.
//!
//! The bank is the synthetic one of `examkit_bank::generate` (seed 1), imported with the bank
//! importer (which indexes it in its transaction) unless the database already holds that many
//! questions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use examkit::auth::{Scope, generate_key};
use examkit::server::AppState;
use examkit::store::Store;
use examkit::store::rate::Limits;

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Generates the synthetic bank (`examkit_bank::generate`, seed 1) and imports it with the bank
/// importer, which indexes it in the import transaction.
async fn import_generated(
    store: &Store,
    questions: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let memory = examkit_bank::generate::generate(questions, 1)?;
    let bank = examkit_bank::load::load_memory(&memory, &examkit_bank::Facets::default())
        .map_err(|e| format!("the generated bank does not load: {} error(s)", e.len()))?;
    println!(
        "generated and checked {questions} questions in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let summary = store.import_bank(&bank).await?;
    println!(
        "imported and indexed them in {:.1} s ({} questions added)",
        started.elapsed().as_secs_f64(),
        summary.questions_added
    );
    Ok(())
}

/// How requests are sent.
#[derive(Clone, Copy)]
enum Load {
    /// This many clients, each sending its next request when the last one's reply is read.
    Closed(usize),
    /// Requests sent on a fixed schedule of this many per second, however slow the replies, so
    /// a slow reply holds back no later request and queueing in the server shows in the
    /// latencies.
    Rate(usize),
}

async fn fetch(client: &reqwest::Client, url: &str, auth: &str) -> Result<(), String> {
    let resp = client
        .get(url)
        .header("authorization", auth)
        .send()
        .await
        .map_err(|e| format!("a request failed: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("a request failed: {}", resp.status()));
    }
    resp.bytes()
        .await
        .map_err(|e| format!("a reply failed: {e}"))?;
    Ok(())
}

/// `requests` requests from `concurrency` clients, each waiting for its last reply.
async fn closed_loop(
    client: &reqwest::Client,
    url: &str,
    auth: &str,
    requests: usize,
    concurrency: usize,
) -> Result<Vec<Duration>, Box<dyn std::error::Error>> {
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let client = client.clone();
        let url = url.to_owned();
        let auth = auth.to_owned();
        let per = requests / concurrency;
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::with_capacity(per);
            for _ in 0..per {
                let started = Instant::now();
                fetch(&client, &url, &auth).await?;
                times.push(started.elapsed());
            }
            Ok::<_, String>(times)
        }));
    }
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await??);
    }
    Ok(times)
}

/// `requests` requests sent `per_second` a second on a fixed schedule, each timed from the
/// moment it is sent. The sender never waits for replies, so a slow reply delays no later
/// request; how far sends ran behind the schedule (timer wake-ups, a busy machine) is returned
/// too, the greatest lateness.
async fn open_loop(
    client: &reqwest::Client,
    url: &str,
    auth: &str,
    requests: usize,
    per_second: usize,
) -> Result<(Vec<Duration>, Duration), Box<dyn std::error::Error>> {
    let interval = Duration::from_secs_f64(1.0 / per_second as f64);
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(requests);
    let mut late = Duration::ZERO;
    for i in 0..requests {
        let scheduled = start + interval * i as u32;
        tokio::time::sleep_until(scheduled.into()).await;
        late = late.max(scheduled.elapsed());
        let client = client.clone();
        let url = url.to_owned();
        let auth = auth.to_owned();
        tasks.push(tokio::spawn(async move {
            let sent = Instant::now();
            fetch(&client, &url, &auth).await?;
            Ok::<_, String>(sent.elapsed())
        }));
    }
    let mut times = Vec::with_capacity(requests);
    for task in tasks {
        times.push(task.await??);
    }
    Ok((times, late))
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let url = args
        .get(1)
        .ok_or("usage: search_bench <database-url> [options]")?;
    let questions = arg(&args, "--questions", 100_000);
    let requests = arg(&args, "--requests", 2000);
    let load = match arg(&args, "--rate", 0) {
        0 => Load::Closed(arg(&args, "--concurrency", 4).max(1)),
        per_second => Load::Rate(per_second),
    };
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_default();
    let store = Store::open(url).await?;
    if store.bank_question_count().await? < questions as i64 {
        import_generated(&store, questions).await?;
    }
    let indexed: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM search_questions")
        .fetch_one(store.pool())
        .await?;
    println!("{indexed} questions in the search index");
    let unlimited = Limits {
        key_per_minute: i64::MAX / 4,
        account_per_minute: i64::MAX / 4,
        key_per_day: i64::MAX / 4,
        account_per_day: i64::MAX / 4,
        key_writes_per_minute: i64::MAX / 4,
        account_writes_per_minute: i64::MAX / 4,
    };
    let user = store.create_user("Benchmark", true, false).await?;
    let new = generate_key().map_err(|e| format!("randomness: {e}"))?;
    store
        .create_key(
            &user.id,
            "bench",
            &new.prefix,
            &new.fingerprint,
            &[Scope::QuestionsRead],
            examkit::store::now_ms() + 86_400_000,
        )
        .await?;
    let state = Arc::new(AppState::new(store.clone(), unlimited));
    let (addr, server) =
        examkit::server::bind(state, "127.0.0.1:0".parse()?, std::future::pending()).await?;
    tokio::spawn(server);
    let client = examkit::tls::client();
    let auth = format!("Bearer {}", new.secret);
    let cases = [
        ("text query", "q=tangent%20curve&limit=30"),
        ("text query, one word", "q=probability&limit=30"),
        (
            "text query, filtered",
            "q=probability&board=edexcel&limit=30",
        ),
        ("text query, second page", "q=probability&limit=30&cursor="),
        ("text query, metadata word", "q=edexcel&limit=30"),
        (
            "filtered query",
            "board=edexcel&level=a-level&topic=integration&limit=30",
        ),
        ("filtered query, broad", "subject=maths&minMarks=6&limit=30"),
        ("random sample", "random=true&limit=30"),
        (
            "random sample, filtered",
            "random=true&subject=further-maths&difficulty=3&limit=30",
        ),
        ("second page (cursor)", "subject=maths&limit=30&cursor="),
    ];
    match load {
        Load::Closed(concurrency) => println!(
            "{requests} requests per case, {concurrency} concurrent, loopback, release build"
        ),
        Load::Rate(per_second) => println!(
            "{requests} requests per case, sent at {per_second} per second without waiting for \
             replies, loopback, release build"
        ),
    }
    println!(
        "{:<28} {:>9} {:>9} {:>9} {:>7} {:>7}",
        "case", "p50 ms", "p99 ms", "max ms", "req/s", "items"
    );
    let mut latest_send = Duration::ZERO;
    for (name, query) in cases
        .into_iter()
        .filter(|(name, _)| name.contains(only.as_str()))
    {
        let mut query = query.to_owned();
        if let Some(first_page) = query.strip_suffix("&cursor=") {
            let first: serde_json::Value = client
                .get(format!("http://{addr}/v1/questions?{first_page}"))
                .header("authorization", &auth)
                .send()
                .await?
                .json()
                .await?;
            query.push_str(first["nextCursor"].as_str().ok_or("no cursor")?);
        }
        let url = format!("http://{addr}/v1/questions?{query}");
        // Warm-up: a tenth of the measured requests (at least 20), one at a time, so a case that
        // reads scattered rows (a random sample) starts from the cache it will run in.
        let mut items = 0;
        for _ in 0..(requests / 10).max(20) {
            let body: serde_json::Value = client
                .get(&url)
                .header("authorization", &auth)
                .send()
                .await?
                .json()
                .await?;
            items = body["items"].as_array().map_or(0, Vec::len);
        }
        let started = Instant::now();
        let mut times = match load {
            Load::Closed(concurrency) => {
                closed_loop(&client, &url, &auth, requests, concurrency).await?
            }
            Load::Rate(per_second) => {
                let (times, late) = open_loop(&client, &url, &auth, requests, per_second).await?;
                latest_send = latest_send.max(late);
                times
            }
        };
        let per_second = times.len() as f64 / started.elapsed().as_secs_f64();
        times.sort();
        println!(
            "{:<28} {:>9.2} {:>9.2} {:>9.2} {:>7.0} {:>7}",
            name,
            percentile(&times, 0.50),
            percentile(&times, 0.99),
            percentile(&times, 1.0),
            per_second,
            items
        );
    }
    if let Load::Rate(_) = load {
        println!(
            "sends ran at most {:.2} ms behind the schedule",
            latest_send.as_secs_f64() * 1000.0
        );
    }
    Ok(())
}
