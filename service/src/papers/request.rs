//! The request bodies of the paper routes, checked field by field: `CreatePaper`, `UpdatePaper`
//! and the export preparation's `{}`.
//!
//! Every problem is reported at once, at its JSON Pointer, with a stable code (`required`,
//! `unknown_field`, `type`, `format`, `enum`, `min_length`, `max_length`, `blank`,
//! `control_character`, `min_items`, `max_items`, `minimum`, `maximum`, `duplicate_question`,
//! `no_changes`). Request bodies are strict, as the published schemas say: unknown fields are
//! refused.

use serde_json::{Map, Value};

use examkit_engine::pointer_token;

use crate::fields::{FieldError, json_kind};
use crate::store::papers::{PaperContent, Pin};

/// The longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// The most questions in a paper (the specification's paper workflow limit).
pub const MAX_QUESTIONS: usize = 24;
/// The writing-space values: ruled lines sized from each part's marks, none, or 1 to 3 blank
/// ruled pages after each question.
pub const WRITING_SPACES: [&str; 5] = ["smart", "none", "1-page", "2-pages", "3-pages"];

const CREATE_FIELDS: [&str; 5] = ["id", "title", "questions", "writingSpace", "gradeGuide"];
const UPDATE_FIELDS: [&str; 5] = [
    "revision",
    "title",
    "questions",
    "writingSpace",
    "gradeGuide",
];
const PIN_FIELDS: [&str; 4] = ["questionId", "revision", "contentVersion", "schemeVersion"];

/// A checked `CreatePaper` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatePaper {
    /// The client's paper id, lowercase hyphenated.
    pub id: String,
    /// The content of revision 1.
    pub content: PaperContent,
}

/// A checked `UpdatePaper` body: the current revision and at least one change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdatePaper {
    /// The revision the change is made from.
    pub revision: i64,
    /// A new title.
    pub title: Option<String>,
    /// A new question list.
    pub questions: Option<Vec<Pin>>,
    /// A new writing space.
    pub writing_space: Option<String>,
    /// A new grade-guide option.
    pub grade_guide: Option<bool>,
}

impl UpdatePaper {
    /// The content after applying this change to `current`.
    pub fn apply(&self, current: &PaperContent) -> PaperContent {
        PaperContent {
            title: self.title.clone().unwrap_or_else(|| current.title.clone()),
            writing_space: self
                .writing_space
                .clone()
                .unwrap_or_else(|| current.writing_space.clone()),
            grade_guide: self.grade_guide.unwrap_or(current.grade_guide),
            questions: self
                .questions
                .clone()
                .unwrap_or_else(|| current.questions.clone()),
        }
    }
}

struct Checker {
    errors: Vec<FieldError>,
}

impl Checker {
    fn push(&mut self, path: &str, code: &'static str, message: impl Into<String>) {
        self.errors.push(FieldError::new(path, code, message));
    }

