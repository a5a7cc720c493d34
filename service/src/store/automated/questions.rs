//! Marking questions of automated sessions: queued with their request, marked by a worker (the
//! result saved in the transaction that finishes the job), failed with an error, or cancelled.
//!
//! Statuses: `queued` → `running` → `completed` | `needs_review` | `failed` | `cancelled`.

use sqlx::FromRow;

use super::allowance::seconds_to_next_utc_day;
use crate::store::job_kind::{JobKind, MarkQuestion};
use crate::store::jobs::Job;
use crate::store::marking::QuestionData;
use crate::store::words::QuestionStatus;
use crate::store::{Store, StoreError, WriteTx, now_ms};

/// The most questions one session may hold (not counting failed or cancelled ones).
pub const MAX_QUESTIONS_PER_SESSION: i64 = 24;

/// A question to queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewQuestion {
    /// Its label.
    pub label: String,
    /// The request (`workAssetIds`, `schemeAssetIds`, `pageSelections`), JSON.
    pub request_json: String,
    /// A failure known before marking (the question is saved `failed` with it, and not queued).
    pub failed: Option<String>,
    /// A question that cannot be marked until a person acts (its page was not scanned): saved
    /// `needs_review` with this result, nothing awarded and every mark possible, and not queued.
    pub unmarked: Option<Unmarked>,
}

/// The result of a question saved `needs_review` without marking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmarked {
    /// The result (its review flags say why), JSON.
    pub result_json: String,
    /// The question's marks.
    pub max_marks: i64,
}

/// What queueing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueOutcome {
    /// Queued: the new questions' ids, in order.
    Queued(Vec<String>),
    /// A label is already queued, running or marked in the session.
    DuplicateLabel(String),
    /// The session would hold more than [`MAX_QUESTIONS_PER_SESSION`] questions.
    TooManyQuestions,
    /// Today's allowance of questions would be exceeded.
    AllowanceExceeded {
        /// Questions used today.
        used: i64,
        /// Seconds until it renews.
        retry_after: i64,
    },
}

/// What cancelling did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelOutcome {
    /// The question is cancelled now.
    Cancelled,
    /// It had already ended with this status.
    Finished(String),
    /// No such question of this account.
    NotFound,
}

/// A question being marked: what its job needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionWork {
    /// The question's id.
    pub id: String,
    /// The session's id.
    pub session_id: String,
    /// The label.
    pub label: String,
    /// Its status.
    pub status: String,
    /// The request, JSON.
    pub request_json: String,
}

/// A question's row as [`Store::question_work`] reads it.
#[derive(Debug, Clone, FromRow)]
struct WorkRow {
    id: String,
    session_id: String,
    label: String,
    status: QuestionStatus,
    request_json: Option<String>,
}

/// A question saved before requests were recorded has the empty request.
impl From<WorkRow> for QuestionWork {
    fn from(row: WorkRow) -> QuestionWork {
        QuestionWork {
            id: row.id,
            session_id: row.session_id,
            label: row.label,
            status: row.status.as_str().to_owned(),
            request_json: row.request_json.unwrap_or_else(|| "{}".into()),
        }
    }
}

/// What cancelling a question needs of its row.
#[derive(Debug, Clone, FromRow)]
struct CancelRow {
    status: QuestionStatus,
    job_id: Option<String>,
}

/// The JSON of a question's error.
pub fn error_json(code: &str, message: &str, details: Option<serde_json::Value>) -> String {
    let mut error = serde_json::json!({ "code": code, "message": message });
    if let Some(details) = details {
        error["details"] = details;
    }
    error.to_string()
}

