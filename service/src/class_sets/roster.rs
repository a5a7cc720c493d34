//! A roster pasted as text, as a teacher copies it from a spreadsheet or a school's MIS export:
//! one student a line, the name alone or the name and candidate number separated by a tab or a
//! comma. This module only splits the lines; the roster's rules (lengths, characters, repeated
//! candidate numbers) are those of `POST /v1/class-sets` ([`super::request`]), applied to the
//! split roster, and their problems are put back on the lines they came from ([`at_lines`]).
//!
//! - A tab separates columns: one column is a name, two are a name and a candidate number; more
//!   is refused (which column is the name is not guessed).
//! - Without a tab, the text after the last comma is a candidate number when it looks like one
//!   (letters and digits with at least one digit, no space), so `Lovelace, Ada` stays one name and
//!   `Ada Lovelace, 0417` is a name and a number; a last part with a digit that is not a number
//!   (`Ada, 04 17`) is refused rather than printed as a name.
//! - Blank lines are skipped, and so is a first line of column headings (`Name`, `Student`,
//!   `Candidate number`…), which is reported.

use serde_json::{Value, json};

use super::Problem;

/// One student read from a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Student {
    /// The line it came from, from 1.
    pub line: usize,
    /// The name, without surrounding spaces.
    pub name: String,
    /// The candidate number, when the line has one.
    pub candidate_number: Option<String>,
}

/// A line that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// The line, from 1.
    pub line: usize,
    /// Its text as pasted.
    pub text: String,
    /// Why it cannot be used, for people.
    pub message: String,
}

/// A pasted roster, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pasted {
    /// The students, in order.
    pub students: Vec<Student>,
    /// The lines that cannot be used.
    pub problems: Vec<LineProblem>,
    /// The line read as column headings, if any.
    pub headings: Option<usize>,
}

const HEADINGS: &[&str] = &[
    "name",
    "names",
    "student",
    "students",
    "student name",
    "pupil",
    "pupil name",
    "candidate",
    "candidate name",
    "full name",
    "surname",
    "legal surname",
];

fn is_heading(first_column: &str) -> bool {
    let column = first_column.trim().to_lowercase();
    HEADINGS.contains(&column.as_str())
}

/// Whether `s` reads as a candidate number: letters and digits (and `-`, `/`), at least one digit.
fn looks_like_number(s: &str) -> bool {
    !s.is_empty()
        && s.chars().any(|c| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '/')
}

/// Splits one line into a name and maybe a number, or says why it cannot.
fn split(line: &str) -> Result<(String, Option<String>), String> {
    if line.contains('\t') {
        let columns: Vec<&str> = line.trim_end_matches('\t').split('\t').collect();
        return match columns.as_slice() {
            [name] => Ok((name.trim().to_owned(), None)),
            [name, number] if number.trim().is_empty() => Ok((name.trim().to_owned(), None)),
            [name, number] => Ok((name.trim().to_owned(), Some(number.trim().to_owned()))),
            more => Err(format!(
                "it has {} columns; give the name, then the candidate number if there is one",
                more.len()
            )),
        };
    }
    if let Some((name, last)) = line.rsplit_once(',') {
        let last = last.trim();
        if looks_like_number(last) {
            return Ok((name.trim().to_owned(), Some(last.to_owned())));
        }
        if last.chars().any(|c| c.is_ascii_digit()) {
            return Err(format!(
                "{last:?} after the comma is not a candidate number (letters and digits, no spaces)"
            ));
        }
    }
    Ok((line.trim().to_owned(), None))
}

/// Reads pasted text, line by line.
pub fn read(text: &str) -> Pasted {
    let mut pasted = Pasted::default();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut first = true;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let raw = raw.trim_end_matches('\r');
        if raw.trim().is_empty() {
            continue;
        }
        if std::mem::take(&mut first) {
            let column = raw.split(['\t', ',']).next().unwrap_or_default();
            if is_heading(column) {
                pasted.headings = Some(line);
                continue;
            }
        }
        match split(raw) {
            Ok((name, _)) if name.is_empty() => pasted.problems.push(LineProblem {
                line,
                text: raw.to_owned(),
                message: "there is no name before the candidate number".to_owned(),
            }),
            Ok((name, candidate_number)) => pasted.students.push(Student {
                line,
                name,
                candidate_number,
            }),
            Err(message) => pasted.problems.push(LineProblem {
                line,
                text: raw.to_owned(),
                message,
            }),
        }
    }
    pasted
}

/// The students as the `roster` field of `POST /v1/class-sets`.
pub fn roster_value(students: &[Student]) -> Value {
    Value::Array(
        students
            .iter()
            .map(|s| match &s.candidate_number {
                Some(number) => json!({ "name": s.name, "candidateNumber": number }),
                None => json!({ "name": s.name }),
            })
            .collect(),
    )
}

