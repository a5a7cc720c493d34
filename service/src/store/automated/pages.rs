//! The page index of automated marking: what indexing found on each page of a session's files,
//! saved with the job that read it, and read back for sessions, questions and workers.

use sqlx::FromRow;

use crate::store::class_sets::stacks::StackRead;
use crate::store::job_kind::JobKind;
use crate::store::jobs::Job;
use crate::store::objects::Kept;
use crate::store::words::{PageRole, PageState};
use crate::store::{Durability, Store, StoreError, WriteTx, now_ms};

/// What indexing found on one page, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRecord {
    /// The asset.
    pub asset_id: String,
    /// The page, from 1.
    pub page: i64,
    /// Read, failed, or being read again.
    pub state: PageState,
    /// Why a page failed.
    pub error: Option<String>,
    /// Degrees clockwise the content is turned on the displayed page: 0, 90, 180 or 270.
    pub orientation: i64,
    /// `textLayer`, `ocr` or `none`.
    pub text_source: String,
    /// Raster width in pixels, as displayed.
    pub width_px: i64,
    /// Raster height in pixels, as displayed.
    pub height_px: i64,
    /// What the page is, and whether it can be evidence.
    pub role: PageRole,
    /// Why the page has its role.
    pub role_reason: String,
    /// The decoded page code, JSON.
    pub code_json: Option<String>,
    /// The question labels found and how, JSON array.
    pub labels_json: String,
    /// The words with their boxes, JSON array (not loaded by session reads).
    pub words_json: String,
    /// The comparison with the clean question-paper page, JSON.
    pub compare_json: Option<String>,
    /// When it was indexed.
    pub indexed_at: i64,
}

const PAGE_COLUMNS: &str = "asset_id, page, state, error, orientation, text_source, width_px, \
     height_px, role, role_reason, code_json, labels_json, compare_json, indexed_at";

/// The columns of [`PAGE_COLUMNS`]: a page without its words.
#[derive(Debug, Clone, FromRow)]
struct PageColumns {
    asset_id: String,
    page: i64,
    state: PageState,
    error: Option<String>,
    orientation: i64,
    text_source: String,
    width_px: i64,
    height_px: i64,
    role: PageRole,
    role_reason: String,
    code_json: Option<String>,
    labels_json: String,
    compare_json: Option<String>,
    indexed_at: i64,
}

impl PageColumns {
    fn with_words(self, words_json: String) -> PageRecord {
        PageRecord {
            asset_id: self.asset_id,
            page: self.page,
            state: self.state,
            error: self.error,
            orientation: self.orientation,
            text_source: self.text_source,
            width_px: self.width_px,
            height_px: self.height_px,
            role: self.role,
            role_reason: self.role_reason,
            code_json: self.code_json,
            labels_json: self.labels_json,
            words_json,
            compare_json: self.compare_json,
            indexed_at: self.indexed_at,
        }
    }
}

/// A page read without its words has none.
impl From<PageColumns> for PageRecord {
    fn from(columns: PageColumns) -> PageRecord {
        columns.with_words(String::from("[]"))
    }
}

/// [`PAGE_COLUMNS`] and `words_json`: a page with its words.
#[derive(Debug, Clone, FromRow)]
struct WordedPage {
    #[sqlx(flatten)]
    columns: PageColumns,
    words_json: String,
}

impl From<WordedPage> for PageRecord {
    fn from(row: WordedPage) -> PageRecord {
        row.columns.with_words(row.words_json)
    }
}

/// Where a session's indexing stands once a page is counted.
#[derive(Debug, Clone, FromRow)]
struct IndexProgress {
    user_id: String,
    paper_id: Option<String>,
    pages_done: i64,
    pages_total: i64,
}

impl Store {
    /// Saves one page's index and finishes its job, in one transaction: `false` (nothing saved)
    /// when the job's lease was lost. The session's progress counts the page, and indexing ends
    /// `completed` with the last page (`failed` when any page failed).
    pub async fn save_page_index(
        &self,
        job: &Job,
        session_id: &str,
        record: &PageRecord,
        failed: Option<&str>,
        image: Option<&[u8]>,
    ) -> Result<bool, StoreError> {
        self.save_page_index_with(job, session_id, record, failed, image, None)
            .await
    }

