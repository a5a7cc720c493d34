//! A class's results, loaded once: the paper's questions and criteria (the markbook's columns)
//! and every student (its rows) with the script they wrote, its questions read as
//! [`MarkedQuestion`]s.

use std::collections::HashMap;

use serde::Deserialize;

use crate::class_sets::overview::{self, LoadError, StackState};
use crate::class_sets::stack::CopyState;
use crate::class_sets::students::Writer;
use crate::marked::{MarkedError, MarkedQuestion, MarkerSource, QuestionStatus};
use crate::results::returned::{ClassScript, ScriptHeading};
use crate::store::marking::SessionRow;
use crate::store::results::SessionReviews;
use crate::store::words::AssetKind;
use crate::store::{Store, StoreError};

/// The most sessions one markbook of sessions takes (a class set's most copies).
pub const MAX_SESSIONS: usize = 300;

/// Why a class's results could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The class set, a session or the paper does not exist or is another account's.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The sessions asked for are not all made from one paper revision.
    #[error("{0}")]
    NotOnePaper(String),
    /// The paper's revision or its bank questions are not prepared (the set's PDFs were never
    /// made).
    #[error("the paper's questions cannot be read: {0}")]
    Unprepared(String),
    /// A stored question cannot be read.
    #[error("question {question}: {error}")]
    Marked {
        /// The question id.
        question: String,
        /// What is wrong with it.
        error: MarkedError,
    },
    /// A stored value of the set is out of its range.
    #[error("{0}")]
    Corrupt(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<LoadError> for ResultsError {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::Store(e) => ResultsError::Store(e),
            LoadError::Corrupt(what) => ResultsError::Corrupt(what),
        }
    }
}

/// A class's results.
#[derive(Debug, Clone)]
pub struct ClassResults {
    /// The class set's title, or the paper's.
    pub title: String,
    /// The paper's title (the set's title when the paper is no longer saved).
    pub paper_title: String,
    /// The paper's questions in paper order.
    pub questions: Vec<QuestionColumn>,
    /// The students, in roster order (or the order the sessions were asked for).
    pub students: Vec<StudentResult>,
}

impl ClassResults {
    /// The scripts to return, in the class's order, each headed by its student (or `Copy 003`
    /// when nobody is named), the paper and `date`, with its questions not marked finally.
    /// Students without a script are left out.
    pub fn scripts_to_return(&self, date: &str) -> Vec<ClassScript> {
        self.students
            .iter()
            .filter_map(|student| {
                let script = student.standing.script()?;
                let name = student
                    .student
                    .clone()
                    .unwrap_or_else(|| match student.copy {
                        Some(copy) => format!("Copy {copy:03}"),
                        None => "Script".to_owned(),
                    });
                let unfinished = (!script.questions.is_empty()).then(|| {
                    script
                        .questions
                        .iter()
                        .filter(|q| q.status != QuestionStatus::Completed)
                        .map(|q| q.label.clone())
                        .collect()
                });
                Some(ClassScript {
                    session_id: script.session_id.clone(),
                    heading: ScriptHeading {
                        student: name,
                        paper_title: self.paper_title.clone(),
                        date: date.to_owned(),
                    },
                    unfinished,
                })
            })
            .collect()
    }
}

/// A question of the paper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionColumn {
    /// Its label, as its marking questions carry it (`1`, `2`, …).
    pub label: String,
    /// Its marks.
    pub max: i64,
    /// Its criteria in scheme order.
    pub criteria: Vec<CriterionColumn>,
}

/// A criterion of the paper's scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriterionColumn {
    /// The criterion id.
    pub id: String,
    /// Its part.
    pub part_id: String,
    /// Its mark code (`M1`, `dA1`, …).
    pub code: String,
    /// Its name in the markbook: `Q3a M1`; a code repeated in a part is told apart by its id
    /// (`Q3a M1 (a3)`).
    pub name: String,
}

/// One student of the class (or one script whose writer is not on the roster).
#[derive(Debug, Clone)]
pub struct StudentResult {
    /// The student's name: the roster's, or a session's title; `None` for a numbered copy and
    /// for a script whose writer is not settled.
    pub student: Option<String>,
    /// The student's candidate number, from the roster.
    pub candidate_number: Option<String>,
    /// The copy they wrote.
    pub copy: Option<u32>,
    /// Where their script is.
    pub standing: Standing,
}

/// Where a student's script is.
#[derive(Debug, Clone)]
pub enum Standing {
    /// The copy was not sat.
    Absent,
    /// No script holds the student: their printed copy was given to another student and no
    /// copy was said to be theirs.
    NoScript,
    /// The script is known but marking has not started.
    NotStarted,
    /// The copy's writer is not on the roster.
    NotOnRoster(Box<Script>),
    /// A person must say who wrote the copy.
    WriterUnsettled(Box<Script>),
    /// The student's script.
    Script(Box<Script>),
}

impl Standing {
    /// The script, when there is one.
    pub fn script(&self) -> Option<&Script> {
        match self {
            Standing::NotOnRoster(s) | Standing::WriterUnsettled(s) | Standing::Script(s) => {
                Some(s)
            }
            _ => None,
        }
    }
}

