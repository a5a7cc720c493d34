//! Backups: `examkit backup` copies the SQLite database while 8 clients write to the service,
//! `examkit restore` puts the copy in a new data directory, and the restored service serves every
//! session and file (by SHA-256) written before the backup began, then works as usual. On
//! PostgreSQL, the documented `pg_dump` and `pg_restore` do the same. A backup file is its owner's
//! alone (mode 0600), and a restore ends the browser sessions the backup held.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Db, Server, generous, start};
use examkit::auth::Scope;
use sha2::{Digest, Sha256};

/// What a client wrote and when the write was acknowledged.
struct Written {
    session: String,
    asset: String,
    sha256: String,
    at: Instant,
}

/// Runs 8 clients that each make imports and automated-marking sessions and upload a file to
/// each, until `stop` is set.
fn clients(
    s: &Arc<Server>,
    key: &str,
    stop: &Arc<std::sync::atomic::AtomicBool>,
) -> Vec<tokio::task::JoinHandle<Vec<Written>>> {
    (0..8u8)
        .map(|client| {
            let (s, key, stop) = (s.clone(), key.to_owned(), stop.clone());
            tokio::spawn(async move {
                let mut written = Vec::new();
                let mut n = 0u16;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    n += 1;
                    let automated = n.is_multiple_of(2);
                    let (create, upload) = if automated {
                        ("/v1/marking/sessions", "/v1/marking/sessions")
                    } else {
                        ("/v1/marking/imports", "/v1/marking/imports")
                    };
                    let idem = format!("backup-{client}-{n}");
                    let made = s
                        .post_json(create, &key, Some(&idem), br#"{"title":"During a backup"}"#)
                        .await;
                    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
                    let session = made.json()["session"]["id"]
                        .as_str()
                        .expect("id")
                        .to_owned();
                    let bytes = common::unique_png(client, n, false);
                    let sent = s
                        .send(
                            reqwest::Method::POST,
                            &format!("{upload}/{session}/assets?kind=work&name=page.png"),
                            Some(&key),
                            &[("content-type", "image/png")],
                            Some(bytes.clone()),
                        )
                        .await;
                    assert_eq!(sent.status, 201, "{}", String::from_utf8_lossy(&sent.body));
                    written.push(Written {
                        session,
                        asset: sent.json()["asset"]["id"].as_str().expect("id").to_owned(),
                        sha256: hex(&Sha256::digest(&bytes)),
                        at: Instant::now(),
                    });
                }
                written
            })
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every write acknowledged before `began` is served by `restored`, byte for byte; returns how
/// many were checked.
async fn all_there(restored: &Server, key: &str, written: &[Written], began: Instant) -> usize {
    let mut checked = 0;
    for w in written.iter().filter(|w| w.at < began) {
        let session = restored
            .get(&format!("/v1/marking/sessions/{}", w.session), key)
            .await;
        assert_eq!(session.status, 200, "session {} restored", w.session);
        let file = restored
            .get(&format!("/v1/marking/assets/{}", w.asset), key)
            .await;
        assert_eq!(file.status, 200, "file {} restored", w.asset);
        assert_eq!(
            hex(&Sha256::digest(&file.body)),
            w.sha256,
            "file {}",
            w.asset
        );
        checked += 1;
    }
    checked
}

/// The restored service works as usual: a whole import, completed through the engine.
async fn works_as_usual(restored: &Server, key: &str) {
    let (import, submission, _, _) = restored.import_with_example(key).await;
    let done = restored
        .post_json(
            &format!("/v1/marking/imports/{import}/complete"),
            key,
            Some("after-restore"),
            submission.as_bytes(),
        )
        .await;
    assert_eq!(done.status, 200, "{}", String::from_utf8_lossy(&done.body));
}

fn examkit(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args(args)
        .env_remove("DATABASE_URL")
        .output()
        .expect("examkit runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_under_writes_restores_everything_written_before_it() {
    let s = Arc::new(start(Db::Sqlite, generous()).await);
    let user = s.user("Backed up").await;
    let key = s.key(&user, Scope::ALL).await;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let running = clients(&s, &key, &stop);
    tokio::time::sleep(Duration::from_millis(1_500)).await;

    let dir = tempfile::tempdir().expect("dir");
    let copy = dir.path().join("examkit-backup.db");
    let began = Instant::now();
    let url = s.database_url.clone();
    let to = copy.display().to_string();
    let backed =
        tokio::task::spawn_blocking(move || examkit(&["backup", "--to", &to, "--database", &url]))
            .await
            .expect("ran");
    assert!(
        backed.status.success(),
        "{}",
        String::from_utf8_lossy(&backed.stderr)
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut written = Vec::new();
    for client in running {
        written.extend(client.await.expect("client"));
    }
    assert!(
        written.iter().any(|w| w.at > began),
        "clients wrote during the backup"
    );

    // Refusals: an existing file, a live data directory, a file that is not a backup.
    let again = examkit(&[
        "backup",
        "--to",
        &copy.display().to_string(),
        "--database",
        &s.database_url,
    ]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("pass --force"));
    let live = s.data_dir().display().to_string();
    let refused = examkit(&[
        "restore",
        "--from",
        &copy.display().to_string(),
        "--data-dir",
        &live,
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("already holds a database"));
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"not a database").expect("written");
    let fresh = dir.path().join("restored");
    let fresh_arg = fresh.display().to_string();
    let refused = examkit(&[
        "restore",
        "--from",
        &junk.display().to_string(),
        "--data-dir",
        &fresh_arg,
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is not a SQLite database"));
    assert!(!fresh.join("examkit.db").exists(), "nothing was restored");

    let restored = examkit(&[
        "restore",
        "--from",
        &copy.display().to_string(),
        "--data-dir",
        &fresh_arg,
    ]);
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
    let url = format!("sqlite://{}/examkit.db?mode=rwc", fresh.display());
    let server = common::start_on(&url, generous()).await;
    let checked = all_there(&server, &key, &written, began).await;
    assert!(checked >= 8, "only {checked} writes preceded the backup");
    works_as_usual(&server, &key).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_is_its_owners_alone_and_a_restore_ends_browser_sessions() {
    use std::os::unix::fs::PermissionsExt;
    let s = start(Db::Sqlite, generous()).await;
    let user = s.user("Signed in").await;
    let key = s.key(&user, Scope::ALL).await;
    let original = s.store.deployment_id().await.expect("the original's id");
    let now = examkit::store::now_ms();
    s.store
        .create_app_session(&examkit::store::app_sessions::AppSession {
            id_hash: "ab".repeat(32),
            user_id: user.clone(),
            csrf_token: "a-csrf-token".into(),
            created_at: now,
            last_seen_at: now,
            expires_at: now + 3_600_000,
        })
        .await
        .expect("a browser session");
    let dir = tempfile::tempdir().expect("dir");
    let copy = dir.path().join("examkit-backup.db");
    let copy_arg = copy.display().to_string();
    let mode = |path: &std::path::Path| {
        std::fs::metadata(path)
            .expect("the file")
            .permissions()
            .mode()
            & 0o777
    };
    for force in [false, true] {
        if force {
            // A file readable by everyone is replaced by one that is not.
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        }
        let mut args = vec!["backup", "--to", &copy_arg, "--database", &s.database_url];
        if force {
            args.push("--force");
        }
        let backed = examkit(&args);
        assert!(
            backed.status.success(),
            "{}",
            String::from_utf8_lossy(&backed.stderr)
        );
        assert_eq!(mode(&copy), 0o600, "force: {force}");
    }
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(leftovers, ["examkit-backup.db"]);

    let fresh = dir.path().join("restored");
    let restored = examkit(&[
        "restore",
        "--from",
        &copy_arg,
        "--data-dir",
        &fresh.display().to_string(),
    ]);
    let said = String::from_utf8_lossy(&restored.stderr);
    assert!(restored.status.success(), "{said}");
    assert!(
        said.contains("API keys are as they were when the backup was taken"),
        "{said}"
    );
    assert!(said.contains("have been ended (1)"), "{said}");
    let url = format!("sqlite://{}/examkit.db?mode=rwc", fresh.display());
    let server = common::start_on(&url, generous()).await;
    let sessions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM app_sessions")
        .fetch_one(server.store.pool())
        .await
        .expect("count");
    assert_eq!(sessions, 0, "every browser session was ended");
    assert_eq!(
        server.get("/v1/me", &key).await.status,
        200,
        "keys came back"
    );
    // A plain restore is the same deployment; a restore as a new deployment is not, and says so.
    assert_eq!(
        server.store.deployment_id().await.expect("the copy's id"),
        original
    );
    let staging = dir.path().join("staging");
    let renewed = examkit(&[
        "restore",
        "--from",
        &copy_arg,
        "--new-deployment",
        "--data-dir",
        &staging.display().to_string(),
    ]);
    let said = String::from_utf8_lossy(&renewed.stderr);
    assert!(renewed.status.success(), "{said}");
    let url = format!("sqlite://{}/examkit.db?mode=rwc", staging.display());
    let copy = examkit::store::Store::open(&url)
        .await
        .expect("the copy opens");
    let id = copy.deployment_id().await.expect("the copy's id");
    assert_ne!(id, original);
    assert!(
        said.contains(&format!(
            "It is a new deployment: its id is {id} (the backup's was {original})"
        )),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[cfg_attr(
    not(examkit_postgres_tests),
    ignore = "PostgreSQL not configured: set EXAMKIT_TEST_POSTGRES_URL"
)]
async fn pg_dump_and_pg_restore_carry_a_postgresql_database() {
    let s = start(Db::Postgres, generous()).await;
    let s = Arc::new(s);
    let user = s.user("Dumped").await;
    let key = s.key(&user, Scope::ALL).await;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let running = clients(&s, &key, &stop);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let dir = tempfile::tempdir().expect("dir");
    let dump = dir.path().join("examkit.dump");
    let began = Instant::now();
    let out = std::process::Command::new("pg_dump")
        .args(["--format=custom", "--file"])
        .arg(&dump)
        .arg(&s.database_url)
        .output()
        .expect("pg_dump runs (Debian's postgresql-client)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut written = Vec::new();
    for client in running {
        written.extend(client.await.expect("client"));
    }
    let target = common::fresh_database(Db::Postgres, dir.path()).await;
    let out = std::process::Command::new("pg_restore")
        .args(["--no-owner", "--exit-on-error", "--dbname", &target])
        .arg(&dump)
        .output()
        .expect("pg_restore runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let server = common::start_on(&target, generous()).await;
    let checked = all_there(&server, &key, &written, began).await;
    assert!(checked >= 8, "only {checked} writes preceded the dump");
    works_as_usual(&server, &key).await;
}
