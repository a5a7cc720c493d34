//! The job queue on SQLite and PostgreSQL, driven through the store: claims, leases, heartbeats,
//! at most one saved result per job, retries with backoff, and concurrent claimers.

use crate::common;

use std::collections::HashSet;

use common::Db;
use examkit::store::Store;
use examkit::store::job_kind::{JobKind, MarkQuestion};
use examkit::store::jobs::Retry;
use examkit::store::now_ms;
use examkit::store::words::JobState;

/// A store on a fresh database, with one account and one session to hang jobs on.
async fn fixture(db: Db) -> (Store, String, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = common::fresh_database(db, dir.path()).await;
    let store = Store::open(&url).await.expect("open");
    let user = store
        .create_user("queue", true, false)
        .await
        .expect("user")
        .id;
    let session = store
        .create_automated_session(&user, "queue test", None)
        .await
        .expect("session")
        .id;
    (store, user, session, dir)
}

async fn enqueue(
    store: &Store,
    user: &str,
    session: &str,
    n: usize,
    max_attempts: i64,
) -> Vec<String> {
    let jobs: Vec<JobKind> = (0..n)
        .map(|i| {
            JobKind::MarkQuestion(MarkQuestion {
                question_id: format!("q{i}"),
            })
        })
        .collect();
    let mut tx = store.begin_write().await.expect("tx");
    let ids = Store::enqueue_jobs(&mut tx, session, user, &jobs, max_attempts, now_ms())
        .await
        .expect("enqueue");
    tx.commit().await.expect("commit");
    ids
}

async fn state_of(store: &Store, session: &str, id: &str) -> (JobState, i64, Option<String>) {
    let job = store
        .session_jobs(session)
        .await
        .expect("jobs")
        .into_iter()
        .find(|j| j.id == id)
        .expect("job exists");
    (job.state, job.attempts, job.last_error)
}

async fn a_job_is_claimed_once_and_finished_under_its_lease(db: Db) {
    let (store, user, session, _dir) = fixture(db).await;
    let ids = enqueue(&store, &user, &session, 1, 3).await;
    let now = now_ms();
    let job = store
        .claim_job("w1", now, 60_000)
        .await
        .expect("claim")
        .expect("a due job");
    assert_eq!(job.id, ids[0]);
    assert_eq!(job.attempts, 1);
    // Nothing else is due while the lease holds.
    assert!(
        store
            .claim_job("w2", now, 60_000)
            .await
            .expect("claim")
            .is_none()
    );
    assert!(
        store
            .heartbeat_job(&job.id, &job.lease_token, now, 60_000)
            .await
            .expect("heartbeat")
    );
    let mut tx = store.begin_write().await.expect("tx");
    assert!(Store::finish_job(&mut tx, &job, now).await.expect("finish"));
    tx.commit().await.expect("commit");
    assert_eq!(state_of(&store, &session, &job.id).await.0, JobState::Done);
    // A finished job is never claimed again, and its lease no longer beats.
    assert!(
        store
            .claim_job("w2", now + 120_000, 60_000)
            .await
            .expect("claim")
            .is_none()
    );
    assert!(
        !store
            .heartbeat_job(&job.id, &job.lease_token, now, 60_000)
            .await
            .expect("heartbeat")
    );
}

async fn an_expired_lease_is_taken_over_and_the_late_worker_saves_nothing(db: Db) {
    let (store, user, session, _dir) = fixture(db).await;
    enqueue(&store, &user, &session, 1, 3).await;
    let now = now_ms();
    let first = store
        .claim_job("dead", now, 1_000)
        .await
        .expect("claim")
        .expect("job");
    // Before expiry nobody else gets it; after, another worker does.
    assert!(
        store
            .claim_job("w2", now + 500, 1_000)
            .await
            .expect("claim")
            .is_none()
    );
    let second = store
        .claim_job("w2", now + 1_001, 60_000)
        .await
        .expect("claim")
        .expect("the expired job");
    assert_eq!(second.id, first.id);
    assert_eq!(second.attempts, 2);
    assert_ne!(second.lease_token, first.lease_token);
    // The first worker wakes up: its heartbeat says the lease is lost, and its finish saves nothing.
    assert!(
        !store
            .heartbeat_job(&first.id, &first.lease_token, now + 1_100, 1_000)
            .await
            .expect("heartbeat")
    );
    let mut tx = store.begin_write().await.expect("tx");
    assert!(
        !Store::finish_job(&mut tx, &first, now)
            .await
            .expect("finish")
    );
    tx.rollback().await.expect("rollback");
    assert_eq!(
        state_of(&store, &session, &first.id).await.0,
        JobState::Running
    );
    let mut tx = store.begin_write().await.expect("tx");
    assert!(
        Store::finish_job(&mut tx, &second, now)
            .await
            .expect("finish")
    );
    tx.commit().await.expect("commit");
    assert_eq!(
        state_of(&store, &session, &first.id).await.0,
        JobState::Done
    );
}

