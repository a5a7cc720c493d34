//! A class set as it stands, loaded once and typed, for whoever shows it: its copies and who
//! wrote each, its stack and the report with people's decisions, and its scripts' progress. The
//! API's routes load the stack through [`stack_now`]; the app's pages read an [`Overview`] (one
//! set) or a [`SetSummary`] (the list) rather than walking the API's JSON.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::names;
use super::scans::{self, Stack};
use super::scripts::{self, NotReady, Script};
use super::stack::{CopyState, Decision, Placement, StackPage};
use super::students::{self, Writer};
use crate::store::class_sets::names::NameRow;
use crate::store::class_sets::scripts::ScriptProgress;
use crate::store::class_sets::stacks::DecisionRow;
use crate::store::class_sets::{CopyRow, SetRow};
use crate::store::marking::AssetRow;
use crate::store::{Store, StoreError};

/// Why a set could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored value of the set is out of its range (its print run cannot be rebuilt).
    #[error("class set {0}: a stored value is out of range")]
    Corrupt(String),
}

/// Where a set's stack is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackState {
    /// No file was uploaded.
    Empty,
    /// Pages are still being read.
    Reading,
    /// Every page is read.
    Read,
}

impl StackState {
    /// Its name in the API (`state` of a stack).
    pub fn name(self) -> &'static str {
        match self {
            StackState::Empty => "empty",
            StackState::Reading => "reading",
            StackState::Read => "read",
        }
    }
}

/// The stack of a set as it stands.
#[derive(Debug, Clone)]
pub struct StackNow {
    /// Its files in upload order.
    pub files: Vec<AssetRow>,
    /// The report, with people's decisions.
    pub stack: Stack,
    /// The decisions as recorded, in the order they were made.
    pub decisions: Vec<DecisionRow>,
    /// The names written on covers, read or being read.
    pub names: Vec<NameRow>,
    /// The names read, matched to the roster as one assignment (copy → roster student).
    pub matches: Assignment,
}

impl StackNow {
    /// Whether the stack is empty, being read or read.
    pub fn state(&self) -> StackState {
        if self.files.is_empty() {
            StackState::Empty
        } else if self.stack.reading.is_empty() {
            StackState::Read
        } else {
            StackState::Reading
        }
    }

    /// The decisions as the split reads them.
    pub fn decided(&self) -> Vec<Decision> {
        scans::decisions_of(&self.decisions)
    }

    /// Who wrote each copy as it stands.
    pub fn writers(&self, copies: &[CopyRow]) -> BTreeMap<u32, Writer> {
        students::writers(&roster(copies), &self.decided())
    }

    /// The name written on each copy's cover that was read, checked against the roster.
    pub fn name_checks(&self, copies: &[CopyRow]) -> BTreeMap<u32, names::NameCheck> {
        names::check_matched(
            &self.stack,
            &self.names,
            &self.matches,
            &self.writers(copies),
        )
    }

    /// How many pages of the stack have each placement, in the order of [`PLACEMENTS`].
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        let mut counts = PLACEMENTS.map(|name| (name, 0));
        for (_, placement) in &self.stack.report.pages {
            let name = placement_name(placement);
            if let Some((_, n)) = counts.iter_mut().find(|(counted, _)| *counted == name) {
                *n += 1;
            }
        }
        counts.to_vec()
    }

    /// Every page of the stack in stack order (files in upload order, pages in file order),
    /// read or being read: with where it went, or `None` while it is being read.
    pub fn pages(&self) -> Vec<(&StackPage, Option<&Placement>)> {
        let mut pages: Vec<(&StackPage, Option<&Placement>)> = self
            .stack
            .report
            .pages
            .iter()
            .map(|(at, placement)| (at, Some(placement)))
            .chain(self.stack.reading.iter().map(|at| (at, None)))
            .collect();
        pages.sort_by_key(|(at, _)| self.stack_order(at));
        pages
    }

    /// Where a page is in stack order: its file's place among the uploads, then its page.
    fn stack_order(&self, at: &StackPage) -> (Option<usize>, u32) {
        (self.files.iter().position(|f| f.id == at.file), at.page)
    }

    /// The name a file was uploaded with (its id when it is none of the stack's).
    pub fn file_name<'a>(&'a self, id: &'a str) -> &'a str {
        self.files
            .iter()
            .find(|f| f.id == id)
            .map_or(id, |f| f.name.as_str())
    }
}

