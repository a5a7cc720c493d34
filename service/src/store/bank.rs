//! The question bank in the store: importing a checked bank (rules 11–15 of
//! `service/bank/README.md`) and exporting the stored bank back to the bank format.
//!
//! An import runs in one transaction: every check against the stored bank happens first, and any
//! error leaves the store unchanged. Re-importing the same bank changes nothing. Concurrent imports
//! are serialised (SQLite's write lock; a transaction-scoped advisory lock on PostgreSQL), so two
//! instances loading the sample bank at once end with one copy.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use examkit_bank::digest::{self, Digests};
use examkit_bank::{
    BANK_VERSION, Bank, BankError, BankFile, CourseOption, FacetOption, Facets, Level, Question,
    Revision, Status, Subject, SubtopicOption,
};
use sqlx::FromRow;
use uuid::Uuid;

use super::{Backend, Store, StoreError, WriteTx, now_ms};

/// The key of the PostgreSQL advisory lock that serialises bank imports.
const IMPORT_LOCK: i64 = 0x6578_616d_6b62;

/// What an import changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Questions in the imported bank.
    pub questions: usize,
    /// Revisions in the imported bank.
    pub revisions: usize,
    /// Questions new to the store.
    pub questions_added: usize,
    /// Stored questions that gained or changed a revision.
    pub questions_changed: usize,
    /// Revisions new to the store.
    pub revisions_added: usize,
    /// Stored revisions whose status moved or whose draft content changed.
    pub revisions_changed: usize,
    /// Asset files new to the store.
    pub assets_added: usize,
    /// Facet options new to the store.
    pub facets_added: usize,
    /// Facet options whose label changed.
    pub facets_relabelled: usize,
}

impl ImportSummary {
    /// Whether the import changed nothing.
    pub fn is_unchanged(&self) -> bool {
        self.questions_added
            + self.questions_changed
            + self.revisions_added
            + self.revisions_changed
            + self.assets_added
            + self.facets_added
            + self.facets_relabelled
            == 0
    }
}

impl std::fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} questions ({} revisions) in the bank: questions added {}, changed {}; revisions added {}, changed {}; assets added {}; facets added {}, relabelled {}",
            self.questions,
            self.revisions,
            self.questions_added,
            self.questions_changed,
            self.revisions_added,
            self.revisions_changed,
            self.assets_added,
            self.facets_added,
            self.facets_relabelled
        )
    }
}

/// Why an import was refused.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The bank is invalid, or conflicts with the stored bank; nothing was written.
    #[error("the bank has {} error(s)", .0.len())]
    Invalid(Vec<BankError>),
    /// The store failed; nothing was written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for ImportError {
    fn from(e: sqlx::Error) -> Self {
        ImportError::Store(StoreError::Database(e))
    }
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The target folder holds files already.
    #[error("{0} is not empty; export into a new or empty folder")]
    NotEmpty(String),
    /// Writing a file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for ExportError {
    fn from(e: sqlx::Error) -> Self {
        ExportError::Store(StoreError::Database(e))
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Questions written.
    pub questions: usize,
    /// Revisions written.
    pub revisions: usize,
    /// Asset files written.
    pub assets: usize,
}

/// A stored revision, as the importer compares it.
struct StoredRevision {
    status: Status,
    digest: String,
}

/// A `bank_revisions` row as the importer reads it; the status is checked on the way to a
/// [`StoredRevision`].
#[derive(Debug, Clone, FromRow)]
struct StoredRevisionRow {
    question_id: String,
    revision: i64,
    status: String,
    digest: String,
}

/// A `bank_revisions` row as an export reads it.
#[derive(Debug, Clone, FromRow)]
struct ExportedRevisionRow {
    question_id: String,
    status: String,
    body: String,
}

/// A `bank_assets` row as an export reads it.
#[derive(Debug, Clone, FromRow)]
struct ExportedAssetRow {
    id: String,
    bytes: Vec<u8>,
}

/// A `bank_facets` row as an export reads it: a subtopic's topic, a course's level and subject.
#[derive(Debug, Clone, FromRow)]
struct FacetOptionRow {
    kind: String,
    id: String,
    label: String,
    topic: Option<String>,
    level: Option<String>,
    subject: Option<String>,
}

/// A `bank_facets` row as the importer reads it.
#[derive(Debug, Clone, FromRow)]
struct StoredFacetRow {
    kind: String,
    id: String,
    #[sqlx(flatten)]
    facet: StoredFacet,
}

/// A `bank_questions` row as the importer reads it.
#[derive(Debug, Clone, FromRow)]
struct StoredQuestionRow {
    id: String,
    latest_published: Option<i64>,
}

/// A `bank_assets` row as the importer reads it.
#[derive(Debug, Clone, FromRow)]
struct StoredAssetRow {
    id: String,
    question_id: String,
    sha256: String,
}

