//! `examkit assets`: where stored files (uploads, page images, exported PDFs) live, moving them
//! between the database and an object store, and sweeping objects nothing names.
//!
//! A move is resumable and safe to kill at any moment: each file is written to its new place
//! first, then its row is switched to it in one transaction, so a row always names bytes that
//! exist. Running the command again carries on where it stopped. See [`crate::store::objects`].

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::config::StoreArgs;
use crate::store::objects::{AssetStoreUrl, Movable, Objects, Swept};
use crate::store::{Store, now_ms};

/// How long an object nothing names is kept before the background sweep deletes it (covers any
/// upload still between writing its object and saving its row).
pub const SWEEP_GRACE: Duration = Duration::from_secs(60 * 60);

/// `examkit assets`.
#[derive(Debug, Subcommand)]
pub enum AssetsCommand {
    /// How many stored files are in the database and how many in the object store.
    Status(StatusArgs),
    /// Move every stored file to another place: `--to s3://bucket/prefix` or
    /// `--to file:///directory` (from the database, or copied from the configured object store),
    /// or `--to database` (back from the configured object store). Resumable: run it again after
    /// an interruption.
    Migrate(MigrateArgs),
    /// Delete objects that no row names and nobody touched within the grace period.
    Sweep(SweepArgs),
}

/// `examkit assets status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The database and its configured asset store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `examkit assets migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Where to move stored files: `database`, `file:///DIRECTORY` or `s3://BUCKET/PREFIX`.
    #[arg(long, value_name = "URL", value_parser = AssetStoreUrl::parse)]
    pub to: AssetStoreUrl,
    /// The database, and (`--asset-store`) where its objects are now.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `examkit assets sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Keep objects touched within this many seconds (0 only when nothing is writing).
    #[arg(long, value_name = "SECONDS", default_value_t = SWEEP_GRACE.as_secs())]
    pub grace_seconds: u64,
    /// The database and its configured asset store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Runs `examkit assets …`.
pub async fn run(command: AssetsCommand) -> ExitCode {
    let result = match command {
        AssetsCommand::Status(args) => status(&args).await,
        AssetsCommand::Migrate(args) => migrate(&args).await,
        AssetsCommand::Sweep(args) => sweep(&args).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("examkit assets: {e}");
            ExitCode::from(1)
        }
    }
}

async fn open(store: &StoreArgs) -> Result<Store, String> {
    store.open().await.map_err(|e| e.to_string())
}

async fn status(args: &StatusArgs) -> Result<(), String> {
    let store = open(&args.store).await?;
    let (inline, named) = store.kept_counts().await.map_err(|e| e.to_string())?;
    println!("asset store: {}", args.store.asset_store);
    println!("files in the database: {inline}");
    println!("files naming objects: {named}");
    Ok(())
}

async fn sweep(args: &SweepArgs) -> Result<(), String> {
    let store = open(&args.store).await?;
    if store.objects().is_none() {
        return Err("no object store is configured (--asset-store): nothing to sweep".into());
    }
    let grace = i64::try_from(args.grace_seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
    let swept = store
        .sweep_objects(now_ms().saturating_sub(grace))
        .await
        .map_err(|e| e.to_string())?;
    println!("{}", describe(swept));
    Ok(())
}

/// One line saying what a sweep deleted.
pub fn describe(swept: Swept) -> String {
    format!(
        "deleted {} unnamed objects, {} objects the database had no record of, and finished {} deletions begun earlier",
        swept.unreferenced, swept.untracked, swept.resumed
    )
}

async fn migrate(args: &MigrateArgs) -> Result<(), String> {
    let store = open(&args.store).await?;
    let from = &args.store.asset_store;
    match Objects::open(&args.to).map_err(|e| e.to_string())? {
        None => {
            if store.objects().is_none() {
                let (_, named) = store.kept_counts().await.map_err(|e| e.to_string())?;
                if named > 0 {
                    return Err(format!(
                        "{named} stored files are in an object store: name it with --asset-store to move them back"
                    ));
                }
            }
            for kind in Movable::ALL {
                let mut moved = 0u64;
                while store.move_one_in(kind).await.map_err(|e| e.to_string())? {
                    moved += 1;
                    progress(kind, moved, "into the database");
                }
                println!("{}: {moved} moved into the database", kind.name());
            }
        }
        Some(to) => {
            // The new store becomes this database's before anything is written to it.
            store.bind_objects(&to).await.map_err(|e| e.to_string())?;
            if let Some(objects) = store.objects()
                && *from != args.to
            {
                copy_objects(&store, objects, &to).await?;
            }
            for kind in Movable::ALL {
                let mut moved = 0u64;
                while store
                    .move_one_out(&to, kind)
                    .await
                    .map_err(|e| e.to_string())?
                {
                    moved += 1;
                    progress(kind, moved, "out of the database");
                }
                println!("{}: {moved} moved to {}", kind.name(), args.to);
            }
        }
    }
    let (inline, named) = store.kept_counts().await.map_err(|e| e.to_string())?;
    println!("done: {inline} files in the database, {named} naming objects");
    if *from != args.to {
        println!(
            "start examkit serve and examkit worker with --asset-store {} (EXAMKIT_ASSET_STORE) from now on",
            args.to
        );
    }
    Ok(())
}

fn progress(kind: Movable, moved: u64, whither: &str) {
    if moved.is_multiple_of(100) {
        eprintln!("{}: {moved} moved {whither} so far", kind.name());
    }
}

/// Copies every object the database has a claim for from one object store to another (those
/// already there are skipped, so a second run only copies what is new).
async fn copy_objects(store: &Store, from: &Objects, to: &Objects) -> Result<(), String> {
    let mut after = String::new();
    let mut copied = 0u64;
    let mut present = 0u64;
    loop {
        let batch = store
            .claimed_objects(&after, 200)
            .await
            .map_err(|e| e.to_string())?;
        let Some(last) = batch.last() else { break };
        after = last.clone();
        for sha256 in &batch {
            if to.size(sha256).await.map_err(|e| e.to_string())?.is_some() {
                present += 1;
                continue;
            }
            let bytes = match from.get(sha256).await {
                Ok(bytes) => bytes,
                // Claimed but never written (an interrupted upload): nothing names it.
                Err(crate::store::StoreError::MissingObject(_)) => continue,
                Err(e) => return Err(e.to_string()),
            };
            to.put(sha256, bytes.into())
                .await
                .map_err(|e| e.to_string())?;
            copied += 1;
            if copied.is_multiple_of(100) {
                eprintln!("objects: {copied} copied so far");
            }
        }
    }
    println!(
        "objects: {copied} copied from {}, {present} already there",
        from.url()
    );
    Ok(())
}
