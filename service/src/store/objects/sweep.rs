//! The sweep: deletes the objects nothing names, after a grace period, and finishes deletions a
//! stopped sweep began.

use super::*;
use crate::store::{Durability, Store, StoreError, now_ms};

/// What a sweep deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// Objects no row named, claimed and untouched for the grace period.
    pub unreferenced: u64,
    /// Objects in the store the database had no claim for, older than the grace period.
    pub untracked: u64,
    /// Deletions an earlier sweep had begun and not finished.
    pub resumed: u64,
}

impl Store {
    /// Deletes objects nothing names: those claimed, unnamed and untouched since `cutoff` (Unix
    /// milliseconds), those in the store without a claim written before `cutoff`, and deletions a
    /// stopped sweep left unfinished. Without an object store there is nothing to sweep.
    ///
    /// Only a prefix bound to this database is swept (it is bound now if nobody has bound it):
    /// one bound to another is refused with [`StoreError::ForeignObjects`] before anything is
    /// deleted, since the files there are named by that database, not this one.
    pub async fn sweep_objects(&self, cutoff: i64) -> Result<Swept, StoreError> {
        let Some(objects) = &self.objects else {
            return Ok(Swept::default());
        };
        self.bind_objects(objects).await?;
        let mut swept = Swept::default();
        // Deletions begun by a sweep that stopped: the claim says `deleting`, so nobody wrote the
        // object since; finish them. (Another sweep finishing the same one at once is harmless.)
        let stale: Vec<String> = sqlx::query_scalar(
            "SELECT sha256 FROM stored_objects WHERE state = 'deleting' AND touched_at < $1",
        )
        .bind(cutoff)
        .fetch_all(self.pool())
        .await?;
        for sha256 in stale {
            self.finish_deleting(objects, &sha256).await?;
            swept.resumed += 1;
        }
        let candidates = format!(
            "SELECT s.sha256 FROM stored_objects s WHERE s.state = 'live' AND s.touched_at < $1 AND {} \
             ORDER BY s.sha256 LIMIT 500",
            unreferenced("s")
        );
        let mark = format!(
            "UPDATE stored_objects SET state = 'deleting', touched_at = $3 \
             WHERE sha256 = $1 AND state = 'live' AND touched_at < $2 AND {}",
            unreferenced("stored_objects")
        );
        loop {
            let batch: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(candidates.clone()))
                .bind(cutoff)
                .fetch_all(self.pool())
                .await?;
            let mut marked = 0;
            for sha256 in &batch {
                let done = self
                    .execute_write(
                        Durability::Saved,
                        sqlx::query(sqlx::AssertSqlSafe(mark.clone()))
                            .bind(sha256)
                            .bind(cutoff)
                            .bind(now_ms()),
                    )
                    .await?
                    .rows_affected();
                if done == 1 {
                    self.finish_deleting(objects, sha256).await?;
                    swept.unreferenced += 1;
                    marked += 1;
                }
            }
            if batch.len() < 500 || marked == 0 {
                break;
            }
        }
        // Objects without any claim: written by an instance whose database was since restored
        // from an older backup, or left by hand. Each is claimed as `deleting` first, so a writer
        // arriving now waits instead of losing its object.
        for listed in objects.list().await? {
            if listed.modified_ms >= cutoff {
                continue;
            }
            let taken = self
                .execute_write(
                    Durability::Saved,
                    sqlx::query(
                        "INSERT INTO stored_objects (sha256, size_bytes, state, touched_at) \
                         VALUES ($1, $2, 'deleting', $3) ON CONFLICT (sha256) DO NOTHING",
                    )
                    .bind(&listed.sha256)
                    .bind(i64::try_from(listed.size).unwrap_or(i64::MAX))
                    .bind(now_ms()),
                )
                .await?
                .rows_affected();
            if taken == 1 {
                self.finish_deleting(objects, &listed.sha256).await?;
                swept.untracked += 1;
            }
        }
        Ok(swept)
    }

    async fn finish_deleting(&self, objects: &Objects, sha256: &str) -> Result<(), StoreError> {
        objects.delete(sha256).await?;
        self.execute_write(
            Durability::Saved,
            sqlx::query("DELETE FROM stored_objects WHERE sha256 = $1 AND state = 'deleting'")
                .bind(sha256),
        )
        .await?;
        Ok(())
    }
}