/// The set's stack as it stands: its files, and the report with people's decisions.
pub async fn stack_now(
    store: &Store,
    set: &SetRow,
    copies: &[CopyRow],
) -> Result<StackNow, LoadError> {
    let (files, pages) = store.stack_pages(set).await?;
    let decisions = store.decisions(&set.id).await?;
    let names = store.class_set_names(&set.id).await?;
    let run = scans::run_of(set, copies).ok_or_else(|| LoadError::Corrupt(set.id.clone()))?;
    let stack = scans::assemble(run, &pages, &scans::decisions_of(&decisions));
    let written = names::written(&stack, &names);
    let roster: Vec<(u32, String)> = copies
        .iter()
        .filter_map(|c| Some((u32::try_from(c.copy).ok()?, c.name.clone()?)))
        .collect();
    let matches = matched(written, roster).await;
    Ok(StackNow {
        files,
        stack,
        decisions,
        names,
        matches,
    })
}

/// The written names (copy, name) and a roster (copy, name).
type NamesAndRoster = (Vec<(u32, String)>, Vec<(u32, String)>);

/// An assignment of written names to roster students (copy → roster student).
type Assignment = Arc<BTreeMap<u32, names::Match>>;

/// The assignments made lately, by the names and roster they were made of.
static MATCHED: std::sync::Mutex<Vec<(NamesAndRoster, Assignment)>> =
    std::sync::Mutex::new(Vec::new());

/// How many assignments are kept: a page of a set shown again, or each of its sets' pages in
/// turn, finds its assignment made.
const MATCHED_KEPT: usize = 32;

/// [`names::assign`] of `written` to `roster`, made on the blocking pool (a year group's
/// assignment is tens of milliseconds) and kept for the next time the same names and roster
/// are shown.
async fn matched(written: Vec<(u32, String)>, roster: Vec<(u32, String)>) -> Assignment {
    if written.is_empty() || roster.is_empty() {
        return Arc::default();
    }
    let key = (written, roster);
    let kept = |key: &NamesAndRoster| {
        MATCHED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, m)| Arc::clone(m))
    };
    if let Some(found) = kept(&key) {
        return found;
    }
    let made = tokio::task::spawn_blocking(move || {
        let written: Vec<(u32, &str)> = key.0.iter().map(|(c, n)| (*c, n.as_str())).collect();
        let roster: Vec<(u32, &str)> = key.1.iter().map(|(c, n)| (*c, n.as_str())).collect();
        let made = Arc::new(names::assign(&written, &roster));
        (key, made)
    })
    .await;
    match made {
        Ok((key, made)) => {
            let mut kept = MATCHED.lock().unwrap_or_else(|e| e.into_inner());
            if kept.len() >= MATCHED_KEPT {
                kept.remove(0);
            }
            kept.push((key, Arc::clone(&made)));
            made
        }
        // The blocking pool is shutting down: nothing is matched.
        Err(_) => Arc::default(),
    }
}

/// Each copy, with whether it was printed for a student (as [`students`] reads a roster).
pub fn roster(copies: &[CopyRow]) -> Vec<(u32, bool)> {
    copies
        .iter()
        .filter_map(|c| Some((u32::try_from(c.copy).ok()?, c.name.is_some())))
        .collect()
}

/// The placements of a stack page, by their names in the API, in the order the API counts them.
pub const PLACEMENTS: [&str; 8] = [
    "placed",
    "blankBack",
    "rescan",
    "conflict",
    "notChosen",
    "extra",
    "unknown",
    "foreign",
];

