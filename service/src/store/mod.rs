//! Persistence over sqlx for SQLite and PostgreSQL.
//!
//! Both backends run the same SQL through sqlx's `Any` driver: `$n` placeholders, integers as
//! `BIGINT`, booleans as 0/1, identifiers and JSON as text, timestamps as Unix milliseconds.
//! Each backend has its own migrations (`migrations/sqlite`, `migrations/postgres`), applied at start.

pub mod accounts;
mod admissions;
pub mod app_sessions;
pub mod automated;
pub mod bank;
pub mod class_sets;
pub mod deployment;
pub mod favourites;
pub mod health;
pub mod idempotency;
pub mod job_kind;
pub mod jobs;
pub mod key_cache;
pub mod marking;
pub mod objects;
pub mod papers;
pub mod qualifications;
pub mod questions;
pub mod rate;
pub mod results;
pub mod returned;
pub mod search;
pub mod usage;
pub mod words;

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{Any, AnyConnection, AnyPool, Transaction};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// Which database is behind the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// An SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL names no supported database.
    #[error("unsupported database URL (expected sqlite:// or postgres://)")]
    UnsupportedUrl,
    /// The data directory could not be created.
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A database error.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// Stored data could not be read back.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// The object store failed or did not answer (worth retrying).
    #[error("object store: {0}")]
    Objects(String),
    /// A row names an object the object store does not hold.
    #[error("stored object {0} is missing from the object store")]
    MissingObject(String),
    /// A row names an object but no object store is configured (`--asset-store`).
    #[error("stored files are in an object store, but none is configured (--asset-store)")]
    NoObjectStore,
    /// The object store's prefix is bound to another database (see [`deployment`]): two
    /// deployments sharing a prefix would sweep each other's files.
    #[error(
        "the asset store {url} belongs to another examkit database (deployment {theirs}); this          database is deployment {ours}. Two deployments on one prefix would delete each other's          files: give each its own prefix or directory. If this database is the one that used it          (restored from a backup made before deployment ids existed), delete {url}/{binding} and          start again",
        binding = objects::BINDING
    )]
    ForeignObjects {
        /// The asset store.
        url: String,
        /// This database's deployment id.
        ours: String,
        /// The deployment id the store's binding names.
        theirs: String,
    },
    /// A write made for many requests at once failed (each of them gets this error).
    #[error("database error: {0}")]
    Batch(String),
}

/// How a write must survive a crash.
///
/// Every write survives a killed process on both backends. The classes differ only for a power
/// cut or an operating-system crash in the instant after a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Saved data (accounts, keys, the bank, papers, marking imports, idempotency records): on
    /// stable storage before the commit returns (SQLite `synchronous = FULL`; PostgreSQL's
    /// configured `synchronous_commit`).
    Saved,
    /// Bookkeeping (rate counters, usage records, search cursors): the commit returns without
    /// waiting for the disk, so a power cut may lose the last fraction of a second of it, never
    /// corrupt it (SQLite `synchronous = NORMAL` under write-ahead logging; PostgreSQL
    /// `synchronous_commit = off` for the transaction). Per request, this is what keeps a
    /// search from queueing behind other requests' disk flushes.
    Bookkeeping,
}

/// Rows a pruning statement deletes in one transaction (see [`Store::prune_idempotency`],
/// [`Store::prune_usage`] and [`Store::prune_rate_counters`]). Small enough that on SQLite a
/// batch holds the write lock for milliseconds, even for idempotency records with large bodies.
pub const PRUNE_BATCH: i64 = 200;

/// One pruning statement in two halves: `DELETE FROM t WHERE (primary key)` and the subquery
/// `SELECT (primary key) FROM t WHERE (expired, with the cutoff as $1)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PruneBatch {
    pub(crate) delete: &'static str,
    pub(crate) select: &'static str,
}

