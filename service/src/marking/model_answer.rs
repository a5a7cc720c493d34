//! `examkit-model-answer-v1`: what a vision-language model answers for one question, the schema
//! it is asked to follow, and reading an answer into typed values.
//!
//! One published source, `schemas/model-answer-v1.schema.json`, is narrowed for each question:
//! `criterionId` and `pageId` become enums of the question's criterion and work page ids,
//! `sourcePageIds` items an enum of its scheme page ids, and `rubric` either `null` (the scheme's
//! criteria were given as text) or the object (a scheme given only as page images). The result
//! stays in the subset that OpenAI-compatible servers accept for structured output.
//!
//! Reading an answer checks it against that narrowed schema first, so that a repair request can
//! name every problem by its JSON pointer; what passes is decoded with serde.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::marker::{Problem, ProblemCode};

/// The published schema.
pub const PUBLISHED: &str = include_str!("../../../schemas/model-answer-v1.schema.json");

/// The name the schema is sent under (`response_format.json_schema.name`).
pub const SCHEMA_NAME: &str = "examkit_model_answer";

/// A model's answer for one question.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelAnswer {
    /// What the student wrote, verbatim.
    pub transcription: String,
    /// The rubric read from scheme pages, or `None` for a structured scheme.
    pub rubric: Option<ModelRubric>,
    /// One decision per criterion.
    pub decisions: Vec<ModelDecision>,
}

/// A rubric read from scheme pages.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelRubric {
    /// The parts.
    pub parts: Vec<ModelPart>,
    /// The criteria, one per mark.
    pub criteria: Vec<ModelCriterion>,
}

/// A part of a rubric read from scheme pages.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelPart {
    /// Its id.
    pub id: String,
    /// Its marks.
    pub max_marks: u32,
}

/// A criterion of a rubric read from scheme pages.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelCriterion {
    /// Its id.
    pub id: String,
    /// Its part.
    pub part_id: String,
    /// Its mark code.
    pub code: String,
    /// What it requires.
    pub requirement: String,
    /// What it depends on.
    pub depends_on: Vec<String>,
    /// The scheme pages it was read from.
    pub source_page_ids: Vec<String>,
}

/// What a model decided of a criterion, as its answer spells it (the schema's `outcome` enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelOutcome {
    /// The student's own work clearly earns the mark.
    Awarded,
    /// It clearly does not, or the answer is blank.
    Withheld,
    /// The model is unsure.
    Uncertain,
}

impl ModelOutcome {
    /// Every outcome, in the schema's order.
    pub const ALL: [ModelOutcome; 3] = [
        ModelOutcome::Awarded,
        ModelOutcome::Withheld,
        ModelOutcome::Uncertain,
    ];

    /// The outcome as the answer and the import question spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ModelOutcome::Awarded => "awarded",
            ModelOutcome::Withheld => "withheld",
            ModelOutcome::Uncertain => "uncertain",
        }
    }
}

/// A decision as the model gives it: the box is a hint.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelDecision {
    /// The criterion.
    pub criterion_id: String,
    /// `awarded`, `withheld` or `uncertain`.
    pub outcome: ModelOutcome,
    /// Why.
    pub reason: String,
    /// The student's words, verbatim; empty for a blank answer.
    pub quote: String,
    /// The work page.
    pub page_id: String,
    /// `[x0, y0, x1, y1]` in thousandths of the displayed page.
    #[serde(rename = "box")]
    pub hint: [u32; 4],
    /// Condition checks.
    pub condition_checks: Vec<ModelCheck>,
}

/// A condition check.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelCheck {
    /// The condition's index.
    pub index: u32,
    /// `met`, `not_met` or `uncertain`.
    pub result: String,
}

/// What one question's schema is narrowed to.
#[derive(Debug, Clone, PartialEq)]
pub struct Narrowing<'a> {
    /// The criterion ids of a structured scheme; `None` for a scheme of pages only, where the
    /// model names its own criteria in its rubric.
    pub criterion_ids: Option<Vec<&'a str>>,
    /// The work pages the model may cite.
    pub work_page_ids: Vec<&'a str>,
    /// The scheme pages a rubric may cite.
    pub scheme_page_ids: Vec<&'a str>,
}

fn published() -> Value {
    // The published schema is part of the binary and tested to parse: `Null` cannot happen.
    serde_json::from_str(PUBLISHED).unwrap_or(Value::Null)
}

