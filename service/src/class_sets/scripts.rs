//! The scripts a stack makes: for each copy that was sat, the stack pages placed in it (its own
//! pages only), the extra sheets a person assigned to it, and the paper pages that were not
//! scanned. Marking a set marks each script as a session; a script is made again, and marked
//! again, only when what it is made from has changed.

use serde_json::json;

use super::scans::Stack;
use super::stack::{CopyState, StackPage};

/// One copy's script, as the stack stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// The copy.
    pub copy: u32,
    /// Its placed pages in copy order: the copy page and the stack page behind it.
    pub pages: Vec<(u32, StackPage)>,
    /// The extra sheets assigned to it: the question each answers, and the sheet.
    pub extras: Vec<(String, StackPage)>,
    /// The paper pages not scanned, in order: the questions on them are not marked.
    pub missing: Vec<u32>,
}

impl Script {
    /// What the script is made from, as stored with it: equal exactly when the script is the
    /// same.
    pub fn pages_json(&self) -> String {
        json!({
            "pages": self.pages.iter().map(|(page, at)| json!({
                "copyPage": page, "file": at.file, "page": at.page,
            })).collect::<Vec<_>>(),
            "extras": self.extras.iter().map(|(question, at)| json!({
                "question": question, "file": at.file, "page": at.page,
            })).collect::<Vec<_>>(),
        })
        .to_string()
    }

    /// The paper pages not scanned, as stored with it.
    pub fn missing_json(&self) -> String {
        json!(self.missing).to_string()
    }
}

/// Why a set's scripts cannot be made yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReady {
    /// No page was uploaded.
    Empty,
    /// Pages are still being read: how many, and the first of them in stack order.
    Reading {
        /// How many.
        pages: usize,
        /// The first.
        first: StackPage,
    },
    /// No copy has a page: every copy is absent.
    NoScript,
}