/// The name of a placement in the API.
pub fn placement_name(placement: &Placement) -> &'static str {
    match placement {
        Placement::Placed { .. } => "placed",
        Placement::BlankBack { .. } => "blankBack",
        Placement::Rescan { .. } => "rescan",
        Placement::Conflict { .. } => "conflict",
        Placement::NotChosen { .. } => "notChosen",
        Placement::Extra { .. } => "extra",
        Placement::Unknown { .. } => "unknown",
        Placement::Foreign { .. } => "foreign",
    }
}

/// How far a script's marking is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptState {
    /// Its mark scheme is being read; its questions are not placed yet.
    Preparing,
    /// Questions are queued or being marked.
    Marking,
    /// Every question has a result (or needs review).
    Marked,
    /// Nothing was placed and nothing is left to do.
    Failed,
}

impl ScriptState {
    /// Its name in the API (`state` of a script).
    pub fn name(self) -> &'static str {
        match self {
            ScriptState::Preparing => "preparing",
            ScriptState::Marking => "marking",
            ScriptState::Marked => "marked",
            ScriptState::Failed => "failed",
        }
    }

    /// The state of a script with `questions` placed, `waiting` of them queued or running, and
    /// `pending_jobs` jobs left: questions are placed once the scheme's pages are read; with
    /// nothing placed and nothing left to do, the script failed.
    pub fn of(questions: i64, waiting: i64, pending_jobs: i64) -> ScriptState {
        if questions == 0 && pending_jobs == 0 {
            ScriptState::Failed
        } else if questions == 0 {
            ScriptState::Preparing
        } else if waiting > 0 {
            ScriptState::Marking
        } else {
            ScriptState::Marked
        }
    }
}

/// How far a set's marking is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkingState {
    /// No script was made.
    NotStarted,
    /// Some script is still being marked.
    Marking,
    /// Every script is marked (or failed).
    Marked,
}

impl MarkingState {
    /// Its name in the API (`state` of a set's marking).
    pub fn name(self) -> &'static str {
        match self {
            MarkingState::NotStarted => "notStarted",
            MarkingState::Marking => "marking",
            MarkingState::Marked => "marked",
        }
    }

    /// The state of a set's marking from its current scripts' states.
    pub fn of(scripts: impl IntoIterator<Item = ScriptState>) -> MarkingState {
        let (mut all, mut done) = (0usize, 0usize);
        for state in scripts {
            all += 1;
            done += usize::from(matches!(state, ScriptState::Marked | ScriptState::Failed));
        }
        match (all, done == all) {
            (0, _) => MarkingState::NotStarted,
            (_, true) => MarkingState::Marked,
            (_, false) => MarkingState::Marking,
        }
    }
}

/// A script's questions by status: how many are placed, and how many of them are at each
/// status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuestionCounts {
    /// Every question placed.
    pub total: i64,
    /// Waiting to be marked.
    pub queued: i64,
    /// Being marked.
    pub running: i64,
    /// Marked.
    pub completed: i64,
    /// Marked, waiting for a person's review.
    pub needs_review: i64,
    /// Marking failed.
    pub failed: i64,
    /// Marking was cancelled.
    pub cancelled: i64,
}

impl QuestionCounts {
    /// The counts of a session's questions (status, count, …).
    fn of(questions: &[(String, i64, i64, i64, i64)]) -> QuestionCounts {
        let count = |status: &str| {
            questions
                .iter()
                .filter(|q| q.0 == status)
                .map(|q| q.1)
                .sum::<i64>()
        };
        QuestionCounts {
            total: questions.iter().map(|q| q.1).sum(),
            queued: count("queued"),
            running: count("running"),
            completed: count("completed"),
            needs_review: count("needs_review"),
            failed: count("failed"),
            cancelled: count("cancelled"),
        }
    }
}

