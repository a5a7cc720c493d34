//! A class's results laid out as sheets of cells: the marks (one row per student, a row of
//! maxima), the criteria (one row per student, one column per criterion) and the long list of
//! every criterion decision with who made it. [`super::csv`] and [`super::xlsx`] write them.
//!
//! - A question not yet marked (queued, being marked, failed, cancelled, or no script) is blank.
//! - A question needing review shows its score range, `awarded–possible`.
//! - A question on a page that was not scanned ([`MarkedQuestion::not_scanned`]) is `not scanned`
//!   in the marks and the criteria sheets, and the status names it; its marks count as possible
//!   in the total's range.
//! - An absent student is `ABS` in every question and the total.
//! - A question the student left blank ([`MarkedQuestion::left_blank`]) is `0`, and the status
//!   says so.
//! - The total and percentage are numbers once every question is marked with nothing to
//!   review; a range while some need review; blank while some are not marked.

use crate::marked::{MarkedQuestion, MarkerKind, NOT_SCANNED, QuestionStatus};
use crate::store::marking::ReviewerKind;
use crate::store::rfc3339;

use super::class::{ClassResults, Script, Standing, StudentResult};

/// One cell of a sheet.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Nothing.
    Empty,
    /// A whole number.
    Int(i64),
    /// A number with a fraction (a percentage, a mean).
    Decimal(f64),
    /// Text: always written as text, never as a formula.
    Text(String),
}

impl Cell {
    fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    fn maybe(s: Option<&str>) -> Cell {
        s.map_or(Cell::Empty, Cell::text)
    }
}

/// A sheet: a header row and rows of cells, each as long as the header.
#[derive(Debug, Clone, PartialEq)]
pub struct Sheet {
    /// Its name (a worksheet's tab).
    pub name: &'static str,
    /// The header.
    pub header: Vec<String>,
    /// The rows.
    pub rows: Vec<Vec<Cell>>,
}

/// The text of an absent student's marks.
pub const ABSENT: &str = "ABS";

/// A score range as the markbook writes it: `2–5`.
pub fn range(awarded: i64, possible: i64) -> String {
    format!("{awarded}–{possible}")
}

/// A share as a percentage, to one decimal place.
pub fn percent(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        return 0.0;
    }
    (part as f64 * 1000.0 / whole as f64).round() / 10.0
}

/// The marks sheet: student, candidate number, copy, each question's mark, total, percentage,
/// status; the first row the maxima.
pub fn marks(results: &ClassResults) -> Sheet {
    let mut header = vec![
        "Student".to_owned(),
        "Candidate number".to_owned(),
        "Copy".to_owned(),
    ];
    header.extend(results.questions.iter().map(|q| format!("Q{}", q.label)));
    header.extend(["Total", "Percentage", "Status"].map(String::from));
    let max_total: i64 = results.questions.iter().map(|q| q.max).sum();
    let mut maxima = vec![Cell::text("Maximum"), Cell::Empty, Cell::Empty];
    maxima.extend(results.questions.iter().map(|q| Cell::Int(q.max)));
    maxima.extend([Cell::Int(max_total), Cell::Decimal(100.0), Cell::Empty]);
    let mut rows = vec![maxima];
    for student in &results.students {
        let mut row = who(student);
        let labels: Vec<&str> = results.questions.iter().map(|q| q.label.as_str()).collect();
        match student.standing.script() {
            None => {
                let absent = matches!(student.standing, Standing::Absent);
                let cell = || {
                    if absent {
                        Cell::text(ABSENT)
                    } else {
                        Cell::Empty
                    }
                };
                row.extend(labels.iter().map(|_| cell()));
                row.extend([cell(), Cell::Empty, Cell::text(status_of(student, &labels))]);
            }
            Some(script) => {
                row.extend(labels.iter().map(|l| question_cell(script.question(l))));
                let (total, share) = total(script, &labels, max_total);
                row.extend([total, share, Cell::text(status_of(student, &labels))]);
            }
        }
        rows.push(row);
    }
    Sheet {
        name: "Marks",
        header,
        rows,
    }
}

