//! Marking sessions (imports are sessions of origin `import`), their assets and questions.

use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::words::{AssetKind, IndexingState, Origin, QuestionStatus, SessionStatus};
use super::{Durability, Store, StoreError, now_ms};

/// Files per session.
pub const MAX_FILES_PER_SESSION: i64 = 100;
/// Total bytes per session: 300 MiB.
pub const MAX_SESSION_BYTES: i64 = 300 * 1024 * 1024;

/// A stored marking session.
#[derive(Debug, Clone, FromRow)]
pub struct SessionRow {
    /// Session id (UUID).
    pub id: String,
    /// Owning account.
    pub user_id: String,
    /// Title given at creation.
    pub title: String,
    /// How it was made.
    pub origin: Origin,
    /// Where it stands.
    pub status: SessionStatus,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Last change, Unix milliseconds.
    pub updated_at: i64,
    /// Completion time of an import.
    pub completed_at: Option<i64>,
    /// SHA-256 of the completed submission's bytes.
    pub submission_sha256: Option<String>,
    /// The submission's `source` object, as JSON.
    pub source_json: Option<String>,
    /// The submission's declared coverage kind.
    pub coverage_kind: Option<String>,
    /// The engine's outcome at completion, canonical JSON.
    pub outcome_json: Option<String>,
    /// The paper a session for automated marking was made from, and its revision.
    #[sqlx(flatten, try_from = "PaperColumns")]
    pub paper: Option<(String, i64)>,
    /// Indexing: `None` before start.
    pub indexing_state: Option<IndexingState>,
    /// Pages to index.
    pub pages_total: i64,
    /// Pages indexed (successfully or not).
    pub pages_done: i64,
    /// When automated marking was started, Unix milliseconds.
    pub started_at: Option<i64>,
    /// When indexing finished, Unix milliseconds.
    pub indexed_at: Option<i64>,
}

/// A session's `paper_id` and `paper_revision` columns: a paper pin when both are set.
#[derive(Debug, Clone, FromRow)]
pub struct PaperColumns {
    /// The paper.
    pub paper_id: Option<String>,
    /// Its revision.
    pub paper_revision: Option<i64>,
}

impl From<PaperColumns> for Option<(String, i64)> {
    fn from(columns: PaperColumns) -> Self {
        columns.paper_id.zip(columns.paper_revision)
    }
}

/// A row's `awarded`, `possible` and `max_marks` columns.
#[derive(Debug, Clone, Copy, FromRow)]
pub struct ScoreColumns {
    /// Marks awarded.
    pub awarded: i64,
    /// Marks possible.
    pub possible: i64,
    /// Maximum marks.
    pub max_marks: i64,
}

impl From<ScoreColumns> for (i64, i64, i64) {
    fn from(columns: ScoreColumns) -> Self {
        (columns.awarded, columns.possible, columns.max_marks)
    }
}

/// A session with its counts, for lightweight listings.
#[derive(Debug, Clone, FromRow)]
pub struct SessionSummaryRow {
    /// The session.
    #[sqlx(flatten)]
    pub session: SessionRow,
    /// Number of assets.
    pub asset_count: i64,
    /// Number of questions.
    pub question_count: i64,
    /// Sum of question scores: awarded, possible, max.
    #[sqlx(flatten, try_from = "ScoreColumns")]
    pub score: (i64, i64, i64),
}

/// A stored asset (without its bytes).
#[derive(Debug, Clone, FromRow)]
pub struct AssetRow {
    /// Asset id (UUID).
    pub id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// What the file is.
    pub kind: AssetKind,
    /// The name given at upload.
    pub name: String,
    /// The sniffed content type.
    pub content_type: String,
    /// Size in bytes.
    pub size_bytes: i64,
    /// Inspected page count.
    pub page_count: i64,
    /// SHA-256 of the bytes.
    pub sha256: String,
    /// Upload time, Unix milliseconds.
    pub created_at: i64,
}

