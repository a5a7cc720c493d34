//! Sessions for automated marking: creation (optionally bound to a frozen paper revision), start
//! (the allowance and the indexing jobs in one transaction), and the recorded answer-space layout
//! of paper exports.
//!
//! - this file holds the sessions: made, started, and the layout their paper's exports recorded;
//! - [`allowance`] holds each account's daily allowance of pages and questions, reserved inside
//!   the transaction that queues the work;
//! - [`pages`] holds the page index: each page as indexing found it, saved with its job;
//! - [`questions`] holds the questions of a session: queued, marked, failed or cancelled.

pub mod allowance;
pub mod pages;
pub mod questions;

pub use allowance::{Allowance, seconds_to_next_utc_day};
pub use pages::PageRecord;

use crate::store::job_kind::{IndexPage, JobKind};
use crate::store::marking::SessionRow;
use crate::store::words::Origin;
use crate::store::{Durability, Store, StoreError, now_ms};

/// The session origin of automated marking.
pub const ORIGIN: Origin = Origin::Automated;

/// The frozen paper revision a session is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaperBinding {
    /// The paper's id.
    pub paper_id: String,
    /// The revision.
    pub revision: i64,
    /// The revision's structured scheme (the criteria the PDFs were typeset from), JSON.
    pub scheme_json: String,
}

/// One page to index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageToIndex {
    /// The asset.
    pub asset_id: String,
    /// The page, from 1.
    pub page: i64,
}

/// What `start` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartOutcome {
    /// Indexing is queued.
    Started,
    /// The session was started before.
    AlreadyStarted,
    /// No such session of this account.
    NotFound,
    /// The allowance for today would be exceeded; seconds until the next UTC day.
    AllowanceExceeded {
        /// Pages used today.
        used: i64,
        /// Pages this start needs.
        needed: i64,
        /// Seconds until the allowance renews.
        retry_after: i64,
    },
}

impl Store {
    /// Creates a draft session for automated marking, bound to a paper revision or not.
    pub async fn create_automated_session(
        &self,
        user_id: &str,
        title: &str,
        paper: Option<&PaperBinding>,
    ) -> Result<SessionRow, StoreError> {
        let mut session = self.create_session(user_id, title, ORIGIN).await?;
        if let Some(binding) = paper {
            let statement = sqlx::query(
                "UPDATE marking_sessions SET paper_id = $1, paper_revision = $2, scheme_json = $3 \
                 WHERE id = $4",
            )
            .bind(&binding.paper_id)
            .bind(binding.revision)
            .bind(&binding.scheme_json)
            .bind(&session.id);
            self.execute_write(Durability::Saved, statement).await?;
            session.paper = Some((binding.paper_id.clone(), binding.revision));
        }
        Ok(session)
    }

    /// The structured scheme a session was made with (sessions from a paper).
    pub async fn session_scheme(&self, session_id: &str) -> Result<Option<String>, StoreError> {
        let scheme: Option<String> =
            sqlx::query_scalar("SELECT scheme_json FROM marking_sessions WHERE id = $1")
                .bind(session_id)
                .fetch_optional(self.pool())
                .await?
                .flatten();
        Ok(scheme)
    }

    /// Starts a draft session: reserves today's allowance for `pages`, enqueues one indexing job
    /// per page and moves the session to `started`, all in one transaction, so a refused start
    /// enqueues nothing and uses nothing.
    pub async fn start_indexing(
        &self,
        user_id: &str,
        session_id: &str,
        pages: &[PageToIndex],
        allowance: &Allowance,
        max_attempts: i64,
    ) -> Result<StartOutcome, StoreError> {
        let now = now_ms();
        let needed = i64::try_from(pages.len()).unwrap_or(i64::MAX);
        let mut tx = self.begin_write().await?;
        let updated = sqlx::query(
            "UPDATE marking_sessions SET status = 'started', indexing_state = 'queued', \
             pages_total = $1, pages_done = 0, started_at = $2, updated_at = $2 \
             WHERE id = $3 AND user_id = $4 AND origin = $5 AND status = 'draft'",
        )
        .bind(needed)
        .bind(now)
        .bind(session_id)
        .bind(user_id)
        .bind(ORIGIN.as_str())
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(match self.session(user_id, session_id).await? {
                Some(s) if s.origin == ORIGIN => StartOutcome::AlreadyStarted,
                _ => StartOutcome::NotFound,
            });
        }
        if let Some((used, retry_after)) =
            Store::reserve_pages(&mut tx, user_id, needed, allowance, now).await?
        {
            tx.rollback().await?;
            return Ok(StartOutcome::AllowanceExceeded {
                used,
                needed,
                retry_after,
            });
        }
        let jobs: Vec<JobKind> = pages
            .iter()
            .map(|p| {
                JobKind::IndexPage(IndexPage {
                    asset_id: p.asset_id.clone(),
                    page: p.page,
                    placed_as: None,
                })
            })
            .collect();
        Store::enqueue_jobs(&mut tx, session_id, user_id, &jobs, max_attempts, now).await?;
        tx.commit().await?;
        Ok(StartOutcome::Started)
    }

    /// The recorded answer-space layout of a revision's exports: `None` when the revision has
    /// no exports, `Some(None)` when they were prepared without a recorded layout.
    pub async fn export_layout(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: i64,
    ) -> Result<Option<Option<String>>, StoreError> {
        let layout: Option<Option<String>> = sqlx::query_scalar(
            "SELECT layout_json FROM paper_exports \
             WHERE user_id = $1 AND paper_id = $2 AND revision = $3",
        )
        .bind(user_id)
        .bind(paper_id)
        .bind(revision)
        .fetch_optional(self.pool())
        .await?;
        Ok(layout)
    }

    /// Records a revision's answer-space layout where none is recorded yet.
    pub async fn save_export_layout(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: i64,
        layout_json: &str,
    ) -> Result<(), StoreError> {
        let statement = sqlx::query(
            "UPDATE paper_exports SET layout_json = $1 \
             WHERE user_id = $2 AND paper_id = $3 AND revision = $4 AND layout_json IS NULL",
        )
        .bind(layout_json)
        .bind(user_id)
        .bind(paper_id)
        .bind(revision);
        self.execute_write(Durability::Saved, statement).await?;
        Ok(())
    }
}
