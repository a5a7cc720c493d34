//! The body of `POST /v1/class-sets`, read field by field so that every problem is reported at
//! once at its JSON Pointer:
//!
//! ```json
//! {"paperId": "<uuid>", "revision": 2, "title": "12B mock", "copies": 30}
//! {"paperId": "<uuid>", "revision": 2, "roster": [{"name": "Ada Lovelace", "candidateNumber": "0417"}]}
//! ```
//!
//! Exactly one of `copies` (1 to [`MAX_COPIES`] numbered copies) and `roster` (1 to
//! [`MAX_COPIES`] students, copy *n* being the *n*-th student) is given. A name is 1 to
//! [`MAX_NAME_CHARS`] characters and a candidate number 1 to [`MAX_CANDIDATE_NUMBER_CHARS`], as
//! sent; neither holds a control character or is only spaces, and both are kept without their
//! surrounding spaces. Two students may share a name, never a candidate number. `title` is
//! optional (the paper's title otherwise), with the rules of every other title.

use serde_json::{Map, Value};

use super::{MAX_CANDIDATE_NUMBER_CHARS, MAX_COPIES, MAX_NAME_CHARS, MAX_TITLE_CHARS};

/// A class set to make, as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewClassSet {
    /// The paper's id, lowercase hyphenated.
    pub paper_id: String,
    /// The paper revision to print.
    pub revision: i64,
    /// The set's own title, when given.
    pub title: Option<String>,
    /// The copies, numbered 1, 2, 3… in print order.
    pub copies: Vec<examkit_pdf::CopyLabel>,
}

/// One problem with the body: where (a JSON Pointer), a stable code, and a sentence; the
/// service's one field error, by the name the class-set rooms use.
pub use crate::fields::FieldError as Problem;

pub(super) fn problem(path: &str, code: &'static str, message: impl Into<String>) -> Problem {
    Problem::new(path, code, message)
}

/// Reads the body (already parsed as JSON): the set to make, or every problem.
pub fn parse_new(body: &Value) -> Result<NewClassSet, Vec<Problem>> {
    let mut problems = Vec::new();
    let Some(object) = body.as_object() else {
        return Err(vec![problem("", "type", "the body must be a JSON object")]);
    };
    for key in object.keys() {
        if !["paperId", "revision", "title", "copies", "roster"].contains(&key.as_str()) {
            problems.push(problem(
                &format!("/{}", pointer_token(key)),
                "unknown_field",
                format!("{key:?} is not a field of a class set"),
            ));
        }
    }
    let paper_id = paper_id(object, &mut problems);
    let revision = revision(object, &mut problems);
    let title = match object.get("title") {
        None => None,
        Some(value) => text(value, "/title", "title", MAX_TITLE_CHARS, &mut problems),
    };
    let copies = match (object.get("copies"), object.get("roster")) {
        (Some(_), Some(_)) => {
            problems.push(problem(
                "/roster",
                "conflict",
                "give either copies (numbered copies) or roster (named copies), not both",
            ));
            None
        }
        (None, None) => {
            problems.push(problem(
                "/copies",
                "required",
                "give copies (a number of copies) or roster (a list of students)",
            ));
            None
        }
        (Some(count), None) => numbered(count, &mut problems),
        (None, Some(roster)) => named(roster, &mut problems),
    };
    match (paper_id, revision, copies) {
        (Some(paper_id), Some(revision), Some(copies)) if problems.is_empty() => Ok(NewClassSet {
            paper_id,
            revision,
            title,
            copies,
        }),
        _ => Err(problems),
    }
}

fn paper_id(object: &Map<String, Value>, problems: &mut Vec<Problem>) -> Option<String> {
    match object.get("paperId") {
        None => {
            problems.push(problem("/paperId", "required", "paperId is required"));
            None
        }
        Some(Value::String(s)) => match uuid::Uuid::try_parse(s) {
            Ok(id) if s.len() == 36 => Some(id.hyphenated().to_string()),
            _ => {
                problems.push(problem("/paperId", "format", "paperId must be a UUID"));
                None
            }
        },
        Some(_) => {
            problems.push(problem("/paperId", "type", "paperId must be a string"));
            None
        }
    }
}

fn revision(object: &Map<String, Value>, problems: &mut Vec<Problem>) -> Option<i64> {
    match object.get("revision") {
        None => {
            problems.push(problem("/revision", "required", "revision is required"));
            None
        }
        Some(value) => match integer(value) {
            Some(n) if n >= 1 => Some(n),
            Some(_) => {
                problems.push(problem("/revision", "minimum", "revision is at least 1"));
                None
            }
            None => {
                problems.push(problem("/revision", "type", "revision must be an integer"));
                None
            }
        },
    }
}

