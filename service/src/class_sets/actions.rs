//! What people do to a class set, whoever asks: a decision about its stack, and starting its
//! marking. `POST /v1/class-sets/{id}/decisions` and `/start` and the app's forms all come here,
//! so a decision is read and checked ([`super::decision`], [`super::students`]) and recorded,
//! and scripts are made, by one path. Each returns its own error, which the API and the app put
//! in their own words.

use std::collections::BTreeMap;
use std::future::Future;

use serde_json::json;

use super::overview::{self, LoadError, StackNow};
use super::request::Problem;
use super::scripts::{self, NotReady, Script};
use super::stack::{Decision, Placement};
use super::students::{self, Writer};
use crate::marking::MarkingConfig;
use crate::marking::placement::{Found, FoundLabel};
use crate::store::automated::PaperBinding;
use crate::store::class_sets::names::NameReader;
use crate::store::class_sets::scripts::{NewScript, SchemeFile, ScriptPageRef, StartScripts};
use crate::store::class_sets::stacks::{DecisionRow, Reread};
use crate::store::class_sets::{CopyRow, SetRow};
use crate::store::job_kind::PlacedAs;
use crate::store::papers::{BankRevision, ExportKind, StoredPaper};
use crate::store::{Store, StoreError, now_ms};

/// Who acts: the API key (or the app's browser session) and its account, as a decision records
/// them.
#[derive(Debug, Clone, Copy)]
pub struct Actor<'a> {
    /// The key's id, or the app session's name for it.
    pub key_id: &'a str,
    /// The account.
    pub user_id: &'a str,
}

/// Why a decision was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// The decision is not one the stack as it stands allows (every problem, at its field).
    #[error("the decision is refused")]
    Invalid(Vec<Problem>),
    /// The set could not be loaded, or the database failed.
    #[error(transparent)]
    Load(#[from] LoadError),
}

impl From<StoreError> for DecideError {
    fn from(e: StoreError) -> Self {
        DecideError::Load(LoadError::Store(e))
    }
}

/// A recorded decision, with the stack it leaves.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The decision as recorded.
    pub row: DecisionRow,
    /// The stack with it.
    pub now: StackNow,
}

/// Checks a decision (as read by [`super::decision::parse`] or [`super::decision::read`])
/// against the set's stack and earlier decisions, and records it, made by `by`. A refused
/// decision changes nothing. A person placing a named copy's cover has its written name read,
/// as a cover placed by its code has, when `config`'s marker reads names. A page placed by hand
/// is read again as the copy's page it was placed as, and is being read until that is done.
pub async fn decide(
    store: &Store,
    config: &MarkingConfig,
    set: &SetRow,
    decision: &Decision,
    by: Actor<'_>,
) -> Result<Decided, DecideError> {
    let copies = store.class_set_copies(&set.id).await?;
    let before = overview::stack_now(store, set, &copies).await?;
    super::decision::check(decision, &before.stack).map_err(DecideError::Invalid)?;
    super::decision::check_changes(decision, &before.stack, &before.decided())
        .map_err(DecideError::Invalid)?;
    let most = super::decision::max_decisions(before.stack.report.pages.len(), copies.len());
    if before.decisions.len() >= most {
        return Err(DecideError::Invalid(vec![super::request::problem(
            "",
            "too_many_decisions",
            format!(
                "this set has {} decisions, as many as it keeps ({most}: ten a page of the stack and two a copy)",
                before.decisions.len()
            ),
        )]));
    }
    if let Decision::Student { copy, student } = decision {
        students::check(
            &overview::roster(&copies),
            &before.decided(),
            *copy,
            *student,
        )
        .map_err(DecideError::Invalid)?;
    }
    let named_cover = match decision {
        Decision::Place { copy, page: 1, .. } => copies
            .iter()
            .any(|c| c.copy == i64::from(*copy) && c.name.is_some()),
        _ => false,
    };
    let reader = match &set.stack_session_id {
        Some(session_id) if named_cover && config.enabled && config.marker.reads_names() => {
            Some(NameReader {
                session_id,
                user_id: by.user_id,
                max_attempts: config.max_attempts,
            })
        }
        _ => None,
    };
    // A page placed by hand (one whose code could not be read) is read again as the copy's page
    // it was placed as: turned, lined up with that page's clean print and compared, as a page
    // found by its code is. A placement of a page with a code changes nothing, and reads nothing.
    let reread = match (decision, &set.stack_session_id) {
        (Decision::Place { at, copy, page }, Some(session_id))
            if matches!(before.stack.placement(at), Some(Placement::Unknown { .. })) =>
        {
            Some(Reread {
                session_id,
                user_id: by.user_id,
                asset_id: &at.file,
                page: i64::from(at.page),
                placed_as: PlacedAs {
                    copy: *copy,
                    page: *page,
                },
                max_attempts: config.max_attempts,
            })
        }
        _ => None,
    };
    let row = store
        .record_decision(
            &set.id,
            &super::decision::record(decision, by.key_id, by.user_id),
            reader.as_ref(),
            reread.as_ref(),
        )
        .await?;
    let now = overview::stack_now(store, set, &copies).await?;
    if matches!(decision, Decision::Student { .. }) {
        // The scripts are named for who wrote them as it now stands (a student decision can
        // displace another copy's student too).
        let writers = now.writers(&copies);
        let titles: Vec<(i64, String)> = writers
            .keys()
            .map(|&copy| (i64::from(copy), script_title(set, &copies, &writers, copy)))
            .collect();
        store.retitle_scripts(&set.id, &titles).await?;
    }
    Ok(Decided { row, now })
}

