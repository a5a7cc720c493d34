//! `examkit validate`: the engine's outcome for one submission file.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `examkit validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The submission file, or `-` to read it from standard input.
    #[arg(value_name = "SUBMISSION")]
    pub submission: PathBuf,
    /// A JSON array of the import's assets (`[{"id", "kind", "pageCount"}]`); without it the checks
    /// that need assets are skipped and the outcome says `"assetsChecked": false`.
    #[arg(long, value_name = "ASSETS")]
    pub assets: Option<PathBuf>,
    /// Print the outcome as indented JSON.
    #[arg(long, conflicts_with = "explain")]
    pub pretty: bool,
    /// Print a human-readable report instead of JSON: per question, each criterion's submitted
    /// and effective outcome with, beneath it, the criterion's requirement, the marker's reason,
    /// any condition not met or uncertain, the evidence quoted with its page, and every flag.
    #[arg(long)]
    pub explain: bool,
}

/// Exit status for a valid submission.
pub const EXIT_VALID: u8 = 0;
/// Exit status for an invalid submission.
pub const EXIT_INVALID: u8 = 1;
/// Exit status for usage and I/O errors (unreadable files, a malformed assets list).
pub const EXIT_USAGE: u8 = 2;

/// Runs `examkit validate` and returns its exit status.
///
/// The submission is read as bytes, whatever they hold, so that non-UTF-8 input reaches the engine
/// (which reports `invalid_json`) and an oversized file gets the engine's `payload_too_large`.
pub fn run(args: &ValidateArgs) -> ExitCode {
    match execute(args) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("examkit validate: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn execute(args: &ValidateArgs) -> Result<u8, String> {
    let assets = match &args.assets {
        Some(path) => {
            let bytes = std::fs::read(path)
                .map_err(|e| format!("cannot read assets file {}: {e}", path.display()))?;
            let assets = examkit_engine::assets_from_json(&bytes)
                .map_err(|e| format!("invalid assets file {}: {e}", path.display()))?;
            Some(assets)
        }
        None => None,
    };
    let document = read_submission(&args.submission)?;
    let outcome = examkit_engine::validate(&document, assets.as_deref());

    let mut text = if args.explain {
        examkit_engine::explain(&document, &outcome)
    } else if args.pretty {
        outcome.to_json_pretty()
    } else {
        outcome.to_json()
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => {}
        // A reader that went away (`examkit validate x | head`) is not an error of ours.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(format!("cannot write the outcome: {e}")),
    }
    Ok(if outcome.is_valid() {
        EXIT_VALID
    } else {
        EXIT_INVALID
    })
}

fn read_submission(path: &Path) -> Result<Vec<u8>, String> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read the submission from standard input: {e}"))?;
        Ok(bytes)
    } else {
        std::fs::read(path)
            .map_err(|e| format!("cannot read submission file {}: {e}", path.display()))
    }
}
