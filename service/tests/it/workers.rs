//! Workers as real processes on one database: a worker killed mid-job (SIGKILL) loses nothing
//! and duplicates nothing, two `examkit serve` instances on one PostgreSQL database share the
//! work, SIGTERM lets a running job finish before the worker exits, a worker killed while it
//! marks a question leaves exactly one saved result, and questions still queued when a service
//! starts with automated marking off are cancelled with the reason.
//!
//! Jobs are slowed with the test hook `EXAMKIT_TEST_JOB_DELAY_MS`, which announces each job on
//! standard error and waits before running it, so a kill lands mid-job.

use crate::common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::marking::{
    all_terminal, exported_paper, poll_until, scan, session_from_paper, start, upload,
};
use common::{Db, generous};
use examkit::auth::Scope;
use examkit::store::Store;
use examkit::store::automated::{Allowance, PageToIndex};
use examkit::store::jobs::JobRow;
use examkit::store::words::JobState;

struct Process {
    child: Child,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Process {
    /// Waits for a standard-error line containing `needle`.
    fn wait_for(&self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(_) => panic!("no line containing {needle:?} within {within:?}"),
            }
        }
    }
}

fn spawn(args: &[&str], database: &str, delay_ms: Option<u64>) -> Process {
    spawn_with(args, database, delay_ms, &[])
}

