//! Rate limits with counters in the database, so every instance sharing it shares the limits.
//!
//! Fixed windows: the UTC minute and the UTC day. A request is admitted only when every counter
//! that applies to it (key and account; all requests, and writes for non-GET methods; per minute
//! and per day) stays within its limit; otherwise nothing is consumed and the caller gets 429.

use sqlx::Row;

use super::{PruneBatch, Store, StoreError};

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
}

struct Bucket {
    name: String,
    limit: i64,
    window_end: i64,
    daily: bool,
}

impl Store {
    /// Admits one request of `key_id` (account `user_id`) at `now`, or refuses it without
    /// consuming anything.
    pub async fn admit(
        &self,
        key_id: &str,
        user_id: &str,
        write: bool,
        now: i64,
        limits: &Limits,
    ) -> Result<Admission, StoreError> {
        let minute = now.div_euclid(MINUTE_MS);
        let day = now.div_euclid(DAY_MS);
        let minute_end = (minute + 1) * MINUTE_MS;
        let day_end = (day + 1) * DAY_MS;
        let mut buckets = vec![
            Bucket {
                name: format!("k:{key_id}:m:{minute}"),
                limit: limits.key_per_minute,
                window_end: minute_end,
                daily: false,
            },
            Bucket {
                name: format!("a:{user_id}:m:{minute}"),
                limit: limits.account_per_minute,
                window_end: minute_end,
                daily: false,
            },
        ];
        if write {
            buckets.push(Bucket {
                name: format!("k:{key_id}:w:{minute}"),
                limit: limits.key_writes_per_minute,
                window_end: minute_end,
                daily: false,
            });
            buckets.push(Bucket {
                name: format!("a:{user_id}:w:{minute}"),
                limit: limits.account_writes_per_minute,
                window_end: minute_end,
                daily: false,
            });
        }
        buckets.push(Bucket {
            name: format!("k:{key_id}:d:{day}"),
            limit: limits.key_per_day,
            window_end: day_end,
            daily: true,
        });
        buckets.push(Bucket {
            name: format!("a:{user_id}:d:{day}"),
            limit: limits.account_per_day,
            window_end: day_end,
            daily: true,
        });

        let mut tx = self.begin_bookkeeping().await?;
        let mut counts = Vec::with_capacity(buckets.len());
        for bucket in &buckets {
            let row = sqlx::query(
                "INSERT INTO rate_counters (bucket, count, expires_at) VALUES ($1, 1, $2) \
                 ON CONFLICT (bucket) DO UPDATE SET count = rate_counters.count + 1 RETURNING count",
            )
            .bind(&bucket.name)
            .bind(bucket.window_end)
            .fetch_one(&mut *tx)
            .await?;
            counts.push(row.try_get::<i64, _>("count")?);
        }
        let exceeded: Vec<&Bucket> = buckets
            .iter()
            .zip(&counts)
            .filter(|(b, c)| **c > b.limit)
            .map(|(b, _)| b)
            .collect();
        let admitted = exceeded.is_empty();
        // Refused requests consume nothing: their increments are rolled back.
        let used: Vec<i64> = counts
            .iter()
            .map(|c| if admitted { *c } else { c - 1 })
            .collect();
        let left = |daily: bool| {
            buckets
                .iter()
                .zip(&used)
                .filter(|(b, _)| b.daily == daily)
                .map(|(b, u)| (b.limit - u).max(0))
                .min()
                .unwrap_or(0)
        };
        let admission = Admission {
            admitted,
            remaining: left(false),
            daily_remaining: left(true),
            retry_after: exceeded
                .iter()
                .map(|b| ((b.window_end - now) + 999) / 1000)
                .max()
                .unwrap_or(0)
                .max(i64::from(!admitted)),
        };
        if admitted {
            tx.commit().await?;
        } else {
            tx.rollback().await?;
        }
        Ok(admission)
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