/// A current script of a set: its session, its state and its score.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSummary {
    /// The copy.
    pub copy: i64,
    /// Its marking session.
    pub session_id: String,
    /// How far its marking is.
    pub state: ScriptState,
    /// Its questions by status.
    pub questions: QuestionCounts,
    /// Marks awarded by its marked questions.
    pub awarded: i64,
    /// Marks its marked questions could still give once reviewed.
    pub possible: i64,
    /// Its questions' marks.
    pub max: i64,
    /// Whether it is made from the stack as it stands (else: start again to mark it again).
    pub current: bool,
    /// The paper pages it lacks.
    pub missing: Vec<i64>,
    /// When it was made (Unix milliseconds).
    pub made_at: i64,
}

fn summary(progress: &ScriptProgress, current: Option<&[Script]>) -> ScriptSummary {
    let row = &progress.script;
    let questions = QuestionCounts::of(&progress.questions);
    let marked = |q: &&(String, i64, i64, i64, i64)| q.0 == "completed" || q.0 == "needs_review";
    ScriptSummary {
        copy: row.copy,
        session_id: row.session_id.clone(),
        state: ScriptState::of(
            questions.total,
            questions.queued + questions.running,
            progress.pending_jobs,
        ),
        questions,
        awarded: progress.questions.iter().filter(marked).map(|q| q.2).sum(),
        possible: progress.questions.iter().filter(marked).map(|q| q.3).sum(),
        max: progress.questions.iter().map(|q| q.4).sum(),
        // While the stack is being read, a script is taken as current.
        current: current.is_none_or(|current| {
            current
                .iter()
                .any(|s| i64::from(s.copy) == row.copy && s.pages_json() == row.pages_json)
        }),
        missing: serde_json::from_str(&row.missing_json).unwrap_or_default(),
        made_at: row.created_at,
    }
}

/// A set's scripts as they stand against its stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scripts {
    /// Its current scripts, in copy order.
    pub scripts: Vec<ScriptSummary>,
    /// The copies whose script is not the stack as it stands (start again to mark them).
    pub out_of_date: Vec<i64>,
}

impl Scripts {
    /// The scripts of `progress` (each with its session's progress) against `stack`.
    pub fn of(progress: &[ScriptProgress], stack: &Stack) -> Scripts {
        // While pages are being read, what the scripts will be is not known yet: nothing is
        // judged out of date until the stack is read.
        let current = match scripts::scripts(stack) {
            Ok(scripts) => Some(scripts),
            Err(NotReady::Reading { .. }) => None,
            Err(_) => Some(Vec::new()),
        };
        let summaries: Vec<ScriptSummary> = progress
            .iter()
            .map(|p| summary(p, current.as_deref()))
            .collect();
        let mut out_of_date = Vec::new();
        if let Some(current) = &current {
            for script in current {
                let copy = i64::from(script.copy);
                let made = progress
                    .iter()
                    .any(|p| p.script.copy == copy && p.script.pages_json == script.pages_json());
                if !made {
                    out_of_date.push(copy);
                }
            }
            for p in progress {
                if !current.iter().any(|s| i64::from(s.copy) == p.script.copy) {
                    out_of_date.push(p.script.copy);
                }
            }
        }
        out_of_date.sort_unstable();
        Scripts {
            scripts: summaries,
            out_of_date,
        }
    }

    /// How far the set's marking is.
    pub fn marking(&self) -> MarkingState {
        MarkingState::of(self.scripts.iter().map(|s| s.state))
    }
}

/// One copy of a set as it stands.
#[derive(Debug, Clone)]
pub struct CopyLine<'a> {
    /// The copy as printed (its number, and the student it was printed for).
    pub printed: &'a CopyRow,
    /// Who wrote it.
    pub writer: Writer,
    /// The roster copy of the student who wrote it, when one is held.
    pub student: Option<&'a CopyRow>,
    /// Its state in the stack.
    pub state: &'a CopyState,
    /// The extra sheets assigned to it: the question each answers, and the sheet.
    pub extras: &'a [(String, StackPage)],
    /// Whether a person said it was not sat (and has not taken that back).
    pub absent_by_person: bool,
    /// Its current script, once marking started.
    pub script: Option<&'a ScriptSummary>,
    /// The name written on its cover, when it was read, checked against the roster.
    pub name: Option<names::NameCheck>,
}

