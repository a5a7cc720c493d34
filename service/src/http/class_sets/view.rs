//! Class sets' stacks and scripts as the API shows them (the JSON of `GET /v1/class-sets/{id}`'s
//! `stack` and `marking`, and of a decision's answer), serialised from the typed values of
//! `crate::class_sets::overview`, which counts and orders them once.
//!
//! Each object's fields are declared in the order of their names in the API (`serde_json` sorts
//! a map's keys), so a view reads the same written directly or kept as a `Value`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::class_sets::names::{NameCheck, Reading};
use crate::class_sets::overview::{
    QuestionCounts, ScriptState, ScriptSummary, Scripts, StackNow, placement_name,
};
use crate::class_sets::stack::{CopyState, Placement, StackPage};
use crate::class_sets::students::Writer;
use crate::store::class_sets::scripts::ScriptProgress;
use crate::store::class_sets::stacks::DecisionRow;
use crate::store::class_sets::{CopyRow, SetRow};
use crate::store::marking::AssetRow;
use crate::store::rfc3339;

/// `{"classSet": …}`: the answer of a set made, read or started.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OneSet<'a> {
    pub class_set: ClassSet<'a>,
}

/// `{"classSets": […]}`: the account's sets.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sets<'a> {
    pub class_sets: Vec<ClassSet<'a>>,
}

/// `{"file": …}`: a stack file uploaded.
#[derive(Debug, Serialize)]
pub struct Uploaded<'a> {
    pub file: File<'a>,
}

/// `{"decision": …, "stack": …}`: a decision recorded, with the stack it leaves.
#[derive(Debug, Serialize)]
pub struct Decided<'a> {
    pub decision: Decision<'a>,
    pub stack: Stack<'a>,
}

/// A class set as the API shows it: with its copies when they are given, and with its stack and
/// its marking when the set is read on its own.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassSet<'a> {
    copies: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    copy_list: Option<Vec<RosterCopy<'a>>>,
    created_at: String,
    id: &'a str,
    /// Set by the read of one set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marking: Option<Marking<'a>>,
    named: bool,
    pages_per_copy: i64,
    paper_id: &'a str,
    paper_pages: i64,
    pdf_bytes: i64,
    pdf_pages: i64,
    revision: i64,
    /// Set by the read of one set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<Stack<'a>>,
    title: &'a str,
}

/// A copy as printed: its number, and the student it was printed for.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RosterCopy<'a> {
    candidate_number: Option<&'a str>,
    copy: i64,
    name: Option<&'a str>,
}

/// A set, with its copies when they are given (no stack, no marking).
pub fn class_set<'a>(set: &'a SetRow, copies: Option<&'a [CopyRow]>) -> ClassSet<'a> {
    ClassSet {
        copies: set.copies,
        copy_list: copies.map(|copies| {
            copies
                .iter()
                .map(|c| RosterCopy {
                    candidate_number: c.candidate_number.as_deref(),
                    copy: c.copy,
                    name: c.name.as_deref(),
                })
                .collect()
        }),
        created_at: rfc3339(set.created_at),
        id: &set.id,
        marking: None,
        named: set.named,
        pages_per_copy: set.pages_per_copy,
        paper_id: &set.paper_id,
        paper_pages: set.paper_pages,
        pdf_bytes: set.pdf_size,
        pdf_pages: set.copies * set.pages_per_copy,
        revision: set.revision,
        stack: None,
        title: &set.title,
    }
}

/// A file of the stack.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct File<'a> {
    content_type: &'a str,
    id: &'a str,
    name: &'a str,
    pages: i64,
    sha256: &'a str,
    size_bytes: i64,
    uploaded_at: String,
}

/// A file of the stack.
pub fn file(asset: &AssetRow) -> File<'_> {
    File {
        content_type: &asset.content_type,
        id: &asset.id,
        name: &asset.name,
        pages: asset.page_count,
        sha256: &asset.sha256,
        size_bytes: asset.size_bytes,
        uploaded_at: rfc3339(asset.created_at),
    }
}

