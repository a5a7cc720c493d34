//! The job queue of automated marking, in the service's database: no broker process.
//!
//! Every worker on the database (threads of `examkit serve`, or `examkit worker` processes on other
//! machines) claims jobs from the one `marking_jobs` table:
//!
//! - **claim**: a due job, either `queued` with `run_after` passed, or `running` with an expired
//!   lease (its worker died): the oldest of the account that has had the fewest jobs claimed in
//!   the last ten minutes, so the queue takes turns between accounts and one account's class
//!   stack of thousands of pages delays another's page by a few jobs, not by the whole stack. PostgreSQL takes it with `FOR UPDATE SKIP LOCKED`, so
//!   concurrent claimers never wait for each other or take the same row; SQLite takes it inside an
//!   immediate transaction, which holds the database's one write lock. The claim sets a fresh
//!   lease token, counts an attempt and sets the lease's expiry.
//! - **heartbeat**: extends the lease while the token is still the job's; a worker whose heartbeat
//!   finds another token (its lease expired and another worker took the job) stops.
//! - **finish**: [`Store::finish_job`] marks the job `done` only under the claimer's token, inside
//!   the transaction that saves the job's result. A late worker's transaction finds no row to
//!   update and rolls back, so a job has at most one saved result.
//! - **retry**: a failed attempt goes back to `queued` with an exponential backoff; after
//!   `max_attempts` it ends `failed` with its last error.

use sqlx::FromRow;

use super::job_kind::JobKind;
use super::words::JobState;
use super::{Backend, Durability, Store, StoreError, WriteTx};

/// A claimed job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Job id (UUID).
    pub id: String,
    /// What to do, as stored: read with [`JobKind::decode`].
    pub kind: String,
    /// The session the job works for.
    pub session_id: String,
    /// The session's account.
    pub user_id: String,
    /// The job's arguments, JSON text (see [`JobKind`]).
    pub payload: String,
    /// Attempts so far, this one included.
    pub attempts: i64,
    /// Attempts allowed before the job fails.
    pub max_attempts: i64,
    /// This claim's lease token.
    pub lease_token: String,
    /// The error of the previous attempt, if any.
    pub last_error: Option<String>,
}

/// A job's state as stored, for reads and tests.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct JobRow {
    /// Job id.
    pub id: String,
    /// Kind.
    pub kind: String,
    /// Arguments, JSON.
    pub payload: String,
    /// Where it stands.
    pub state: JobState,
    /// Attempts so far.
    pub attempts: i64,
    /// The last error, if any.
    pub last_error: Option<String>,
    /// The worker that holds or last held the lease.
    pub lease_owner: Option<String>,
}

/// What happened to a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Queued again, due after the backoff.
    Queued,
    /// No attempts left: the job is `failed`.
    Failed,
    /// The lease had been lost: nothing was changed.
    LeaseLost,
}

/// The backoff before attempt `attempts + 1`: `base` doubled for each attempt made, at most
/// 64 times `base`.
pub fn backoff_ms(base_ms: i64, attempts: i64) -> i64 {
    let doublings = attempts.clamp(1, 7) - 1;
    base_ms.saturating_mul(1 << doublings)
}

/// How far back the queue counts each account's claimed jobs when it chooses whom to serve.
pub const FAIR_WINDOW_MS: i64 = 10 * 60 * 1000;

const JOB_COLUMNS: &str = "id, kind, session_id, user_id, payload, attempts, max_attempts, \
     lease_token, last_error";

/// The columns of [`JOB_COLUMNS`], as a claim returns them.
#[derive(Debug, Clone, FromRow)]
struct JobColumns {
    id: String,
    kind: String,
    session_id: String,
    user_id: String,
    payload: String,
    attempts: i64,
    max_attempts: i64,
    lease_token: Option<String>,
    last_error: Option<String>,
}

/// A claim always sets the lease token; a job read without one has the empty token, which no
/// lease matches.
impl From<JobColumns> for Job {
    fn from(row: JobColumns) -> Job {
        Job {
            id: row.id,
            kind: row.kind,
            session_id: row.session_id,
            user_id: row.user_id,
            payload: row.payload,
            attempts: row.attempts,
            max_attempts: row.max_attempts,
            lease_token: row.lease_token.unwrap_or_default(),
            last_error: row.last_error,
        }
    }
}