/// [`spawn`] with more environment variables (`EXAMKIT_TEST_JOB_DELAY_KINDS`, …).
fn spawn_with(
    args: &[&str],
    database: &str,
    delay_ms: Option<u64>,
    env: &[(&str, &str)],
) -> Process {
    let mut command = Command::new(env!("CARGO_BIN_EXE_examkit"));
    command
        .args(args)
        .arg("--database")
        .arg(database)
        .env_remove("DATABASE_URL")
        .env("EXAMKIT_LOG", "warn")
        .env("EXAMKIT_JOB_LEASE_SECONDS", "2")
        .env("EXAMKIT_JOB_BACKOFF_MS", "100")
        // The pages are blank: nothing to read, and the queue is what is tested.
        .env("EXAMKIT_OCR", "off")
        .env("OMP_THREAD_LIMIT", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match delay_ms {
        Some(ms) => command.env("EXAMKIT_TEST_JOB_DELAY_MS", ms.to_string()),
        None => command.env_remove("EXAMKIT_TEST_JOB_DELAY_MS"),
    };
    command.env_remove("EXAMKIT_TEST_JOB_DELAY_KINDS");
    command.envs(env.iter().copied());
    let mut child = command.spawn().expect("examkit starts");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[child] {line}");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Process { child, stderr: rx }
}

fn example_pdf(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/curl")
        .join(name);
    std::fs::read(path).expect("example PDF readable")
}

/// A started session with a 6-page work PDF: its id and its number of jobs.
async fn started_session(store: &Store) -> (String, usize) {
    let user = store
        .create_user("workers", true, false)
        .await
        .expect("user")
        .id;
    let session = store
        .create_automated_session(&user, "workers", None)
        .await
        .expect("session");
    let bytes = example_pdf("student-script.pdf");
    let sha = examkit::auth::sha256_hex(&bytes);
    let asset = store
        .add_asset(
            &user,
            &session.id,
            examkit::store::words::Origin::Automated,
            examkit::store::words::AssetKind::Work,
            "script.pdf",
            "application/pdf",
            6,
            &sha,
            &bytes,
        )
        .await
        .expect("asset");
    let pages: Vec<PageToIndex> = (1..=6)
        .map(|page| PageToIndex {
            asset_id: asset.id.clone(),
            page,
        })
        .collect();
    let started = store
        .start_indexing(&user, &session.id, &pages, &Allowance::default(), 3)
        .await
        .expect("start");
    assert_eq!(started, examkit::store::automated::StartOutcome::Started);
    (session.id, pages.len())
}

async fn wait_until_indexed(store: &Store, session: &str) -> Vec<JobRow> {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let jobs = store.session_jobs(session).await.expect("jobs");
        if jobs
            .iter()
            .all(|j| j.state == JobState::Done || j.state == JobState::Failed)
        {
            return jobs;
        }
        assert!(Instant::now() < deadline, "jobs did not finish: {jobs:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn pages_saved(store: &Store, session: &str) -> usize {
    store.session_pages(session).await.expect("pages").len()
}

async fn a_killed_worker_loses_and_duplicates_nothing(db: Db) {
    let dir = tempfile::tempdir().expect("dir");
    let url = common::fresh_database(db, dir.path()).await;
    let store = Store::open(&url).await.expect("open");
    let (session, count) = started_session(&store).await;
    let doomed = spawn(&["worker"], &url, Some(60_000));
    let line = doomed.wait_for("test hook: job", Duration::from_secs(60));
    drop(doomed); // SIGKILL, mid-job
    let killed_job = line.split_whitespace().nth(3).expect("job id").to_owned();
    let survivor = spawn(&["worker"], &url, None);
    let jobs = wait_until_indexed(&store, &session).await;
    drop(survivor);
    assert!(jobs.iter().all(|j| j.state == JobState::Done), "{jobs:?}");
    for job in &jobs {
        let expected = if job.id == killed_job { 2 } else { 1 };
        assert_eq!(job.attempts, expected, "{job:?}");
    }
    assert_eq!(pages_saved(&store, &session).await, count);
    let row = store
        .session(&jobs_user(&store, &session).await, &session)
        .await
        .expect("read")
        .expect("session");
    assert_eq!(
        row.indexing_state,
        Some(examkit::store::words::IndexingState::Completed)
    );
    assert_eq!(row.pages_done, i64::try_from(count).expect("count"));
}

async fn jobs_user(store: &Store, session: &str) -> String {
    sqlx::query_scalar::<_, String>("SELECT user_id FROM marking_sessions WHERE id = $1")
        .bind(session)
        .fetch_one(store.pool())
        .await
        .expect("user")
}

async fn sigterm_lets_the_running_job_finish(db: Db) {
    let dir = tempfile::tempdir().expect("dir");
    let url = common::fresh_database(db, dir.path()).await;
    let store = Store::open(&url).await.expect("open");
    let (session, _) = started_session(&store).await;
    let mut worker = spawn(&["worker"], &url, Some(1_000));
    let line = worker.wait_for("test hook: job", Duration::from_secs(60));
    let job = line.split_whitespace().nth(3).expect("job id").to_owned();
    let pid = worker.child.id().to_string();
    let status = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let exit = loop {
        if let Some(exit) = worker.child.try_wait().expect("wait") {
            break exit;
        }
        assert!(Instant::now() < deadline, "the worker did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit:?}");
    let jobs = store.session_jobs(&session).await.expect("jobs");
    let running = jobs.iter().find(|j| j.id == job).expect("the running job");
    assert_eq!(
        running.state,
        JobState::Done,
        "the running job finished before exit: {jobs:?}"
    );
    // No further job was claimed after SIGTERM.
    assert_eq!(
        jobs.iter().filter(|j| j.state == JobState::Done).count(),
        1,
        "{jobs:?}"
    );
    assert!(
        jobs.iter()
            .filter(|j| j.id != job)
            .all(|j| j.state == JobState::Queued)
    );
}

/// Two `examkit serve` instances on one PostgreSQL database, each with its workers, share the
/// queue: each job is done once, and both instances do some.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(examkit_postgres_tests),
    ignore = "PostgreSQL not configured: set EXAMKIT_TEST_POSTGRES_URL"
)]
async fn two_instances_share_the_work_on_postgres() {
    let dir = tempfile::tempdir().expect("dir");
    let url = common::fresh_database(Db::Postgres, dir.path()).await;
    let store = Store::open(&url).await.expect("open");
    let (session, count) = started_session(&store).await;
    let args = [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--sample-bank",
        "off",
        "--workers",
        "1",
    ];
    let a = spawn(&args, &url, Some(700));
    let b = spawn(&args, &url, Some(700));
    let jobs = wait_until_indexed(&store, &session).await;
    drop(a);
    drop(b);
    assert!(
        jobs.iter()
            .all(|j| j.state == JobState::Done && j.attempts == 1),
        "{jobs:?}"
    );
    assert_eq!(pages_saved(&store, &session).await, count);
    let processes: HashSet<String> = jobs
        .iter()
        .filter_map(|j| j.lease_owner.as_deref())
        .filter_map(|owner| owner.split('-').next().map(str::to_owned))
        .collect();
    assert_eq!(processes.len(), 2, "both instances worked: {jobs:?}");
}

/// A session from a one-question paper with a completed scan uploaded, served in process (no
/// workers): the server, its key and the session.
async fn scanned_session(url: &str) -> (common::Server, String, String) {
    let s = common::start_on(url, generous()).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Workers").await;
    let key = s.key(&user, Scope::ALL).await;
    let paper = exported_paper(&s, &key, &[QUESTION]).await;
    let answers = serde_json::json!({ QUESTION: { "a": "fg(3) = 7", "c": "x = 5" } });
    let files = scan(&paper, &answers, &["--dpi", "150", "--seed", "3"]);
    let session = session_from_paper(&s, &key, &paper.id).await;
    for (name, bytes) in files {
        upload(&s, &key, &session, "work", &name, bytes).await;
    }
    (s, key, session)
}

/// A sample-bank question with a final answer in two of its parts.
const QUESTION: &str = "8a834eff-5ac7-5e3d-902e-0c7342b819d4";

async fn a_worker_killed_while_marking_leaves_one_result(db: Db) {
    let dir = tempfile::tempdir().expect("dir");
    let url = common::fresh_database(db, dir.path()).await;
    let (s, key, session) = scanned_session(&url).await;
    // The first worker indexes and plans at full speed, then stalls on the marking job.
    let stall = [("EXAMKIT_TEST_JOB_DELAY_KINDS", "mark_question")];
    let doomed = spawn_with(&["worker"], &url, Some(60_000), &stall);
    start(&s, &key, &session).await;
    let line = doomed.wait_for("test hook: job", Duration::from_secs(300));
    assert!(line.contains("(mark_question)"), "{line}");
    drop(doomed); // SIGKILL, holding the marking job's lease
    let killed_job = line.split_whitespace().nth(3).expect("job id").to_owned();
    let survivor = spawn(&["worker"], &url, None);
    let view = poll_until(&s, &key, &session, 300, |v| all_terminal(v, 1)).await;
    drop(survivor);
    let question = &view["questions"][0];
    assert!(
        matches!(
            question["status"].as_str(),
            Some("completed" | "needs_review")
        ),
        "{question}"
    );
    assert_eq!(question["revision"], 1, "one saved result: {question}");
    let jobs = s.store.session_jobs(&session).await.expect("jobs");
    let killed = jobs.iter().find(|j| j.id == killed_job).expect("the job");
    assert_eq!(killed.kind, "mark_question");
    assert_eq!(
        (killed.state.as_str(), killed.attempts),
        ("done", 2),
        "{jobs:?}"
    );
    assert!(
        jobs.iter()
            .filter(|j| j.id != killed_job)
            .all(|j| j.state == JobState::Done && j.attempts == 1),
        "{jobs:?}"
    );
    assert_eq!(common::stored_questions(&s.store, &session).await, (1, 1));
}

async fn queued_questions_are_cancelled_when_marking_is_switched_off(db: Db) {
    let dir = tempfile::tempdir().expect("dir");
    let url = common::fresh_database(db, dir.path()).await;
    let (s, key, session) = scanned_session(&url).await;
    // A worker indexes and plans, then stalls on the marking job; killed, it leaves the question
    // waiting (its job's lease runs out) with no worker to take it.
    let stall = [("EXAMKIT_TEST_JOB_DELAY_KINDS", "mark_question")];
    let worker = spawn_with(&["worker"], &url, Some(60_000), &stall);
    start(&s, &key, &session).await;
    worker.wait_for("test hook: job", Duration::from_secs(300));
    drop(worker);
    let view = poll_until(&s, &key, &session, 60, |v| v["indexingFinished"] == true).await;
    assert_eq!(view["questions"].as_array().map(Vec::len), Some(1));
    assert!(
        matches!(
            view["questions"][0]["status"].as_str(),
            Some("queued" | "running")
        ),
        "{view}"
    );
    // The lease (2 s) runs out.
    tokio::time::sleep(Duration::from_secs(3)).await;
    // The service starts with automated marking off.
    let off = spawn(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--sample-bank",
            "off",
            "--automated-marking",
            "off",
        ],
        &url,
        None,
    );
    off.wait_for("queued questions cancelled", Duration::from_secs(60));
    let view = poll_until(&s, &key, &session, 30, |v| all_terminal(v, 1)).await;
    drop(off);
    let question = &view["questions"][0];
    assert_eq!(question["status"], "cancelled", "{question}");
    assert!(
        question["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("switched off before the question was marked")),
        "{question}"
    );
    let jobs = s.store.session_jobs(&session).await.expect("jobs");
    assert!(
        jobs.iter()
            .all(|j| j.kind != "mark_question" || j.state == JobState::Cancelled),
        "no marking job is left to claim: {jobs:?}"
    );
}

on_both!(
    a_killed_worker_loses_and_duplicates_nothing,
    sigterm_lets_the_running_job_finish,
    a_worker_killed_while_marking_leaves_one_result,
    queued_questions_are_cancelled_when_marking_is_switched_off,
);
