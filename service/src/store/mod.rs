//! Persistence over sqlx for SQLite and PostgreSQL.
//!
//! Both backends run the same SQL through sqlx's `Any` driver: `$n` placeholders, integers as
//! `BIGINT`, booleans as 0/1, identifiers and JSON as text, timestamps as Unix milliseconds.
//! Each backend has its own migrations (`migrations/sqlite`, `migrations/postgres`), applied at start.

pub mod accounts;
pub mod bank;
pub mod favourites;
pub mod idempotency;
pub mod marking;
pub mod papers;
pub mod questions;
pub mod rate;
pub mod search;
pub mod usage;

use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{Any, AnyPool, Transaction};

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
}

/// The service's state: one connection pool and the backend it talks to.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
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
        if backend == Backend::Sqlite
            && let Some(dir) = sqlite_parent_dir(url)
        {
            std::fs::create_dir_all(&dir).map_err(|source| StoreError::DataDir {
                path: dir.display().to_string(),
                source,
            })?;
        }
        install_default_drivers();
        let max = match backend {
            Backend::Sqlite => 4,
            Backend::Postgres => 16,
        };
        let pool = AnyPoolOptions::new()
            .max_connections(max)
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        // Write-ahead logging: one fsync per commit instead of several, and readers
                        // never wait for the writer. `synchronous` stays FULL, so a committed
                        // transaction survives a power cut as well as a killed process. Writers
                        // wait for the lock instead of failing at once.
                        sqlx::query("PRAGMA journal_mode = WAL")
                            .execute(&mut *conn)
                            .await?;
                        sqlx::query("PRAGMA synchronous = FULL")
                            .execute(&mut *conn)
                            .await?;
                        sqlx::query("PRAGMA busy_timeout = 10000")
                            .execute(&mut *conn)
                            .await?;
                    }
                    Ok(())
                })
            })
            .connect(url)
            .await?;
        match backend {
            Backend::Sqlite => sqlx::migrate!("./migrations/sqlite").run(&pool).await?,
            Backend::Postgres => sqlx::migrate!("./migrations/postgres").run(&pool).await?,
        }
        Ok(Store { pool, backend })
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The connection pool.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Begins a transaction that takes the write lock at once on SQLite (so two writers never
    /// deadlock upgrading read locks) and a plain transaction on PostgreSQL.
    pub async fn begin_write(&self) -> Result<Transaction<'static, Any>, StoreError> {
        let tx = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        };
        Ok(tx)
    }
}

fn sqlite_parent_dir(url: &str) -> Option<std::path::PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    let parent = std::path::Path::new(path).parent()?;
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