/// A class set as it stands.
#[derive(Debug, Clone)]
pub struct Overview {
    /// The set.
    pub set: SetRow,
    /// The title of the paper revision printed.
    pub paper_title: Option<String>,
    /// Its copies in copy order.
    pub copies: Vec<CopyRow>,
    /// Its stack.
    pub now: StackNow,
    /// Who wrote each copy.
    pub writers: BTreeMap<u32, Writer>,
    /// Its current scripts, in copy order.
    pub scripts: Vec<ScriptSummary>,
    /// The copies whose script is not the stack as it stands (start again to mark them).
    pub out_of_date: Vec<i64>,
}

/// The class set `set_id` of the account; `None` when it does not exist or is another
/// account's.
pub async fn load(
    store: &Store,
    user_id: &str,
    set_id: &str,
) -> Result<Option<Overview>, LoadError> {
    let Some(set) = store.class_set(user_id, set_id).await? else {
        return Ok(None);
    };
    let copies = store.class_set_copies(&set.id).await?;
    let now = stack_now(store, &set, &copies).await?;
    let progress = store.script_progress(&set.id).await?;
    let paper_title = store
        .paper_revision_title(user_id, &set.paper_id, set.revision)
        .await?;
    let writers = students::writers(&roster(&copies), &now.decided());
    let Scripts {
        scripts,
        out_of_date,
    } = Scripts::of(&progress, &now.stack);
    Ok(Some(Overview {
        set,
        paper_title,
        copies,
        now,
        writers,
        scripts,
        out_of_date,
    }))
}

impl Overview {
    /// How far the set's marking is.
    pub fn marking(&self) -> MarkingState {
        MarkingState::of(self.scripts.iter().map(|s| s.state))
    }

    /// Whether the set was printed from a roster.
    pub fn named(&self) -> bool {
        self.copies.iter().any(|c| c.name.is_some())
    }

    /// How many pages of the stack have each placement, in the order of [`PLACEMENTS`].
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        self.now.counts()
    }

    /// The pages waiting for a person, in stack order: unknown pages, every scan of a conflict,
    /// and extra sheets not yet assigned.
    pub fn waiting(&self) -> Vec<&(StackPage, Placement)> {
        self.in_stack_order(|placement| {
            matches!(
                placement,
                Placement::Unknown { .. }
                    | Placement::Conflict { .. }
                    | Placement::Extra { assigned: None }
            )
        })
    }

    /// The pages a person decided about, in stack order, which a later decision may change:
    /// pages placed by hand, both sides of a conflict a person settled, and assigned extra
    /// sheets.
    pub fn decided_pages(&self) -> Vec<&(StackPage, Placement)> {
        let report = &self.now.stack.report;
        let settled: Vec<(u32, u32)> = report
            .pages
            .iter()
            .filter_map(|(_, p)| match p {
                Placement::NotChosen { copy, page } => Some((*copy, *page)),
                _ => None,
            })
            .collect();
        self.in_stack_order(|placement| match placement {
            Placement::Placed { by_hand: true, .. }
            | Placement::NotChosen { .. }
            | Placement::Extra {
                assigned: Some(_), ..
            } => true,
            Placement::Placed { copy, page, .. } => settled.contains(&(*copy, *page)),
            _ => false,
        })
    }

    fn in_stack_order(&self, keep: impl Fn(&Placement) -> bool) -> Vec<&(StackPage, Placement)> {
        let mut pages: Vec<&(StackPage, Placement)> = self
            .now
            .stack
            .report
            .pages
            .iter()
            .filter(|(_, placement)| keep(placement))
            .collect();
        pages.sort_by_key(|(at, _)| self.now.stack_order(at));
        pages
    }

    /// Every copy of the set as it stands, in copy order.
    pub fn copy_lines(&self) -> Vec<CopyLine<'_>> {
        let decided = self.now.decided();
        let mut checks = self.now.name_checks(&self.copies);
        let report = &self.now.stack.report;
        self.copies
            .iter()
            .filter_map(|printed| {
                let copy = u32::try_from(printed.copy).ok()?;
                let (state, _) = report.copies.get(&copy)?;
                let writer = self.writers.get(&copy).copied().unwrap_or(Writer::Numbered);
                let student = writer
                    .student()
                    .and_then(|s| self.copies.iter().find(|c| c.copy == i64::from(s)));
                let absent_by_person = decided
                    .iter()
                    .rev()
                    .find_map(|d| match d {
                        Decision::Absent { copy: c } if *c == copy => Some(true),
                        Decision::Present { copy: c } if *c == copy => Some(false),
                        _ => None,
                    })
                    .unwrap_or(false);
                Some(CopyLine {
                    printed,
                    writer,
                    student,
                    state,
                    extras: report.extras.get(&copy).map_or(&[], Vec::as_slice),
                    absent_by_person,
                    script: self.scripts.iter().find(|s| s.copy == printed.copy),
                    name: checks.remove(&copy),
                })
            })
            .collect()
    }
}

