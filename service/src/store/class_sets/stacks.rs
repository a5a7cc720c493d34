//! A class set's scanned stack: its files, what indexing read on each page, and what people
//! decided about the stack (see `crate::class_sets::stack`).
//!
//! The files are the assets of the set's stack session, a marking session of origin
//! [`STACK_ORIGIN`] made with the first file: the session gives the stack the storage, limits,
//! object store and job queue every upload has, and is never listed, planned or marked itself.
//! Each file's pages are queued for indexing as it arrives, within the account's allowance.

use super::names::NameReader;
use super::{SET_COLUMNS, SetRow};
use crate::class_sets::rules::{StackFull, stack_file_fits};
use crate::store::automated::allowance::Allowance;
use crate::store::job_kind::{IndexPage, JobKind, PlacedAs};
use crate::store::marking::{ASSET_COLUMNS, AssetRow, asset_from_row};
use crate::store::objects::Kept;
use crate::store::words::{AssetKind, Origin, PageState};
use crate::store::{Store, StoreError, WriteTx, now_ms};

/// The origin of a class set's stack session.
pub const STACK_ORIGIN: Origin = Origin::ClassSet;

/// What indexing read on a page of a stack, saved with the page's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackRead {
    /// The class set.
    pub class_set_id: String,
    /// The payloads of every code decoded on the page.
    pub codes: Vec<String>,
    /// A digest of the page's pixels as rendered.
    pub fingerprint: String,
    /// Whether the page is a named copy's cover whose written name is to be read.
    pub read_name: bool,
}

/// A file to add to a stack.
#[derive(Debug, Clone)]
pub struct NewStackFile<'a> {
    /// The name it was uploaded with.
    pub name: &'a str,
    /// Its media type.
    pub content_type: &'a str,
    /// Its pages.
    pub page_count: i64,
    /// SHA-256 of its bytes, hex.
    pub sha256: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
}

/// Why a file was not added.
#[derive(Debug, thiserror::Error)]
pub enum AddStackFileError {
    /// No such class set of this account.
    #[error("not found")]
    NotFound,
    /// The stack holds as many files as a session may.
    #[error("too many files")]
    TooManyFiles,
    /// The stack would exceed a session's total size.
    #[error("too large")]
    TooLarge,
    /// Indexing the file's pages would exceed today's allowance.
    #[error("allowance exceeded")]
    AllowanceExceeded {
        /// Pages used today.
        used: i64,
        /// Pages the file needs.
        needed: i64,
        /// Seconds until the allowance renews.
        retry_after: i64,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for AddStackFileError {
    fn from(e: sqlx::Error) -> Self {
        AddStackFileError::Store(e.into())
    }
}

/// One page of a stack file and what is known of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackPageRow {
    /// The file (asset id).
    pub asset_id: String,
    /// The page of the file, from 1.
    pub page: i64,
    /// What indexing read: `None` while the page waits to be read.
    pub read: Option<PageRead>,
}

/// A stack page a person placed, to be read again as the copy's page they placed it as.
#[derive(Debug, Clone)]
pub struct Reread<'a> {
    /// The session holding the set's stack.
    pub session_id: &'a str,
    /// The account.
    pub user_id: &'a str,
    /// The stack file.
    pub asset_id: &'a str,
    /// Its page, from 1.
    pub page: i64,
    /// The copy's page it was placed as.
    pub placed_as: PlacedAs,
    /// Attempts before the reading fails.
    pub max_attempts: i64,
}

/// What indexing made of a stack page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageRead {
    /// Read: its codes and fingerprint.
    Read {
        /// Every code's payload.
        codes: Vec<String>,
        /// The digest of its pixels.
        fingerprint: String,
    },
    /// The page could not be read.
    Failed {
        /// Why.
        error: String,
    },
}