/// A stored marking question.
#[derive(Debug, Clone, FromRow)]
pub struct QuestionRow {
    /// Question id (UUID).
    pub id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// Position in the session, from 0.
    pub position: i64,
    /// The question's label.
    pub label: String,
    /// Its status.
    pub status: QuestionStatus,
    /// Revision, from 1, increased by each review.
    pub revision: i64,
    /// Marks awarded.
    pub awarded: i64,
    /// Marks possible.
    pub possible: i64,
    /// Maximum marks.
    pub max_marks: i64,
    /// The question as submitted (and as revised by reviews), JSON.
    pub question_json: String,
    /// The engine's report for the question, canonical JSON.
    pub result_json: String,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Last change, Unix milliseconds.
    pub updated_at: i64,
    /// Why an automated question failed or was cancelled: `{code, message, details?}`, JSON.
    pub error_json: Option<String>,
    /// Who marked an automated question: the submission `source` its result was validated with,
    /// JSON.
    #[sqlx(rename = "marker")]
    pub marker_json: Option<String>,
    /// What the marker recorded of its run (a vision model's latency, tokens, repair rounds and
    /// evidence placements), JSON.
    pub marker_run_json: Option<String>,
}

/// One question of a class set (see [`Store::paper_set`]).
#[derive(Debug, Clone, FromRow)]
pub struct SetQuestion {
    /// The question id.
    pub id: String,
    /// Its session (one student's script).
    pub session_id: String,
    /// The session's title.
    #[sqlx(rename = "title")]
    pub session_title: String,
    /// The question's label.
    pub label: String,
    /// Its status.
    pub status: QuestionStatus,
    /// Awarded, possible and maximum marks.
    #[sqlx(flatten, try_from = "ScoreColumns")]
    pub score: (i64, i64, i64),
    /// Its position in the session.
    pub position: i64,
}

/// A question to save at completion or review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionData {
    /// The label.
    pub label: String,
    /// `completed` or `needs_review`.
    pub status: QuestionStatus,
    /// Marks awarded.
    pub awarded: i64,
    /// Marks possible.
    pub possible: i64,
    /// Maximum marks.
    pub max_marks: i64,
    /// The question JSON.
    pub question_json: String,
    /// The engine's report JSON.
    pub result_json: String,
}

/// What completing an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// The import was completed now.
    Completed,
    /// The import was already completed; `same` tells whether with the same submission bytes.
    AlreadyCompleted {
        /// Whether the stored submission hash equals this one.
        same: bool,
    },
    /// No such import for this account.
    NotFound,
}

/// Why an asset could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddAssetError {
    /// No such import for this account.
    #[error("not found")]
    NotFound,
    /// The import is completed; it takes no more files.
    #[error("completed")]
    Completed,
    /// The session already holds the maximum number of files.
    #[error("too many files")]
    TooManyFiles,
    /// The session would exceed its total size.
    #[error("session too large")]
    SessionTooLarge,
    /// A storage failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for AddAssetError {
    fn from(e: sqlx::Error) -> Self {
        AddAssetError::Store(StoreError::Database(e))
    }
}

/// Why a question review could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// No such question for this account.
    #[error("not found")]
    NotFound,
    /// The given revision is not the current one.
    #[error("stale revision; current is {0}")]
    Stale(i64),
    /// A storage failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

const SESSION_COLUMNS: &str = "id, user_id, title, origin, status, created_at, updated_at, \
     completed_at, submission_sha256, source_json, coverage_kind, outcome_json, paper_id, \
     paper_revision, indexing_state, pages_total, pages_done, started_at, indexed_at";
pub(super) const ASSET_COLUMNS: &str =
    "id, session_id, kind, name, content_type, size_bytes, page_count, sha256, created_at";
const QUESTION_COLUMNS: &str = "id, session_id, position, label, status, revision, awarded, \
     possible, max_marks, question_json, result_json, created_at, updated_at, error_json, marker, \
     marker_run_json";

/// An asset's columns named `asset_` in a join where the session's columns take the plain
/// names (all null in the row of a session without assets).
#[derive(FromRow)]
struct JoinedAsset {
    asset_id: Option<String>,
    asset_session_id: Option<String>,
    asset_kind: Option<AssetKind>,
    asset_name: Option<String>,
    asset_content_type: Option<String>,
    asset_size_bytes: Option<i64>,
    asset_page_count: Option<i64>,
    asset_sha256: Option<String>,
    asset_created_at: Option<i64>,
}