/// The service's state: the connection pools and the backend they talk to.
///
/// On SQLite, reads use a pool of read-only connections and writes take turns on two writer
/// connections, one per [`Durability`], and the admission thread's own connection
/// (`store::admissions::sqlite`), so writers queue in the process (first come, first served)
/// instead of polling SQLite's lock. On PostgreSQL reads and writes share one pool, and searches
/// have their own ([`Store::searching`]).
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    /// The pool searches read through: on PostgreSQL, connections that plan every run of a
    /// statement for its values (see [`Store::searching`]).
    search: AnyPool,
    saved: AnyPool,
    bookkeeping: AnyPool,
    turn: Option<Arc<Mutex<()>>>,
    backend: Backend,
    text_walk: i64,
    /// The SQLite database file, for the readiness check.
    sqlite_file: Option<std::path::PathBuf>,
    /// Where stored files go: `None` for the database itself (see [`objects`]).
    objects: Option<objects::Objects>,
    /// The admission worker, started with the first admission (see [`admissions`]).
    admissions: Arc<admissions::Admissions>,
    /// Keys this server has authenticated (see [`key_cache`]).
    key_cache: Arc<key_cache::KeyCache>,
    /// Requests recorded and not yet written (see [`usage`]).
    usage: Arc<usage::UsageBuffer>,
}

/// A write transaction: a [`Transaction`] holding the writer's turn until it ends.
///
/// Dereferences to the connection, so `query.execute(&mut *tx)` runs inside it. Dropping it
/// without [`WriteTx::commit`] rolls it back.
#[derive(Debug)]
pub struct WriteTx {
    // Declared first so the transaction ends before the turn passes on.
    tx: Transaction<'static, Any>,
    _turn: Option<OwnedMutexGuard<()>>,
}

impl WriteTx {
    /// Commits the transaction.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.tx.commit().await
    }

    /// Rolls the transaction back.
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        self.tx.rollback().await
    }
}

impl Deref for WriteTx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.tx
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }
}

/// Session settings for a new SQLite connection: a writer of the given class, or a reader
/// (`None`). Write-ahead logging: readers never wait for the writer and a commit appends to one
/// file. Writers wait for the lock instead of failing at once (only another process holding it
/// can make them wait: in the process writers take turns).
async fn configure_sqlite(
    conn: &mut AnyConnection,
    writes: Option<Durability>,
) -> Result<(), sqlx::Error> {
    sqlx::query("PRAGMA journal_mode = WAL")
        .execute(&mut *conn)
        .await?;
    sqlx::query("PRAGMA busy_timeout = 10000")
        .execute(&mut *conn)
        .await?;
    let setting = match writes {
        Some(Durability::Saved) => "PRAGMA synchronous = FULL",
        Some(Durability::Bookkeeping) => "PRAGMA synchronous = NORMAL",
        // A write through a reading connection is a bug: it would bypass the writers' turns.
        None => "PRAGMA query_only = ON",
    };
    sqlx::query(setting).execute(&mut *conn).await?;
    Ok(())
}

