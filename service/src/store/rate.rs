//! Rate limits with counters in the database, so every instance sharing it shares the limits.
//!
//! Fixed windows: the UTC minute and the UTC day. A request is admitted only when every counter
//! that applies to it (key and account; all requests, and writes for non-GET methods; per minute
//! and per day) stays within its limit; otherwise nothing is consumed and the caller gets 429.

use super::{Durability, PruneBatch, Store, StoreError};

const MINUTE_MS: i64 = 60_000;

const PRUNE: PruneBatch = PruneBatch {
    delete: "DELETE FROM rate_counters WHERE bucket",
    select: "SELECT bucket FROM rate_counters WHERE expires_at <= $1",
};
const DAY_MS: i64 = 86_400_000;

/// The limits of the service specification, section 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// All requests per minute, per key.
    pub key_per_minute: i64,
    /// All requests per minute, per account.
    pub account_per_minute: i64,
    /// Accepted requests per UTC day, per key.
    pub key_per_day: i64,
    /// Accepted requests per UTC day, per account.
    pub account_per_day: i64,
    /// Write requests per minute, per key.
    pub key_writes_per_minute: i64,
    /// Write requests per minute, per account.
    pub account_writes_per_minute: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            key_per_minute: 120,
            account_per_minute: 300,
            key_per_day: 10_000,
            account_per_day: 20_000,
            key_writes_per_minute: 20,
            account_writes_per_minute: 40,
        }
    }
}

impl Limits {
    /// Limits no traffic reaches (`examkit serve --rate-limits off`): counters are still kept and
    /// reported, so a benchmark measures the same work per request, but nothing is refused.
    pub fn unlimited() -> Self {
        const NEVER: i64 = 1_000_000_000_000;
        Limits {
            key_per_minute: NEVER,
            account_per_minute: NEVER,
            key_per_day: NEVER,
            account_per_day: NEVER,
            key_writes_per_minute: NEVER,
            account_writes_per_minute: NEVER,
        }
    }
}

/// The result of asking to admit one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// Whether the request may proceed.
    pub admitted: bool,
    /// Requests left in the current minute, the smallest over every minute counter that applies.
    pub remaining: i64,
    /// Requests left today, the smallest of the key's and the account's.
    pub daily_remaining: i64,
    /// Seconds until the exhausted window resets (only when not admitted).
    pub retry_after: i64,
    /// The authentication epoch read with the counters (see [`Store::auth_epoch`]): a key read
    /// at another epoch may have changed since.
    pub epoch: i64,
    /// The time the request was counted at, which names its windows.
    pub at: i64,
    /// Whether it was counted as a write.
    pub write: bool,
}

/// One counter a request is counted in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bucket {
    pub(crate) name: String,
    pub(crate) limit: i64,
    pub(crate) window_end: i64,
    daily: bool,
}

/// The counters that apply to one request, sorted by name: every admission locks counters in
/// the same order, so two admissions on PostgreSQL never wait for each other in a cycle.
pub(crate) fn buckets(
    key_id: &str,
    user_id: &str,
    write: bool,
    now: i64,
    limits: &Limits,
) -> Vec<Bucket> {
    let minute = now.div_euclid(MINUTE_MS);
    let day = now.div_euclid(DAY_MS);
    let minute_end = (minute + 1) * MINUTE_MS;
    let day_end = (day + 1) * DAY_MS;
    let bucket = |name: String, limit: i64, window_end: i64, daily: bool| Bucket {
        name,
        limit,
        window_end,
        daily,
    };
    let mut buckets = vec![
        bucket(
            format!("k:{key_id}:m:{minute}"),
            limits.key_per_minute,
            minute_end,
            false,
        ),
        bucket(
            format!("a:{user_id}:m:{minute}"),
            limits.account_per_minute,
            minute_end,
            false,
        ),
        bucket(
            format!("k:{key_id}:d:{day}"),
            limits.key_per_day,
            day_end,
            true,
        ),
        bucket(
            format!("a:{user_id}:d:{day}"),
            limits.account_per_day,
            day_end,
            true,
        ),
    ];
    if write {
        buckets.push(bucket(
            format!("k:{key_id}:w:{minute}"),
            limits.key_writes_per_minute,
            minute_end,
            false,
        ));
        buckets.push(bucket(
            format!("a:{user_id}:w:{minute}"),
            limits.account_writes_per_minute,
            minute_end,
            false,
        ));
    }
    buckets.sort_by(|a, b| a.name.cmp(&b.name));
    buckets
}