    /// The body as an object, its unknown members reported.
    fn object<'v>(
        &mut self,
        path: &str,
        value: &'v Value,
        what: &str,
        known: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(map) = value.as_object() else {
            self.push(
                path,
                "type",
                format!("{what} must be a JSON object, not {}", json_kind(value)),
            );
            return None;
        };
        for name in map.keys() {
            if !known.contains(&name.as_str()) {
                let expected = if known.is_empty() {
                    "no fields".to_owned()
                } else {
                    known.join(", ")
                };
                self.push(
                    &format!("{path}/{}", pointer_token(name)),
                    "unknown_field",
                    format!("unknown field {name:?} in {what}; it takes {expected}"),
                );
            }
        }
        Some(map)
    }

    fn required<'v>(
        &mut self,
        map: &'v Map<String, Value>,
        path: &str,
        name: &str,
    ) -> Option<&'v Value> {
        let value = map.get(name);
        if value.is_none() {
            self.push(
                &format!("{path}/{name}"),
                "required",
                format!("{name} is required"),
            );
        }
        value
    }

    fn title(&mut self, path: &str, value: &Value) -> Option<String> {
        let Some(text) = value.as_str() else {
            self.push(
                path,
                "type",
                format!("title must be a string, not {}", json_kind(value)),
            );
            return None;
        };
        let chars = text.chars().count();
        if chars == 0 {
            self.push(
                path,
                "min_length",
                format!("title must be 1 to {MAX_TITLE_CHARS} characters, not empty"),
            );
            None
        } else if chars > MAX_TITLE_CHARS {
            self.push(
                path,
                "max_length",
                format!("title must be 1 to {MAX_TITLE_CHARS} characters, not {chars}"),
            );
            None
        } else if text.chars().any(char::is_control) {
            self.push(
                path,
                "control_character",
                "title must not contain control characters (line breaks, tabs and the like)",
            );
            None
        } else if text.trim().is_empty() {
            self.push(path, "blank", "title must not be only spaces");
            None
        } else {
            Some(text.to_owned())
        }
    }

    fn writing_space(&mut self, path: &str, value: &Value) -> Option<String> {
        match value.as_str() {
            Some(s) if WRITING_SPACES.contains(&s) => Some(s.to_owned()),
            Some(s) => {
                self.push(
                    path,
                    "enum",
                    format!(
                        "writingSpace must be one of {}, not {s:?}",
                        WRITING_SPACES.join(", ")
                    ),
                );
                None
            }
            None => {
                self.push(
                    path,
                    "type",
                    format!(
                        "writingSpace must be a string (one of {}), not {}",
                        WRITING_SPACES.join(", "),
                        json_kind(value)
                    ),
                );
                None
            }
        }
    }

    fn boolean(&mut self, path: &str, name: &str, value: &Value) -> Option<bool> {
        let b = value.as_bool();
        if b.is_none() {
            self.push(
                path,
                "type",
                format!("{name} must be true or false, not {}", json_kind(value)),
            );
        }
        b
    }

    fn integer(&mut self, path: &str, name: &str, value: &Value) -> Option<i64> {
        let max = i64::from(u32::MAX);
        match crate::fields::json_integer(value) {
            Some(n) if n < 1 => {
                self.push(
                    path,
                    "minimum",
                    format!("{name} must be at least 1, not {n}"),
                );
                None
            }
            Some(n) if n > max => {
                self.push(path, "maximum", format!("{name} must be at most {max}"));
                None
            }
            Some(n) => Some(n),
            // A whole number too large (or too small) for 64 bits arrives as a float: it is out
            // of range, not of another type.
            None if value.is_u64()
                || value.as_f64().is_some_and(|f| f.fract() == 0.0 && f > 0.0) =>
            {
                self.push(path, "maximum", format!("{name} must be at most {max}"));
                None
            }
            None if value.as_f64().is_some_and(|f| f.fract() == 0.0 && f < 0.0) => {
                self.push(path, "minimum", format!("{name} must be at least 1"));
                None
            }
            None => {
                self.push(
                    path,
                    "type",
                    format!("{name} must be an integer, not {}", json_kind(value)),
                );
                None
            }
        }
    }

    fn uuid(&mut self, path: &str, name: &str, value: &Value) -> Option<String> {
        let Some(text) = value.as_str() else {
            self.push(
                path,
                "type",
                format!("{name} must be a UUID string, not {}", json_kind(value)),
            );
            return None;
        };
        match uuid::Uuid::try_parse(text) {
            Ok(id) if text.len() == 36 => Some(id.hyphenated().to_string()),
            _ => {
                self.push(
                    path,
                    "format",
                    format!("{name} must be a UUID (8-4-4-4-12 hexadecimal digits), not {text:?}"),
                );
                None
            }
        }
    }

    fn version(&mut self, path: &str, name: &str, value: &Value) -> Option<String> {
        match value.as_str() {
            Some(s)
                if s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
            {
                Some(s.to_owned())
            }
            Some(_) => {
                self.push(
                    path,
                    "format",
                    format!(
                        "{name} must be 64 lowercase hexadecimal digits, copied unchanged from the pin"
                    ),
                );
                None
            }
            None => {
                self.push(
                    path,
                    "type",
                    format!("{name} must be a string, not {}", json_kind(value)),
                );
                None
            }
        }
    }

    fn pin(&mut self, path: &str, value: &Value) -> Option<Pin> {
        let map = self.object(path, value, "a pin", &PIN_FIELDS)?;
        let before = self.errors.len();
        let question_id = self
            .required(map, path, "questionId")
            .and_then(|v| self.uuid(&format!("{path}/questionId"), "questionId", v));
        let revision = self
            .required(map, path, "revision")
            .and_then(|v| self.integer(&format!("{path}/revision"), "revision", v));
        let content_version = self
            .required(map, path, "contentVersion")
            .and_then(|v| self.version(&format!("{path}/contentVersion"), "contentVersion", v));
        let scheme_version = self
            .required(map, path, "schemeVersion")
            .and_then(|v| self.version(&format!("{path}/schemeVersion"), "schemeVersion", v));
        if self.errors.len() != before {
            return None;
        }
        Some(Pin {
            question_id: question_id?,
            revision: revision?,
            content_version: content_version?,
            scheme_version: scheme_version?,
        })
    }

    fn questions(&mut self, path: &str, value: &Value) -> Option<Vec<Pin>> {
        let Some(items) = value.as_array() else {
            self.push(
                path,
                "type",
                format!(
                    "questions must be an array of pins, not {}",
                    json_kind(value)
                ),
            );
            return None;
        };
        if items.is_empty() {
            self.push(
                path,
                "min_items",
                format!("questions must hold 1 to {MAX_QUESTIONS} pins, not none"),
            );
            return None;
        }
        if items.len() > MAX_QUESTIONS {
            self.push(
                path,
                "max_items",
                format!(
                    "questions may hold at most {MAX_QUESTIONS} pins, not {}",
                    items.len()
                ),
            );
            return None;
        }
        let before = self.errors.len();
        let mut pins: Vec<Pin> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_path = format!("{path}/{i}");
            if let Some(pin) = self.pin(&item_path, item) {
                if let Some(first) = pins.iter().position(|p| p.question_id == pin.question_id) {
                    self.push(
                        &format!("{item_path}/questionId"),
                        "duplicate_question",
                        format!(
                            "question {} is already in the paper at {path}/{first}; a paper holds each question once",
                            pin.question_id
                        ),
                    );
                }
                pins.push(pin);
            }
        }
        (self.errors.len() == before).then_some(pins)
    }
}

