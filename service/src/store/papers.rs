//! Saved papers: creation (idempotent on the client's id and body), frozen revisions, the papers
//! list, and the two prepared PDFs of a revision. Also the bank look-ups that check and typeset
//! a paper's pins.
//!
//! A paper is addressed by its owner and the client's id, so one account's ids never collide with,
//! or reveal, another's. Revisions are inserted, never updated: a saved change is a conditional
//! `UPDATE` of the paper's current revision (so of two concurrent changes from the same revision
//! exactly one wins) and the insertion of the new frozen revision, in one transaction.

use examkit_bank::Status;
use serde::{Deserialize, Serialize};
use sqlx::FromRow;

use super::words::StoredFlag;
use super::{Backend, Store, StoreError};

/// A question's version pin, exactly as search results and revision reads give it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pin {
    /// The bank question's id (lowercase hyphenated UUID).
    pub question_id: String,
    /// The pinned revision.
    pub revision: i64,
    /// SHA-256 of the revision's content and diagram files.
    pub content_version: String,
    /// SHA-256 of the revision's mark scheme.
    pub scheme_version: String,
}

/// What one paper revision holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaperContent {
    /// The title.
    pub title: String,
    /// `smart`, `none`, `1-page`, `2-pages` or `3-pages`.
    pub writing_space: String,
    /// Whether the mark scheme carries the estimated grade guide.
    pub grade_guide: bool,
    /// The questions in paper order.
    pub questions: Vec<Pin>,
}

/// What a save computed about the content: its marks and its documents' pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaperFigures {
    /// The total of the pinned revisions' marks.
    pub total_marks: i64,
    /// The question paper's pages.
    pub paper_pages: i64,
    /// The mark scheme's pages.
    pub scheme_pages: i64,
}

/// One stored revision of a paper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPaper {
    /// The paper's id.
    pub id: String,
    /// This revision.
    pub revision: i64,
    /// The paper's latest revision.
    pub latest_revision: i64,
    /// The revision's content.
    pub content: PaperContent,
    /// Marks and pages.
    pub figures: PaperFigures,
    /// When the paper was created (Unix ms).
    pub created_at: i64,
    /// When this revision was saved (Unix ms).
    pub saved_at: i64,
    /// Whether this revision's PDFs are prepared.
    pub exports_ready: bool,
}

/// One paper in the account's list: its latest revision, without the pins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaperListing {
    /// The paper's id.
    pub id: String,
    /// The latest revision.
    pub revision: i64,
    /// Its title.
    pub title: String,
    /// How many questions.
    pub question_count: i64,
    /// The total marks.
    pub total_marks: i64,
    /// The writing space.
    pub writing_space: String,
    /// The grade-guide option.
    pub grade_guide: bool,
    /// Creation time (Unix ms).
    pub created_at: i64,
    /// When the latest revision was saved (Unix ms).
    pub updated_at: i64,
}

/// The result of a creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// Revision 1 was saved.
    New,
    /// The account already has a paper with this id, created from the body of this hash.
    Existing {
        /// The stored creation hash.
        create_hash: String,
    },
    /// The account holds `max_papers` papers already.
    LimitReached,
}

/// The result of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Updated {
    /// The new revision was saved with this number.
    Saved(i64),
    /// The revision sent is not the current one, which is this.
    Stale(i64),
    /// No such paper in the account.
    Missing,
}

/// A bank revision as a pin check needs it: any status.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct BankRevision {
    /// Draft, published or withdrawn.
    #[sqlx(try_from = "StoredStatus")]
    pub status: Status,
    /// Its content version.
    pub content_version: String,
    /// Its scheme version.
    pub scheme_version: String,
    /// Its marks.
    pub marks: i64,
    /// The revision object of the bank format, as JSON.
    pub body: String,
}

/// A bank revision's `status` column as stored (`draft`, `published` or `withdrawn`), read into
/// the bank's [`Status`] with the bank store's reading.
#[derive(Debug, Clone)]
pub struct StoredStatus(String);

