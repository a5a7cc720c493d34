//! Rate-limit admissions on SQLite, decided in groups: one transaction for every admission
//! waiting at one moment.
//!
//! SQLite has one writer at a time, so admissions queue for the write lock whatever is done; a
//! transaction per request spends most of its time beginning and committing. Here requests hand
//! their counters to one task, which takes the write lock once for all that are waiting, decides
//! each in arrival order (counting its counters in one statement, and putting them back if any is
//! over its limit), reads the authentication epoch, commits, and only then answers them. Every
//! decision is made on the counts in the database under the write lock, so limits stay exact for
//! every process sharing the file; a request is answered only once its counts are committed.

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

/// Decides a group in one transaction; nothing is answered unless it commits.
async fn decide_group(
    store: &Store,
    group: &[Waiting],
) -> Result<Vec<(Vec<i64>, i64)>, StoreError> {
    let mut tx = store.begin_bookkeeping().await?;
    let epoch: i64 = sqlx::query("SELECT epoch FROM auth_epoch WHERE id = 1")
        .fetch_one(&mut *tx)
        .await?
        .try_get("epoch")?;
    let mut answers = Vec::with_capacity(group.len());
    for waiting in group {
        let counts = count(&mut tx, &waiting.buckets).await?;
        if waiting
            .buckets
            .iter()
            .zip(&counts)
            .any(|(bucket, count)| *count > bucket.limit)
        {
            put_back(&mut tx, &waiting.buckets).await?;
        }
        answers.push((counts, epoch));
    }
    tx.commit().await?;
    Ok(answers)
}

/// Increments every counter in one statement; returns the counts in the order of `buckets`.
async fn count(tx: &mut super::WriteTx, buckets: &[Bucket]) -> Result<Vec<i64>, StoreError> {
    let values = (0..buckets.len())
        .map(|i| format!("(${}, 1, ${})", 2 * i + 1, 2 * i + 2))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "INSERT INTO rate_counters (bucket, count, expires_at) VALUES {values} \
         ON CONFLICT (bucket) DO UPDATE SET count = rate_counters.count + 1 \
         RETURNING bucket, count"
    );
    let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
    for bucket in buckets {
        statement = statement.bind(bucket.name.clone()).bind(bucket.window_end);
    }
    let rows = statement.fetch_all(&mut **tx).await?;
    let mut counts = vec![None; buckets.len()];
    for row in &rows {
        let name: String = row.try_get("bucket")?;
        let count: i64 = row.try_get("count")?;
        if let Some(i) = buckets.iter().position(|b| b.name == name) {
            counts[i] = Some(count);
        }
    }
    counts
        .into_iter()
        .map(|c| c.ok_or_else(|| StoreError::Corrupt("a rate counter was not counted".into())))
        .collect()
}

/// Takes a refused request's increments back, inside the group's transaction, so no other
/// admission ever sees them.
async fn put_back(tx: &mut super::WriteTx, buckets: &[Bucket]) -> Result<(), StoreError> {
    let placeholders = (1..=buckets.len())
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql =
        format!("UPDATE rate_counters SET count = count - 1 WHERE bucket IN ({placeholders})");
    let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
    for bucket in buckets {
        statement = statement.bind(bucket.name.clone());
    }
    statement.execute(&mut **tx).await?;
    Ok(())
}