/// `copies`: numbered copies 1 to n.
fn numbered(value: &Value, problems: &mut Vec<Problem>) -> Option<Vec<examkit_pdf::CopyLabel>> {
    let Some(count) = integer(value) else {
        problems.push(problem("/copies", "type", "copies must be an integer"));
        return None;
    };
    if count < 1 {
        problems.push(problem("/copies", "minimum", "copies is at least 1"));
        return None;
    }
    if count > i64::from(MAX_COPIES) {
        problems.push(problem(
            "/copies",
            "maximum",
            format!("a class set prints at most {MAX_COPIES} copies"),
        ));
        return None;
    }
    Some(
        (1..=count as u32)
            .map(|copy| examkit_pdf::CopyLabel {
                copy,
                name: None,
                candidate_number: None,
            })
            .collect(),
    )
}

/// `roster`: one named copy per student, in roster order.
fn named(value: &Value, problems: &mut Vec<Problem>) -> Option<Vec<examkit_pdf::CopyLabel>> {
    let Some(students) = value.as_array() else {
        problems.push(problem(
            "/roster",
            "type",
            "roster must be an array of students",
        ));
        return None;
    };
    if students.is_empty() {
        problems.push(problem(
            "/roster",
            "min_items",
            "the roster names at least one student",
        ));
        return None;
    }
    if students.len() > MAX_COPIES as usize {
        problems.push(problem(
            "/roster",
            "max_items",
            format!("a roster names at most {MAX_COPIES} students"),
        ));
        return None;
    }
    let before = problems.len();
    let mut copies = Vec::with_capacity(students.len());
    let mut numbers: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, student) in students.iter().enumerate() {
        let at = format!("/roster/{i}");
        let Some(fields) = student.as_object() else {
            problems.push(problem(
                &at,
                "type",
                "a student must be an object with a name",
            ));
            continue;
        };
        for key in fields.keys() {
            if !["name", "candidateNumber"].contains(&key.as_str()) {
                problems.push(problem(
                    &format!("{at}/{}", pointer_token(key)),
                    "unknown_field",
                    format!("{key:?} is not a field of a student"),
                ));
            }
        }
        let name = match fields.get("name") {
            None => {
                problems.push(problem(
                    &format!("{at}/name"),
                    "required",
                    "name is required",
                ));
                None
            }
            Some(value) => text(
                value,
                &format!("{at}/name"),
                "name",
                MAX_NAME_CHARS,
                problems,
            ),
        };
        let number = match fields.get("candidateNumber") {
            None | Some(Value::Null) => None,
            Some(value) => {
                let path = format!("{at}/candidateNumber");
                let number = text(
                    value,
                    &path,
                    "candidateNumber",
                    MAX_CANDIDATE_NUMBER_CHARS,
                    problems,
                );
                if let Some(number) = &number
                    && let Some(first) = numbers.insert(number.clone(), i)
                {
                    problems.push(problem(
                        &path,
                        "duplicate_candidate_number",
                        format!("candidate number {number:?} is already student {first}'s"),
                    ));
                }
                number
            }
        };
        copies.push(examkit_pdf::CopyLabel {
            copy: i as u32 + 1,
            name,
            candidate_number: number,
        });
    }
    (problems.len() == before).then_some(copies)
}

/// A title-like text: 1 to `max` characters as sent, no control character, not only spaces;
/// kept without its surrounding spaces.
pub(super) fn text(
    value: &Value,
    path: &str,
    name: &str,
    max: usize,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    let Value::String(s) = value else {
        problems.push(problem(path, "type", format!("{name} must be a string")));
        return None;
    };
    let chars = s.chars().count();
    if chars == 0 {
        problems.push(problem(path, "min_length", format!("{name} is empty")));
    } else if chars > max {
        problems.push(problem(
            path,
            "max_length",
            format!("{name} is longer than {max} characters"),
        ));
    } else if s.chars().any(char::is_control) {
        problems.push(problem(
            path,
            "control_character",
            format!("{name} holds a control character"),
        ));
    } else if s.trim().is_empty() {
        problems.push(problem(path, "blank", format!("{name} is only spaces")));
    } else {
        return Some(s.trim().to_owned());
    }
    None
}

