//! A real `examkit` HTTP server on 127.0.0.1 (random port) over SQLite or PostgreSQL, and helpers.
#![allow(dead_code)]

pub mod marking;
pub mod provider;
pub mod s3;

use std::sync::Arc;

use examkit::auth::{Scope, generate_key};
use examkit::server::AppState;
use examkit::store::Store;
use examkit::store::rate::Limits;
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::Value;
use sqlx::Connection;

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// Limits high enough that tests not about rate limits never meet them.
pub fn generous() -> Limits {
    Limits {
        key_per_minute: 1_000_000,
        account_per_minute: 1_000_000,
        key_per_day: 1_000_000,
        account_per_day: 1_000_000,
        key_writes_per_minute: 1_000_000,
        account_writes_per_minute: 1_000_000,
    }
}

pub struct Server {
    pub base: String,
    pub store: Store,
    pub client: reqwest::Client,
    pub database_url: String,
    _dir: tempfile::TempDir,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

fn replace_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let cut = base.rfind('/').expect("a postgres URL has a path");
    format!("{}/{name}{query}", &base[..cut])
}

/// Why a PostgreSQL test is ignored: the tests were built without `EXAMKIT_TEST_POSTGRES_URL`
/// (see `build.rs`). A test outside [`on_both!`] that needs PostgreSQL carries
/// `#[cfg_attr(not(examkit_postgres_tests), ignore = "…")]` with this text (the attribute takes
/// only a literal).
pub const POSTGRES_NOT_CONFIGURED: &str =
    "PostgreSQL not configured: set EXAMKIT_TEST_POSTGRES_URL";

/// A fresh database URL for one test: an SQLite file in `dir`, or a new PostgreSQL database made
/// through `EXAMKIT_TEST_POSTGRES_URL`.
///
/// Panics when PostgreSQL is asked for and `EXAMKIT_TEST_POSTGRES_URL` is not set (PostgreSQL
/// variants are ignored then, unless run with `--ignored`), or when the database cannot be made:
/// a PostgreSQL test never passes without having run.
pub async fn fresh_database(db: Db, dir: &std::path::Path) -> String {
    match db {
        Db::Sqlite => format!("sqlite://{}/examkit.db?mode=rwc", dir.display()),
        Db::Postgres => {
            let Ok(admin) = std::env::var("EXAMKIT_TEST_POSTGRES_URL") else {
                assert!(
                    std::env::var_os("EXAMKIT_REQUIRE_POSTGRES").is_none(),
                    "EXAMKIT_REQUIRE_POSTGRES is set but EXAMKIT_TEST_POSTGRES_URL is not"
                );
                panic!(
                    "{POSTGRES_NOT_CONFIGURED} (the PostgreSQL variants are ignored when the \
                     tests are built without it)"
                );
            };
            sqlx::any::install_default_drivers();
            let name = format!("examkit_test_{}", uuid::Uuid::new_v4().simple());
            let mut conn = sqlx::AnyConnection::connect(&admin)
                .await
                .expect("connect to PostgreSQL");
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut conn)
                .await
                .expect("create a test database");
            replace_database(&admin, &name)
        }
    }
}

/// The page processes the test servers and workers read files in, as `serve` and `worker` do:
/// children of the `examkit` binary under the default budgets, shared by a test process.
pub fn pages() -> examkit::untrusted::Pages {
    static PAGES: std::sync::OnceLock<examkit::untrusted::Pages> = std::sync::OnceLock::new();
    PAGES
        .get_or_init(|| {
            examkit::untrusted::Pages::isolated(
                std::path::PathBuf::from(env!("CARGO_BIN_EXE_examkit")),
                examkit::untrusted::Budgets::default(),
            )
        })
        .clone()
}

pub async fn start(db: Db, limits: Limits) -> Server {
    start_with(db, limits, |_| {}).await
}

/// A server whose state `adjust` changes first (PDF export off, another paper limit…).
pub async fn start_with(db: Db, limits: Limits, adjust: impl FnOnce(&mut AppState)) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = fresh_database(db, dir.path()).await;
    serve_with(url, dir, limits, adjust).await
}

/// A second server on an existing database.
pub async fn start_on(url: &str, limits: Limits) -> Server {
    serve(
        url.to_owned(),
        tempfile::tempdir().expect("temp dir"),
        limits,
    )
    .await
}

