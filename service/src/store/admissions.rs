//! Rate-limit admissions on SQLite, decided in groups: one transaction for every admission
//! waiting at one moment.
//!
//! SQLite has one writer at a time, so admissions queue for the write lock whatever is done; a
//! transaction per request spends most of its time beginning and committing. Here requests hand
//! their counters to one task, which takes the write lock once for all that are waiting, reads
//! the authentication epoch and their counters, decides each in arrival order (a refused request
//! leaves the counts as they were), writes the counters that changed, commits, and only then
//! answers them: three statements for the group, however large. Every
//! decision is made on the counts in the database under the write lock, so limits stay exact for
//! every process sharing the file; a request is answered only once its counts are committed.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use sqlx::Row;
use tokio::sync::{mpsc, oneshot};

use super::rate::Bucket;
use super::{Store, StoreError};

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
