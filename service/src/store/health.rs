//! What the readiness probe asks of the store (that the database answers, that its migrations
//! are the ones this binary carries, and that stored files can be read), and what the metrics
//! read of it at each scrape.

use std::time::Duration;

use super::{Backend, Store};

/// The longest a readiness check waits for the database.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

async fn within<T>(
    what: &str,
    check: impl std::future::Future<Output = Result<T, sqlx::Error>>,
) -> Result<T, String> {
    match tokio::time::timeout(CHECK_TIMEOUT, check).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(format!("{what} failed: {e}")),
        Err(_) => Err(format!(
            "{what} did not answer within {} s",
            CHECK_TIMEOUT.as_secs()
        )),
    }
}

impl Store {
    /// The database answers a query on the readers' pool and on the writers'; on SQLite its file
    /// can still be opened for reading and writing (a file made unreadable or removed under a
    /// running server fails here, although connections already open would still answer).
    pub async fn check_database(&self) -> Result<(), String> {
        if let Some(file) = &self.sqlite_file {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(file)
                .map_err(|e| {
                    format!("the database file {} cannot be opened: {e}", file.display())
                })?;
        }
        within("a query", sqlx::query("SELECT 1").execute(&self.pool)).await?;
        within(
            "a query of the writer",
            sqlx::query("SELECT 1").execute(&self.saved),
        )
        .await?;
        Ok(())
    }

    /// Every migration this binary carries has been applied, and none that it does not know.
    pub async fn check_migrations(&self) -> Result<(), String> {
        let carried: Vec<i64> = match self.backend {
            Backend::Sqlite => sqlx::migrate!("./migrations/sqlite")
                .iter()
                .map(|m| m.version)
                .collect(),
            Backend::Postgres => sqlx::migrate!("./migrations/postgres")
                .iter()
                .map(|m| m.version)
                .collect(),
        };
        let applied: Vec<i64> = within(
            "reading the applied migrations",
            sqlx::query_scalar(
                "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version",
            )
            .fetch_all(&self.pool),
        )
        .await?;
        let missing: Vec<String> = carried
            .iter()
            .filter(|v| !applied.contains(v))
            .map(i64::to_string)
            .collect();
        let unknown: Vec<String> = applied
            .iter()
            .filter(|v| !carried.contains(v))
            .map(i64::to_string)
            .collect();
        match (missing.is_empty(), unknown.is_empty()) {
            (true, true) => Ok(()),
            (false, _) => Err(format!("migrations not applied: {}", missing.join(", "))),
            (true, false) => Err(format!(
                "the database has migrations this binary does not know (a newer release?): {}",
                unknown.join(", ")
            )),
        }
    }

    /// Each connection pool's open and idle connections: `(pool, open, idle)`.
    pub fn pool_stats(&self) -> Vec<(&'static str, u32, usize)> {
        let stat = |name, pool: &sqlx::AnyPool| (name, pool.size(), pool.num_idle());
        match self.backend {
            Backend::Sqlite => vec![
                stat("read", &self.pool),
                stat("saved", &self.saved),
                stat("bookkeeping", &self.bookkeeping),
            ],
            Backend::Postgres => vec![stat("shared", &self.pool)],
        }
    }

    /// The job queue's depth: `(kind, state, jobs)`.
    pub async fn job_counts(&self) -> Result<Vec<(String, String, i64)>, super::StoreError> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT kind, state, COUNT(*) AS n FROM marking_jobs GROUP BY kind, state ORDER BY kind, state",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows)
    }

    /// Stored files can be read: in the database (`asset_blobs`), and the object store answers
    /// when one is configured.
    pub async fn check_assets(&self) -> Result<(), String> {
        within(
            "reading the file store",
            sqlx::query("SELECT asset_id FROM asset_blobs WHERE asset_id = ''")
                .fetch_optional(&self.pool),
        )
        .await?;
        if let Some(objects) = &self.objects {
            match tokio::time::timeout(CHECK_TIMEOUT, objects.check()).await {
                Ok(result) => result?,
                Err(_) => {
                    return Err(format!(
                        "the asset store {} did not answer within {} s",
                        objects.url(),
                        CHECK_TIMEOUT.as_secs()
                    ));
                }
            }
        }
        Ok(())
    }
}
