//! Marking questions: placing a paper's questions on a session's indexed pages, and marking one
//! question with the configured marker, through the engine.
//!
//! A marker's answer is an import question like any other: the rubric must be the scheme's (for a
//! structured scheme), its evidence must cite selected work pages that indexing did not flag as the
//! clean question paper or a mark scheme, the evidence guards ([`super::evidence`]) turn any award
//! they refuse `uncertain`, whatever the marker, and the engine validates it against the session's
//! assets before anything is saved. The question, the engine's result and the job's end are saved
//! in one transaction; a failure saves only the failure.
//!
//! # Files
//!
//! - `mod.rs`: what a question is asked with ([`QuestionRequest`]) and the page limits.
//! - `plan.rs`: placing a session's questions on its pages ([`plan`]).
//! - `records.rs`: what indexing stored of a page, read back.
//! - `mark.rs`: marking one question ([`mark`]) and failing it ([`fail`]).
//! - `images.rs`: the page images shown to a marker that reads images.
//! - `check.rs`: the check every answer passes ([`check_answer`]) and the document it is scored as.
//! - `check_tests.rs`: the check and the records, on hand-built requests.

mod check;
#[cfg(test)]
mod check_tests;
mod images;
mod mark;
mod plan;
mod records;

pub use check::{answer_check, asset_kinds, check_answer};
pub(crate) use check::{document_for, source_for};
pub(crate) use mark::{call_marker, score};
pub use mark::{fail, mark, save_unmarked};
pub use plan::plan;
use std::collections::BTreeMap;

/// Work pages one question may select.
pub const MAX_WORK_PAGES: usize = 12;

/// Scheme pages one question may select.
pub const MAX_SCHEME_PAGES: usize = 12;

/// A question's request as stored: the files and pages it is marked from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequest {
    /// The work assets.
    pub work_asset_ids: Vec<String>,
    /// The scheme assets.
    pub scheme_asset_ids: Vec<String>,
    /// Asset id → selected page numbers.
    pub page_selections: BTreeMap<String, Vec<u32>>,
}
