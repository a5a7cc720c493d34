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

mod assets;
mod error;
mod explain;
mod fasthash;
mod formats;
mod geometry;
mod graph;
mod json;
pub mod limits;
mod outcome;
mod pages;
mod pointer;
mod references;
mod scoring;
mod structure;
mod submission;

pub use assets::{Asset, AssetKind, AssetsError, assets_from_json, check_assets};
pub use error::{ErrorCode, FlagCode, ValidationError};
pub use explain::explain;
pub use outcome::{
    CriterionReport, Decision, Outcome, PartReport, QuestionReport, Rejection, Report, ReviewFlag,
    Score, Status,
};

/// The schema version this engine validates.
pub const SCHEMA_VERSION: &str = "service-marking-import-v1";

/// Validates a submission's bytes and, when it is valid, computes its scores.
///
/// `assets` are the import's uploaded files; without them (`None`) the checks that need them are
/// skipped and the outcome says `assetsChecked: false`. Documents over 4 MiB are rejected with
/// `payload_too_large` before any parsing.
pub fn validate(document: &[u8], assets: Option<&[Asset]>) -> Outcome {
    if document.len() > limits::MAX_DOCUMENT_BYTES {
        return Outcome::invalid(vec![ValidationError::new(
            ErrorCode::PayloadTooLarge,
            String::new(),
            0,
            format!(
                "the document is {} bytes; the limit is {} bytes (4 MiB)",
                document.len(),
                limits::MAX_DOCUMENT_BYTES
            ),
        )]);
    }
    let root = match json::parse(document) {
        Ok(root) => root,
        Err(error) => return Outcome::invalid(vec![error]),
    };
    let mut errors = Vec::new();
    let submission = structure::read(&root, &mut errors);
    references::check(&submission, assets, &mut errors);
    let order = graph::check(&submission, &mut errors);
    if !errors.is_empty() {
        return Outcome::invalid(errors);
    }
    Outcome::Valid(scoring::score(&submission, &order, assets.is_some()))
}

/// [`validate`] for a document already held as text.
pub fn validate_str(document: &str, assets: Option<&[Asset]>) -> Outcome {
    validate(document.as_bytes(), assets)
}
