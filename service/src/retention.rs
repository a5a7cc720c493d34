//! Pruning in the background: records the service keeps only for a while are deleted by
//! `examkit serve` once shortly after it starts and then periodically.
//!
//! - Rate-limit counters are kept until their minute or UTC day ends, and pruned every 5 minutes.
//! - Idempotency records are kept 48 hours after their request arrived
//!   ([`crate::store::idempotency::RETENTION_MS`]), and pruned hourly.
//! - Usage rows are kept for the 30 UTC days the usage view shows and the day before
//!   ([`crate::store::usage::KEPT_DAYS`]), and pruned hourly.
//! - The app's browser sessions are deleted at sign-out, or when a request finds them expired;
//!   those never seen again are pruned hourly once their absolute expiry has passed.
//!
//! - With an object store configured, objects no row names are swept hourly once untouched for
//!   [`crate::assets::SWEEP_GRACE`].
//!
//! Each table is pruned in batches of [`crate::store::PRUNE_BATCH`] rows, each its own short
//! transaction. Several servers on one PostgreSQL database may prune at once: they skip each
//! other's rows.

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::store::{Store, now_ms};

/// How long after start the first pass runs.
pub const FIRST_PASS_AFTER: Duration = Duration::from_secs(30);

/// How often rate-limit counters are pruned.
pub const COUNTERS_EVERY: Duration = Duration::from_secs(5 * 60);

/// How often idempotency records and usage rows are pruned (the first pass included).
pub const RECORDS_EVERY: Duration = Duration::from_secs(60 * 60);

/// What one pass deleted, per table; `None` for a table the pass did not prune (not due, or its
/// pruning failed, which is logged).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Rate-limit counters deleted.
    pub rate_counters: Option<u64>,
    /// Idempotency records deleted.
    pub idempotency_records: Option<u64>,
    /// Usage rows deleted.
    pub usage_rows: Option<u64>,
    /// Expired browser sessions of the app deleted.
    pub app_sessions: Option<u64>,
    /// Objects nothing names deleted from the object store.
    pub objects: Option<u64>,
}

/// One pass at `now`: expired rate-limit counters always, idempotency records, usage rows and
/// expired app sessions too when `records` is set. Failures are logged, and the next pass tries again; what was
/// deleted is logged (at `info` for records, at `debug` for counters).
pub async fn prune(store: &Store, now: i64, records: bool) -> Pruned {
    let mut pruned = Pruned {
        rate_counters: logged("rate counters", store.prune_rate_counters(now).await),
        ..Pruned::default()
    };
    if let Some(n) = pruned.rate_counters {
        tracing::debug!(rate_counters = n, "pruned expired rate-limit counters");
    }
    if records {
        pruned.idempotency_records =
            logged("idempotency records", store.prune_idempotency(now).await);
        pruned.usage_rows = logged("usage rows", store.prune_usage(now).await);
        pruned.app_sessions = logged("app sessions", store.prune_app_sessions(now).await);
        if store.objects().is_some() {
            let grace = i64::try_from(crate::assets::SWEEP_GRACE.as_millis()).unwrap_or(i64::MAX);
            pruned.objects = logged(
                "unnamed objects",
                store
                    .sweep_objects(now.saturating_sub(grace))
                    .await
                    .map(|s| s.unreferenced + s.untracked + s.resumed),
            );
        }
        tracing::info!(
            idempotency_records = pruned.idempotency_records,
            usage_rows = pruned.usage_rows,
            app_sessions = pruned.app_sessions,
            objects = pruned.objects,
            "pruned expired idempotency records, usage rows, app sessions and unnamed objects"
        );
    }
    pruned
}

fn logged(what: &str, result: Result<u64, crate::store::StoreError>) -> Option<u64> {
    match result {
        Ok(n) => Some(n),
        Err(e) => {
            tracing::warn!(error = %e, "pruning {what} failed");
            None
        }
    }
}

/// Starts pruning in the background: a first pass [`FIRST_PASS_AFTER`] start, then counters
/// every [`COUNTERS_EVERY`] and records every [`RECORDS_EVERY`]. Abort the handle to stop it; a
/// batch cut short is rolled back.
pub fn spawn(store: Store) -> JoinHandle<()> {
    tokio::spawn(async move {
        tokio::time::sleep(FIRST_PASS_AFTER).await;
        let mut records_due = tokio::time::Instant::now();
        let mut every = tokio::time::interval(COUNTERS_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let now = tokio::time::Instant::now();
            let records = now >= records_due;
            if records {
                records_due = now + RECORDS_EVERY;
            }
            prune(&store, now_ms(), records).await;
        }
    })
}