/// The schema for one question: the published one narrowed as [`Narrowing`] says, without the
/// keywords that only document it (`$schema`, `$id`, `title`, `examples`).
pub fn schema_for(narrowing: &Narrowing<'_>) -> Value {
    let mut schema = published();
    if let Some(object) = schema.as_object_mut() {
        for key in ["$schema", "$id", "title", "examples"] {
            object.remove(key);
        }
    }
    let props = &mut schema["properties"];
    match &narrowing.criterion_ids {
        Some(ids) => {
            props["rubric"] = json!({
                "description": "Always null: the scheme's criteria are given as text.",
                "type": "null",
            });
            props["decisions"]["items"]["properties"]["criterionId"]["enum"] = json!(ids);
            props["decisions"]["minItems"] = json!(ids.len());
            props["decisions"]["maxItems"] = json!(ids.len());
        }
        None => {
            props["rubric"]["type"] = json!("object");
            props["rubric"]["properties"]["criteria"]["items"]["properties"]["sourcePageIds"]["items"]
                ["enum"] = json!(narrowing.scheme_page_ids);
        }
    }
    props["decisions"]["items"]["properties"]["pageId"]["enum"] = json!(narrowing.work_page_ids);
    schema
}

/// Strips a Markdown code fence around a JSON answer (models asked for JSON without a schema
/// sometimes add one).
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

/// A problem's message, at most 300 characters: schema messages repeat the model's values.
fn shortened(message: &str) -> String {
    let mut short: String = message.chars().take(300).collect();
    if message.chars().count() > 300 {
        short.push('…');
    }
    short
}