impl JoinedAsset {
    /// The asset, if the row has one.
    fn into_asset(self) -> Result<Option<AssetRow>, StoreError> {
        let Some(id) = self.asset_id else {
            return Ok(None);
        };
        let missing = || StoreError::Corrupt(format!("asset {id} has a null column"));
        Ok(Some(AssetRow {
            session_id: self.asset_session_id.ok_or_else(missing)?,
            kind: self.asset_kind.ok_or_else(missing)?,
            name: self.asset_name.ok_or_else(missing)?,
            content_type: self.asset_content_type.ok_or_else(missing)?,
            size_bytes: self.asset_size_bytes.ok_or_else(missing)?,
            page_count: self.asset_page_count.ok_or_else(missing)?,
            sha256: self.asset_sha256.ok_or_else(missing)?,
            created_at: self.asset_created_at.ok_or_else(missing)?,
            id,
        }))
    }
}

pub(super) fn asset_from_row(row: &AnyRow) -> Result<AssetRow, sqlx::Error> {
    AssetRow::from_row(row)
}

/// `columns` (a list like [`SESSION_COLUMNS`]) read from `table`, each named `prefix` + its name.
fn qualified(columns: &str, table: &str, prefix: &str) -> String {
    columns
        .split(',')
        .map(|column| format!("{table}.{c} AS {prefix}{c}", c = column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statement of [`Store::session_with_assets`]: the session's columns under their own names,
/// then each asset's under `asset_`, one row per asset (one row of nulls when there is none).
static SESSION_WITH_ASSETS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT {}, {} FROM marking_sessions s LEFT JOIN assets a ON a.session_id = s.id \
         WHERE s.id = $1 AND s.user_id = $2 ORDER BY a.created_at, a.id",
        qualified(SESSION_COLUMNS, "s", ""),
        qualified(ASSET_COLUMNS, "a", "asset_"),
    )
});

impl AssetRow {
    /// The engine's view of the asset; `None` when a stored value is out of its range.
    pub fn to_engine(&self) -> Option<examkit_engine::Asset> {
        Some(examkit_engine::Asset {
            id: uuid::Uuid::parse_str(&self.id).ok()?,
            kind: match self.kind {
                AssetKind::Work => examkit_engine::AssetKind::Work,
                AssetKind::Scheme => examkit_engine::AssetKind::Scheme,
            },
            page_count: u32::try_from(self.page_count).ok()?,
        })
    }
}