/// How long a pooled connection may sit unused before it is checked with a round trip before
/// its next use.
const IDLE_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// The options every pool starts from. By default a pool checks each connection with a round
/// trip before every use, which on a busy server doubles the round trips of a one-statement
/// request (on SQLite, the hand-overs to the connection's thread). Here only a connection that
/// has been unused for [`IDLE_CHECK`] is checked: one the database may have closed meanwhile
/// (a restarted PostgreSQL server) is then replaced before it is used. A connection that breaks
/// while in use fails that request, as it would with a check before it.
fn pool_options() -> AnyPoolOptions {
    AnyPoolOptions::new()
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= IDLE_CHECK {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
}

async fn sqlite_pool(
    url: &str,
    connections: u32,
    writes: Option<Durability>,
) -> Result<AnyPool, sqlx::Error> {
    pool_options()
        .max_connections(connections)
        .after_connect(move |conn, _meta| {
            Box::pin(async move { configure_sqlite(conn, writes).await })
        })
        .connect(url)
        .await
}

impl Store {
    /// Opens the database at `url`, creating the SQLite file's directory when needed, and applies
    /// the backend's migrations.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            return Err(StoreError::UnsupportedUrl);
        };
        install_default_drivers();
        let store = match backend {
            Backend::Sqlite => {
                if let Some(dir) = sqlite_parent_dir(url) {
                    std::fs::create_dir_all(&dir).map_err(|source| StoreError::DataDir {
                        path: dir.display().to_string(),
                        source,
                    })?;
                }
                // The saved-data writer opens first: it may create the file (`mode=rwc`), and
                // the migrations run on it before any reader connects.
                let saved = sqlite_pool(url, 1, Some(Durability::Saved)).await?;
                sqlx::migrate!("./migrations/sqlite").run(&saved).await?;
                let bookkeeping = sqlite_pool(url, 1, Some(Durability::Bookkeeping)).await?;
                let pool = sqlite_pool(url, 4, None).await?;
                Store {
                    search: pool.clone(),
                    pool,
                    saved,
                    bookkeeping,
                    turn: Some(Arc::new(Mutex::new(()))),
                    backend,
                    text_walk: search::TEXT_WALK,
                    sqlite_file: sqlite_file(url),
                    objects: None,
                    admissions: Arc::default(),
                    key_cache: Arc::default(),
                    usage: Arc::default(),
                }
            }
            Backend::Postgres => {
                let pool = pool_options().max_connections(16).connect(url).await?;
                let search = pool_options()
                    .max_connections(8)
                    .after_connect(|conn, _meta| {
                        Box::pin(async move {
                            // Statements are prepared once per connection, and after five runs
                            // PostgreSQL may switch to a generic plan that ignores the bound
                            // values. A search filter's values differ a hundredfold in how many
                            // questions they match, so every run is planned for its values.
                            sqlx::query("SET plan_cache_mode = force_custom_plan")
                                .execute(&mut *conn)
                                .await?;
                            Ok(())
                        })
                    })
                    .connect_lazy(url)?;
                sqlx::migrate!("./migrations/postgres").run(&pool).await?;
                Store {
                    saved: pool.clone(),
                    bookkeeping: pool.clone(),
                    pool,
                    search,
                    turn: None,
                    backend,
                    text_walk: search::TEXT_WALK,
                    sqlite_file: None,
                    objects: None,
                    admissions: Arc::default(),
                    key_cache: Arc::default(),
                    usage: Arc::default(),
                }
            }
        };
        Ok(store)
    }

    /// This store with another bound on the rows a PostgreSQL text search walks in question id
    /// order before it turns to the full-text index (see [`search::TEXT_WALK`]; at least 1).
    /// Results do not depend on it, only the cost of reaching them.
    pub fn with_text_walk(mut self, rows: i64) -> Store {
        self.text_walk = rows.max(1);
        self
    }

    /// The bound on a PostgreSQL text search's walk in question id order.
    pub fn text_walk(&self) -> i64 {
        self.text_walk
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// What a `SELECT` of a row to be changed ends with to lock it until the transaction ends:
    /// `FOR UPDATE` on PostgreSQL; nothing on SQLite, whose write transactions are one at a time.
    pub(crate) fn row_lock(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE",
        }
    }

    /// The pool for reads (read-only connections on SQLite). Writes go through
    /// [`Store::begin_write`] or [`Store::begin_bookkeeping`].
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The pool for the question bank's searches. On PostgreSQL its connections plan each run of
    /// a statement for the values bound to it, as a filter's values differ a hundredfold in how
    /// many questions they match; every other statement reaches its rows by a key, where a plan
    /// kept from the previous runs is as good and planning again was a quarter of the database's
    /// work on a request. On SQLite it is the reading pool.
    pub fn searching(&self) -> &AnyPool {
        &self.search
    }

    /// Begins a write of saved data ([`Durability::Saved`]). On SQLite it waits for the writers'
    /// turn and takes the write lock at once (`BEGIN IMMEDIATE`, so two writers never deadlock
    /// upgrading read locks); on PostgreSQL it is a plain transaction.
    pub async fn begin_write(&self) -> Result<WriteTx, StoreError> {
        self.begin(Durability::Saved).await
    }

    /// Begins a write of bookkeeping ([`Durability::Bookkeeping`]).
    pub async fn begin_bookkeeping(&self) -> Result<WriteTx, StoreError> {
        self.begin(Durability::Bookkeeping).await
    }

    /// Begins a write transaction of the given durability.
    pub async fn begin(&self, durability: Durability) -> Result<WriteTx, StoreError> {
        let turn = match &self.turn {
            Some(turn) => Some(Arc::clone(turn).lock_owned().await),
            None => None,
        };
        let pool = match durability {
            Durability::Saved => &self.saved,
            Durability::Bookkeeping => &self.bookkeeping,
        };
        let mut tx = match self.backend {
            Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => pool.begin().await?,
        };
        if self.backend == Backend::Postgres && durability == Durability::Bookkeeping {
            sqlx::query("SET LOCAL synchronous_commit = off")
                .execute(&mut *tx)
                .await?;
        }
        Ok(WriteTx { tx, _turn: turn })
    }

    /// Runs one statement as a write transaction of its own.
    pub async fn execute_write(
        &self,
        durability: Durability,
        query: sqlx::query::Query<'_, Any, sqlx::any::AnyArguments>,
    ) -> Result<sqlx::any::AnyQueryResult, StoreError> {
        let mut tx = self.begin(durability).await?;
        let done = query.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(done)
    }

    /// Deletes the rows `batch` selects, [`PRUNE_BATCH`] at a time, each batch a bookkeeping
    /// transaction of its own, until a batch finds fewer; returns how many were deleted.
    ///
    /// `cutoff` is bound as the subquery's `$1`. On PostgreSQL the subquery locks the rows it
    /// picks (`FOR UPDATE SKIP LOCKED`), so servers pruning one database at once never wait for,
    /// or deadlock with, each other. On SQLite writers waiting for their turn go between batches,
    /// so pruning never holds the write lock for long.
    pub(crate) async fn prune_in_batches<C>(
        &self,
        batch: PruneBatch,
        cutoff: C,
    ) -> Result<u64, StoreError>
    where
        C: for<'q> sqlx::Encode<'q, Any> + sqlx::Type<Any> + Clone + Send + 'static,
    {
        let lock = match self.backend {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        };
        let sql = format!("{} IN ({} LIMIT $2{lock})", batch.delete, batch.select);
        let mut removed = 0u64;
        loop {
            let statement = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                .bind(cutoff.clone())
                .bind(PRUNE_BATCH);
            let done = self
                .execute_write(Durability::Bookkeeping, statement)
                .await?
                .rows_affected();
            removed += done;
            if done < PRUNE_BATCH.unsigned_abs() {
                return Ok(removed);
            }
            tokio::task::yield_now().await;
        }
    }

    /// Closes every connection (waiting for those in use to be returned).
    pub async fn close(&self) {
        self.pool.close().await;
        self.saved.close().await;
        self.bookkeeping.close().await;
    }
}

