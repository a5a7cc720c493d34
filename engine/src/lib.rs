//! # examkit-engine
//!
//! Validates a `service-marking-import-v1` submission and computes its score range. The engine is
//! pure: no I/O, no async, no global state. The same bytes in give the same [`Outcome`] out on
//! every surface (CLI, Python, WASM, HTTP).
//!
//! ```
//! let outcome = examkit_engine::validate_str("{}", None);
//! assert!(!outcome.is_valid());
//! assert_eq!(outcome.errors()[0].code().as_str(), "required");
//! ```
//!
//! The data path reads straight through:
//! bytes → [`limits`] → `json` (parse) → `structure` (fields, types, limits) → `references`
//! (labels, ids, parts, decisions, pages, coverage) → `graph` (dependencies) → `scoring` → [`Outcome`].
//! Errors go to `collect`, which keeps only those that can be reported; the later stages read the
//! parsed document through the views of `submission`.
//!
//! Memory and time stay bounded on any input up to the 4 MiB limit: the parsed document takes
//! 12 bytes per value, no stage copies lists out of it, every lookup is hashed, and an error's path
//! and message are only written when it can be among those reported.

#![forbid(unsafe_code)]

mod assets;
mod code_table;
mod collect;
mod error;
mod explain;
mod formats;
mod geometry;
mod graph;
mod hash;
mod json;
pub mod limits;
mod outcome;
mod pages;
mod pointer;
mod references;
mod repeats;
mod rules;
mod scoring;
mod structure;
mod submission;

use collect::Errors;
use submission::Submission;

pub use assets::{Asset, AssetKind, AssetsError, assets_from_json, check_assets};
#[doc(hidden)]
pub use code_table::__private;
pub use code_table::UnknownCode;
pub use error::{ErrorCode, FlagCode, ValidationError};
pub use explain::{EXPLAIN_TEXT_CHARS, explain};
pub use outcome::{
    CriterionReport, Decision, Outcome, PartReport, QuestionReport, Rejection, Report, ReviewFlag,
    Score, Status,
};
pub use pointer::pointer_token;

/// The schema version this engine validates.
pub const SCHEMA_VERSION: &str = "service-marking-import-v1";

/// Validates a submission's bytes and, when it is valid, computes its scores.
///
/// `assets` are the import's uploaded files; without them (`None`) the checks that need them are
/// skipped and the outcome says `assetsChecked: false`. Documents over 4 MiB are rejected with
/// `payload_too_large` before any parsing.
pub fn validate(document: &[u8], assets: Option<&[Asset]>) -> Outcome {
    let mut errors = Errors::new();
    if document.len() > limits::MAX_DOCUMENT_BYTES {
        errors.push_error(ValidationError::new(
            ErrorCode::PayloadTooLarge,
            String::new(),
            0,
            format!(
                "the document is {} bytes; the limit is {} bytes (4 MiB)",
                document.len(),
                limits::MAX_DOCUMENT_BYTES
            ),
        ));
        return errors.into_outcome();
    }
    let parsed = match json::parse(document) {
        Ok(parsed) => parsed,
        Err(error) => {
            errors.push_error(error);
            return errors.into_outcome();
        }
    };
    let root = parsed.root();
    structure::check(root, &mut errors);
    let submission = Submission::new(root);
    references::check(submission, assets, &mut errors);
    graph::check(submission, &mut errors);
    if !errors.is_empty() {
        return errors.into_outcome();
    }
    let orders = graph::orders(submission);
    Outcome::Valid(scoring::score(submission, &orders, assets.is_some()))
}

/// [`validate`] for a document already held as text.
pub fn validate_str(document: &str, assets: Option<&[Asset]>) -> Outcome {
    validate(document.as_bytes(), assets)
}
