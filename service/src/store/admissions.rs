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
//! run by a thread that owns a connection of its own ([`super::admission_thread`]).
//! On PostgreSQL a group is one statement (`examkit_admit_group`), one round trip instead of one
//! per request, with the counters locked in name order so groups from any number of servers
//! never deadlock.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use sqlx::Row;
use tokio::sync::{mpsc, oneshot};

use super::rate::Bucket;
use super::{Backend, Store, StoreError};

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

/// The queue to the admission worker of one store, started with the first admission: a task on
/// PostgreSQL, a thread with its own connection on SQLite.
#[derive(Default)]
pub(crate) struct Admissions {
    queue: Mutex<Option<Queue>>,
}

#[derive(Clone)]
enum Queue {
    Task(mpsc::UnboundedSender<Waiting>),
    Thread(super::admission_thread::Queue),
}

impl Queue {
    /// Starts the worker for `store`.
    fn start(store: &Store) -> Result<Queue, StoreError> {
        match (store.backend(), &store.sqlite_file, &store.turn) {
            (Backend::Postgres, _, _) => {
                let (sender, receiver) = mpsc::unbounded_channel();
                tokio::spawn(work(store.clone(), receiver));
                Ok(Queue::Task(sender))
            }
            (Backend::Sqlite, Some(file), Some(turn)) => {
                super::admission_thread::start(file.clone(), Arc::clone(turn))
                    .map(Queue::Thread)
                    .map_err(StoreError::Batch)
            }
            (Backend::Sqlite, _, _) => Err(StoreError::Batch(
                "rate limits need a database file, not an in-memory database".into(),
            )),
        }
    }

    fn is_closed(&self) -> bool {
        match self {
            // A task whose runtime has gone (a store used from a new runtime) is replaced.
            Queue::Task(sender) => sender.is_closed(),
            // A thread that has stopped shows when a send fails.
            Queue::Thread(_) => false,
        }
    }

    fn send(&self, waiting: Waiting) -> Result<(), Waiting> {
        match self {
            Queue::Task(sender) => sender.send(waiting).map_err(|e| e.0),
            Queue::Thread(sender) => sender.send(waiting).map_err(|e| e.0),
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

/// On PostgreSQL one group is decided at a time: the next gathers while the database works, so
/// under load groups are large, and each costs the database one call of its function. (Several
/// groups at once were measured slower: smaller groups, more calls, the same CPU.)
async fn work(store: Store, mut queue: mpsc::UnboundedReceiver<Waiting>) {
    loop {
        let mut group = Vec::with_capacity(MAX_GROUP);
        if queue.recv_many(&mut group, MAX_GROUP).await == 0 {
            return;
        }
        let decided = decide_group_postgres(&store, &group)
            .await
            .map_err(|e| e.to_string());
        answer(group, decided);
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

/// On PostgreSQL the whole group is one statement, `examkit_admit_group` (migration 0016): it
/// locks the group's counters in name order, decides each admission in arrival order as below,
/// and writes the counts, in one round trip.
async fn decide_group_postgres(
    store: &Store,
    group: &[Waiting],
) -> Result<Vec<(Vec<i64>, i64)>, StoreError> {
    let mut names = Vec::new();
    let mut limits = Vec::new();
    let mut window_ends = Vec::new();
    let mut owners = Vec::new();
    for (owner, waiting) in group.iter().enumerate() {
        for bucket in &waiting.buckets {
            names.push(bucket.name.clone());
            limits.push(bucket.limit.to_string());
            window_ends.push(bucket.window_end.to_string());
            owners.push(owner.to_string());
        }
    }
    let row = sqlx::query("SELECT counts, epoch FROM examkit_admit_group($1, $2, $3, $4)")
        .bind(names.join(" "))
        .bind(limits.join(" "))
        .bind(window_ends.join(" "))
        .bind(owners.join(" "))
        .fetch_one(&store.bookkeeping)
        .await?;
    let counts: String = row.try_get("counts")?;
    let epoch: i64 = row.try_get("epoch")?;
    let mut counts = counts.split(' ').map(|c| {
        c.parse::<i64>()
            .map_err(|e| StoreError::Corrupt(format!("rate counts: {e}")))
    });
    let mut answers = Vec::with_capacity(group.len());
    for waiting in group {
        let mine = (&mut counts)
            .take(waiting.buckets.len())
            .collect::<Result<Vec<_>, _>>()?;
        answers.push((mine, epoch));
    }
    Ok(answers)
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