/// `$first, $first+1, …` for `n` bound parameters.
pub(crate) fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The database file a `sqlite:` URL names, if any.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    Some(std::path::PathBuf::from(path))
}

fn sqlite_parent_dir(url: &str) -> Option<std::path::PathBuf> {
    let file = sqlite_file(url)?;
    let parent = file.parent()?;
    (!parent.as_os_str().is_empty()).then(|| parent.to_path_buf())
}

/// The current time in Unix milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Unix milliseconds as an RFC 3339 UTC timestamp with millisecond precision.
pub fn rfc3339(ms: i64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    match time::OffsetDateTime::from_unix_timestamp_nanos(nanos) {
        Ok(t) => {
            let format = time::macros::format_description!(
                "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
            );
            t.format(&format).unwrap_or_default()
        }
        Err(_) => String::new(),
    }
}

/// The UTC date (`YYYY-MM-DD`) of a Unix-millisecond time.
pub fn utc_date(ms: i64) -> String {
    rfc3339(ms).get(..10).unwrap_or_default().to_owned()
}

/// An empty in-memory SQLite database on the `Any` driver, for the unit tests that read rows.
#[cfg(test)]
pub(crate) async fn memory_pool() -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    sqlx::AnyPool::connect("sqlite::memory:")
        .await
        .expect("an in-memory database")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_format_as_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_718_379_725_123), "2024-06-14T15:42:05.123Z");
        assert_eq!(utc_date(1_718_379_725_123), "2024-06-14");
    }

    #[test]
    fn sqlite_directories_are_found() {
        assert_eq!(
            sqlite_parent_dir("sqlite://data/x/examkit.db?mode=rwc"),
            Some(std::path::PathBuf::from("data/x"))
        );
        assert_eq!(sqlite_parent_dir("sqlite::memory:"), None);
        assert_eq!(sqlite_parent_dir("sqlite://examkit.db"), None);
    }
}