fn who(student: &StudentResult) -> Vec<Cell> {
    vec![
        Cell::maybe(student.student.as_deref()),
        Cell::maybe(student.candidate_number.as_deref()),
        student
            .copy
            .map_or(Cell::Empty, |c| Cell::Int(i64::from(c))),
    ]
}

fn question_cell(question: Option<&MarkedQuestion>) -> Cell {
    match question {
        Some(q) if q.not_scanned() => Cell::text(NOT_SCANNED),
        Some(q) if q.status == QuestionStatus::Completed => Cell::Int(q.score.awarded),
        Some(q) if q.status == QuestionStatus::NeedsReview => {
            Cell::Text(range(q.score.awarded, q.score.possible))
        }
        _ => Cell::Empty,
    }
}

fn total(script: &Script, labels: &[&str], max_total: i64) -> (Cell, Cell) {
    let questions: Vec<Option<&MarkedQuestion>> =
        labels.iter().map(|l| script.question(l)).collect();
    let marked = questions
        .iter()
        .all(|q| q.is_some_and(|q| q.status.is_marked()));
    if !marked {
        return (Cell::Empty, Cell::Empty);
    }
    let awarded: i64 = questions.iter().flatten().map(|q| q.score.awarded).sum();
    let possible: i64 = questions.iter().flatten().map(|q| q.score.possible).sum();
    let reviewing = questions
        .iter()
        .flatten()
        .any(|q| q.status == QuestionStatus::NeedsReview);
    if reviewing {
        (
            Cell::Text(range(awarded, possible)),
            Cell::Text(format!(
                "{}–{}",
                percent(awarded, max_total),
                percent(possible, max_total)
            )),
        )
    } else {
        (
            Cell::Int(awarded),
            Cell::Decimal(percent(awarded, max_total)),
        )
    }
}

/// A student's status in words: `absent`, `not started`, `marking`, `marked`, with the
/// questions needing review, on a page not scanned, failed or left blank named
/// (`needs review: Q2; not scanned: Q4; blank: Q3`).
pub fn status_of(student: &StudentResult, labels: &[&str]) -> String {
    let script = match &student.standing {
        Standing::Absent => return "absent".into(),
        Standing::NoScript => return "no script".into(),
        Standing::NotStarted => return "not started".into(),
        Standing::NotOnRoster(s) | Standing::WriterUnsettled(s) | Standing::Script(s) => s,
    };
    let named = |test: &dyn Fn(&MarkedQuestion) -> bool| -> Vec<String> {
        labels
            .iter()
            .filter(|l| script.question(l).is_some_and(test))
            .map(|l| format!("Q{l}"))
            .collect()
    };
    let waiting = labels.iter().any(|l| {
        script
            .question(l)
            .is_none_or(|q| matches!(q.status, QuestionStatus::Queued | QuestionStatus::Running))
    });
    let mut parts = vec![if waiting { "marking" } else { "marked" }.to_owned()];
    for (what, questions) in [
        (
            "needs review",
            named(&|q| q.status == QuestionStatus::NeedsReview && !q.not_scanned()),
        ),
        (NOT_SCANNED, named(&|q| q.not_scanned())),
        (
            "not marked",
            named(&|q| matches!(q.status, QuestionStatus::Failed | QuestionStatus::Cancelled)),
        ),
        ("blank", named(&|q| q.left_blank())),
    ] {
        if !questions.is_empty() {
            parts.push(format!("{what}: {}", questions.join(", ")));
        }
    }
    match student.standing {
        Standing::NotOnRoster(_) => parts.push("writer not on the roster".into()),
        Standing::WriterUnsettled(_) => parts.push("writer not settled".into()),
        _ => {}
    }
    parts.join("; ")
}

