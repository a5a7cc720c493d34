//! How long a worker waits to claim a job from the database queue, with several workers claiming
//! from a deep queue at once.
//!
//! ```text
//! cargo run --release -p examkit --example queue_bench -- [DATABASE_URL] [--jobs 10000] [--workers 4]
//! ```
//!
//! Without a URL it uses a fresh SQLite file in a temporary directory; a `postgres://` URL must
//! name an empty database (the queue's tables are created by the migrations). Each worker claims
//! a job, finishes it in a write transaction (as a real job saves its result) and claims the next,
//! until the queue is empty. It prints the claim latency (p50, p99, max) and the jobs per second.

use std::time::{Duration, Instant};

use examkit::store::job_kind::{JobKind, MarkQuestion};
use examkit::store::{Store, now_ms};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut url = None;
    let mut jobs = 10_000usize;
    let mut workers = 4usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--jobs" => jobs = args.next().and_then(|v| v.parse().ok()).unwrap_or(jobs),
            "--workers" => workers = args.next().and_then(|v| v.parse().ok()).unwrap_or(workers),
            other => url = Some(other.to_owned()),
        }
    }
    let dir = tempfile::tempdir()?;
    let url = url.unwrap_or_else(|| format!("sqlite://{}/bench.db?mode=rwc", dir.path().display()));
    let store = Store::open(&url).await?;
    let user = store.create_user("bench", true, false).await?.id;
    let session = store
        .create_automated_session(&user, "bench", None)
        .await?
        .id;
    let started = Instant::now();
    for chunk in (0..jobs).collect::<Vec<_>>().chunks(1000) {
        let batch: Vec<JobKind> = chunk
            .iter()
            .map(|i| {
                JobKind::MarkQuestion(MarkQuestion {
                    question_id: format!("q{i}"),
                })
            })
            .collect();
        let mut tx = store.begin_write().await?;
        Store::enqueue_jobs(&mut tx, &session, &user, &batch, 3, now_ms()).await?;
        tx.commit().await?;
    }
    println!(
        "{} jobs enqueued in {:.2} s ({})",
        jobs,
        started.elapsed().as_secs_f64(),
        if url.starts_with("sqlite") {
            "SQLite"
        } else {
            "PostgreSQL"
        }
    );
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..workers {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let asked = Instant::now();
                let claimed = store
                    .claim_job(&format!("bench-{w}"), now_ms(), 60_000)
                    .await;
                let waited = asked.elapsed();
                let Ok(Some(job)) = claimed else { break };
                latencies.push(waited);
                let Ok(mut tx) = store.begin_write().await else {
                    break;
                };
                if Store::finish_job(&mut tx, &job, now_ms()).await.is_err()
                    || tx.commit().await.is_err()
                {
                    break;
                }
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await?);
    }
    let elapsed = started.elapsed();
    all.sort();
    println!(
        "{workers} workers claimed and finished {} jobs in {:.2} s: {:.0} jobs/s",
        all.len(),
        elapsed.as_secs_f64(),
        all.len() as f64 / elapsed.as_secs_f64()
    );
    println!(
        "claim latency: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(percentile(&all, 50.0)),
        ms(percentile(&all, 99.0)),
        ms(all.last().copied().unwrap_or_default())
    );
    store.close().await;
    Ok(())
}
