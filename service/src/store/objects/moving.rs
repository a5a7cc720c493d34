//! Moving stored files between the database and an object store (`examkit assets migrate`), one
//! row at a time, and listing the claimed objects to copy between stores.

use bytes::Bytes;
use sqlx::{FromRow, Row};

use super::*;
use crate::store::{Store, StoreError};

/// The columns stored files move between: `(table, object column, bytes column)`.
pub(super) const MOVABLE: [(&str, &str, &str); 5] = [
    ("asset_blobs", "object", "bytes"),
    ("asset_pages", "image_object", "image"),
    ("paper_exports", "question_paper_object", "question_paper"),
    ("paper_exports", "mark_scheme_object", "mark_scheme"),
    ("class_sets", "pdf_object", "pdf"),
];

/// One kind of stored file that can move between the database and an object store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Movable {
    /// Uploaded files.
    Uploads,
    /// Page images kept for a vision-model marker.
    PageImages,
    /// Question papers of prepared exports.
    QuestionPapers,
    /// Mark schemes of prepared exports.
    MarkSchemes,
    /// The PDFs of class sets.
    ClassSets,
}

impl Movable {
    /// Every kind, in the order a migration moves them.
    pub const ALL: [Movable; 5] = [
        Movable::Uploads,
        Movable::PageImages,
        Movable::QuestionPapers,
        Movable::MarkSchemes,
        Movable::ClassSets,
    ];

    /// A name for progress reports.
    pub fn name(self) -> &'static str {
        match self {
            Movable::Uploads => "uploads",
            Movable::PageImages => "page images",
            Movable::QuestionPapers => "question papers",
            Movable::MarkSchemes => "mark schemes",
            Movable::ClassSets => "class sets",
        }
    }

    fn columns(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Movable::Uploads => MOVABLE[0],
            Movable::PageImages => MOVABLE[1],
            Movable::QuestionPapers => MOVABLE[2],
            Movable::MarkSchemes => MOVABLE[3],
            Movable::ClassSets => MOVABLE[4],
        }
    }

    fn key_columns(self) -> &'static [&'static str] {
        match self {
            Movable::Uploads => &["asset_id"],
            Movable::PageImages => &["asset_id", "page"],
            Movable::QuestionPapers | Movable::MarkSchemes => &["user_id", "paper_id", "revision"],
            Movable::ClassSets => &["id"],
        }
    }

    fn key(self) -> String {
        self.key_columns().join(", ")
    }

    /// `k1 = $first AND k2 = $first+1 …`
    fn key_match(self, first: usize) -> String {
        self.key_columns()
            .iter()
            .enumerate()
            .map(|(i, k)| format!("{k} = ${}", first + i))
            .collect::<Vec<_>>()
            .join(" AND ")
    }

    fn bind_key<'q>(
        self,
        mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
        row: &sqlx::any::AnyRow,
    ) -> Result<sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>, StoreError> {
        for column in self.key_columns() {
            query = match *column {
                "page" | "revision" => query.bind(row.try_get::<i64, _>(*column)?),
                _ => query.bind(row.try_get::<String, _>(*column)?),
            };
        }
        Ok(query)
    }
}

/// A table's counts of stored files in the database (`inline`) and in objects (`named`).
#[derive(Debug, Clone, Copy, sqlx::FromRow)]
struct KeptCounts {
    inline: i64,
    named: i64,
}

/// The bytes of a row whose stored file is in the database, selected `AS bytes`.
#[derive(Debug, Clone, sqlx::FromRow)]
struct InlineBytes {
    bytes: Vec<u8>,
}

/// The object a row's stored file is in, selected `AS object`.
#[derive(Debug, Clone, sqlx::FromRow)]
struct NamedObject {
    object: String,
}

impl Store {
    /// How many stored files are in the database and how many name objects: `(inline, objects)`.
    pub async fn kept_counts(&self) -> Result<(i64, i64), StoreError> {
        let mut inline = 0;
        let mut named = 0;
        for (table, object, bytes) in MOVABLE {
            let counts: KeptCounts = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "SELECT COUNT({bytes}) AS inline, COUNT({object}) AS named FROM {table}"
            )))
            .fetch_one(self.pool())
            .await?;
            inline += counts.inline;
            named += counts.named;
        }
        Ok((inline, named))
    }

    /// Moves one stored file that is in the database into the object store `to`, if any is left
    /// in `table`: claimed, written, then the row switched to name it in one transaction (which
    /// also checks the row still holds those bytes). `Ok(false)` when none is left.
    pub async fn move_one_out(&self, to: &Objects, column: Movable) -> Result<bool, StoreError> {
        let (table, object, bytes) = column.columns();
        let key = column.key();
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {key}, {bytes} AS bytes FROM {table} WHERE {bytes} IS NOT NULL LIMIT 1"
        )))
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(false) };
        let InlineBytes { bytes: data } = InlineBytes::from_row(&row)?;
        let sha256 = hex_sha256(&data);
        self.claim_object(&sha256, data.len()).await?;
        to.put(&sha256, Bytes::from(data)).await?;
        let mut tx = self.begin_write().await?;
        Store::hold_object(&mut tx, &Kept::Object(sha256.clone())).await?;
        let mut update = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} SET {object} = $1, {bytes} = NULL WHERE {} AND {bytes} IS NOT NULL",
            column.key_match(2)
        )))
        .bind(&sha256);
        update = column.bind_key(update, &row)?;
        update.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Moves one stored file that names an object back into the database, reading it from the
    /// configured object store. `Ok(false)` when none is left.
    pub async fn move_one_in(&self, column: Movable) -> Result<bool, StoreError> {
        let objects = self.require_objects()?;
        let (table, object, bytes) = column.columns();
        let key = column.key();
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {key}, {object} AS object FROM {table} WHERE {object} IS NOT NULL LIMIT 1"
        )))
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(false) };
        let NamedObject { object: sha256 } = NamedObject::from_row(&row)?;
        let data = objects.get(&sha256).await?;
        let mut tx = self.begin_write().await?;
        let mut update = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} SET {bytes} = $1, {object} = NULL WHERE {} AND {object} = $2",
            column.key_match(3)
        )))
        .bind(data)
        .bind(&sha256);
        update = column.bind_key(update, &row)?;
        update.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Every claimed object's SHA-256, in order, after `after` (for copying between stores).
    pub async fn claimed_objects(
        &self,
        after: &str,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT sha256 FROM stored_objects WHERE state = 'live' AND sha256 > $1 ORDER BY sha256 LIMIT $2",
        )
        .bind(after)
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }
}