/// A set as the list of sets shows it.
#[derive(Debug, Clone)]
pub struct SetSummary {
    /// The set.
    pub set: SetRow,
    /// The title of the paper revision printed.
    pub paper_title: Option<String>,
    /// Where its stack is.
    pub stack: StackState,
    /// Pages of its stack.
    pub pages: i64,
    /// Of those, the pages read.
    pub pages_read: i64,
    /// How far its marking is.
    pub marking: MarkingState,
    /// Its current scripts.
    pub scripts: usize,
    /// Of those, the scripts marked (or failed).
    pub scripts_done: usize,
}

/// The account's class sets, newest first, as the list shows them.
pub async fn list(store: &Store, user_id: &str) -> Result<Vec<SetSummary>, StoreError> {
    let sets = store.class_set_summaries(user_id).await?;
    let counts = store.class_set_script_counts(user_id).await?;
    Ok(sets
        .into_iter()
        .map(|row| {
            let states: Vec<ScriptState> = counts
                .iter()
                .filter(|c| c.set_id == row.set.id)
                .map(|c| ScriptState::of(c.questions, c.waiting, c.pending_jobs))
                .collect();
            let stack = if row.files == 0 {
                StackState::Empty
            } else if row.pages_read < row.pages {
                StackState::Reading
            } else {
                StackState::Read
            };
            SetSummary {
                stack,
                pages: row.pages,
                pages_read: row.pages_read,
                marking: MarkingState::of(states.iter().copied()),
                scripts: states.len(),
                scripts_done: states
                    .iter()
                    .filter(|s| matches!(s, ScriptState::Marked | ScriptState::Failed))
                    .count(),
                paper_title: row.paper_title,
                set: row.set,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scripts_state_follows_its_questions_and_jobs() {
        assert_eq!(ScriptState::of(0, 0, 0), ScriptState::Failed);
        assert_eq!(ScriptState::of(0, 0, 2), ScriptState::Preparing);
        assert_eq!(ScriptState::of(3, 1, 1), ScriptState::Marking);
        assert_eq!(ScriptState::of(3, 0, 0), ScriptState::Marked);
    }

    #[test]
    fn a_sets_marking_is_done_when_every_script_is() {
        assert_eq!(MarkingState::of([]), MarkingState::NotStarted);
        assert_eq!(
            MarkingState::of([ScriptState::Marked, ScriptState::Marking]),
            MarkingState::Marking
        );
        assert_eq!(
            MarkingState::of([ScriptState::Marked, ScriptState::Failed]),
            MarkingState::Marked
        );
        assert_eq!(MarkingState::of([]).name(), "notStarted");
    }
}