/// A script's marking.
#[derive(Debug, Clone)]
pub struct Script {
    /// Its marking session.
    pub session_id: String,
    /// Who marked an import (the session's `source`); automated questions name their own.
    pub session_marker: Option<MarkerSource>,
    /// Its questions, in paper order.
    pub questions: Vec<MarkedQuestion>,
    /// Who last reviewed each criterion, by question id and criterion id.
    pub reviews: SessionReviews,
}

impl Script {
    /// The question labelled `label`.
    pub fn question(&self, label: &str) -> Option<&MarkedQuestion> {
        self.questions.iter().find(|q| q.label == label)
    }
}

/// The results of the class set `set_id` of the account: one row per roster student in roster
/// order, then each copy whose writer is not on the roster or not settled; a numbered set has
/// one row per copy.
pub async fn of_class_set(
    store: &Store,
    user_id: &str,
    set_id: &str,
) -> Result<ClassResults, ResultsError> {
    let set = overview::load(store, user_id, set_id)
        .await?
        .ok_or(ResultsError::NotFound("class set"))?;
    let questions = columns(store, user_id, &set.set.paper_id, set.set.revision).await?;
    let lines = set.copy_lines();
    // A copy with no page is absent once the whole stack is read, or when a person said so;
    // before that its pages may still come.
    let read = set.now.state() == StackState::Read;
    let absent = |line: &overview::CopyLine<'_>| {
        matches!(line.state, CopyState::Absent) && (read || line.absent_by_person)
    };
    let standing = |line: &overview::CopyLine<'_>| -> Option<String> {
        if absent(line) {
            return None;
        }
        line.script.map(|s| s.session_id.clone())
    };
    let mut students = Vec::with_capacity(lines.len());
    if set.named() {
        for student in &set.copies {
            let held = lines
                .iter()
                .find(|l| l.writer.student() == u32::try_from(student.copy).ok());
            let (copy, standing) = match held {
                None => (None, Standing::NoScript),
                Some(line) if absent(line) => (Some(line_copy(line)?), Standing::Absent),
                Some(line) => match standing(line) {
                    None => (Some(line_copy(line)?), Standing::NotStarted),
                    Some(session) => (
                        Some(line_copy(line)?),
                        Standing::Script(Box::new(script(store, user_id, &session).await?)),
                    ),
                },
            };
            students.push(StudentResult {
                student: student.name.clone(),
                candidate_number: student.candidate_number.clone(),
                copy,
                standing,
            });
        }
        for line in &lines {
            let unsettled = match line.writer {
                Writer::NotOnRoster => false,
                Writer::Displaced => true,
                _ => continue,
            };
            let Some(session) = standing(line) else {
                continue;
            };
            let script = Box::new(script(store, user_id, &session).await?);
            students.push(StudentResult {
                student: None,
                candidate_number: None,
                copy: Some(line_copy(line)?),
                standing: if unsettled {
                    Standing::WriterUnsettled(script)
                } else {
                    Standing::NotOnRoster(script)
                },
            });
        }
    } else {
        for line in &lines {
            let standing = if absent(line) {
                Standing::Absent
            } else {
                match standing(line) {
                    None => Standing::NotStarted,
                    Some(session) => {
                        Standing::Script(Box::new(script(store, user_id, &session).await?))
                    }
                }
            };
            students.push(StudentResult {
                student: None,
                candidate_number: None,
                copy: Some(line_copy(line)?),
                standing,
            });
        }
    }
    Ok(ClassResults {
        title: set.set.title.clone(),
        paper_title: set
            .paper_title
            .clone()
            .unwrap_or_else(|| set.set.title.clone()),
        questions,
        students,
    })
}

fn line_copy(line: &overview::CopyLine<'_>) -> Result<u32, ResultsError> {
    u32::try_from(line.printed.copy)
        .map_err(|_| ResultsError::Corrupt(format!("copy {} is out of range", line.printed.copy)))
}

/// The results of the account's sessions `ids`, in that order, each row named by its session's
/// title. Every session must be made from the same paper revision.
pub async fn of_sessions(
    store: &Store,
    user_id: &str,
    ids: &[String],
) -> Result<ClassResults, ResultsError> {
    let mut sessions: Vec<SessionRow> = Vec::with_capacity(ids.len());
    for id in ids {
        let session = store
            .session(user_id, id)
            .await?
            .ok_or(ResultsError::NotFound("marking session"))?;
        sessions.push(session);
    }
    let mut papers = sessions.iter().map(|s| (s, s.paper.as_ref()));
    let Some((first, Some((paper_id, revision)))) = papers.next() else {
        return Err(ResultsError::NotOnePaper(format!(
            "session {} was not made from a saved paper",
            ids.first().map_or("", String::as_str)
        )));
    };
    for (session, paper) in papers {
        match paper {
            Some(p) if p.0 == *paper_id && p.1 == *revision => {}
            Some((other, other_revision)) => {
                return Err(ResultsError::NotOnePaper(format!(
                    "session {} was made from paper {other} revision {other_revision}, session {} \
                     from paper {paper_id} revision {revision}",
                    session.id, first.id
                )));
            }
            None => {
                return Err(ResultsError::NotOnePaper(format!(
                    "session {} was not made from a saved paper",
                    session.id
                )));
            }
        }
    }
    let questions = columns(store, user_id, paper_id, *revision).await?;
    let title = store
        .paper_revision_title(user_id, paper_id, *revision)
        .await?
        .unwrap_or_else(|| paper_id.clone());
    let mut students = Vec::with_capacity(sessions.len());
    for session in &sessions {
        let standing = Standing::Script(Box::new(script(store, user_id, &session.id).await?));
        students.push(StudentResult {
            student: Some(session.title.clone()),
            candidate_number: None,
            copy: None,
            standing,
        });
    }
    Ok(ClassResults {
        paper_title: title.clone(),
        title,
        questions,
        students,
    })
}