/// A script's title: the set's, with who wrote the copy as it stands (else its copy number).
fn script_title(
    set: &SetRow,
    copies: &[CopyRow],
    writers: &BTreeMap<u32, Writer>,
    copy: u32,
) -> String {
    let who = writers
        .get(&copy)
        .and_then(|w| w.student())
        .and_then(|s| copies.iter().find(|c| c.copy == i64::from(s)))
        .and_then(|c| c.name.clone())
        .unwrap_or_else(|| format!("Copy {copy:03}"));
    format!("{} · {who}", set.title)
}

/// Why marking did not start. `E` is the caller's error for a paper revision it could not
/// make ready.
#[derive(Debug, thiserror::Error)]
pub enum StartError<E> {
    /// The stack cannot make scripts yet.
    #[error("{}", not_ready_message(.0))]
    NotReady(NotReady),
    /// The set's paper revision could not be made ready.
    #[error("the paper revision is not ready")]
    Paper(E),
    /// The revision's mark scheme PDF is not stored.
    #[error("the revision's PDFs are not prepared")]
    ExportsNotReady,
    /// Today's allowance (questions marked, or pages read) would be exceeded; nothing was made.
    #[error("{message}")]
    Allowance {
        /// What the scripts need and what is used.
        message: String,
        /// Seconds until the allowance renews.
        retry_after: i64,
    },
    /// The set could not be loaded, or the database failed.
    #[error(transparent)]
    Load(#[from] LoadError),
}

impl<E> From<StoreError> for StartError<E> {
    fn from(e: StoreError) -> Self {
        StartError::Load(LoadError::Store(e))
    }
}

/// Why a set's scripts cannot be made yet, in words.
pub fn not_ready_message(why: &NotReady) -> String {
    match why {
        NotReady::Empty => "no page of the stack is uploaded yet".to_owned(),
        NotReady::Reading { pages: 1, first } => format!(
            "page {} of stack file {} is still being read; start when it is read",
            first.page, first.file
        ),
        NotReady::Reading { pages, first } => format!(
            "{pages} pages of the stack are still being read (the first is page {} of stack \
             file {}); start when none is",
            first.page, first.file
        ),
        NotReady::NoScript => {
            "every copy of the set is absent: there is nothing to mark".to_owned()
        }
    }
}

/// What starting did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started {
    /// Scripts made (new, or made again because their pages changed).
    pub made: usize,
    /// Scripts set aside: their copy is now absent.
    pub set_aside: usize,
}

/// Marks every script of the stack as it stands. A script is made (a marking session of its own
/// pages) for each copy that was sat; one already made from the same pages is left as it is,
/// one whose pages changed since (a later decision), or that a marker now qualified was held back
/// from, is made again and marked again, and the script of a copy now absent is set aside. `paper` makes the set's paper revision ready (its
/// PDFs prepared) and is awaited only when a script is to be made or set aside.
pub async fn start<E>(
    store: &Store,
    config: &MarkingConfig,
    user_id: &str,
    set: &SetRow,
    paper: impl Future<Output = Result<(StoredPaper, Vec<BankRevision>), E>>,
) -> Result<Started, StartError<E>> {
    let copies = store.class_set_copies(&set.id).await?;
    let now = overview::stack_now(store, set, &copies).await?;
    let writers = students::writers(&overview::roster(&copies), &now.decided());
    let scripts = scripts::scripts(&now.stack).map_err(StartError::NotReady)?;
    let made = store.class_set_scripts(&set.id).await?;
    let held_back = held_back_copies(store, config, &made).await?;
    let changed: Vec<&Script> = scripts
        .iter()
        .filter(|script| {
            !made.iter().any(|row| {
                row.copy == i64::from(script.copy)
                    && row.pages_json == script.pages_json()
                    && !held_back.contains(&row.copy)
            })
        })
        .collect();
    let gone: Vec<i64> = made
        .iter()
        .map(|row| row.copy)
        .filter(|copy| !scripts.iter().any(|s| i64::from(s.copy) == *copy))
        .collect();
    if !changed.is_empty() || !gone.is_empty() {
        let (paper, bank) = paper.await.map_err(StartError::Paper)?;
        let marking = Marking {
            store,
            config,
            user_id,
            set,
            copies: &copies,
            writers: &writers,
        };
        marking
            .mark(&paper, &bank, &changed, &gone, &held_back)
            .await?;
    }
    Ok(Started {
        made: changed.len(),
        set_aside: gone.len(),
    })
}

