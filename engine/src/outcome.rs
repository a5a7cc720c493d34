//! The validation outcome, serialised exactly as the import contract's section 4 shows.

use serde::Serialize;

use crate::SCHEMA_VERSION;
use crate::error::{FlagCode, ValidationError};

/// The result of validating one submission: valid with scores, or invalid with every error.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// The submission is valid; it carries the computed scores and review flags.
    Valid(Report),
    /// The submission is invalid; it carries every error, in document order.
    Invalid(Rejection),
}

impl Outcome {
    /// Whether the submission is valid.
    pub fn is_valid(&self) -> bool {
        matches!(self, Outcome::Valid(_))
    }

    /// The errors of an invalid submission (empty when valid).
    pub fn errors(&self) -> &[ValidationError] {
        match self {
            Outcome::Valid(_) => &[],
            Outcome::Invalid(rejection) => &rejection.errors,
        }
    }

    /// The canonical compact JSON form: the same bytes on every surface.
    pub fn to_json(&self) -> String {
        // Serialising plain structs of strings, numbers and booleans cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// An indented JSON form for people.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// An invalid outcome from errors already in document order and cut to the limits (see
    /// `collect`).
    pub(crate) fn rejected(errors: Vec<ValidationError>, truncated: bool) -> Self {
        Outcome::Invalid(Rejection {
            valid: false,
            errors,
            truncated,
        })
    }
}

/// An invalid submission: `{"valid": false, "errors": [...], "truncated": bool}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejection {
    /// Always `false`.
    pub valid: bool,
    /// Every error, in document order: at most 1,000, and past the first, at most 8 MiB of paths
    /// and messages in all ([`crate::limits::MAX_ERRORS`], [`crate::limits::MAX_ERROR_BYTES`]).
    pub errors: Vec<ValidationError>,
    /// Whether errors past those limits were left out.
    pub truncated: bool,
}

/// A valid submission's computed result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always `true`.
    pub valid: bool,
    /// Always `service-marking-import-v1`.
    pub schema_version: &'static str,
    /// Whether page references were checked against the import's assets.
    pub assets_checked: bool,
    /// `needs_review` when any question needs review, else `completed`.
    pub status: Status,
    /// The whole submission's score range.
    pub score: Score,
    /// One entry per question, in submission order.
    pub questions: Vec<QuestionReport>,
}

impl Report {
    pub(crate) fn new(assets_checked: bool, questions: Vec<QuestionReport>) -> Self {
        let score = Score::sum(questions.iter().map(|q| q.score));
        let status = if questions.iter().any(|q| q.status == Status::NeedsReview) {
            Status::NeedsReview
        } else {
            Status::Completed
        };
        Report {
            valid: true,
            schema_version: SCHEMA_VERSION,
            assets_checked,
            status,
            score,
            questions,
        }
    }
}

/// A question's (or the submission's) status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// No review flag.
    Completed,
    /// At least one review flag.
    NeedsReview,
}

/// A score range: `awarded ≤ possible ≤ max`. `possible` is never a confirmed score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Score {
    /// Marks effectively awarded.
    pub awarded: u32,
    /// Awarded plus effectively uncertain marks.
    pub possible: u32,
    /// The number of one-mark criteria.
    pub max: u32,
}

impl Score {
    pub(crate) fn sum(scores: impl Iterator<Item = Score>) -> Score {
        scores.fold(Score::default(), |a, b| Score {
            awarded: a.awarded + b.awarded,
            possible: a.possible + b.possible,
            max: a.max + b.max,
        })
    }
}

/// A question's computed result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionReport {
    /// The question's label.
    pub label: String,
    /// `completed` when it has no review flag.
    pub status: Status,
    /// The question's score range.
    pub score: Score,
    /// One entry per rubric part, in rubric order.
    pub parts: Vec<PartReport>,
    /// One entry per criterion, in rubric order.
    pub criteria: Vec<CriterionReport>,
    /// Every review flag of the question: criteria in rubric order, then the question's own flags.
    pub review_flags: Vec<ReviewFlag>,
}

/// A part's score range.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartReport {
    /// The part id.
    pub id: String,
    /// The part's score range.
    pub score: Score,
}

/// A criterion's submitted and effective outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionReport {
    /// The criterion id.
    pub id: String,
    /// The mark code, such as `dM1`.
    pub code: String,
    /// The outcome the marker submitted.
    pub submitted: Decision,
    /// The outcome after conditions and dependencies.
    pub effective: Decision,
    /// The review flags of this criterion, in the order the scoring steps raised them.
    pub flags: Vec<FlagCode>,
}

/// A one-mark decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The mark is given.
    Awarded,
    /// The mark is not given.
    Withheld,
    /// Not decided: counts towards `possible` only.
    Uncertain,
}

impl Decision {
    /// The stable identifier.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Awarded => "awarded",
            Decision::Withheld => "withheld",
            Decision::Uncertain => "uncertain",
        }
    }
}

/// One reason a question needs review.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewFlag {
    /// The stable flag code.
    pub code: FlagCode,
    /// The criterion concerned, absent for question-level flags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criterion_id: Option<String>,
    /// RFC 6901 JSON Pointer to what raised the flag.
    pub path: String,
    /// A sentence for people, naming the cause.
    pub message: String,
}
