//! The check every marker's answer passes before it is saved ([`check_answer`], [`answer_check`]),
//! and the import document and source an answer is scored and saved as.

use crate::marking::failure::FailureCode;
use crate::marking::jobs::JobFailure;
use crate::marking::marker::MarkRequest;
use crate::marking::marker::Scheme;
use crate::marking::marker::{Problem, ProblemCode};
use crate::store::marking::AssetRow;
use crate::store::now_ms;
use crate::store::words::AssetKind;
use examkit_engine::Outcome;
use serde_json::Value;
use serde_json::json;
use std::collections::HashMap;
use std::collections::HashSet;

pub(super) fn assets_json(assets: &[AssetRow]) -> Value {
    Value::Array(
        assets
            .iter()
            .map(|a| json!({ "id": a.id, "kind": a.kind, "pageCount": a.page_count }))
            .collect(),
    )
}

/// The check every marker's answer passes before it is saved, as [`crate::marking::marker::AnswerCheck`]
/// offers it to markers: [`check_answer`] (label, pages, the rubric against a structured scheme,
/// evidence only on the student's pages), then the engine on a one-question submission with the
/// session's assets. Each problem has a code and a JSON pointer.
pub fn answer_check<'a>(
    request: &'a MarkRequest,
    assets: &'a [examkit_engine::Asset],
    marker: &'a str,
) -> impl Fn(&Value) -> Result<(), Vec<Problem>> + Send + Sync + 'a {
    move |question: &Value| {
        check_answer(request, question).map_err(|f| {
            vec![Problem {
                code: ProblemCode::Check(f.code),
                path: String::new(),
                message: f.message,
            }]
        })?;
        let document = document_for(&request.label, question, source_for(marker, "", None));
        let bytes = serde_json::to_vec(&document).unwrap_or_default();
        let outcome = examkit_engine::validate(&bytes, Some(assets));
        match outcome {
            Outcome::Valid(_) => Ok(()),
            Outcome::Invalid(_) => Err(outcome
                .errors()
                .iter()
                .map(|e| Problem {
                    code: ProblemCode::Engine(e.code()),
                    path: e.path.clone(),
                    message: e.message.clone(),
                })
                .collect()),
        }
    }
}

/// The submission's `source` for a marker's answer.
pub(crate) fn source_for(marker: &str, name: &str, model: Option<&str>) -> Value {
    let name = if name.is_empty() { marker } else { name };
    let model = if marker == "builtin" {
        "examkit built-in marker (answer matching)"
    } else {
        model.unwrap_or(marker)
    };
    json!({
        "kind": "ai",
        "name": name,
        "markedAt": crate::store::rfc3339(now_ms()),
        "model": model,
    })
}

/// A one-question submission of a marker's answer, as the engine validates it.
pub(crate) fn document_for(label: &str, question: &Value, source: Value) -> Value {
    let max_marks = question["rubric"]["criteria"]
        .as_array()
        .map_or(0, Vec::len);
    json!({
        "schemaVersion": examkit_engine::SCHEMA_VERSION,
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": source,
        "coverage": { "kind": "partial", "questionLabels": [label], "totalMarks": max_marks },
        "questions": [question],
    })
}

/// What the service checks of every marker's answer before the engine sees it: the label, the
/// rubric against a structured scheme, and evidence only on pages that can be evidence.
pub fn check_answer(request: &MarkRequest, question: &Value) -> Result<(), JobFailure> {
    let refuse =
        |code: FailureCode, message: String| Err(JobFailure::permanent(message).with_code(code));
    if question["label"].as_str() != Some(request.label.as_str()) {
        return refuse(
            FailureCode::MarkerAnswerInvalid,
            format!(
                "the marker answered for label {}, not {}",
                question["label"], request.label
            ),
        );
    }
    if question["pageSelections"] != Value::Object(request.page_selections.clone()) {
        return refuse(
            FailureCode::MarkerAnswerInvalid,
            "the marker's pageSelections are not the question's: a marker cites only the pages it was given".into(),
        );
    }
    if let Scheme::Structured { criteria, .. } = &request.scheme {
        let expected: HashSet<String> = criteria
            .as_array()
            .map(|cs| cs.iter().map(criterion_key).collect())
            .unwrap_or_default();
        let answered: HashSet<String> = question["rubric"]["criteria"]
            .as_array()
            .map(|cs| cs.iter().map(criterion_key).collect())
            .unwrap_or_default();
        if expected != answered {
            return refuse(
                FailureCode::MarkerRubricMismatch,
                "the marker's rubric is not the scheme's: its criteria (ids, parts, codes, requirements, conditions and dependencies) must be exactly the scheme's".into(),
            );
        }
    }
    // Pages that can be evidence of nothing, and blank pages that cannot support an award.
    let flagged: HashMap<&str, &str> = request
        .work_pages
        .iter()
        .filter(|p| !p.evidence)
        .map(|p| {
            (
                p.page_id.as_str(),
                p.flagged.as_deref().unwrap_or("not a student's work"),
            )
        })
        .collect();
    let blank: HashSet<&str> = request
        .work_pages
        .iter()
        .filter(|p| p.blank)
        .map(|p| p.page_id.as_str())
        .collect();
    let empty = Vec::new();
    for decision in question["decisions"].as_array().unwrap_or(&empty) {
        let awarded = decision["outcome"] == "awarded";
        let checks = decision["conditionChecks"].as_array().unwrap_or(&empty);
        let cited = decision["evidence"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .chain(
                checks
                    .iter()
                    .flat_map(|c| c["evidence"].as_array().unwrap_or(&empty)),
            );
        for evidence in cited {
            let page = evidence["pageId"].as_str().unwrap_or("");
            if blank.contains(page) && !awarded {
                continue;
            }
            if let Some(reason) = flagged.get(page) {
                return refuse(
                    FailureCode::EvidenceNotStudentWork,
                    format!(
                        "the marker cites page {} as evidence, but {reason}",
                        evidence["pageId"].as_str().unwrap_or("")
                    ),
                );
            }
        }
    }
    Ok(())
}

/// What of a criterion a marker may not change: everything that decides the score (id, part,
/// code, requirement, conditions and how they combine, dependencies), as one comparable string.
/// Accepted answers and notes are guidance, not rubric, and are left out.
fn criterion_key(c: &Value) -> String {
    let conditions = crate::marking::builtin::strings(&c["conditions"]);
    let mode = match c["conditionMode"].as_str() {
        Some(mode) => mode,
        None if conditions.is_empty() => "",
        None => "all",
    };
    let mut depends = crate::marking::builtin::strings(&c["dependsOn"]);
    depends.sort();
    json!([
        c["id"],
        c["partId"],
        c["code"],
        c["requirement"],
        conditions,
        mode,
        depends
    ])
    .to_string()
}

/// Which kind of file each asset of a session is.
pub fn asset_kinds(assets: &[AssetRow]) -> HashMap<String, AssetKind> {
    assets.iter().map(|a| (a.id.clone(), a.kind)).collect()
}