async fn a_failing_job_backs_off_then_fails_with_its_error(db: Db) {
    let (store, user, session, _dir) = fixture(db).await;
    let ids = enqueue(&store, &user, &session, 1, 3).await;
    let mut now = now_ms();
    for attempt in 1..=3 {
        let job = store
            .claim_job("w", now, 60_000)
            .await
            .expect("claim")
            .expect("due");
        assert_eq!(job.attempts, attempt);
        let fate = store
            .retry_job(&job, &format!("boom {attempt}"), now, 1_000)
            .await
            .expect("retry");
        if attempt < 3 {
            assert_eq!(fate, Retry::Queued);
            let backoff = 1_000 << (attempt - 1);
            // Not due before its backoff, due after it.
            assert!(
                store
                    .claim_job("w", now + backoff - 1, 60_000)
                    .await
                    .expect("claim")
                    .is_none()
            );
            now += backoff;
        } else {
            assert_eq!(fate, Retry::Failed);
            let mut tx = store.begin_write().await.expect("tx");
            assert!(
                Store::fail_job_in(&mut tx, &job, "boom 3", now)
                    .await
                    .expect("fail")
            );
            tx.commit().await.expect("commit");
        }
    }
    let (state, attempts, error) = state_of(&store, &session, &ids[0]).await;
    assert_eq!((state, attempts), (JobState::Failed, 3));
    assert_eq!(error.as_deref(), Some("boom 3"));
    assert!(
        store
            .claim_job("w", now + 10_000_000, 60_000)
            .await
            .expect("claim")
            .is_none()
    );
}

async fn a_released_job_is_due_again_without_counting_the_attempt(db: Db) {
    let (store, user, session, _dir) = fixture(db).await;
    enqueue(&store, &user, &session, 1, 3).await;
    let now = now_ms();
    let job = store
        .claim_job("w", now, 60_000)
        .await
        .expect("claim")
        .expect("due");
    assert!(store.release_job(&job, now).await.expect("release"));
    let again = store
        .claim_job("w2", now, 60_000)
        .await
        .expect("claim")
        .expect("due");
    assert_eq!((again.id.as_str(), again.attempts), (job.id.as_str(), 1));
}

async fn concurrent_claimers_take_each_job_once(db: Db) {
    let (store, user, session, _dir) = fixture(db).await;
    let ids = enqueue(&store, &user, &session, 120, 3).await;
    let mut tasks = Vec::new();
    for w in 0..4 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(job) = store
                .claim_job(&format!("w{w}"), now_ms(), 600_000)
                .await
                .expect("claim")
            {
                let mut tx = store.begin_write().await.expect("tx");
                assert!(
                    Store::finish_job(&mut tx, &job, now_ms())
                        .await
                        .expect("finish")
                );
                tx.commit().await.expect("commit");
                mine.push(job.id);
            }
            mine
        }));
    }
    let mut seen = HashSet::new();
    let mut per_worker = Vec::new();
    for task in tasks {
        let mine = task.await.expect("worker");
        per_worker.push(mine.len());
        for id in mine {
            assert!(seen.insert(id), "a job was claimed twice");
        }
    }
    assert_eq!(seen, ids.into_iter().collect::<HashSet<_>>());
    eprintln!("jobs per claimer: {per_worker:?}");
}

/// Account A queues 40 pages, then account B queues 2; two workers on two instances of the
/// service (two stores on one database) work through the queue. The queue takes turns between
/// accounts: B's pages are done before A's tenth, and every job is done once.
async fn a_small_account_waits_a_few_jobs_behind_a_class_stack(db: Db) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = common::fresh_database(db, dir.path()).await;
    let first = Store::open(&url).await.expect("open");
    let second = Store::open(&url).await.expect("open again");
    let mut accounts = Vec::new();
    for name in ["class-stack", "one-page"] {
        let user = first.create_user(name, true, false).await.expect("user").id;
        let session = first
            .create_automated_session(&user, name, None)
            .await
            .expect("session")
            .id;
        accounts.push((user, session));
    }
    let (a, b) = (&accounts[0], &accounts[1]);
    let a_jobs = enqueue(&first, &a.0, &a.1, 40, 3).await;
    let b_jobs = enqueue(&first, &b.0, &b.1, 2, 3).await;
    let done: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let mut workers = Vec::new();
    for (w, store) in [first.clone(), second.clone()].into_iter().enumerate() {
        let done = done.clone();
        workers.push(tokio::spawn(async move {
            while let Some(job) = store
                .claim_job(&format!("instance-{w}"), now_ms(), 600_000)
                .await
                .expect("claim")
            {
                // A page takes a moment to read.
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                let mut tx = store.begin_write().await.expect("tx");
                assert!(
                    Store::finish_job(&mut tx, &job, now_ms())
                        .await
                        .expect("finish")
                );
                tx.commit().await.expect("commit");
                done.lock().expect("order").push(job.id);
            }
        }));
    }
    for worker in workers {
        worker.await.expect("worker");
    }
    let order = done.lock().expect("order").clone();
    assert_eq!(order.len(), 42, "every job is done");
    assert_eq!(
        order.iter().collect::<HashSet<_>>().len(),
        42,
        "each job is done once"
    );
    let at = |id: &String| order.iter().position(|o| o == id).expect("done");
    let b_last = b_jobs.iter().map(at).max().expect("B's jobs");
    let a_tenth = a_jobs
        .iter()
        .map(at)
        .collect::<std::collections::BTreeSet<_>>();
    let a_tenth = *a_tenth.iter().nth(9).expect("ten of A's");
    assert!(
        b_last < a_tenth,
        "B's pages finished at {b_last}, after A's tenth at {a_tenth}: {order:?}"
    );
    first.close().await;
    second.close().await;
}

on_both!(
    a_small_account_waits_a_few_jobs_behind_a_class_stack,
    a_job_is_claimed_once_and_finished_under_its_lease,
    an_expired_lease_is_taken_over_and_the_late_worker_saves_nothing,
    a_failing_job_backs_off_then_fails_with_its_error,
    a_released_job_is_due_again_without_counting_the_attempt,
    concurrent_claimers_take_each_job_once,
);
