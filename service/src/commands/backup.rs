//! `examkit backup --to FILE` and `examkit restore --from FILE`: a consistent copy of the embedded
//! SQLite database, taken while the service serves and writes, and putting one back.
//!
//! The copy is SQLite's `VACUUM INTO`, run in one read transaction: it holds exactly what was
//! committed when it began, uploads and exported PDFs included when they live in the database
//! (objects in an object store are backed up with the store's own tools: they are never changed),
//! and nothing written after. It is written beside the target and renamed into place only once
//! complete and checked (`PRAGMA integrity_check`), so a backup cut short leaves no file that
//! looks whole. PostgreSQL deployments use `pg_dump` and `pg_restore` instead (see the README).
//!
//! A backup holds every account's key fingerprints and password hashes, so its file is created
//! readable and writable by its owner only (mode 0600) before SQLite writes a byte into it. A
//! restore brings API keys back as they were when the backup was taken (a key revoked since works
//! again) and says so; browser sessions of the app are ended, so everyone signs in again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

use clap::Args;
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

use crate::config::StoreArgs;

/// `examkit backup`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The file to write (a SQLite database).
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,
    /// Replace FILE if it exists.
    #[arg(long)]
    pub force: bool,
    /// The database to copy.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `examkit restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// A backup made by `examkit backup`.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
    /// Replace the database the data directory already holds. Stop every `examkit serve` and
    /// `examkit worker` using it first.
    #[arg(long)]
    pub force: bool,
    /// Make the restored database a new deployment, with an id of its own: for a copy that runs
    /// beside the original (a staging copy, say). Without it the copy is the original deployment
    /// and may bind, write to and sweep the original's object-store prefix; with it, that prefix
    /// is refused to it, and it needs an `--asset-store` of its own.
    #[arg(long)]
    pub new_deployment: bool,
    /// Where to restore it.
    #[command(flatten)]
    pub store: StoreArgs,
}

fn sqlite_path(store: &StoreArgs, verb: &str) -> Result<PathBuf, String> {
    let url = store.resolved_url();
    if !url.starts_with("sqlite:") {
        return Err(format!(
            "{verb} works on the embedded SQLite database; for PostgreSQL use pg_dump and pg_restore (README: Operating examkit)"
        ));
    }
    crate::store::sqlite_file(&url).ok_or_else(|| format!("{url} names no database file"))
}

async fn open_read_only(path: &Path) -> Result<SqliteConnection, String> {
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
        .map_err(|e| e.to_string())?
        .read_only(true);
    SqliteConnection::connect_with(&options)
        .await
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// Checks that `path` is a whole examkit database: SQLite's integrity check passes and it holds
/// examkit's migrations. Returns the number of migrations applied.
async fn check_copy(path: &Path) -> Result<i64, String> {
    let mut connection = open_read_only(path).await?;
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut connection)
        .await
        .map_err(|e| format!("{} is not a SQLite database: {e}", path.display()))?;
    if integrity != "ok" {
        return Err(format!("{} is damaged: {integrity}", path.display()));
    }
    let migrations: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(&mut connection)
        .await
        .map_err(|_| format!("{} is not an examkit database", path.display()))?;
    connection.close().await.map_err(|e| e.to_string())?;
    Ok(migrations)
}

/// The mode of a backup file: its owner reads and writes it, nobody else.
pub const BACKUP_MODE: u32 = 0o600;

/// Creates the empty file `VACUUM INTO` fills (SQLite writes into an empty file and keeps its
/// mode; the journal it may make beside it takes the same mode), so the copy is never readable by
/// others, not even while it is being written.
fn create_private(path: &Path) -> Result<(), String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, BACKUP_MODE);
    options
        .open(path)
        .map(drop)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))
}

