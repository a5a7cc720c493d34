//! The review path: a reviewer replaces some decisions of a marked question, the engine scores
//! the question again exactly as it scored the original, and the result is saved as the next
//! revision when the reviewer's revision is still current.
//!
//! `PATCH /v1/marking/questions/{id}` and the app's review page both come here, so a decision
//! saved either way is checked by the same rules and logged with who made it. Each maps
//! [`ReviewError`] to its own errors.
//!
//! The question is read as a [`MarkedQuestion`] and written back in the import contract's shape;
//! the reviewed decisions go to the engine as the reviewer sent them, since the engine, not this
//! crate, decides whether a decision is valid (and says where it is not).

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use examkit_engine::Outcome;

use crate::fields::FieldError;
use crate::marked::engine::{EngineError, engine_assets, question_status, run_engine};
use crate::marked::{MarkedError, MarkedQuestion, MarkerClaims, MarkerSource};
use crate::store::marking::{ChangedDecision, QuestionData, Reviewer};
use crate::store::{Store, StoreError};

/// Why a review was not saved: each variant with a stable code.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// No such question for this account.
    #[error("marking question not found")]
    NotFound,
    /// The reviewed decisions are not a list of decisions on this question's criteria, one per
    /// criterion: the sentence says which and why.
    #[error("{0}")]
    InvalidDecisions(String),
    /// The question has no result to review; its status.
    #[error("the marking question has no result to review ({0})")]
    NotMarked(String),
    /// The revision sent is not the current one, which is this.
    #[error("the revision sent is not the current one; the current revision is {0}")]
    Stale(i64),
    /// The engine found the reviewed question invalid, with paths into the reviewed decisions.
    #[error("the reviewed question is invalid: {} error(s)", .0.len())]
    Invalid(Vec<FieldError>),
    /// The stored question cannot be read.
    #[error(transparent)]
    Unreadable(#[from] MarkedError),
    /// Neither the session nor the question records who marked the work.
    #[error("the question's marker is not recorded")]
    NoSource,
    /// The engine could not be run.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The reviewed question, or the engine's report on it, could not be written.
    #[error("{0} cannot be written")]
    Unwritable(String),
    /// A storage failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ReviewError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ReviewError::NotFound => "not_found",
            ReviewError::InvalidDecisions(_) => "invalid_decisions",
            ReviewError::NotMarked(_) => "question_not_marked",
            ReviewError::Stale(_) => "stale_revision",
            ReviewError::Invalid(_) => "invalid_review",
            ReviewError::Unreadable(e) => e.code(),
            ReviewError::NoSource => "source_missing",
            ReviewError::Engine(e) => e.code(),
            ReviewError::Unwritable(_) => "unwritable",
            ReviewError::Store(_) => "store_failed",
        }
    }
}

/// Replaces `decisions` (one per criterion named) of question `id` of `user_id` at `revision`,
/// scores it with the engine and saves the next revision, which it returns.
///
/// Errors: the question is unknown, has no result, the revision is not current, the decisions are
/// malformed or the reviewed question is invalid (with paths into `decisions`).
pub async fn review(
    store: &Store,
    user_id: &str,
    id: &str,
    revision: i64,
    reviewed: Vec<Value>,
    reviewer: &Reviewer,
) -> Result<MarkedQuestion, ReviewError> {
    let current = store
        .question(user_id, id)
        .await?
        .ok_or(ReviewError::NotFound)?;
    if reviewed.is_empty() {
        return Err(ReviewError::InvalidDecisions(
            "decisions must hold at least one decision".into(),
        ));
    }
    if !current.status.is_marked() {
        return Err(ReviewError::NotMarked(current.status.as_str().to_owned()));
    }
    if revision != current.revision {
        return Err(ReviewError::Stale(current.revision));
    }
    let session = store
        .session(user_id, &current.session_id)
        .await?
        .ok_or(ReviewError::NotFound)?;
    let assets = store.session_assets(&session.id).await?;
    let kinds = crate::marking::questions::asset_kinds(&assets);
    let mut marked = MarkedQuestion::from_row(&current, &kinds)?;
    let replacements = replacements(&marked, &reviewed)?;
    let document = reviewed_document(
        &mut marked,
        session.source_json.as_deref(),
        &replacements.replaced,
        current.status.as_str(),
    )?;
    let document_bytes = serde_json::to_vec(&document)
        .map_err(|e| ReviewError::Unwritable(format!("the reviewed question: {e}")))?;
    let (_, outcome) = run_engine(document_bytes, engine_assets(&assets)?).await?;
    let report = match &outcome {
        Outcome::Valid(report) => report,
        Outcome::Invalid(_) => {
            return Err(ReviewError::Invalid(problems(
                &outcome,
                &replacements.origin,
            )));
        }
    };
    let data = question_data(report, &document)?;
    let saved = store
        .review_question(
            user_id,
            id,
            revision,
            &data,
            reviewer,
            &replacements.changed,
        )
        .await
        .map_err(|e| match e {
            crate::store::marking::ReviewError::NotFound => ReviewError::NotFound,
            crate::store::marking::ReviewError::Stale(current) => ReviewError::Stale(current),
            crate::store::marking::ReviewError::Store(e) => ReviewError::Store(e),
        })?;
    Ok(MarkedQuestion::from_row(&saved, &kinds)?)
}