/// A recorded decision: the fields of its kind, and who made it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    copy: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    copy_page: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    kind: &'a str,
    made_at: String,
    made_by: MadeBy<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    question: Option<&'a str>,
    seq: i64,
    /// Only a `student` decision has one: the roster copy, or `null` (not on the roster).
    #[serde(skip_serializing_if = "Option::is_none")]
    student: Option<Option<i64>>,
}

/// Who made a decision.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct MadeBy<'a> {
    key_id: &'a str,
    user_id: &'a str,
}

/// A recorded decision.
pub fn decision(row: &DecisionRow) -> Decision<'_> {
    Decision {
        copy: row.copy,
        copy_page: row.copy_page,
        file: row.asset_id.as_deref(),
        kind: &row.kind,
        made_at: rfc3339(row.made_at),
        made_by: MadeBy {
            key_id: &row.made_by_key,
            user_id: &row.made_by_user,
        },
        page: row.page,
        question: row.question.as_deref(),
        seq: row.seq,
        student: (row.kind == "student").then_some(row.student),
    }
}

/// One page of the stack and where it went (`reading` while it is being read), with the
/// fields of its placement.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Page<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    by_hand: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    copy: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    copy_page: Option<u32>,
    file: &'a str,
    page: u32,
    placement: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    question: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

fn page<'a>(at: &'a StackPage, placement: Option<&'a Placement>) -> Page<'a> {
    let mut view = Page {
        by_hand: None,
        copy: None,
        copy_page: None,
        file: &at.file,
        page: at.page,
        placement: placement.map_or("reading", placement_name),
        question: None,
        reason: None,
    };
    match placement {
        None => {}
        Some(Placement::Placed {
            copy,
            page,
            by_hand,
        }) => {
            view.copy = Some(*copy);
            view.copy_page = Some(*page);
            view.by_hand = Some(*by_hand);
        }
        Some(Placement::BlankBack { copy }) => view.copy = Some(*copy),
        Some(
            Placement::Rescan { copy, page }
            | Placement::Conflict { copy, page }
            | Placement::NotChosen { copy, page },
        ) => {
            view.copy = Some(*copy);
            view.copy_page = Some(*page);
        }
        Some(Placement::Extra {
            assigned: Some((copy, question)),
        }) => {
            view.copy = Some(*copy);
            view.question = Some(question);
        }
        Some(Placement::Extra { assigned: None }) => {}
        Some(Placement::Unknown { reason } | Placement::Foreign { reason }) => {
            view.reason = Some(reason);
        }
    }
    view
}

/// The stack as it stands: its files, every page and where it went, every copy with who wrote
/// it and the name written on its cover, the decisions, and the copies whose written name a
/// person must look at.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stack<'a> {
    copies: Vec<Copy<'a>>,
    /// How many pages have each placement, by its name.
    counts: BTreeMap<&'static str, usize>,
    decisions: Vec<Decision<'a>>,
    files: Vec<File<'a>>,
    names_to_check: Vec<u32>,
    pages: Vec<Page<'a>>,
    pages_read: usize,
    pages_total: i64,
    state: &'static str,
}

/// A copy of the stack: its state, its placed pages and extra sheets, who wrote it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Copy<'a> {
    copy: u32,
    extras: Vec<Extra<'a>>,
    /// `null` until its cover's written name is read.
    handwritten_name: Option<Handwritten<'a>>,
    missing_pages: &'a [u32],
    pages: Vec<CopyPage<'a>>,
    state: &'static str,
    writer: &'static str,
}

/// An extra sheet assigned to a copy.
#[derive(Debug, Serialize)]
struct Extra<'a> {
    file: &'a str,
    page: u32,
    question: &'a str,
}

/// A page placed in a copy: the copy's page, and the stack page placed there.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CopyPage<'a> {
    copy_page: u32,
    file: &'a str,
    page: u32,
}