/// The copies whose script has a question the marker was held back from (not qualified, or
/// drifted: nothing of it marked), when the marker now stands qualified: starting again marks
/// them again, as it does a script whose pages changed. While it is still held back, none (their
/// questions would be held back again).
async fn held_back_copies(
    store: &Store,
    config: &MarkingConfig,
    made: &[crate::store::class_sets::scripts::ScriptRow],
) -> Result<Vec<i64>, StoreError> {
    let standing = crate::marking::qualification::standing(store, config).await?;
    if standing.blocks().is_some() {
        return Ok(Vec::new());
    }
    let mut copies = Vec::new();
    for row in made {
        let kinds =
            crate::marking::questions::asset_kinds(&store.session_assets(&row.session_id).await?);
        let questions = store.session_questions(&row.session_id).await?;
        let held = questions.iter().any(|q| {
            crate::marked::MarkedQuestion::from_row(q, &kinds).is_ok_and(|m| m.held_back())
        });
        if held {
            copies.push(row.copy);
        }
    }
    Ok(copies)
}

/// What making a set's scripts needs.
struct Marking<'a> {
    store: &'a Store,
    config: &'a MarkingConfig,
    user_id: &'a str,
    set: &'a SetRow,
    copies: &'a [CopyRow],
    writers: &'a BTreeMap<u32, Writer>,
}

impl Marking<'_> {
    /// Makes `changed` scripts (and sets aside those of the copies in `gone`), within the
    /// account's allowance: the scheme's pages for each script, and its questions.
    async fn mark<E>(
        &self,
        paper: &StoredPaper,
        bank: &[BankRevision],
        changed: &[&Script],
        gone: &[i64],
        held_back: &[i64],
    ) -> Result<(), StartError<E>> {
        let (store, config, set) = (self.store, self.config, self.set);
        let scheme = crate::marking::paper_scheme::paper_scheme(&paper.content.questions, bank)?;
        let questions = i64::try_from(bank.len()).unwrap_or(i64::MAX);
        let needed = questions.saturating_mul(i64::try_from(changed.len()).unwrap_or(i64::MAX));
        let now = now_ms();
        let (_, used) = store.allowance_used(self.user_id, now).await?;
        if used.saturating_add(needed) > config.allowance.questions_per_day {
            return Err(StartError::Allowance {
                message: format!(
                    "marking these {} scripts needs {needed} questions; {used} of today's {} questions are used",
                    changed.len(),
                    config.allowance.questions_per_day
                ),
                retry_after: crate::store::automated::seconds_to_next_utc_day(now),
            });
        }
        let mark_scheme = store
            .paper_export(
                self.user_id,
                &set.paper_id,
                set.revision,
                ExportKind::MarkScheme,
            )
            .await?
            .ok_or(StartError::ExportsNotReady)?;
        let new: Vec<NewScript> = changed
            .iter()
            .map(|script| NewScript {
                again: held_back.contains(&i64::from(script.copy)),
                ..new_script(set, self.copies, self.writers, script)
            })
            .collect();
        let name = format!("paper-{}-r{}-mark-scheme.pdf", set.paper_id, set.revision);
        let outcome = store
            .start_scripts(
                self.user_id,
                &set.id,
                &PaperBinding {
                    paper_id: set.paper_id.clone(),
                    revision: set.revision,
                    scheme_json: scheme.to_string(),
                },
                &SchemeFile {
                    name: &name,
                    bytes: &mark_scheme,
                    page_count: paper.figures.scheme_pages,
                },
                &new,
                gone,
                &config.allowance,
                config.max_attempts,
            )
            .await?;
        match outcome {
            StartScripts::Started => Ok(()),
            StartScripts::AllowanceExceeded {
                used,
                needed,
                retry_after,
            } => Err(StartError::Allowance {
                message: format!(
                    "reading the mark scheme for these scripts needs {needed} pages; {used} of today's {} pages are used",
                    config.allowance.pages_per_day
                ),
                retry_after,
            }),
        }
    }
}

