//! The kinds of job, what every job can reach, and why an attempt failed. What a worker does with
//! each kind is in [`super::worker`], so this module depends on none of the jobs it names.

use std::sync::Arc;

use super::MarkingConfig;
use super::failure::FailureCode;
use super::marker::Marker;
use crate::store::{Store, StoreError};

/// Index one page of one uploaded asset: payload `{"assetId", "page"}`.
pub const INDEX_PAGE: &str = "index_page";
/// Place a paper session's questions on its indexed pages and queue one marking job per question:
/// payload `{}` (enqueued with the last page of indexing).
pub const PLAN_QUESTIONS: &str = crate::store::automated::PLAN_QUESTIONS_JOB;
/// Mark one question: payload `{"questionId"}`.
pub const MARK_QUESTION: &str = "mark_question";
/// Read the name written on a named copy's cover: payload `{"assetId", "page"}` (enqueued with
/// the cover's index).
pub const READ_NAME: &str = crate::store::class_set_names::READ_NAME_JOB;

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
    pub pulse: super::worker::Pulse,
    /// Page readers kept between indexing jobs.
    pub readers: super::indexing::Readers,
    /// The seeded reference questions marked between live ones, when configured.
    pub seeds: Option<crate::calibration::seeds::Seeds>,
}

impl JobContext {
    /// A context over `store`, with the configured marker (an error for an external marker whose
    /// settings are unusable).
    pub fn new(store: Store, config: MarkingConfig) -> Result<JobContext, String> {
        let marker = config.marker.build()?;
        Ok(JobContext::with_marker(store, config, marker))
    }

    /// A context over `store` marking with `marker`.
    pub fn with_marker(store: Store, config: MarkingConfig, marker: Arc<dyn Marker>) -> JobContext {
        let seeds = config
            .seeds
            .clone()
            .map(crate::calibration::seeds::Seeds::new);
        JobContext {
            store,
            config,
            marker,
            pulse: super::worker::Pulse::new(),
            readers: super::indexing::Readers::default(),
            seeds,
        }
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
