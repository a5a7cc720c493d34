//! A class set's scanned stack as it stands: its pages as indexing read them, put through
//! [`super::stack::split`] with the decisions people made, in the order they made them.
//!
//! A page still waiting to be read is not split yet: the report lists it as being read, and the
//! copies' states are provisional until no page is. A page indexing could not read is unknown,
//! with indexing's reason, until a person places it.

use std::collections::{BTreeSet, HashMap};

use uuid::Uuid;

use super::stack::{self, Decision, Placement, Report, Run, ScannedPage, StackPage};
use crate::store::class_sets::stacks::{DecisionRow, PageRead, StackPageRow};
use crate::store::class_sets::{CopyRow, SetRow};

/// The stack of a set as it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    /// The print run.
    pub run: Run,
    /// The pages still being read, in stack order.
    pub reading: Vec<StackPage>,
    /// Where every read page went.
    pub report: Report,
}

impl Stack {
    /// Where a page of the stack went; `None` while it is read (or when it is no page of it).
    pub fn placement(&self, at: &StackPage) -> Option<&Placement> {
        self.report
            .pages
            .iter()
            .find(|(page, _)| page == at)
            .map(|(_, placement)| placement)
    }
}

/// The print run of a set; `None` when a stored value is out of its range.
pub fn run_of(set: &SetRow, copies: &[CopyRow]) -> Option<Run> {
    Some(Run {
        id: Uuid::parse_str(&set.id).ok()?,
        copies: copies
            .iter()
            .map(|c| u32::try_from(c.copy).ok())
            .collect::<Option<BTreeSet<u32>>>()?,
        paper_pages: u32::try_from(set.paper_pages).ok()?,
        pages_per_copy: u32::try_from(set.pages_per_copy).ok()?,
    })
}

/// The recorded decisions as the split reads them (a row out of range is left out: the store
/// only records checked decisions).
pub fn decisions_of(rows: &[DecisionRow]) -> Vec<Decision> {
    let at = |row: &DecisionRow| {
        Some(StackPage {
            file: row.asset_id.clone()?,
            page: u32::try_from(row.page?).ok()?,
        })
    };
    let copy = |row: &DecisionRow| u32::try_from(row.copy?).ok();
    rows.iter()
        .filter_map(|row| match row.kind.as_str() {
            "place" => Some(Decision::Place {
                at: at(row)?,
                copy: copy(row)?,
                page: u32::try_from(row.copy_page?).ok()?,
            }),
            "choose" => Some(Decision::Choose { at: at(row)? }),
            "extra" => Some(Decision::AssignExtra {
                at: at(row)?,
                copy: copy(row)?,
                question: row.question.clone()?,
            }),
            "absent" => Some(Decision::Absent { copy: copy(row)? }),
            "present" => Some(Decision::Present { copy: copy(row)? }),
            "student" => Some(Decision::Student {
                copy: copy(row)?,
                student: match row.student {
                    Some(s) => Some(u32::try_from(s).ok()?),
                    None => None,
                },
            }),
            _ => None,
        })
        .collect()
}

/// The stack of `run` from its pages and decisions.
pub fn assemble(run: Run, pages: &[StackPageRow], decisions: &[Decision]) -> Stack {
    let mut reading = Vec::new();
    let mut scanned = Vec::with_capacity(pages.len());
    let mut failed: HashMap<StackPage, &str> = HashMap::new();
    for row in pages {
        let Ok(page) = u32::try_from(row.page) else {
            continue;
        };
        let at = StackPage {
            file: row.asset_id.clone(),
            page,
        };
        match &row.read {
            None => reading.push(at),
            Some(PageRead::Read { codes, fingerprint }) => scanned.push(ScannedPage {
                at,
                codes: codes.clone(),
                fingerprint: fingerprint.clone(),
            }),
            Some(PageRead::Failed { error }) => {
                failed.insert(at.clone(), error);
                scanned.push(ScannedPage {
                    // No code, and a fingerprint no other page has.
                    fingerprint: format!("unread:{}:{}", at.file, at.page),
                    at,
                    codes: Vec::new(),
                });
            }
        }
    }
    let mut report = stack::split(&run, &scanned, decisions);
    for (at, placement) in &mut report.pages {
        if let (Placement::Unknown { reason }, Some(error)) = (&mut *placement, failed.get(at)) {
            *reason = format!("the page could not be read: {error}");
        }
    }
    Stack {
        run,
        reading,
        report,
    }
}
