//! The names students wrote on their covers, as the vision-model marker read them (see
//! `crate::class_sets::names`). A row is made, state `reading`, in the transaction that saves the
//! index of a stack page decoded as a named copy's cover, with the job that reads it
//! ([`JobKind::ReadName`]); the job's result fills it in the transaction that finishes the job.

use crate::store::job_kind::{JobKind, ReadName};
use crate::store::jobs::Job;
use crate::store::words::NameState;
use crate::store::{Store, StoreError, WriteTx, now_ms};

/// Where a cover's name is read: the stack's session and account, and the attempts its job has.
#[derive(Debug, Clone, Copy)]
pub struct NameReader<'a> {
    /// The session holding the set's stack.
    pub session_id: &'a str,
    /// The account.
    pub user_id: &'a str,
    /// Attempts before the reading fails.
    pub max_attempts: i64,
}

/// What is known of the name on one cover page of a stack.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct NameRow {
    /// The stack file.
    pub asset_id: String,
    /// Its page, from 1.
    pub page: i64,
    /// How far reading the name got.
    pub state: NameState,
    /// The name as written (`read`); `None` when the line is blank.
    pub written: Option<String>,
    /// Why it could not be read (`failed`).
    pub error: Option<String>,
}

impl Store {
    /// Records that the name on a cover page is to be read, and queues its reading, in the
    /// transaction that saves the page's index.
    pub(crate) async fn queue_name_read(
        tx: &mut WriteTx,
        job: &Job,
        class_set_id: &str,
        asset_id: &str,
        page: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let reader = NameReader {
            session_id: &job.session_id,
            user_id: &job.user_id,
            max_attempts: job.max_attempts,
        };
        Store::queue_name_read_by(tx, &reader, class_set_id, asset_id, page, now).await
    }

    /// Records that the name on a cover page is to be read, and queues its reading in the stack's
    /// session, in `tx`: nothing when the page's name is already recorded.
    pub(crate) async fn queue_name_read_by(
        tx: &mut WriteTx,
        reader: &NameReader<'_>,
        class_set_id: &str,
        asset_id: &str,
        page: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let made = sqlx::query(
            "INSERT INTO class_set_names (asset_id, page, class_set_id, state) \
             VALUES ($1, $2, $3, 'reading') ON CONFLICT (asset_id, page) DO NOTHING",
        )
        .bind(asset_id)
        .bind(page)
        .bind(class_set_id)
        .execute(&mut **tx)
        .await?;
        if made.rows_affected() == 0 {
            return Ok(());
        }
        let read = JobKind::ReadName(ReadName {
            asset_id: asset_id.to_owned(),
            page,
        });
        Store::enqueue_jobs(
            tx,
            reader.session_id,
            reader.user_id,
            &[read],
            reader.max_attempts,
            now,
        )
        .await?;
        Ok(())
    }

    /// Saves what was read on a cover (`Ok(name)`, `None` for a blank line) or why it could not
    /// be (`Err(reason)`), finishing the job (`Ok(false)`: the job's lease was lost, nothing
    /// saved).
    pub async fn save_name_read(
        &self,
        job: &Job,
        asset_id: &str,
        page: i64,
        read: Result<Option<&str>, &str>,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let finished = match read {
            Ok(_) => Store::finish_job(&mut tx, job, now).await?,
            Err(reason) => Store::fail_job_in(&mut tx, job, reason, now).await?,
        };
        if !finished {
            tx.rollback().await?;
            return Ok(false);
        }
        let (state, written, error) = match read {
            Ok(written) => (NameState::Read, written, None),
            Err(reason) => (NameState::Failed, None, Some(reason)),
        };
        sqlx::query(
            "UPDATE class_set_names SET state = $1, written = $2, error = $3, read_at = $4 \
             WHERE asset_id = $5 AND page = $6",
        )
        .bind(state)
        .bind(written)
        .bind(error)
        .bind(now)
        .bind(asset_id)
        .bind(page)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Every cover name of a set's stack, read or being read.
    pub async fn class_set_names(&self, class_set_id: &str) -> Result<Vec<NameRow>, StoreError> {
        Ok(sqlx::query_as::<_, NameRow>(
            "SELECT asset_id, page, state, written, error FROM class_set_names \
             WHERE class_set_id = $1 ORDER BY asset_id, page",
        )
        .bind(class_set_id)
        .fetch_all(self.pool())
        .await?)
    }
}