impl sqlx::Type<sqlx::Any> for StoredStatus {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <String as sqlx::Type<sqlx::Any>>::type_info()
    }

    fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
        <String as sqlx::Type<sqlx::Any>>::compatible(ty)
    }
}

impl<'r> sqlx::Decode<'r, sqlx::Any> for StoredStatus {
    fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        Ok(StoredStatus(
            <String as sqlx::Decode<'r, sqlx::Any>>::decode(value)?,
        ))
    }
}

impl TryFrom<StoredStatus> for Status {
    type Error = StoreError;

    fn try_from(stored: StoredStatus) -> Result<Status, StoreError> {
        super::bank::status_of(&stored.0)
    }
}

/// Which of a revision's two PDFs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The question paper.
    QuestionPaper,
    /// The mark scheme.
    MarkScheme,
}

const REVISION_COLUMNS: &str = "r.revision, p.revision AS latest_revision, r.title, \
     r.writing_space, r.grade_guide, r.questions, r.total_marks, r.paper_pages, r.scheme_pages, \
     p.created_at, r.saved_at, \
     (SELECT COUNT(*) FROM paper_exports e WHERE e.user_id = r.user_id \
      AND e.paper_id = r.paper_id AND e.revision = r.revision) AS export_count";

/// A paper revision's row as [`REVISION_COLUMNS`] reads it.
#[derive(Debug, Clone, FromRow)]
struct RevisionRow {
    revision: i64,
    latest_revision: i64,
    title: String,
    writing_space: String,
    /// Stored as 0 or 1.
    #[sqlx(try_from = "StoredFlag")]
    grade_guide: bool,
    /// The pins, as JSON.
    questions: String,
    total_marks: i64,
    paper_pages: i64,
    scheme_pages: i64,
    created_at: i64,
    saved_at: i64,
    /// The revision's prepared exports: 0 or 1.
    export_count: i64,
}

impl RevisionRow {
    /// The stored revision of paper `id`; its pins must read as JSON.
    fn into_stored(self, id: &str) -> Result<StoredPaper, StoreError> {
        let questions: Vec<Pin> = serde_json::from_str(&self.questions)
            .map_err(|e| StoreError::Corrupt(format!("pins of paper {id}: {e}")))?;
        Ok(StoredPaper {
            id: id.to_owned(),
            revision: self.revision,
            latest_revision: self.latest_revision,
            content: PaperContent {
                title: self.title,
                writing_space: self.writing_space,
                grade_guide: self.grade_guide,
                questions,
            },
            figures: PaperFigures {
                total_marks: self.total_marks,
                paper_pages: self.paper_pages,
                scheme_pages: self.scheme_pages,
            },
            created_at: self.created_at,
            saved_at: self.saved_at,
            exports_ready: self.export_count > 0,
        })
    }
}

/// A row of the papers list.
#[derive(Debug, Clone, FromRow)]
struct ListingRow {
    id: String,
    revision: i64,
    title: String,
    question_count: i64,
    total_marks: i64,
    writing_space: String,
    /// Stored as 0 or 1.
    #[sqlx(try_from = "StoredFlag")]
    grade_guide: bool,
    created_at: i64,
    updated_at: i64,
}

