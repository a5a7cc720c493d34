//! `examkit bank …`, `examkit favourites …` and the sample bank at `examkit serve`'s first start,
//! through the built binary: real files, real exit codes, SQLite and PostgreSQL.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use examkit::store::Store;
use sqlx::Row;

use crate::common;
use common::{Db, fresh_database};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bank/sample")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bank/tests/invalid")
        .join(name)
}

fn examkit(url: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_examkit"));
    command
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("EXAMKIT_SAMPLE_BANK");
    if let Some(url) = url {
        command.arg("--database").arg(url);
    }
    command.stdin(Stdio::null()).output().expect("examkit runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

async fn questions(url: &str) -> i64 {
    let store = Store::open(url).await.expect("open");
    sqlx::query("SELECT COUNT(*) FROM bank_questions")
        .fetch_one(store.pool())
        .await
        .expect("count")
        .try_get::<i64, _>(0)
        .expect("n")
}

#[test]
fn bank_check_needs_no_database() {
    let ok = examkit(None, &["bank", "check", path(&sample())]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    assert!(
        text(&ok.stdout).contains("68 questions, 72 revisions, 5 assets"),
        "{}",
        text(&ok.stdout)
    );

    let bad = examkit(None, &["bank", "check", path(&fixture("rule8-cycle"))]);
    assert_eq!(bad.status.code(), Some(1));
    let expected =
        std::fs::read_to_string(fixture("rule8-cycle").join("expected.txt")).expect("expected");
    let stderr = text(&bad.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[..lines.len() - 1],
        expected.lines().collect::<Vec<_>>()[..]
    );
    assert!(
        lines[lines.len() - 1].starts_with("examkit: 2 error(s) in "),
        "{stderr}"
    );

    let missing = examkit(None, &["bank", "check", "/no/such/bank"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        text(&missing.stderr).lines().next(),
        Some("/no/such/bank:/: no such file or folder")
    );
}

async fn import_export_and_favourites(db: Db) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = fresh_database(db, dir.path()).await;
    let url = url.as_str();

    let bad = examkit(
        Some(url),
        &["bank", "import", path(&fixture("rule6-total-marks"))],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        text(&bad.stderr).lines().next(),
        Some("bank.json:/questions/0/revisions/0/marks: marks 7 but the scheme has 6 criteria")
    );
    assert!(text(&bad.stderr).contains("nothing was imported"));
    assert_eq!(questions(url).await, 0);

    let first = examkit(Some(url), &["bank", "import", path(&sample())]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert!(
        text(&first.stdout)
            .starts_with("imported: 68 questions (72 revisions) in the bank: questions added 68"),
        "{}",
        text(&first.stdout)
    );
    let again = examkit(Some(url), &["bank", "import", path(&sample())]);
    assert_eq!(again.status.code(), Some(0));
    assert!(
        text(&again.stdout).starts_with("unchanged: "),
        "{}",
        text(&again.stdout)
    );

    let out = dir.path().join("export");
    let export = examkit(Some(url), &["bank", "export", path(&out)]);
    assert_eq!(export.status.code(), Some(0), "{}", text(&export.stderr));
    assert!(text(&export.stdout).starts_with("exported 68 questions (72 revisions) and 5 assets"));
    let twice = examkit(Some(url), &["bank", "export", path(&out)]);
    assert_eq!(twice.status.code(), Some(1));
    assert!(text(&twice.stderr).contains("is not empty"));
    let round = examkit(Some(url), &["bank", "import", path(&out)]);
    assert!(
        text(&round.stdout).starts_with("unchanged: "),
        "{}",
        text(&round.stdout)
    );

    let user = examkit(Some(url), &["users", "create", "--name", "Teacher"]);
    let user = text(&user.stdout).trim().to_owned();
    let question = "bf626973-074f-5df7-b43b-fb5480a1492d";
    let add = examkit(Some(url), &["favourites", "add", "--user", &user, question]);
    assert_eq!(
        (add.status.code(), text(&add.stdout)),
        (Some(0), format!("added: {question}\n"))
    );
    let add = examkit(Some(url), &["favourites", "add", "--user", &user, question]);
    assert_eq!(
        (add.status.code(), text(&add.stdout)),
        (Some(0), format!("already a favourite: {question}\n"))
    );
    let unknown_user = examkit(
        Some(url),
        &["favourites", "add", "--user", "nobody", question],
    );
    assert_eq!(unknown_user.status.code(), Some(1));
    assert_eq!(
        text(&unknown_user.stderr),
        "examkit: no user with id nobody\n"
    );
    let unknown_question = examkit(
        Some(url),
        &[
            "favourites",
            "remove",
            "--user",
            &user,
            "00000000-0000-4000-8000-000000000000",
        ],
    );
    assert_eq!(unknown_question.status.code(), Some(1));
    assert_eq!(
        text(&unknown_question.stderr),
        "examkit: no question with id 00000000-0000-4000-8000-000000000000 in the bank\n"
    );
    let remove = examkit(
        Some(url),
        &["favourites", "remove", "--user", &user, question],
    );
    assert_eq!(
        (remove.status.code(), text(&remove.stdout)),
        (Some(0), format!("removed: {question}\n"))
    );
}

struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `examkit serve` and waits until it listens (so first-start work is done).
fn serve(url: &str, extra: &[&str], env: &[(&str, &str)]) -> Served {
    let mut command = Command::new(env!("CARGO_BIN_EXE_examkit"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--database", url])
        .args(extra)
        .env_remove("EXAMKIT_SAMPLE_BANK")
        .env("EXAMKIT_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("read");
    assert!(line.starts_with("listening on "), "serve printed {line:?}");
    Served(child)
}

async fn serve_loads_the_sample_bank_once(db: Db) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = fresh_database(db, dir.path()).await;
    // Off by flag and by environment: nothing is loaded.
    drop(serve(&url, &["--no-sample-bank"], &[]));
    drop(serve(&url, &[], &[("EXAMKIT_SAMPLE_BANK", "off")]));
    assert_eq!(questions(&url).await, 0);
    // Two instances starting at once on one database load one copy.
    let (u1, u2) = (url.clone(), url.clone());
    let a = std::thread::spawn(move || serve(&u1, &[], &[]));
    let b = std::thread::spawn(move || serve(&u2, &[], &[]));
    let (a, b) = (a.join().expect("first"), b.join().expect("second"));
    assert_eq!(questions(&url).await, 68);
    drop((a, b));
    // A later start finds the bank loaded and changes nothing.
    drop(serve(&url, &[], &[]));
    assert_eq!(questions(&url).await, 68);
}

on_both!(
    import_export_and_favourites,
    serve_loads_the_sample_bank_once
);
