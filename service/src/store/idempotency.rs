//! Idempotency keys, isolated per API key.
//!
//! The first request with a key claims it (`pending`), runs, and stores its response (`done`).
//! A retry with the same request gets the stored response; a different request with the same key
//! gets 409; a retry while the first is still running waits for it rather than running twice.
//! Records are kept for [`RETENTION_MS`] after their request first arrived, then pruned.

use sqlx::any::{AnyTypeInfo, AnyValueRef};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Any, Decode, Encode, Type};

use super::words::{UnknownWord, stored_words};
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

stored_words! {
    /// Where an idempotency record stands (`idempotency_keys.state`).
    IdempotencyState, "idempotency state" {
        /// Claimed by a request still running (or abandoned: see [`ABANDONED_AFTER_MS`]).
        Pending => "pending",
        /// The request finished and its response is stored.
        Done => "done",
    }
}

/// An idempotency record as a retry of its key reads it.
#[derive(Debug, Clone, sqlx::FromRow)]
struct Record {
    request_hash: String,
    state: IdempotencyState,
    status: Option<i64>,
    body: Option<Vec<u8>>,
    created_at: i64,
}

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
        let record: Option<Record> = sqlx::query_as(
            "SELECT request_hash, state, status, body, created_at FROM idempotency_keys \
             WHERE key_id = $1 AND idem_key = $2",
        )
        .bind(key_id)
        .bind(idem_key)
        .fetch_optional(self.pool())
        .await?;
        let Some(record) = record else {
            // Released between the insert and the read: try once more from the start.
            return Box::pin(self.claim_idempotency(key_id, idem_key, request_hash, now)).await;
        };
        if record.request_hash != request_hash {
            return Ok(Claim::Mismatch);
        }
        if record.state == IdempotencyState::Done {
            return Ok(Claim::Replay {
                status: record
                    .status
                    .and_then(|s| u16::try_from(s).ok())
                    .unwrap_or(500),
                body: record.body.unwrap_or_default(),
            });
        }
        let created_at = record.created_at;
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
        let body: Option<Option<Vec<u8>>> = sqlx::query_scalar(
            "SELECT body FROM idempotency_keys \
             WHERE key_id = $1 AND idem_key = $2 AND state = 'done'",
        )
        .bind(key_id)
        .bind(idem_key)
        .fetch_optional(self.pool())
        .await?;
        Ok(body.flatten())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_is_spelled_as_stored() {
        let spelled: Vec<&str> = IdempotencyState::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(spelled, ["pending", "done"]);
        assert_eq!(IdempotencyState::Pending.as_str(), "pending");
        assert_eq!(IdempotencyState::Done.as_str(), "done");
        for state in IdempotencyState::ALL {
            assert_eq!(IdempotencyState::parse(state.as_str()), Some(*state));
            assert_eq!(
                IdempotencyState::try_from(state.as_str().to_owned()),
                Ok(*state)
            );
            let json = serde_json::to_string(state).expect("serialises");
            assert_eq!(json, format!("\"{}\"", state.as_str()));
            let back: IdempotencyState = serde_json::from_str(&json).expect("reads back");
            assert_eq!(back, *state);
        }
    }

    #[test]
    fn an_unknown_state_is_refused() {
        for unknown in ["", "Done", " pending", "finished", "PENDING"] {
            let refused = IdempotencyState::try_from(unknown.to_owned()).expect_err(unknown);
            assert_eq!(refused.text, unknown);
            assert_eq!(IdempotencyState::parse(unknown), None);
        }
        let refused = IdempotencyState::try_from("finished".to_owned()).expect_err("unknown");
        assert_eq!(
            refused.to_string(),
            "unknown idempotency state \"finished\""
        );
        assert!(serde_json::from_str::<IdempotencyState>(r#""finished""#).is_err());
    }

    /// Stored records read their state once, as the row is decoded; an unknown word is a store
    /// error, and the words written are the text stored before the enum existed.
    #[tokio::test]
    async fn a_record_reads_its_state_from_the_row() {
        let pool = crate::store::memory_pool().await;
        let read = |state: &'static str| {
            let pool = pool.clone();
            async move {
                sqlx::query_as::<_, Record>(sqlx::AssertSqlSafe(format!(
                    "SELECT 'h' AS request_hash, '{state}' AS state, 201 AS status, \
                     NULL AS body, 5 AS created_at"
                )))
                .fetch_one(&pool)
                .await
                .map_err(StoreError::from)
            }
        };
        let done = read("done").await.expect("a finished record");
        assert_eq!(done.state, IdempotencyState::Done);
        assert_eq!(
            (
                done.request_hash.as_str(),
                done.status,
                done.body,
                done.created_at
            ),
            ("h", Some(201), None, 5)
        );
        let pending = read("pending").await.expect("a claimed record");
        assert_eq!(pending.state, IdempotencyState::Pending);
        let refused = read("finished").await.expect_err("an unknown word");
        assert!(
            refused
                .to_string()
                .contains("unknown idempotency state \"finished\""),
            "{refused}"
        );
        for state in IdempotencyState::ALL {
            let written: String = sqlx::query_scalar("SELECT $1")
                .bind(*state)
                .fetch_one(&pool)
                .await
                .expect("a written word");
            assert_eq!(written, state.as_str());
        }
    }
}