/// Checks a `CreatePaper` body.
pub fn create(body: &Value) -> Result<CreatePaper, Vec<FieldError>> {
    let mut c = Checker { errors: Vec::new() };
    let Some(map) = c.object("", body, "the body", &CREATE_FIELDS) else {
        return Err(c.errors);
    };
    let id = c
        .required(map, "", "id")
        .and_then(|v| c.uuid("/id", "id", v));
    let title = c
        .required(map, "", "title")
        .and_then(|v| c.title("/title", v));
    let questions = c
        .required(map, "", "questions")
        .and_then(|v| c.questions("/questions", v));
    let writing_space = c
        .required(map, "", "writingSpace")
        .and_then(|v| c.writing_space("/writingSpace", v));
    let grade_guide = c
        .required(map, "", "gradeGuide")
        .and_then(|v| c.boolean("/gradeGuide", "gradeGuide", v));
    match (id, title, questions, writing_space, grade_guide) {
        (Some(id), Some(title), Some(questions), Some(writing_space), Some(grade_guide))
            if c.errors.is_empty() =>
        {
            Ok(CreatePaper {
                id,
                content: PaperContent {
                    title,
                    writing_space,
                    grade_guide,
                    questions,
                },
            })
        }
        _ => Err(c.errors),
    }
}

/// Checks an `UpdatePaper` body: `revision` (the current one) and at least one of `title`,
/// `questions`, `writingSpace` and `gradeGuide`; fields not sent keep their values.
pub fn update(body: &Value) -> Result<UpdatePaper, Vec<FieldError>> {
    let mut c = Checker { errors: Vec::new() };
    let Some(map) = c.object("", body, "the body", &UPDATE_FIELDS) else {
        return Err(c.errors);
    };
    let revision = c
        .required(map, "", "revision")
        .and_then(|v| c.integer("/revision", "revision", v));
    let title = map.get("title").and_then(|v| c.title("/title", v));
    let questions = map
        .get("questions")
        .and_then(|v| c.questions("/questions", v));
    let writing_space = map
        .get("writingSpace")
        .and_then(|v| c.writing_space("/writingSpace", v));
    let grade_guide = map
        .get("gradeGuide")
        .and_then(|v| c.boolean("/gradeGuide", "gradeGuide", v));
    if !UPDATE_FIELDS[1..].iter().any(|f| map.contains_key(*f)) {
        c.push(
            "",
            "no_changes",
            "send the current revision and at least one of title, questions, writingSpace and gradeGuide",
        );
    }
    match revision {
        Some(revision) if c.errors.is_empty() => Ok(UpdatePaper {
            revision,
            title,
            questions,
            writing_space,
            grade_guide,
        }),
        _ => Err(c.errors),
    }
}