/// The roster rules' problems put back on the pasted lines: a problem at `/roster/{i}…` belongs
/// to the `i`-th student's line; the others (the roster as a whole, other fields) are returned
/// as they are.
pub fn at_lines(
    students: &[Student],
    text: &str,
    problems: Vec<Problem>,
) -> (Vec<LineProblem>, Vec<Problem>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut on_lines = Vec::new();
    let mut others = Vec::new();
    for problem in problems {
        let student = problem
            .path
            .strip_prefix("/roster/")
            .and_then(|rest| rest.split('/').next())
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| students.get(i));
        match student {
            Some(student) => on_lines.push(LineProblem {
                line: student.line,
                text: lines
                    .get(student.line - 1)
                    .map(|l| l.trim_end_matches('\r').to_owned())
                    .unwrap_or_default(),
                message: problem.message,
            }),
            None => others.push(problem),
        }
    }
    on_lines.sort_by_key(|p| p.line);
    (on_lines, others)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(pasted: &Pasted) -> Vec<(usize, &str, Option<&str>)> {
        pasted
            .students
            .iter()
            .map(|s| (s.line, s.name.as_str(), s.candidate_number.as_deref()))
            .collect()
    }

    #[test]
    fn tabs_commas_names_alone_and_headings() {
        let pasted = read(
            "Name\tCandidate number\r\nAda Lovelace\t0417\r\n\r\nLovelace, Ada\nAlan Turing, 0418\nEmmy Noether\t\n  Grace Hopper  \n",
        );
        assert_eq!(pasted.headings, Some(1));
        assert_eq!(
            names(&pasted),
            [
                (2, "Ada Lovelace", Some("0417")),
                (4, "Lovelace, Ada", None),
                (5, "Alan Turing", Some("0418")),
                (6, "Emmy Noether", None),
                (7, "Grace Hopper", None),
            ]
        );
        assert!(pasted.problems.is_empty());
    }

    #[test]
    fn lines_that_cannot_be_used_say_why() {
        let pasted = read("Ada\t0417\tExtra\n\t0418\nAda, 04 17\nBob, 9B/2\n");
        let problems: Vec<(usize, &str)> = pasted
            .problems
            .iter()
            .map(|p| (p.line, p.message.as_str()))
            .collect();
        assert_eq!(
            problems,
            [
                (
                    1,
                    "it has 3 columns; give the name, then the candidate number if there is one"
                ),
                (2, "there is no name before the candidate number"),
                (
                    3,
                    "\"04 17\" after the comma is not a candidate number (letters and digits, no spaces)"
                ),
            ]
        );
        assert_eq!(names(&pasted), [(4, "Bob", Some("9B/2"))]);
    }

    #[test]
    fn the_roster_rules_land_on_their_lines() {
        let text = "Ada\t0417\nBob\t0417\n";
        let pasted = read(text);
        let body = json!({
            "paperId": "6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f",
            "revision": 1,
            "roster": roster_value(&pasted.students),
        });
        let problems = super::super::parse_new(&body).expect_err("a repeated number");
        let (on_lines, others) = at_lines(&pasted.students, text, problems);
        assert!(others.is_empty(), "{others:?}");
        assert_eq!(on_lines.len(), 1);
        assert_eq!(on_lines[0].line, 2);
        assert_eq!(on_lines[0].text, "Bob\t0417");
        assert!(on_lines[0].message.contains("0417"), "{:?}", on_lines[0]);
    }

    proptest! {
        #[test]
        fn any_text_is_read_without_panicking(text in "\\PC{0,300}") {
            let pasted = read(&text);
            let lines = text.lines().count();
            for s in &pasted.students {
                prop_assert!(s.line >= 1 && s.line <= lines);
                prop_assert!(!s.name.is_empty());
            }
            for p in &pasted.problems {
                prop_assert!(p.line >= 1 && p.line <= lines);
            }
        }

        #[test]
        fn a_copied_spreadsheet_reads_back(
            rows in proptest::collection::vec(
                ("[A-Z][a-z]{1,8} [A-Z][a-z]{1,10}", proptest::option::of("[0-9]{4}")),
                1..40,
            )
        ) {
            let text: String = rows
                .iter()
                .map(|(name, number)| match number {
                    Some(n) => format!("{name}\t{n}\n"),
                    None => format!("{name}\n"),
                })
                .collect();
            let pasted = read(&text);
            prop_assert!(pasted.problems.is_empty());
            let read_back: Vec<(String, Option<String>)> = pasted
                .students
                .into_iter()
                .map(|s| (s.name, s.candidate_number))
                .collect();
            prop_assert_eq!(read_back, rows);
        }
    }
}
