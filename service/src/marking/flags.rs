//! Why a person must look at a marked question whatever its decisions say: the marker's review
//! flags.
//!
//! The engine raises review flags from the decisions (an `uncertain` outcome, a condition not
//! checked). Some reasons to doubt a marker's answer are not in its decisions: text addressed to a
//! marker was found on the student's page, the rubric is one the model wrote, two markers
//! disagreed, the marker has not qualified on the reference set, or it drifted on the seeded
//! reference questions. Each is a [`MarkerFlag`]; [`apply`] adds them to the engine's report on
//! the question before it is saved, which makes the question `needs_review`. A person's review
//! scores the question again with the engine alone, so a saved review is the look these flags
//! ask for and they do not outlive it.

use serde::Serialize;
use serde_json::{Value, json};

use crate::store::marking::QuestionData;
use crate::store::words::QuestionStatus;

examkit_engine::code_table! {
    /// A marker flag's stable code, published in `schemas/openapi.json` (a question's review
    /// flags) and `schemas/README.md`.
    pub enum MarkerFlagCode {
        InstructionsOnPage = "instructions_on_page", "Text addressed to a marker (a request to award, the examiner, instructions) is written on a page of the answer: the awards placed there without their quote found are uncertain.";
        ModelRubric = "model_rubric", "The rubric is the model's own reading of scheme pages: a person accepts it (or withholds what does not belong) before its marks count.";
        MarkersDisagree = "markers_disagree", "Two markers marked the question and disagree on some criteria.";
        MarkerUnqualified = "marker_unqualified", "The marker has no saved qualification at or above the deployment's bar: it marks nothing live.";
        MarkerDrifted = "marker_drifted", "The marker disagreed with the trusted decisions of the seeded reference questions beyond the bar: live marking is stopped until it is qualified again.";
    }
}

/// One reason a person must look at the question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MarkerFlag {
    /// The stable code.
    pub code: MarkerFlagCode,
    /// JSON Pointer into the marked question to what raised it (`""`: the whole question).
    pub path: String,
    /// A sentence for people, naming the cause (the page, the markers, the bar).
    pub message: String,
}

impl MarkerFlag {
    /// A flag of the whole question.
    pub fn new(code: MarkerFlagCode, message: impl Into<String>) -> MarkerFlag {
        MarkerFlag {
            code,
            path: String::new(),
            message: message.into(),
        }
    }
}

/// Adds `flags` to the engine's report in `data` (its `reviewFlags`, after the engine's own) and
/// makes the question `needs_review`; nothing changes without flags. An error when the report
/// cannot be read or written back.
pub fn apply(data: &mut QuestionData, flags: &[MarkerFlag]) -> Result<(), String> {
    if flags.is_empty() {
        return Ok(());
    }
    let mut result: Value = serde_json::from_str(&data.result_json)
        .map_err(|e| format!("the engine's report cannot be read: {e}"))?;
    let listed = result
        .get_mut("reviewFlags")
        .and_then(Value::as_array_mut)
        .ok_or("the engine's report has no reviewFlags")?;
    for flag in flags {
        listed.push(json!({ "code": flag.code, "path": flag.path, "message": flag.message }));
    }
    result["status"] = json!("needs_review");
    data.status = QuestionStatus::NeedsReview;
    data.result_json = serde_json::to_string(&result)
        .map_err(|e| format!("the engine's report cannot be written: {e}"))?;
    Ok(())
}

/// The result of a question that is not marked (its page was not scanned, or the marker was held
/// back): nothing awarded, every mark still possible (`0–max`), and one review flag saying why.
pub fn unmarked_result(label: &str, max: i64, code: &str, path: &str, message: &str) -> Value {
    json!({
        "label": label,
        "status": "needs_review",
        "score": { "awarded": 0, "possible": max, "max": max },
        "parts": [],
        "criteria": [],
        "reviewFlags": [{ "code": code, "path": path, "message": message }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completed() -> QuestionData {
        QuestionData {
            label: "1".into(),
            status: QuestionStatus::Completed,
            awarded: 2,
            possible: 2,
            max_marks: 2,
            question_json: "{}".into(),
            result_json: json!({
                "label": "1", "status": "completed",
                "score": { "awarded": 2, "possible": 2, "max": 2 },
                "parts": [], "criteria": [], "reviewFlags": [],
            })
            .to_string(),
        }
    }

    #[test]
    fn flags_make_the_question_need_review_and_keep_the_score() {
        let mut data = completed();
        apply(
            &mut data,
            &[MarkerFlag::new(
                MarkerFlagCode::ModelRubric,
                "the model wrote it",
            )],
        )
        .expect("applies");
        assert_eq!(data.status, QuestionStatus::NeedsReview);
        assert_eq!(data.awarded, 2);
        let result: Value = serde_json::from_str(&data.result_json).expect("json");
        assert_eq!(result["status"], "needs_review");
        assert_eq!(
            result["reviewFlags"],
            json!([{ "code": "model_rubric", "path": "", "message": "the model wrote it" }])
        );
    }

    #[test]
    fn every_code_is_spelled_out_and_read_back() {
        let codes: Vec<&str> = MarkerFlagCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            codes,
            [
                "instructions_on_page",
                "model_rubric",
                "markers_disagree",
                "marker_unqualified",
                "marker_drifted",
            ]
        );
        for &code in MarkerFlagCode::ALL {
            let sent = serde_json::to_string(&code).expect("serialises");
            assert_eq!(sent, format!("\"{}\"", code.as_str()));
            assert_eq!(code.as_str().parse::<MarkerFlagCode>(), Ok(code));
            assert!(!code.meaning().is_empty());
        }
        assert!("page_not_scanned".parse::<MarkerFlagCode>().is_err());
    }

    #[test]
    fn no_flags_change_nothing() {
        let mut data = completed();
        let before = data.clone();
        apply(&mut data, &[]).expect("applies");
        assert_eq!(data, before);
    }

    #[test]
    fn an_unreadable_report_is_an_error() {
        let mut data = completed();
        data.result_json = "[]".into();
        let flag = MarkerFlag::new(MarkerFlagCode::MarkerDrifted, "drifted");
        assert!(apply(&mut data, std::slice::from_ref(&flag)).is_err());
        data.result_json = "not json".into();
        assert!(apply(&mut data, &[flag]).is_err());
    }

    #[test]
    fn the_schemas_readme_lists_exactly_these_codes() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/README.md");
        let readme = std::fs::read_to_string(path).expect("readable");
        let start = readme.find("The marker's flags are").expect("the list");
        let end = start + readme[start..].find("(the table is").expect("its end");
        let listed: std::collections::BTreeSet<&str> =
            readme[start..end].split('`').skip(1).step_by(2).collect();
        let ours: std::collections::BTreeSet<&str> =
            MarkerFlagCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(listed, ours);
        for code in MarkerFlagCode::ALL {
            assert!(
                readme.contains(&format!("| `{code}` |")),
                "{code} has a row in the table"
            );
        }
    }

    #[test]
    fn codes_are_serialised_as_sent() {
        for code in MarkerFlagCode::ALL {
            assert_eq!(json!(code), json!(code.as_str()));
        }
    }
}
