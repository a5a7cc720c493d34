//! The review path: a reviewer replaces some decisions of a marked question, the engine scores
//! the question again exactly as it scored the original, and the result is saved as the next
//! revision when the reviewer's revision is still current.
//!
//! `PATCH /v1/marking/questions/{id}` and the app's review page both come here, so a decision
//! saved either way is checked by the same rules and logged with who made it.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use examkit_engine::Outcome;

use crate::http::ApiError;
use crate::http::engine::{engine_assets, run_engine, status_str};
use crate::store::Store;
use crate::store::marking::{ChangedDecision, QuestionData, QuestionRow, ReviewError, Reviewer};

/// Replaces `decisions` (one per criterion named) of question `id` of `user_id` at `revision`,
/// scores it with the engine and saves the next revision.
///
/// Errors: the question is unknown (404), has no result (409 `question_not_marked`), the revision
/// is not current (409 `stale_revision`), the decisions are malformed (400) or the reviewed
/// question is invalid (422, with paths into `decisions`).
pub async fn review(
    store: &Store,
    user_id: &str,
    id: &str,
    revision: i64,
    reviewed: Vec<Value>,
    reviewer: &Reviewer,
) -> Result<QuestionRow, ApiError> {
    let current = store
        .question(user_id, id)
        .await?
        .ok_or(ApiError::NotFound("marking question"))?;
    if reviewed.is_empty() {
        return Err(ApiError::InvalidBody(
            "decisions must hold at least one decision".into(),
        ));
    }
    if current.status != "completed" && current.status != "needs_review" {
        return Err(ApiError::QuestionNotMarked(current.status.clone()));
    }
    if revision != current.revision {
        return Err(ApiError::StaleRevision(current.revision));
    }
    let session = store
        .session(user_id, &current.session_id)
        .await?
        .ok_or(ApiError::NotFound("marking question"))?;
    let mut question: Value =
        serde_json::from_str(&current.question_json).map_err(|_| ApiError::Internal)?;
    let criteria: HashSet<String> = question["rubric"]["criteria"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();

    // Replace each reviewed decision in place, remembering where each one came from in the body.
    let mut decisions = question["decisions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut origin: HashMap<usize, usize> = HashMap::new();
    let mut seen = HashSet::new();
    let mut changed = Vec::with_capacity(reviewed.len());
    for (j, decision) in reviewed.iter().enumerate() {
        let Some(criterion) = decision.get("criterionId").and_then(Value::as_str) else {
            return Err(ApiError::InvalidBody(format!(
                "decisions[{j}].criterionId must be a string"
            )));
        };
        if !criteria.contains(criterion) {
            return Err(ApiError::InvalidBody(format!(
                "decisions[{j}].criterionId {criterion:?} is not a criterion of this question"
            )));
        }
        if !seen.insert(criterion.to_owned()) {
            return Err(ApiError::InvalidBody(format!(
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
        match decisions
            .iter()
            .position(|d| d["criterionId"].as_str() == Some(criterion))
        {
            Some(k) => {
                decisions[k] = decision.clone();
                origin.insert(k, j);
            }
            None => {
                origin.insert(decisions.len(), j);
                decisions.push(decision.clone());
            }
        }
    }
    question["decisions"] = Value::Array(decisions);
    // The original marker's claims described the original decisions; a review replaces them.
    if let Some(object) = question.as_object_mut() {
        object.remove("reportedScore");
        object.remove("complete");
    }
    let total_marks = criteria.len();
    // An import's source is the session's; an automated question's is its marker's.
    let source: Value = session
        .source_json
        .as_deref()
        .or(current.marker_json.as_deref())
        .and_then(|s| serde_json::from_str(s).ok())
        .ok_or(ApiError::Internal)?;
    let document = json!({
        "schemaVersion": examkit_engine::SCHEMA_VERSION,
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": source,
        "coverage": { "kind": "partial", "questionLabels": [current.label], "totalMarks": total_marks },
        "questions": [question],
    });
    let document_bytes = serde_json::to_vec(&document).map_err(|_| ApiError::Internal)?;
    let assets = engine_assets(&store.session_assets(&session.id).await?)?;
    let (_, outcome) = run_engine(document_bytes, assets).await?;
    let report = match &outcome {
        Outcome::Valid(report) => report,
        Outcome::Invalid(_) => return Err(review_failed(&outcome, &origin)),
    };
    let result = report.questions.first().ok_or(ApiError::Internal)?;
    let data = QuestionData {
        label: result.label.clone(),
        status: status_str(result.status).to_owned(),
        awarded: i64::from(result.score.awarded),
        possible: i64::from(result.score.possible),
        max_marks: i64::from(result.score.max),
        question_json: document["questions"][0].to_string(),
        result_json: serde_json::to_string(result).map_err(|_| ApiError::Internal)?,
    };
    match store
        .review_question(user_id, id, revision, &data, reviewer, &changed)
        .await
    {
        Ok(saved) => Ok(saved),
        Err(ReviewError::NotFound) => Err(ApiError::NotFound("marking question")),
        Err(ReviewError::Stale(current)) => Err(ApiError::StaleRevision(current)),
        Err(ReviewError::Store(e)) => Err(e.into()),
    }
}

/// The 422 of a review, with engine paths inside the reviewed decisions pointed at the body.
fn review_failed(outcome: &Outcome, origin: &HashMap<usize, usize>) -> ApiError {
    let prefix = "/questions/0/decisions/";
    let errors: Vec<Value> = outcome
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
            json!({ "path": path, "code": e.code().as_str(), "message": e.message })
        })
        .collect();
    let count = errors.len();
    let details = serde_json::to_string(&json!({ "errors": errors, "truncated": false }))
        .ok()
        .and_then(|s| serde_json::value::RawValue::from_string(s).ok());
    match details {
        Some(details) => ApiError::ValidationFailed {
            message: format!(
                "the reviewed question is invalid: {count} error(s); see error.details.errors"
            ),
            details,
        },
        None => ApiError::Internal,
    }
}