/// Which stored decision each reviewed one replaces, remembering where each came from in the
/// body, and the changes as the review log records them.
struct Replacements<'a> {
    /// The position of a stored decision → the reviewed decision that replaces it.
    replaced: HashMap<usize, &'a Value>,
    /// The position of a stored decision → the index of its replacement in the body.
    origin: HashMap<usize, usize>,
    changed: Vec<ChangedDecision>,
}

/// Reads the reviewed decisions: each names a criterion of the question, once.
fn replacements<'a>(
    marked: &MarkedQuestion,
    reviewed: &'a [Value],
) -> Result<Replacements<'a>, ReviewError> {
    let mut replaced: HashMap<usize, &Value> = HashMap::new();
    let mut origin: HashMap<usize, usize> = HashMap::new();
    let mut seen = HashSet::new();
    let mut changed = Vec::with_capacity(reviewed.len());
    for (j, decision) in reviewed.iter().enumerate() {
        let Some(criterion) = decision.get("criterionId").and_then(Value::as_str) else {
            return Err(ReviewError::InvalidDecisions(format!(
                "decisions[{j}].criterionId must be a string"
            )));
        };
        let Some(k) = marked.decision_position(criterion) else {
            return Err(ReviewError::InvalidDecisions(format!(
                "decisions[{j}].criterionId {criterion:?} is not a criterion of this question"
            )));
        };
        if !seen.insert(criterion.to_owned()) {
            return Err(ReviewError::InvalidDecisions(format!(
                "decisions[{j}] repeats criterion {criterion:?}; send one decision per criterion"
            )));
        }
        changed.push(ChangedDecision {
            criterion_id: criterion.to_owned(),
            // The engine refuses any other outcome before the log is written.
            outcome: decision
                .get("outcome")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        });
        replaced.insert(k, decision);
        origin.insert(k, j);
    }
    Ok(Replacements {
        replaced,
        origin,
        changed,
    })
}

/// The import document the engine scores: the question in the contract's shape with the reviewed
/// decisions in place, under the source of its decisions (`session_source`, an import's, or else
/// the question's marker). `status` is the stored question's, for the error of one that cannot
/// be written back.
fn reviewed_document(
    marked: &mut MarkedQuestion,
    session_source: Option<&str>,
    replaced: &HashMap<usize, &Value>,
    status: &str,
) -> Result<Value, ReviewError> {
    // The original marker's claims described the original decisions; a review replaces them.
    marked.claims = MarkerClaims::default();
    let mut question = marked
        .contract_question()
        .ok_or_else(|| ReviewError::NotMarked(status.to_owned()))?;
    if let Some(decisions) = question["decisions"].as_array_mut() {
        for (k, decision) in replaced {
            if let Some(slot) = decisions.get_mut(*k) {
                *slot = (*decision).clone();
            }
        }
    }
    let total_marks = marked.criteria.len();
    // An import's source is the session's; an automated question's is its marker's.
    let source = match session_source {
        Some(text) => MarkerSource::from_json(text)?,
        None => marked.marked_by.clone().ok_or(ReviewError::NoSource)?,
    };
    Ok(json!({
        "schemaVersion": examkit_engine::SCHEMA_VERSION,
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": source,
        "coverage": { "kind": "partial", "questionLabels": [marked.label], "totalMarks": total_marks },
        "questions": [question],
    }))
}

/// The question's row as the engine scored it again.
fn question_data(
    report: &examkit_engine::Report,
    document: &Value,
) -> Result<QuestionData, ReviewError> {
    let result = report
        .questions
        .first()
        .ok_or_else(|| ReviewError::Unwritable("the engine's report holds no question".into()))?;
    Ok(QuestionData {
        label: result.label.clone(),
        status: question_status(result.status),
        awarded: i64::from(result.score.awarded),
        possible: i64::from(result.score.possible),
        max_marks: i64::from(result.score.max),
        question_json: document["questions"][0].to_string(),
        result_json: serde_json::to_string(result)
            .map_err(|e| ReviewError::Unwritable(format!("the engine's report: {e}")))?,
    })
}

/// The engine's errors as field errors, with paths inside the reviewed decisions pointed at the
/// body (`/decisions/{j}/…`); the others stay paths into the one-question submission the engine
/// checked. The code is the engine's.
fn problems(outcome: &Outcome, origin: &HashMap<usize, usize>) -> Vec<FieldError> {
    let prefix = "/questions/0/decisions/";
    outcome
        .errors()
        .iter()
        .map(|e| {
            let mut path = e.path.clone();
            if let Some(rest) = path.strip_prefix(prefix) {
                let (index, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                if let Some(j) = index.parse::<usize>().ok().and_then(|k| origin.get(&k)) {
                    path = format!("/decisions/{j}{tail}");
                }
            }
            FieldError {
                path,
                code: e.code().as_str(),
                message: e.message.clone(),
            }
        })
        .collect()
}
