//! The question bank in the store: importing a checked bank (rules 11–15 of
//! `service/bank/README.md`) and exporting the stored bank back to the bank format.
//!
//! An import runs in one transaction: every check against the stored bank happens first, and any
//! error leaves the store unchanged. Re-importing the same bank changes nothing. Concurrent imports
//! are serialised (SQLite's write lock; a transaction-scoped advisory lock on PostgreSQL), so two
//! instances loading the sample bank at once end with one copy.
//!
//! # Files
//!
//! - `mod.rs`: what import and export share: the stored facet options in display order
//!   ([`Store::stored_facets`]), a stored revision's status, and how many questions are stored
//!   ([`Store::bank_question_count`]).
//! - `import/`: importing a checked bank in one transaction ([`Store::import_bank`]), what an
//!   import changed ([`ImportSummary`]) and why it was refused ([`ImportError`]).
//! - `export.rs`: writing the stored bank into a folder ([`Store::export_bank`]), what an export
//!   wrote ([`ExportSummary`]) and why it failed ([`ExportError`]).

mod export;
mod import;

pub use export::{ExportError, ExportSummary};
pub use import::{ImportError, ImportSummary};

use examkit_bank::{CourseOption, FacetOption, Facets, Level, Status, Subject, SubtopicOption};
use sqlx::FromRow;

use super::{Store, StoreError};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_statuses_read_as_stored_and_unknown_ones_are_corrupt() {
        for status in [Status::Draft, Status::Published, Status::Withdrawn] {
            assert_eq!(status_of(status.as_str()).expect("a known status"), status);
        }
        let refused = status_of("archived").expect_err("an unknown status");
        assert!(matches!(refused, StoreError::Corrupt(_)), "{refused}");
    }
}
