//! Browser sessions of the teachers' app and the limits on failed sign-ins.
//!
//! A session is found by the SHA-256 of its cookie's secret, so a copy of the database cannot be
//! replayed as cookies. Both the sessions and the sign-in counters live in the database, so every
//! instance sharing it knows a session, ends it at sign-out and counts the same attempts.

use super::accounts::User;
use super::{Durability, PruneBatch, Store, StoreError};

const PRUNE: PruneBatch = PruneBatch {
    delete: "DELETE FROM app_sessions WHERE id_hash",
    select: "SELECT id_hash FROM app_sessions WHERE expires_at <= $1",
};

/// A stored browser session, as its row holds it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AppSession {
    /// SHA-256 of the cookie's secret, hexadecimal.
    pub id_hash: String,
    /// The signed-in account.
    pub user_id: String,
    /// The token every state-changing request of this session must carry.
    pub csrf_token: String,
    /// When the session began, Unix milliseconds.
    pub created_at: i64,
    /// The last request seen, Unix milliseconds (updated at most once a minute).
    pub last_seen_at: i64,
    /// The absolute expiry, Unix milliseconds.
    pub expires_at: i64,
}

/// A counted window of sign-in attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The window's length, milliseconds.
    pub length_ms: i64,
    /// Attempts whose password may be checked in one window (failed ones, and those being
    /// checked: see [`Store::count_sign_in_attempt`]).
    pub limit: i64,
}

