//! A marked question, typed: what was marked (the pages, the rubric, each decision with its
//! evidence and condition checks), how the engine scored it (each criterion's submitted and
//! effective outcome, the question's review flags), who marked it and what its marker recorded
//! (with a vision model's transcription of the answer, part by part: `transcription.rs`).
//!
//! [`MarkedQuestion::from_row`] is the one place a stored question row is read; `/v1` serialises
//! the model ([`MarkedQuestion::to_v1`]), the app draws it, and the review path edits it and
//! writes it back in the import contract's shape for the engine
//! ([`MarkedQuestion::contract_question`]).

pub mod engine;
mod error;
pub mod number;
mod question;
mod read;
mod submission;
mod transcription;
mod v1;

#[cfg(test)]
pub(crate) mod tests;

pub use error::MarkedError;
pub use question::{
    CheckResult, ConditionCheck, ConditionMode, Decision, Evidence, EvidenceBox, EvidencePlacement,
    MarkedCriterion, MarkerClaims, MarkerKind, MarkerRun, MarkerSource, MarkingFailure, Outcome,
    PageFit, PartScore, PlacementRule, QuestionStatus, ReviewFlag, RubricPart, Score, ScoreRange,
    SourceDocuments,
};
pub use transcription::{TranscribedPart, Transcription};

/// A marking question as the service knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkedQuestion {
    /// The question id.
    pub id: String,
    /// The marking session it belongs to.
    pub session_id: String,
    /// Its label.
    pub label: String,
    /// Its status.
    pub status: QuestionStatus,
    /// Its revision, from 1, increased by each review.
    pub revision: i64,
    /// Why it was not marked, when it failed or was cancelled.
    pub error: Option<MarkingFailure>,
    /// Who marked an automated question; `None` for imported work (the session names its
    /// marker) and before marking.
    pub marked_by: Option<MarkerSource>,
    /// What the marker recorded of its run, when it recorded something.
    pub marker_run: Option<MarkerRun>,
    /// The score range.
    pub score: ScoreRange,
    /// The documents it was marked from.
    pub sources: SourceDocuments,
    /// The rubric's parts; empty until the question is marked.
    pub rubric_parts: Vec<RubricPart>,
    /// Each part's score as the engine computed it, in rubric order; `None` while there is no
    /// result.
    pub parts: Option<Vec<PartScore>>,
    /// The rubric's criteria in rubric order, each with its decision and result; empty until the
    /// question is marked.
    pub criteria: Vec<MarkedCriterion>,
    /// Why the question needs review; `None` while there is no result.
    pub review_flags: Option<Vec<ReviewFlag>>,
    /// What the marker claimed beside its decisions.
    pub claims: MarkerClaims,
    /// When it was made, Unix milliseconds.
    pub created_at: i64,
    /// When it last changed, Unix milliseconds.
    pub updated_at: i64,
    /// The decisions in the order they are stored, each as the index of its criterion in
    /// `criteria`: a question written back keeps its decisions where they were.
    decision_order: Vec<usize>,
}

/// How markers quote an answer space with nothing written in it: the built-in marker's quote
/// and the one the vision-model marker's evidence placement writes for an empty quote both start
/// with it (`blank: nothing is written in the answer space`).
pub const BLANK_QUOTE_PREFIX: &str = "blank:";

use crate::marking::flags::MarkerFlagCode;

/// The review flag of a question on a page of the paper that was not scanned for its script.
pub const PAGE_NOT_SCANNED: &str = "page_not_scanned";

/// The words every output gives a question on a page that was not scanned, in place of a mark.
pub const NOT_SCANNED: &str = "not scanned";

impl MarkedQuestion {
    /// The criterion `id`.
    pub fn criterion(&self, id: &str) -> Option<&MarkedCriterion> {
        self.criteria.iter().find(|c| c.id == id)
    }

    /// Whether the answer lost criterion `id`: the question is marked and the criterion's outcome,
    /// after its conditions and dependencies, is withheld. The class's item analysis and the
    /// app's stepping through the answers that lost a mark both ask this.
    pub fn lost(&self, id: &str) -> bool {
        self.status.is_marked()
            && self
                .criterion(id)
                .is_some_and(|c| c.effective == Outcome::Withheld)
    }

    /// Whether the question is on a page of the paper that was never scanned for this script
    /// (the review flag `page_not_scanned`): nothing of it was marked, so every output says "not
    /// scanned" rather than a mark, its score keeps its every mark possible (`0–max`), and the
    /// class's analysis leaves it out.
    pub fn not_scanned(&self) -> bool {
        self.status == QuestionStatus::NeedsReview
            && self
                .review_flags
                .as_deref()
                .is_some_and(|flags| flags.iter().any(|f| f.code == PAGE_NOT_SCANNED))
    }

    /// Whether the marker was held back from the question (the review flag `marker_unqualified`
    /// or `marker_drifted`): nothing of it was marked, its score keeps every mark possible
    /// (`0–max`), and the class's analysis leaves it out until a person or a qualified marker
    /// marks it.
    pub fn held_back(&self) -> bool {
        self.status == QuestionStatus::NeedsReview
            && self.review_flags.as_deref().is_some_and(|flags| {
                flags.iter().any(|f| {
                    f.code == MarkerFlagCode::MarkerUnqualified.as_str()
                        || f.code == MarkerFlagCode::MarkerDrifted.as_str()
                })
            })
    }

    /// Whether nothing of the question was marked though it has a result: its page was not
    /// scanned, or the marker was held back.
    pub fn unmarked(&self) -> bool {
        self.not_scanned() || self.held_back()
    }

    /// Whether the student left the question blank: it is marked, nothing is awarded or
    /// uncertain, and every criterion was withheld on evidence quoted as an empty answer space.
    pub fn left_blank(&self) -> bool {
        self.status.is_marked()
            && self.score.possible == 0
            && !self.criteria.is_empty()
            && self.criteria.iter().all(|c| {
                c.decision.outcome == Outcome::Withheld
                    && !c.decision.evidence.is_empty()
                    && c.decision
                        .evidence
                        .iter()
                        .all(|e| e.quote.starts_with(BLANK_QUOTE_PREFIX))
            })
    }
}