/// A decision about the stack, as recorded, read from [`DECISION_COLUMNS`].
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DecisionRow {
    /// Its order among the set's decisions, from 1.
    pub seq: i64,
    /// `place`, `choose`, `extra`, `absent` or `present`.
    pub kind: String,
    /// The stack page it is about: its file.
    pub asset_id: Option<String>,
    /// The page of that file.
    pub page: Option<i64>,
    /// The copy.
    pub copy: Option<i64>,
    /// The copy's page (`place`).
    pub copy_page: Option<i64>,
    /// The question an extra sheet answers (`extra`).
    pub question: Option<String>,
    /// The roster copy whose student wrote the copy (`student`; `None` when not on the roster).
    pub student: Option<i64>,
    /// The API key (or the app's session) that made it.
    pub made_by_key: String,
    /// The account.
    pub made_by_user: String,
    /// When (Unix milliseconds).
    pub made_at: i64,
}

/// A decision to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDecision<'a> {
    /// Its kind (see [`DecisionRow::kind`]).
    pub kind: &'a str,
    /// The stack page's file.
    pub asset_id: Option<&'a str>,
    /// The page of the file.
    pub page: Option<i64>,
    /// The copy.
    pub copy: Option<i64>,
    /// The copy's page.
    pub copy_page: Option<i64>,
    /// The question.
    pub question: Option<&'a str>,
    /// The roster copy whose student wrote the copy.
    pub student: Option<i64>,
    /// Who made it: the key.
    pub made_by_key: &'a str,
    /// Who made it: the account.
    pub made_by_user: &'a str,
}

const DECISION_COLUMNS: &str = "seq, kind, asset_id, page, copy, copy_page, question, \
     made_by_key, made_by_user, made_at, student";

/// A stack's files and their total size in bytes.
#[derive(Debug, Clone, Copy, sqlx::FromRow)]
struct StackSize {
    files: i64,
    total: i64,
}

/// A set read with its account's column after [`SET_COLUMNS`].
#[derive(Debug, Clone, sqlx::FromRow)]
struct SetWithAccount {
    #[sqlx(flatten)]
    set: SetRow,
    user_id: String,
}

/// A stack page's index record joined with what was read on it.
#[derive(Debug, Clone, sqlx::FromRow)]
struct StackPageColumns {
    asset_id: String,
    page: i64,
    state: PageState,
    error: Option<String>,
    codes_json: Option<String>,
    fingerprint: Option<String>,
}

impl Store {
    /// Adds a scanned file to a class set's stack and queues its pages for indexing, in one
    /// transaction: the stack session is made with the first file, the file must fit the stack
    /// ([`stack_file_fits`]), and the pages are reserved from today's allowance.
    pub async fn add_stack_file(
        &self,
        user_id: &str,
        set_id: &str,
        file: &NewStackFile<'_>,
        allowance: &Allowance,
        max_attempts: i64,
    ) -> Result<AssetRow, AddStackFileError> {
        let kept = self.keep(file.bytes.to_vec()).await?;
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        // On PostgreSQL the set's row is locked first, so that two uploads at once are counted
        // one after the other (SQLite's write transactions are one at a time already).
        let set = sqlx::query_as::<_, SetRow>(sqlx::AssertSqlSafe(format!(
            "SELECT {SET_COLUMNS} FROM class_sets WHERE user_id = $1 AND id = $2{}",
            self.row_lock()
        )))
        .bind(user_id)
        .bind(set_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(set) = set else {
            return Err(AddStackFileError::NotFound);
        };
        let session_id = Store::stack_session(&mut tx, user_id, &set, now).await?;
        let (files, total) = Store::stack_size(&mut tx, &session_id).await?;
        let size = i64::try_from(file.bytes.len()).unwrap_or(i64::MAX);
        stack_file_fits(files, total, size).map_err(|full| match full {
            StackFull::TooManyFiles => AddStackFileError::TooManyFiles,
            StackFull::TooLarge => AddStackFileError::TooLarge,
        })?;
        if let Some((used, retry_after)) =
            Store::reserve_pages(&mut tx, user_id, file.page_count, allowance, now).await?
        {
            return Err(AddStackFileError::AllowanceExceeded {
                used,
                needed: file.page_count,
                retry_after,
            });
        }
        let asset = AssetRow {
            id: uuid::Uuid::new_v4().to_string(),
            session_id: session_id.clone(),
            kind: AssetKind::Work,
            name: file.name.to_owned(),
            content_type: file.content_type.to_owned(),
            size_bytes: size,
            page_count: file.page_count,
            sha256: file.sha256.to_owned(),
            created_at: now,
        };
        Store::insert_stack_asset(&mut tx, user_id, &asset, &kept).await?;
        Store::queue_stack_pages(&mut tx, user_id, &asset, max_attempts, now).await?;
        tx.commit().await?;
        Ok(asset)
    }

    /// The session holding `set`'s stack, made (started, of origin [`STACK_ORIGIN`]) with its
    /// first file.
    async fn stack_session(
        tx: &mut WriteTx,
        user_id: &str,
        set: &SetRow,
        now: i64,
    ) -> Result<String, StoreError> {
        if let Some(id) = &set.stack_session_id {
            return Ok(id.clone());
        }
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO marking_sessions (id, user_id, title, origin, status, created_at, \
             updated_at, indexing_state, pages_total, pages_done, started_at) \
             VALUES ($1, $2, $3, $4, 'started', $5, $5, 'queued', 0, 0, $5)",
        )
        .bind(&id)
        .bind(user_id)
        .bind(&set.title)
        .bind(STACK_ORIGIN.as_str())
        .bind(now)
        .execute(&mut **tx)
        .await?;
        sqlx::query("UPDATE class_sets SET stack_session_id = $1 WHERE id = $2")
            .bind(&id)
            .bind(&set.id)
            .execute(&mut **tx)
            .await?;
        Ok(id)
    }

