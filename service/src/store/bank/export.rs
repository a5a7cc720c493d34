//! Exporting the stored bank back to the bank format: a folder of `facets.json`, `questions.json`
//! and `assets/<asset id>.svg` that, imported into the same store, changes nothing.

use std::path::Path;

use examkit_bank::{BANK_VERSION, BankFile, Question, Revision};
use sqlx::FromRow;
use uuid::Uuid;

use super::{read_facets, status_of};
use crate::store::{Store, StoreError};

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

impl Store {
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