/// One value bound into a batched insert.
enum Arg {
    Text(String),
    Int(i64),
    Bytes(Vec<u8>),
    NullText,
}

pub(super) fn status_of(text: &str) -> Result<Status, StoreError> {
    match text {
        "draft" => Ok(Status::Draft),
        "published" => Ok(Status::Published),
        "withdrawn" => Ok(Status::Withdrawn),
        other => Err(StoreError::Corrupt(format!(
            "unknown revision status {other:?}"
        ))),
    }
}

fn level_of(text: &str) -> Result<Level, StoreError> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| StoreError::Corrupt(format!("unknown level {text:?}")))
}

fn subject_of(text: &str) -> Result<Subject, StoreError> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| StoreError::Corrupt(format!("unknown subject {text:?}")))
}

/// Inserts `rows` into `table` with multi-row `INSERT`s of a bounded number of parameters.
async fn insert_rows(
    tx: &mut WriteTx,
    table: &str,
    columns: &[&str],
    rows: Vec<Vec<Arg>>,
) -> Result<(), sqlx::Error> {
    const MAX_PARAMETERS: usize = 8_000;
    let per_statement = (MAX_PARAMETERS / columns.len()).max(1);
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<Vec<Arg>> = rows.by_ref().take(per_statement).collect();
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        let mut n = 0;
        for (i, _) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push('(');
            for c in 0..columns.len() {
                if c > 0 {
                    sql.push_str(", ");
                }
                n += 1;
                sql.push_str(&format!("${n}"));
            }
            sql.push(')');
        }
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for row in chunk {
            for arg in row {
                query = match arg {
                    Arg::Text(s) => query.bind(s),
                    Arg::Int(i) => query.bind(i),
                    Arg::Bytes(b) => query.bind(b),
                    Arg::NullText => query.bind(None::<String>),
                };
            }
        }
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

impl Store {
    /// The facet options stored, each kind in display order.
    pub async fn stored_facets(&self) -> Result<Facets, StoreError> {
        let mut conn = self.pool().acquire().await?;
        read_facets(&mut conn).await
    }