impl From<ListingRow> for PaperListing {
    fn from(row: ListingRow) -> Self {
        PaperListing {
            id: row.id,
            revision: row.revision,
            title: row.title,
            question_count: row.question_count,
            total_marks: row.total_marks,
            writing_space: row.writing_space,
            grade_guide: row.grade_guide,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// The size of one prepared PDF: its inline bytes' length, or its stored object's size.
#[derive(Debug, Clone, Copy, FromRow)]
struct ExportSize {
    inline_size: Option<i64>,
    object_size: Option<i64>,
}

fn pins_json(pins: &[Pin]) -> Result<String, StoreError> {
    serde_json::to_string(pins).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl Store {
    /// Creates revision 1 of a paper, unless the account already has a paper with this id
    /// ([`Created::Existing`], whatever the count) or holds `max_papers` papers.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_paper(
        &self,
        user_id: &str,
        paper_id: &str,
        create_hash: &str,
        content: &PaperContent,
        figures: &PaperFigures,
        max_papers: usize,
        now: i64,
    ) -> Result<Created, StoreError> {
        let questions = pins_json(&content.questions)?;
        let mut tx = self.begin_write().await?;
        if self.backend() == Backend::Postgres {
            // Serialises one account's creations, so the count below cannot be overtaken.
            sqlx::query("SELECT id FROM users WHERE id = $1 FOR UPDATE")
                .bind(user_id)
                .execute(&mut *tx)
                .await?;
        }
        let existing: Option<String> =
            sqlx::query_scalar("SELECT create_hash FROM papers WHERE user_id = $1 AND id = $2")
                .bind(user_id)
                .bind(paper_id)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(create_hash) = existing {
            return Ok(Created::Existing { create_hash });
        }
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM papers WHERE user_id = $1")
            .bind(user_id)
            .fetch_one(&mut *tx)
            .await?;
        if usize::try_from(count).unwrap_or(usize::MAX) >= max_papers {
            return Ok(Created::LimitReached);
        }
        let inserted = sqlx::query(
            "INSERT INTO papers (user_id, id, revision, create_hash, created_at, updated_at) \
             VALUES ($1, $2, 1, $3, $4, $4) ON CONFLICT (user_id, id) DO NOTHING",
        )
        .bind(user_id)
        .bind(paper_id)
        .bind(create_hash)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            // Another instance created it after our read (PostgreSQL only; SQLite holds the lock).
            tx.rollback().await?;
            let create_hash: String =
                sqlx::query_scalar("SELECT create_hash FROM papers WHERE user_id = $1 AND id = $2")
                    .bind(user_id)
                    .bind(paper_id)
                    .fetch_one(self.pool())
                    .await?;
            return Ok(Created::Existing { create_hash });
        }
        insert_revision(
            &mut tx, user_id, paper_id, 1, content, &questions, figures, now,
        )
        .await?;
        tx.commit().await?;
        Ok(Created::New)
    }

    /// The creation hash of one of the account's papers; `None` when it has no paper of this id.
    pub async fn paper_create_hash(
        &self,
        user_id: &str,
        paper_id: &str,
    ) -> Result<Option<String>, StoreError> {
        let hash =
            sqlx::query_scalar("SELECT create_hash FROM papers WHERE user_id = $1 AND id = $2")
                .bind(user_id)
                .bind(paper_id)
                .fetch_optional(self.pool())
                .await?;
        Ok(hash)
    }

    /// Saves a change as revision `expected + 1` if `expected` is the paper's current revision.
    pub async fn update_paper(
        &self,
        user_id: &str,
        paper_id: &str,
        expected: i64,
        content: &PaperContent,
        figures: &PaperFigures,
        now: i64,
    ) -> Result<Updated, StoreError> {
        let questions = pins_json(&content.questions)?;
        let mut tx = self.begin_write().await?;
        let moved = sqlx::query(
            "UPDATE papers SET revision = revision + 1, updated_at = $4 \
             WHERE user_id = $1 AND id = $2 AND revision = $3",
        )
        .bind(user_id)
        .bind(paper_id)
        .bind(expected)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 0 {
            let current: Option<i64> =
                sqlx::query_scalar("SELECT revision FROM papers WHERE user_id = $1 AND id = $2")
                    .bind(user_id)
                    .bind(paper_id)
                    .fetch_optional(&mut *tx)
                    .await?;
            tx.rollback().await?;
            return Ok(current.map_or(Updated::Missing, Updated::Stale));
        }
        let revision = expected + 1;
        insert_revision(
            &mut tx, user_id, paper_id, revision, content, &questions, figures, now,
        )
        .await?;
        tx.commit().await?;
        Ok(Updated::Saved(revision))
    }

    /// A revision of one of the account's papers; `None` for the latest.
    pub async fn paper(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: Option<i64>,
    ) -> Result<Option<StoredPaper>, StoreError> {
        let row: Option<RevisionRow> = match revision {
            Some(revision) => {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {REVISION_COLUMNS} FROM paper_revisions r \
                     JOIN papers p ON p.user_id = r.user_id AND p.id = r.paper_id \
                     WHERE r.user_id = $1 AND r.paper_id = $2 AND r.revision = $3"
                )))
                .bind(user_id)
                .bind(paper_id)
                .bind(revision)
                .fetch_optional(self.pool())
                .await?
            }
            None => {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {REVISION_COLUMNS} FROM paper_revisions r \
                     JOIN papers p ON p.user_id = r.user_id AND p.id = r.paper_id \
                     AND p.revision = r.revision \
                     WHERE r.user_id = $1 AND r.paper_id = $2"
                )))
                .bind(user_id)
                .bind(paper_id)
                .fetch_optional(self.pool())
                .await?
            }
        };
        row.map(|row| row.into_stored(paper_id)).transpose()
    }

    /// The account's papers, most recently saved first.
    pub async fn papers(&self, user_id: &str) -> Result<Vec<PaperListing>, StoreError> {
        let rows: Vec<ListingRow> = sqlx::query_as(
            "SELECT p.id, p.revision, r.title, r.question_count, r.total_marks, r.writing_space, \
             r.grade_guide, p.created_at, p.updated_at FROM papers p \
             JOIN paper_revisions r ON r.user_id = p.user_id AND r.paper_id = p.id \
             AND r.revision = p.revision \
             WHERE p.user_id = $1 ORDER BY p.updated_at DESC, p.id",
        )
        .bind(user_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(PaperListing::from).collect())
    }

    /// Stores a revision's two PDFs and the question paper's answer-space layout (JSON); a second preparation of the same revision keeps the first
    /// (rendering is deterministic, so they are the same bytes). With an object store the PDFs
    /// are written there first, and the row names them.
    #[allow(clippy::too_many_arguments)]
    pub async fn save_paper_exports(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: i64,
        question_paper: &[u8],
        mark_scheme: &[u8],
        layout_json: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        let question_paper = self.keep(question_paper.to_vec()).await?;
        let mark_scheme = self.keep(mark_scheme.to_vec()).await?;
        let mut tx = self.begin_write().await?;
        Store::hold_object(&mut tx, &question_paper).await?;
        Store::hold_object(&mut tx, &mark_scheme).await?;
        sqlx::query(
            "INSERT INTO paper_exports \
             (user_id, paper_id, revision, question_paper, mark_scheme, prepared_at, layout_json, \
              question_paper_object, mark_scheme_object) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (user_id, paper_id, revision) DO NOTHING",
        )
        .bind(user_id)
        .bind(paper_id)
        .bind(revision)
        .bind(question_paper.inline())
        .bind(mark_scheme.inline())
        .bind(now)
        .bind(layout_json)
        .bind(question_paper.object())
        .bind(mark_scheme.object())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// One prepared PDF of a revision; `None` when not prepared.
    pub async fn paper_export(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: i64,
        kind: ExportKind,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let (bytes, object) = export_columns(kind);
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {bytes} AS bytes, {object} AS object FROM paper_exports \
             WHERE user_id = $1 AND paper_id = $2 AND revision = $3"
        )))
        .bind(user_id)
        .bind(paper_id)
        .bind(revision)
        .fetch_optional(self.pool())
        .await?;
        self.read_kept(row.as_ref(), "bytes", "object").await
    }

    /// The size in bytes of one prepared PDF of a revision; `None` when not prepared.
    pub async fn paper_export_size(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: i64,
        kind: ExportKind,
    ) -> Result<Option<u64>, StoreError> {
        let (bytes, object) = export_columns(kind);
        let row: Option<ExportSize> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT CAST(length(e.{bytes}) AS BIGINT) AS inline_size, s.size_bytes AS object_size \
             FROM paper_exports e LEFT JOIN stored_objects s ON s.sha256 = e.{object} \
             WHERE e.user_id = $1 AND e.paper_id = $2 AND e.revision = $3"
        )))
        .bind(user_id)
        .bind(paper_id)
        .bind(revision)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let size = row.inline_size.or(row.object_size);
        size.map(|n| u64::try_from(n).map_err(|_| StoreError::Corrupt(format!("export size {n}"))))
            .transpose()
    }

    /// Bytes `range` of one prepared PDF of a revision (read from the database or the object
    /// store without loading the rest); `None` when not prepared. The range must lie within
    /// [`Store::paper_export_size`].
    pub async fn paper_export_range(
        &self,
        user_id: &str,
        paper_id: &str,
        revision: i64,
        kind: ExportKind,
        range: std::ops::Range<u64>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let (bytes, object) = export_columns(kind);
        let start = i64::try_from(range.start).unwrap_or(i64::MAX);
        let length = i64::try_from(range.end.saturating_sub(range.start)).unwrap_or(i64::MAX);
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT substr({bytes}, CAST($4 AS INTEGER), CAST($5 AS INTEGER)) AS part, {object} AS object \
             FROM paper_exports WHERE user_id = $1 AND paper_id = $2 AND revision = $3"
        )))
        .bind(user_id)
        .bind(paper_id)
        .bind(revision)
        .bind(start.saturating_add(1))
        .bind(length)
        .fetch_optional(self.pool())
        .await?;
        self.kept_range(row.as_ref(), range).await
    }

    /// A bank revision of any status, for checking a pin; `None` when it does not exist.
    pub async fn bank_revision(
        &self,
        question_id: &str,
        revision: i64,
    ) -> Result<Option<BankRevision>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT status, content_version, scheme_version, marks, body FROM bank_revisions \
             WHERE question_id = $1 AND revision = $2",
        )
        .bind(question_id)
        .bind(revision)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Every diagram file of a bank revision, by asset id.
    pub async fn bank_revision_files(
        &self,
        question_id: &str,
        revision: i64,
    ) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT a.id, a.bytes FROM bank_revision_assets ra \
             JOIN bank_assets a ON a.id = ra.asset_id AND a.question_id = ra.question_id \
             WHERE ra.question_id = $1 AND ra.revision = $2 ORDER BY a.id",
        )
        .bind(question_id)
        .bind(revision)
        .fetch_all(self.pool())
        .await?)
    }
}

#[allow(clippy::too_many_arguments)]
async fn insert_revision(
    tx: &mut super::WriteTx,
    user_id: &str,
    paper_id: &str,
    revision: i64,
    content: &PaperContent,
    questions: &str,
    figures: &PaperFigures,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO paper_revisions (user_id, paper_id, revision, title, writing_space, \
         grade_guide, questions, question_count, total_marks, paper_pages, scheme_pages, saved_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(user_id)
    .bind(paper_id)
    .bind(revision)
    .bind(&content.title)
    .bind(&content.writing_space)
    .bind(i64::from(content.grade_guide))
    .bind(questions)
    .bind(i64::try_from(content.questions.len()).unwrap_or(i64::MAX))
    .bind(figures.total_marks)
    .bind(figures.paper_pages)
    .bind(figures.scheme_pages)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The columns holding one kind of export: `(bytes, object)`.
fn export_columns(kind: ExportKind) -> (&'static str, &'static str) {
    match kind {
        ExportKind::QuestionPaper => ("question_paper", "question_paper_object"),
        ExportKind::MarkScheme => ("mark_scheme", "mark_scheme_object"),
    }
}