async fn serve(url: String, dir: tempfile::TempDir, limits: Limits) -> Server {
    serve_with(url, dir, limits, |_| {}).await
}

/// A server whose stored files go to `objects` (see `s3::bucket`), with `adjust` as in
/// [`start_with`].
pub async fn start_with_objects(
    db: Db,
    limits: Limits,
    objects: &examkit::store::objects::AssetStoreUrl,
    adjust: impl FnOnce(&mut AppState),
) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = fresh_database(db, dir.path()).await;
    let objects = examkit::store::objects::Objects::open(objects).expect("open the object store");
    serve_on(url, dir, limits, objects, adjust).await
}

async fn serve_with(
    url: String,
    dir: tempfile::TempDir,
    limits: Limits,
    adjust: impl FnOnce(&mut AppState),
) -> Server {
    serve_on(url, dir, limits, None, adjust).await
}

async fn serve_on(
    url: String,
    dir: tempfile::TempDir,
    limits: Limits,
    objects: Option<examkit::store::objects::Objects>,
    adjust: impl FnOnce(&mut AppState),
) -> Server {
    let store = Store::open(&url)
        .await
        .expect("open the store")
        .with_objects(objects);
    let mut state = AppState::new(store.clone(), limits);
    state.marking.pages = pages();
    adjust(&mut state);
    let state = Arc::new(state);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr, server) =
        examkit::server::bind(state, "127.0.0.1:0".parse().expect("addr"), async move {
            let _ = rx.await;
        })
        .await
        .expect("bind");
    tokio::spawn(server);
    Server {
        base: format!("http://{addr}"),
        store,
        client: examkit::tls::client(),
        database_url: url,
        _dir: dir,
        shutdown: Some(tx),
    }
}

pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts an error response: status, code, and the one error shape with the request id.
    pub fn assert_error(&self, status: u16, code: &str) -> Value {
        assert_eq!(
            self.status,
            status,
            "body: {}",
            String::from_utf8_lossy(&self.body)
        );
        let body = self.json();
        assert_eq!(body["error"]["code"], code, "body: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "message: {body}"
        );
        let id = self
            .header("x-request-id")
            .expect("X-Request-Id on every response");
        assert_eq!(body["requestId"], id);
        assert_eq!(self.header("content-type"), Some("application/json"));
        body
    }
}

impl Server {
    /// The server's data directory (the SQLite database lives here).
    pub fn data_dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    pub async fn user(&self, name: &str) -> String {
        self.store
            .create_user(name, true, false)
            .await
            .expect("create user")
            .id
    }

    pub async fn key(&self, user: &str, scopes: &[Scope]) -> String {
        self.key_expiring(user, scopes, examkit::store::now_ms() + 30 * 86_400_000)
            .await
            .0
    }