/// A script as the store makes it: titled with who wrote it as it stands (else its copy
/// number), with its pages and the extra sheets a person assigned to it, each answering its
/// question (the number a label such as `4(b)` starts with: the paper's questions are numbered).
fn new_script(
    set: &SetRow,
    copies: &[CopyRow],
    writers: &BTreeMap<u32, Writer>,
    script: &Script,
) -> NewScript {
    let copy = i64::from(script.copy);
    let mut pages: Vec<ScriptPageRef> = script
        .pages
        .iter()
        .map(|(_, at)| ScriptPageRef {
            asset_id: at.file.clone(),
            page: i64::from(at.page),
            labels_json: None,
        })
        .collect();
    pages.extend(script.extras.iter().map(|(question, at)| {
        ScriptPageRef {
            asset_id: at.file.clone(),
            page: i64::from(at.page),
            labels_json: Some(
                json!([FoundLabel {
                    label: question_number(question),
                    how: Found::Assigned,
                }])
                .to_string(),
            ),
        }
    }));
    NewScript {
        copy,
        title: script_title(set, copies, writers, script.copy),
        pages,
        pages_json: script.pages_json(),
        missing_json: script.missing_json(),
        again: false,
    }
}

/// The question a label names: the number it starts with (`4(b)` is of question 4), else the
/// label as written.
fn question_number(label: &str) -> String {
    let digits: String = label
        .trim()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    match digits.trim_start_matches('0') {
        "" => label.trim().to_owned(),
        number => number.to_owned(),
    }
}

/// Why a set's paper revision is not ready to mark from as it is stored.
#[derive(Debug, thiserror::Error)]
pub enum Unprepared {
    /// The revision is no longer the account's.
    #[error("the paper revision of this set is no longer in your account")]
    Paper,
    /// A question it pins is no longer in the bank.
    #[error("revision {revision} of question {question} is no longer in the bank")]
    Question {
        /// The question.
        question: String,
        /// Its pinned revision.
        revision: i64,
    },
    /// Its PDFs (with the question paper's layout) are not prepared.
    #[error(
        "the paper revision's PDFs are not prepared: prepare them (POST /v1/papers/{paper}/revisions/{revision}/exports), then start again"
    )]
    Exports {
        /// The paper.
        paper: String,
        /// The revision.
        revision: i64,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The set's paper revision and its pinned bank revisions, as prepared when the set was made
/// (making a set prepares its revision's PDFs and layout), without typesetting anything.
pub async fn prepared_paper(
    store: &Store,
    user_id: &str,
    set: &SetRow,
) -> Result<(StoredPaper, Vec<BankRevision>), Unprepared> {
    let paper = store
        .paper(user_id, &set.paper_id, Some(set.revision))
        .await?
        .ok_or(Unprepared::Paper)?;
    let layout = store
        .export_layout(user_id, &set.paper_id, set.revision)
        .await?;
    if !paper.exports_ready || !matches!(layout, Some(Some(_))) {
        return Err(Unprepared::Exports {
            paper: set.paper_id.clone(),
            revision: set.revision,
        });
    }
    let mut bank = Vec::with_capacity(paper.content.questions.len());
    for pin in &paper.content.questions {
        let stored = store
            .bank_revision(&pin.question_id, pin.revision)
            .await?
            .ok_or_else(|| Unprepared::Question {
                question: pin.question_id.clone(),
                revision: pin.revision,
            })?;
        bank.push(stored);
    }
    Ok((paper, bank))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extra_sheet_answers_the_question_its_label_starts_with() {
        assert_eq!(question_number("4(b)"), "4");
        assert_eq!(question_number(" 12 "), "12");
        assert_eq!(question_number("07a"), "7");
        assert_eq!(question_number("b"), "b");
    }

    #[test]
    fn why_scripts_cannot_be_made_is_said_in_words() {
        let first = crate::class_sets::stack::StackPage {
            file: "f1".into(),
            page: 4,
        };
        let many = NotReady::Reading {
            pages: 3,
            first: first.clone(),
        };
        assert!(not_ready_message(&many).starts_with("3 pages"));
        assert!(not_ready_message(&many).contains("page 4 of stack file f1"));
        let one = NotReady::Reading { pages: 1, first };
        assert!(not_ready_message(&one).starts_with("page 4 of stack file f1 is still being read"));
        assert!(not_ready_message(&NotReady::NoScript).contains("absent"));
        assert!(not_ready_message(&NotReady::Empty).contains("uploaded"));
    }
}
