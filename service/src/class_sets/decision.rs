//! The body of `POST /v1/class-sets/{id}/decisions` (and the app's decision forms, whose fields
//! are read as the same [`Fields`]): what a person decided about a page or a copy of the stack,
//! read field by field (every problem at once, at its JSON Pointer), then checked against the
//! stack as it stands.
//!
//! ```json
//! {"kind": "place",   "file": "<file id>", "page": 7, "copy": 12, "copyPage": 3}
//! {"kind": "choose",  "file": "<file id>", "page": 9}
//! {"kind": "extra",   "file": "<file id>", "page": 2, "copy": 12, "question": "4(b)"}
//! {"kind": "absent",  "copy": 17}
//! {"kind": "present", "copy": 17}
//! {"kind": "student", "copy": 17, "student": 4}
//! ```
//!
//! - `place` puts an unknown page (no readable code) in a copy, from the line printed beside its
//!   code; a page placed by hand can be placed again.
//! - `choose` says which of the different scans of one copy page stands; a later choice changes
//!   it.
//! - `extra` assigns an extra answer sheet of the set to a copy and a question (its label, 1 to
//!   [`MAX_QUESTION_CHARS`] characters).
//! - `absent` says a copy was not sat (absent is not zero); `present` takes that back.
//! - `student` says who wrote a copy of a named set: the student of roster copy `student` (the
//!   copy printed for them), or `null` for a student not on the roster (see `super::students`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::request::{Problem, integer, pointer_token, problem, text};
use super::scans::Stack;
use super::stack::{Decision, Placement, StackPage};
use crate::store::class_sets::stacks::NewDecision;

/// The longest question label an extra sheet can be assigned to.
pub const MAX_QUESTION_CHARS: usize = 40;

/// The kinds of decision.
pub const KINDS: [&str; 6] = ["place", "choose", "extra", "absent", "present", "student"];

/// A field of a decision as a client sent it, as far as a decision reads one: a value of the
/// route's JSON body, or a field of the app's form read the same way (see [`read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent<'a> {
    /// `null`: for `student`, a student not on the roster.
    Null,
    /// A whole number (JSON may write one with a zero fraction, `3.0`).
    Integer(i64),
    /// Text.
    Text(&'a str),
    /// Anything else: a fraction, a boolean, an array, an object.
    Other,
}

impl<'a> From<&'a Value> for Sent<'a> {
    fn from(value: &'a Value) -> Self {
        match value {
            Value::Null => Sent::Null,
            Value::String(s) => Sent::Text(s),
            _ => integer(value).map_or(Sent::Other, Sent::Integer),
        }
    }
}

/// A decision's fields as sent, by name: in name order, the order their problems are told in.
pub type Fields<'a> = BTreeMap<&'a str, Sent<'a>>;

/// Reads the body (already parsed as JSON): the decision as asked, or every problem.
pub fn parse(body: &Value) -> Result<Decision, Vec<Problem>> {
    let Some(object) = body.as_object() else {
        return Err(vec![problem("", "type", "the body must be a JSON object")]);
    };
    read(
        &object
            .iter()
            .map(|(name, value)| (name.as_str(), Sent::from(value)))
            .collect(),
    )
}