/// The stack as it stands, with who wrote each copy and the name written on its cover when it
/// was read, and the copies whose written name a person must look at.
pub fn stack_now<'a>(now: &'a StackNow, copies: &'a [CopyRow]) -> Stack<'a> {
    let report = &now.stack.report;
    let writers = now.writers(copies);
    let mut checks = now.name_checks(copies);
    let names_to_check = checks
        .iter()
        .filter(|(_, check)| check.flagged)
        .map(|(copy, _)| *copy)
        .collect();
    let listed = report
        .copies
        .iter()
        .map(|(copy, (state, placed))| {
            let (state, missing_pages) = match state {
                CopyState::Complete => ("complete", &[][..]),
                CopyState::Incomplete { missing } => ("incomplete", missing.as_slice()),
                CopyState::Absent => ("absent", &[][..]),
            };
            let extras = report.extras.get(copy).map_or(&[][..], Vec::as_slice);
            Copy {
                copy: *copy,
                extras: extras
                    .iter()
                    .map(|(question, at)| Extra {
                        file: &at.file,
                        page: at.page,
                        question,
                    })
                    .collect(),
                handwritten_name: checks.remove(copy).map(|check| handwritten(check, copies)),
                missing_pages,
                pages: placed
                    .iter()
                    .map(|(copy_page, at)| CopyPage {
                        copy_page: *copy_page,
                        file: &at.file,
                        page: at.page,
                    })
                    .collect(),
                state,
                writer: writers
                    .get(copy)
                    .copied()
                    .unwrap_or(Writer::Numbered)
                    .name(),
            }
        })
        .collect();
    Stack {
        copies: listed,
        counts: now.counts().into_iter().collect(),
        decisions: now.decisions.iter().map(decision).collect(),
        files: now.files.iter().map(file).collect(),
        names_to_check,
        pages: now
            .pages()
            .into_iter()
            .map(|(at, placement)| page(at, placement))
            .collect(),
        pages_read: report.pages.len(),
        pages_total: now.files.iter().map(|f| f.page_count).sum(),
        state: now.state().name(),
    }
}

/// A copy's written name, checked: what was read (or why it could not be), the roster student
/// it matches, and how that bears on who wrote the copy.
#[derive(Debug, Serialize)]
struct Handwritten<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    flagged: bool,
    #[serde(rename = "match")]
    matched: Option<Matched<'a>>,
    state: &'static str,
    verdict: &'static str,
    written: Option<String>,
}

/// The roster student a written name matches.
#[derive(Debug, Serialize)]
struct Matched<'a> {
    confidence: f64,
    name: Option<&'a str>,
    student: u32,
}

fn handwritten(check: NameCheck, copies: &[CopyRow]) -> Handwritten<'_> {
    let (state, written, error) = match check.reading {
        Reading::Reading => ("reading", None, None),
        Reading::Read(written) => ("read", written, None),
        Reading::Failed(error) => ("failed", None, Some(error)),
    };
    Handwritten {
        error,
        flagged: check.flagged,
        matched: check.matched.map(|m| Matched {
            confidence: m.confidence,
            name: copies
                .iter()
                .find(|c| c.copy == i64::from(m.student))
                .and_then(|c| c.name.as_deref()),
            student: m.student,
        }),
        state,
        verdict: check.verdict.name(),
        written,
    }
}

/// The marking of a set (`GET /v1/class-sets/{id}`'s `marking`): every script with its
/// session's progress, and the copies whose script is not the stack as it stands (start again
/// to mark them).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Marking<'a> {
    out_of_date: Vec<i64>,
    scripts: Vec<Script<'a>>,
    scripts_marked: usize,
    state: &'static str,
}

/// One script: its copy and student, its session, the pages it lacks, and its questions.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Script<'a> {
    copy: i64,
    current: bool,
    made_at: String,
    missing_pages: Vec<i64>,
    questions: Questions,
    score: Score,
    session_id: String,
    state: &'static str,
    student: Option<Student<'a>>,
    writer: &'static str,
}

/// A script's questions by status.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Questions {
    cancelled: i64,
    completed: i64,
    failed: i64,
    needs_review: i64,
    queued: i64,
    running: i64,
    total: i64,
}

impl From<QuestionCounts> for Questions {
    fn from(q: QuestionCounts) -> Self {
        Questions {
            cancelled: q.cancelled,
            completed: q.completed,
            failed: q.failed,
            needs_review: q.needs_review,
            queued: q.queued,
            running: q.running,
            total: q.total,
        }
    }
}

/// A script's marks: awarded, still possible once reviewed, and its questions' most.
#[derive(Debug, Serialize)]
struct Score {
    awarded: i64,
    max: i64,
    possible: i64,
}