impl Store {
    /// Queues questions of an automated session in one transaction: the allowance, the label and
    /// count rules, the rows and their marking jobs. Questions given a known failure are saved
    /// `failed` and use no allowance.
    pub async fn queue_questions(
        &self,
        tx: &mut WriteTx,
        user_id: &str,
        session_id: &str,
        questions: &[NewQuestion],
        questions_per_day: i64,
        max_attempts: i64,
    ) -> Result<QueueOutcome, StoreError> {
        let now = now_ms();
        let live: Vec<String> = sqlx::query_scalar(
            "SELECT label FROM marking_questions WHERE session_id = $1 \
             AND status NOT IN ('failed', 'cancelled')",
        )
        .bind(session_id)
        .fetch_all(&mut **tx)
        .await?;
        for q in questions {
            if live.contains(&q.label) {
                return Ok(QueueOutcome::DuplicateLabel(q.label.clone()));
            }
        }
        let live_count = i64::try_from(live.len()).unwrap_or(i64::MAX);
        let queued = |q: &&NewQuestion| q.failed.is_none() && q.unmarked.is_none();
        let new_live = i64::try_from(questions.iter().filter(queued).count()).unwrap_or(i64::MAX);
        if live_count + new_live > MAX_QUESTIONS_PER_SESSION {
            return Ok(QueueOutcome::TooManyQuestions);
        }
        if new_live > 0
            && let Some(used) =
                Store::reserve_questions(tx, user_id, new_live, questions_per_day, now).await?
        {
            return Ok(QueueOutcome::AllowanceExceeded {
                used,
                retry_after: seconds_to_next_utc_day(now),
            });
        }
        let mut position: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(MAX(position), -1) AS BIGINT) FROM marking_questions WHERE session_id = $1",
        )
        .bind(session_id)
        .fetch_one(&mut **tx)
        .await?;
        let mut ids = Vec::with_capacity(questions.len());
        for q in questions {
            position += 1;
            let id = Store::insert_question(tx, session_id, user_id, position, q, now).await?;
            if q.failed.is_none() && q.unmarked.is_none() {
                Store::queue_question_job(tx, session_id, user_id, &id, max_attempts, now).await?;
            }
            ids.push(id);
        }
        Ok(QueueOutcome::Queued(ids))
    }

    /// Saves one question of a queueing at `position`: `failed` with its known failure,
    /// `needs_review` with its result when it cannot be marked until a person acts, or `queued`.
    async fn insert_question(
        tx: &mut WriteTx,
        session_id: &str,
        user_id: &str,
        position: i64,
        q: &NewQuestion,
        now: i64,
    ) -> Result<String, StoreError> {
        let id = uuid::Uuid::new_v4().to_string();
        let (status, error) = match (&q.failed, &q.unmarked) {
            (Some(error), _) => ("failed", Some(error.as_str())),
            (None, Some(_)) => ("needs_review", None),
            (None, None) => ("queued", None),
        };
        let unmarked = q.unmarked.as_ref().filter(|_| q.failed.is_none());
        sqlx::query(
            "INSERT INTO marking_questions (id, session_id, user_id, position, label, status, \
             revision, awarded, possible, max_marks, question_json, result_json, created_at, \
             updated_at, request_json, error_json) \
             VALUES ($1, $2, $3, $4, $5, $6, 1, 0, $10, $10, '{}', $11, $7, $7, $8, $9)",
        )
        .bind(&id)
        .bind(session_id)
        .bind(user_id)
        .bind(position)
        .bind(&q.label)
        .bind(status)
        .bind(now)
        .bind(&q.request_json)
        .bind(error)
        .bind(unmarked.map_or(0, |u| u.max_marks))
        .bind(unmarked.map_or("{}", |u| u.result_json.as_str()))
        .execute(&mut **tx)
        .await?;
        Ok(id)
    }

    /// Queues the job that marks the question `id`, and names it on the question.
    async fn queue_question_job(
        tx: &mut WriteTx,
        session_id: &str,
        user_id: &str,
        id: &str,
        max_attempts: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let job = JobKind::MarkQuestion(MarkQuestion {
            question_id: id.to_owned(),
        });
        let jobs = Store::enqueue_jobs(tx, session_id, user_id, &[job], max_attempts, now).await?;
        sqlx::query("UPDATE marking_questions SET job_id = $1 WHERE id = $2")
            .bind(jobs.first())
            .bind(id)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// A question's work, by id alone (for workers).
    pub async fn question_work(&self, id: &str) -> Result<Option<QuestionWork>, StoreError> {
        let row: Option<WorkRow> = sqlx::query_as(
            "SELECT id, session_id, label, status, request_json FROM marking_questions WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(QuestionWork::from))
    }

    /// Marks a queued question `running` (a worker began on it).
    pub async fn question_running(&self, id: &str) -> Result<(), StoreError> {
        let statement = sqlx::query(
            "UPDATE marking_questions SET status = 'running', updated_at = $1 \
             WHERE id = $2 AND status IN ('queued', 'running')",
        )
        .bind(now_ms())
        .bind(id);
        self.execute_write(crate::store::Durability::Saved, statement)
            .await?;
        Ok(())
    }

    /// Saves a marked question and finishes its job in one transaction; `false` (nothing saved)
    /// when the lease was lost or the question was cancelled meanwhile.
    pub async fn save_marked_question(
        &self,
        job: &Job,
        id: &str,
        data: &QuestionData,
        marker_json: &str,
        run_json: Option<&str>,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        if !Store::finish_job(&mut tx, job, now).await? {
            tx.rollback().await?;
            return Ok(false);
        }
        let updated = sqlx::query(
            "UPDATE marking_questions SET status = $1, awarded = $2, possible = $3, max_marks = $4, \
             question_json = $5, result_json = $6, original_json = $5, marker = $7, \
             marker_run_json = $8, error_json = NULL, updated_at = $9 \
             WHERE id = $10 AND status IN ('queued', 'running')",
        )
        .bind(data.status)
        .bind(data.awarded)
        .bind(data.possible)
        .bind(data.max_marks)
        .bind(&data.question_json)
        .bind(&data.result_json)
        .bind(marker_json)
        .bind(run_json)
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Saves a question its marker may not mark (see `crate::marking::qualification`) and
    /// finishes its job in one transaction: `needs_review` with `result_json` (nothing awarded,
    /// `max_marks` possible), no marked question and no marker, and the run record; `false`
    /// (nothing saved) when the lease was lost or the question was cancelled meanwhile.
    pub async fn save_unmarked_question(
        &self,
        job: &Job,
        id: &str,
        result_json: &str,
        max_marks: i64,
        run_json: &str,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        if !Store::finish_job(&mut tx, job, now).await? {
            tx.rollback().await?;
            return Ok(false);
        }
        let updated = sqlx::query(
            "UPDATE marking_questions SET status = 'needs_review', awarded = 0, possible = $1, \
             max_marks = $1, question_json = '{}', result_json = $2, marker = NULL, \
             marker_run_json = $3, error_json = NULL, updated_at = $4 \
             WHERE id = $5 AND status IN ('queued', 'running')",
        )
        .bind(max_marks)
        .bind(result_json)
        .bind(run_json)
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Fails a question and its job in one transaction; `false` when the lease was lost.
    pub async fn fail_marked_question(
        &self,
        job: &Job,
        id: &str,
        error_json: &str,
        message: &str,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        if !Store::fail_job_in(&mut tx, job, message, now).await? {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query(
            "UPDATE marking_questions SET status = 'failed', error_json = $1, updated_at = $2 \
             WHERE id = $3 AND status IN ('queued', 'running')",
        )
        .bind(error_json)
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Cancels a queued or running question of this account, and its job, in one transaction.
    /// A running job notices at its next heartbeat, and its result cannot be saved.
    pub async fn cancel_question(
        &self,
        user_id: &str,
        id: &str,
        reason: &str,
    ) -> Result<CancelOutcome, StoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let row: Option<CancelRow> = sqlx::query_as(
            "SELECT status, job_id FROM marking_questions WHERE id = $1 AND user_id = $2",
        )
        .bind(id)
        .bind(user_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(CancelRow {
            status,
            job_id: job,
        }) = row
        else {
            tx.rollback().await?;
            return Ok(CancelOutcome::NotFound);
        };
        if !matches!(status, QuestionStatus::Queued | QuestionStatus::Running) {
            tx.rollback().await?;
            return Ok(CancelOutcome::Finished(status.as_str().to_owned()));
        }
        sqlx::query(
            "UPDATE marking_questions SET status = 'cancelled', cancel_requested = 1, \
             error_json = $1, updated_at = $2 WHERE id = $3",
        )
        .bind(error_json(
            crate::marking::failure::FailureCode::Cancelled.as_str(),
            reason,
            None,
        ))
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if let Some(job) = job {
            sqlx::query(
                "UPDATE marking_jobs SET state = 'cancelled', lease_token = NULL, \
                 lease_expires = NULL, updated_at = $1, finished_at = $1 \
                 WHERE id = $2 AND state IN ('queued', 'running')",
            )
            .bind(now)
            .bind(&job)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(CancelOutcome::Cancelled)
    }

    /// Cancels, with `reason`, every question whose marking job no worker holds: queued, or
    /// running under a lease that has run out (its worker died). Used when a service starts with
    /// automated marking off, so no question waits for a worker that will never come. Returns how
    /// many questions were cancelled.
    pub async fn cancel_queued_questions(&self, reason: &str) -> Result<u64, StoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "UPDATE marking_questions SET status = 'cancelled', error_json = $1, updated_at = $2 \
             WHERE status IN ('queued', 'running') AND job_id IN (SELECT id FROM marking_jobs \
             WHERE kind = 'mark_question' \
             AND (state = 'queued' OR (state = 'running' AND lease_expires <= $2)))",
        )
        .bind(error_json(
            crate::marking::failure::FailureCode::Cancelled.as_str(),
            reason,
            None,
        ))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE marking_jobs SET state = 'cancelled', updated_at = $1, finished_at = $1, \
             lease_token = NULL WHERE kind = 'mark_question' \
             AND (state = 'queued' OR (state = 'running' AND lease_expires <= $1))",
        )
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }

    /// The session's labels not failed or cancelled.
    pub async fn live_labels(&self, session_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT label FROM marking_questions WHERE session_id = $1 \
             AND status NOT IN ('failed', 'cancelled') ORDER BY position",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?)
    }
}
