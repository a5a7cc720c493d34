//! Rate-limit admissions decided in groups: one transaction for every admission waiting at one
//! moment.
//!
//! Requests hand their counters to one worker per store, which decides the admissions waiting at
//! one moment together: it takes the counters' locks once for all of them, reads the
//! authentication epoch and their counts, decides each in arrival order (a refused request
//! leaves the counts as they were), writes the counters that changed, commits, and only then
//! answers them. Every decision is made on the counts in the database under its locks, so limits
//! stay exact for every process sharing it; a request is answered only once its counts are
//! committed.
//!
//! On SQLite, which has one writer at a time, a transaction per request spends most of its time
//! beginning and committing; a group is three statements under the write lock, however large,
//! run by a thread that owns a connection of its own ([`sqlite`]).
//! On PostgreSQL a group is one statement (`examkit_admit_group`), one round trip instead of one
//! per request, with the counters locked in name order so groups from any number of servers
//! never deadlock, sent by a thread that owns a connection of its own
//! ([`postgres`]).
//!
//! - this file holds the queue to the worker, the decision in arrival order and the statements
//!   both backends share;
//! - [`sqlite`] runs a group on a connection thread of its own under the writers' turn;
//! - [`postgres`] sends a group as one statement on a connection of its own.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use sqlx::postgres::PgConnectOptions;
use tokio::sync::oneshot;

use super::rate::Bucket;
use super::{Backend, Store, StoreError};

mod postgres;
mod sqlite;

/// The most admissions decided in one transaction: enough to carry any load two cores can
/// serve, small enough that the write lock is never held for long.
pub(super) const MAX_GROUP: usize = 256;

/// What the worker answers: each counter's count after incrementing (in the order given), and
/// the authentication epoch; or why the group's transaction failed.
type Answer = Result<(Vec<i64>, i64), String>;

/// One request's admission, waiting for its group.
pub(super) struct Waiting {
    pub(super) buckets: Vec<Bucket>,
    pub(super) answer: oneshot::Sender<Answer>,
}

/// The queue to the admission worker of one store, started with the first admission: a thread
/// with a connection of its own ([`postgres`], [`sqlite`]).
#[derive(Default)]
pub(crate) struct Admissions {
    queue: Mutex<Option<Queue>>,
}

#[derive(Clone)]
enum Queue {
    Postgres(postgres::Queue),
    Sqlite(sqlite::Queue),
}

impl Queue {
    /// Starts the worker for `store`.
    fn start(store: &Store) -> Result<Queue, StoreError> {
        match (store.backend(), &store.sqlite_file, &store.turn) {
            (Backend::Postgres, _, _) => {
                let options = PgConnectOptions::try_from(&*store.bookkeeping.connect_options())?;
                postgres::start(options)
                    .map(Queue::Postgres)
                    .map_err(StoreError::Batch)
            }
            (Backend::Sqlite, Some(file), Some(turn)) => {
                sqlite::start(file.clone(), Arc::clone(turn))
                    .map(Queue::Sqlite)
                    .map_err(StoreError::Batch)
            }
            (Backend::Sqlite, _, _) => Err(StoreError::Batch(
                "rate limits need a database file, not an in-memory database".into(),
            )),
        }
    }

    fn is_closed(&self) -> bool {
        match self {
            Queue::Postgres(sender) => sender.is_closed(),
            // A thread that has stopped shows when a send fails.
            Queue::Sqlite(_) => false,
        }
    }

    fn send(&self, waiting: Waiting) -> Result<(), Waiting> {
        match self {
            Queue::Postgres(sender) => sender.send(waiting).map_err(|e| e.0),
            Queue::Sqlite(sender) => sender.send(waiting).map_err(|e| e.0),
        }
    }
}

impl std::fmt::Debug for Admissions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admissions").finish_non_exhaustive()
    }
}

