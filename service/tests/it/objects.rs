//! Stored files in an object store: an S3-compatible server the suite starts (moto, through
//! `tests/s3-server.sh`), on SQLite and on PostgreSQL. Uploads and exported PDFs are written as
//! objects named by their SHA-256 and read back byte for byte; byte ranges of a PDF are read from
//! the object (and from the database, without an object store); the sweep deletes only what
//! nothing names; `examkit serve` killed during uploads leaves no row without its object;
//! `examkit assets migrate` killed midway loses nothing and finishes when run again, and moves
//! everything back with `--to database`. A prefix belongs to the first database that uses it: a
//! second database pointed at it refuses to start, to move files there or to sweep it, so it never
//! deletes the first one's files (on S3 and on a directory).

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::marking::{SAMPLE_QUESTIONS, exported_paper, idem, text};
use common::{Db, Server, generous, s3, start, start_with_objects, unique_png};
use examkit::auth::Scope;
use examkit::store::objects::{AssetStoreUrl, Objects, hex_sha256};
use examkit::store::{Durability, Store};
use reqwest::Method;

/// The S3 variants of a case on SQLite and PostgreSQL.
macro_rules! with_s3 {
    ($($case:ident),+ $(,)?) => {
        $(
            mod $case {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(
                    not(examkit_s3_tests),
                    ignore = "no S3 server: run the tests through tests/s3-server.sh"
                )]
                async fn sqlite() {
                    super::$case(super::common::Db::Sqlite).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(
                    not(all(examkit_s3_tests, examkit_postgres_tests)),
                    ignore = "needs an S3 server (tests/s3-server.sh) and PostgreSQL (EXAMKIT_TEST_POSTGRES_URL)"
                )]
                async fn postgres() {
                    super::$case(super::common::Db::Postgres).await
                }
            }
        )+
    };
}

with_s3!(
    exports_and_uploads_are_objects_read_whole_and_in_ranges,
    the_sweep_deletes_only_what_nothing_names,
    a_writer_waits_while_a_sweep_deletes_its_object,
    serve_killed_during_uploads_leaves_no_row_without_its_object,
    a_killed_migration_loses_nothing_and_finishes_when_run_again,
    a_second_database_on_a_bucket_prefix_is_refused_and_sweeps_nothing,
);
on_both!(
    byte_ranges_of_a_pdf_in_the_database,
    a_second_database_on_a_directory_is_refused_and_sweeps_nothing,
);

async fn import(s: &Server, key: &str) -> String {
    let made = s
        .post_json(
            "/v1/marking/imports",
            key,
            Some(&idem()),
            br#"{"title":"Objects"}"#,
        )
        .await;
    assert_eq!(made.status, 201, "{}", text(&made));
    made.json()["session"]["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

async fn upload_png(s: &Server, key: &str, session: &str, bytes: Vec<u8>) -> String {
    let sent = s
        .send(
            Method::POST,
            &format!("/v1/marking/imports/{session}/assets?kind=work&name=page.png"),
            Some(key),
            &[("content-type", "image/png")],
            Some(bytes),
        )
        .await;
    assert_eq!(sent.status, 201, "{}", text(&sent));
    sent.json()["asset"]["id"].as_str().expect("id").to_owned()
}

/// Where each stored file of a kind is: `(in the database, naming objects)`.
async fn places(store: &Store, table: &str, bytes: &str, object: &str) -> (i64, i64) {
    let row: (i64, i64) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT COUNT({bytes}), COUNT({object}) FROM {table}"
    )))
    .fetch_one(store.pool())
    .await
    .expect("count");
    row
}

/// Every asset's bytes read through `store` match the SHA-256 recorded at upload; returns how
/// many there are.
async fn every_asset_reads_back(store: &Store) -> usize {
    let assets: Vec<(String, String)> = sqlx::query_as("SELECT id, sha256 FROM assets")
        .fetch_all(store.pool())
        .await
        .expect("assets");
    for (id, sha256) in &assets {
        let bytes = store
            .asset_blob(id)
            .await
            .unwrap_or_else(|e| panic!("asset {id} reads: {e}"))
            .expect("every asset has bytes");
        assert_eq!(&hex_sha256(&bytes), sha256, "asset {id}");
    }
    assets.len()
}

