//! The kinds of job and what a worker does with each.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::MarkingConfig;
use super::failure::FailureCode;
use super::marker::Marker;
use super::{indexing, questions};
use crate::store::jobs::Job;
use crate::store::{Store, StoreError};

/// Index one page of one uploaded asset: payload `{"assetId", "page"}`.
pub const INDEX_PAGE: &str = "index_page";
/// Place a paper session's questions on its indexed pages and queue one marking job per question:
/// payload `{}` (enqueued with the last page of indexing).
pub const PLAN_QUESTIONS: &str = crate::store::automated::PLAN_QUESTIONS_JOB;
/// Mark one question: payload `{"questionId"}`.
pub const MARK_QUESTION: &str = "mark_question";

/// What every job can reach.
#[derive(Debug)]
pub struct JobContext {
    /// The database.
    pub store: Store,
    /// The configuration.
    pub config: MarkingConfig,
    /// The marker questions are marked with.
    pub marker: Arc<dyn Marker>,
}

impl JobContext {
    /// A context over `store`, with the configured marker (an error for an external marker whose
    /// settings are unusable).
    pub fn new(store: Store, config: MarkingConfig) -> Result<JobContext, String> {
        let marker = config.marker.build()?;
        Ok(JobContext {
            store,
            config,
            marker,
        })
    }
}

/// Why an attempt failed.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFailure {
    /// A stable code for the failed question.
    pub code: FailureCode,
    /// What went wrong, for the job record and the session's reader.
    pub message: String,
    /// Whether retrying cannot help (a malformed job, a file that cannot be read).
    pub permanent: bool,
    /// Structured details (the engine's errors for an answer it rejects).
    pub details: Option<serde_json::Value>,
}

impl JobFailure {
    /// A failure worth retrying.
    pub fn transient(message: impl Into<String>) -> JobFailure {
        JobFailure {
            code: FailureCode::JobFailed,
            message: message.into(),
            permanent: false,
            details: None,
        }
    }

    /// A failure no retry can mend.
    pub fn permanent(message: impl Into<String>) -> JobFailure {
        JobFailure {
            code: FailureCode::JobFailed,
            message: message.into(),
            permanent: true,
            details: None,
        }
    }

    /// The same failure under a stable code.
    pub fn with_code(mut self, code: FailureCode) -> JobFailure {
        self.code = code;
        self
    }

    /// The same failure with details.
    pub fn with_details(mut self, details: serde_json::Value) -> JobFailure {
        self.details = Some(details);
        self
    }
}

impl From<StoreError> for JobFailure {
    /// The database's own words stay in the log: the job's reader gets a plain sentence.
    fn from(e: StoreError) -> Self {
        tracing::warn!(error = %e, "a marking job could not read or write the database");
        JobFailure::transient("the database could not be read or written")
            .with_code(FailureCode::StorageFailed)
    }
}

/// Runs a claimed job. `Ok(true)`: its result was saved and the job finished; `Ok(false)`: the
/// lease was lost (`lost` set, or found at saving) and nothing was saved.
pub async fn run(
    context: Arc<JobContext>,
    job: Job,
    lost: Arc<AtomicBool>,
) -> Result<bool, JobFailure> {
    if let Some(delay) = test_delay(&job.kind) {
        eprintln!(
            "test hook: job {} ({}) running, attempt {}",
            job.id, job.kind, job.attempts
        );
        tokio::time::sleep(delay).await;
    }
    match job.kind.as_str() {
        INDEX_PAGE => indexing::run(&context, &job, &lost).await,
        PLAN_QUESTIONS => questions::plan(&context, &job, &lost).await,
        MARK_QUESTION => questions::mark(&context, &job, &lost).await,
        other => Err(JobFailure::permanent(format!("unknown job kind {other:?}"))),
    }
}

/// Records that a job failed for good, with what that means for its session.
pub async fn fail(context: &JobContext, job: &Job, failure: &JobFailure) -> Result<(), StoreError> {
    match job.kind.as_str() {
        INDEX_PAGE => indexing::fail(context, job, &failure.message).await,
        MARK_QUESTION => questions::fail(context, job, failure).await,
        _ => {
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