impl Admissions {
    /// Counts `buckets` for one request; returns their counts and the authentication epoch.
    pub(crate) async fn admit(
        &self,
        store: &Store,
        buckets: Vec<Bucket>,
    ) -> Result<(Vec<i64>, i64), StoreError> {
        let (answer, answered) = oneshot::channel();
        let mut waiting = Waiting { buckets, answer };
        // A worker that has stopped is replaced, once.
        for _ in 0..2 {
            let sender = {
                let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                match &*queue {
                    Some(sender) if !sender.is_closed() => sender.clone(),
                    _ => {
                        let sender = Queue::start(store)?;
                        *queue = Some(sender.clone());
                        sender
                    }
                }
            };
            match sender.send(waiting) {
                Ok(()) => {
                    return answered
                        .await
                        .map_err(|_| StoreError::Batch("the admission worker stopped".into()))?
                        .map_err(StoreError::Batch);
                }
                Err(back) => {
                    waiting = back;
                    *self.queue.lock().unwrap_or_else(|e| e.into_inner()) = None;
                }
            }
        }
        Err(StoreError::Batch(
            "the admission worker could not start".into(),
        ))
    }
}

/// Answers each admission of `group` with its counts, or all of them with the group's error.
pub(super) fn answer(group: Vec<Waiting>, decided: Result<Vec<(Vec<i64>, i64)>, String>) {
    match decided {
        Ok(answers) => {
            for (waiting, answer) in group.into_iter().zip(answers) {
                // A request that stopped waiting (its client left) needs no answer.
                let _ = waiting.answer.send(Ok(answer));
            }
        }
        Err(message) => {
            tracing::warn!(error = %message, admissions = group.len(), "admissions failed");
            for waiting in group {
                let _ = waiting.answer.send(Err(message.clone()));
            }
        }
    }
}

/// Decides `group` in arrival order on `counts` (the counters' counts before it, updated as it
/// goes): each request's counters are incremented, and kept only when none goes over its limit,
/// so a refused request leaves the counts as the ones before it left them. Returns each
/// request's incremented counts with `epoch`, and the names of the counters that changed, in
/// name order.
pub(super) fn decide_in_order<'a>(
    group: &'a [Waiting],
    counts: &mut HashMap<String, i64>,
    epoch: i64,
) -> (Vec<(Vec<i64>, i64)>, Vec<&'a str>) {
    let mut changed: BTreeSet<&str> = BTreeSet::new();
    let mut answers = Vec::with_capacity(group.len());
    for waiting in group {
        let counted: Vec<i64> = waiting
            .buckets
            .iter()
            .map(|b| counts.get(b.name.as_str()).copied().unwrap_or(0) + 1)
            .collect();
        let admitted = waiting
            .buckets
            .iter()
            .zip(&counted)
            .all(|(bucket, count)| *count <= bucket.limit);
        if admitted {
            for (bucket, count) in waiting.buckets.iter().zip(&counted) {
                counts.insert(bucket.name.clone(), *count);
                changed.insert(bucket.name.as_str());
            }
        }
        answers.push((counted, epoch));
    }
    (answers, changed.into_iter().collect())
}

/// Reads the authentication epoch (a row with no bucket name: no counter has an empty name) and
/// the counts of the named counters that exist. The names go in as one JSON array, so the
/// statement's text is the same whatever the group's size and it is prepared once per connection.
pub(super) const READ_COUNTS: &str = "SELECT bucket, count FROM rate_counters \
     WHERE bucket IN (SELECT value FROM json_each($1)) \
     UNION ALL SELECT '' AS bucket, epoch AS count FROM auth_epoch WHERE id = 1";

/// Writes counters given as one JSON array of `[bucket, count, window end]`.
pub(super) const WRITE_COUNTS: &str = "INSERT INTO rate_counters (bucket, count, expires_at) \
     SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each($1) WHERE true \
     ON CONFLICT (bucket) DO UPDATE SET count = excluded.count";
