//! Importing a checked bank into the store (rules 11–15 of `service/bank/README.md`), in one
//! transaction: what is stored is read, the bank is checked against it (every error found, or
//! none), then what changed is written.
//!
//! # Files
//!
//! - `mod.rs`: what an import changed ([`ImportSummary`]) or why it was refused
//!   ([`ImportError`]), the stored bank as the importer reads it, and the transaction.
//! - `plan.rs`: checking the bank against the stored bank and planning the writes.
//! - `write.rs`: writing the plan: new rows in batched inserts, then the stored rows that changed.

mod plan;
mod write;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use examkit_bank::digest::{self, Digests};
use examkit_bank::{Bank, BankError, Status};
use sqlx::FromRow;
use uuid::Uuid;

use self::plan::{Writes, plan_facets, plan_questions};
use self::write::{write_facets, write_inserts, write_latest, write_revision_updates};
use super::status_of;
use crate::store::{Backend, Store, StoreError, WriteTx, now_ms};

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

impl Store {
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
    crate::store::search::index_questions(tx, backend, &touched).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The importer's rows read their columns by name, a facet's own columns flattened, and a
    /// NULL read as `None`.
    #[tokio::test]
    async fn stored_rows_read_by_column_name() {
        let pool = crate::store::memory_pool().await;
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
}