impl Store {
    /// Stores a new session.
    pub async fn create_app_session(&self, session: &AppSession) -> Result<(), StoreError> {
        self.execute_write(
            Durability::Saved,
            sqlx::query(
                "INSERT INTO app_sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(&session.id_hash)
            .bind(&session.user_id)
            .bind(&session.csrf_token)
            .bind(session.created_at)
            .bind(session.last_seen_at)
            .bind(session.expires_at),
        )
        .await?;
        Ok(())
    }

    /// A session and its account, by the hash of the cookie's secret.
    pub async fn app_session(
        &self,
        id_hash: &str,
    ) -> Result<Option<(AppSession, User)>, StoreError> {
        let session: Option<AppSession> = sqlx::query_as(
            "SELECT id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at \
             FROM app_sessions WHERE id_hash = $1",
        )
        .bind(id_hash)
        .fetch_optional(self.pool())
        .await?;
        let Some(session) = session else {
            return Ok(None);
        };
        let Some(user) = self.user(&session.user_id).await? else {
            return Ok(None);
        };
        Ok(Some((session, user)))
    }

    /// Records that a session was used at `now`.
    pub async fn touch_app_session(&self, id_hash: &str, now: i64) -> Result<(), StoreError> {
        self.execute_write(
            Durability::Bookkeeping,
            sqlx::query("UPDATE app_sessions SET last_seen_at = $1 WHERE id_hash = $2")
                .bind(now)
                .bind(id_hash),
        )
        .await?;
        Ok(())
    }

    /// Ends one session.
    pub async fn end_app_session(&self, id_hash: &str) -> Result<(), StoreError> {
        self.execute_write(
            Durability::Saved,
            sqlx::query("DELETE FROM app_sessions WHERE id_hash = $1").bind(id_hash),
        )
        .await?;
        Ok(())
    }

    /// Ends every session of an account; returns how many there were.
    pub async fn end_app_sessions_of(&self, user_id: &str) -> Result<u64, StoreError> {
        let done = self
            .execute_write(
                Durability::Saved,
                sqlx::query("DELETE FROM app_sessions WHERE user_id = $1").bind(user_id),
            )
            .await?;
        Ok(done.rows_affected())
    }

    /// Deletes the sessions whose absolute expiry passed by `now`, in batches.
    pub async fn prune_app_sessions(&self, now: i64) -> Result<u64, StoreError> {
        self.prune_in_batches(PRUNE, now).await
    }

    /// Remembers a browser that signed in to `user_id` (by the hash of its device cookie's
    /// secret) until `expires_at`; the account's expired devices are forgotten at the same time.
    pub async fn remember_device(
        &self,
        token_hash: &str,
        user_id: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM app_devices WHERE user_id = $1 AND expires_at <= $2")
            .bind(user_id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO app_devices (token_hash, user_id, created_at, expires_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (token_hash) DO UPDATE SET \
             user_id = excluded.user_id, expires_at = excluded.expires_at",
        )
        .bind(token_hash)
        .bind(user_id)
        .bind(now)
        .bind(expires_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Whether the browser whose device cookie's secret hashes to `token_hash` has signed in to
    /// `user_id` before, and is still remembered at `now`.
    pub async fn knows_device(
        &self,
        token_hash: &str,
        user_id: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let row = sqlx::query(
            "SELECT 1 AS known FROM app_devices \
             WHERE token_hash = $1 AND user_id = $2 AND expires_at > $3",
        )
        .bind(token_hash)
        .bind(user_id)
        .bind(now)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.is_some())
    }

    /// Counts one sign-in attempt against each subject in turn (an account, then a client
    /// address), each in its own window, before its password is checked; returns the counts
    /// after it, in order.
    ///
    /// Each count is one atomic statement (`INSERT … ON CONFLICT DO UPDATE SET count = count + 1
    /// RETURNING count`), so attempts made at once, on any instance sharing the database, each
    /// get a count of their own: however many arrive together, only the first `limit` of a window
    /// see a count within it. Counting stops at the first subject whose count is then over its
    /// limit (the list returned is shorter than `subjects` when a later one was not counted), and
    /// the subjects before it get their counts back in the same transaction: a refused attempt
    /// stays counted only against the subject that refused it.
    pub async fn count_sign_in_attempt(
        &self,
        subjects: &[(&str, Window)],
        now: i64,
    ) -> Result<Vec<i64>, StoreError> {
        let mut tx = self.begin_bookkeeping().await?;
        let mut counts = Vec::with_capacity(subjects.len());
        for (at, (subject, window)) in subjects.iter().enumerate() {
            let count: i64 = sqlx::query_scalar(
                "INSERT INTO rate_counters (bucket, count, expires_at) VALUES ($1, 1, $2) \
                 ON CONFLICT (bucket) DO UPDATE SET count = rate_counters.count + 1 RETURNING count",
            )
            .bind(bucket(subject, *window, now))
            .bind(window_end(*window, now))
            .fetch_one(&mut *tx)
            .await?;
            counts.push(count);
            if count > window.limit {
                // Refused by this subject: those before it are not charged.
                for (earlier, window) in &subjects[..at] {
                    take_back(&mut tx, earlier, *window, now).await?;
                }
                break;
            }
        }
        tx.commit().await?;
        Ok(counts)
    }

    /// Takes back one attempt counted at `now` against each subject by
    /// [`Store::count_sign_in_attempt`]: one that was not a failed guess (its password was right,
    /// or it was never checked). A count never goes below zero; one already pruned stays gone.
    pub async fn take_back_sign_in_attempt(
        &self,
        subjects: &[(&str, Window)],
        now: i64,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_bookkeeping().await?;
        for (subject, window) in subjects {
            take_back(&mut tx, subject, *window, now).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

async fn take_back(
    tx: &mut super::WriteTx,
    subject: &str,
    window: Window,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE rate_counters SET count = count - 1 WHERE bucket = $1 AND count > 0")
        .bind(bucket(subject, window, now))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The end of the window holding `now`, Unix milliseconds.
pub fn window_end(window: Window, now: i64) -> i64 {
    (now.div_euclid(window.length_ms) + 1) * window.length_ms
}

fn bucket(subject: &str, window: Window, now: i64) -> String {
    format!("signin:{subject}:{}", now.div_euclid(window.length_ms))
}