/// An integer, including a number whose fractional part is zero (as JSON Schema reads one).
pub(super) fn integer(value: &Value) -> Option<i64> {
    if let Some(n) = value.as_i64() {
        return Some(n);
    }
    let f = value.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

/// A JSON Pointer token: `~` as `~0`, `/` as `~1` (the engine's, as every surface writes them).
pub(super) use examkit_engine::pointer_token;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PAPER: &str = "0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d";

    fn codes(body: Value) -> Vec<(String, &'static str)> {
        parse_new(&body)
            .expect_err("refused")
            .into_iter()
            .map(|p| (p.path, p.code))
            .collect()
    }

    #[test]
    fn numbered_copies_are_numbered_from_one() {
        let set =
            parse_new(&json!({"paperId": PAPER, "revision": 2.0, "copies": 3})).expect("valid");
        assert_eq!(set.paper_id, PAPER);
        assert_eq!(set.revision, 2);
        assert_eq!(set.title, None);
        let numbers: Vec<u32> = set.copies.iter().map(|c| c.copy).collect();
        assert_eq!(numbers, [1, 2, 3]);
        assert!(set.copies.iter().all(|c| c.name.is_none()));
        let most = parse_new(&json!({"paperId": PAPER, "revision": 1, "copies": MAX_COPIES}))
            .expect("valid");
        assert_eq!(most.copies.len(), MAX_COPIES as usize);
    }

    #[test]
    fn a_roster_names_copies_in_order_trimmed() {
        let set = parse_new(&json!({
            "paperId": PAPER.to_uppercase(), "revision": 1, "title": "  12B mock ",
            "roster": [
                {"name": "  Ada Lovelace ", "candidateNumber": "0417"},
                {"name": "=HYPERLINK(\"x\")"},
                {"name": "Ada Lovelace", "candidateNumber": null}
            ]
        }))
        .expect("valid");
        assert_eq!(set.paper_id, PAPER, "the id is kept lowercase");
        assert_eq!(set.title.as_deref(), Some("12B mock"));
        let copies: Vec<(u32, Option<&str>, Option<&str>)> = set
            .copies
            .iter()
            .map(|c| (c.copy, c.name.as_deref(), c.candidate_number.as_deref()))
            .collect();
        assert_eq!(
            copies,
            [
                (1, Some("Ada Lovelace"), Some("0417")),
                (2, Some("=HYPERLINK(\"x\")"), None),
                (3, Some("Ada Lovelace"), None),
            ]
        );
    }

    #[test]
    fn every_problem_is_reported_at_its_field() {
        assert_eq!(codes(json!([])), [("".to_owned(), "type")]);
        assert_eq!(
            codes(json!({})),
            [
                ("/paperId".to_owned(), "required"),
                ("/revision".to_owned(), "required"),
                ("/copies".to_owned(), "required"),
            ]
        );
        assert_eq!(
            codes(json!({"paperId": "nope", "revision": 0, "copies": 2, "roster": [], "x/y": 1})),
            [
                ("/x~1y".to_owned(), "unknown_field"),
                ("/paperId".to_owned(), "format"),
                ("/revision".to_owned(), "minimum"),
                ("/roster".to_owned(), "conflict"),
            ]
        );
        let base = |extra: Value| {
            let mut body = json!({"paperId": PAPER, "revision": 1});
            if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
                body.extend(extra.clone());
            }
            codes(body)
        };
        assert_eq!(
            base(json!({"copies": 0})),
            [("/copies".to_owned(), "minimum")]
        );
        assert_eq!(
            base(json!({"copies": 301})),
            [("/copies".to_owned(), "maximum")]
        );
        assert_eq!(
            base(json!({"copies": 2.5})),
            [("/copies".to_owned(), "type")]
        );
        assert_eq!(
            base(json!({"copies": "30"})),
            [("/copies".to_owned(), "type")]
        );
        assert_eq!(
            base(json!({"roster": {}})),
            [("/roster".to_owned(), "type")]
        );
        assert_eq!(
            base(json!({"roster": []})),
            [("/roster".to_owned(), "min_items")]
        );
        let many: Vec<Value> = (0..301).map(|i| json!({"name": format!("S{i}")})).collect();
        assert_eq!(
            base(json!({"roster": many})),
            [("/roster".to_owned(), "max_items")]
        );
        assert_eq!(
            base(json!({"copies": 1, "title": ""})),
            [("/title".to_owned(), "min_length")]
        );
        assert_eq!(
            base(json!({"roster": [
                "Ada",
                {},
                {"name": ""},
                {"name": "x".repeat(121)},
                {"name": "Tab\tName"},
                {"name": "   "},
                {"name": 7},
                {"name": "Ok", "candidateNumber": "1", "seat": 4},
                {"name": "Dup", "candidateNumber": "1"},
                {"name": "Long", "candidateNumber": "1".repeat(21)},
                {"name": "Del", "candidateNumber": "12\u{7f}"},
                {"name": "é".repeat(120)}
            ]})),
            [
                ("/roster/0".to_owned(), "type"),
                ("/roster/1/name".to_owned(), "required"),
                ("/roster/2/name".to_owned(), "min_length"),
                ("/roster/3/name".to_owned(), "max_length"),
                ("/roster/4/name".to_owned(), "control_character"),
                ("/roster/5/name".to_owned(), "blank"),
                ("/roster/6/name".to_owned(), "type"),
                ("/roster/7/seat".to_owned(), "unknown_field"),
                (
                    "/roster/8/candidateNumber".to_owned(),
                    "duplicate_candidate_number"
                ),
                ("/roster/9/candidateNumber".to_owned(), "max_length"),
                ("/roster/10/candidateNumber".to_owned(), "control_character"),
            ],
            "a 120-character name of two-byte characters is within the limit"
        );
    }
}