    /// The number of questions in the bank.
    pub async fn bank_question_count(&self) -> Result<i64, StoreError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) AS n FROM bank_questions")
            .fetch_one(self.pool())
            .await?;
        Ok(n)
    }

    /// Reads the bank at `path` (facets already stored count as declared, so one question file
    /// can be imported on its own) and imports it.
    pub async fn import_bank_path(&self, path: &Path) -> Result<ImportSummary, ImportError> {
        let known = self.stored_facets().await?;
        let bank = examkit_bank::load_with(path, &known).map_err(ImportError::Invalid)?;
        self.import_bank(&bank).await
    }

    /// Imports the sample bank embedded in the binary.
    pub async fn import_sample_bank(&self) -> Result<ImportSummary, ImportError> {
        let bank = examkit_bank::sample::load().map_err(ImportError::Invalid)?;
        self.import_bank(&bank).await
    }

    /// Imports the sample bank when the bank holds no question; `Ok(None)` when it held some.
    pub async fn load_sample_bank_if_empty(&self) -> Result<Option<ImportSummary>, ImportError> {
        if self.bank_question_count().await? > 0 {
            return Ok(None);
        }
        self.import_sample_bank().await.map(Some)
    }

    /// Imports a checked bank in one transaction, enforcing rules 11–15 against the stored bank.
    pub async fn import_bank(&self, bank: &Bank) -> Result<ImportSummary, ImportError> {
        // Digests first, outside the transaction: they need only the bank.
        let mut digests: HashMap<(Uuid, u32), Digests> = HashMap::new();
        for (_, _, question) in bank.questions() {
            for revision in &question.revisions {
                let d = digest::digests(revision, &bank.assets).map_err(|e| {
                    ImportError::Store(StoreError::Corrupt(format!("the bank lost an asset: {e}")))
                })?;
                digests.insert((question.id, revision.revision), d);
            }
        }
        let mut tx = self.begin_write().await?;
        if self.backend() == Backend::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(IMPORT_LOCK)
                .execute(&mut *tx)
                .await?;
        }
        let summary = import_in(&mut tx, self.backend(), bank, &digests).await;
        match summary {
            Ok(summary) => {
                tx.commit().await?;
                if self.backend() == Backend::Postgres
                    && summary.questions_added + summary.questions_changed > 0
                {
                    // Fresh statistics for the search tables, so the next searches are planned
                    // for what the import left (autovacuum would get there, minutes later).
                    // Statistics are advice: a failure here does not undo the import.
                    if let Err(e) = sqlx::query("ANALYZE search_questions, search_terms")
                        .execute(self.pool())
                        .await
                    {
                        tracing::warn!(error = %e, "search statistics not refreshed");
                    }
                }
                Ok(summary)
            }
            Err(e) => {
                // Dropping the transaction rolls it back; say so explicitly.
                tx.rollback().await?;
                Err(e)
            }
        }
    }

    /// Writes the stored bank into `dir` (created if needed; must hold no files) in the bank
    /// format: `facets.json`, `questions.json` and `assets/<asset id>.svg`. Importing the folder
    /// into the same store changes nothing.
    pub async fn export_bank(&self, dir: &Path) -> Result<ExportSummary, ExportError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| ExportError::Io { path, source }
        };
        if dir.exists() {
            let mut entries = std::fs::read_dir(dir).map_err(io(dir))?;
            if entries.next().is_some() {
                return Err(ExportError::NotEmpty(dir.display().to_string()));
            }
        }
        let assets_dir = dir.join("assets");
        std::fs::create_dir_all(&assets_dir).map_err(io(&assets_dir))?;

        let mut conn = self.pool().acquire().await?;
        let facets = read_facets(&mut conn).await?;
        let rows: Vec<ExportedRevisionRow> = sqlx::query_as(
            "SELECT question_id, revision, status, body FROM bank_revisions \
             ORDER BY question_id, revision",
        )
        .fetch_all(&mut *conn)
        .await?;
        let mut questions: Vec<Question> = Vec::new();
        let mut revisions = 0;
        for row in rows {
            let id = &row.question_id;
            let id = Uuid::parse_str(id)
                .map_err(|_| StoreError::Corrupt(format!("question id {id:?} is not a UUID")))?;
            let mut revision: Revision = serde_json::from_str(&row.body)
                .map_err(|e| StoreError::Corrupt(format!("revision of {id}: {e}")))?;
            revision.status = status_of(&row.status)?;
            for asset in &mut revision.assets {
                asset.file = asset_path(asset.id);
            }
            revisions += 1;
            match questions.last_mut() {
                Some(q) if q.id == id => q.revisions.push(revision),
                _ => questions.push(Question {
                    id,
                    revisions: vec![revision],
                }),
            }
        }
        let asset_rows: Vec<ExportedAssetRow> =
            sqlx::query_as("SELECT id, bytes FROM bank_assets ORDER BY id")
                .fetch_all(&mut *conn)
                .await?;
        let assets = asset_rows.len();
        for row in asset_rows {
            let id = &row.id;
            let id = Uuid::parse_str(id)
                .map_err(|_| StoreError::Corrupt(format!("asset id {id:?} is not a UUID")))?;
            let path = dir.join(asset_path(id));
            std::fs::write(&path, row.bytes).map_err(io(&path))?;
        }
        let summary = ExportSummary {
            questions: questions.len(),
            revisions,
            assets,
        };
        let facets_file = BankFile {
            schema: None,
            bank_version: BANK_VERSION.to_owned(),
            description: Some("Facet options exported from an examkit store.".to_owned()),
            facets: Some(facets),
            questions: Vec::new(),
        };
        let questions_file = BankFile {
            schema: None,
            bank_version: BANK_VERSION.to_owned(),
            description: Some("Questions exported from an examkit store.".to_owned()),
            facets: None,
            questions,
        };
        for (name, file) in [
            ("facets.json", &facets_file),
            ("questions.json", &questions_file),
        ] {
            let path = dir.join(name);
            let mut text = serde_json::to_vec_pretty(file)
                .map_err(|e| StoreError::Corrupt(format!("cannot serialise {name}: {e}")))?;
            text.push(b'\n');
            std::fs::write(&path, text).map_err(io(&path))?;
        }
        Ok(summary)
    }
}

/// The path an export gives an asset file.
fn asset_path(id: Uuid) -> String {
    format!("assets/{}.svg", id.hyphenated())
}

async fn read_facets(conn: &mut sqlx::AnyConnection) -> Result<Facets, StoreError> {
    let rows: Vec<FacetOptionRow> = sqlx::query_as(
        "SELECT kind, id, label, topic, level, subject FROM bank_facets ORDER BY kind, position, id",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut facets = Facets::default();
    for row in rows {
        let FacetOptionRow {
            kind,
            id,
            label,
            topic,
            level,
            subject,
        } = row;
        match kind.as_str() {
            "course" => {
                let (Some(level), Some(subject)) = (level, subject) else {
                    return Err(StoreError::Corrupt(format!(
                        "course {id:?} lacks its level or subject"
                    )));
                };
                facets.course.push(CourseOption {
                    id,
                    label,
                    level: level_of(&level)?,
                    subject: subject_of(&subject)?,
                });
            }
            "board" => facets.board.push(FacetOption { id, label }),
            "module" => facets.module.push(FacetOption { id, label }),
            "topic" => facets.topic.push(FacetOption { id, label }),
            "subtopic" => {
                let Some(topic) = topic else {
                    return Err(StoreError::Corrupt(format!(
                        "subtopic {id:?} lacks its topic"
                    )));
                };
                facets.subtopic.push(SubtopicOption { id, label, topic });
            }
            other => return Err(StoreError::Corrupt(format!("unknown facet kind {other:?}"))),
        }
    }
    Ok(facets)
}

/// A facet option to store: kind, id, label, a subtopic's topic, a course's level and subject.
type FacetRow<'a> = (
    &'static str,
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<(Level, Subject)>,
);