impl Store {
    /// Creates a draft session.
    pub async fn create_session(
        &self,
        user_id: &str,
        title: &str,
        origin: Origin,
    ) -> Result<SessionRow, StoreError> {
        let now = now_ms();
        let session = SessionRow {
            id: uuid::Uuid::new_v4().to_string(),
            user_id: user_id.to_owned(),
            title: title.to_owned(),
            origin,
            status: SessionStatus::Draft,
            created_at: now,
            updated_at: now,
            completed_at: None,
            submission_sha256: None,
            source_json: None,
            coverage_kind: None,
            outcome_json: None,
            paper: None,
            indexing_state: None,
            pages_total: 0,
            pages_done: 0,
            started_at: None,
            indexed_at: None,
        };
        let statement = sqlx::query(
            "INSERT INTO marking_sessions (id, user_id, title, origin, status, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&session.id)
        .bind(&session.user_id)
        .bind(&session.title)
        .bind(session.origin.as_str())
        .bind(session.status.as_str())
        .bind(now)
        .bind(now);
        self.execute_write(Durability::Saved, statement).await?;
        Ok(session)
    }

    /// A session of this account (another account's session is `None`).
    pub async fn session(&self, user_id: &str, id: &str) -> Result<Option<SessionRow>, StoreError> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SESSION_COLUMNS} FROM marking_sessions WHERE id = $1 AND user_id = $2"
        )))
        .bind(id)
        .bind(user_id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// A session of this account with its assets in upload order, in one read (what
    /// [`Store::session`] and [`Store::session_assets`] return, for a request that needs both).
    pub async fn session_with_assets(
        &self,
        user_id: &str,
        id: &str,
    ) -> Result<Option<(SessionRow, Vec<AssetRow>)>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(SESSION_WITH_ASSETS.as_str()))
            .bind(id)
            .bind(user_id)
            .fetch_all(self.pool())
            .await?;
        let Some(first) = rows.first() else {
            return Ok(None);
        };
        let session = SessionRow::from_row(first)?;
        let mut assets = Vec::with_capacity(rows.len());
        for row in &rows {
            assets.extend(JoinedAsset::from_row(row)?.into_asset()?);
        }
        Ok(Some((session, assets)))
    }

    /// The account's most recent sessions, newest first, with counts and score sums (a class
    /// set's stack is not one of them).
    pub async fn recent_sessions(
        &self,
        user_id: &str,
        limit: i64,
    ) -> Result<Vec<SessionSummaryRow>, StoreError> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SESSION_COLUMNS}, \
             (SELECT COUNT(*) FROM assets a WHERE a.session_id = s.id) AS asset_count, \
             (SELECT COUNT(*) FROM marking_questions q WHERE q.session_id = s.id) AS question_count, \
             (SELECT CAST(COALESCE(SUM(q.awarded), 0) AS BIGINT) FROM marking_questions q WHERE q.session_id = s.id) AS awarded, \
             (SELECT CAST(COALESCE(SUM(q.possible), 0) AS BIGINT) FROM marking_questions q WHERE q.session_id = s.id) AS possible, \
             (SELECT CAST(COALESCE(SUM(q.max_marks), 0) AS BIGINT) FROM marking_questions q WHERE q.session_id = s.id) AS max_marks \
             FROM marking_sessions s WHERE s.user_id = $1 AND s.origin <> 'class_set' \
             ORDER BY s.created_at DESC, s.id DESC LIMIT $2"
        )))
        .bind(user_id)
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }

    /// A session's assets, in upload order.
    pub async fn session_assets(&self, session_id: &str) -> Result<Vec<AssetRow>, StoreError> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {ASSET_COLUMNS} FROM assets WHERE session_id = $1 ORDER BY created_at, id"
        )))
        .bind(session_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Adds an asset to a draft session of this account and `origin` (`import` or `automated`),
    /// enforcing the per-session file count and total size in the same transaction as the insert.
    #[allow(clippy::too_many_arguments)]
    pub async fn add_asset(
        &self,
        user_id: &str,
        session_id: &str,
        origin: Origin,
        kind: AssetKind,
        name: &str,
        content_type: &str,
        page_count: i64,
        sha256: &str,
        bytes: &[u8],
    ) -> Result<AssetRow, AddAssetError> {
        // With an object store the bytes are written first; the row naming them comes after.
        let kept = self.keep(bytes.to_vec()).await?;
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let touched = sqlx::query(
            "UPDATE marking_sessions SET updated_at = $1 WHERE id = $2 AND user_id = $3 AND origin = $4",
        )
        .bind(now)
        .bind(session_id)
        .bind(user_id)
        .bind(origin.as_str())
        .execute(&mut *tx)
        .await?;
        if touched.rows_affected() == 0 {
            return Err(AddAssetError::NotFound);
        }
        let status: SessionStatus =
            sqlx::query_scalar("SELECT status FROM marking_sessions WHERE id = $1")
                .bind(session_id)
                .fetch_one(&mut *tx)
                .await?;
        if status != SessionStatus::Draft {
            return Err(AddAssetError::Completed);
        }
        let (files, total): (i64, i64) = sqlx::query_as(
            "SELECT COUNT(*) AS files, CAST(COALESCE(SUM(size_bytes), 0) AS BIGINT) AS total FROM assets WHERE session_id = $1",
        )
        .bind(session_id)
        .fetch_one(&mut *tx)
        .await?;
        let size = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
        if files >= MAX_FILES_PER_SESSION {
            return Err(AddAssetError::TooManyFiles);
        }
        if total.saturating_add(size) > MAX_SESSION_BYTES {
            return Err(AddAssetError::SessionTooLarge);
        }
        let asset = AssetRow {
            id: uuid::Uuid::new_v4().to_string(),
            session_id: session_id.to_owned(),
            kind,
            name: name.to_owned(),
            content_type: content_type.to_owned(),
            size_bytes: size,
            page_count,
            sha256: sha256.to_owned(),
            created_at: now,
        };
        sqlx::query(
            "INSERT INTO assets (id, session_id, user_id, kind, name, content_type, size_bytes, page_count, sha256, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(&asset.id)
        .bind(session_id)
        .bind(user_id)
        .bind(kind.as_str())
        .bind(name)
        .bind(content_type)
        .bind(size)
        .bind(page_count)
        .bind(sha256)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        Store::hold_object(&mut tx, &kept).await?;
        sqlx::query("INSERT INTO asset_blobs (asset_id, bytes, object) VALUES ($1, $2, $3)")
            .bind(&asset.id)
            .bind(kept.inline())
            .bind(kept.object())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(asset)
    }

    /// An asset of this account, without its bytes.
    pub async fn asset(
        &self,
        user_id: &str,
        asset_id: &str,
    ) -> Result<Option<AssetRow>, StoreError> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {ASSET_COLUMNS} FROM assets WHERE id = $1 AND user_id = $2"
        )))
        .bind(asset_id)
        .bind(user_id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// An asset of this account with its bytes.
    pub async fn asset_bytes(
        &self,
        user_id: &str,
        asset_id: &str,
    ) -> Result<Option<(AssetRow, Vec<u8>)>, StoreError> {
        let Some(asset) = self.asset(user_id, asset_id).await? else {
            return Ok(None);
        };
        let bytes = self
            .asset_blob(asset_id)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("asset {asset_id} has no bytes")))?;
        Ok(Some((asset, bytes)))
    }

    /// Completes a draft import: marks it completed and saves every question, in one transaction.
    #[allow(clippy::too_many_arguments)]
    pub async fn complete_import(
        &self,
        user_id: &str,
        session_id: &str,
        submission_sha256: &str,
        source_json: &str,
        coverage_kind: &str,
        outcome_json: &str,
        questions: &[QuestionData],
    ) -> Result<Completion, StoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let updated = sqlx::query(
            "UPDATE marking_sessions SET status = 'completed', updated_at = $1, completed_at = $1, \
             submission_sha256 = $2, source_json = $3, coverage_kind = $4, outcome_json = $5 \
             WHERE id = $6 AND user_id = $7 AND origin = 'import' AND status = 'draft'",
        )
        .bind(now)
        .bind(submission_sha256)
        .bind(source_json)
        .bind(coverage_kind)
        .bind(outcome_json)
        .bind(session_id)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(match self.session(user_id, session_id).await? {
                Some(s) if s.origin == Origin::Import => Completion::AlreadyCompleted {
                    same: s.submission_sha256.as_deref() == Some(submission_sha256),
                },
                _ => Completion::NotFound,
            });
        }
        for (position, q) in questions.iter().enumerate() {
            sqlx::query(
                "INSERT INTO marking_questions (id, session_id, user_id, position, label, status, revision, \
                 awarded, possible, max_marks, question_json, result_json, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $9, $10, $11, $12, $12)",
            )
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(session_id)
            .bind(user_id)
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(&q.label)
            .bind(q.status.as_str())
            .bind(q.awarded)
            .bind(q.possible)
            .bind(q.max_marks)
            .bind(&q.question_json)
            .bind(&q.result_json)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            if let Some(delay) = complete_delay() {
                eprintln!(
                    "test hook: question {} of {} inserted, transaction open",
                    position + 1,
                    questions.len()
                );
                tokio::time::sleep(delay).await;
            }
        }
        tx.commit().await?;
        Ok(Completion::Completed)
    }

    /// A session's questions, in position order.
    pub async fn session_questions(
        &self,
        session_id: &str,
    ) -> Result<Vec<QuestionRow>, StoreError> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {QUESTION_COLUMNS} FROM marking_questions WHERE session_id = $1 ORDER BY position"
        )))
        .bind(session_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Every question of this account's sessions made from one paper revision: the class set
    /// that marking by question steps through. Sessions oldest first, questions in paper order.
    pub async fn paper_set(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: i64,
    ) -> Result<Vec<SetQuestion>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT q.id, q.session_id, s.title, q.label, q.status, q.awarded, q.possible, \
             q.max_marks, q.position FROM marking_questions q \
             JOIN marking_sessions s ON s.id = q.session_id \
             WHERE s.user_id = $1 AND s.paper_id = $2 AND s.paper_revision = $3 \
             ORDER BY s.created_at, s.id, q.position",
        )
        .bind(user_id)
        .bind(paper_id)
        .bind(revision)
        .fetch_all(self.pool())
        .await?)
    }

    /// The questions labelled `label` of the scripts of this account made from one paper
    /// revision (the by-question review's set), in no particular order.
    pub async fn paper_set_answers(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: i64,
        label: &str,
    ) -> Result<Vec<QuestionRow>, StoreError> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {QUESTION_COLUMNS} FROM marking_questions WHERE user_id = $1 AND label = $2 \
             AND session_id IN (SELECT id FROM marking_sessions \
             WHERE user_id = $3 AND paper_id = $4 AND paper_revision = $5)"
        )))
        .bind(user_id)
        .bind(label)
        .bind(user_id)
        .bind(paper_id)
        .bind(revision)
        .fetch_all(self.pool())
        .await?)
    }

    /// A question of this account.
    pub async fn question(
        &self,
        user_id: &str,
        id: &str,
    ) -> Result<Option<QuestionRow>, StoreError> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {QUESTION_COLUMNS} FROM marking_questions WHERE id = $1 AND user_id = $2"
        )))
        .bind(id)
        .bind(user_id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Saves a reviewed question when `revision` is still current; the revision increases by one.
    /// Each decision the review changed is logged with its reviewer, in the same transaction.
    pub async fn review_question(
        &self,
        user_id: &str,
        id: &str,
        revision: i64,
        data: &QuestionData,
        reviewer: &Reviewer,
        changed: &[ChangedDecision],
    ) -> Result<QuestionRow, ReviewError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let updated = sqlx::query(
            "UPDATE marking_questions SET revision = revision + 1, status = $1, awarded = $2, \
             possible = $3, max_marks = $4, question_json = $5, result_json = $6, updated_at = $7 \
             WHERE id = $8 AND user_id = $9 AND revision = $10",
        )
        .bind(data.status.as_str())
        .bind(data.awarded)
        .bind(data.possible)
        .bind(data.max_marks)
        .bind(&data.question_json)
        .bind(&data.result_json)
        .bind(now)
        .bind(id)
        .bind(user_id)
        .bind(revision)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::from)?;
        if updated.rows_affected() == 1 {
            for decision in changed {
                sqlx::query(
                    "INSERT INTO review_log (question_id, revision, criterion_id, outcome, \
                     reviewer_kind, reviewer_name, decided_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(id)
                .bind(revision + 1)
                .bind(&decision.criterion_id)
                .bind(&decision.outcome)
                .bind(reviewer.kind.as_str())
                .bind(&reviewer.name)
                .bind(now)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::from)?;
            }
            tx.commit().await.map_err(StoreError::from)?;
        } else {
            tx.rollback().await.map_err(StoreError::from)?;
        }
        let current = self
            .question(user_id, id)
            .await?
            .ok_or(ReviewError::NotFound)?;
        if updated.rows_affected() == 0 {
            return Err(ReviewError::Stale(current.revision));
        }
        Ok(current)
    }

    /// The latest logged review of each criterion of a question, by criterion id.
    pub async fn review_log(
        &self,
        question_id: &str,
    ) -> Result<std::collections::HashMap<String, LoggedDecision>, StoreError> {
        let rows: Vec<LoggedRow> = sqlx::query_as(
            "SELECT criterion_id, revision, outcome, reviewer_kind, reviewer_name, decided_at \
             FROM review_log WHERE question_id = $1 ORDER BY revision",
        )
        .bind(question_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.criterion_id, row.decision))
            .collect())
    }
}

