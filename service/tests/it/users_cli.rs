//! `examkit users create --email … --password-stdin` and `examkit users set-password`: the
//! accounts that sign in to the app, and every bad form of their input.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use examkit::store::Store;

fn examkit(data_dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("examkit runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("written");
    child.wait_with_output().expect("finished")
}

fn refused(output: &Output, message: &str) {
    assert!(!output.status.success(), "refused: {message}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(message), "{message:?} in {stderr}");
}

async fn store(data: &Path) -> Store {
    let url = format!("sqlite://{}?mode=rwc", data.join("examkit.db").display());
    Store::open(&url).await.expect("open")
}

#[tokio::test]
async fn accounts_are_made_with_a_hashed_password_and_bad_input_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let create = |email: &str, stdin: &str| {
        examkit(
            &data,
            &["users", "create", "--email", email, "--password-stdin"],
            stdin,
        )
    };
    let made = create(" Ann@School.TEST", "correct horse battery\n");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let id = String::from_utf8(made.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");

    // Stored lower-case, with an Argon2id hash that verifies; the name defaults to the email.
    let s = store(&data).await;
    let (user, hash) = s
        .user_by_email("ann@school.test")
        .await
        .expect("read")
        .expect("found");
    assert_eq!(
        (user.id.as_str(), user.name.as_str()),
        (id.as_str(), "ann@school.test")
    );
    let hash = hash.expect("a hash");
    assert!(hash.starts_with("$argon2id$"));
    assert!(examkit::password::verify("correct horse battery", &hash));
    // A Windows line end is not part of the password.
    assert!(
        create("bob@school.test", "correct horse battery\r\n")
            .status
            .success()
    );
    let (_, bob) = s
        .user_by_email("bob@school.test")
        .await
        .expect("read")
        .expect("found");
    assert!(examkit::password::verify(
        "correct horse battery",
        &bob.expect("hash")
    ));

    refused(
        &create("not-an-email", "correct horse battery\n"),
        "is not an email address",
    );
    refused(
        &create("a b@school.test", "correct horse battery\n"),
        "is not an email address",
    );
    refused(
        &create("@school.test", "correct horse battery\n"),
        "is not an email address",
    );
    refused(
        &create("carol@school.test", "too short\n"),
        "at least 10 characters",
    );
    refused(&create("carol@school.test", ""), "at least 10 characters");
    refused(
        &create("ANN@school.test", "correct horse battery\n"),
        "already signs in with ann@school.test",
    );
    // The password is never an argument.
    refused(
        &examkit(
            &data,
            &["users", "create", "--email", "carol@school.test"],
            "",
        ),
        "--password-stdin",
    );
    refused(
        &examkit(&data, &["users", "create", "--password-stdin"], "x\n"),
        "--name",
    );
    assert!(
        s.user_by_email("carol@school.test")
            .await
            .expect("read")
            .is_none()
    );
    assert_eq!(s.users().await.expect("users").len(), 2);
}

#[tokio::test]
async fn set_password_changes_a_password_or_gives_an_older_account_its_email() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let old = examkit(&data, &["users", "create", "--name", "Old account"], "");
    assert!(old.status.success());
    let old = String::from_utf8(old.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    let set = |args: &[&str], stdin: &str| {
        let mut all = vec!["users", "set-password", "--password-stdin"];
        all.extend_from_slice(args);
        examkit(&data, &all, stdin)
    };
    // An account made before, with no email, gets one with --user.
    let done = set(
        &["--user", &old, "--email", "old@school.test"],
        "first password!\n",
    );
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let s = store(&data).await;
    let (user, hash) = s
        .user_by_email("old@school.test")
        .await
        .expect("read")
        .expect("found");
    assert_eq!(user.id, old);
    assert!(examkit::password::verify(
        "first password!",
        &hash.expect("hash")
    ));
    // By email alone, the password changes and the account's sessions end.
    let session = examkit::store::app_sessions::AppSession {
        id_hash: "h".into(),
        user_id: old.clone(),
        csrf_token: "t".into(),
        created_at: 0,
        last_seen_at: 0,
        expires_at: i64::MAX,
    };
    s.create_app_session(&session).await.expect("session");
    assert!(
        set(&["--email", "OLD@school.test"], "second password!\n")
            .status
            .success()
    );
    let (_, hash) = s
        .user_by_email("old@school.test")
        .await
        .expect("read")
        .expect("found");
    assert!(examkit::password::verify(
        "second password!",
        &hash.expect("hash")
    ));
    assert!(
        s.app_session("h").await.expect("read").is_none(),
        "sessions ended"
    );

    refused(
        &set(&["--email", "nobody@school.test"], "second password!\n"),
        "no user with email nobody@school.test",
    );
    refused(
        &set(&["--email", "old@school.test"], "short\n"),
        "at least 10 characters",
    );
    refused(
        &set(&["--email", "bad address"], "second password!\n"),
        "is not an email address",
    );
    let other = examkit(&data, &["users", "create", "--name", "Other"], "");
    let other = String::from_utf8(other.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    refused(
        &set(
            &["--user", &other, "--email", "old@school.test"],
            "third password!\n",
        ),
        "another account already signs in with old@school.test",
    );
    refused(
        &set(
            &["--user", "no-such-id", "--email", "new@school.test"],
            "third password!\n",
        ),
        "no user with id no-such-id",
    );
    refused(
        &examkit(
            &data,
            &["users", "set-password", "--email", "old@school.test"],
            "x\n",
        ),
        "--password-stdin",
    );
}