/// Checks the export preparation body, which must be the empty object `{}`.
pub fn export(body: &Value) -> Result<(), Vec<FieldError>> {
    let mut c = Checker { errors: Vec::new() };
    c.object("", body, "the body", &[]);
    if c.errors.is_empty() {
        Ok(())
    } else {
        Err(c.errors)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const Q1: &str = "6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f";
    const Q2: &str = "0b6a0d5e-7f0c-4f5a-8e4d-2c1b0a9f8e7d";

    fn pin(id: &str) -> Value {
        json!({
            "questionId": id,
            "revision": 1,
            "contentVersion": "a".repeat(64),
            "schemeVersion": "b".repeat(64),
        })
    }

    fn body() -> Value {
        json!({
            "id": "3F2A9C1E-5B7D-4E8A-9C0F-1D2E3F4A5B6C",
            "title": "Mock paper",
            "questions": [pin(Q1), pin(Q2)],
            "writingSpace": "smart",
            "gradeGuide": true,
        })
    }

    fn codes(errors: Vec<FieldError>) -> Vec<(String, &'static str)> {
        errors.into_iter().map(|e| (e.path, e.code)).collect()
    }

    #[test]
    fn a_good_body_is_normalised() {
        let paper = create(&body()).expect("valid");
        assert_eq!(paper.id, "3f2a9c1e-5b7d-4e8a-9c0f-1d2e3f4a5b6c");
        assert_eq!(paper.content.questions.len(), 2);
        assert_eq!(paper.content.questions[1].question_id, Q2);
        assert!(paper.content.grade_guide);
    }

    #[test]
    fn pin_revisions_beyond_the_bound_are_too_large_whatever_their_size() {
        for (text, code) in [
            ("274877906945", "maximum"),
            ("18446744073709551615", "maximum"),
            ("5844451374501586565622398976", "maximum"),
            ("-5844451374501586565622398976", "minimum"),
            ("1.5", "type"),
        ] {
            let mut body = body();
            body["questions"][0]["revision"] = serde_json::from_str(text).expect("a JSON number");
            let errors = create(&body).expect_err("refused");
            assert_eq!(
                codes(errors),
                [("/questions/0/revision".to_owned(), code)],
                "{text}"
            );
        }
        let mut body = body();
        body["questions"][0]["revision"] = json!(4_294_967_296_u64);
        let errors = create(&body).expect_err("refused");
        assert_eq!(errors[0].message, "revision must be at most 4294967295");
    }

    #[test]
    fn every_bad_field_is_reported_at_its_pointer() {
        let bad = json!({
            "id": "not-a-uuid",
            "title": "",
            "questions": [pin(Q1), {"questionId": Q1, "revision": 0, "contentVersion": "A".repeat(64), "schemeVersion": 5, "x": 1}],
            "writingSpace": "4-pages",
            "gradeGuide": "yes",
            "colour": "red",
        });
        assert_eq!(
            codes(create(&bad).expect_err("invalid")),
            [
                ("/colour".to_owned(), "unknown_field"),
                ("/id".to_owned(), "format"),
                ("/title".to_owned(), "min_length"),
                ("/questions/1/x".to_owned(), "unknown_field"),
                ("/questions/1/revision".to_owned(), "minimum"),
                ("/questions/1/contentVersion".to_owned(), "format"),
                ("/questions/1/schemeVersion".to_owned(), "type"),
                ("/writingSpace".to_owned(), "enum"),
                ("/gradeGuide".to_owned(), "type"),
            ]
        );
        assert_eq!(
            codes(create(&json!({})).expect_err("invalid")),
            [
                ("/id".to_owned(), "required"),
                ("/title".to_owned(), "required"),
                ("/questions".to_owned(), "required"),
                ("/writingSpace".to_owned(), "required"),
                ("/gradeGuide".to_owned(), "required"),
            ]
        );
        assert_eq!(
            codes(create(&json!([1])).expect_err("invalid")),
            [("".to_owned(), "type")]
        );
    }

    #[test]
    fn titles_and_question_lists_are_bounded() {
        let with = |field: &str, value: Value| {
            let mut b = body();
            b[field] = value;
            codes(create(&b).expect_err("invalid"))
        };
        let long = "x".repeat(MAX_TITLE_CHARS + 1);
        assert_eq!(
            with("title", json!(long)),
            [("/title".to_owned(), "max_length")]
        );
        assert_eq!(
            with("title", json!("line\nbreak")),
            [("/title".to_owned(), "control_character")]
        );
        assert_eq!(
            with("title", json!("   ")),
            [("/title".to_owned(), "blank")]
        );
        assert_eq!(with("title", json!(7)), [("/title".to_owned(), "type")]);
        assert!(
            create(&{
                let mut b = body();
                b["title"] = json!("é".repeat(MAX_TITLE_CHARS));
                b
            })
            .is_ok()
        );
        assert_eq!(
            with("questions", json!([])),
            [("/questions".to_owned(), "min_items")]
        );
        let many: Vec<Value> = (0..=MAX_QUESTIONS)
            .map(|i| pin(&format!("00000000-0000-4000-8000-{i:012}")))
            .collect();
        assert_eq!(
            with("questions", json!(many)),
            [("/questions".to_owned(), "max_items")]
        );
        assert_eq!(
            with("questions", json!([pin(Q1), pin(Q2), pin(Q1)])),
            [("/questions/2/questionId".to_owned(), "duplicate_question")]
        );
        assert_eq!(
            with("questions", json!({"0": pin(Q1)})),
            [("/questions".to_owned(), "type")]
        );
        assert_eq!(
            with("questions", json!([5])),
            [("/questions/0".to_owned(), "type")]
        );
        let mut big = pin(Q1);
        big["revision"] = json!(u64::MAX);
        assert_eq!(
            with("questions", json!([big])),
            [("/questions/0/revision".to_owned(), "maximum")]
        );
        let mut fractional = pin(Q1);
        fractional["revision"] = json!(1.5);
        assert_eq!(
            with("questions", json!([fractional])),
            [("/questions/0/revision".to_owned(), "type")]
        );
    }

    #[test]
    fn updates_need_the_revision_and_a_change() {
        let change = update(&json!({"revision": 3, "title": "New"})).expect("valid");
        assert_eq!(change.revision, 3);
        assert_eq!(change.title.as_deref(), Some("New"));
        assert_eq!(change.questions, None);
        assert_eq!(
            codes(update(&json!({"revision": 3})).expect_err("invalid")),
            [("".to_owned(), "no_changes")]
        );
        assert_eq!(
            codes(update(&json!({"title": "New"})).expect_err("invalid")),
            [("/revision".to_owned(), "required")]
        );
        assert_eq!(
            codes(
                update(&json!({"revision": "3", "id": Q1, "gradeGuide": null}))
                    .expect_err("invalid")
            ),
            [
                ("/id".to_owned(), "unknown_field"),
                ("/revision".to_owned(), "type"),
                ("/gradeGuide".to_owned(), "type"),
            ]
        );
        let current = create(&body()).expect("valid").content;
        let applied = update(&json!({"revision": 1, "writingSpace": "none"}))
            .expect("valid")
            .apply(&current);
        assert_eq!(applied.writing_space, "none");
        assert_eq!(applied.title, current.title);
        assert_eq!(applied.questions, current.questions);
    }

    #[test]
    fn export_bodies_are_empty_objects() {
        assert!(export(&json!({})).is_ok());
        assert_eq!(
            codes(export(&json!({"kind": "pdf"})).expect_err("invalid")),
            [("/kind".to_owned(), "unknown_field")]
        );
        assert_eq!(
            codes(export(&json!(null)).expect_err("invalid")),
            [("".to_owned(), "type")]
        );
    }
}
