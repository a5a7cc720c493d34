//! Command-line arguments and dispatch.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The `examkit` command line.
#[derive(Debug, Parser)]
#[command(
    name = "examkit",
    version,
    about = "Validate marking imports and run the examkit service."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a service-marking-import-v1 submission and print the engine's outcome.
    ///
    /// Exit status: 0 when the submission is valid, 1 when it is invalid, 2 for usage or I/O errors.
    Validate(super::validate::ValidateArgs),
    /// Run the HTTP service (with its automated-marking workers).
    Serve(crate::config::ServeArgs),
    /// Run automated-marking workers only, on the same database as `examkit serve`, until SIGTERM.
    Worker(crate::config::WorkerArgs),
    /// Manage accounts.
    #[command(subcommand)]
    Users(super::admin::UsersCommand),
    /// Manage API keys (secrets are shown once, at creation).
    #[command(subcommand)]
    Keys(super::admin::KeysCommand),
    /// Import, export and check question banks.
    #[command(subcommand)]
    Bank(super::bank_admin::BankCommand),
    /// Set accounts' favourite questions.
    #[command(subcommand)]
    Favourites(super::bank_admin::FavouritesCommand),
    /// Measure a marker against trusted decisions.
    #[command(subcommand)]
    Marker(crate::calibration::MarkerCommand),
    /// Copy the embedded SQLite database while the service runs (PostgreSQL: use pg_dump).
    Backup(super::backup::BackupArgs),
    /// Put a backup made by `examkit backup` in place (stop the service first).
    Restore(super::backup::RestoreArgs),
    /// Where uploads, page images and exported PDFs are kept: status, moving them, sweeping.
    #[command(subcommand)]
    Assets(crate::assets::AssetsCommand),
    /// Reads the pages of files from outside for `serve` and `worker`, which start it: requests
    /// on stdin, answers on stdout.
    #[command(hide = true)]
    PageReader(PageReaderArgs),
}

/// Arguments of `examkit page-reader`.
#[derive(Debug, clap::Args)]
pub struct PageReaderArgs {
    /// Its address space, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(64..))]
    pub memory_mib: u64,
    /// Processor time each request may use, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub cpu_seconds: u64,
}

/// Runs a parsed command line and returns the process exit status.
pub fn run(cli: Cli) -> ExitCode {
    crate::tls::install_provider();
    match cli.command {
        Command::Validate(args) => super::validate::run(&args),
        Command::Serve(args) => with_runtime(super::serve::run(args)),
        Command::Worker(args) => with_runtime(super::serve::worker(args)),
        Command::Users(command) => with_runtime(super::admin::users(command)),
        Command::Keys(command) => with_runtime(super::admin::keys(command)),
        Command::Bank(super::bank_admin::BankCommand::Check { path }) => {
            super::bank_admin::check(&path)
        }
        Command::Bank(command) => with_runtime(super::bank_admin::bank(command)),
        Command::Favourites(command) => with_runtime(super::bank_admin::favourites(command)),
        Command::Marker(command) => with_runtime(crate::calibration::run(command)),
        Command::Backup(args) => with_runtime(super::backup::backup(args)),
        Command::Restore(args) => with_runtime(super::backup::restore(args)),
        Command::Assets(command) => with_runtime(crate::assets::run(command)),
        Command::PageReader(args) => {
            let limits = crate::untrusted::child::ChildLimits {
                memory_bytes: args.memory_mib.saturating_mul(1024 * 1024),
                cpu_seconds: args.cpu_seconds,
            };
            match crate::untrusted::child::run(limits) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("examkit page-reader: {e}");
                    ExitCode::from(1)
                }
            }
        }
    }
}

fn with_runtime(future: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(future),
        Err(e) => {
            eprintln!("examkit: cannot start the async runtime: {e}");
            ExitCode::from(1)
        }
    }
}
