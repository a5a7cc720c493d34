//! What every job can reach, and why an attempt failed. The kinds of job and their arguments are
//! [`crate::store::job_kind::JobKind`], below the store that queues them; what a worker does with
//! each kind is in `worker`, so this module depends on none of the jobs. It also holds what the
//! workers share: their [`Pulse`] and the page [`Readers`] kept between indexing jobs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use examkit_scan::{IndexOptions, Indexer};

use super::MarkingConfig;
use super::failure::FailureCode;
use super::marker::Marker;
use super::qualification::Standing;
use crate::store::{Store, StoreError, now_ms};

/// What every job can reach.
#[derive(Debug)]
pub struct JobContext {
    /// The database.
    pub store: Store,
    /// The configuration.
    pub config: MarkingConfig,
    /// The marker questions are marked with.
    pub marker: Arc<dyn Marker>,
    /// Beaten by the workers running on this context.
    pub pulse: Pulse,
    /// Page readers kept between indexing jobs.
    pub readers: Readers,
    /// The seeded reference questions marked between live ones, when configured.
    pub seeds: Option<Box<dyn LiveSeeds>>,
}

/// The seeded reference questions marked between live ones (`crate::calibration::seeds`), as the
/// question jobs call them: named here by what they do, so that the jobs stay below them.
pub trait LiveSeeds: std::fmt::Debug + Send + Sync {
    /// Called as a live question is about to be marked by a marker in good `standing`: counts it
    /// and, when a seed falls due, marks, compares and saves it. `true` when a seed was counted
    /// (the standing may have changed: the caller reads it again).
    fn before_live<'a>(
        &'a self,
        context: &'a Arc<JobContext>,
        standing: &'a Standing,
        lost: &'a Arc<AtomicBool>,
    ) -> Pin<Box<dyn Future<Output = Result<bool, JobFailure>> + Send + 'a>>;
}

impl JobContext {
    /// A context over `store` marking with `marker`, with `seeds` between live questions.
    pub fn new(
        store: Store,
        config: MarkingConfig,
        marker: Arc<dyn Marker>,
        seeds: Option<Box<dyn LiveSeeds>>,
    ) -> JobContext {
        JobContext {
            store,
            config,
            marker,
            pulse: Pulse::new(),
            readers: Readers::default(),
            seeds,
        }
    }
}

/// When this process's workers last showed they are alive: each pass of a worker's loop and each
/// heartbeat of a job it runs beats it. The readiness probe reads it.
#[derive(Debug, Clone)]
pub struct Pulse(Arc<AtomicI64>);

impl Pulse {
    /// A pulse that beat now.
    pub fn new() -> Pulse {
        Pulse(Arc::new(AtomicI64::new(now_ms())))
    }

    /// Records a beat at `now` (Unix milliseconds).
    pub fn beat(&self) {
        self.0.store(now_ms(), Ordering::Relaxed);
    }

    /// The last beat, Unix milliseconds.
    pub fn last(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl Default for Pulse {
    fn default() -> Self {
        Pulse::new()
    }
}

/// Page readers kept between jobs. Each holds a Tesseract engine, whose language data takes a
/// tenth of a second or more to load: a job takes one, reads its page, and gives it back.
#[derive(Default)]
pub struct Readers {
    idle: std::sync::Mutex<Vec<Indexer>>,
}

/// Readers kept idle at most (a worker holds one at a time).
const IDLE_READERS: usize = 8;

impl Readers {
    /// A reader with `options`: a kept one, else a new one.
    pub(super) fn take(&self, options: &IndexOptions) -> Result<Indexer, JobFailure> {
        let kept = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.iter()
                .position(|r| r.options() == options)
                .map(|i| idle.swap_remove(i))
        };
        match kept {
            Some(reader) => Ok(reader),
            None => Indexer::new(options)
                .map_err(|e| JobFailure::transient(format!("the page reader cannot start: {e}"))),
        }
    }

    /// Keeps `reader` for a later job.
    pub(super) fn give(&self, reader: Indexer) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < IDLE_READERS {
            idle.push(reader);
        }
    }
}

impl std::fmt::Debug for Readers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Readers").finish_non_exhaustive()
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

/// What the reader of a job whose task panicked is told (the panic's words are logged).
pub const TASK_STOPPED: &str = "an internal error interrupted the work";

impl From<tokio::task::JoinError> for JobFailure {
    /// A task of the job panicked (or was cancelled): its words, which can hold paths and the
    /// inner state of a library, stay in the log; the reader gets [`TASK_STOPPED`], and the job
    /// is tried again.
    fn from(e: tokio::task::JoinError) -> Self {
        tracing::error!(error = %e, "a marking job's task stopped unexpectedly");
        JobFailure::transient(TASK_STOPPED)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicked_task_reaches_the_reader_as_a_fixed_sentence() {
        let joined = tokio::task::spawn_blocking(|| {
            panic!("cannot open /var/lib/examkit/scans/secret.pdf: state 0x7f3a")
        })
        .await;
        let failure = JobFailure::from(joined.expect_err("the task panicked"));
        assert_eq!(failure.message, TASK_STOPPED);
        assert_eq!(failure.code, FailureCode::JobFailed);
        assert!(!failure.permanent, "tried again");
        assert!(failure.details.is_none());
    }
}
