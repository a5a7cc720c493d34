//! SQLite admissions on a connection thread of their own.
//!
//! On SQLite a group of admissions is one short transaction under the write lock, and what it
//! costs is mostly handing work between threads: through the pool's connection worker, each of
//! its four steps (begin, read, write, commit) is a round trip between the async runtime and that
//! connection's thread, each with its wake-ups. Here one thread owns one connection and the
//! whole group: requests queue to it directly, it runs the group's transaction with its
//! statements prepared once, and it answers each request. One hand-over each way per group.
//!
//! The transaction is the one [`super`] describes, on the same tables and under the
//! writers' turn of this process (so it never polls SQLite's lock behind the other writer of the
//! process); another process sharing the file is waited for by SQLite's busy timeout, as every
//! writer is.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvError, Sender, TryRecvError};

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use tokio::sync::Mutex;

use super::{MAX_GROUP, READ_COUNTS, WRITE_COUNTS, Waiting, answer, decide_in_order};

/// The queue to a running admission thread.
pub(crate) type Queue = Sender<Waiting>;

/// Starts the admission thread for the database file `path`; `turn` is the writers' turn of the
/// process. The thread ends when the queue's last sender is dropped.
pub(crate) fn start(path: PathBuf, turn: Arc<Mutex<()>>) -> Result<Queue, String> {
    let conn = open(&path).map_err(|e| format!("admissions: {e}"))?;
    let (sender, receiver) = mpsc::channel();
    std::thread::Builder::new()
        .name("examkit-admissions".into())
        .spawn(move || serve(conn, &turn, &receiver))
        .map_err(|e| format!("admissions: {e}"))?;
    Ok(sender)
}

/// A writer connection with the bookkeeping settings of the store's own writers.
fn open(path: &std::path::Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

fn serve(mut conn: Connection, turn: &Mutex<()>, queue: &Receiver<Waiting>) {
    loop {
        let mut group = Vec::with_capacity(MAX_GROUP);
        if next_group(queue, &mut group).is_err() {
            return;
        }
        let decided = {
            let _turn = turn.blocking_lock();
            decide_group(&mut conn, &group).map_err(|e| e.to_string())
        };
        answer(group, decided);
    }
}

/// Waits for an admission, then takes every other one already waiting, up to [`MAX_GROUP`].
fn next_group(queue: &Receiver<Waiting>, group: &mut Vec<Waiting>) -> Result<(), RecvError> {
    group.push(queue.recv()?);
    while group.len() < MAX_GROUP {
        match queue.try_recv() {
            Ok(waiting) => group.push(waiting),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
        }
    }
    Ok(())
}

/// One transaction: the counters read once, the group decided in arrival order, the changed
/// counters written once; nothing is answered unless it commits.
fn decide_group(
    conn: &mut Connection,
    group: &[Waiting],
) -> rusqlite::Result<Vec<(Vec<i64>, i64)>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut windows: HashMap<&str, i64> = HashMap::new();
    for bucket in group.iter().flat_map(|w| &w.buckets) {
        windows.insert(bucket.name.as_str(), bucket.window_end);
    }
    let names: Vec<&str> = windows.keys().copied().collect();
    let names = serde_json::to_string(&names).map_err(to_sqlite)?;
    let mut counts: HashMap<String, i64> = HashMap::new();
    let mut epoch = None;
    {
        let mut read = tx.prepare_cached(READ_COUNTS)?;
        let mut rows = read.query([names])?;
        while let Some(row) = rows.next()? {
            let bucket: String = row.get(0)?;
            let count: i64 = row.get(1)?;
            if bucket.is_empty() {
                epoch = Some(count);
            } else {
                counts.insert(bucket, count);
            }
        }
    }
    let epoch = epoch.ok_or_else(|| to_sqlite("no authentication epoch"))?;
    let (answers, changed) = decide_in_order(group, &mut counts, epoch);
    if !changed.is_empty() {
        let rows: Vec<(&str, i64, i64)> = changed
            .iter()
            .map(|name| {
                let count = counts.get(*name).copied().unwrap_or(0);
                let window_end = windows.get(name).copied().unwrap_or(0);
                (*name, count, window_end)
            })
            .collect();
        let rows = serde_json::to_string(&rows).map_err(to_sqlite)?;
        tx.prepare_cached(WRITE_COUNTS)?.execute([rows])?;
    }
    tx.commit()?;
    Ok(answers)
}

fn to_sqlite(e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(e.to_string().into())
}