/// The marking of session `session_id`.
async fn script(store: &Store, user_id: &str, session_id: &str) -> Result<Script, ResultsError> {
    let (session, assets) = store
        .session_with_assets(user_id, session_id)
        .await?
        .ok_or(ResultsError::NotFound("marking session"))?;
    let kinds: HashMap<String, AssetKind> = assets.iter().map(|a| (a.id.clone(), a.kind)).collect();
    let rows = store.session_questions(session_id).await?;
    let questions = rows
        .iter()
        .map(|row| {
            MarkedQuestion::from_row(row, &kinds).map_err(|error| ResultsError::Marked {
                question: row.id.clone(),
                error,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let session_marker = session
        .source_json
        .as_deref()
        .map(MarkerSource::from_json)
        .transpose()
        .map_err(|error| ResultsError::Marked {
            question: format!("(session {session_id} source)"),
            error,
        })?;
    Ok(Script {
        session_id: session_id.to_owned(),
        session_marker,
        questions,
        reviews: store.session_reviews(session_id).await?,
    })
}

/// The bank revision's fields the columns are read from.
#[derive(Deserialize)]
struct BankQuestion {
    marks: i64,
    scheme: BankScheme,
}

#[derive(Deserialize)]
struct BankScheme {
    criteria: Vec<BankCriterion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BankCriterion {
    id: String,
    part_id: String,
    code: String,
}

/// The questions of the paper revision, labelled as marking labels them (`1`, `2`, … in paper
/// order, see [`crate::marking::paper_scheme`]).
async fn columns(
    store: &Store,
    user_id: &str,
    paper_id: &str,
    revision: i64,
) -> Result<Vec<QuestionColumn>, ResultsError> {
    let paper = store
        .paper(user_id, paper_id, Some(revision))
        .await?
        .ok_or(ResultsError::NotFound("paper"))?;
    let mut questions = Vec::with_capacity(paper.content.questions.len());
    for (n, pin) in paper.content.questions.iter().enumerate() {
        let stored = store
            .bank_revision(&pin.question_id, pin.revision)
            .await?
            .ok_or_else(|| {
                ResultsError::Unprepared(format!(
                    "bank question {} revision {} is missing",
                    pin.question_id, pin.revision
                ))
            })?;
        let bank: BankQuestion = serde_json::from_str(&stored.body).map_err(|e| {
            ResultsError::Corrupt(format!(
                "bank question {} revision {} cannot be read: {e}",
                pin.question_id, pin.revision
            ))
        })?;
        questions.push(QuestionColumn::new(
            &(n + 1).to_string(),
            bank.marks,
            bank.scheme
                .criteria
                .iter()
                .map(|c| (c.id.as_str(), c.part_id.as_str(), c.code.as_str())),
        ));
    }
    Ok(questions)
}

impl QuestionColumn {
    /// The question `label` of `max` marks with `criteria` (id, part, code) in scheme order.
    pub fn new<'a>(
        label: &str,
        max: i64,
        criteria: impl Iterator<Item = (&'a str, &'a str, &'a str)> + Clone,
    ) -> QuestionColumn {
        let columns = criteria
            .clone()
            .map(|(id, part_id, code)| {
                let repeated = criteria
                    .clone()
                    .filter(|(_, p, c)| *p == part_id && *c == code)
                    .count()
                    > 1;
                let mut name = format!("Q{label}{part_id} {code}");
                if repeated {
                    name.push_str(&format!(" ({id})"));
                }
                CriterionColumn {
                    id: id.to_owned(),
                    part_id: part_id.to_owned(),
                    code: code.to_owned(),
                    name,
                }
            })
            .collect();
        QuestionColumn {
            label: label.to_owned(),
            max,
            criteria: columns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_criterion_is_named_by_question_part_and_code_and_a_repeated_code_by_its_id() {
        let column = QuestionColumn::new(
            "3",
            4,
            [
                ("a1", "a", "M1"),
                ("a2", "a", "A1"),
                ("b1", "b", "M1"),
                ("b2", "b", "M1"),
            ]
            .into_iter(),
        );
        let names: Vec<&str> = column.criteria.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Q3a M1", "Q3a A1", "Q3b M1 (b1)", "Q3b M1 (b2)"]);
    }
}
