//! The daily allowance of automated marking per account: pages indexed and questions marked per
//! UTC day, reserved inside the transaction that queues the work, so a refused request uses
//! nothing.

use crate::store::{Store, StoreError, WriteTx, utc_date};

/// A daily automated-marking allowance per account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    /// Pages indexed per UTC day.
    pub pages_per_day: i64,
    /// Questions marked per UTC day.
    pub questions_per_day: i64,
}

impl Default for Allowance {
    fn default() -> Self {
        Allowance {
            pages_per_day: 500,
            questions_per_day: 200,
        }
    }
}

/// Seconds from `now` (Unix milliseconds) to the next UTC midnight, at least 1.
pub fn seconds_to_next_utc_day(now: i64) -> i64 {
    const DAY_MS: i64 = 86_400_000;
    let next = (now.div_euclid(DAY_MS) + 1) * DAY_MS;
    ((next - now) + 999) / 1000
}

impl Store {
    /// Today's allowance row of `user_id` (UTC), made at zero if the day has none yet; its day.
    async fn allowance_day(
        tx: &mut WriteTx,
        user_id: &str,
        now: i64,
    ) -> Result<String, StoreError> {
        let day = utc_date(now);
        sqlx::query(
            "INSERT INTO marking_allowance (user_id, day, pages, questions) VALUES ($1, $2, 0, 0) \
             ON CONFLICT (user_id, day) DO NOTHING",
        )
        .bind(user_id)
        .bind(&day)
        .execute(&mut **tx)
        .await?;
        Ok(day)
    }

    /// Reserves `needed` pages of today's allowance inside a write transaction; when they would
    /// exceed it, nothing is reserved and the answer is the pages used today and the seconds until
    /// the allowance renews.
    pub(crate) async fn reserve_pages(
        tx: &mut WriteTx,
        user_id: &str,
        needed: i64,
        allowance: &Allowance,
        now: i64,
    ) -> Result<Option<(i64, i64)>, StoreError> {
        let day = Store::allowance_day(tx, user_id, now).await?;
        let reserved = sqlx::query(
            "UPDATE marking_allowance SET pages = pages + $1 \
             WHERE user_id = $2 AND day = $3 AND pages + $1 <= $4",
        )
        .bind(needed)
        .bind(user_id)
        .bind(&day)
        .bind(allowance.pages_per_day)
        .execute(&mut **tx)
        .await?;
        if reserved.rows_affected() > 0 {
            return Ok(None);
        }
        let used: i64 = sqlx::query_scalar(
            "SELECT pages FROM marking_allowance WHERE user_id = $1 AND day = $2",
        )
        .bind(user_id)
        .bind(&day)
        .fetch_one(&mut **tx)
        .await?;
        Ok(Some((used, seconds_to_next_utc_day(now))))
    }

    /// Reserves `needed` questions of today's allowance of `per_day` inside a write transaction;
    /// when they would exceed it, nothing is reserved and the answer is the questions used today.
    pub(crate) async fn reserve_questions(
        tx: &mut WriteTx,
        user_id: &str,
        needed: i64,
        per_day: i64,
        now: i64,
    ) -> Result<Option<i64>, StoreError> {
        let day = Store::allowance_day(tx, user_id, now).await?;
        let reserved = sqlx::query(
            "UPDATE marking_allowance SET questions = questions + $1 \
             WHERE user_id = $2 AND day = $3 AND questions + $1 <= $4",
        )
        .bind(needed)
        .bind(user_id)
        .bind(&day)
        .bind(per_day)
        .execute(&mut **tx)
        .await?;
        if reserved.rows_affected() > 0 {
            return Ok(None);
        }
        let used: i64 = sqlx::query_scalar(
            "SELECT questions FROM marking_allowance WHERE user_id = $1 AND day = $2",
        )
        .bind(user_id)
        .bind(&day)
        .fetch_one(&mut **tx)
        .await?;
        Ok(Some(used))
    }

    /// Pages of automated marking an account has used on the UTC day of `now`.
    pub async fn allowance_used(&self, user_id: &str, now: i64) -> Result<(i64, i64), StoreError> {
        let used: Option<(i64, i64)> = sqlx::query_as(
            "SELECT pages, questions FROM marking_allowance WHERE user_id = $1 AND day = $2",
        )
        .bind(user_id)
        .bind(utc_date(now))
        .fetch_optional(self.pool())
        .await?;
        Ok(used.unwrap_or((0, 0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowance_renews_at_utc_midnight() {
        // 2024-06-14T23:59:59.500Z → half a second, rounded up.
        assert_eq!(seconds_to_next_utc_day(1_718_409_599_500), 1);
        // 2024-06-14T00:00:00.000Z → a whole day.
        assert_eq!(seconds_to_next_utc_day(1_718_323_200_000), 86_400);
    }
}
