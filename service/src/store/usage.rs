//! Usage records: request counts and timings per key, UTC date, operation and status.
//!
//! Records never hold keys, bodies, scan content or search terms. They count API requests; they
//! are not token usage or billing. Each key's usage is shown for [`SHOWN_DAYS`] UTC days and
//! kept one day longer ([`Store::prune_usage`]).

use std::collections::HashMap;

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

/// A `usage_daily` row as stored: its status is an integer.
#[derive(Debug, Clone, sqlx::FromRow)]
struct StoredUsage {
    day: String,
    operation: String,
    status: i64,
    requests: i64,
    total_ms: i64,
    max_ms: i64,
}

impl From<StoredUsage> for UsageRow {
    /// A status outside the range of HTTP statuses reads as 0.
    fn from(row: StoredUsage) -> Self {
        UsageRow {
            day: row.day,
            operation: row.operation,
            status: u16::try_from(row.status).unwrap_or(0),
            requests: row.requests,
            total_ms: row.total_ms,
            max_ms: row.max_ms,
        }
    }
}

/// How often recorded requests are written: a server that crashes loses at most this much of
/// them (a stopped server writes them all first).
pub const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// Rows written per statement when usage is flushed.
const FLUSH_ROWS: usize = 100;

/// A usage row's key: key id, UTC date, operation and status.
type RowKey = (String, String, String, u16);

/// Totals of one usage row not yet written.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    requests: i64,
    total_ms: i64,
    max_ms: i64,
}

/// A key's lifetime counters not yet written.
#[derive(Debug, Clone, Copy, Default)]
struct KeyTally {
    requests: i64,
    errors: i64,
    last_used_at: i64,
}

#[derive(Debug, Default)]
struct Pending {
    rows: HashMap<RowKey, Tally>,
    keys: HashMap<String, KeyTally>,
}

impl Pending {
    fn add_row(&mut self, at: RowKey, tally: Tally) {
        let row = self.rows.entry(at).or_default();
        row.requests += tally.requests;
        row.total_ms += tally.total_ms;
        row.max_ms = row.max_ms.max(tally.max_ms);
    }

    fn add_key(&mut self, key_id: String, tally: KeyTally) {
        let key = self.keys.entry(key_id).or_default();
        key.requests += tally.requests;
        key.errors += tally.errors;
        key.last_used_at = key.last_used_at.max(tally.last_used_at);
    }

    fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.keys.is_empty()
    }
}

/// Requests recorded in memory and written every [`FLUSH_EVERY`], off the requests' path.
#[derive(Debug, Default)]
pub(crate) struct UsageBuffer {
    pending: std::sync::Mutex<Pending>,
    /// Held while a flush writes, so a reader that flushes first sees every earlier record.
    writing: tokio::sync::Mutex<()>,
    flusher: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Store {
    /// Records one request of `key_id`: the daily breakdown row and the key's lifetime counters.
    /// The record is written within [`FLUSH_EVERY`] (or by [`Store::flush_usage`]); every read
    /// of usage or keys through this store writes pending records first.
    pub async fn record_usage(
        &self,
        key_id: &str,
        operation: &str,
        status: u16,
        elapsed_ms: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        {
            let mut pending = self.usage.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.add_row(
                (
                    key_id.to_owned(),
                    utc_date(now),
                    operation.to_owned(),
                    status,
                ),
                Tally {
                    requests: 1,
                    total_ms: elapsed_ms,
                    max_ms: elapsed_ms,
                },
            );
            pending.add_key(
                key_id.to_owned(),
                KeyTally {
                    requests: 1,
                    errors: i64::from(status >= 400),
                    last_used_at: now,
                },
            );
        }
        self.start_usage_flusher();
        Ok(())
    }

    fn start_usage_flusher(&self) {
        let mut flusher = self.usage.flusher.lock().unwrap_or_else(|e| e.into_inner());
        if flusher.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // The task holds the buffer and the pools, not the store's flusher handle.
        let store = self.clone();
        *flusher = Some(runtime.spawn(async move {
            let mut tick = tokio::time::interval(FLUSH_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(e) = store.flush_usage().await {
                    tracing::warn!(error = %e, "usage records not written yet; retrying");
                }
            }
        }));
    }

    /// Writes every recorded request not yet written, [`FLUSH_ROWS`] rows to a short
    /// bookkeeping transaction: admissions waiting for SQLite's write lock get it between them,
    /// instead of behind one transaction for thousands of keys. Rows are written in a fixed order,
    /// so servers flushing at once never deadlock. When a write fails, what was not yet written
    /// stays pending for the next flush.
    pub async fn flush_usage(&self) -> Result<(), StoreError> {
        let _writing = self.usage.writing.lock().await;
        let taken =
            std::mem::take(&mut *self.usage.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if taken.is_empty() {
            return Ok(());
        }
        let mut rows: Vec<_> = taken.rows.into_iter().collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        let mut keys: Vec<_> = taken.keys.into_iter().collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));

        let mut rows_written = 0;
        let mut keys_written = 0;
        let mut result = Ok(());
        for chunk in rows.chunks(FLUSH_ROWS) {
            result = self.write_usage_rows(chunk).await;
            if result.is_err() {
                break;
            }
            rows_written += chunk.len();
        }
        if result.is_ok() {
            for chunk in keys.chunks(FLUSH_ROWS) {
                result = self.write_key_counts(chunk).await;
                if result.is_err() {
                    break;
                }
                keys_written += chunk.len();
            }
        }
        if result.is_err() {
            let mut pending = self.usage.pending.lock().unwrap_or_else(|e| e.into_inner());
            for (at, tally) in rows.into_iter().skip(rows_written) {
                pending.add_row(at, tally);
            }
            for (key, tally) in keys.into_iter().skip(keys_written) {
                pending.add_key(key, tally);
            }
        }
        result
    }