    /// [`Store::save_page_index`], with what was read on a page of a class set's stack saved in
    /// the same transaction.
    pub async fn save_page_index_with(
        &self,
        job: &Job,
        session_id: &str,
        record: &PageRecord,
        failed: Option<&str>,
        image: Option<&[u8]>,
        stack: Option<&StackRead>,
    ) -> Result<bool, StoreError> {
        let image = match image {
            Some(image) => Some(self.keep(image.to_vec()).await?),
            None => None,
        };
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let finished = match failed {
            None => Store::finish_job(&mut tx, job, now).await?,
            Some(error) => Store::fail_job_in(&mut tx, job, error, now).await?,
        };
        if !finished {
            tx.rollback().await?;
            return Ok(false);
        }
        if let Some(kept) = &image {
            Store::hold_object(&mut tx, kept).await?;
        }
        let saved = Store::insert_page_row(&mut tx, session_id, record, image.as_ref()).await?;
        if saved != 1 {
            tx.rollback().await?;
            return Err(StoreError::Corrupt(format!(
                "page {} of asset {} is indexed already",
                record.page, record.asset_id
            )));
        }
        if let Some(read) = stack {
            Store::save_stack_read(&mut tx, &record.asset_id, record.page, read).await?;
            if read.read_name {
                Store::queue_name_read(
                    &mut tx,
                    job,
                    &read.class_set_id,
                    &record.asset_id,
                    record.page,
                    now,
                )
                .await?;
            }
        }
        Store::count_indexed_page(&mut tx, job, session_id, now).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Writes one page's index over its `reading` row (a page is read once, and again only when
    /// a person's placement asked for it); returns how many rows it wrote.
    async fn insert_page_row(
        tx: &mut WriteTx,
        session_id: &str,
        record: &PageRecord,
        image: Option<&Kept>,
    ) -> Result<u64, StoreError> {
        let saved = sqlx::query(
            "INSERT INTO asset_pages (asset_id, page, session_id, state, error, orientation, \
             text_source, width_px, height_px, role, role_reason, code_json, labels_json, \
             words_json, compare_json, indexed_at, image, image_object) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) \
             ON CONFLICT (asset_id, page) DO UPDATE SET session_id = excluded.session_id, \
             state = excluded.state, error = excluded.error, orientation = excluded.orientation, \
             text_source = excluded.text_source, width_px = excluded.width_px, \
             height_px = excluded.height_px, role = excluded.role, \
             role_reason = excluded.role_reason, code_json = excluded.code_json, \
             labels_json = excluded.labels_json, words_json = excluded.words_json, \
             compare_json = excluded.compare_json, indexed_at = excluded.indexed_at, \
             image = excluded.image, image_object = excluded.image_object \
             WHERE asset_pages.state = 'reading'",
        )
        .bind(&record.asset_id)
        .bind(record.page)
        .bind(session_id)
        .bind(record.state)
        .bind(&record.error)
        .bind(record.orientation)
        .bind(&record.text_source)
        .bind(record.width_px)
        .bind(record.height_px)
        .bind(record.role)
        .bind(&record.role_reason)
        .bind(&record.code_json)
        .bind(&record.labels_json)
        .bind(&record.words_json)
        .bind(&record.compare_json)
        .bind(record.indexed_at)
        .bind(image.and_then(|kept| kept.inline()))
        .bind(image.and_then(|kept| kept.object()))
        .execute(&mut **tx)
        .await?;
        Ok(saved.rows_affected())
    }

    /// Counts one more page of the session indexed, ending its indexing with the last page
    /// (`failed` when no page is `ok`), and queues the placing of its questions when the session
    /// was made from a paper.
    async fn count_indexed_page(
        tx: &mut WriteTx,
        job: &Job,
        session_id: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE marking_sessions SET pages_done = pages_done + 1, updated_at = $1, \
             indexing_state = CASE WHEN pages_done + 1 < pages_total THEN 'running' \
                 WHEN NOT EXISTS (SELECT 1 FROM asset_pages p WHERE p.session_id = $2 AND p.state = 'ok') \
                     THEN 'failed' ELSE 'completed' END, \
             indexed_at = CASE WHEN pages_done + 1 < pages_total THEN NULL ELSE $1 END \
             WHERE id = $2",
        )
        .bind(now)
        .bind(session_id)
        .execute(&mut **tx)
        .await?;
        // The last page of a session made from a paper: place its questions next.
        let progress: IndexProgress = sqlx::query_as(
            "SELECT user_id, paper_id, pages_done, pages_total FROM marking_sessions WHERE id = $1",
        )
        .bind(session_id)
        .fetch_one(&mut **tx)
        .await?;
        if progress.pages_done >= progress.pages_total && progress.paper_id.is_some() {
            let plan = JobKind::PlanQuestions;
            let user_id = &progress.user_id;
            Store::enqueue_jobs(tx, session_id, user_id, &[plan], job.max_attempts, now).await?;
        }
        Ok(())
    }