fn partial(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

async fn backup_inner(args: BackupArgs) -> Result<String, String> {
    let source = sqlite_path(&args.store, "backup")?;
    if !source.exists() {
        return Err(format!("no database at {}", source.display()));
    }
    if args.to.exists() && !args.force {
        return Err(format!(
            "{} exists; choose another file or pass --force to replace it",
            args.to.display()
        ));
    }
    let temporary = partial(&args.to);
    let _ = std::fs::remove_file(&temporary);
    create_private(&temporary)?;
    let mut connection = open_read_only(&source).await?;
    let target = temporary
        .to_str()
        .ok_or_else(|| format!("{} is not a UTF-8 path", temporary.display()))?
        .to_owned();
    let copied = sqlx::query("VACUUM INTO $1")
        .bind(target)
        .execute(&mut connection)
        .await;
    if let Err(e) = copied {
        let _ = std::fs::remove_file(&temporary);
        return Err(format!("the copy failed: {e}"));
    }
    connection.close().await.map_err(|e| e.to_string())?;
    let checked = check_copy(&temporary).await;
    if let Err(e) = checked {
        let _ = std::fs::remove_file(&temporary);
        return Err(e);
    }
    std::fs::rename(&temporary, &args.to)
        .map_err(|e| format!("cannot move the copy to {}: {e}", args.to.display()))?;
    let size = std::fs::metadata(&args.to).map(|m| m.len()).unwrap_or(0);
    Ok(format!(
        "backed up {} to {} ({size} bytes)",
        source.display(),
        args.to.display()
    ))
}

async fn restore_inner(args: RestoreArgs) -> Result<String, String> {
    let target = sqlite_path(&args.store, "restore")?;
    check_copy(&args.from).await?;
    if target.exists() && !args.force {
        return Err(format!(
            "{} already holds a database; stop the service using it and pass --force to replace it",
            target.display()
        ));
    }
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    let temporary = partial(&target);
    std::fs::copy(&args.from, &temporary)
        .map_err(|e| format!("cannot copy {}: {e}", args.from.display()))?;
    std::fs::File::open(&temporary)
        .and_then(|f| f.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", temporary.display()))?;
    // The old database's write-ahead log and shared memory belong to the file being replaced.
    for suffix in ["-wal", "-shm"] {
        let mut name = target.file_name().unwrap_or_default().to_os_string();
        name.push(suffix);
        let _ = std::fs::remove_file(target.with_file_name(name));
    }
    std::fs::rename(&temporary, &target)
        .map_err(|e| format!("cannot move the copy to {}: {e}", target.display()))?;
    // A backup of an older release is brought up to this binary's migrations.
    let store = crate::store::Store::open(&args.store.resolved_url())
        .await
        .map_err(|e| format!("the restored database cannot be opened: {e}"))?;
    let ended = end_browser_sessions(&store).await?;
    let deployment = if args.new_deployment {
        let (old, new) = store.renew_deployment_id().await.map_err(|e| {
            format!("the restored database cannot be given a new deployment id: {e}")
        })?;
        format!(
            "\nIt is a new deployment: its id is {new} (the backup's was {}). It will not use the \
             object-store prefix of the database it was copied from; give it an --asset-store of \
             its own.",
            old.as_deref().unwrap_or("not yet made")
        )
    } else {
        String::new()
    };
    Ok(format!(
        "restored {} from {}\n\
         API keys are as they were when the backup was taken: a key revoked since then works again \
         (check with examkit keys list and revoke it again). Browser sessions came back as they \
         were too, and have been ended ({ended}): everyone signs in to the app again.{deployment}",
        target.display(),
        args.from.display()
    ))
}

/// Ends every browser session a restored database holds (a cookie stolen or signed out after the
/// backup would otherwise be valid again); returns how many there were.
async fn end_browser_sessions(store: &crate::store::Store) -> Result<u64, String> {
    store
        .execute_write(
            crate::store::Durability::Saved,
            sqlx::query("DELETE FROM app_sessions"),
        )
        .await
        .map(|done| done.rows_affected())
        .map_err(|e| format!("the restored browser sessions cannot be ended: {e}"))
}

fn report(command: &str, result: Result<String, String>) -> ExitCode {
    match result {
        Ok(done) => {
            eprintln!("{done}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("examkit {command}: {e}");
            ExitCode::from(1)
        }
    }
}

/// Runs `examkit backup`.
pub async fn backup(args: BackupArgs) -> ExitCode {
    report("backup", backup_inner(args).await)
}

/// Runs `examkit restore`.
pub async fn restore(args: RestoreArgs) -> ExitCode {
    report("restore", restore_inner(args).await)
}
