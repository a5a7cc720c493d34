//! Workers: tasks that claim jobs from the database queue and run them.
//!
//! A claimed job is read once ([`JobKind::decode`]): what it does decides where it runs, what it
//! is given and what its failure means. A job that cannot be read (an unknown kind, a malformed
//! payload) fails for good at once, with the reason as its error.
//!
//! A worker runs one indexing or planning job at a time and up to `marker_concurrency` question
//! marking jobs beside it (each mostly waits on its marker), keeps each job's lease alive with
//! heartbeats while it runs, and stops claiming when told to stop (SIGTERM). A job still running then has a grace period
//! ([`SHUTDOWN_GRACE`] or the lease, whichever is longer) to finish; past that it is released (queued again, the attempt not counted) and its result, if it
//! still comes, is not saved: saving needs the lease token that the release cleared.

use super::failure::FailureCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

use super::MarkingConfig;
use super::jobs::{JobContext, JobFailure, LiveSeeds, Pulse};
use super::{indexing, questions};
use crate::store::job_kind::{JobKind, JobKindError};
use crate::store::jobs::{Job, Retry};
use crate::store::{Store, StoreError, now_ms};

/// The least time a running job is given to finish at shutdown (the lease, if longer).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Running workers and the switch that stops them.
#[derive(Debug)]
pub struct Workers {
    handles: Vec<JoinHandle<()>>,
    pulse: Pulse,
    stop: watch::Sender<bool>,
}

impl Workers {
    /// How many workers run.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Whether no worker runs.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// The workers' pulse.
    pub fn pulse(&self) -> Pulse {
        self.pulse.clone()
    }

    /// Stops claiming, lets running jobs finish or releases them (see the module docs), and waits
    /// for every worker to end.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for handle in self.handles {
            let _ = handle.await;
        }
    }
}

/// A name for this process's workers in lease records: the process id and a random suffix.
fn worker_name(n: usize) -> String {
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!(
        "pid{}-{}-w{n}",
        std::process::id(),
        suffix.get(..8).unwrap_or("")
    )
}

/// Starts `config.workers` workers on `store` marking with `marker`, and with the seeded reference
/// questions `seeds` between live ones when given. A deployment's workers are started as
/// configured by [`super::launch::spawn`]; calibration's private service starts its own here with
/// the marker it records and no seeds.
pub fn spawn_with(
    store: Store,
    config: MarkingConfig,
    marker: Arc<dyn super::marker::Marker>,
    seeds: Option<Box<dyn LiveSeeds>>,
) -> Workers {
    start(JobContext::new(store, config, marker, seeds))
}

fn start(context: JobContext) -> Workers {
    let (stop, stopped) = watch::channel(false);
    let context = Arc::new(context);
    let config = context.config.clone();
    let pulse = context.pulse.clone();
    let handles = (0..config.workers)
        .map(|n| {
            let context = context.clone();
            let stopped = stopped.clone();
            tokio::spawn(async move { work(context, worker_name(n), stopped).await })
        })
        .collect();
    Workers {
        handles,
        stop,
        pulse,
    }
}

async fn work(context: Arc<JobContext>, name: String, mut stopped: watch::Receiver<bool>) {
    tracing::info!(worker = %name, "worker started");
    let config = &context.config;
    // One slot per job in flight: marking jobs run as tasks holding a slot, other jobs run here.
    let slots = Arc::new(Semaphore::new(config.marker_concurrency.max(1)));
    let mut marking = JoinSet::new();
    while !*stopped.borrow() {
        context.pulse.beat();
        while marking.try_join_next().is_some() {}
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            changed = stopped.changed() => {
                if changed.is_err() {
                    break; // The switch is gone: nothing can stop this worker any more.
                }
                continue;
            }
        };
        let claimed = context
            .store
            .claim_job(&name, now_ms(), config.lease_ms())
            .await;
        match claimed {
            Ok(Some(job)) => {
                let kind = JobKind::decode(&job.kind, &job.payload);
                if matches!(kind, Ok(JobKind::MarkQuestion(_) | JobKind::ReadName(_))) {
                    // A model's answer takes seconds: these run beside the claiming loop.
                    let (context, name) = (context.clone(), name.clone());
                    let mut stopped = stopped.clone();
                    marking.spawn(async move {
                        run_one(&context, &name, job, kind, &mut stopped).await;
                        drop(slot);
                    });
                } else {
                    run_one(&context, &name, job, kind, &mut stopped).await;
                    drop(slot);
                }
            }
            Ok(None) => {
                drop(slot);
                tokio::select! {
                    _ = tokio::time::sleep(config.poll) => {}
                    _ = stopped.changed() => {}
                }
            }
            Err(e) => {
                drop(slot);
                tracing::warn!(worker = %name, error = %e, "claiming a job failed");
                tokio::select! {
                    _ = tokio::time::sleep(config.poll * 4) => {}
                    _ = stopped.changed() => {}
                }
            }
        }
    }
    // Stopping: the marking jobs in flight finish within their grace period, or are released.
    while marking.join_next().await.is_some() {}
    tracing::info!(worker = %name, "worker stopped");
}