    /// The files of a stack session and their total size in bytes.
    async fn stack_size(tx: &mut WriteTx, session_id: &str) -> Result<(i64, i64), StoreError> {
        let size = sqlx::query_as::<_, StackSize>(
            "SELECT COUNT(*) AS files, CAST(COALESCE(SUM(size_bytes), 0) AS BIGINT) AS total \
             FROM assets WHERE session_id = $1",
        )
        .bind(session_id)
        .fetch_one(&mut **tx)
        .await?;
        Ok((size.files, size.total))
    }

    /// Saves a stack file's row and its bytes (`kept`).
    async fn insert_stack_asset(
        tx: &mut WriteTx,
        user_id: &str,
        asset: &AssetRow,
        kept: &Kept,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO assets (id, session_id, user_id, kind, name, content_type, size_bytes, \
             page_count, sha256, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(&asset.id)
        .bind(&asset.session_id)
        .bind(user_id)
        .bind(asset.kind.as_str())
        .bind(&asset.name)
        .bind(&asset.content_type)
        .bind(asset.size_bytes)
        .bind(asset.page_count)
        .bind(&asset.sha256)
        .bind(asset.created_at)
        .execute(&mut **tx)
        .await?;
        Store::hold_object(tx, kept).await?;
        sqlx::query("INSERT INTO asset_blobs (asset_id, bytes, object) VALUES ($1, $2, $3)")
            .bind(&asset.id)
            .bind(kept.inline())
            .bind(kept.object())
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// Queues one indexing job per page of a stack file, and counts its pages in the stack
    /// session's progress (indexing is `queued` again when the stack had been read).
    async fn queue_stack_pages(
        tx: &mut WriteTx,
        user_id: &str,
        asset: &AssetRow,
        max_attempts: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let jobs: Vec<JobKind> = (1..=asset.page_count)
            .map(|page| {
                JobKind::IndexPage(IndexPage {
                    asset_id: asset.id.clone(),
                    page,
                    placed_as: None,
                })
            })
            .collect();
        Store::enqueue_jobs(tx, &asset.session_id, user_id, &jobs, max_attempts, now).await?;
        sqlx::query(
            "UPDATE marking_sessions SET pages_total = pages_total + $1, updated_at = $2, \
             indexing_state = CASE WHEN pages_done = pages_total THEN 'queued' ELSE indexing_state END, \
             indexed_at = NULL WHERE id = $3",
        )
        .bind(asset.page_count)
        .bind(now)
        .bind(&asset.session_id)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// The class set whose stack a session holds, with the set's account; `None` for any other
    /// session.
    pub async fn class_set_of_stack(
        &self,
        session_id: &str,
    ) -> Result<Option<(String, SetRow)>, StoreError> {
        let row = sqlx::query_as::<_, SetWithAccount>(sqlx::AssertSqlSafe(format!(
            "SELECT {SET_COLUMNS}, user_id FROM class_sets WHERE stack_session_id = $1"
        )))
        .bind(session_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|row| (row.user_id, row.set)))
    }

    /// Saves what was read on a stack page, inside the transaction saving its index.
    pub(crate) async fn save_stack_read(
        tx: &mut WriteTx,
        asset_id: &str,
        page: i64,
        read: &StackRead,
    ) -> Result<(), StoreError> {
        let codes = serde_json::to_string(&read.codes)
            .map_err(|e| StoreError::Corrupt(format!("codes: {e}")))?;
        sqlx::query(
            "INSERT INTO class_set_pages (asset_id, page, class_set_id, codes_json, fingerprint) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (asset_id, page) DO UPDATE SET \
             class_set_id = excluded.class_set_id, codes_json = excluded.codes_json, \
             fingerprint = excluded.fingerprint",
        )
        .bind(asset_id)
        .bind(page)
        .bind(&read.class_set_id)
        .bind(codes)
        .bind(&read.fingerprint)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// A stack's files in upload order, and every page of them in stack order with what is
    /// known of it.
    pub async fn stack_pages(
        &self,
        set: &SetRow,
    ) -> Result<(Vec<AssetRow>, Vec<StackPageRow>), StoreError> {
        let Some(session_id) = &set.stack_session_id else {
            return Ok((Vec::new(), Vec::new()));
        };
        let files: Vec<AssetRow> = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {ASSET_COLUMNS} FROM assets WHERE session_id = $1 ORDER BY created_at, id"
        )))
        .bind(session_id)
        .fetch_all(self.pool())
        .await?
        .iter()
        .map(asset_from_row)
        .collect::<Result<_, _>>()?;
        let rows = sqlx::query_as::<_, StackPageColumns>(
            "SELECT p.asset_id, p.page, p.state, p.error, c.codes_json, c.fingerprint \
             FROM asset_pages p LEFT JOIN class_set_pages c \
             ON c.asset_id = p.asset_id AND c.page = p.page \
             WHERE p.session_id = $1",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?;
        let mut read = std::collections::HashMap::with_capacity(rows.len());
        for row in rows {
            let StackPageColumns {
                asset_id,
                page,
                state,
                error,
                codes_json,
                fingerprint,
            } = row;
            if state == PageState::Reading {
                // Being read again: not known until it is.
                continue;
            }
            let known = match (state, codes_json, fingerprint) {
                (PageState::Ok, Some(codes), Some(fingerprint)) => PageRead::Read {
                    codes: serde_json::from_str(&codes).map_err(|e| {
                        StoreError::Corrupt(format!("stack page codes of {asset_id}: {e}"))
                    })?,
                    fingerprint,
                },
                _ => PageRead::Failed {
                    error: error.unwrap_or_else(|| "the page could not be read".to_owned()),
                },
            };
            read.insert((asset_id, page), known);
        }
        let mut pages = Vec::new();
        for file in &files {
            for page in 1..=file.page_count {
                pages.push(StackPageRow {
                    asset_id: file.id.clone(),
                    page,
                    read: read.remove(&(file.id.clone(), page)),
                });
            }
        }
        Ok((files, pages))
    }

    /// Records a decision about a set's stack, after every earlier one. With `read_name`, the
    /// name written on the decision's page (a cover a person placed) is queued to be read in the
    /// same transaction, unless it already is. With `reread`, the page a person placed is read
    /// again as the copy's page, in the same transaction: until that is done the stack lists it
    /// as being read.
    pub async fn record_decision(
        &self,
        set_id: &str,
        decision: &NewDecision<'_>,
        read_name: Option<&NameReader<'_>>,
        reread: Option<&Reread<'_>>,
    ) -> Result<DecisionRow, StoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        // Decisions of one set are numbered one after another: on PostgreSQL the set's row is
        // locked first, so two decisions at once cannot take the same number.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT id FROM class_sets WHERE id = $1{}",
            self.row_lock()
        )))
        .bind(set_id)
        .execute(&mut *tx)
        .await?;
        let seq: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(MAX(seq), 0) + 1 AS BIGINT) FROM class_set_decisions \
             WHERE class_set_id = $1",
        )
        .bind(set_id)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO class_set_decisions (id, class_set_id, seq, kind, asset_id, page, copy, \
             copy_page, question, made_by_key, made_by_user, made_at, student) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(set_id)
        .bind(seq)
        .bind(decision.kind)
        .bind(decision.asset_id)
        .bind(decision.page)
        .bind(decision.copy)
        .bind(decision.copy_page)
        .bind(decision.question)
        .bind(decision.made_by_key)
        .bind(decision.made_by_user)
        .bind(now)
        .bind(decision.student)
        .execute(&mut *tx)
        .await?;
        if let (Some(reader), Some(asset_id), Some(page)) =
            (read_name, decision.asset_id, decision.page)
        {
            Store::queue_name_read_by(&mut tx, reader, set_id, asset_id, page, now).await?;
        }
        if let Some(reread) = reread {
            Store::queue_reread(&mut tx, reread, now).await?;
        }
        tx.commit().await?;
        Ok(DecisionRow {
            seq,
            kind: decision.kind.to_owned(),
            asset_id: decision.asset_id.map(str::to_owned),
            page: decision.page,
            copy: decision.copy,
            copy_page: decision.copy_page,
            question: decision.question.map(str::to_owned),
            made_by_key: decision.made_by_key.to_owned(),
            made_by_user: decision.made_by_user.to_owned(),
            made_at: now,
            student: decision.student,
        })
    }

    /// Queues a stack page to be read again: its record says it is being read (the stack lists it
    /// so, and the set's scripts cannot be made until it is read), the stack session counts it
    /// as a page still to read, and the job is queued. A page already being read is left to it.
    async fn queue_reread(
        tx: &mut WriteTx,
        reread: &Reread<'_>,
        now: i64,
    ) -> Result<(), StoreError> {
        let marked = sqlx::query(
            "UPDATE asset_pages SET state = $1 WHERE session_id = $2 AND asset_id = $3 \
             AND page = $4 AND state <> $1",
        )
        .bind(PageState::Reading)
        .bind(reread.session_id)
        .bind(reread.asset_id)
        .bind(reread.page)
        .execute(&mut **tx)
        .await?;
        if marked.rows_affected() == 0 {
            return Ok(());
        }
        sqlx::query(
            "UPDATE marking_sessions SET pages_done = pages_done - 1, indexing_state = 'running', \
             indexed_at = NULL, updated_at = $1 WHERE id = $2",
        )
        .bind(now)
        .bind(reread.session_id)
        .execute(&mut **tx)
        .await?;
        let job = JobKind::IndexPage(IndexPage {
            asset_id: reread.asset_id.to_owned(),
            page: reread.page,
            placed_as: Some(reread.placed_as),
        });
        Store::enqueue_jobs(
            tx,
            reread.session_id,
            reread.user_id,
            &[job],
            reread.max_attempts,
            now,
        )
        .await?;
        Ok(())
    }

    /// A set's decisions in the order they were made.
    pub async fn decisions(&self, set_id: &str) -> Result<Vec<DecisionRow>, StoreError> {
        Ok(sqlx::query_as::<_, DecisionRow>(sqlx::AssertSqlSafe(format!(
            "SELECT {DECISION_COLUMNS} FROM class_set_decisions WHERE class_set_id = $1 ORDER BY seq"
        )))
        .bind(set_id)
        .fetch_all(self.pool())
        .await?)
    }
}