/// The roster student who wrote a script, and whether a person said so.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Student<'a> {
    candidate_number: Option<&'a str>,
    confirmed: bool,
    name: &'a str,
    printed_on_copy: i64,
    source: &'static str,
}

/// The marking of a set: its scripts (`progress`, each with its session's progress) against its
/// stack as it stands, with who wrote each copy.
pub fn marking<'a>(
    progress: &[ScriptProgress],
    copies: &'a [CopyRow],
    writers: &BTreeMap<u32, Writer>,
    stack: &crate::class_sets::scans::Stack,
) -> Marking<'a> {
    let made = Scripts::of(progress, stack);
    Marking {
        scripts_marked: made
            .scripts
            .iter()
            .filter(|s| s.state == ScriptState::Marked)
            .count(),
        state: made.marking().name(),
        scripts: made
            .scripts
            .into_iter()
            .map(|s| script(s, copies, writers))
            .collect(),
        out_of_date: made.out_of_date,
    }
}

fn script<'a>(
    summary: ScriptSummary,
    copies: &'a [CopyRow],
    writers: &BTreeMap<u32, Writer>,
) -> Script<'a> {
    let writer = u32::try_from(summary.copy)
        .ok()
        .and_then(|copy| writers.get(&copy).copied())
        .unwrap_or(Writer::Numbered);
    let confirmed = matches!(writer, Writer::Confirmed(_));
    let student = writer
        .student()
        .and_then(|s| copies.iter().find(|c| c.copy == i64::from(s)))
        .and_then(|c| {
            Some(Student {
                candidate_number: c.candidate_number.as_deref(),
                confirmed,
                name: c.name.as_deref()?,
                printed_on_copy: c.copy,
                source: if confirmed { "person" } else { "printed" },
            })
        });
    Script {
        copy: summary.copy,
        current: summary.current,
        made_at: rfc3339(summary.made_at),
        missing_pages: summary.missing,
        questions: summary.questions.into(),
        score: Score {
            awarded: summary.awarded,
            max: summary.max,
            possible: summary.possible,
        },
        session_id: summary.session_id,
        state: summary.state.name(),
        student,
        writer: writer.name(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use serde_json::Value;

    use super::*;
    use crate::class_sets::names::Match;
    use crate::class_sets::scans;
    use crate::class_sets::stack::{Report, Run};
    use crate::store::class_sets::names::NameRow;
    use crate::store::class_sets::scripts::ScriptRow;
    use crate::store::words::NameState;

    const A: &str = "0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d";
    const B: &str = "1b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d";

    fn at(file: &str, page: u32) -> StackPage {
        StackPage {
            file: file.to_owned(),
            page,
        }
    }

    fn asset(id: &str, name: &str, pages: i64) -> AssetRow {
        AssetRow {
            id: id.to_owned(),
            session_id: "s".to_owned(),
            kind: crate::store::words::AssetKind::Work,
            name: name.to_owned(),
            content_type: "application/pdf".to_owned(),
            size_bytes: 1234,
            page_count: pages,
            sha256: "ab".repeat(32),
            created_at: 1_700_000_000_000,
        }
    }

    fn row(seq: i64, kind: &str) -> DecisionRow {
        DecisionRow {
            seq,
            kind: kind.to_owned(),
            asset_id: None,
            page: None,
            copy: None,
            copy_page: None,
            question: None,
            student: None,
            made_by_key: "key-1".to_owned(),
            made_by_user: "user-1".to_owned(),
            made_at: 1_700_000_100_000 + seq,
        }
    }

    fn copies() -> Vec<CopyRow> {
        vec![
            CopyRow {
                copy: 1,
                name: Some("Ada Lovelace".into()),
                candidate_number: Some("A-1".into()),
            },
            CopyRow {
                copy: 2,
                name: Some("Alan Turing".into()),
                candidate_number: None,
            },
            CopyRow {
                copy: 3,
                name: Some("Grace Hopper".into()),
                candidate_number: None,
            },
        ]
    }

    fn now(reading: bool) -> StackNow {
        let run = Run {
            id: uuid::Uuid::from_u128(7),
            copies: BTreeSet::from([1, 2, 3]),
            paper_pages: 2,
            pages_per_copy: 2,
        };
        let report = Report {
            pages: vec![
                (at(B, 1), Placement::BlankBack { copy: 1 }),
                (
                    at(A, 1),
                    Placement::Placed {
                        copy: 1,
                        page: 1,
                        by_hand: false,
                    },
                ),
                (
                    at(A, 2),
                    Placement::Placed {
                        copy: 1,
                        page: 2,
                        by_hand: true,
                    },
                ),
                (at(B, 2), Placement::Rescan { copy: 1, page: 1 }),
                (at(A, 3), Placement::Conflict { copy: 2, page: 1 }),
                (at(A, 4), Placement::NotChosen { copy: 2, page: 1 }),
                (
                    at(B, 3),
                    Placement::Extra {
                        assigned: Some((2, "4(b)".into())),
                    },
                ),
                (at(B, 4), Placement::Extra { assigned: None }),
                (
                    at(A, 5),
                    Placement::Unknown {
                        reason: "no code".into(),
                    },
                ),
                (
                    at(B, 5),
                    Placement::Foreign {
                        reason: "another run".into(),
                    },
                ),
            ],
            copies: BTreeMap::from([
                (
                    1,
                    (
                        CopyState::Complete,
                        BTreeMap::from([(1, at(A, 1)), (2, at(A, 2))]),
                    ),
                ),
                (
                    2,
                    (
                        CopyState::Incomplete { missing: vec![2] },
                        BTreeMap::from([(1, at(A, 3))]),
                    ),
                ),
                (3, (CopyState::Absent, BTreeMap::new())),
            ]),
            extras: BTreeMap::from([(2, vec![("4(b)".into(), at(B, 3))])]),
        };
        let reading = if reading {
            vec![at("2b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d", 1), at(A, 6)]
        } else {
            Vec::new()
        };
        let mut place = row(1, "place");
        place.asset_id = Some(A.into());
        place.page = Some(2);
        place.copy = Some(1);
        place.copy_page = Some(2);
        let mut nobody = row(2, "student");
        nobody.copy = Some(3);
        let mut student = row(3, "student");
        student.copy = Some(2);
        student.student = Some(1);
        let mut extra = row(4, "extra");
        extra.asset_id = Some(B.into());
        extra.page = Some(3);
        extra.copy = Some(2);
        extra.question = Some("4(b)".into());
        let decisions = vec![place, nobody, student, extra];
        let stack = scans::Stack {
            run,
            reading,
            report,
        };
        StackNow {
            files: vec![asset(A, "one.pdf", 6), asset(B, "two.pdf", 5)],
            stack,
            decisions,
            names: vec![
                NameRow {
                    asset_id: A.into(),
                    page: 1,
                    state: NameState::Read,
                    written: Some("Alan T.".into()),
                    error: None,
                },
                NameRow {
                    asset_id: A.into(),
                    page: 3,
                    state: NameState::Failed,
                    written: None,
                    error: Some("blurred".into()),
                },
            ],
            matches: Arc::new(BTreeMap::from([(
                1,
                Match {
                    student: 2,
                    confidence: 0.87,
                },
            )])),
        }
    }

    fn progress() -> Vec<ScriptProgress> {
        let script = |copy: i64, session: &str, missing: &str| ScriptRow {
            copy,
            session_id: session.to_owned(),
            pages_json: "[]".to_owned(),
            missing_json: missing.to_owned(),
            created_at: 1_700_000_200_000,
            superseded_at: None,
        };
        vec![
            ScriptProgress {
                script: script(1, "s1", "[]"),
                indexing_state: None,
                pending_jobs: 1,
                questions: vec![
                    ("completed".into(), 2, 3, 4, 5),
                    ("needs_review".into(), 1, 1, 2, 3),
                    ("queued".into(), 1, 0, 0, 2),
                ],
            },
            ScriptProgress {
                script: script(2, "s2", "[2]"),
                indexing_state: None,
                pending_jobs: 0,
                questions: Vec::new(),
            },
        ]
    }

    /// The bytes of a view, checked to be the bytes of the same view as a `Value` (whose keys
    /// `serde_json` sorts): the fields are declared in that order.
    fn bytes(view: &impl Serialize) -> String {
        let direct = serde_json::to_string(view).expect("serialised");
        let value: Value = serde_json::to_value(view).expect("a value");
        assert_eq!(direct, value.to_string(), "fields in name order");
        direct
    }

    #[test]
    fn a_read_stack_is_written_field_by_field() {
        let copies = copies();
        let now = now(false);
        assert_eq!(
            bytes(&stack_now(&now, &copies)),
            concat!(
                r#"{"copies":["#,
                r#"{"copy":1,"extras":[],"handwrittenName":{"flagged":true,"match":{"confidence":0.87,"name":"Alan Turing","student":2},"state":"read","verdict":"disagrees","written":"Alan T."},"missingPages":[],"pages":[{"copyPage":1,"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":1},{"copyPage":2,"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":2}],"state":"complete","writer":"displaced"},"#,
                r#"{"copy":2,"extras":[{"file":"1b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":3,"question":"4(b)"}],"handwrittenName":{"error":"blurred","flagged":false,"match":null,"state":"failed","verdict":"unread","written":null},"missingPages":[2],"pages":[{"copyPage":1,"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":3}],"state":"incomplete","writer":"confirmed"},"#,
                r#"{"copy":3,"extras":[],"handwrittenName":null,"missingPages":[],"pages":[],"state":"absent","writer":"notOnRoster"}],"#,
                r#""counts":{"blankBack":1,"conflict":1,"extra":2,"foreign":1,"notChosen":1,"placed":2,"rescan":1,"unknown":1},"#,
                r#""decisions":["#,
                r#"{"copy":1,"copyPage":2,"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","kind":"place","madeAt":"2023-11-14T22:15:00.001Z","madeBy":{"keyId":"key-1","userId":"user-1"},"page":2,"seq":1},"#,
                r#"{"copy":3,"kind":"student","madeAt":"2023-11-14T22:15:00.002Z","madeBy":{"keyId":"key-1","userId":"user-1"},"seq":2,"student":null},"#,
                r#"{"copy":2,"kind":"student","madeAt":"2023-11-14T22:15:00.003Z","madeBy":{"keyId":"key-1","userId":"user-1"},"seq":3,"student":1},"#,
                r#"{"copy":2,"file":"1b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","kind":"extra","madeAt":"2023-11-14T22:15:00.004Z","madeBy":{"keyId":"key-1","userId":"user-1"},"page":3,"question":"4(b)","seq":4}],"#,
                r#""files":["#,
                r#"{"contentType":"application/pdf","id":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","name":"one.pdf","pages":6,"sha256":"abababababababababababababababababababababababababababababababab","sizeBytes":1234,"uploadedAt":"2023-11-14T22:13:20.000Z"},"#,
                r#"{"contentType":"application/pdf","id":"1b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","name":"two.pdf","pages":5,"sha256":"abababababababababababababababababababababababababababababababab","sizeBytes":1234,"uploadedAt":"2023-11-14T22:13:20.000Z"}],"#,
                r#""namesToCheck":[1],"#,
                r#""pages":["#,
                r#"{"byHand":false,"copy":1,"copyPage":1,"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":1,"placement":"placed"},"#,
                r#"{"byHand":true,"copy":1,"copyPage":2,"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":2,"placement":"placed"},"#,
                r#"{"copy":2,"copyPage":1,"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":3,"placement":"conflict"},"#,
                r#"{"copy":2,"copyPage":1,"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":4,"placement":"notChosen"},"#,
                r#"{"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":5,"placement":"unknown","reason":"no code"},"#,
                r#"{"copy":1,"file":"1b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":1,"placement":"blankBack"},"#,
                r#"{"copy":1,"copyPage":1,"file":"1b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":2,"placement":"rescan"},"#,
                r#"{"copy":2,"file":"1b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":3,"placement":"extra","question":"4(b)"},"#,
                r#"{"file":"1b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":4,"placement":"extra"},"#,
                r#"{"file":"1b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":5,"placement":"foreign","reason":"another run"}],"#,
                r#""pagesRead":10,"pagesTotal":11,"state":"read"}"#,
            )
        );
    }

    #[test]
    fn pages_being_read_stand_in_stack_order() {
        let copies = copies();
        let now = now(true);
        let view: Value = serde_json::to_value(stack_now(&now, &copies)).expect("a value");
        assert_eq!(view["state"], "reading");
        let pages = view["pages"].as_array().expect("pages");
        // A file none of the stack's comes first; a page being read stands among its file's.
        assert_eq!(
            pages[0].to_string(),
            r#"{"file":"2b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":1,"placement":"reading"}"#
        );
        assert_eq!(
            pages[6].to_string(),
            r#"{"file":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","page":6,"placement":"reading"}"#
        );
        assert_eq!(pages.len(), 12);
    }

    #[test]
    fn marking_is_written_field_by_field() {
        let copies = copies();
        for reading in [true, false] {
            let now = now(reading);
            let writers = now.writers(&copies);
            let (out_of_date, current) = if reading {
                ("[]", "true")
            } else {
                ("[1,2]", "false")
            };
            assert_eq!(
                bytes(&marking(&progress(), &copies, &writers, &now.stack)),
                [
                    r#"{"outOfDate":"#,
                    out_of_date,
                    r#","scripts":[{"copy":1,"current":"#,
                    current,
                    r#","madeAt":"2023-11-14T22:16:40.000Z","missingPages":[],"questions":{"cancelled":0,"completed":2,"failed":0,"needsReview":1,"queued":1,"running":0,"total":4},"score":{"awarded":4,"max":10,"possible":6},"sessionId":"s1","state":"marking","student":null,"writer":"displaced"},"#,
                    r#"{"copy":2,"current":"#,
                    current,
                    r#","madeAt":"2023-11-14T22:16:40.000Z","missingPages":[2],"questions":{"cancelled":0,"completed":0,"failed":0,"needsReview":0,"queued":0,"running":0,"total":0},"score":{"awarded":0,"max":0,"possible":0},"sessionId":"s2","state":"failed","student":{"candidateNumber":"A-1","confirmed":true,"name":"Ada Lovelace","printedOnCopy":1,"source":"person"},"writer":"confirmed"}],"#,
                    r#""scriptsMarked":0,"state":"marking"}"#,
                ]
                .concat()
            );
            assert_eq!(
                bytes(&marking(&[], &copies, &writers, &now.stack)),
                format!(
                    r#"{{"outOfDate":{out_of_date},"scripts":[],"scriptsMarked":0,"state":"notStarted"}}"#
                )
            );
        }
        let now = now(true);
        let mut done = progress();
        done.truncate(1);
        done[0].questions.truncate(2);
        done[0].pending_jobs = 0;
        let view: Value =
            serde_json::to_value(marking(&done, &copies, &now.writers(&copies), &now.stack))
                .expect("a value");
        assert_eq!(
            (view["state"].as_str(), view["scriptsMarked"].as_u64()),
            (Some("marked"), Some(1))
        );
    }

    #[test]
    fn a_set_is_written_with_its_copies_when_given() {
        let set = SetRow {
            id: "3b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d".into(),
            paper_id: A.into(),
            revision: 2,
            title: "Year 9".into(),
            copies: 3,
            named: true,
            paper_pages: 2,
            pages_per_copy: 2,
            pdf_size: 999,
            created_at: 1_700_000_000_000,
            stack_session_id: None,
        };
        let fields = r#""createdAt":"2023-11-14T22:13:20.000Z","id":"3b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","named":true,"pagesPerCopy":2,"paperId":"0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d","paperPages":2,"pdfBytes":999,"pdfPages":6,"revision":2,"title":"Year 9"}"#;
        assert_eq!(
            bytes(&class_set(&set, None)),
            format!(r#"{{"copies":3,{fields}"#)
        );
        let copies = copies();
        assert_eq!(
            bytes(&class_set(&set, Some(&copies))),
            format!(
                r#"{{"copies":3,"copyList":[{{"candidateNumber":"A-1","copy":1,"name":"Ada Lovelace"}},{{"candidateNumber":null,"copy":2,"name":"Alan Turing"}},{{"candidateNumber":null,"copy":3,"name":"Grace Hopper"}}],{fields}"#
            )
        );
    }
}