/// Runs a claimed job, `kind` as read from it, to its end or to shutdown.
async fn run_one(
    context: &Arc<JobContext>,
    name: &str,
    job: Job,
    kind: Result<JobKind, JobKindError>,
    stopped: &mut watch::Receiver<bool>,
) {
    let store = &context.store;
    let config = &context.config;
    tracing::info!(worker = %name, job = %job.id, kind = %job.kind, attempt = job.attempts, "job claimed");
    if job.attempts > job.max_attempts {
        // Its workers died with it, attempt after attempt.
        let failure = JobFailure::permanent(format!(
            "the job's worker stopped before finishing it {} times",
            job.max_attempts
        ))
        .with_code(FailureCode::WorkerLost);
        give_up(context, &job, kind.as_ref().ok(), &failure).await;
        return;
    }
    let started = std::time::Instant::now();
    let kind = match kind {
        Ok(kind) => kind,
        Err(unreadable) => {
            let failure = JobFailure::permanent(unreadable.to_string());
            finish(context, name, &job, None, Err(failure), started).await;
            return;
        }
    };
    let lost = Arc::new(AtomicBool::new(false));
    let heartbeat = heartbeat(context, &job, &lost);
    let run = run(context.clone(), job.clone(), kind.clone(), lost.clone());
    tokio::pin!(run);
    let result = tokio::select! {
        result = &mut run => Some(result),
        _ = stopped.changed() => {
            // Shutting down: the job has a grace period to finish.
            tokio::time::timeout(config.lease.max(SHUTDOWN_GRACE), &mut run)
                .await
                .ok()
        }
    };
    heartbeat.abort();
    let Some(result) = result else {
        lost.store(true, Ordering::SeqCst);
        match store.release_job(&job, now_ms()).await {
            Ok(_) => tracing::info!(job = %job.id, "job released at shutdown"),
            Err(e) => tracing::warn!(job = %job.id, error = %e, "releasing a job failed"),
        }
        return;
    };
    finish(context, name, &job, Some(&kind), result, started).await;
}

/// Records how an attempt of `job` (of `kind`, `None` when it cannot be read) that ran to its end
/// went: done, lost, failed for good, or queued again after a delay.
async fn finish(
    context: &Arc<JobContext>,
    name: &str,
    job: &Job,
    kind: Option<&JobKind>,
    result: Result<bool, JobFailure>,
    started: std::time::Instant,
) {
    let store = &context.store;
    let config = &context.config;
    let measured = |outcome| crate::telemetry::job(&job.kind, outcome, started.elapsed());
    match result {
        Ok(true) => {
            measured("succeeded");
            tracing::info!(worker = %name, job = %job.id, "job done");
        }
        Ok(false) => {
            measured("lost");
            tracing::warn!(worker = %name, job = %job.id, "lease lost: the result was not saved");
        }
        Err(failure) if failure.permanent => {
            measured("failed");
            give_up(context, job, kind, &failure).await;
        }
        Err(failure) => {
            match store
                .retry_job(job, &failure.message, now_ms(), config.backoff_ms())
                .await
            {
                Ok(Retry::Queued) => {
                    measured("retry");
                    tracing::warn!(job = %job.id, error = %failure.message, "job attempt failed; queued again");
                }
                Ok(Retry::Failed) => {
                    measured("failed");
                    give_up(context, job, kind, &failure).await;
                }
                Ok(Retry::LeaseLost) => {
                    tracing::warn!(job = %job.id, "lease lost before the failure was recorded");
                }
                Err(e) => tracing::warn!(job = %job.id, error = %e, "recording a failure failed"),
            }
        }
    }
}