    /// A key and its id.
    pub async fn key_expiring(
        &self,
        user: &str,
        scopes: &[Scope],
        expires_at: i64,
    ) -> (String, String) {
        let new = generate_key().expect("randomness");
        let key = self
            .store
            .create_key(
                user,
                "test",
                &new.prefix,
                &new.fingerprint,
                scopes,
                expires_at,
            )
            .await
            .expect("create key");
        (new.secret, key.id)
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Resp {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(key) = key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.expect("body read").to_vec();
        let resp = Resp {
            status,
            headers,
            body,
        };
        assert!(
            resp.header("x-request-id")
                .is_some_and(|id| id.starts_with("req_")),
            "X-Request-Id on {path}"
        );
        resp
    }

    pub async fn get(&self, path: &str, key: &str) -> Resp {
        self.send(Method::GET, path, Some(key), &[], None).await
    }

    pub async fn post_json(&self, path: &str, key: &str, idem: Option<&str>, body: &[u8]) -> Resp {
        let mut headers = vec![("content-type", "application/json")];
        if let Some(idem) = idem {
            headers.push(("idempotency-key", idem));
        }
        self.send(Method::POST, path, Some(key), &headers, Some(body.to_vec()))
            .await
    }

    /// Creates an import and returns its id.
    pub async fn import(&self, key: &str, title: &str) -> String {
        self.create_session(key, "/v1/marking/imports", title).await
    }

    /// Creates a session for automated marking and returns its id.
    pub async fn automated_session(&self, key: &str, title: &str) -> String {
        self.create_session(key, "/v1/marking/sessions", title)
            .await
    }

    async fn create_session(&self, key: &str, route: &str, title: &str) -> String {
        let idem = format!("create-{}", uuid::Uuid::new_v4().simple());
        let resp = self
            .post_json(
                route,
                key,
                Some(&idem),
                format!(r#"{{"title":"{title}"}}"#).as_bytes(),
            )
            .await;
        assert_eq!(resp.status, 201, "{}", String::from_utf8_lossy(&resp.body));
        resp.json()["session"]["id"]
            .as_str()
            .expect("session id")
            .to_owned()
    }

    pub async fn upload(
        &self,
        key: &str,
        import: &str,
        kind: &str,
        name: &str,
        content_type: &str,
        bytes: Vec<u8>,
    ) -> Resp {
        let path = format!("/v1/marking/imports/{import}/assets?kind={kind}&name={name}");
        self.send(
            Method::POST,
            &path,
            Some(key),
            &[("content-type", content_type)],
            Some(bytes),
        )
        .await
    }

    /// Creates an import with a 6-page work PDF and a 4-page scheme PDF; returns the import id and
    /// the example submission rewritten to use the uploaded asset ids.
    pub async fn import_with_example(&self, key: &str) -> (String, String, String, String) {
        let import = self.import(key, "A-level pure paper").await;
        let work = self
            .upload(
                key,
                &import,
                "work",
                "script.pdf",
                "application/pdf",
                examkit::inspect::blank_pdf(6),
            )
            .await;
        assert_eq!(work.status, 201, "{}", String::from_utf8_lossy(&work.body));
        let scheme = self
            .upload(
                key,
                &import,
                "scheme",
                "scheme.pdf",
                "application/pdf",
                examkit::inspect::blank_pdf(4),
            )
            .await;
        assert_eq!(scheme.status, 201);
        let work_id = work.json()["asset"]["id"].as_str().expect("id").to_owned();
        let scheme_id = scheme.json()["asset"]["id"]
            .as_str()
            .expect("id")
            .to_owned();
        let submission = example("a-level-pure-paper.json")
            .replace(EXAMPLE_WORK, &work_id)
            .replace(EXAMPLE_SCHEME, &scheme_id);
        (import, submission, work_id, scheme_id)
    }
}

pub const EXAMPLE_WORK: &str = "5b0f6a2e-8c1d-4e7a-9b3f-2d4c6e8f0a11";
pub const EXAMPLE_SCHEME: &str = "c7e2d9b4-1a3f-4c5e-8d7b-9f0e1a2b3c44";

pub fn example(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/submissions")
        .join(name);
    std::fs::read_to_string(path).expect("example readable")
}

/// Runs a case on SQLite and on PostgreSQL, as the tests `<case>::sqlite` and `<case>::postgres`.
///
/// The PostgreSQL variant is `#[ignore]`d, with the reason [`POSTGRES_NOT_CONFIGURED`], when the
/// tests were built with neither `EXAMKIT_TEST_POSTGRES_URL` nor `EXAMKIT_REQUIRE_POSTGRES` set
/// (`build.rs` sets the `examkit_postgres_tests` cfg otherwise), so the harness reports it
/// among the ignored tests instead of passing it without a database.
#[macro_export]
macro_rules! on_both {
    ($($case:ident),+ $(,)?) => {
        $(
            mod $case {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::$case(super::common::Db::Sqlite).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(
                    not(examkit_postgres_tests),
                    ignore = "PostgreSQL not configured: set EXAMKIT_TEST_POSTGRES_URL"
                )]
                async fn postgres() {
                    super::$case(super::common::Db::Postgres).await
                }
            }
        )+
    };
}

/// Runs `burst` until one attempt starts and ends in the same UTC minute, at most `attempts`
/// times, and returns that attempt's result. Fixed rate windows restart at each minute boundary,
/// so a burst that straddles one cannot be judged; it is repeated (the closure gets the attempt
/// number, to use fresh keys) instead of having its assertions skipped.
pub async fn within_one_minute<T, F, Fut>(attempts: usize, mut burst: F) -> T
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    for attempt in 0..attempts {
        let minute = examkit::store::now_ms() / 60_000;
        let result = burst(attempt).await;
        if examkit::store::now_ms() / 60_000 == minute {
            return result;
        }
        eprintln!("a minute boundary fell inside attempt {attempt}; repeating the burst");
    }
    panic!("a minute boundary fell inside each of {attempts} attempts");
}