/// The decision for counters incremented to `counts` (in the order of `buckets`): admitted when
/// none is over its limit; a refused request's increments are put back, so what is left is
/// reported as if it had not been counted.
pub(crate) fn decide(
    buckets: &[Bucket],
    counts: &[i64],
    now: i64,
    epoch: i64,
    write: bool,
) -> Admission {
    let admitted = buckets.iter().zip(counts).all(|(b, c)| *c <= b.limit);
    let left = |daily: bool| {
        buckets
            .iter()
            .zip(counts)
            .filter(|(b, _)| b.daily == daily)
            .map(|(b, c)| (b.limit - if admitted { *c } else { c - 1 }).max(0))
            .min()
            .unwrap_or(0)
    };
    Admission {
        admitted,
        remaining: left(false),
        daily_remaining: left(true),
        retry_after: buckets
            .iter()
            .zip(counts)
            .filter(|(b, c)| **c > b.limit)
            .map(|(b, _)| ((b.window_end - now) + 999) / 1000)
            .max()
            .unwrap_or(0)
            .max(i64::from(!admitted)),
        epoch,
        at: now,
        write,
    }
}

impl Store {
    /// Admits one request of `key_id` (account `user_id`) at `now`, or refuses it without
    /// consuming anything.
    ///
    /// The counters live in the database, so every server sharing it shares them exactly. The
    /// admissions waiting at one moment are decided one after another in one transaction (see
    /// [`super::admissions`]): three statements on SQLite, one on PostgreSQL
    /// (`examkit_admit_group`, migration 0016).
    pub async fn admit(
        &self,
        key_id: &str,
        user_id: &str,
        write: bool,
        now: i64,
        limits: &Limits,
    ) -> Result<Admission, StoreError> {
        let buckets = buckets(key_id, user_id, write, now, limits);
        let (counts, epoch) = self.admissions.admit(self, buckets.clone()).await?;
        if counts.len() != buckets.len() {
            return Err(StoreError::Corrupt(format!(
                "{} counters counted for {} buckets",
                counts.len(),
                buckets.len()
            )));
        }
        Ok(decide(&buckets, &counts, now, epoch, write))
    }

    /// Takes back an admitted request's counts: the request turned out not to be one that
    /// counts (its key was revoked, or its account restricted, after it was read).
    pub async fn unadmit(
        &self,
        key_id: &str,
        user_id: &str,
        admission: &Admission,
        limits: &Limits,
    ) -> Result<(), StoreError> {
        if !admission.admitted {
            return Ok(());
        }
        let buckets = buckets(key_id, user_id, admission.write, admission.at, limits);
        let sql = format!(
            "UPDATE rate_counters SET count = count - 1 WHERE count > 0 AND bucket IN ({})",
            super::placeholders(1, buckets.len())
        );
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        for bucket in &buckets {
            statement = statement.bind(bucket.name.clone());
        }
        self.execute_write(Durability::Bookkeeping, statement)
            .await?;
        Ok(())
    }

    /// Deletes the counters whose window ended by `now`, in batches; returns how many were
    /// deleted.
    pub async fn prune_rate_counters(&self, now: i64) -> Result<u64, StoreError> {
        self.prune_in_batches(PRUNE, now).await
    }
}

#[cfg(test)]
mod tests {
    use super::Limits;
    use crate::store::Store;

    /// Admissions are counted by a thread with a connection of its own to the database file; an
    /// in-memory database has no file to open again, so counting is refused with that reason.
    #[tokio::test]
    async fn an_in_memory_database_refuses_to_count() {
        let store = Store::open("sqlite::memory:")
            .await
            .expect("in-memory store");
        let refused = store
            .admit("key", "account", false, 0, &Limits::default())
            .await
            .expect_err("counted without a database file");
        assert!(
            refused.to_string().contains("need a database file"),
            "{refused}"
        );
    }

    #[test]
    fn default_limits_are_the_specifications() {
        let limits = Limits::default();
        assert_eq!(
            (limits.key_per_minute, limits.account_per_minute),
            (120, 300)
        );
        assert_eq!(
            (limits.key_per_day, limits.account_per_day),
            (10_000, 20_000)
        );
        assert_eq!(
            (
                limits.key_writes_per_minute,
                limits.account_writes_per_minute
            ),
            (20, 40)
        );
    }
}
