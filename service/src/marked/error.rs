//! Why a stored question cannot be read as a [`super::MarkedQuestion`].

/// A stored question that cannot be read: each variant names what is wrong, with a stable code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarkedError {
    /// A stored document (the question, its result, its failure, who marked it, the marker's run
    /// record, a session's source) is not what it must be.
    #[error("the stored {what} cannot be read: {reason}")]
    Unreadable {
        /// Which document.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A criterion of the rubric has no decision.
    #[error("criterion {0:?} has no decision")]
    MissingDecision(String),
    /// A decision names no criterion of the rubric (or a second decision names one).
    #[error("the decision on {0:?} matches no criterion of the rubric left without one")]
    UnknownCriterion(String),
    /// A criterion of the rubric has no result, or the result has a criterion the rubric has not.
    #[error("criterion {0:?} is not in both the question and its result")]
    UnmatchedResult(String),
    /// The row, the question and its result do not name the same question.
    #[error("the question is labelled {row:?}, but its stored {what} is labelled {stored:?}")]
    LabelMismatch {
        /// The row's label.
        row: String,
        /// Which document names another label.
        what: &'static str,
        /// The label it names.
        stored: String,
    },
}

impl MarkedError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            MarkedError::Unreadable { .. } => "unreadable_document",
            MarkedError::MissingDecision(_) => "missing_decision",
            MarkedError::UnknownCriterion(_) => "unknown_criterion",
            MarkedError::UnmatchedResult(_) => "unmatched_result",
            MarkedError::LabelMismatch { .. } => "label_mismatch",
        }
    }

    pub(super) fn unreadable(what: &'static str, reason: impl std::fmt::Display) -> Self {
        MarkedError::Unreadable {
            what,
            reason: reason.to_string(),
        }
    }
}
