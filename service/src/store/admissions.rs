//! Rate-limit admissions decided in groups: one transaction for every admission waiting at one
//! moment.
//!
//! Requests hand their counters to one task per store, which decides the admissions waiting at
//! one moment together: it takes the counters' locks once for all of them, reads the
//! authentication epoch and their counts, decides each in arrival order (a refused request
//! leaves the counts as they were), writes the counters that changed, commits, and only then
//! answers them. Every decision is made on the counts in the database under its locks, so limits
//! stay exact for every process sharing it; a request is answered only once its counts are
//! committed.
//!
//! On SQLite, which has one writer at a time, a transaction per request spends most of its time
//! beginning and committing; a group is three statements under the write lock, however large.
//! On PostgreSQL a group is one statement (`examkit_admit_group`), one round trip instead of one
//! per request, with the counters locked in name order so groups from any number of servers
//! never deadlock.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use sqlx::Row;
use tokio::sync::{mpsc, oneshot};

use super::rate::Bucket;
use super::{Backend, Store, StoreError};

/// The most admissions decided in one transaction: enough to carry any load two cores can
/// serve, small enough that the write lock is never held for long.
const MAX_GROUP: usize = 256;

/// What the worker answers: each counter's count after incrementing (in the order given), and
/// the authentication epoch; or why the group's transaction failed.
type Answer = Result<(Vec<i64>, i64), String>;

struct Waiting {
    buckets: Vec<Bucket>,
    answer: oneshot::Sender<Answer>,
}

/// The queue to the admission worker of one store, started with the first admission.
#[derive(Default)]
pub(crate) struct Admissions {
    queue: Mutex<Option<mpsc::UnboundedSender<Waiting>>>,
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
        // A worker whose runtime has gone (a store used from a new runtime) is replaced.
        for _ in 0..2 {
            let sender = {
                let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                match &*queue {
                    Some(sender) if !sender.is_closed() => sender.clone(),
                    _ => {
                        let (sender, receiver) = mpsc::unbounded_channel();
                        tokio::spawn(work(store.clone(), receiver));
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
                Err(mpsc::error::SendError(back)) => waiting = back,
            }
        }
        Err(StoreError::Batch(
            "the admission worker could not start".into(),
        ))
    }
}

async fn work(store: Store, mut queue: mpsc::UnboundedReceiver<Waiting>) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.recv_many(&mut group, MAX_GROUP).await > 0 {
        match decide_group(&store, &group).await {
            Ok(answers) => {
                for (waiting, answer) in group.drain(..).zip(answers) {
                    // A request that stopped waiting (its client left) needs no answer.
                    let _ = waiting.answer.send(Ok(answer));
                }
            }
            Err(e) => {
                let message = e.to_string();
                tracing::warn!(error = %message, admissions = group.len(), "admissions failed");
                for waiting in group.drain(..) {
                    let _ = waiting.answer.send(Err(message.clone()));
                }
            }
        }
    }
}

/// Decides a group in one transaction; nothing is answered unless it commits. The counters are
/// read once, each admission is decided in arrival order on the counts as the ones before it
/// left them (a refused one leaves them as they were), and the counters that changed are written
/// once: three statements for the whole group, all under the write lock, so the counts decided on
/// are the counts in the database.
async fn decide_group(
    store: &Store,
    group: &[Waiting],
) -> Result<Vec<(Vec<i64>, i64)>, StoreError> {
    match store.backend() {
        Backend::Sqlite => decide_group_sqlite(store, group).await,
        Backend::Postgres => decide_group_postgres(store, group).await,
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

/// On SQLite: three statements under the write lock, as the module says.
async fn decide_group_sqlite(
    store: &Store,
    group: &[Waiting],
) -> Result<Vec<(Vec<i64>, i64)>, StoreError> {
    let mut tx = store.begin_bookkeeping().await?;
    let mut windows: HashMap<&str, i64> = HashMap::new();
    for bucket in group.iter().flat_map(|w| &w.buckets) {
        windows.insert(bucket.name.as_str(), bucket.window_end);
    }
    let (epoch, mut counts) = read_counts(&mut tx, windows.keys().copied()).await?;
    let mut changed: HashSet<&str> = HashSet::new();
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
    write_counts(&mut tx, &changed, &counts, &windows).await?;
    tx.commit().await?;
    Ok(answers)
}

/// Reads the authentication epoch (a row with no bucket name: no counter has an empty name) and
/// the counts of the named counters that exist. The names go in as one JSON array, so the
/// statement's text is the same whatever the group's size and it is prepared once per connection.
const READ_COUNTS: &str = "SELECT bucket, count FROM rate_counters \
     WHERE bucket IN (SELECT value FROM json_each($1)) \
     UNION ALL SELECT '' AS bucket, epoch AS count FROM auth_epoch WHERE id = 1";

/// Writes counters given as one JSON array of `[bucket, count, window end]`.
const WRITE_COUNTS: &str = "INSERT INTO rate_counters (bucket, count, expires_at) \
     SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each($1) WHERE true \
     ON CONFLICT (bucket) DO UPDATE SET count = excluded.count";

/// The authentication epoch, and the counts of the named counters that exist.
async fn read_counts<'a>(
    tx: &mut super::WriteTx,
    names: impl Iterator<Item = &'a str>,
) -> Result<(i64, HashMap<String, i64>), StoreError> {
    let names: Vec<&str> = names.collect();
    let names = serde_json::to_string(&names).map_err(|e| StoreError::Batch(e.to_string()))?;
    let mut counts = HashMap::new();
    let mut epoch = None;
    for row in sqlx::query(READ_COUNTS)
        .bind(names)
        .fetch_all(&mut **tx)
        .await?
    {
        let bucket: String = row.try_get("bucket")?;
        let count: i64 = row.try_get("count")?;
        if bucket.is_empty() {
            epoch = Some(count);
        } else {
            counts.insert(bucket, count);
        }
    }
    let epoch = epoch.ok_or_else(|| StoreError::Corrupt("no authentication epoch".into()))?;
    Ok((epoch, counts))
}

/// Writes the counters that changed, in name order.
async fn write_counts(
    tx: &mut super::WriteTx,
    changed: &HashSet<&str>,
    counts: &HashMap<String, i64>,
    windows: &HashMap<&str, i64>,
) -> Result<(), StoreError> {
    if changed.is_empty() {
        return Ok(());
    }
    let mut names: Vec<&str> = changed.iter().copied().collect();
    names.sort_unstable();
    let rows: Vec<(&str, i64, i64)> = names
        .into_iter()
        .map(|name| {
            let count = counts.get(name).copied().unwrap_or(0);
            let window_end = windows.get(name).copied().unwrap_or(0);
            (name, count, window_end)
        })
        .collect();
    let rows = serde_json::to_string(&rows).map_err(|e| StoreError::Batch(e.to_string()))?;
    sqlx::query(WRITE_COUNTS)
        .bind(rows)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