/// Reads a decision's fields, whoever sent them: the decision as asked, or every problem.
pub fn read(fields: &Fields<'_>) -> Result<Decision, Vec<Problem>> {
    let mut problems = Vec::new();
    let kind = kind_of(fields).map_err(|p| vec![p])?;
    let known = fields_of(kind);
    for key in fields.keys() {
        if !known.contains(key) {
            problems.push(problem(
                &format!("/{}", pointer_token(key)),
                "unknown_field",
                format!("{key:?} is not a field of a {kind} decision"),
            ));
        }
    }
    let at = known
        .contains(&"file")
        .then(|| stack_page(fields, &mut problems));
    let copy = known
        .contains(&"copy")
        .then(|| number(fields, "copy", &mut problems));
    let copy_page = known
        .contains(&"copyPage")
        .then(|| number(fields, "copyPage", &mut problems));
    let question = known
        .contains(&"question")
        .then(|| question_of(fields, &mut problems));
    let student = (kind == "student").then(|| match fields.get("student") {
        None => {
            problems.push(problem("/student", "required", "student is required"));
            None
        }
        Some(Sent::Null) => Some(None),
        Some(_) => number(fields, "student", &mut problems).map(Some),
    });
    let (at, copy, copy_page, question) = (
        at.flatten(),
        copy.flatten(),
        copy_page.flatten(),
        question.flatten(),
    );
    if !problems.is_empty() {
        return Err(problems);
    }
    match (kind, at, copy, copy_page, question) {
        ("place", Some(at), Some(copy), Some(page), _) => Ok(Decision::Place { at, copy, page }),
        ("choose", Some(at), ..) => Ok(Decision::Choose { at }),
        ("extra", Some(at), Some(copy), _, Some(question)) => {
            Ok(Decision::AssignExtra { at, copy, question })
        }
        ("absent", _, Some(copy), ..) => Ok(Decision::Absent { copy }),
        ("present", _, Some(copy), ..) => Ok(Decision::Present { copy }),
        ("student", _, Some(copy), ..) => match student.flatten() {
            Some(student) => Ok(Decision::Student { copy, student }),
            None => Err(vec![problem("", "type", "the decision is incomplete")]),
        },
        // Every field a kind needs was read above, or its problem reported.
        _ => Err(vec![problem("", "type", "the decision is incomplete")]),
    }
}

/// The decision's `kind`, one of [`KINDS`].
fn kind_of<'a>(fields: &Fields<'a>) -> Result<&'a str, Problem> {
    match fields.get("kind") {
        None => Err(problem("/kind", "required", "kind is required")),
        Some(Sent::Text(kind)) if KINDS.contains(kind) => Ok(kind),
        Some(Sent::Text(kind)) => Err(problem(
            "/kind",
            "enum",
            format!("kind is one of {}, not {kind:?}", KINDS.join(", ")),
        )),
        Some(_) => Err(problem("/kind", "type", "kind must be a string")),
    }
}

/// The fields a decision of `kind` has.
fn fields_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "place" => &["kind", "file", "page", "copy", "copyPage"],
        "choose" => &["kind", "file", "page"],
        "extra" => &["kind", "file", "page", "copy", "question"],
        "student" => &["kind", "copy", "student"],
        _ => &["kind", "copy"],
    }
}

/// `file` and `page`: a page of the stack, as named.
fn stack_page(fields: &Fields<'_>, problems: &mut Vec<Problem>) -> Option<StackPage> {
    let file = match fields.get("file") {
        None => {
            problems.push(problem("/file", "required", "file is required"));
            None
        }
        Some(Sent::Text(s)) => match uuid::Uuid::try_parse(s) {
            Ok(id) if s.len() == 36 => Some(id.hyphenated().to_string()),
            _ => {
                problems.push(problem(
                    "/file",
                    "format",
                    "file must be a file's id (a UUID)",
                ));
                None
            }
        },
        Some(_) => {
            problems.push(problem("/file", "type", "file must be a string"));
            None
        }
    };
    let page = number(fields, "page", problems);
    Some(StackPage {
        file: file?,
        page: page?,
    })
}

/// `question`: the label of the question an extra sheet answers.
fn question_of(fields: &Fields<'_>, problems: &mut Vec<Problem>) -> Option<String> {
    match fields.get("question") {
        None => {
            problems.push(problem("/question", "required", "question is required"));
            None
        }
        // The label is checked as every text field of the room is (`super::request::text`).
        Some(Sent::Text(label)) => text(
            &Value::from(*label),
            "/question",
            "question",
            MAX_QUESTION_CHARS,
            problems,
        ),
        Some(_) => {
            problems.push(problem("/question", "type", "question must be a string"));
            None
        }
    }
}

/// A whole number from 1, at `/name`.
fn number(fields: &Fields<'_>, name: &str, problems: &mut Vec<Problem>) -> Option<u32> {
    let path = format!("/{name}");
    match fields.get(name) {
        None => {
            problems.push(problem(&path, "required", format!("{name} is required")));
            None
        }
        Some(Sent::Integer(n)) if *n < 1 => {
            problems.push(problem(&path, "minimum", format!("{name} is at least 1")));
            None
        }
        Some(Sent::Integer(n)) => match u32::try_from(*n) {
            Ok(n) => Some(n),
            Err(_) => {
                problems.push(problem(&path, "maximum", format!("{name} is too large")));
                None
            }
        },
        Some(_) => {
            problems.push(problem(&path, "type", format!("{name} must be an integer")));
            None
        }
    }
}