async fn range(s: &Server, key: &str, path: &str, range: &str) -> common::Resp {
    s.send(Method::GET, path, Some(key), &[("range", range)], None)
        .await
}

/// Whole downloads, one range, a suffix, an open end, a range past the end (416) and headers that
/// are ignored, for a revision's PDFs wherever they are kept.
async fn check_ranges(s: &Server, key: &str, paper: &str, whole: &[u8]) {
    let path = format!("/v1/papers/{paper}/revisions/1/exports/question-paper");
    let size = whole.len();
    let full = s.get(&path, key).await;
    assert_eq!(full.status, 200);
    assert_eq!(full.body, whole);
    assert_eq!(full.header("accept-ranges"), Some("bytes"));

    let head = range(s, key, &path, "bytes=0-7").await;
    assert_eq!(head.status, 206, "{}", text(&head));
    assert_eq!(head.body, &whole[..8]);
    assert!(head.body.starts_with(b"%PDF-"));
    assert_eq!(
        head.header("content-range"),
        Some(format!("bytes 0-7/{size}").as_str())
    );
    assert_eq!(head.header("content-type"), Some("application/pdf"));

    let tail = range(s, key, &path, "bytes=-100").await;
    assert_eq!(tail.status, 206);
    assert_eq!(tail.body, &whole[size - 100..]);
    assert_eq!(
        tail.header("content-range"),
        Some(format!("bytes {}-{}/{size}", size - 100, size - 1).as_str())
    );

    let middle = range(s, key, &path, &format!("bytes=1000-{}", size * 2)).await;
    assert_eq!(middle.status, 206);
    assert_eq!(middle.body, &whole[1000..]);

    let past = range(s, key, &path, &format!("bytes={size}-")).await;
    past.assert_error(416, "range_not_satisfiable");
    assert_eq!(
        past.header("content-range"),
        Some(format!("bytes */{size}").as_str())
    );

    for ignored in ["bytes=0-1,5-9", "items=0-10", "bytes=9-2", "bytes=x-"] {
        let resp = range(s, key, &path, ignored).await;
        assert_eq!(resp.status, 200, "{ignored}");
        assert_eq!(resp.body, whole, "{ignored}");
    }
}

