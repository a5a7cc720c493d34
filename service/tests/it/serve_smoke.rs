//! `examkit serve` as shipped: admin commands make an account and a key, the server starts on a
//! random port, and the README's curl sequence (`examples/curl/import.sh`) runs against it.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn examkit(data_dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("DATABASE_URL")
        .output()
        .expect("examkit runs")
}

fn stdout(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("utf-8")
}

struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The status `GET /v1/me` answers with `key`, through curl.
fn me_status(base: &str, key: &str) -> String {
    let out = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H"])
        .arg(format!("Authorization: Bearer {key}"))
        .arg(format!("{base}/v1/me"))
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn admin_commands_serve_and_the_curl_example() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");

    let user = stdout(&examkit(
        &data,
        &["users", "create", "--name", "Example School"],
    ))
    .trim()
    .to_owned();
    assert!(
        uuid::Uuid::parse_str(&user).is_ok(),
        "users create prints the id: {user}"
    );
    let created = examkit(
        &data,
        &[
            "keys",
            "create",
            "--user",
            &user,
            "--name",
            "curl example",
            "--scopes",
            "marking:import,marking:read",
            "--expires",
            "90d",
        ],
    );
    let secret = stdout(&created).trim().to_owned();
    assert!(
        examkit::auth::is_well_formed(&secret),
        "keys create prints the secret: {secret}"
    );
    assert!(String::from_utf8_lossy(&created.stderr).contains("cannot be shown again"));

    let bad_scope = examkit(
        &data,
        &[
            "keys",
            "create",
            "--user",
            &user,
            "--name",
            "x",
            "--scopes",
            "admin",
            "--expires",
            "30d",
        ],
    );
    assert!(!bad_scope.status.success());
    let bad_expiry = examkit(
        &data,
        &[
            "keys",
            "create",
            "--user",
            &user,
            "--name",
            "x",
            "--scopes",
            "marking:read",
            "--expires",
            "2y",
        ],
    );
    assert_eq!(bad_expiry.status.code(), Some(2));
    let unknown_user = examkit(
        &data,
        &[
            "keys",
            "create",
            "--user",
            "nobody",
            "--name",
            "x",
            "--scopes",
            "marking:read",
            "--expires",
            "30d",
        ],
    );
    assert!(!unknown_user.status.success());

    // Listings never show secrets.
    let users = stdout(&examkit(&data, &["users", "list"]));
    assert!(users.contains("Example School") && users.contains(&user));
    let keys = stdout(&examkit(&data, &["keys", "list"]));
    assert!(!keys.contains(&secret));
    assert!(
        keys.contains(&secret[..14]),
        "the prefix identifies the key: {keys}"
    );
    let key_id = keys
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .expect("a key row")
        .to_owned();

    let mut child = Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--log-format",
            "json",
            "--data-dir",
        ])
        .arg(&data)
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("examkit serve starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout"));
    let mut stderr = child.stderr.take().expect("stderr");
    let served = Served(child);
    let mut line = String::new();
    lines
        .read_line(&mut line)
        .expect("the bound address is printed");
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .expect("listening line")
        .to_owned();

    let script = repo().join("examples/curl/import.sh");
    let run = Command::new("bash")
        .arg(&script)
        .env("EXAMKIT_URL", &base)
        .env("EXAMKIT_KEY", &secret)
        .output()
        .expect("bash runs the example");
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "stdout: {out}\nstderr: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(out.contains("\"valid\":true"), "{out}");
    assert!(out.contains("repeat: identical response"), "{out}");
    assert!(out.contains("\"status\":\"completed\""), "{out}");
    assert!(out.contains("\"name\":\"Example School\""), "{out}");

    // Usage: counts and timings by UTC date, operation and status. The server writes what it
    // recorded every half second, so another process sees it within a second; once the last
    // request's row is there, every earlier one is too.
    let mut usage = String::new();
    for _ in 0..50 {
        usage = stdout(&examkit(&data, &["keys", "usage", "--key", &key_id]));
        if usage.contains("GET /v1/marking/sessions/{id}") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for row in [
        "GET /v1/me",
        "POST /v1/marking/imports ",
        "POST /v1/marking/imports/{id}/assets",
        "POST /v1/marking/imports/{id}/validate",
        "POST /v1/marking/imports/{id}/complete",
        "GET /v1/marking/sessions/{id}",
    ] {
        assert!(usage.contains(row), "{row} in usage:\n{usage}");
    }
    let assets_row = usage
        .lines()
        .find(|l| l.contains("/assets"))
        .expect("assets row");
    let columns: Vec<&str> = assets_row.split_whitespace().collect();
    assert_eq!(
        &columns[3..5],
        ["201", "2"],
        "two uploads answered 201: {assets_row}"
    );

    // Revocation stops the key at once.
    assert!(
        examkit(&data, &["keys", "revoke", "--key", &key_id])
            .status
            .success()
    );
    assert_eq!(me_status(&base, &secret), "401");
    assert!(
        !examkit(&data, &["keys", "revoke", "--key", &key_id])
            .status
            .success(),
        "already revoked"
    );

    // A server stopped with SIGTERM writes the usage it has not written yet before it exits.
    let second = stdout(&examkit(
        &data,
        &[
            "keys",
            "create",
            "--user",
            &user,
            "--name",
            "second",
            "--scopes",
            "marking:read",
            "--expires",
            "30d",
        ],
    ))
    .trim()
    .to_owned();
    for _ in 0..5 {
        assert_eq!(me_status(&base, &second), "200");
    }
    let pid = served.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill runs")
            .success()
    );
    let mut served = served;
    let stopped = served.0.wait().expect("the server exits");
    assert!(stopped.success(), "{stopped:?}");
    let keys = stdout(&examkit(&data, &["keys", "list"]));
    let second_id = keys
        .lines()
        .find(|l| l.contains(&second[..14]))
        .and_then(|l| l.split_whitespace().next())
        .expect("the second key's row")
        .to_owned();
    let usage = stdout(&examkit(&data, &["keys", "usage", "--key", &second_id]));
    let me_row = usage
        .lines()
        .find(|l| l.contains("GET /v1/me"))
        .unwrap_or_else(|| panic!("the five requests are recorded:\n{usage}"));
    assert_eq!(
        &me_row.split_whitespace().collect::<Vec<_>>()[3..5],
        ["200", "5"],
        "{usage}"
    );

    drop(served);
    let mut logs = String::new();
    stderr.read_to_string(&mut logs).expect("logs");
    assert!(
        logs.contains("\"request_id\""),
        "JSON logs carry request ids: {logs}"
    );
    assert!(!logs.contains(&secret[8..]), "keys are never logged");
    assert!(
        !logs.contains("Department marking pipeline"),
        "bodies are never logged"
    );
}

#[test]
fn at_most_twenty_active_keys_per_account() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let user = stdout(&examkit(&data, &["users", "create", "--name", "Keys"]))
        .trim()
        .to_owned();
    let create = |name: &str| {
        examkit(
            &data,
            &[
                "keys",
                "create",
                "--user",
                &user,
                "--name",
                name,
                "--scopes",
                "marking:read",
                "--expires",
                "30d",
            ],
        )
    };
    for i in 0..20 {
        assert!(create(&format!("k{i}")).status.success(), "key {i}");
    }
    let refused = create("k20");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("20 active keys"));
    let keys = stdout(&examkit(&data, &["keys", "list", "--user", &user]));
    let first = keys
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .expect("row")
        .to_owned();
    assert!(
        examkit(&data, &["keys", "revoke", "--key", &first])
            .status
            .success()
    );
    assert!(create("k21").status.success(), "revoking frees a place");
}