/// The criteria sheet: one row per student, one column per criterion of the paper, each cell
/// the criterion's outcome once its question is marked (`awarded`, `withheld`, `uncertain`).
pub fn criteria(results: &ClassResults) -> Sheet {
    let mut header = vec![
        "Student".to_owned(),
        "Candidate number".to_owned(),
        "Copy".to_owned(),
    ];
    for question in &results.questions {
        header.extend(question.criteria.iter().map(|c| c.name.clone()));
    }
    let mut rows = Vec::with_capacity(results.students.len());
    for student in &results.students {
        let mut row = who(student);
        for question in &results.questions {
            let marked = student
                .standing
                .script()
                .and_then(|s| s.question(&question.label))
                .filter(|q| q.status.is_marked());
            for criterion in &question.criteria {
                row.push(match (&student.standing, marked) {
                    (Standing::Absent, _) => Cell::text(ABSENT),
                    (_, Some(q)) if q.not_scanned() => Cell::text(NOT_SCANNED),
                    (_, Some(q)) => q
                        .criterion(&criterion.id)
                        .map_or(Cell::Empty, |c| Cell::text(c.effective.as_str())),
                    (_, None) => Cell::Empty,
                });
            }
        }
        rows.push(row);
    }
    Sheet {
        name: "Criteria",
        header,
        rows,
    }
}

/// Every criterion decision of every marked question, one row each: who it is, the criterion,
/// its outcome (after conditions and dependencies) and the outcome decided, and who decided it
/// last (the reviewer who last changed it, else the marker) and when.
pub fn decisions(results: &ClassResults) -> Sheet {
    let header = [
        "Student",
        "Candidate number",
        "Copy",
        "Question",
        "Part",
        "Criterion id",
        "Criterion",
        "Outcome",
        "Decided",
        "Marks",
        "Decided by",
        "Decided by kind",
        "Decided at",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    for student in &results.students {
        let Some(script) = student.standing.script() else {
            continue;
        };
        for column in &results.questions {
            let Some(question) = script
                .question(&column.label)
                .filter(|q| q.status.is_marked())
            else {
                continue;
            };
            for criterion in &question.criteria {
                let name = column
                    .criteria
                    .iter()
                    .find(|c| c.id == criterion.id)
                    .map_or_else(
                        || format!("Q{}{} {}", column.label, criterion.part_id, criterion.code),
                        |c| c.name.clone(),
                    );
                let (by, kind, at) = decided_by(script, question, &criterion.id);
                let mut row = who(student);
                row.extend([
                    Cell::text(format!("Q{}", column.label)),
                    Cell::text(criterion.part_id.as_str()),
                    Cell::text(criterion.id.as_str()),
                    Cell::Text(name),
                    Cell::text(criterion.effective.as_str()),
                    Cell::text(criterion.decision.outcome.as_str()),
                    Cell::Int(i64::from(
                        criterion.effective == crate::marked::Outcome::Awarded,
                    )),
                    Cell::maybe(by.as_deref()),
                    Cell::text(kind),
                    Cell::maybe(at.as_deref()),
                ]);
                rows.push(row);
            }
        }
    }
    Sheet {
        name: "Decisions",
        header,
        rows,
    }
}

/// Who last decided a criterion: the reviewer who last changed it, else the question's marker
/// (an automated question's own, an import's session's).
fn decided_by(
    script: &Script,
    question: &MarkedQuestion,
    criterion: &str,
) -> (Option<String>, &'static str, Option<String>) {
    if let Some(logged) = script
        .reviews
        .get(&question.id)
        .and_then(|q| q.get(criterion))
    {
        let kind = match logged.reviewer.kind {
            ReviewerKind::Teacher => "teacher",
            ReviewerKind::ApiKey => "api_key",
        };
        return (
            Some(logged.reviewer.name.clone()),
            kind,
            Some(rfc3339(logged.decided_at)),
        );
    }
    match question
        .marked_by
        .as_ref()
        .or(script.session_marker.as_ref())
    {
        Some(marker) => (
            Some(marker.name.clone()),
            match marker.kind {
                MarkerKind::Human => "human",
                MarkerKind::Ai => "ai",
            },
            Some(marker.marked_at.clone()),
        ),
        None => (None, "unknown", None),
    }
}
