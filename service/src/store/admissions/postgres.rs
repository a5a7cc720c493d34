//! PostgreSQL admissions on a thread and a connection of their own.
//!
//! A group is one call of `examkit_admit_group` (one round trip), and groups are decided one at a
//! time, so how many admissions a server makes in a second is bounded by how soon each group's
//! answer is read and the next group sent. On the service's runtime that answer waits its turn
//! behind every request the runtime is serving. Here one thread runs a single-threaded runtime
//! that does nothing else, with one connection of its own: the answer is read as soon as it
//! arrives.
//!
//! The connection is opened with the pools' settings on first use, and again after any error. A
//! group that fails is answered with its error and never tried again (its transaction may have
//! committed before the connection broke). Like a pooled connection, one left unused for
//! [`IDLE_CHECK`] is checked with a round trip before it is used, so a connection the database
//! closed meanwhile (a restarted server) is replaced before a group is lost to it.

use std::time::Instant;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use tokio::sync::mpsc;

use super::{MAX_GROUP, Waiting, answer};
use crate::store::{IDLE_CHECK, StoreError};

/// The queue to a running admission thread.
pub(crate) type Queue = mpsc::UnboundedSender<Waiting>;

/// Starts the admission thread for the database `options` names. The thread ends when the
/// queue's last sender is dropped.
pub(crate) fn start(options: PgConnectOptions) -> Result<Queue, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("admissions: {e}"))?;
    let (sender, receiver) = mpsc::unbounded_channel();
    std::thread::Builder::new()
        .name("examkit-admissions".into())
        .spawn(move || runtime.block_on(serve(options, receiver)))
        .map_err(|e| format!("admissions: {e}"))?;
    Ok(sender)
}

/// The thread's connection, and when it was last used.
struct Link {
    conn: PgConnection,
    used: Instant,
}

async fn serve(options: PgConnectOptions, mut queue: mpsc::UnboundedReceiver<Waiting>) {
    let mut link = None;
    loop {
        let mut group = Vec::with_capacity(MAX_GROUP);
        if queue.recv_many(&mut group, MAX_GROUP).await == 0 {
            return;
        }
        let decided = match ready(&options, &mut link).await {
            Ok(conn) => decide_group(conn, &group).await,
            Err(e) => Err(e),
        };
        match &decided {
            Ok(_) => {
                if let Some(link) = &mut link {
                    link.used = Instant::now();
                }
            }
            // The connection may be broken; the next group opens another.
            Err(_) => link = None,
        }
        answer(group, decided.map_err(|e| e.to_string()));
    }
}

/// The connection to decide the next group on: the one there is, checked when it has been
/// unused for [`IDLE_CHECK`], or a new one.
async fn ready<'a>(
    options: &PgConnectOptions,
    link: &'a mut Option<Link>,
) -> Result<&'a mut PgConnection, StoreError> {
    if let Some(current) = link
        && current.used.elapsed() >= IDLE_CHECK
        && current.conn.ping().await.is_err()
    {
        *link = None;
    }
    let current = match link.take() {
        Some(current) => current,
        None => Link {
            conn: PgConnection::connect_with(options).await?,
            used: Instant::now(),
        },
    };
    Ok(&mut link.insert(current).conn)
}

/// What `examkit_admit_group` answers: every admission's counts, space-separated in the group's
/// order, and the authentication epoch they were counted at.
#[derive(Debug, Clone, sqlx::FromRow)]
struct Decided {
    counts: String,
    epoch: i64,
}

/// The whole group is one statement, `examkit_admit_group` (migration 0016): it locks the
/// group's counters in name order, decides each admission in arrival order as
/// [`super::decide_in_order`] does, and writes the counts, in one round trip.
async fn decide_group(
    conn: &mut PgConnection,
    group: &[Waiting],
) -> Result<Vec<(Vec<i64>, i64)>, StoreError> {
    let mut names = Vec::new();
    let mut limits = Vec::new();
    let mut window_ends = Vec::new();
    let mut owners = Vec::new();
    for (owner, waiting) in group.iter().enumerate() {
        for bucket in &waiting.buckets {
            names.push(bucket.name.as_str());
            limits.push(bucket.limit.to_string());
            window_ends.push(bucket.window_end.to_string());
            owners.push(owner.to_string());
        }
    }
    let decided: Decided =
        sqlx::query_as("SELECT counts, epoch FROM examkit_admit_group($1, $2, $3, $4)")
            .bind(names.join(" "))
            .bind(limits.join(" "))
            .bind(window_ends.join(" "))
            .bind(owners.join(" "))
            .fetch_one(&mut *conn)
            .await?;
    let epoch = decided.epoch;
    let mut counts = decided.counts.split(' ').map(|c| {
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