/// A facet option as stored: label, position and (for subtopics and courses) what it belongs to.
#[derive(Debug, Clone, FromRow)]
struct StoredFacet {
    label: String,
    position: i64,
    topic: Option<String>,
}

/// What the store holds of the bank, read inside the import's transaction.
#[derive(Default)]
struct Stored {
    /// Facet options by (kind, id).
    facets: HashMap<(String, String), StoredFacet>,
    /// Question ids with their latest published revision.
    questions: HashMap<String, Option<i64>>,
    /// Each question's revisions by number.
    revisions: HashMap<String, BTreeMap<i64, StoredRevision>>,
    /// Asset ids with their question and SHA-256.
    assets: HashMap<String, (String, String)>,
}

/// What an import writes, once every check has passed.
#[derive(Default)]
struct Writes<'a> {
    /// Facet options to insert: kind, id, label, position, topic, level, subject.
    facet_inserts: Vec<Vec<Arg>>,
    /// Facet options to relabel: kind, id, label.
    relabels: Vec<(&'static str, String, String)>,
    /// Questions to insert: id and latest published revision.
    question_inserts: Vec<Vec<Arg>>,
    /// Revisions to insert (see [`revision_row`]).
    revision_inserts: Vec<Vec<Arg>>,
    /// The assets of inserted revisions: question id, revision, asset id.
    link_inserts: Vec<Vec<Arg>>,
    /// Assets to insert: id, question id, media type, SHA-256, bytes.
    asset_inserts: Vec<Vec<Arg>>,
    /// Stored drafts rewritten or whose status moved: question id, revision, content, digests.
    revision_updates: Vec<(String, i64, &'a Revision, &'a Digests)>,
    /// Stored questions whose latest published revision moved.
    latest_updates: Vec<(String, Option<i64>)>,
    /// Questions added or changed, for the search index.
    touched: Vec<Uuid>,
}

/// Imports `bank` inside `tx`: reads what is stored, checks the bank against it (every error
/// found, or none), then writes what changed.
async fn import_in(
    tx: &mut WriteTx,
    backend: Backend,
    bank: &Bank,
    digests: &HashMap<(Uuid, u32), Digests>,
) -> Result<ImportSummary, ImportError> {
    let now = now_ms();
    let mut errors: Vec<BankError> = Vec::new();
    let mut summary = ImportSummary {
        questions: bank.question_count(),
        revisions: bank.questions().map(|(_, _, q)| q.revisions.len()).sum(),
        ..ImportSummary::default()
    };
    let stored = read_stored(tx).await?;
    let mut writes = Writes::default();
    plan_facets(bank, &stored.facets, &mut writes, &mut errors);
    summary.facets_added = writes.facet_inserts.len();
    summary.facets_relabelled = writes.relabels.len();
    plan_questions(
        bank,
        digests,
        &stored,
        now,
        &mut writes,
        &mut summary,
        &mut errors,
    )?;
    summary.assets_added = writes.asset_inserts.len();

    if !errors.is_empty() {
        let rank = |name: &str| {
            bank.files
                .iter()
                .position(|f| f.name == name)
                .unwrap_or(usize::MAX)
        };
        examkit_bank::error::sort_errors(&mut errors, rank);
        return Err(ImportError::Invalid(errors));
    }

    // Everything checked: write.
    let Writes {
        facet_inserts,
        relabels,
        question_inserts,
        revision_inserts,
        link_inserts,
        asset_inserts,
        revision_updates,
        latest_updates,
        touched,
    } = writes;
    write_facets(tx, facet_inserts, relabels).await?;
    write_inserts(
        tx,
        question_inserts,
        asset_inserts,
        revision_inserts,
        link_inserts,
    )
    .await?;
    write_revision_updates(tx, revision_updates, now).await?;
    write_latest(tx, latest_updates).await?;
    super::search::index_questions(tx, backend, &touched).await?;
    Ok(summary)
}