/// Renews `job`'s lease every third of it while the job runs, beating the pulse; a renewal
/// refused means the lease is lost, which `lost` then says.
fn heartbeat(context: &Arc<JobContext>, job: &Job, lost: &Arc<AtomicBool>) -> JoinHandle<()> {
    let config = &context.config;
    let store = context.store.clone();
    let pulse = context.pulse.clone();
    let lost = lost.clone();
    let job = job.clone();
    let lease_ms = config.lease_ms();
    let every = (config.lease / 3).max(Duration::from_millis(50));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            match store
                .heartbeat_job(&job.id, &job.lease_token, now_ms(), lease_ms)
                .await
            {
                Ok(true) => pulse.beat(),
                Ok(false) => {
                    lost.store(true, Ordering::SeqCst);
                    break;
                }
                Err(e) => tracing::warn!(job = %job.id, error = %e, "heartbeat failed"),
            }
        }
    })
}

async fn give_up(
    context: &Arc<JobContext>,
    job: &Job,
    kind: Option<&JobKind>,
    failure: &JobFailure,
) {
    tracing::warn!(job = %job.id, error = %failure.message, "job failed");
    if let Err(e) = fail(context, job, kind, failure).await {
        tracing::warn!(job = %job.id, error = %e, "recording a failed job failed");
    }
}

/// Runs a claimed job, of `kind`. `Ok(true)`: its result was saved and the job finished;
/// `Ok(false)`: the lease was lost (`lost` set, or found at saving) and nothing was saved.
async fn run(
    context: Arc<JobContext>,
    job: Job,
    kind: JobKind,
    lost: Arc<AtomicBool>,
) -> Result<bool, JobFailure> {
    if let Some(delay) = test_delay(&job.kind) {
        eprintln!(
            "test hook: job {} ({}) running, attempt {}",
            job.id, job.kind, job.attempts
        );
        tokio::time::sleep(delay).await;
    }
    match &kind {
        JobKind::IndexPage(page) => indexing::run(&context, &job, page, &lost).await,
        JobKind::PlanQuestions => questions::plan(&context, &job, &lost).await,
        JobKind::MarkQuestion(question) => questions::mark(&context, &job, question, &lost).await,
        JobKind::ReadName(cover) => super::names::run(&context, &job, cover, &lost).await,
    }
}

/// Records that a job (of `kind`, `None` when it cannot be read) failed for good, with what that
/// means for its session.
async fn fail(
    context: &JobContext,
    job: &Job,
    kind: Option<&JobKind>,
    failure: &JobFailure,
) -> Result<(), StoreError> {
    match kind {
        Some(JobKind::IndexPage(page)) => {
            indexing::fail(context, job, page, &failure.message).await
        }
        Some(JobKind::MarkQuestion(question)) => {
            questions::fail(context, job, question, failure).await
        }
        Some(JobKind::ReadName(cover)) => {
            super::names::fail(context, job, cover, &failure.message).await
        }
        // Planning leaves nothing else to record, and a job that cannot be read names nothing.
        Some(JobKind::PlanQuestions) | None => {
            let mut tx = context.store.begin_write().await?;
            Store::fail_job_in(&mut tx, job, &failure.message, crate::store::now_ms()).await?;
            tx.commit().await?;
            Ok(())
        }
    }
}

/// Test hook for the queue's crash tests: when `EXAMKIT_TEST_JOB_DELAY_MS` is set, every job (or
/// only the kinds listed, comma-separated, in `EXAMKIT_TEST_JOB_DELAY_KINDS`) announces itself on
/// standard error and waits that many milliseconds before it runs, so a test can kill the worker
/// mid-job. Never set it in production.
fn test_delay(kind: &str) -> Option<std::time::Duration> {
    type Hook = Option<(std::time::Duration, Option<Vec<String>>)>;
    static HOOK: std::sync::OnceLock<Hook> = std::sync::OnceLock::new();
    let (delay, kinds) = HOOK
        .get_or_init(|| {
            let delay = std::env::var("EXAMKIT_TEST_JOB_DELAY_MS")
                .ok()
                .and_then(|ms| ms.trim().parse::<u64>().ok())
                .map(std::time::Duration::from_millis)?;
            let kinds = std::env::var("EXAMKIT_TEST_JOB_DELAY_KINDS").ok().map(|k| {
                k.split(',')
                    .map(|kind| kind.trim().to_owned())
                    .filter(|kind| !kind.is_empty())
                    .collect()
            });
            Some((delay, kinds))
        })
        .as_ref()?;
    match kinds {
        Some(kinds) if !kinds.iter().any(|k| k == kind) => None,
        _ => Some(*delay),
    }
}