/// Reads a model's answer: JSON, valid against `schema` (at most 50 problems reported, each
/// message shortened), then typed.
pub fn read(text: &str, schema: &Value) -> Result<ModelAnswer, Vec<Problem>> {
    let value: Value = serde_json::from_str(unfenced(text)).map_err(|e| {
        vec![Problem {
            code: ProblemCode::InvalidJson,
            path: String::new(),
            message: format!("the answer is not JSON: {e}"),
        }]
    })?;
    let validator = jsonschema::validator_for(schema).map_err(|e| {
        vec![Problem {
            code: ProblemCode::Schema,
            path: String::new(),
            message: format!("the answer's schema cannot be compiled: {e}"),
        }]
    })?;
    let problems: Vec<Problem> = validator
        .iter_errors(&value)
        .take(50)
        .map(|e| Problem {
            code: ProblemCode::Schema,
            path: e.instance_path().to_string(),
            message: shortened(&e.to_string()),
        })
        .collect();
    if !problems.is_empty() {
        return Err(problems);
    }
    serde_json::from_value(value).map_err(|e| {
        vec![Problem {
            code: ProblemCode::Schema,
            path: String::new(),
            message: format!("the answer does not have the schema's shape: {e}"),
        }]
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn structured() -> Narrowing<'static> {
        Narrowing {
            criterion_ids: Some(vec!["q1-M1", "q1-A1"]),
            work_page_ids: vec!["w:p1", "w:p2"],
            scheme_page_ids: vec!["s:p1"],
        }
    }

    fn pages_only() -> Narrowing<'static> {
        Narrowing {
            criterion_ids: None,
            work_page_ids: vec!["w:p1"],
            scheme_page_ids: vec!["s:p1", "s:p2"],
        }
    }

    fn decision(id: &str) -> Value {
        json!({ "criterionId": id, "outcome": "awarded", "reason": "right", "quote": "x = 3",
                "pageId": "w:p1", "box": [100, 200, 300, 250], "conditionChecks": [] })
    }

    /// Walks a schema and collects every keyword the structured-output subset leaves out.
    fn forbidden(schema: &Value, at: &str, found: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                for (key, value) in map {
                    if [
                        "$ref", "pattern", "oneOf", "anyOf", "allOf", "not", "$defs", "format",
                    ]
                    .contains(&key.as_str())
                    {
                        found.push(format!("{at}/{key}"));
                    }
                    forbidden(value, &format!("{at}/{key}"), found);
                }
                if map.get("type") == Some(&json!("object")) {
                    let props: Vec<&String> = map
                        .get("properties")
                        .and_then(Value::as_object)
                        .map(|p| p.keys().collect())
                        .unwrap_or_default();
                    let required: Vec<&str> = map
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    for p in props {
                        if !required.contains(&p.as_str()) {
                            found.push(format!("{at}: {p} is not required"));
                        }
                    }
                    if map.get("additionalProperties") != Some(&json!(false)) {
                        found.push(format!("{at}: additionalProperties is not false"));
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    forbidden(item, &format!("{at}/{i}"), found);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn the_published_schema_is_valid_and_its_examples_pass() {
        let schema: Value = serde_json::from_str(PUBLISHED).unwrap();
        assert!(jsonschema::meta::is_valid(&schema));
        let validator = jsonschema::validator_for(&schema).unwrap();
        let examples = schema["examples"].as_array().unwrap();
        assert_eq!(examples.len(), 2);
        for example in examples {
            assert!(validator.is_valid(example), "{example}");
            let typed: ModelAnswer = serde_json::from_value(example.clone()).unwrap();
            assert!(!typed.decisions.is_empty());
        }
    }

    #[test]
    fn narrowed_schemas_stay_in_the_structured_output_subset() {
        for narrowing in [structured(), pages_only()] {
            let schema = schema_for(&narrowing);
            let mut found = Vec::new();
            forbidden(&schema, "", &mut found);
            assert!(found.is_empty(), "{found:?}");
            assert!(schema.get("examples").is_none() && schema.get("$id").is_none());
        }
    }

    #[test]
    fn a_structured_scheme_fixes_the_ids_and_forbids_a_rubric() {
        let schema = schema_for(&structured());
        let good = json!({ "transcription": "x = 3", "rubric": null,
                           "decisions": [decision("q1-M1"), decision("q1-A1")] });
        let answer = read(&good.to_string(), &schema).unwrap();
        assert_eq!(answer.decisions[1].criterion_id, "q1-A1");
        assert_eq!(answer.decisions[0].hint, [100, 200, 300, 250]);

        let mut unknown = good.clone();
        unknown["decisions"][1]["criterionId"] = json!("q9-B1");
        let problems = read(&unknown.to_string(), &schema).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.path == "/decisions/1/criterionId"),
            "{problems:?}"
        );

        let mut foreign_page = good.clone();
        foreign_page["decisions"][0]["pageId"] = json!("s:p1");
        let problems = read(&foreign_page.to_string(), &schema).unwrap_err();
        assert!(
            problems.iter().any(|p| p.path == "/decisions/0/pageId"),
            "{problems:?}"
        );

        let mut one_missing = good.clone();
        one_missing["decisions"] = json!([decision("q1-M1")]);
        assert!(read(&one_missing.to_string(), &schema).is_err());

        let mut with_rubric = good.clone();
        with_rubric["rubric"] = json!({ "parts": [], "criteria": [] });
        let problems = read(&with_rubric.to_string(), &schema).unwrap_err();
        assert!(problems.iter().any(|p| p.path == "/rubric"), "{problems:?}");
    }

    #[test]
    fn bad_answers_are_problems_with_paths() {
        let schema = schema_for(&structured());
        let problems = read("I think the answer is right.", &schema).unwrap_err();
        assert_eq!(problems[0].code, ProblemCode::InvalidJson);
        let mut bad = json!({ "transcription": "x", "rubric": null,
                              "decisions": [decision("q1-M1"), decision("q1-A1")] });
        bad["decisions"][0]["box"] = json!([0, 0, 2000]);
        bad["decisions"][1]["outcome"] = json!("maybe");
        bad["extra"] = json!(1);
        let problems = read(&bad.to_string(), &schema).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        for path in ["/decisions/0/box", "/decisions/1/outcome", ""] {
            assert!(paths.contains(&path), "{path} in {problems:?}");
        }
    }

    #[test]
    fn a_fenced_answer_is_read() {
        let schema = schema_for(&structured());
        let good = json!({ "transcription": "", "rubric": null,
                           "decisions": [decision("q1-M1"), decision("q1-A1")] });
        let fenced = format!("```json\n{good}\n```");
        assert!(read(&fenced, &schema).is_ok());
    }

    #[test]
    fn a_scheme_of_pages_needs_a_rubric_citing_its_pages() {
        let schema = schema_for(&pages_only());
        let rubric = json!({
            "parts": [{ "id": "a", "maxMarks": 1 }],
            "criteria": [{ "id": "a-B1", "partId": "a", "code": "B1", "requirement": "r",
                           "dependsOn": [], "sourcePageIds": ["s:p2"] }],
        });
        let good =
            json!({ "transcription": "", "rubric": rubric, "decisions": [decision("a-B1")] });
        let answer = read(&good.to_string(), &schema).unwrap();
        assert_eq!(answer.rubric.unwrap().criteria[0].source_page_ids, ["s:p2"]);
        let mut none = good.clone();
        none["rubric"] = Value::Null;
        assert!(read(&none.to_string(), &schema).is_err());
        let mut wrong_page = good.clone();
        wrong_page["rubric"]["criteria"][0]["sourcePageIds"] = json!(["w:p1"]);
        let problems = read(&wrong_page.to_string(), &schema).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.path == "/rubric/criteria/0/sourcePageIds/0"),
            "{problems:?}"
        );
    }

    #[test]
    fn outcomes_read_and_write_as_the_schema_spells_them() {
        for outcome in ModelOutcome::ALL {
            let written = serde_json::to_value(outcome).unwrap();
            assert_eq!(written, json!(outcome.as_str()));
            let read: ModelOutcome = serde_json::from_value(written).unwrap();
            assert_eq!(read, outcome);
        }
        let schema: Value =
            serde_json::from_str(include_str!("../../../schemas/model-answer-v1.schema.json"))
                .unwrap();
        let spelt: Vec<&str> = ModelOutcome::ALL.iter().map(|o| o.as_str()).collect();
        let enumerated =
            &schema["properties"]["decisions"]["items"]["properties"]["outcome"]["enum"];
        assert_eq!(enumerated, &json!(spelt));
        for unknown in ["maybe", "Awarded", ""] {
            assert!(
                serde_json::from_value::<ModelOutcome>(json!(unknown)).is_err(),
                "{unknown}"
            );
        }
    }
}
