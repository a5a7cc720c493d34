//! The `examkit` commands: each parses its flags, builds what it needs from the layers below and
//! reports on standard output and standard error. Nothing below this folder names it.
//!
//! - [`cli`]: the command line (`Cli`, its subcommands) and the dispatch to each command.
//! - [`validate`]: `examkit validate`, the engine's outcome for one submission file.
//! - [`serve`]: `examkit serve` (the store, the workers and the server until shutdown) and
//!   `examkit worker` (workers only).
//! - [`marking_flags`]: the marking configuration the marker, job and page flags describe.
//! - [`admin`]: `examkit users …` and `examkit keys …`.
//! - [`bank_admin`]: `examkit bank …` and `examkit favourites …`.
//! - [`backup`]: `examkit backup` and `examkit restore`.

pub mod admin;
pub mod backup;
pub mod bank_admin;
pub mod cli;
pub mod marking_flags;
pub mod serve;
pub mod validate;

#[cfg(test)]
mod tests;