/// Reads the stored facets, questions, revisions and assets.
async fn read_stored(tx: &mut WriteTx) -> Result<Stored, StoreError> {
    let facet_rows: Vec<StoredFacetRow> =
        sqlx::query_as("SELECT kind, id, label, position, topic FROM bank_facets")
            .fetch_all(&mut **tx)
            .await?;
    let stored_facets: HashMap<(String, String), StoredFacet> = facet_rows
        .into_iter()
        .map(|row| ((row.kind, row.id), row.facet))
        .collect();
    let question_rows: Vec<StoredQuestionRow> =
        sqlx::query_as("SELECT id, latest_published FROM bank_questions")
            .fetch_all(&mut **tx)
            .await?;
    let stored_questions: HashMap<String, Option<i64>> = question_rows
        .into_iter()
        .map(|row| (row.id, row.latest_published))
        .collect();
    let revision_rows: Vec<StoredRevisionRow> =
        sqlx::query_as("SELECT question_id, revision, status, digest FROM bank_revisions")
            .fetch_all(&mut **tx)
            .await?;
    let mut stored_revisions: HashMap<String, BTreeMap<i64, StoredRevision>> = HashMap::new();
    for row in revision_rows {
        let status = status_of(&row.status)?;
        stored_revisions.entry(row.question_id).or_default().insert(
            row.revision,
            StoredRevision {
                status,
                digest: row.digest,
            },
        );
    }
    let asset_rows: Vec<StoredAssetRow> =
        sqlx::query_as("SELECT id, question_id, sha256 FROM bank_assets")
            .fetch_all(&mut **tx)
            .await?;
    let stored_assets: HashMap<String, (String, String)> = asset_rows
        .into_iter()
        .map(|row| (row.id, (row.question_id, row.sha256)))
        .collect();

    Ok(Stored {
        facets: stored_facets,
        questions: stored_questions,
        revisions: stored_revisions,
        assets: stored_assets,
    })
}

/// Checks the bank's facet options against the stored ones: labels may change; ids are never
/// removed; a subtopic keeps its topic. New options go at the end of their kind.
fn plan_facets(
    bank: &Bank,
    stored_facets: &HashMap<(String, String), StoredFacet>,
    writes: &mut Writes<'_>,
    errors: &mut Vec<BankError>,
) {
    let mut next_position: HashMap<&str, i64> = HashMap::new();
    for ((kind, _), f) in stored_facets {
        let next = next_position.entry(kind_static(kind)).or_insert(0);
        *next = (*next).max(f.position + 1);
    }
    let merged = bank.facets();
    let mut options: Vec<FacetRow<'_>> = Vec::new();
    options.extend(merged.course.iter().map(|o| {
        (
            "course",
            o.id.as_str(),
            o.label.as_str(),
            None,
            Some((o.level, o.subject)),
        )
    }));
    options.extend(
        merged
            .board
            .iter()
            .map(|o| ("board", o.id.as_str(), o.label.as_str(), None, None)),
    );
    options.extend(
        merged
            .module
            .iter()
            .map(|o| ("module", o.id.as_str(), o.label.as_str(), None, None)),
    );
    options.extend(
        merged
            .topic
            .iter()
            .map(|o| ("topic", o.id.as_str(), o.label.as_str(), None, None)),
    );
    options.extend(merged.subtopic.iter().map(|o| {
        (
            "subtopic",
            o.id.as_str(),
            o.label.as_str(),
            Some(o.topic.as_str()),
            None,
        )
    }));
    for (kind, id, label, topic, course) in options {
        match stored_facets.get(&(kind.to_owned(), id.to_owned())) {
            Some(stored) => {
                if kind == "subtopic" && stored.topic.as_deref() != topic {
                    let (file, pointer) = facet_location(bank, kind, id);
                    errors.push(BankError::new(
                        file,
                        pointer,
                        format!(
                            "subtopic {id:?} is stored under topic {:?}; a stored facet id keeps its meaning",
                            stored.topic.as_deref().unwrap_or_default()
                        ),
                    ));
                } else if stored.label != label {
                    writes
                        .relabels
                        .push((kind, id.to_owned(), label.to_owned()));
                }
            }
            None => {
                let next = next_position.entry(kind).or_insert(0);
                let position = *next;
                *next += 1;
                writes.facet_inserts.push(vec![
                    Arg::Text(kind.to_owned()),
                    Arg::Text(id.to_owned()),
                    Arg::Text(label.to_owned()),
                    Arg::Int(position),
                    topic.map_or(Arg::NullText, |t| Arg::Text(t.to_owned())),
                    course.map_or(Arg::NullText, |(l, _)| Arg::Text(l.as_str().to_owned())),
                    course.map_or(Arg::NullText, |(_, s)| Arg::Text(s.as_str().to_owned())),
                ]);
            }
        }
    }
}

