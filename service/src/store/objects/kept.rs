//! A row's bytes kept in the database or as an object: claimed before the object is written,
//! held by the transaction that saves the row naming it, and read back from either.

use std::time::Duration;

use bytes::Bytes;
use sqlx::{FromRow, Row};

use super::*;
use crate::store::{Durability, Store, StoreError, WriteTx, now_ms};

/// How long a writer waits for a sweep that is deleting the object it wants to write, in all.
const CLAIM_WAIT: Duration = Duration::from_secs(30);

/// Bytes on their way to a row: kept in the row, or already written as an object.
#[derive(Debug, Clone)]
pub enum Kept {
    /// Saved in the database column itself.
    Inline(Vec<u8>),
    /// Written to the object store under this SHA-256; the row names it.
    Object(String),
}

impl Kept {
    /// The bytes to bind to the database column (`None` when in the object store).
    pub fn inline(&self) -> Option<&[u8]> {
        match self {
            Kept::Inline(bytes) => Some(bytes),
            Kept::Object(_) => None,
        }
    }

    /// The object to bind to the object column (`None` when inline).
    pub fn object(&self) -> Option<&str> {
        match self {
            Kept::Inline(_) => None,
            Kept::Object(sha256) => Some(sha256),
        }
    }
}

/// A part of what a row keeps, as [`Store::kept_range`] reads it: the range of its inline column
/// (selected `AS part`) and its object column (selected `AS object`).
#[derive(Debug, Clone, FromRow)]
struct KeptPart {
    part: Option<Vec<u8>>,
    object: Option<String>,
}

impl Store {
    /// This store with its files kept in `objects` (`None`: in the database).
    pub fn with_objects(mut self, objects: Option<Objects>) -> Store {
        self.objects = objects;
        self
    }

    /// The object store files go to, if one is configured.
    pub fn objects(&self) -> Option<&Objects> {
        self.objects.as_ref()
    }

    pub(super) fn require_objects(&self) -> Result<&Objects, StoreError> {
        self.objects.as_ref().ok_or(StoreError::NoObjectStore)
    }

    /// Prepares bytes for a row: in the database when no object store is configured; else
    /// claimed and written as an object first (see the module's notes). The row that names the
    /// object must be saved with [`Store::hold_object`] in its transaction.
    pub async fn keep(&self, bytes: Vec<u8>) -> Result<Kept, StoreError> {
        let Some(objects) = &self.objects else {
            return Ok(Kept::Inline(bytes));
        };
        let sha256 = hex_sha256(&bytes);
        self.claim_object(&sha256, bytes.len()).await?;
        objects.put(&sha256, Bytes::from(bytes)).await?;
        Ok(Kept::Object(sha256))
    }

    /// Claims an object's row before its object is written, waiting while a sweep deletes it.
    pub(super) async fn claim_object(&self, sha256: &str, size: usize) -> Result<(), StoreError> {
        let deadline = tokio::time::Instant::now() + CLAIM_WAIT;
        loop {
            let claimed = self
                .execute_write(
                    Durability::Saved,
                    sqlx::query(
                        "INSERT INTO stored_objects (sha256, size_bytes, state, touched_at) \
                         VALUES ($1, $2, 'live', $3) \
                         ON CONFLICT (sha256) DO UPDATE SET touched_at = excluded.touched_at \
                         WHERE stored_objects.state = 'live'",
                    )
                    .bind(sha256)
                    .bind(i64::try_from(size).unwrap_or(i64::MAX))
                    .bind(now_ms()),
                )
                .await?
                .rows_affected();
            if claimed == 1 {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(StoreError::Objects(format!(
                    "object {sha256} is still being deleted by a sweep"
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// In the transaction saving a row that names `kept`'s object: touches its claim, so a sweep
    /// cannot take it. Fails (and the transaction must roll back) when a sweep already has, which
    /// only happens when the write took longer than the sweep's grace period.
    pub async fn hold_object(tx: &mut WriteTx, kept: &Kept) -> Result<(), StoreError> {
        let Some(sha256) = kept.object() else {
            return Ok(());
        };
        let held = sqlx::query(
            "UPDATE stored_objects SET touched_at = $1 WHERE sha256 = $2 AND state = 'live'",
        )
        .bind(now_ms())
        .bind(sha256)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        if held == 1 {
            Ok(())
        } else {
            Err(StoreError::Objects(format!(
                "object {sha256} was swept before the row naming it was saved; write it again"
            )))
        }
    }

    /// The bytes a row holds in its `inline` column, else in the object its `object` column names;
    /// `None` without a row or when both are empty.
    pub async fn read_kept(
        &self,
        row: Option<&sqlx::any::AnyRow>,
        inline: &str,
        object: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(row) = row else { return Ok(None) };
        match (
            row.try_get::<Option<Vec<u8>>, _>(inline)?,
            row.try_get::<Option<String>, _>(object)?,
        ) {
            (Some(bytes), _) => Ok(Some(bytes)),
            (None, Some(sha256)) => Ok(Some(self.require_objects()?.get(&sha256).await?)),
            (None, None) => Ok(None),
        }
    }

    /// Bytes `range` of what a row keeps, from a query that selected `part` (the range of its
    /// inline column, read with `substr`) and `object` (its object column): the part when the
    /// bytes are inline, else the range read from the object store; `None` without a row.
    pub async fn kept_range(
        &self,
        row: Option<&sqlx::any::AnyRow>,
        range: std::ops::Range<u64>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(row) = row else { return Ok(None) };
        let KeptPart { part, object } = KeptPart::from_row(row)?;
        if let Some(part) = part {
            return Ok(Some(part));
        }
        match (object, self.objects()) {
            (Some(sha256), Some(objects)) => Ok(Some(objects.get_range(&sha256, range).await?)),
            (Some(_), None) => Err(StoreError::NoObjectStore),
            (None, _) => Ok(None),
        }
    }
}