/// Checks a decision against the stack as it stands: the page it names is a page of the stack,
/// in the state the decision is about; the copy and its page are the set's.
pub fn check(decision: &Decision, stack: &Stack) -> Result<(), Vec<Problem>> {
    let run = &stack.run;
    let mut problems = Vec::new();
    let copy_of = |copy: u32, problems: &mut Vec<Problem>| {
        if !run.copies.contains(&copy) {
            problems.push(problem(
                "/copy",
                "not_in_set",
                format!("the set has no copy {copy}"),
            ));
        }
    };
    match decision {
        Decision::Place { copy, page, .. } => {
            copy_of(*copy, &mut problems);
            if *page > run.paper_pages {
                problems.push(problem(
                    "/copyPage",
                    "not_in_set",
                    format!(
                        "a copy of this set has {} pages of the paper",
                        run.paper_pages
                    ),
                ));
            }
        }
        Decision::AssignExtra { copy, .. }
        | Decision::Absent { copy }
        | Decision::Present { copy }
        | Decision::Student { copy, .. } => copy_of(*copy, &mut problems),
        Decision::Choose { .. } => {}
    }
    if let Decision::Place { at, .. } | Decision::Choose { at } | Decision::AssignExtra { at, .. } =
        decision
    {
        let wanted = match decision {
            Decision::Place { .. } => "an unknown page (one whose code could not be read)",
            Decision::Choose { .. } => "one of the different scans of a copy page",
            _ => "an extra answer sheet",
        };
        match stack.placement(at) {
            None if stack.reading.contains(at) => problems.push(problem(
                "/page",
                "not_placeable",
                format!("page {} of the file is still being read", at.page),
            )),
            None => problems.push(problem(
                "/page",
                "not_in_stack",
                format!("the stack has no page {} of file {}", at.page, at.file),
            )),
            Some(placement) => {
                let fits = match decision {
                    Decision::Place { .. } => matches!(
                        placement,
                        Placement::Unknown { .. } | Placement::Placed { by_hand: true, .. }
                    ),
                    Decision::Choose { .. } => {
                        matches!(
                            placement,
                            Placement::Conflict { .. }
                                | Placement::NotChosen { .. }
                                | Placement::Placed { by_hand: false, .. }
                        ) && in_conflict(stack, at)
                    }
                    _ => matches!(placement, Placement::Extra { .. }),
                };
                if !fits {
                    problems.push(problem(
                        "/page",
                        "not_placeable",
                        format!(
                            "this decision is about {wanted}; page {} of the file is {}",
                            at.page,
                            describe(placement)
                        ),
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The most decisions a set keeps: ten for each page of its stack and two for each copy, far
/// beyond what a class needs (a page placed, then moved a few times), so that a client in a
/// loop cannot grow a set's history without bound.
pub fn max_decisions(stack_pages: usize, copies: usize) -> usize {
    stack_pages
        .saturating_mul(10)
        .saturating_add(copies.saturating_mul(2))
}

/// Refuses a decision that would leave the set as it is, given the decisions made so far
/// (`decided`, in order): placing a page where a person placed it, choosing the scan that was
/// chosen, assigning a sheet where it is, saying absent of a copy a person said is absent (or
/// present of one never said absent), or giving a copy the student it has.
pub fn check_changes(
    decision: &Decision,
    stack: &Stack,
    decided: &[Decision],
) -> Result<(), Vec<Problem>> {
    let unchanged = |what: String| Err(vec![problem("", "no_change", what)]);
    let last_about_copy = |copy: u32, kinds: fn(&Decision) -> bool| {
        decided.iter().rev().find(|d| {
            kinds(d)
                && matches!(d, Decision::Absent { copy: c } | Decision::Present { copy: c }
                    | Decision::Student { copy: c, .. } if *c == copy)
        })
    };
    match decision {
        Decision::Place { at, copy, page } => {
            if stack.placement(at)
                == Some(&Placement::Placed {
                    copy: *copy,
                    page: *page,
                    by_hand: true,
                })
            {
                return unchanged(format!(
                    "page {} of the file is already placed as copy {copy} page {page}",
                    at.page
                ));
            }
        }
        Decision::Choose { at } => {
            let chosen_last = decided.iter().rev().find_map(|d| match d {
                Decision::Choose { at: other } if same_copy_page(stack, at, other) => Some(other),
                _ => None,
            });
            if chosen_last == Some(at)
                && matches!(stack.placement(at), Some(Placement::Placed { .. }))
            {
                return unchanged(format!(
                    "page {} of the file is already the scan chosen",
                    at.page
                ));
            }
        }
        Decision::AssignExtra { at, copy, question } => {
            if let Some(Placement::Extra {
                assigned: Some((c, q)),
            }) = stack.placement(at)
                && c == copy
                && q == question
            {
                return unchanged(format!(
                    "the sheet is already assigned to copy {copy}, question {question}"
                ));
            }
        }
        Decision::Absent { copy } => {
            let last = last_about_copy(*copy, |d| {
                matches!(d, Decision::Absent { .. } | Decision::Present { .. })
            });
            if matches!(last, Some(Decision::Absent { .. })) {
                return unchanged(format!("copy {copy} is already marked absent"));
            }
        }
        Decision::Present { copy } => {
            let last = last_about_copy(*copy, |d| {
                matches!(d, Decision::Absent { .. } | Decision::Present { .. })
            });
            if !matches!(last, Some(Decision::Absent { .. })) {
                return unchanged(format!("copy {copy} was not marked absent"));
            }
        }
        Decision::Student { copy, student } => {
            let last = last_about_copy(*copy, |d| matches!(d, Decision::Student { .. }));
            if let Some(Decision::Student {
                student: before, ..
            }) = last
                && before == student
            {
                return unchanged(format!("copy {copy} already has that student"));
            }
        }
    }
    Ok(())
}

/// Whether two pages of the stack are scans of the same copy page.
fn same_copy_page(stack: &Stack, a: &StackPage, b: &StackPage) -> bool {
    let copy_page = |at: &StackPage| match stack.placement(at) {
        Some(
            Placement::Placed { copy, page, .. }
            | Placement::Conflict { copy, page }
            | Placement::NotChosen { copy, page },
        ) => Some((*copy, *page)),
        _ => None,
    };
    a == b || copy_page(a).is_some_and(|p| copy_page(b) == Some(p))
}

/// Whether the copy page `at` claims is claimed by a different scan too.
fn in_conflict(stack: &Stack, at: &StackPage) -> bool {
    let copy_page = |placement: &Placement| match placement {
        Placement::Placed { copy, page, .. }
        | Placement::Conflict { copy, page }
        | Placement::NotChosen { copy, page } => Some((*copy, *page)),
        _ => None,
    };
    let Some(target) = stack.placement(at).and_then(copy_page) else {
        return false;
    };
    stack
        .report
        .pages
        .iter()
        .filter(|(page, placement)| page != at && copy_page(placement) == Some(target))
        .any(|(_, placement)| !matches!(placement, Placement::Rescan { .. }))
}

/// A placement in words, for messages.
pub fn describe(placement: &Placement) -> String {
    match placement {
        Placement::Placed { copy, page, .. } => format!("placed as copy {copy} page {page}"),
        Placement::BlankBack { copy } => format!("the blank back of copy {copy}"),
        Placement::Rescan { copy, page } => {
            format!("an identical rescan of copy {copy} page {page}")
        }
        Placement::Conflict { copy, page } => {
            format!("one of different scans of copy {copy} page {page}")
        }
        Placement::NotChosen { copy, page } => {
            format!("a scan of copy {copy} page {page} not chosen")
        }
        Placement::Extra { .. } => "an extra answer sheet".to_owned(),
        Placement::Unknown { .. } => "unknown".to_owned(),
        Placement::Foreign { reason } => format!("not of this set ({reason})"),
    }
}

/// A checked decision as the store records it.
pub fn record<'a>(
    decision: &'a Decision,
    made_by_key: &'a str,
    made_by_user: &'a str,
) -> NewDecision<'a> {
    let mut new = NewDecision {
        kind: "",
        asset_id: None,
        page: None,
        copy: None,
        copy_page: None,
        question: None,
        student: None,
        made_by_key,
        made_by_user,
    };
    match decision {
        Decision::Place { at, copy, page } => {
            new.kind = "place";
            new.asset_id = Some(&at.file);
            new.page = Some(i64::from(at.page));
            new.copy = Some(i64::from(*copy));
            new.copy_page = Some(i64::from(*page));
        }
        Decision::Choose { at } => {
            new.kind = "choose";
            new.asset_id = Some(&at.file);
            new.page = Some(i64::from(at.page));
        }
        Decision::AssignExtra { at, copy, question } => {
            new.kind = "extra";
            new.asset_id = Some(&at.file);
            new.page = Some(i64::from(at.page));
            new.copy = Some(i64::from(*copy));
            new.question = Some(question);
        }
        Decision::Absent { copy } => {
            new.kind = "absent";
            new.copy = Some(i64::from(*copy));
        }
        Decision::Present { copy } => {
            new.kind = "present";
            new.copy = Some(i64::from(*copy));
        }
        Decision::Student { copy, student } => {
            new.kind = "student";
            new.copy = Some(i64::from(*copy));
            new.student = student.map(i64::from);
        }
    }
    new
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;
    use crate::class_sets::stack::{Report, Run, ScannedPage, split};

    const FILE: &str = "0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d";

    fn codes(body: Value) -> Vec<(String, &'static str)> {
        parse(&body)
            .expect_err("refused")
            .into_iter()
            .map(|p| (p.path, p.code))
            .collect()
    }

    #[test]
    fn every_kind_is_read() {
        let at = StackPage {
            file: FILE.to_owned(),
            page: 3,
        };
        assert_eq!(
            parse(
                &json!({"kind": "place", "file": FILE.to_uppercase(), "page": 3, "copy": 2, "copyPage": 1.0})
            ),
            Ok(Decision::Place {
                at: at.clone(),
                copy: 2,
                page: 1
            })
        );
        assert_eq!(
            parse(&json!({"kind": "choose", "file": FILE, "page": 3})),
            Ok(Decision::Choose { at: at.clone() })
        );
        assert_eq!(
            parse(
                &json!({"kind": "extra", "file": FILE, "page": 3, "copy": 2, "question": " 4(b) "})
            ),
            Ok(Decision::AssignExtra {
                at,
                copy: 2,
                question: "4(b)".to_owned()
            })
        );
        assert_eq!(
            parse(&json!({"kind": "absent", "copy": 7})),
            Ok(Decision::Absent { copy: 7 })
        );
        assert_eq!(
            parse(&json!({"kind": "present", "copy": 7})),
            Ok(Decision::Present { copy: 7 })
        );
        assert_eq!(
            parse(&json!({"kind": "student", "copy": 7, "student": 3})),
            Ok(Decision::Student {
                copy: 7,
                student: Some(3)
            })
        );
        assert_eq!(
            parse(&json!({"kind": "student", "copy": 7, "student": null})),
            Ok(Decision::Student {
                copy: 7,
                student: None
            })
        );
    }

    #[test]
    fn every_bad_field_is_reported_at_once() {
        assert_eq!(codes(json!([])), [(String::new(), "type")]);
        assert_eq!(codes(json!({})), [("/kind".to_owned(), "required")]);
        assert_eq!(codes(json!({"kind": 1})), [("/kind".to_owned(), "type")]);
        assert_eq!(
            codes(json!({"kind": "undo"})),
            [("/kind".to_owned(), "enum")]
        );
        assert_eq!(
            codes(json!({"kind": "place", "file": "x", "page": 0, "copy": -1, "extra": 1})),
            [
                ("/extra".to_owned(), "unknown_field"),
                ("/file".to_owned(), "format"),
                ("/page".to_owned(), "minimum"),
                ("/copy".to_owned(), "minimum"),
                ("/copyPage".to_owned(), "required"),
            ]
        );
        assert_eq!(
            codes(json!({"kind": "choose", "file": 7, "page": 1.5})),
            [("/file".to_owned(), "type"), ("/page".to_owned(), "type"),]
        );
        assert_eq!(
            codes(
                json!({"kind": "extra", "file": FILE, "page": 1, "copy": 4294967296_i64, "question": ""})
            ),
            [
                ("/copy".to_owned(), "maximum"),
                ("/question".to_owned(), "min_length"),
            ]
        );
        assert_eq!(
            codes(
                json!({"kind": "extra", "file": FILE, "page": 1, "copy": 1, "question": "x".repeat(41)})
            ),
            [("/question".to_owned(), "max_length")]
        );
        assert_eq!(
            codes(json!({"kind": "absent", "copy": 1, "file": FILE})),
            [("/file".to_owned(), "unknown_field")]
        );
        assert_eq!(
            codes(json!({"kind": "student", "copy": 1})),
            [("/student".to_owned(), "required")]
        );
        assert_eq!(
            codes(json!({"kind": "student", "copy": 0, "student": "Ada"})),
            [
                ("/copy".to_owned(), "minimum"),
                ("/student".to_owned(), "type")
            ]
        );
    }

    #[test]
    fn a_json_value_is_sent_as_its_kind() {
        assert_eq!(Sent::from(&json!(null)), Sent::Null);
        assert_eq!(Sent::from(&json!(3)), Sent::Integer(3));
        assert_eq!(Sent::from(&json!(3.0)), Sent::Integer(3));
        assert_eq!(Sent::from(&json!(-2)), Sent::Integer(-2));
        assert_eq!(Sent::from(&json!("4(b)")), Sent::Text("4(b)"));
        for other in [json!(1.5), json!(true), json!([1]), json!({"a": 1})] {
            assert_eq!(Sent::from(&other), Sent::Other, "{other}");
        }
    }

    #[test]
    fn fields_are_read_whoever_sent_them() {
        assert_eq!(
            read(&Fields::from([
                ("kind", Sent::Text("student")),
                ("copy", Sent::Integer(4)),
                ("student", Sent::Null),
            ])),
            Ok(Decision::Student {
                copy: 4,
                student: None
            })
        );
        // Unknown fields are told in name order, then each field of the kind in turn.
        let problems = read(&Fields::from([
            ("kind", Sent::Text("extra")),
            ("zone", Sent::Null),
            ("file", Sent::Integer(1)),
            ("page", Sent::Text("one")),
            ("copy", Sent::Other),
            ("question", Sent::Integer(4)),
            ("alpha", Sent::Other),
        ]))
        .expect_err("refused");
        let told: Vec<(&str, &str, &str)> = problems
            .iter()
            .map(|p| (p.path.as_str(), p.code, p.message.as_str()))
            .collect();
        assert_eq!(
            told,
            [
                (
                    "/alpha",
                    "unknown_field",
                    "\"alpha\" is not a field of a extra decision"
                ),
                (
                    "/zone",
                    "unknown_field",
                    "\"zone\" is not a field of a extra decision"
                ),
                ("/file", "type", "file must be a string"),
                ("/page", "type", "page must be an integer"),
                ("/copy", "type", "copy must be an integer"),
                ("/question", "type", "question must be a string"),
            ]
        );
        assert_eq!(
            read(&Fields::from([("kind", Sent::Null)])),
            Err(vec![problem("/kind", "type", "kind must be a string")])
        );
    }

    fn stack_of(pages: &[ScannedPage], reading: Vec<StackPage>) -> Stack {
        let run = Run {
            id: uuid::Uuid::from_u128(7),
            copies: BTreeSet::from([1, 2]),
            paper_pages: 2,
            pages_per_copy: 2,
        };
        let report: Report = split(&run, pages, &[]);
        Stack {
            run,
            reading,
            report,
        }
    }

    /// The copy code of `copy` page `page` of the test's print run.
    fn code(copy: u32, page: u32) -> String {
        examkit_pdf::CopyCode {
            run_id: uuid::Uuid::from_u128(7),
            copy,
            page,
        }
        .to_payload()
    }

    /// Page `n` of the test's stack file.
    fn at(n: u32) -> StackPage {
        StackPage {
            file: FILE.to_owned(),
            page: n,
        }
    }

    fn page(n: u32, codes: Vec<String>, print: &str) -> ScannedPage {
        ScannedPage {
            at: StackPage {
                file: FILE.to_owned(),
                page: n,
            },
            codes,
            fingerprint: print.to_owned(),
        }
    }

    #[test]
    fn a_decision_must_fit_the_stack() {
        let stack = stack_of(
            &[
                page(1, vec![code(1, 1)], "a"),
                page(2, vec![code(1, 2)], "b"),
                page(3, vec![code(1, 2)], "c"),
                page(4, Vec::new(), "d"),
            ],
            vec![at(5)],
        );
        let check_codes = |decision: Decision| -> Vec<(String, &'static str)> {
            check(&decision, &stack)
                .err()
                .unwrap_or_default()
                .into_iter()
                .map(|p| (p.path, p.code))
                .collect()
        };
        // Fits: the unknown page placed, a scan of the conflict chosen, a copy absent.
        for fits in [
            Decision::Place {
                at: at(4),
                copy: 2,
                page: 1,
            },
            Decision::Choose { at: at(3) },
            Decision::Absent { copy: 2 },
        ] {
            assert_eq!(check_codes(fits.clone()), [], "{fits:?}");
        }
        let not_placeable = vec![("/page".to_owned(), "not_placeable")];
        assert_eq!(
            check_codes(Decision::Place {
                at: at(1),
                copy: 1,
                page: 1
            }),
            not_placeable
        );
        assert_eq!(check_codes(Decision::Choose { at: at(1) }), not_placeable);
        assert_eq!(
            check_codes(Decision::AssignExtra {
                at: at(4),
                copy: 1,
                question: "1".into()
            }),
            not_placeable
        );
        assert_eq!(check_codes(Decision::Choose { at: at(5) }), not_placeable);
        assert_eq!(
            check_codes(Decision::Choose { at: at(6) }),
            [("/page".to_owned(), "not_in_stack")]
        );
        assert_eq!(
            check_codes(Decision::Place {
                at: at(4),
                copy: 3,
                page: 3
            }),
            [
                ("/copy".to_owned(), "not_in_set"),
                ("/copyPage".to_owned(), "not_in_set")
            ]
        );
        assert_eq!(
            check_codes(Decision::Present { copy: 9 }),
            [("/copy".to_owned(), "not_in_set")]
        );
    }

    #[test]
    fn a_decision_that_changes_nothing_is_refused() {
        let pages = [
            page(1, vec![code(1, 1)], "a"),
            page(2, vec![code(1, 2)], "b"),
            page(3, vec![code(1, 2)], "c"),
            page(4, Vec::new(), "d"),
        ];
        let decided = vec![
            Decision::Place {
                at: at(4),
                copy: 2,
                page: 1,
            },
            Decision::Choose { at: at(3) },
            Decision::Absent { copy: 2 },
            Decision::Student {
                copy: 1,
                student: Some(2),
            },
        ];
        let mut stack = stack_of(&pages, Vec::new());
        stack.report = split(&stack.run, &pages, &decided);
        let refused = |decision: Decision| -> Vec<&'static str> {
            check_changes(&decision, &stack, &decided)
                .err()
                .unwrap_or_default()
                .into_iter()
                .map(|p| p.code)
                .collect()
        };
        for same in [
            decided[0].clone(),
            decided[1].clone(),
            decided[2].clone(),
            decided[3].clone(),
            Decision::Present { copy: 1 },
        ] {
            assert_eq!(refused(same.clone()), ["no_change"], "{same:?}");
        }
        for changes in [
            Decision::Place {
                at: at(4),
                copy: 2,
                page: 2,
            },
            Decision::Choose { at: at(2) },
            Decision::Present { copy: 2 },
            Decision::Absent { copy: 1 },
            Decision::Student {
                copy: 1,
                student: None,
            },
        ] {
            assert_eq!(refused(changes.clone()), Vec::<&str>::new(), "{changes:?}");
        }
        // Absent said, then taken back: absent again changes the set.
        let mut back = decided.clone();
        back.push(Decision::Present { copy: 2 });
        assert_eq!(
            check_changes(&Decision::Absent { copy: 2 }, &stack, &back),
            Ok(())
        );
    }

    #[test]
    fn a_set_keeps_ten_decisions_a_page_and_two_a_copy() {
        assert_eq!(max_decisions(0, 30), 60);
        assert_eq!(max_decisions(240, 30), 2_460);
        assert_eq!(max_decisions(usize::MAX, 1), usize::MAX);
    }
}