/// Checks the bank's questions against the stored ones and plans their writes: a stored
/// revision is listed, keeps its content unless a draft, and never goes back to draft; an asset
/// id keeps its question and its bytes.
#[allow(clippy::too_many_arguments)]
fn plan_questions<'a>(
    bank: &'a Bank,
    digests: &'a HashMap<(Uuid, u32), Digests>,
    held: &Stored,
    now: i64,
    writes: &mut Writes<'a>,
    summary: &mut ImportSummary,
    errors: &mut Vec<BankError>,
) -> Result<(), StoreError> {
    let mut asset_seen: HashMap<Uuid, ()> = HashMap::new();
    for (file, qi, question) in bank.questions() {
        let qid = question.id.hyphenated().to_string();
        let qptr = format!("/questions/{qi}");
        let stored = held.revisions.get(&qid);
        let mut changed = false;
        let is_new = !held.questions.contains_key(&qid);
        if let Some(stored) = stored
            && let Some((&highest, _)) = stored.iter().next_back()
            && usize::try_from(highest).unwrap_or(usize::MAX) > question.revisions.len()
        {
            errors.push(BankError::new(
                        &file.name,
                        format!("{qptr}/revisions"),
                        format!(
                            "revision {highest} of this question is stored; list every stored revision (withdraw a revision instead of deleting it)"
                        ),
                    ));
        }
        for (ri, revision) in question.revisions.iter().enumerate() {
            let rptr = format!("{qptr}/revisions/{ri}");
            let Some(d) = digests.get(&(question.id, revision.revision)) else {
                continue;
            };
            plan_assets(
                bank,
                held,
                &file.name,
                &rptr,
                &qid,
                revision,
                &mut asset_seen,
                writes,
                errors,
            );
            changed |= plan_revision(
                RevisionAt {
                    file: &file.name,
                    rptr: &rptr,
                    qid: &qid,
                    question,
                    revision,
                    digests: d,
                },
                stored,
                now,
                writes,
                summary,
                errors,
            )?;
        }
        let latest = question
            .revisions
            .iter()
            .filter(|r| r.status == Status::Published)
            .map(|r| i64::from(r.revision))
            .max();
        if is_new {
            writes.question_inserts.push(vec![
                Arg::Text(qid.clone()),
                latest.map_or(Arg::NullText, Arg::Int),
            ]);
            summary.questions_added += 1;
            writes.touched.push(question.id);
        } else {
            if held.questions.get(&qid) != Some(&latest) {
                writes.latest_updates.push((qid.clone(), latest));
                changed = true;
            }
            if changed {
                summary.questions_changed += 1;
                writes.touched.push(question.id);
            }
        }
    }
    Ok(())
}

/// Where a revision of the bank is, and what it is.
struct RevisionAt<'p, 'a> {
    /// The bank file declaring it.
    file: &'p str,
    /// Its JSON pointer in that file.
    rptr: &'p str,
    /// Its question's id.
    qid: &'p str,
    /// Its question.
    question: &'a Question,
    /// The revision.
    revision: &'a Revision,
    /// Its digests.
    digests: &'a Digests,
}

