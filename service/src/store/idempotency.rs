//! Idempotency keys, isolated per API key.
//!
//! The first request with a key claims it (`pending`), runs, and stores its response (`done`).
//! A retry with the same request gets the stored response; a different request with the same key
//! gets 409; a retry while the first is still running waits for it rather than running twice.
//! Records are kept for [`RETENTION_MS`] after their request first arrived, then pruned.

use sqlx::Row;

use super::{Durability, PruneBatch, Store, StoreError};

/// A pending claim older than this is considered abandoned (its server stopped) and may be retaken.
pub const ABANDONED_AFTER_MS: i64 = 10 * 60_000;

/// How long an idempotency record is kept, from the time its request first arrived: 48 hours.
/// A retry within that time replays the stored response; after it the key is new again.
pub const RETENTION_MS: i64 = 48 * 60 * 60_000;

// A claim that may still be running is never old enough to prune.
const _: () = assert!(RETENTION_MS > ABANDONED_AFTER_MS);

const PRUNE: PruneBatch = PruneBatch {
    delete: "DELETE FROM idempotency_keys WHERE (key_id, idem_key)",
    select: "SELECT key_id, idem_key FROM idempotency_keys WHERE created_at < $1",
};

/// What a request's idempotency key allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key is new (or abandoned): run the operation and then call
    /// [`Store::finish_idempotency`] or [`Store::release_idempotency`].
    Fresh,
    /// The same request already completed: send this stored response.
    Replay {
        /// The stored status.
        status: u16,
        /// The stored JSON body.
        body: Vec<u8>,
    },
    /// The key was used for a different request.
    Mismatch,
    /// The same request is still running elsewhere.
    InProgress,
}

impl Store {
    /// Claims `idem_key` for `request_hash` (a hash of method, route and body).
    pub async fn claim_idempotency(
        &self,
        key_id: &str,
        idem_key: &str,
        request_hash: &str,
        now: i64,
    ) -> Result<Claim, StoreError> {
        let statement = sqlx::query(
            "INSERT INTO idempotency_keys (key_id, idem_key, request_hash, state, created_at) \
             VALUES ($1, $2, $3, 'pending', $4) ON CONFLICT (key_id, idem_key) DO NOTHING",
        )
        .bind(key_id)
        .bind(idem_key)
        .bind(request_hash)
        .bind(now);
        let inserted = self.execute_write(Durability::Saved, statement).await?;
        if inserted.rows_affected() == 1 {
            return Ok(Claim::Fresh);
        }
        let row = sqlx::query(
            "SELECT request_hash, state, status, body, created_at FROM idempotency_keys \
             WHERE key_id = $1 AND idem_key = $2",
        )
        .bind(key_id)
        .bind(idem_key)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            // Released between the insert and the read: try once more from the start.
            return Box::pin(self.claim_idempotency(key_id, idem_key, request_hash, now)).await;
        };
        let stored_hash: String = row.try_get("request_hash")?;
        if stored_hash != request_hash {
            return Ok(Claim::Mismatch);
        }
        let state: String = row.try_get("state")?;
        if state == "done" {
            let status: Option<i64> = row.try_get("status")?;
            let body: Option<Vec<u8>> = row.try_get("body")?;
            return Ok(Claim::Replay {
                status: status.and_then(|s| u16::try_from(s).ok()).unwrap_or(500),
                body: body.unwrap_or_default(),
            });
        }
        let created_at: i64 = row.try_get("created_at")?;
        if now - created_at > ABANDONED_AFTER_MS {
            let statement = sqlx::query(
                "UPDATE idempotency_keys SET created_at = $1 \
                 WHERE key_id = $2 AND idem_key = $3 AND state = 'pending' AND created_at = $4",
            )
            .bind(now)
            .bind(key_id)
            .bind(idem_key)
            .bind(created_at);
            let retaken = self.execute_write(Durability::Saved, statement).await?;
            if retaken.rows_affected() == 1 {
                return Ok(Claim::Fresh);
            }
        }
        Ok(Claim::InProgress)
    }

    /// Stores the response of a claimed key.
    pub async fn finish_idempotency(
        &self,
        key_id: &str,
        idem_key: &str,
        status: u16,
        body: &[u8],
    ) -> Result<(), StoreError> {
        let statement = sqlx::query(
            "UPDATE idempotency_keys SET state = 'done', status = $1, body = $2 \
             WHERE key_id = $3 AND idem_key = $4",
        )
        .bind(i64::from(status))
        .bind(body.to_vec())
        .bind(key_id)
        .bind(idem_key);
        self.execute_write(Durability::Saved, statement).await?;
        Ok(())
    }

    /// The stored response body of a completed key, if it is one.
    pub async fn idempotent_body(
        &self,
        key_id: &str,
        idem_key: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let row = sqlx::query(
            "SELECT body FROM idempotency_keys \
             WHERE key_id = $1 AND idem_key = $2 AND state = 'done'",
        )
        .bind(key_id)
        .bind(idem_key)
        .fetch_optional(self.pool())
        .await?;
        Ok(match row {
            Some(row) => row.try_get::<Option<Vec<u8>>, _>("body")?,
            None => None,
        })
    }

    /// Forgets a claimed key whose operation failed for a transient reason, so it can be retried.
    pub async fn release_idempotency(
        &self,
        key_id: &str,
        idem_key: &str,
    ) -> Result<(), StoreError> {
        let statement = sqlx::query(
            "DELETE FROM idempotency_keys WHERE key_id = $1 AND idem_key = $2 AND state = 'pending'",
        )
        .bind(key_id)
        .bind(idem_key);
        self.execute_write(Durability::Saved, statement).await?;
        Ok(())
    }

    /// Deletes the idempotency records whose request first arrived more than [`RETENTION_MS`]
    /// before `now`, in batches; returns how many were deleted.
    ///
    /// A claim still pending that long was abandoned long ago (after [`ABANDONED_AFTER_MS`] it
    /// may be retaken, and retaking it dates it afresh), so a request still running keeps its
    /// record.
    pub async fn prune_idempotency(&self, now: i64) -> Result<u64, StoreError> {
        self.prune_in_batches(PRUNE, now.saturating_sub(RETENTION_MS))
            .await
    }
}
