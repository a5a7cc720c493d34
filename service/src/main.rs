//! The `examkit` command: validate submissions offline, run the HTTP service, administer accounts.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = examkit::cli::Cli::parse();
    examkit::cli::run(cli)
}