/// A `review_log` row: the criterion and the decision logged for it.
#[derive(Debug, Clone, FromRow)]
pub(crate) struct LoggedRow {
    /// The criterion.
    pub criterion_id: String,
    /// The decision.
    #[sqlx(flatten)]
    pub decision: LoggedDecision,
}

pub use super::words::ReviewerKind;

/// Who made a review: a teacher (by email or name) or an API key (by its name).
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct Reviewer {
    /// How they reached the review path.
    #[sqlx(rename = "reviewer_kind")]
    pub kind: ReviewerKind,
    /// The account's email or name, or the key's name.
    #[sqlx(rename = "reviewer_name")]
    pub name: String,
}

/// A decision a review changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedDecision {
    /// The criterion.
    pub criterion_id: String,
    /// The submitted outcome: `awarded`, `withheld` or `uncertain`.
    pub outcome: String,
}

/// The latest logged review of one criterion.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct LoggedDecision {
    /// The revision the review made.
    pub revision: i64,
    /// The submitted outcome.
    pub outcome: String,
    /// Who made it.
    #[sqlx(flatten)]
    pub reviewer: Reviewer,
    /// When, Unix milliseconds.
    pub decided_at: i64,
}

/// Test hook for the crash-safety tests: when `EXAMKIT_TEST_COMPLETE_DELAY_MS` is set, completing
/// an import announces each question insert on standard error and then pauses that many
/// milliseconds inside the transaction, so a test can kill the process mid-transaction. Never set
/// it in production.
fn complete_delay() -> Option<std::time::Duration> {
    static DELAY: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    *DELAY.get_or_init(|| {
        std::env::var("EXAMKIT_TEST_COMPLETE_DELAY_MS")
            .ok()
            .and_then(|ms| ms.trim().parse::<u64>().ok())
            .map(std::time::Duration::from_millis)
    })
}