/// Checks one revision against its stored one, if any (a stored revision never goes back to
/// draft, and keeps its content unless a draft), and plans its insert or update; `true` when it
/// changes its question.
fn plan_revision<'a>(
    at: RevisionAt<'_, 'a>,
    stored: Option<&BTreeMap<i64, StoredRevision>>,
    now: i64,
    writes: &mut Writes<'a>,
    summary: &mut ImportSummary,
    errors: &mut Vec<BankError>,
) -> Result<bool, StoreError> {
    let RevisionAt {
        file,
        rptr,
        qid,
        question,
        revision,
        digests: d,
    } = at;
    let number = i64::from(revision.revision);
    match stored.and_then(|s| s.get(&number)) {
        None => {
            writes
                .revision_inserts
                .push(revision_row(qid, revision, d, now)?);
            for asset in &revision.assets {
                writes.link_inserts.push(vec![
                    Arg::Text(qid.to_owned()),
                    Arg::Int(number),
                    Arg::Text(asset.id.hyphenated().to_string()),
                ]);
            }
            summary.revisions_added += 1;
            return Ok(true);
        }
        Some(old) => {
            if old.status != Status::Draft && revision.status == Status::Draft {
                errors.push(BankError::new(
                    file,
                    format!("{rptr}/status"),
                    format!(
                        "revision {number} is {} in the store and cannot go back to draft",
                        old.status.as_str()
                    ),
                ));
            }
            let content_changed = old.digest != d.revision_digest;
            if content_changed && old.status != Status::Draft {
                errors.push(BankError::new(
                    file,
                    rptr,
                    format!(
                        "revision {number} is {} in the store and its content cannot change; add the new content as revision {}",
                        old.status.as_str(),
                        question.revisions.len().max(stored.map_or(0, BTreeMap::len)) + 1
                    ),
                ));
            } else if content_changed || old.status != revision.status {
                writes
                    .revision_updates
                    .push((qid.to_owned(), number, revision, d));
                summary.revisions_changed += 1;
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Checks a revision's assets against the stored ones (one id, one question, one file) and plans
/// the insert of each new one, once.
#[allow(clippy::too_many_arguments)]
fn plan_assets(
    bank: &Bank,
    stored: &Stored,
    file_name: &str,
    rptr: &str,
    qid: &str,
    revision: &Revision,
    asset_seen: &mut HashMap<Uuid, ()>,
    writes: &mut Writes<'_>,
    errors: &mut Vec<BankError>,
) {
    for (ai, asset) in revision.assets.iter().enumerate() {
        let aid = asset.id.hyphenated().to_string();
        let Some(data) = bank.assets.get(&asset.id) else {
            continue;
        };
        match stored.assets.get(&aid) {
            Some((owner, _)) if owner != qid => errors.push(BankError::new(
                file_name,
                format!("{rptr}/assets/{ai}/id"),
                "asset id is stored for another question",
            )),
            Some((_, sha)) if *sha != data.sha256 => errors.push(BankError::new(
                file_name,
                format!("{rptr}/assets/{ai}/file"),
                "asset id is stored with other file bytes; a changed diagram needs a new asset id",
            )),
            Some(_) => {}
            None => {
                if asset_seen.insert(asset.id, ()).is_none() {
                    writes.asset_inserts.push(vec![
                        Arg::Text(aid.clone()),
                        Arg::Text(qid.to_owned()),
                        Arg::Text(data.media_type.clone()),
                        Arg::Text(data.sha256.clone()),
                        Arg::Bytes(data.bytes.clone()),
                    ]);
                }
            }
        }
    }
}

/// Inserts new facet options and relabels changed ones.
async fn write_facets(
    tx: &mut WriteTx,
    facet_inserts: Vec<Vec<Arg>>,
    relabels: Vec<(&'static str, String, String)>,
) -> Result<(), StoreError> {
    insert_rows(
        tx,
        "bank_facets",
        &[
            "kind", "id", "label", "position", "topic", "level", "subject",
        ],
        facet_inserts,
    )
    .await?;
    for (kind, id, label) in relabels {
        sqlx::query("UPDATE bank_facets SET label = $1 WHERE kind = $2 AND id = $3")
            .bind(label)
            .bind(kind)
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Inserts new questions, assets, revisions and the revisions' assets.
async fn write_inserts(
    tx: &mut WriteTx,
    question_inserts: Vec<Vec<Arg>>,
    asset_inserts: Vec<Vec<Arg>>,
    revision_inserts: Vec<Vec<Arg>>,
    link_inserts: Vec<Vec<Arg>>,
) -> Result<(), StoreError> {
    // NULL latest_published binds as text; PostgreSQL needs the column's own type.
    let question_inserts: Vec<Vec<Arg>> = question_inserts;
    let (with_latest, without_latest): (Vec<_>, Vec<_>) = question_inserts
        .into_iter()
        .partition(|row| matches!(row.get(1), Some(Arg::Int(_))));
    insert_rows(
        tx,
        "bank_questions",
        &["id", "latest_published"],
        with_latest,
    )
    .await?;
    let without_latest: Vec<Vec<Arg>> = without_latest
        .into_iter()
        .map(|mut row| {
            row.truncate(1);
            row
        })
        .collect();
    insert_rows(tx, "bank_questions", &["id"], without_latest).await?;
    insert_rows(
        tx,
        "bank_assets",
        &["id", "question_id", "media_type", "sha256", "bytes"],
        asset_inserts,
    )
    .await?;
    insert_rows(
        tx,
        "bank_revisions",
        &[
            "question_id",
            "revision",
            "status",
            "digest",
            "content_version",
            "scheme_version",
            "title",
            "marks",
            "body",
            "imported_at",
        ],
        revision_inserts,
    )
    .await?;
    insert_rows(
        tx,
        "bank_revision_assets",
        &["question_id", "revision", "asset_id"],
        link_inserts,
    )
    .await?;
    Ok(())
}

/// Rewrites stored drafts and moved statuses, with their revisions' assets.
async fn write_revision_updates(
    tx: &mut WriteTx,
    revision_updates: Vec<(String, i64, &Revision, &Digests)>,
    now: i64,
) -> Result<(), StoreError> {
    for (qid, number, revision, d) in revision_updates {
        let body = serde_json::to_string(revision)
            .map_err(|e| StoreError::Corrupt(format!("cannot serialise a revision: {e}")))?;
        sqlx::query(
            "UPDATE bank_revisions SET status = $1, digest = $2, content_version = $3, \
             scheme_version = $4, title = $5, marks = $6, body = $7, imported_at = $8 \
             WHERE question_id = $9 AND revision = $10",
        )
        .bind(revision.status.as_str())
        .bind(&d.revision_digest)
        .bind(&d.content_version)
        .bind(&d.scheme_version)
        .bind(&revision.title)
        .bind(i64::from(revision.marks))
        .bind(body)
        .bind(now)
        .bind(&qid)
        .bind(number)
        .execute(&mut **tx)
        .await?;
        sqlx::query("DELETE FROM bank_revision_assets WHERE question_id = $1 AND revision = $2")
            .bind(&qid)
            .bind(number)
            .execute(&mut **tx)
            .await?;
        let links: Vec<Vec<Arg>> = revision
            .assets
            .iter()
            .map(|a| {
                vec![
                    Arg::Text(qid.clone()),
                    Arg::Int(number),
                    Arg::Text(a.id.hyphenated().to_string()),
                ]
            })
            .collect();
        insert_rows(
            tx,
            "bank_revision_assets",
            &["question_id", "revision", "asset_id"],
            links,
        )
        .await?;
    }
    Ok(())
}

/// Moves the stored questions' latest published revisions.
async fn write_latest(
    tx: &mut WriteTx,
    latest_updates: Vec<(String, Option<i64>)>,
) -> Result<(), StoreError> {
    for (qid, latest) in latest_updates {
        match latest {
            Some(n) => {
                sqlx::query("UPDATE bank_questions SET latest_published = $1 WHERE id = $2")
                    .bind(n)
                    .bind(qid)
                    .execute(&mut **tx)
                    .await?
            }
            None => {
                sqlx::query("UPDATE bank_questions SET latest_published = NULL WHERE id = $1")
                    .bind(qid)
                    .execute(&mut **tx)
                    .await?
            }
        };
    }
    Ok(())
}

fn kind_static(kind: &str) -> &'static str {
    match kind {
        "course" => "course",
        "board" => "board",
        "module" => "module",
        "topic" => "topic",
        _ => "subtopic",
    }
}

/// The first file and pointer declaring a facet option.
fn facet_location(bank: &Bank, kind: &str, id: &str) -> (String, String) {
    for f in &bank.files {
        let Some(facets) = &f.file.facets else {
            continue;
        };
        let ids: Vec<&str> = match kind {
            "course" => facets.course.iter().map(|o| o.id.as_str()).collect(),
            "board" => facets.board.iter().map(|o| o.id.as_str()).collect(),
            "module" => facets.module.iter().map(|o| o.id.as_str()).collect(),
            "topic" => facets.topic.iter().map(|o| o.id.as_str()).collect(),
            _ => facets.subtopic.iter().map(|o| o.id.as_str()).collect(),
        };
        if let Some(i) = ids.iter().position(|x| *x == id) {
            return (f.name.clone(), format!("/facets/{kind}/{i}/id"));
        }
    }
    (String::new(), String::new())
}

fn revision_row(
    qid: &str,
    revision: &Revision,
    d: &Digests,
    now: i64,
) -> Result<Vec<Arg>, StoreError> {
    let body = serde_json::to_string(revision)
        .map_err(|e| StoreError::Corrupt(format!("cannot serialise a revision: {e}")))?;
    Ok(vec![
        Arg::Text(qid.to_owned()),
        Arg::Int(i64::from(revision.revision)),
        Arg::Text(revision.status.as_str().to_owned()),
        Arg::Text(d.revision_digest.clone()),
        Arg::Text(d.content_version.clone()),
        Arg::Text(d.scheme_version.clone()),
        Arg::Text(revision.title.clone()),
        Arg::Int(i64::from(revision.marks)),
        Arg::Text(body),
        Arg::Int(now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The importer's rows read their columns by name, a facet's own columns flattened, and a
    /// NULL read as `None`.
    #[tokio::test]
    async fn stored_rows_read_by_column_name() {
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect("sqlite::memory:")
            .await
            .expect("an in-memory database");
        let facet: StoredFacetRow = sqlx::query_as(
            "SELECT 7 AS position, NULL AS topic, 'Algebra' AS label, 'topic' AS kind, \
             'algebra' AS id",
        )
        .fetch_one(&pool)
        .await
        .expect("a facet row");
        assert_eq!(
            (facet.kind.as_str(), facet.id.as_str()),
            ("topic", "algebra")
        );
        assert_eq!(facet.facet.label, "Algebra");
        assert_eq!(facet.facet.position, 7);
        assert_eq!(facet.facet.topic, None);
        let question: StoredQuestionRow =
            sqlx::query_as("SELECT 'q' AS id, NULL AS latest_published")
                .fetch_one(&pool)
                .await
                .expect("a question row");
        assert_eq!(question.latest_published, None);
    }

    #[test]
    fn revision_statuses_read_as_stored_and_unknown_ones_are_corrupt() {
        for status in [Status::Draft, Status::Published, Status::Withdrawn] {
            assert_eq!(status_of(status.as_str()).expect("a known status"), status);
        }
        let refused = status_of("archived").expect_err("an unknown status");
        assert!(matches!(refused, StoreError::Corrupt(_)), "{refused}");
    }
}