/// The scripts of the stack, in copy order: every copy that is not absent. Pages the stack
/// report has not placed (unknown, in conflict, foreign) are in no script: a copy page waiting in
/// a conflict is missing until a person chooses.
pub fn scripts(stack: &Stack) -> Result<Vec<Script>, NotReady> {
    if let Some(first) = stack.reading.first() {
        return Err(NotReady::Reading {
            pages: stack.reading.len(),
            first: first.clone(),
        });
    }
    if stack.report.pages.is_empty() {
        return Err(NotReady::Empty);
    }
    let paper_pages = stack.run.paper_pages;
    let scripts: Vec<Script> = stack
        .report
        .copies
        .iter()
        .filter_map(|(&copy, (state, placed))| {
            let missing = match state {
                CopyState::Absent => return None,
                CopyState::Complete => Vec::new(),
                CopyState::Incomplete { missing } => missing.clone(),
            };
            Some(Script {
                copy,
                pages: placed
                    .iter()
                    .filter(|(page, _)| **page <= paper_pages)
                    .map(|(page, at)| (*page, at.clone()))
                    .collect(),
                extras: stack.report.extras.get(&copy).cloned().unwrap_or_default(),
                missing,
            })
        })
        .collect();
    if scripts.is_empty() {
        return Err(NotReady::NoScript);
    }
    Ok(scripts)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use examkit_pdf::{CopyCode, ExtraSheetCode};
    use uuid::Uuid;

    use super::super::stack::{Decision, Run, ScannedPage, split};
    use super::*;

    fn run() -> Run {
        Run {
            id: Uuid::from_u128(7),
            copies: BTreeSet::from([1, 2, 3]),
            paper_pages: 3,
            pages_per_copy: 4,
        }
    }

    fn page(file: &str, n: u32, copy: u32, copy_page: u32) -> ScannedPage {
        let run = run();
        ScannedPage {
            at: StackPage {
                file: file.to_owned(),
                page: n,
            },
            codes: vec![
                CopyCode {
                    run_id: run.id,
                    copy,
                    page: copy_page,
                }
                .to_payload(),
            ],
            fingerprint: format!("{file}-{n}"),
        }
    }

    fn stack(pages: &[ScannedPage], decisions: &[Decision]) -> Stack {
        Stack {
            run: run(),
            reading: Vec::new(),
            report: split(&run(), pages, decisions),
        }
    }

    #[test]
    fn a_script_holds_its_own_pages_and_names_the_missing_ones() {
        let pages = [
            page("a", 1, 1, 1),
            page("a", 2, 1, 2),
            page("a", 3, 1, 3),
            page("a", 4, 1, 4),
            page("b", 1, 2, 1),
            page("b", 2, 2, 3),
        ];
        let scripts = scripts(&stack(&pages, &[])).expect("scripts");
        // Copy 3 has no page: it is absent and has no script.
        assert_eq!(
            scripts.iter().map(|s| s.copy).collect::<Vec<_>>(),
            vec![1, 2]
        );
        let at = |file: &str, page: u32| StackPage {
            file: file.to_owned(),
            page,
        };
        // The blank back (copy page 4) is no page of the script.
        assert_eq!(
            scripts[0].pages,
            vec![(1, at("a", 1)), (2, at("a", 2)), (3, at("a", 3))]
        );
        assert!(scripts[0].missing.is_empty());
        assert_eq!(scripts[1].pages, vec![(1, at("b", 1)), (3, at("b", 2))]);
        assert_eq!(scripts[1].missing, vec![2]);
    }

    #[test]
    fn a_script_changes_exactly_when_its_pages_do() {
        let pages = [page("a", 1, 1, 1), page("a", 2, 1, 2), page("b", 1, 2, 1)];
        let before = scripts(&stack(&pages, &[])).expect("scripts");
        let absent = scripts(&stack(&pages, &[Decision::Absent { copy: 2 }])).expect("scripts");
        assert_eq!(absent.len(), 1);
        assert_eq!(absent[0].pages_json(), before[0].pages_json());
        let mut more = pages.to_vec();
        more.push(page("c", 1, 1, 3));
        let after = scripts(&stack(&more, &[])).expect("scripts");
        assert_ne!(after[0].pages_json(), before[0].pages_json());
        assert_eq!(after[1].pages_json(), before[1].pages_json());
        assert_eq!(after[0].missing_json(), "[]");
        assert_eq!(before[0].missing_json(), "[3]");
    }

    #[test]
    fn an_assigned_extra_sheet_joins_its_copys_script() {
        let sheet = ScannedPage {
            at: StackPage {
                file: "b".into(),
                page: 9,
            },
            codes: vec![ExtraSheetCode { run_id: run().id }.to_payload()],
            fingerprint: "sheet".into(),
        };
        let pages = [page("a", 1, 1, 1), page("a", 2, 2, 1), sheet.clone()];
        let unassigned = scripts(&stack(&pages, &[])).expect("scripts");
        assert!(unassigned.iter().all(|s| s.extras.is_empty()));
        let assigned = scripts(&stack(
            &pages,
            &[Decision::AssignExtra {
                at: sheet.at.clone(),
                copy: 2,
                question: "2".into(),
            }],
        ))
        .expect("scripts");
        assert!(assigned[0].extras.is_empty());
        assert_eq!(assigned[1].extras, vec![("2".to_owned(), sheet.at)]);
        assert_eq!(assigned[0].pages_json(), unassigned[0].pages_json());
        assert_ne!(assigned[1].pages_json(), unassigned[1].pages_json());
    }

    #[test]
    fn no_script_is_made_while_pages_are_read_or_from_nothing() {
        let mut reading = stack(&[page("a", 1, 1, 1)], &[]);
        reading.reading.push(StackPage {
            file: "a".into(),
            page: 2,
        });
        assert_eq!(
            scripts(&reading),
            Err(NotReady::Reading {
                pages: 1,
                first: StackPage {
                    file: "a".into(),
                    page: 2,
                },
            })
        );
        assert_eq!(scripts(&stack(&[], &[])), Err(NotReady::Empty));
        let all_absent = stack(&[page("a", 1, 1, 1)], &[Decision::Absent { copy: 1 }]);
        assert_eq!(scripts(&all_absent), Err(NotReady::NoScript));
    }
}