    /// Marks a session's indexing `running` once a worker has begun on it.
    pub async fn mark_indexing_running(&self, session_id: &str) -> Result<(), StoreError> {
        let statement = sqlx::query(
            "UPDATE marking_sessions SET indexing_state = 'running' \
             WHERE id = $1 AND indexing_state = 'queued'",
        )
        .bind(session_id);
        self.execute_write(Durability::Bookkeeping, statement)
            .await?;
        Ok(())
    }

    /// A session's indexed pages, without their words, in upload and page order.
    pub async fn session_pages(&self, session_id: &str) -> Result<Vec<PageRecord>, StoreError> {
        let rows: Vec<PageColumns> = sqlx::query_as(
            "SELECT p.asset_id AS asset_id, p.page AS page, p.state AS state, p.error AS error, \
             p.orientation AS orientation, p.text_source AS text_source, p.width_px AS width_px, \
             p.height_px AS height_px, p.role AS role, p.role_reason AS role_reason, \
             p.code_json AS code_json, p.labels_json AS labels_json, p.compare_json AS compare_json, \
             p.indexed_at AS indexed_at \
             FROM asset_pages p JOIN assets a ON a.id = p.asset_id \
             WHERE p.session_id = $1 ORDER BY a.created_at, a.id, p.page",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(PageRecord::from).collect())
    }

    /// One indexed page of an asset of this account, with its words.
    pub async fn page_record(
        &self,
        user_id: &str,
        asset_id: &str,
        page: i64,
    ) -> Result<Option<PageRecord>, StoreError> {
        let row: Option<WordedPage> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {PAGE_COLUMNS}, words_json FROM asset_pages \
             WHERE asset_id = $1 AND page = $2 AND EXISTS \
             (SELECT 1 FROM assets a WHERE a.id = $1 AND a.user_id = $3)"
        )))
        .bind(asset_id)
        .bind(page)
        .bind(user_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(PageRecord::from))
    }

    /// Page `page` of another mark scheme file of the account with the same bytes (`sha256`),
    /// already read, with the image indexing kept of it: reading the page again would make the
    /// same record. Each script of a class set holds the set's mark scheme, so it is read once.
    pub async fn read_scheme_twin(
        &self,
        user_id: &str,
        sha256: &str,
        page: i64,
        except_asset: &str,
    ) -> Result<Option<(PageRecord, Option<Vec<u8>>)>, StoreError> {
        let row: Option<WordedPage> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {PAGE_COLUMNS}, words_json FROM asset_pages \
             WHERE page = $1 AND state = 'ok' AND asset_id IN \
             (SELECT id FROM assets WHERE user_id = $2 AND sha256 = $3 AND kind = 'scheme' \
             AND id <> $4) ORDER BY indexed_at LIMIT 1"
        )))
        .bind(page)
        .bind(user_id)
        .bind(sha256)
        .bind(except_asset)
        .fetch_optional(self.pool())
        .await?;
        let Some(record) = row.map(PageRecord::from) else {
            return Ok(None);
        };
        let page = u32::try_from(record.page)
            .map_err(|_| StoreError::Corrupt(format!("page {} out of range", record.page)))?;
        let image = self.page_image(&record.asset_id, page).await?;
        Ok(Some((record, image)))
    }

    /// The page image indexing kept for a vision-model marker (see `asset_pages.image`), if any.
    pub async fn page_image(
        &self,
        asset_id: &str,
        page: u32,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let row = sqlx::query(
            "SELECT image, image_object FROM asset_pages WHERE asset_id = $1 AND page = $2",
        )
        .bind(asset_id)
        .bind(i64::from(page))
        .fetch_optional(self.pool())
        .await?;
        self.read_kept(row.as_ref(), "image", "image_object").await
    }

    /// The bytes of an asset by id alone, for workers (who act for the asset's account). A view
    /// of another asset (a class-set script's page of a stack file) has its source's bytes.
    pub async fn asset_blob(&self, asset_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = sqlx::query(
            "SELECT b.bytes AS bytes, b.object AS object FROM assets a \
             JOIN asset_blobs b ON b.asset_id = COALESCE(a.source_asset_id, a.id) WHERE a.id = $1",
        )
        .bind(asset_id)
        .fetch_optional(self.pool())
        .await?;
        self.read_kept(row.as_ref(), "bytes", "object").await
    }
}
