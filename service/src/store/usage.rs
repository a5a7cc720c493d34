//! Usage records: request counts and timings per key, UTC date, operation and status.
//!
//! Records never hold keys, bodies, scan content or search terms. They count API requests; they
//! are not token usage or billing. Each key's usage is shown for [`SHOWN_DAYS`] UTC days and
//! kept one day longer ([`Store::prune_usage`]).

use sqlx::Row;

use super::{PruneBatch, Store, StoreError, utc_date};

const DAY_MS: i64 = 86_400_000;

/// The UTC days a key's usage view covers, today included.
pub const SHOWN_DAYS: i64 = 30;

/// The UTC days usage rows are kept, today included: the shown days and the day before them, so
/// that a server whose clock is a little behind another's never finds a day it shows pruned.
pub const KEPT_DAYS: i64 = SHOWN_DAYS + 1;

const PRUNE: PruneBatch = PruneBatch {
    delete: "DELETE FROM usage_daily WHERE (key_id, day, operation, status)",
    select: "SELECT key_id, day, operation, status FROM usage_daily WHERE day < $1",
};

/// The first UTC date (`YYYY-MM-DD`) of the `days` days ending on the day of `now`.
fn first_day(now: i64, days: i64) -> String {
    utc_date(now - (days - 1) * DAY_MS)
}

/// One row of a key's usage breakdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRow {
    /// UTC date, `YYYY-MM-DD`.
    pub day: String,
    /// The operation, such as `POST /v1/marking/imports/{id}/assets`.
    pub operation: String,
    /// The response status.
    pub status: u16,
    /// Requests counted.
    pub requests: i64,
    /// Total handling time, milliseconds.
    pub total_ms: i64,
    /// Longest handling time, milliseconds.
    pub max_ms: i64,
}

impl Store {
    /// Records one request of `key_id`: the daily breakdown row and the key's lifetime counters,
    /// in one bookkeeping transaction.
    pub async fn record_usage(
        &self,
        key_id: &str,
        operation: &str,
        status: u16,
        elapsed_ms: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_bookkeeping().await?;
        sqlx::query(
            "INSERT INTO usage_daily (key_id, day, operation, status, requests, total_ms, max_ms) \
             VALUES ($1, $2, $3, $4, 1, $5, $5) \
             ON CONFLICT (key_id, day, operation, status) DO UPDATE SET \
             requests = usage_daily.requests + 1, \
             total_ms = usage_daily.total_ms + excluded.total_ms, \
             max_ms = CASE WHEN excluded.max_ms > usage_daily.max_ms THEN excluded.max_ms ELSE usage_daily.max_ms END",
        )
        .bind(key_id)
        .bind(utc_date(now))
        .bind(operation)
        .bind(i64::from(status))
        .bind(elapsed_ms)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE api_keys SET request_count = request_count + 1, \
             error_count = error_count + $1, last_used_at = $2 WHERE id = $3",
        )
        .bind(i64::from(status >= 400))
        .bind(now)
        .bind(key_id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// A key's usage over the [`SHOWN_DAYS`] UTC days ending on the day of `now`, newest day
    /// first.
    pub async fn usage(&self, key_id: &str, now: i64) -> Result<Vec<UsageRow>, StoreError> {
        let since = first_day(now, SHOWN_DAYS);
        let rows = sqlx::query(
            "SELECT day, operation, status, requests, total_ms, max_ms FROM usage_daily \
             WHERE key_id = $1 AND day >= $2 ORDER BY day DESC, operation, status",
        )
        .bind(key_id)
        .bind(since)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(UsageRow {
                    day: row.try_get("day")?,
                    operation: row.try_get("operation")?,
                    status: u16::try_from(row.try_get::<i64, _>("status")?).unwrap_or(0),
                    requests: row.try_get("requests")?,
                    total_ms: row.try_get("total_ms")?,
                    max_ms: row.try_get("max_ms")?,
                })
            })
            .collect()
    }

    /// Deletes the usage rows of days before the [`KEPT_DAYS`] UTC days ending on the day of
    /// `now`, in batches; returns how many were deleted. What [`Store::usage`] shows at `now`
    /// is never among them. Keys' lifetime counters are not usage rows and stay.
    pub async fn prune_usage(&self, now: i64) -> Result<u64, StoreError> {
        self.prune_in_batches(PRUNE, first_day(now, KEPT_DAYS))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_days_hold_the_shown_days() {
        // 2026-01-01T13:00:00Z.
        let now = 1_767_272_400_000;
        assert_eq!(first_day(now, 1), "2026-01-01");
        assert_eq!(first_day(now, SHOWN_DAYS), "2025-12-03");
        assert_eq!(first_day(now, KEPT_DAYS), "2025-12-02");
    }
}
