//! The numeric limits of the contract, in one place.

/// The largest accepted document: 4 MiB, inclusive.
pub const MAX_DOCUMENT_BYTES: usize = 4 * 1024 * 1024;
/// The deepest nesting of arrays and objects a document may have: 128 levels, the root counting as
/// one. Deeper input is `nesting_too_deep`. The schema itself nests at most [`SCHEMA_DEPTH`]
/// levels; the margin above it lets a value nested a little too deep where the schema wants
/// something else (an array of arrays as a box's `width`, nested arrays in an unknown field) be
/// reported as that field's own `type` or `unknown_field` error, beside every other error.
pub const MAX_DEPTH: usize = 128;
/// The deepest nesting of arrays and objects the schema describes (submission › questions ›
/// question › decisions › decision › conditionChecks › check › evidence › evidence item › box).
pub const SCHEMA_DEPTH: usize = 10;
/// Questions per submission.
pub const MAX_QUESTIONS: usize = 24;
/// Criteria per question.
pub const MAX_CRITERIA: usize = 100;
/// Characters in a question label.
pub const MAX_LABEL_CHARS: usize = 40;
/// Characters in a criterion id.
pub const MAX_CRITERION_ID_CHARS: usize = 64;
/// The highest page number a selection or page id may name.
pub const MAX_PAGE_NUMBER: u32 = 10_000;
/// Errors reported at most; the outcome says when more were left out.
pub const MAX_ERRORS: usize = 1000;
/// Bytes of error paths and messages reported at most (8 MiB): errors past them are left out as
/// errors past [`MAX_ERRORS`] are. The first error is always reported. Only documents whose errors
/// repeat long strings come near it (every error under one long `pageSelections` key, for one).
pub const MAX_ERROR_BYTES: usize = 8 * 1024 * 1024;
/// Tolerance on `x + width ≤ 1` and `y + height ≤ 1`.
pub const BOX_TOLERANCE: f64 = 1e-9;