/// The number of question rows stored for a session, and how many distinct positions they have.
pub async fn stored_questions(store: &Store, session_id: &str) -> (i64, i64) {
    use sqlx::Row;
    let row = sqlx::query(
        "SELECT COUNT(*) AS n, COUNT(DISTINCT position) AS p FROM marking_questions \
         WHERE session_id = $1",
    )
    .bind(session_id)
    .fetch_one(store.pool())
    .await
    .expect("count questions");
    (
        row.try_get::<i64, _>("n").expect("n"),
        row.try_get::<i64, _>("p").expect("p"),
    )
}

/// The number of completed import sessions of an account.
pub async fn completed_imports(store: &Store, user_id: &str) -> i64 {
    use sqlx::Row;
    sqlx::query(
        "SELECT COUNT(*) AS n FROM marking_sessions WHERE user_id = $1 AND origin = 'import' \
         AND status = 'completed'",
    )
    .bind(user_id)
    .fetch_one(store.pool())
    .await
    .expect("count sessions")
    .try_get::<i64, _>("n")
    .expect("n")
}

/// A small, real image of one page (a white 40×30 page with a dark square) in `format`: `png`,
/// `jpeg` or `webp`. Uploads decode every page, so a file must be a real image, not a signature.
#[allow(dead_code)]
pub fn tiny_image(format: &str) -> Vec<u8> {
    let mut img = image::GrayImage::from_pixel(40, 30, image::Luma([255]));
    for y in 5..15 {
        for x in 5..15 {
            img.put_pixel(x, y, image::Luma([0]));
        }
    }
    let format = match format {
        "png" => image::ImageFormat::Png,
        "jpeg" => image::ImageFormat::Jpeg,
        "webp" => image::ImageFormat::WebP,
        other => panic!("no image format {other}"),
    };
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageLuma8(img)
        .write_to(&mut out, format)
        .expect("encode a tiny image");
    out.into_inner()
}

/// Appends a PNG chunk with its length and CRC to `out` (for hand-made PNG headers).
#[allow(dead_code)]
pub fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&u32::try_from(data.len()).expect("chunk").to_be_bytes());
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(kind);
    hasher.update(data);
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&hasher.finalize().to_be_bytes());
}

/// A PNG unique to `(client, n)`; `noisy` fills it with noise (about 120 kB) so uploads take a while.
pub fn unique_png(client: u8, n: u16, noisy: bool) -> Vec<u8> {
    let (w, h) = if noisy { (400, 300) } else { (40, 30) };
    let mut img = image::GrayImage::from_pixel(w, h, image::Luma([255]));
    let mut state = u32::from(client) << 16 | u32::from(n);
    for y in 0..h {
        for x in 0..w {
            if noisy || (5..15).contains(&x) && (5..15).contains(&y) {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                img.put_pixel(x, y, image::Luma([(state >> 24) as u8]));
            }
        }
    }
    img.put_pixel(0, 0, image::Luma([client]));
    let [high, low] = n.to_be_bytes();
    img.put_pixel(1, 0, image::Luma([high]));
    img.put_pixel(2, 0, image::Luma([low]));
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageLuma8(img)
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encoded");
    out.into_inner()
}

/// Whether this test has its process to itself, as a test that reads process-wide state (the
/// metrics recorder, the process's peak memory) needs. Under nextest every test has a process of
/// its own. Under `cargo test`, where a suite's tests share one process, the test named `name`
/// (its full path in the binary) is run again alone in a child process, which must pass; then
/// this returns false and the caller returns, its assertions made in the child.
pub fn alone(name: &str) -> bool {
    let per_test =
        std::env::var_os("NEXTEST_EXECUTION_MODE").is_some_and(|m| m == "process-per-test");
    if per_test || std::env::var_os("EXAMKIT_TEST_ALONE").is_some() {
        return true;
    }
    let status = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("EXAMKIT_TEST_ALONE", "1")
        .status()
        .expect("the test binary runs");
    assert!(status.success(), "{name}, run alone, failed: {status}");
    false
}