impl Store {
    /// Adds jobs to the queue inside a write transaction (so that they are enqueued together with
    /// whatever made them due, or not at all).
    pub async fn enqueue_jobs(
        tx: &mut WriteTx,
        session_id: &str,
        user_id: &str,
        jobs: &[JobKind],
        max_attempts: i64,
        now: i64,
    ) -> Result<Vec<String>, StoreError> {
        let mut ids = Vec::with_capacity(jobs.len());
        for job in jobs {
            let id = uuid::Uuid::new_v4().to_string();
            sqlx::query(
                "INSERT INTO marking_jobs (id, kind, session_id, user_id, payload, state, attempts, \
                 max_attempts, run_after, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, 'queued', 0, $6, $7, $7, $7)",
            )
            .bind(&id)
            .bind(job.kind())
            .bind(session_id)
            .bind(user_id)
            .bind(job.payload())
            .bind(max_attempts.max(1))
            .bind(now)
            .execute(&mut **tx)
            .await?;
            ids.push(id);
        }
        Ok(ids)
    }

    /// Claims a due job for `worker`, with a lease until `now + lease_ms`; `None` when nothing
    /// is due. The queue is fair between accounts: of the accounts with a job due, the one that
    /// has had the fewest jobs claimed in the last [`FAIR_WINDOW_MS`] is served (ties going to
    /// the account whose due job is oldest), its oldest due job first; so a small job waits at
    /// most a few jobs behind another account's class stack. On PostgreSQL a job another claimer
    /// holds is skipped, and when every due job of that account is held the oldest other is
    /// taken. A job claimed again after its lease expired keeps its attempt count, plus one: the
    /// caller gives up on it when `attempts > max_attempts`.
    pub async fn claim_job(
        &self,
        worker: &str,
        now: i64,
        lease_ms: i64,
    ) -> Result<Option<Job>, StoreError> {
        let token = uuid::Uuid::new_v4().to_string();
        let lock = match self.backend() {
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        };
        let mut tx = self.begin(Durability::Bookkeeping).await?;
        let account: Option<String> = sqlx::query_scalar(
            "SELECT j.user_id FROM marking_jobs j \
             WHERE (j.state = 'queued' AND j.run_after <= $1) \
                OR (j.state = 'running' AND j.lease_expires <= $1) \
             GROUP BY j.user_id \
             ORDER BY (SELECT COUNT(*) FROM marking_jobs r \
                       WHERE r.user_id = j.user_id AND r.claimed_at >= $2), \
                      MIN(j.run_after), MIN(j.created_at), j.user_id \
             LIMIT 1",
        )
        .bind(now)
        .bind(now.saturating_sub(FAIR_WINDOW_MS))
        .fetch_optional(&mut *tx)
        .await?;
        let Some(account) = account else {
            tx.commit().await?;
            return Ok(None);
        };
        let row: Option<JobColumns> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE marking_jobs SET state = 'running', attempts = attempts + 1, lease_owner = $1, \
             lease_token = $2, lease_expires = $3, updated_at = $4, claimed_at = $4 \
             WHERE id = (SELECT id FROM marking_jobs \
                 WHERE (state = 'queued' AND run_after <= $4) \
                    OR (state = 'running' AND lease_expires <= $4) \
                 ORDER BY CASE WHEN user_id = $5 THEN 0 ELSE 1 END, run_after, created_at, id \
                 LIMIT 1{lock}) \
             RETURNING {JOB_COLUMNS}"
        )))
        .bind(worker)
        .bind(&token)
        .bind(now.saturating_add(lease_ms))
        .bind(now)
        .bind(&account)
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(row.map(Job::from))
    }

    /// Extends a job's lease while `token` is still its lease; `false` means the lease was lost
    /// (or the job was cancelled) and the worker must stop without saving anything.
    pub async fn heartbeat_job(
        &self,
        job_id: &str,
        token: &str,
        now: i64,
        lease_ms: i64,
    ) -> Result<bool, StoreError> {
        let statement = sqlx::query(
            "UPDATE marking_jobs SET lease_expires = $1, updated_at = $2 \
             WHERE id = $3 AND lease_token = $4 AND state = 'running'",
        )
        .bind(now.saturating_add(lease_ms))
        .bind(now)
        .bind(job_id)
        .bind(token);
        let done = self
            .execute_write(Durability::Bookkeeping, statement)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Marks a claimed job `done` inside the transaction that saves its result. `false` means the
    /// lease was lost: the caller must roll the transaction back.
    pub async fn finish_job(tx: &mut WriteTx, job: &Job, now: i64) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE marking_jobs SET state = 'done', lease_expires = NULL, updated_at = $1, \
             finished_at = $1 WHERE id = $2 AND lease_token = $3 AND state = 'running'",
        )
        .bind(now)
        .bind(&job.id)
        .bind(&job.lease_token)
        .execute(&mut **tx)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Marks a claimed job `failed` with `error` inside a transaction (that records what the
    /// failure means for the session). `false` means the lease was lost.
    pub async fn fail_job_in(
        tx: &mut WriteTx,
        job: &Job,
        error: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE marking_jobs SET state = 'failed', last_error = $1, lease_expires = NULL, \
             updated_at = $2, finished_at = $2 WHERE id = $3 AND lease_token = $4 AND state = 'running'",
        )
        .bind(error)
        .bind(now)
        .bind(&job.id)
        .bind(&job.lease_token)
        .execute(&mut **tx)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Puts a claimed job whose attempt failed back in the queue, due after the backoff, when it
    /// has attempts left. A job with none left is not changed here ([`Retry::Failed`]): the caller
    /// ends it with [`Store::fail_job_in`], recording what the failure means.
    pub async fn retry_job(
        &self,
        job: &Job,
        error: &str,
        now: i64,
        backoff_base_ms: i64,
    ) -> Result<Retry, StoreError> {
        if job.attempts >= job.max_attempts {
            return Ok(Retry::Failed);
        }
        let statement = sqlx::query(
            "UPDATE marking_jobs SET state = 'queued', last_error = $1, lease_expires = NULL, \
             lease_token = NULL, run_after = $2, updated_at = $3 \
             WHERE id = $4 AND lease_token = $5 AND state = 'running'",
        )
        .bind(error)
        .bind(now.saturating_add(backoff_ms(backoff_base_ms, job.attempts)))
        .bind(now)
        .bind(&job.id)
        .bind(&job.lease_token);
        let done = self.execute_write(Durability::Saved, statement).await?;
        Ok(if done.rows_affected() == 1 {
            Retry::Queued
        } else {
            Retry::LeaseLost
        })
    }

    /// Gives a claimed job back without counting the attempt (a worker shutting down): it is due
    /// again at once for another worker.
    pub async fn release_job(&self, job: &Job, now: i64) -> Result<bool, StoreError> {
        let statement = sqlx::query(
            "UPDATE marking_jobs SET state = 'queued', attempts = attempts - 1, lease_expires = NULL, \
             lease_token = NULL, run_after = $1, updated_at = $1 \
             WHERE id = $2 AND lease_token = $3 AND state = 'running'",
        )
        .bind(now)
        .bind(&job.id)
        .bind(&job.lease_token);
        let done = self.execute_write(Durability::Saved, statement).await?;
        Ok(done.rows_affected() == 1)
    }

    /// A session's jobs, oldest first.
    pub async fn session_jobs(&self, session_id: &str) -> Result<Vec<JobRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, kind, payload, state, attempts, last_error, lease_owner FROM marking_jobs \
             WHERE session_id = $1 ORDER BY created_at, id",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// How many jobs are due or running, for waking idle workers and for benchmarks.
    pub async fn pending_jobs(&self) -> Result<i64, StoreError> {
        let count: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM marking_jobs WHERE state IN ('queued', 'running')",
        )
        .fetch_one(self.pool())
        .await?;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_bound() {
        assert_eq!(backoff_ms(1000, 1), 1000);
        assert_eq!(backoff_ms(1000, 2), 2000);
        assert_eq!(backoff_ms(1000, 3), 4000);
        assert_eq!(backoff_ms(1000, 7), 64_000);
        assert_eq!(backoff_ms(1000, 50), 64_000);
        assert_eq!(backoff_ms(1000, 0), 1000);
    }
}