async fn exports_and_uploads_are_objects_read_whole_and_in_ranges(db: Db) {
    let bucket = s3::bucket().await;
    let s = start_with_objects(db, generous(), &bucket, |_| {}).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Objects").await;
    let key = s.key(&user, Scope::ALL).await;
    let exported = exported_paper(&s, &key, &SAMPLE_QUESTIONS).await;
    // Both PDFs are objects named by their digest; the rows hold no bytes.
    assert_eq!(
        places(
            &s.store,
            "paper_exports",
            "question_paper",
            "question_paper_object"
        )
        .await,
        (0, 1)
    );
    assert_eq!(
        places(
            &s.store,
            "paper_exports",
            "mark_scheme",
            "mark_scheme_object"
        )
        .await,
        (0, 1)
    );
    let named: (String, String) =
        sqlx::query_as("SELECT question_paper_object, mark_scheme_object FROM paper_exports")
            .fetch_one(s.store.pool())
            .await
            .expect("names");
    assert_eq!(named.0, hex_sha256(&exported.question_paper));
    assert_eq!(named.1, hex_sha256(&exported.mark_scheme));
    let objects = Objects::open(&bucket).expect("open").expect("a store");
    assert_eq!(
        objects.get(&named.0).await.expect("the object is there"),
        exported.question_paper
    );
    check_ranges(&s, &key, &exported.id, &exported.question_paper).await;

    // Uploads: the same, and two uploads of the same bytes share one object.
    let session = import(&s, &key).await;
    let png = unique_png(1, 1, false);
    let first = upload_png(&s, &key, &session, png.clone()).await;
    let second = upload_png(&s, &key, &session, png.clone()).await;
    assert_ne!(first, second);
    assert_eq!(
        places(&s.store, "asset_blobs", "bytes", "object").await,
        (0, 2)
    );
    assert_eq!(
        s.store.asset_blob(&first).await.expect("reads"),
        Some(png.clone())
    );
    let listed = objects.list().await.expect("list");
    assert_eq!(listed.len(), 3, "two PDFs and one shared upload");
    assert!(listed.iter().any(|o| o.sha256 == hex_sha256(&png)));
    assert_eq!(every_asset_reads_back(&s.store).await, 2);

    // A class set's PDF is an object too, served whole and in ranges.
    let made = s
        .post_json(
            "/v1/class-sets",
            &key,
            Some("objects-class-set"),
            serde_json::json!({"paperId": exported.id, "revision": 1, "copies": 2})
                .to_string()
                .as_bytes(),
        )
        .await;
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let set = made.json()["classSet"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    assert_eq!(
        places(&s.store, "class_sets", "pdf", "pdf_object").await,
        (0, 1)
    );
    let (object,): (String,) = sqlx::query_as("SELECT pdf_object FROM class_sets")
        .fetch_one(s.store.pool())
        .await
        .expect("the name");
    let whole = s.get(&format!("/v1/class-sets/{set}/export"), &key).await;
    assert_eq!(whole.status, 200);
    assert_eq!(objects.get(&object).await.expect("the object"), whole.body);
    let part = range(
        &s,
        &key,
        &format!("/v1/class-sets/{set}/export"),
        "bytes=-100",
    )
    .await;
    assert_eq!(part.status, 206);
    assert_eq!(part.body, whole.body[whole.body.len() - 100..]);

    // An object changed behind the service's back is refused, not served.
    objects
        .put(
            &named.0,
            bytes::Bytes::from_static(b"%PDF-1.7 something else"),
        )
        .await
        .expect("overwrite");
    let resp = s
        .get(
            &format!(
                "/v1/papers/{}/revisions/1/exports/question-paper",
                exported.id
            ),
            &key,
        )
        .await;
    resp.assert_error(500, "internal_error");
}

async fn byte_ranges_of_a_pdf_in_the_database(db: Db) {
    let s = start(db, generous()).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Ranges").await;
    let key = s.key(&user, Scope::ALL).await;
    let exported = exported_paper(&s, &key, &SAMPLE_QUESTIONS).await;
    assert_eq!(
        places(
            &s.store,
            "paper_exports",
            "question_paper",
            "question_paper_object"
        )
        .await,
        (1, 0)
    );
    check_ranges(&s, &key, &exported.id, &exported.question_paper).await;
}

async fn the_sweep_deletes_only_what_nothing_names(db: Db) {
    let bucket = s3::bucket().await;
    let s = start_with_objects(db, generous(), &bucket, |_| {}).await;
    let user = s.user("Sweep").await;
    let key = s.key(&user, Scope::ALL).await;
    let session = import(&s, &key).await;
    let named = unique_png(2, 1, false);
    let asset = upload_png(&s, &key, &session, named.clone()).await;
    // An object claimed and written but never named (an upload stopped before its row), and one
    // the database has no record of.
    let unnamed = s
        .store
        .keep(b"claimed, never named".to_vec())
        .await
        .expect("kept");
    let unnamed = unnamed.object().expect("an object").to_owned();
    let objects = s.store.objects().expect("configured").clone();
    let untracked = hex_sha256(b"unknown to the database");
    objects
        .put(
            &untracked,
            bytes::Bytes::from_static(b"unknown to the database"),
        )
        .await
        .expect("put");
    assert_eq!(objects.list().await.expect("list").len(), 3);

    // Within the grace period nothing goes.
    let hour_ago = examkit::store::now_ms() - 3_600_000;
    let swept = s.store.sweep_objects(hour_ago).await.expect("sweep");
    assert_eq!(swept, examkit::store::objects::Swept::default());
    assert_eq!(objects.list().await.expect("list").len(), 3);

    // After it, the unnamed and the untracked go; the named stays and is served.
    let later = examkit::store::now_ms() + 1_000;
    let swept = s.store.sweep_objects(later).await.expect("sweep");
    assert_eq!(
        (swept.unreferenced, swept.untracked, swept.resumed),
        (1, 1, 0)
    );
    let left: Vec<String> = objects
        .list()
        .await
        .expect("list")
        .into_iter()
        .map(|o| o.sha256)
        .collect();
    assert_eq!(left, vec![hex_sha256(&named)]);
    assert!(!left.contains(&unnamed) && !left.contains(&untracked));
    assert_eq!(
        s.store.asset_blob(&asset).await.expect("reads"),
        Some(named)
    );
    let claims: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM stored_objects")
        .fetch_one(s.store.pool())
        .await
        .expect("count");
    assert_eq!(claims, 1, "the claims of deleted objects go with them");

    // A deletion a stopped sweep left half done is finished by the next.
    let stale = s.store.keep(b"left deleting".to_vec()).await.expect("kept");
    let stale = stale.object().expect("object").to_owned();
    s.store
        .execute_write(
            Durability::Saved,
            sqlx::query(
                "UPDATE stored_objects SET state = 'deleting', touched_at = 0 WHERE sha256 = $1",
            )
            .bind(&stale),
        )
        .await
        .expect("mark");
    let swept = s.store.sweep_objects(hour_ago).await.expect("sweep");
    assert_eq!(swept.resumed, 1);
    assert_eq!(objects.size(&stale).await.expect("head"), None);
}

async fn a_writer_waits_while_a_sweep_deletes_its_object(db: Db) {
    let bucket = s3::bucket().await;
    let s = start_with_objects(db, generous(), &bucket, |_| {}).await;
    let bytes = b"wanted again while being deleted".to_vec();
    let sha = hex_sha256(&bytes);
    s.store.keep(bytes.clone()).await.expect("kept");
    // A sweep has marked the claim and is about to delete the object.
    s.store
        .execute_write(
            Durability::Saved,
            sqlx::query("UPDATE stored_objects SET state = 'deleting' WHERE sha256 = $1")
                .bind(&sha),
        )
        .await
        .expect("mark");
    let store = s.store.clone();
    let writer = tokio::spawn(async move { store.keep(bytes).await });
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!writer.is_finished(), "the writer waits for the sweep");
    // The sweep finishes: object, then claim.
    let objects = s.store.objects().expect("configured").clone();
    objects.delete(&sha).await.expect("delete");
    s.store
        .execute_write(
            Durability::Saved,
            sqlx::query("DELETE FROM stored_objects WHERE sha256 = $1").bind(&sha),
        )
        .await
        .expect("unclaim");
    let kept = tokio::time::timeout(Duration::from_secs(10), writer)
        .await
        .expect("the writer goes on")
        .expect("joined")
        .expect("kept");
    assert_eq!(kept.object(), Some(sha.as_str()));
    assert!(
        objects.get(&sha).await.is_ok(),
        "written again after the sweep"
    );
}