    /// Adds one chunk of usage rows to `usage_daily`, in a transaction of its own.
    async fn write_usage_rows(&self, chunk: &[(RowKey, Tally)]) -> Result<(), StoreError> {
        let values = (0..chunk.len())
            .map(|i| {
                let p = 7 * i;
                format!(
                    "(${}, ${}, ${}, ${}, ${}, ${}, ${})",
                    p + 1,
                    p + 2,
                    p + 3,
                    p + 4,
                    p + 5,
                    p + 6,
                    p + 7
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "INSERT INTO usage_daily (key_id, day, operation, status, requests, total_ms, max_ms) \
             VALUES {values} \
             ON CONFLICT (key_id, day, operation, status) DO UPDATE SET \
             requests = usage_daily.requests + excluded.requests, \
             total_ms = usage_daily.total_ms + excluded.total_ms, \
             max_ms = CASE WHEN excluded.max_ms > usage_daily.max_ms THEN excluded.max_ms ELSE usage_daily.max_ms END"
        );
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        for ((key_id, day, operation, status), tally) in chunk {
            statement = statement
                .bind(key_id.as_str())
                .bind(day.as_str())
                .bind(operation.as_str())
                .bind(i64::from(*status))
                .bind(tally.requests)
                .bind(tally.total_ms)
                .bind(tally.max_ms);
        }
        let mut tx = self.begin_bookkeeping().await?;
        statement.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Adds one chunk of keys' request and error counts to `api_keys`, in a transaction of its own.
    async fn write_key_counts(&self, chunk: &[(String, KeyTally)]) -> Result<(), StoreError> {
        let values = (0..chunk.len())
            .map(|i| {
                let p = 4 * i;
                format!("(${}, ${}, ${}, ${})", p + 1, p + 2, p + 3, p + 4)
            })
            .collect::<Vec<_>>()
            .join(", ");
        // VALUES columns are column1… on both backends.
        let sql = format!(
            "UPDATE api_keys SET request_count = api_keys.request_count + v.column2, \
             error_count = api_keys.error_count + v.column3, \
             last_used_at = CASE WHEN api_keys.last_used_at IS NULL OR api_keys.last_used_at < v.column4 \
             THEN v.column4 ELSE api_keys.last_used_at END \
             FROM (VALUES {values}) AS v WHERE api_keys.id = v.column1"
        );
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (key_id, tally) in chunk {
            statement = statement
                .bind(key_id.as_str())
                .bind(tally.requests)
                .bind(tally.errors)
                .bind(tally.last_used_at);
        }
        let mut tx = self.begin_bookkeeping().await?;
        statement.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// A key's usage over the [`SHOWN_DAYS`] UTC days ending on the day of `now`, newest day
    /// first.
    pub async fn usage(&self, key_id: &str, now: i64) -> Result<Vec<UsageRow>, StoreError> {
        self.flush_usage().await?;
        let since = first_day(now, SHOWN_DAYS);
        let rows: Vec<StoredUsage> = sqlx::query_as(
            "SELECT day, operation, status, requests, total_ms, max_ms FROM usage_daily \
             WHERE key_id = $1 AND day >= $2 ORDER BY day DESC, operation, status",
        )
        .bind(key_id)
        .bind(since)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(UsageRow::from).collect())
    }

    /// Deletes the usage rows of days before the [`KEPT_DAYS`] UTC days ending on the day of
    /// `now`, in batches; returns how many were deleted. What [`Store::usage`] shows at `now`
    /// is never among them. Keys' lifetime counters are not usage rows and stay.
    pub async fn prune_usage(&self, now: i64) -> Result<u64, StoreError> {
        // What this server still holds in memory is written first, so a pass prunes every row
        // recorded before it, not only those the flusher happened to have written.
        self.flush_usage().await?;
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

    #[test]
    fn a_stored_row_keeps_its_counts_and_reads_a_strange_status_as_zero() {
        let stored = |status| StoredUsage {
            day: "2026-01-01".to_owned(),
            operation: "GET /v1/papers".to_owned(),
            status,
            requests: 3,
            total_ms: 40,
            max_ms: 25,
        };
        assert_eq!(
            UsageRow::from(stored(404)),
            UsageRow {
                day: "2026-01-01".to_owned(),
                operation: "GET /v1/papers".to_owned(),
                status: 404,
                requests: 3,
                total_ms: 40,
                max_ms: 25,
            }
        );
        for strange in [-1, 65_536, i64::MAX] {
            assert_eq!(UsageRow::from(stored(strange)).status, 0);
        }
        assert_eq!(UsageRow::from(stored(65_535)).status, 65_535);
    }
}
