//! Reading a stored question row into a [`MarkedQuestion`]: the one place that knows how the
//! store keeps a question (the question as the import contract has it and as reviews revised it,
//! the engine's report, the failure, who marked it and what its marker recorded).
//!
//! A question waiting to be marked (or never marked) stores `{}` for the question and for the
//! result; anything else must read in full, or the row is a [`MarkedError`].

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};

use super::MarkedQuestion;
use super::error::MarkedError;
use super::number::Stored;
use super::question::{
    ConditionCheck, ConditionMode, Decision, Evidence, EvidencePlacement, MarkedCriterion,
    MarkerClaims, MarkerRun, MarkerSource, MarkingFailure, Outcome, PartScore, ReviewFlag,
    RubricPart, Score, ScoreRange, SourceDocuments, present,
};
use super::transcription::Transcription;
use crate::store::marking::QuestionRow;
use crate::store::words::AssetKind;

/// The question as the contract has it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StoredQuestion {
    label: String,
    page_selections: BTreeMap<String, Vec<Stored<u32>>>,
    rubric: StoredRubric,
    decisions: Vec<StoredDecision>,
    #[serde(default, deserialize_with = "present")]
    reported_score: Option<ReportedScore>,
    #[serde(default, deserialize_with = "present")]
    complete: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredRubric {
    parts: Vec<RubricPart>,
    criteria: Vec<StoredCriterion>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StoredCriterion {
    id: String,
    part_id: String,
    code: String,
    requirement: String,
    conditions: Vec<String>,
    #[serde(default, deserialize_with = "present")]
    condition_mode: Option<ConditionMode>,
    depends_on: Vec<String>,
    max_marks: Stored<u32>,
    source_page_ids: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StoredDecision {
    criterion_id: String,
    outcome: Outcome,
    reason: String,
    evidence: Vec<Evidence>,
    condition_checks: Vec<ConditionCheck>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportedScore {
    awarded: Number,
}

/// The engine's report on the question (or the report of a question whose page was not scanned).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StoredResult {
    label: String,
    // Read so that an unreadable one is an error; the row holds the status and score used.
    #[serde(rename = "status")]
    _status: ResultStatus,
    #[serde(rename = "score")]
    _score: Score,
    parts: Vec<PartScore>,
    criteria: Vec<CriterionResult>,
    review_flags: Vec<ReviewFlag>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ResultStatus {
    Completed,
    NeedsReview,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CriterionResult {
    id: String,
    code: String,
    submitted: Outcome,
    effective: Outcome,
    flags: Vec<String>,
}

/// One placement of the marker's run record.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlacementRecord {
    criterion_id: String,
    page_id: String,
    #[serde(flatten)]
    placement: EvidencePlacement,
}

/// A stored document: `None` when it is the empty object of a question not marked.
fn document<T: DeserializeOwned>(what: &'static str, text: &str) -> Result<Option<T>, MarkedError> {
    let value: Value = serde_json::from_str(text).map_err(|e| MarkedError::unreadable(what, e))?;
    if value.as_object().is_some_and(Map::is_empty) {
        return Ok(None);
    }
    T::deserialize(&value)
        .map(Some)
        .map_err(|e| MarkedError::unreadable(what, e))
}

/// A stored document, read as JSON first: a key written twice counts once, its last value.
fn parse<T: DeserializeOwned>(what: &'static str, text: &str) -> Result<T, MarkedError> {
    let value: Value = serde_json::from_str(text).map_err(|e| MarkedError::unreadable(what, e))?;
    T::deserialize(&value).map_err(|e| MarkedError::unreadable(what, e))
}

impl MarkerSource {
    /// A source as stored (a marking session's, or who marked an automated question).
    pub fn from_json(text: &str) -> Result<MarkerSource, MarkedError> {
        parse("source", text)
    }
}

impl MarkerRun {
    /// A run record as stored: a JSON object.
    pub fn from_json(text: &str) -> Result<MarkerRun, MarkedError> {
        Ok(MarkerRun {
            record: parse("marker run record", text)?,
        })
    }

    /// The vision model's transcription of the answer, part by part, where the record keeps one
    /// (runs recorded before it was kept have none).
    pub fn transcription(&self) -> Result<Option<Transcription>, MarkedError> {
        match self.record.get("transcription") {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(Transcription::read(text))),
            Some(_) => Err(MarkedError::unreadable(
                "marker run record's transcription",
                "it is not text",
            )),
        }
    }

    /// How the marker placed the evidence of `criterion` on `page_id`, where the record says.
    fn placements(&self) -> Result<Vec<PlacementRecord>, MarkedError> {
        match self.record.get("placements") {
            None => Ok(Vec::new()),
            Some(placements) => Vec::<PlacementRecord>::deserialize(placements)
                .map_err(|e| MarkedError::unreadable("marker run record's placements", e)),
        }
    }
}

impl MarkedQuestion {
    /// Reads a stored question. `asset_kinds` gives the kind of each of the session's assets by
    /// id.
    pub fn from_row(
        row: &QuestionRow,
        asset_kinds: &HashMap<String, AssetKind>,
    ) -> Result<MarkedQuestion, MarkedError> {
        let status = row.status;
        let question: Option<StoredQuestion> = document("question", &row.question_json)?;
        let result: Option<StoredResult> = document("result", &row.result_json)?;
        let error = row
            .error_json
            .as_deref()
            .map(|text| parse::<MarkingFailure>("failure", text))
            .transpose()?;
        let marked_by = row
            .marker_json
            .as_deref()
            .map(MarkerSource::from_json)
            .transpose()?;
        let marker_run = row
            .marker_run_json
            .as_deref()
            .map(MarkerRun::from_json)
            .transpose()?;
        let placements = match &marker_run {
            Some(run) => {
                // A transcription that is not text makes the record unreadable.
                run.transcription()?;
                run.placements()?
            }
            None => Vec::new(),
        };
        check_labels(
            &row.label,
            question.as_ref().map(|q| &q.label),
            result.as_ref().map(|r| &r.label),
        )?;
        let mut results: Vec<CriterionResult> = Vec::new();
        let (parts, review_flags) = match result {
            Some(result) => {
                results = result.criteria;
                (Some(result.parts), Some(result.review_flags))
            }
            None => (None, None),
        };
        let FromQuestion {
            sources,
            rubric_parts,
            criteria,
            claims,
            decision_order,
        } = FromQuestion::read(question, &mut results, &placements, asset_kinds)?;
        // Every criterion of the result belongs to the question.
        if let Some(stray) = results.first() {
            return Err(MarkedError::UnmatchedResult(stray.id.clone()));
        }
        let mut marked = MarkedQuestion {
            id: row.id.clone(),
            session_id: row.session_id.clone(),
            label: row.label.clone(),
            status,
            revision: row.revision,
            error,
            marked_by,
            marker_run,
            score: ScoreRange {
                awarded: row.awarded,
                possible: row.possible,
                max: row.max_marks,
            },
            sources,
            rubric_parts,
            parts,
            criteria,
            review_flags,
            claims,
            created_at: row.created_at,
            updated_at: row.updated_at,
            decision_order,
        };
        // Nothing of a question on a page never scanned was marked: every one of its marks is
        // still possible, whatever an older row recorded (it stored none possible).
        if marked.not_scanned() {
            marked.score.possible = marked.score.possible.max(marked.score.max);
        }
        Ok(marked)
    }
}

/// Refuses a question or result stored under another label than the row's.
fn check_labels(
    row: &str,
    question: Option<&String>,
    result: Option<&String>,
) -> Result<(), MarkedError> {
    for (what, label) in [("question", question), ("result", result)] {
        if let Some(label) = label.filter(|l| **l != row) {
            return Err(MarkedError::LabelMismatch {
                row: row.to_owned(),
                what,
                stored: label.clone(),
            });
        }
    }
    Ok(())
}

/// What the stored question gives a [`MarkedQuestion`]: the pages it is marked from, its rubric
/// and criteria with their decisions, what its marker claimed, and the order its decisions are
/// stored in. A question not stored yet gives none of them.
struct FromQuestion {
    sources: SourceDocuments,
    rubric_parts: Vec<RubricPart>,
    criteria: Vec<MarkedCriterion>,
    claims: MarkerClaims,
    decision_order: Vec<usize>,
}

impl FromQuestion {
    /// Reads `question`, taking each criterion's result out of `results`; `asset_kinds` says
    /// which of its files are work and which scheme.
    fn read(
        question: Option<StoredQuestion>,
        results: &mut Vec<CriterionResult>,
        placements: &[PlacementRecord],
        asset_kinds: &HashMap<String, AssetKind>,
    ) -> Result<FromQuestion, MarkedError> {
        let Some(question) = question else {
            return Ok(FromQuestion {
                sources: SourceDocuments {
                    work_asset_ids: Vec::new(),
                    scheme_asset_ids: Vec::new(),
                    page_selections: None,
                },
                rubric_parts: Vec::new(),
                criteria: Vec::new(),
                claims: MarkerClaims::default(),
                decision_order: Vec::new(),
            });
        };
        let (criteria, decision_order) = criteria_of(
            question.rubric.criteria,
            question.decisions,
            results,
            placements,
        )?;
        let of_kind = |kind: AssetKind| -> Vec<String> {
            question
                .page_selections
                .keys()
                .filter(|id| asset_kinds.get(*id) == Some(&kind))
                .cloned()
                .collect()
        };
        let sources = SourceDocuments {
            work_asset_ids: of_kind(AssetKind::Work),
            scheme_asset_ids: of_kind(AssetKind::Scheme),
            page_selections: Some(question.page_selections),
        };
        let claims = MarkerClaims {
            reported_awarded: question.reported_score.map(|r| r.awarded),
            complete: question.complete,
        };
        Ok(FromQuestion {
            sources,
            rubric_parts: question.rubric.parts,
            criteria,
            claims,
            decision_order,
        })
    }
}

/// The rubric's criteria, in rubric order, each with its decision, its result (taken out of
/// `results`) and its evidence's placements; and the rubric position of each decision, in the
/// order the decisions are stored.
fn criteria_of(
    rubric: Vec<StoredCriterion>,
    decisions: Vec<StoredDecision>,
    results: &mut Vec<CriterionResult>,
    placements: &[PlacementRecord],
) -> Result<(Vec<MarkedCriterion>, Vec<usize>), MarkedError> {
    let mut decisions: Vec<Option<StoredDecision>> = decisions.into_iter().map(Some).collect();
    let mut order = vec![usize::MAX; decisions.len()];
    let mut criteria = Vec::with_capacity(rubric.len());
    for (position, c) in rubric.into_iter().enumerate() {
        let stored = decisions
            .iter()
            .position(|d| d.as_ref().is_some_and(|d| d.criterion_id == c.id));
        let Some(decision) = stored.and_then(|k| {
            order[k] = position;
            decisions[k].take()
        }) else {
            return Err(MarkedError::MissingDecision(c.id));
        };
        let Some(k) = results.iter().position(|r| r.id == c.id) else {
            return Err(MarkedError::UnmatchedResult(c.id));
        };
        let result = results.remove(k);
        let evidence = decision
            .evidence
            .into_iter()
            .map(|mut e| {
                e.placement = placements
                    .iter()
                    .find(|p| p.criterion_id == c.id && p.page_id == e.page_id)
                    .map(|p| p.placement.clone());
                e
            })
            .collect();
        // The code the engine scored by is the rubric's.
        if result.code != c.code {
            return Err(MarkedError::UnmatchedResult(c.id));
        }
        criteria.push(MarkedCriterion {
            id: c.id,
            part_id: c.part_id,
            code: c.code,
            requirement: c.requirement,
            conditions: c.conditions,
            condition_mode: c.condition_mode,
            depends_on: c.depends_on,
            max_marks: c.max_marks,
            source_page_ids: c.source_page_ids,
            submitted: result.submitted,
            effective: result.effective,
            flags: result.flags,
            decision: Decision {
                outcome: decision.outcome,
                reason: decision.reason,
                evidence,
                condition_checks: decision.condition_checks,
            },
        });
    }
    if let Some(stray) = decisions.into_iter().flatten().next() {
        return Err(MarkedError::UnknownCriterion(stray.criterion_id));
    }
    Ok((criteria, order))
}
