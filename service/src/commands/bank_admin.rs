//! Question bank administration: `examkit bank …` and `examkit favourites …`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::config::StoreArgs;
use crate::store::Store;
use crate::store::bank::ImportError;

/// `examkit bank …`
#[derive(Debug, Subcommand)]
pub enum BankCommand {
    /// Import a bank (a folder of *.json files, or one file) into the store, all or nothing.
    ///
    /// Prints what changed. On any error nothing is written, each error is printed on standard
    /// error as `file:/json/pointer: message`, and the exit status is 1.
    Import {
        /// The bank folder or file.
        #[arg(value_name = "FILE_OR_FOLDER")]
        path: PathBuf,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Write the stored bank into a new or empty folder in the bank format.
    Export {
        /// The folder to write.
        #[arg(value_name = "FOLDER")]
        folder: PathBuf,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Check a bank without a database: exit 0 when valid, 1 with one line per error otherwise.
    Check {
        /// The bank folder or file.
        #[arg(value_name = "FILE_OR_FOLDER")]
        path: PathBuf,
    },
}

/// `examkit favourites …`
#[derive(Debug, Subcommand)]
pub enum FavouritesCommand {
    /// Star a question for an account (starring it again changes nothing).
    Add {
        /// The account id.
        #[arg(long)]
        user: String,
        /// The question id (UUID).
        #[arg(value_name = "QUESTION_ID")]
        question: String,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Unstar a question for an account.
    Remove {
        /// The account id.
        #[arg(long)]
        user: String,
        /// The question id (UUID).
        #[arg(value_name = "QUESTION_ID")]
        question: String,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
}

fn print(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| e.to_string())
}

fn fail(message: &str) -> ExitCode {
    eprintln!("examkit: {message}");
    ExitCode::from(1)
}

fn print_errors(errors: &[examkit_bank::BankError]) {
    let mut err = std::io::stderr().lock();
    for e in errors {
        let _ = writeln!(err, "{e}");
    }
}

async fn open(store: &StoreArgs) -> Result<Store, String> {
    store.open().await.map_err(|e| e.to_string())
}

/// Runs `examkit bank check` (no database, no async runtime needed).
pub fn check(path: &std::path::Path) -> ExitCode {
    match examkit_bank::load(path) {
        Ok(bank) => {
            let revisions: usize = bank.questions().map(|(_, _, q)| q.revisions.len()).sum();
            match print(&format!(
                "OK: {} ({} files, {} questions, {} revisions, {} assets)\n",
                path.display(),
                bank.files.len(),
                bank.question_count(),
                revisions,
                bank.assets.len()
            )) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&e),
            }
        }
        Err(errors) => {
            print_errors(&errors);
            fail(&format!("{} error(s) in {}", errors.len(), path.display()))
        }
    }
}

/// Runs a `bank` command.
pub async fn bank(command: BankCommand) -> ExitCode {
    match command {
        BankCommand::Check { path } => check(&path),
        BankCommand::Import { path, store } => {
            let store = match open(&store).await {
                Ok(s) => s,
                Err(e) => return fail(&e),
            };
            match store.import_bank_path(&path).await {
                Ok(summary) => {
                    let verdict = if summary.is_unchanged() {
                        "unchanged"
                    } else {
                        "imported"
                    };
                    match print(&format!("{verdict}: {summary}\n")) {
                        Ok(()) => ExitCode::SUCCESS,
                        Err(e) => fail(&e),
                    }
                }
                Err(ImportError::Invalid(errors)) => {
                    print_errors(&errors);
                    fail(&format!(
                        "{} error(s) in {}; nothing was imported",
                        errors.len(),
                        path.display()
                    ))
                }
                Err(ImportError::Store(e)) => fail(&format!("{e}; nothing was imported")),
            }
        }
        BankCommand::Export { folder, store } => {
            let store = match open(&store).await {
                Ok(s) => s,
                Err(e) => return fail(&e),
            };
            match store.export_bank(&folder).await {
                Ok(s) => match print(&format!(
                    "exported {} questions ({} revisions) and {} assets to {}\n",
                    s.questions,
                    s.revisions,
                    s.assets,
                    folder.display()
                )) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => fail(&e),
                },
                Err(e) => fail(&e.to_string()),
            }
        }
    }
}

/// Runs a `favourites` command.
pub async fn favourites(command: FavouritesCommand) -> ExitCode {
    let (add, user, question, store) = match command {
        FavouritesCommand::Add {
            user,
            question,
            store,
        } => (true, user, question, store),
        FavouritesCommand::Remove {
            user,
            question,
            store,
        } => (false, user, question, store),
    };
    let store = match open(&store).await {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let result = if add {
        store.add_favourite(&user, &question).await.map(|changed| {
            if changed {
                "added"
            } else {
                "already a favourite"
            }
        })
    } else {
        store
            .remove_favourite(&user, &question)
            .await
            .map(|changed| {
                if changed {
                    "removed"
                } else {
                    "not a favourite"
                }
            })
    };
    match result {
        Ok(what) => match print(&format!("{what}: {question}\n")) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        },
        Err(e) => fail(&e.to_string()),
    }
}