fn examkit() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_examkit"));
    command
        .env_remove("DATABASE_URL")
        .env_remove("EXAMKIT_ASSET_STORE");
    command
}

/// `examkit serve` as a child process; killed on drop.
struct Child {
    child: std::process::Child,
    base: String,
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(database: &str, store: &AssetStoreUrl) -> Child {
    use std::io::BufRead;
    let mut child = examkit()
        .args(["serve", "--listen", "127.0.0.1:0", "--rate-limits", "off"])
        .args(["--sample-bank", "off", "--automated-marking", "off"])
        .args(["--database", database])
        .args(["--asset-store", &store.to_string()])
        .env("EXAMKIT_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("examkit serve starts");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the bound address is printed");
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("listening line, got {line:?}"))
        .to_owned();
    Child { child, base }
}

async fn serve_killed_during_uploads_leaves_no_row_without_its_object(db: Db) {
    let bucket = s3::bucket().await;
    let s = start(db, generous()).await;
    let user = s.user("Killed").await;
    let key = s.key(&user, Scope::ALL).await;
    let child = serve(&s.database_url, &bucket);
    let client = examkit::tls::client();
    let session = {
        let made = client
            .post(format!("{}/v1/marking/imports", child.base))
            .bearer_auth(&key)
            .header("idempotency-key", idem())
            .header("content-type", "application/json")
            .body(r#"{"title":"Killed"}"#)
            .send()
            .await
            .expect("sent");
        assert_eq!(made.status(), 201);
        let body: serde_json::Value = made.json().await.expect("json");
        body["session"]["id"].as_str().expect("id").to_owned()
    };
    // Eight clients upload until the server is killed under them.
    let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for c in 0..8u8 {
        let (client, base, key, session, acknowledged) = (
            client.clone(),
            child.base.clone(),
            key.clone(),
            session.clone(),
            acknowledged.clone(),
        );
        tasks.push(tokio::spawn(async move {
            for n in 0..12u16 {
                let png = unique_png(c, n, true);
                let sent = client
                    .post(format!(
                        "{base}/v1/marking/imports/{session}/assets?kind=work&name=p.png"
                    ))
                    .bearer_auth(&key)
                    .header("content-type", "image/png")
                    .body(png.clone())
                    .send()
                    .await;
                match sent {
                    Ok(resp) if resp.status() == 201 => {
                        let body: serde_json::Value = resp.json().await.expect("json");
                        let id = body["asset"]["id"].as_str().expect("id").to_owned();
                        acknowledged
                            .lock()
                            .expect("lock")
                            .push((id, hex_sha256(&png)));
                    }
                    Ok(resp) => panic!("upload refused: {}", resp.status()),
                    Err(_) => return, // the server is gone
                }
            }
        }));
    }
    // Kill it once some uploads are saved and others are on their way.
    let deadline = Instant::now() + Duration::from_secs(60);
    while acknowledged.lock().expect("lock").len() < 6 {
        assert!(Instant::now() < deadline, "uploads are saved");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(child);
    for task in tasks {
        task.await.expect("client");
    }
    let acknowledged = acknowledged.lock().expect("lock").clone();
    assert!(acknowledged.len() < 96, "killed before every upload ended");

    // Every row names an object that is there, with its bytes; every acknowledged upload is kept.
    let store = Store::open(&s.database_url)
        .await
        .expect("reopen")
        .with_objects(Objects::open(&bucket).expect("open"));
    let rows = every_asset_reads_back(&store).await;
    assert!(rows >= acknowledged.len());
    for (id, sha256) in &acknowledged {
        let bytes = store.asset_blob(id).await.expect("reads").expect("kept");
        assert_eq!(&hex_sha256(&bytes), sha256);
    }
    // What the kill left unnamed is swept; what rows name stays.
    store
        .sweep_objects(examkit::store::now_ms() + 1_000)
        .await
        .expect("sweep");
    let named: std::collections::BTreeSet<String> =
        sqlx::query_scalar("SELECT object FROM asset_blobs")
            .fetch_all(store.pool())
            .await
            .expect("names")
            .into_iter()
            .collect();
    let left: std::collections::BTreeSet<String> = store
        .objects()
        .expect("configured")
        .list()
        .await
        .expect("list")
        .into_iter()
        .map(|o| o.sha256)
        .collect();
    assert_eq!(left, named);
    assert_eq!(every_asset_reads_back(&store).await, rows);
}

async fn a_killed_migration_loses_nothing_and_finishes_when_run_again(db: Db) {
    let bucket = s3::bucket().await;
    let s = start(db, generous()).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Migrated").await;
    let key = s.key(&user, Scope::ALL).await;
    let exported = exported_paper(&s, &key, &SAMPLE_QUESTIONS).await;
    let session = import(&s, &key).await;
    let total = 60;
    for n in 0..total {
        upload_png(&s, &key, &session, unique_png(9, n, true)).await;
    }
    assert_eq!(
        places(&s.store, "asset_blobs", "bytes", "object").await,
        (i64::from(total), 0)
    );
    let store_flag = bucket.to_string();
    let migrate = |to: &str, from: Option<&str>| {
        let mut command = examkit();
        command
            .args([
                "assets",
                "migrate",
                "--to",
                to,
                "--database",
                &s.database_url,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(from) = from {
            command.args(["--asset-store", from]);
        }
        command
    };

    // Killed once some files have moved.
    let mut child = migrate(&store_flag, None).spawn().expect("starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, moved) = places(&s.store, "asset_blobs", "bytes", "object").await;
        if moved >= 3 {
            break;
        }
        assert!(Instant::now() < deadline, "the migration moves files");
        assert!(child.try_wait().expect("wait").is_none(), "still running");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let (inline, moved) = places(&s.store, "asset_blobs", "bytes", "object").await;
    assert!(
        moved < i64::from(total),
        "killed midway ({moved} of {total} moved)"
    );
    assert_eq!(inline + moved, i64::from(total));
    // Half moved: every file still reads, from wherever it is now.
    let reader = Store::open(&s.database_url)
        .await
        .expect("reopen")
        .with_objects(Objects::open(&bucket).expect("open"));
    assert_eq!(every_asset_reads_back(&reader).await, usize::from(total));

    // Run again: it finishes, exports and all.
    let done = migrate(&store_flag, None).output().expect("runs");
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let said = String::from_utf8_lossy(&done.stdout);
    assert!(said.contains("done: 0 files in the database"), "{said}");
    assert!(
        said.contains(&format!("--asset-store {store_flag}")),
        "{said}"
    );
    assert_eq!(
        places(&s.store, "asset_blobs", "bytes", "object").await,
        (0, i64::from(total))
    );
    assert_eq!(
        places(
            &s.store,
            "paper_exports",
            "question_paper",
            "question_paper_object"
        )
        .await,
        (0, 1)
    );
    assert_eq!(every_asset_reads_back(&reader).await, usize::from(total));
    let pdf = reader
        .paper_export(
            &user,
            &exported.id,
            1,
            examkit::store::papers::ExportKind::MarkScheme,
        )
        .await
        .expect("reads")
        .expect("kept");
    assert_eq!(pdf, exported.mark_scheme);

    // Moving back needs to know where the objects are.
    let refused = migrate("database", None).output().expect("runs");
    assert_eq!(refused.status.code(), Some(1));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("name it with --asset-store"), "{said}");
    let back = migrate("database", Some(&store_flag))
        .output()
        .expect("runs");
    assert!(
        back.status.success(),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    assert_eq!(
        places(&s.store, "asset_blobs", "bytes", "object").await,
        (i64::from(total), 0)
    );
    assert_eq!(every_asset_reads_back(&s.store).await, usize::from(total));
    let pdf = s
        .store
        .paper_export(
            &user,
            &exported.id,
            1,
            examkit::store::papers::ExportKind::QuestionPaper,
        )
        .await
        .expect("reads")
        .expect("kept");
    assert_eq!(pdf, exported.question_paper);
    // The objects nothing names any more are swept.
    let swept = reader
        .sweep_objects(examkit::store::now_ms() + 1_000)
        .await
        .expect("sweep");
    assert_eq!(swept.unreferenced, u64::from(total) + 2);
    assert!(
        reader
            .objects()
            .expect("s3")
            .list()
            .await
            .expect("list")
            .is_empty()
    );
}

#[test]
fn asset_store_flags_are_checked() {
    for (args, says) in [
        (
            vec!["assets", "status", "--asset-store", "gs://bucket"],
            "--asset-store",
        ),
        (
            vec!["assets", "status", "--asset-store", "file://relative"],
            "absolute directory",
        ),
        (vec!["assets", "migrate", "--to", "s3://UPPER"], "--to"),
        (vec!["assets", "migrate"], "--to"),
        (
            vec!["serve", "--asset-store", "s3://a"],
            "not an S3 bucket name",
        ),
    ] {
        let output = examkit().args(&args).output().expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(said.contains(says), "{args:?}: {said}");
    }
}

#[test]
fn sweeping_without_an_object_store_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let output = examkit()
        .args(["assets", "sweep", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("no object store is configured"), "{said}");
}

#[test]
fn status_counts_files_in_a_directory_store() {
    let dir = tempfile::tempdir().expect("dir");
    let store = format!("file://{}/objects", dir.path().display());
    let output = examkit()
        .args(["assets", "status", "--data-dir"])
        .arg(dir.path())
        .args(["--asset-store", &store])
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains(&format!("asset store: {store}")), "{said}");
    assert!(said.contains("files in the database: 0"), "{said}");
    assert!(dir.path().join("objects").is_dir());
}

async fn a_second_database_on_a_bucket_prefix_is_refused_and_sweeps_nothing(db: Db) {
    let bucket = s3::bucket().await;
    two_databases_on_one_store(db, &bucket).await;
}

async fn a_second_database_on_a_directory_is_refused_and_sweeps_nothing(db: Db) {
    let dir = tempfile::tempdir().expect("dir");
    two_databases_on_one_store(db, &AssetStoreUrl::File(dir.path().join("shared"))).await;
}

/// `examkit serve` on `database` and `store`: its exit status and standard error when it refuses
/// to start (within a minute); a panic if it starts.
fn serve_refused(database: &str, store: &AssetStoreUrl) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = examkit()
        .args(["serve", "--listen", "127.0.0.1:0", "--sample-bank", "off"])
        .args(["--automated-marking", "off", "--database", database])
        .args(["--asset-store", &store.to_string()])
        .env("EXAMKIT_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("examkit serve runs");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("examkit serve started on a store bound to another database");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut said = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut said)
        .expect("read");
    (status.code(), said)
}

/// Database A uses `store` first; database B, pointed at the same store, refuses to start, to move
/// its files there and to sweep it, and A's files all stay.
async fn two_databases_on_one_store(db: Db, store: &AssetStoreUrl) {
    let a = start_with_objects(db, generous(), store, |_| {}).await;
    let user = a.user("First").await;
    let key = a.key(&user, Scope::ALL).await;
    let session = import(&a, &key).await;
    let kept = unique_png(4, 1, false);
    let asset = upload_png(&a, &key, &session, kept.clone()).await;
    // A's first command with the store binds it.
    let status = examkit()
        .args(["assets", "status", "--database", &a.database_url])
        .args(["--asset-store", &store.to_string()])
        .output()
        .expect("runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let first = a.store.deployment_id().await.expect("A's id");
    let objects = Objects::open(store).expect("open").expect("a store");
    assert_eq!(objects.bound_to().await.expect("read"), Some(first.clone()));
    let a_objects: Vec<String> = objects
        .list()
        .await
        .expect("list")
        .into_iter()
        .map(|o| o.sha256)
        .collect();
    assert_eq!(a_objects, vec![hex_sha256(&kept)]);

    // Database B, with a file of its own in the database.
    let dir = tempfile::tempdir().expect("dir");
    let b_url = common::fresh_database(db, dir.path()).await;
    let b = common::start_on(&b_url, generous()).await;
    let b_user = b.user("Second").await;
    let b_key = b.key(&b_user, Scope::ALL).await;
    let b_session = import(&b, &b_key).await;
    upload_png(&b, &b_key, &b_session, unique_png(4, 2, false)).await;
    let second = b.store.deployment_id().await.expect("B's id");
    assert_ne!(first, second);
    assert_eq!(
        b.store.deployment_id().await.expect("again"),
        second,
        "stable"
    );

    let (code, said) = serve_refused(&b_url, store);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains(&first) && said.contains(&second),
        "both ids: {said}"
    );
    assert!(
        said.contains("belongs to another examkit database"),
        "{said}"
    );
    let migrate = examkit()
        .args(["assets", "migrate", "--to", &store.to_string()])
        .args(["--database", &b_url])
        .output()
        .expect("runs");
    assert_eq!(migrate.status.code(), Some(1));
    let said = String::from_utf8_lossy(&migrate.stderr);
    assert!(said.contains(&first) && said.contains(&second), "{said}");
    assert_eq!(
        places(&b.store, "asset_blobs", "bytes", "object").await,
        (1, 0),
        "B's file stays in its database"
    );

    // B's store opened without the start-up check: its sweep refuses before deleting anything,
    // although it has no claim for A's object and the grace period is over.
    let b_store = Store::open(&b_url)
        .await
        .expect("open")
        .with_objects(Objects::open(store).expect("open"));
    let refused = b_store
        .sweep_objects(examkit::store::now_ms() + 1_000)
        .await
        .expect_err("a sweep of another database's store");
    match refused {
        examkit::store::StoreError::ForeignObjects { ours, theirs, .. } => {
            assert_eq!((ours, theirs), (second.clone(), first.clone()));
        }
        other => panic!("{other}"),
    }
    let left: Vec<String> = objects
        .list()
        .await
        .expect("list")
        .into_iter()
        .map(|o| o.sha256)
        .collect();
    assert_eq!(left, a_objects, "A's files are all there");
    assert_eq!(a.store.asset_blob(&asset).await.expect("reads"), Some(kept));
    assert_eq!(objects.bound_to().await.expect("read"), Some(first));
    // A sweeps its own store as before.
    a.store
        .sweep_objects(examkit::store::now_ms() + 1_000)
        .await
        .expect("A's sweep");
    assert_eq!(objects.list().await.expect("list").len(), 1);
}
