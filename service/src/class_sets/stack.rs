//! Splitting a scanned stack into scripts: every page of the stack is placed by its copy code
//! into its copy, or accounted for otherwise, and every copy is complete, incomplete or absent.
//!
//! Pure: the pages come in with the codes indexing read and a fingerprint of their pixels, with
//! the decisions people have made; the report comes out. Nothing is decided silently:
//! - a page with no readable code is **unknown** until a person places it by its printed line;
//! - a page whose codes disagree is unknown too (a folded page, or two sheets scanned as one);
//! - a page of another print run or another document is **foreign**, never placed;
//! - the same copy page twice is a **rescan** when the pixels are identical (the later one is set
//!   aside) and a **conflict** otherwise: no page of a conflict is placed until a person chooses;
//! - a copy's coded blank back is accounted for and set aside;
//! - an extra answer sheet of the run waits until a person assigns it to a copy and question;
//! - a copy with no page at all is **absent**; one missing some pages is **incomplete**, naming
//!   them (a missing page is never a blank answer).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use examkit_pdf::{CopyCode, ExtraSheetCode, PageCode};
use uuid::Uuid;

/// The print run the stack belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The class set's id: the run in its copy codes.
    pub id: Uuid,
    /// The copy numbers of the set.
    pub copies: BTreeSet<u32>,
    /// The question paper's pages.
    pub paper_pages: u32,
    /// The pages of a copy in print (the paper's, plus a blank back when odd).
    pub pages_per_copy: u32,
}

/// Where a page of the stack is: the file and the page within it (1-based).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StackPage {
    /// The uploaded file (its asset id).
    pub file: String,
    /// The page of the file.
    pub page: u32,
}

/// One scanned page as indexing read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedPage {
    /// Where it is.
    pub at: StackPage,
    /// The payloads of every code decoded on it.
    pub codes: Vec<String>,
    /// A digest of its pixels as rendered: equal for an identical rescan.
    pub fingerprint: String,
}

/// What a person decided about the stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// An unknown page is this copy's page (typed from its printed line).
    Place {
        /// The page.
        at: StackPage,
        /// Its copy.
        copy: u32,
        /// Its page of the copy.
        page: u32,
    },
    /// Of a conflict, this page stands for its copy page; the others are set aside.
    Choose {
        /// The page that stands.
        at: StackPage,
    },
    /// An extra answer sheet belongs to this copy and question.
    AssignExtra {
        /// The sheet.
        at: StackPage,
        /// Its copy.
        copy: u32,
        /// The question it answers (its label).
        question: String,
    },
    /// The copy was not sat: absent, whatever pages it has.
    Absent {
        /// The copy.
        copy: u32,
    },
    /// An earlier [`Decision::Absent`] is taken back.
    Present {
        /// The copy.
        copy: u32,
    },
    /// Who wrote the copy: the student of the roster copy `student` (the copy printed for them),
    /// or, `None`, a student not on the roster. It places no page (see `super::students`).
    Student {
        /// The copy.
        copy: u32,
        /// The roster copy whose student wrote it.
        student: Option<u32>,
    },
}

/// Where one page of the stack went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Placed in a copy's script.
    Placed {
        /// The copy.
        copy: u32,
        /// Its page.
        page: u32,
        /// Placed by a person's decision rather than by its code.
        by_hand: bool,
    },
    /// A copy's coded blank back, set aside.
    BlankBack {
        /// The copy.
        copy: u32,
    },
    /// An identical rescan of a page already placed, set aside.
    Rescan {
        /// The copy.
        copy: u32,
        /// Its page.
        page: u32,
    },
    /// One of several different scans of the same copy page: waits for a person.
    Conflict {
        /// The copy.
        copy: u32,
        /// Its page.
        page: u32,
    },
    /// Set aside by a person's choice in a conflict.
    NotChosen {
        /// The copy.
        copy: u32,
        /// Its page.
        page: u32,
    },
    /// An extra answer sheet: assigned to a copy and question by a person, else waiting.
    Extra {
        /// The copy and question a person assigned it to.
        assigned: Option<(u32, String)>,
    },
    /// No readable code, or codes that disagree: waits for a person.
    Unknown {
        /// Why.
        reason: String,
    },
    /// A page of another print run or document: refused.
    Foreign {
        /// What it is.
        reason: String,
    },
}

/// How complete a copy's script is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyState {
    /// Every page of the paper is placed.
    Complete,
    /// Some pages are placed; these are missing (or waiting in a conflict).
    Incomplete {
        /// The pages not placed, in order.
        missing: Vec<u32>,
    },
    /// No page placed, or marked absent by a person.
    Absent,
}

/// The stack report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Every page of the stack, in stack order, with where it went.
    pub pages: Vec<(StackPage, Placement)>,
    /// Every copy of the set: its state and its placed pages (copy page → stack page).
    pub copies: BTreeMap<u32, (CopyState, BTreeMap<u32, StackPage>)>,
    /// The extra sheets assigned to each copy, with the question each answers, in stack order.
    pub extras: BTreeMap<u32, Vec<(String, StackPage)>>,
}

/// What one page's codes say.
enum Read {
    Copy(u32, u32),
    Extra,
    Unknown(String),
    Foreign(String),
}

fn read(run: &Run, codes: &[String]) -> Read {
    let mut copies = BTreeSet::new();
    let mut foreign = None;
    let mut extra = false;
    for payload in codes {
        if let Some(code) = ExtraSheetCode::parse(payload) {
            if code.run_id == run.id {
                extra = true;
            } else {
                foreign = Some(format!(
                    "an extra sheet of another print run ({})",
                    CopyCode::short_run(code.run_id)
                ));
            }
        } else if let Some(code) = CopyCode::parse(payload) {
            if code.run_id != run.id {
                foreign = Some(format!(
                    "a page of another print run ({})",
                    CopyCode::short_run(code.run_id)
                ));
            } else {
                copies.insert((code.copy, code.page));
            }
        } else if let Some(code) = PageCode::parse(payload) {
            foreign = Some(format!(
                "a page of a {} of another paper or printing ({}), not a copy of this set",
                match code.kind {
                    examkit_pdf::DocumentKind::QuestionPaper => "question paper",
                    examkit_pdf::DocumentKind::MarkScheme => "mark scheme",
                },
                code.caption()
            ));
        }
    }
    match (copies.len(), foreign) {
        (0, None) if extra => Read::Extra,
        (0, Some(reason)) if !extra => Read::Foreign(reason),
        (0, None) => Read::Unknown("no code could be read".to_owned()),
        (1, None) if !extra => {
            let (copy, page) = copies.into_iter().next().unwrap_or_default();
            if !run.copies.contains(&copy) || page > run.pages_per_copy {
                Read::Foreign(format!(
                    "copy {copy} page {page} is not a page of this set's copies"
                ))
            } else {
                Read::Copy(copy, page)
            }
        }
        _ => Read::Unknown("its codes disagree (a folded page, or two sheets at once?)".to_owned()),
    }
}

/// Places every page of the stack (see the module's description).
pub fn split(run: &Run, pages: &[ScannedPage], decisions: &[Decision]) -> Report {
    let decided = Decided::of(run, decisions);
    let claims = claims(run, pages, &decided);
    let (placements, mut scripts) = settle(run, pages, &claims, &decided.chosen);
    let copies = run
        .copies
        .iter()
        .map(|&copy| {
            let placed = scripts.remove(&copy).unwrap_or_default();
            (
                copy,
                (copy_state(run, &decided.absent, copy, &placed), placed),
            )
        })
        .collect();
    let mut extras: BTreeMap<u32, Vec<(String, StackPage)>> = BTreeMap::new();
    for (scanned, placement) in pages.iter().zip(&placements) {
        if let Some(Placement::Extra {
            assigned: Some((copy, question)),
        }) = placement
        {
            extras
                .entry(*copy)
                .or_default()
                .push((question.clone(), scanned.at.clone()));
        }
    }
    Report {
        extras,
        pages: pages
            .iter()
            .zip(placements)
            .map(|(p, placement)| {
                (
                    p.at.clone(),
                    placement.unwrap_or(Placement::Unknown {
                        reason: "not placed".to_owned(),
                    }),
                )
            })
            .collect(),
        copies,
    }
}

/// People's decisions about a stack, by what they are about.
struct Decided<'a> {
    /// Pages a person placed: the copy and page each is.
    placed_by_hand: HashMap<&'a StackPage, (u32, u32)>,
    /// Each chosen page with when it was chosen: of a conflict, the latest choice stands.
    chosen: HashMap<&'a StackPage, usize>,
    /// Extra sheets a person gave to a copy of the run, with the question each answers.
    assigned: HashMap<&'a StackPage, (u32, &'a str)>,
    /// The copies said absent (and not said present since).
    absent: BTreeSet<u32>,
}

impl<'a> Decided<'a> {
    fn of(run: &Run, decisions: &'a [Decision]) -> Decided<'a> {
        let placed_by_hand: HashMap<&StackPage, (u32, u32)> = decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Place { at, copy, page } => Some((at, (*copy, *page))),
                _ => None,
            })
            .collect();
        // Each chosen page with when it was chosen: of a conflict, the latest choice stands.
        let chosen: HashMap<&StackPage, usize> = decisions
            .iter()
            .enumerate()
            .filter_map(|(i, d)| match d {
                Decision::Choose { at } => Some((at, i)),
                _ => None,
            })
            .collect();
        let assigned: HashMap<&StackPage, (u32, &str)> = decisions
            .iter()
            .filter_map(|d| match d {
                Decision::AssignExtra { at, copy, question } if run.copies.contains(copy) => {
                    Some((at, (*copy, question.as_str())))
                }
                _ => None,
            })
            .collect();
        let mut absent: BTreeSet<u32> = BTreeSet::new();
        for decision in decisions {
            match decision {
                Decision::Absent { copy } => {
                    absent.insert(*copy);
                }
                Decision::Present { copy } => {
                    absent.remove(copy);
                }
                _ => {}
            }
        }
        Decided {
            placed_by_hand,
            chosen,
            assigned,
            absent,
        }
    }
}

/// First pass: what each page claims to be (a copy's page, and whether a person placed it
/// there), or where it is placed when it claims no copy's page.
fn claims(
    run: &Run,
    pages: &[ScannedPage],
    decided: &Decided<'_>,
) -> Vec<Result<(u32, u32, bool), Placement>> {
    let mut claims: Vec<Result<(u32, u32, bool), Placement>> = Vec::with_capacity(pages.len());
    for scanned in pages {
        let claim = match read(run, &scanned.codes) {
            Read::Copy(copy, page) => Ok((copy, page, false)),
            Read::Extra => Err(Placement::Extra {
                assigned: decided
                    .assigned
                    .get(&scanned.at)
                    .map(|&(copy, question)| (copy, question.to_owned())),
            }),
            Read::Foreign(reason) => Err(Placement::Foreign { reason }),
            Read::Unknown(reason) => match decided.placed_by_hand.get(&scanned.at) {
                Some(&(copy, page))
                    if run.copies.contains(&copy) && (1..=run.pages_per_copy).contains(&page) =>
                {
                    Ok((copy, page, true))
                }
                _ => Err(Placement::Unknown { reason }),
            },
        };
        claims.push(claim);
    }

    claims
}

/// Second pass: the pages claiming each copy page. Identical scans are rescans of the first;
/// of distinct ones, the only one or the one chosen last stands; a page past the paper's is a
/// blank back. Returns each page's placement and the pages standing in each copy.
#[allow(clippy::type_complexity)]
fn settle(
    run: &Run,
    pages: &[ScannedPage],
    claims: &[Result<(u32, u32, bool), Placement>],
    chosen: &HashMap<&StackPage, usize>,
) -> (
    Vec<Option<Placement>>,
    BTreeMap<u32, BTreeMap<u32, StackPage>>,
) {
    let mut claimants: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    for (i, claim) in claims.iter().enumerate() {
        if let Ok((copy, page, _)) = claim {
            claimants.entry((*copy, *page)).or_default().push(i);
        }
    }
    let mut placements: Vec<Option<Placement>> =
        claims.iter().map(|c| c.as_ref().err().cloned()).collect();
    let mut scripts: BTreeMap<u32, BTreeMap<u32, StackPage>> = BTreeMap::new();
    for (&(copy, page), indices) in &claimants {
        let blank_back = page > run.paper_pages;
        // Distinct scans by fingerprint, in stack order; identical ones are rescans of the first.
        let mut distinct: Vec<usize> = Vec::new();
        for &i in indices {
            if distinct
                .iter()
                .any(|&d| pages[d].fingerprint == pages[i].fingerprint)
            {
                placements[i] = Some(Placement::Rescan { copy, page });
            } else {
                distinct.push(i);
            }
        }
        let standing = match distinct.as_slice() {
            [only] => Some(*only),
            several => several
                .iter()
                .copied()
                .filter_map(|i| chosen.get(&pages[i].at).map(|&when| (when, i)))
                .max()
                .map(|(_, i)| i),
        };
        for &i in &distinct {
            placements[i] = Some(if blank_back {
                Placement::BlankBack { copy }
            } else {
                match standing {
                    Some(s) if s == i => Placement::Placed {
                        copy,
                        page,
                        by_hand: matches!(claims[i], Ok((_, _, true))),
                    },
                    Some(_) => Placement::NotChosen { copy, page },
                    None => Placement::Conflict { copy, page },
                }
            });
        }
        if let (Some(s), false) = (standing, blank_back) {
            scripts
                .entry(copy)
                .or_default()
                .insert(page, pages[s].at.clone());
        }
    }

    (placements, scripts)
}

/// The state of `copy` with the pages `placed` in it: absent when said so or nothing of it was
/// scanned, else complete or missing pages of the paper.
fn copy_state(
    run: &Run,
    absent: &BTreeSet<u32>,
    copy: u32,
    placed: &BTreeMap<u32, StackPage>,
) -> CopyState {
    if absent.contains(&copy) || placed.is_empty() {
        return CopyState::Absent;
    }
    let missing: Vec<u32> = (1..=run.paper_pages)
        .filter(|p| !placed.contains_key(p))
        .collect();
    if missing.is_empty() {
        CopyState::Complete
    } else {
        CopyState::Incomplete { missing }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn run() -> Run {
        Run {
            id: Uuid::from_u128(0x9b1c_0d2e_3f4a_4b5c_8d6e_7f80_91a2_b3c4),
            copies: (1..=3).collect(),
            paper_pages: 3,
            pages_per_copy: 4,
        }
    }

    fn at(file: &str, page: u32) -> StackPage {
        StackPage {
            file: file.to_owned(),
            page,
        }
    }

    fn coded(file: &str, page: u32, copy: u32, copy_page: u32, print: &str) -> ScannedPage {
        ScannedPage {
            at: at(file, page),
            codes: vec![
                CopyCode {
                    run_id: run().id,
                    copy,
                    page: copy_page,
                }
                .to_payload(),
            ],
            fingerprint: print.to_owned(),
        }
    }

    fn uncoded(file: &str, page: u32, print: &str) -> ScannedPage {
        ScannedPage {
            at: at(file, page),
            codes: vec![],
            fingerprint: print.to_owned(),
        }
    }

    fn extra(file: &str, page: u32, run: Uuid) -> ScannedPage {
        ScannedPage {
            at: at(file, page),
            codes: vec![ExtraSheetCode { run_id: run }.to_payload()],
            fingerprint: format!("extra {file} {page}"),
        }
    }

    fn placement<'a>(report: &'a Report, file: &str, page: u32) -> &'a Placement {
        &report
            .pages
            .iter()
            .find(|(p, _)| *p == at(file, page))
            .expect("the page is in the report")
            .1
    }

    /// A stack with every case at once: shuffled pages across two files, a blank back, an
    /// identical rescan, a different rescan, a missing page, a foreign run, a question paper's
    /// page, an unreadable code, disagreeing codes, and an absent copy.
    fn every_case() -> Vec<ScannedPage> {
        let other_run = CopyCode {
            run_id: Uuid::from_u128(7),
            copy: 1,
            page: 1,
        };
        let qp = PageCode {
            kind: examkit_pdf::DocumentKind::QuestionPaper,
            paper_id: Uuid::from_u128(8),
            revision: 1,
            page: 2,
        };
        let mut folded = coded("b", 6, 1, 3, "folded");
        folded.codes.push(
            CopyCode {
                run_id: run().id,
                copy: 2,
                page: 3,
            }
            .to_payload(),
        );
        vec![
            coded("a", 1, 1, 2, "1.2"),
            coded("a", 2, 1, 1, "1.1"),
            coded("a", 3, 1, 4, "1.back"),
            coded("a", 4, 2, 1, "2.1"),
            coded("a", 5, 1, 2, "1.2"),
            coded("b", 1, 2, 2, "2.2"),
            coded("b", 2, 2, 2, "2.2 again, darker"),
            uncoded("b", 3, "covered"),
            ScannedPage {
                at: at("b", 4),
                codes: vec![other_run.to_payload()],
                fingerprint: "other".into(),
            },
            ScannedPage {
                at: at("b", 5),
                codes: vec![qp.to_payload(), "not a code".into()],
                fingerprint: "qp".into(),
            },
            folded,
            coded("b", 7, 2, 3, "2.3"),
            coded("b", 8, 4, 1, "copy 4"),
            extra("b", 9, run().id),
            extra("b", 10, Uuid::from_u128(7)),
        ]
    }

    #[test]
    fn every_page_is_accounted_for_and_nothing_is_decided_silently() {
        let report = split(&run(), &every_case(), &[]);
        let placed = |copy, page| Placement::Placed {
            copy,
            page,
            by_hand: false,
        };
        assert_eq!(placement(&report, "a", 1), &placed(1, 2));
        assert_eq!(placement(&report, "a", 2), &placed(1, 1));
        assert_eq!(
            placement(&report, "a", 3),
            &Placement::BlankBack { copy: 1 }
        );
        assert_eq!(placement(&report, "a", 4), &placed(2, 1));
        assert_eq!(
            placement(&report, "a", 5),
            &Placement::Rescan { copy: 1, page: 2 }
        );
        assert_eq!(
            placement(&report, "b", 1),
            &Placement::Conflict { copy: 2, page: 2 }
        );
        assert_eq!(
            placement(&report, "b", 2),
            &Placement::Conflict { copy: 2, page: 2 }
        );
        assert!(
            matches!(placement(&report, "b", 3), Placement::Unknown { reason } if reason.contains("no code"))
        );
        assert!(
            matches!(placement(&report, "b", 4), Placement::Foreign { reason } if reason.contains("another print run"))
        );
        assert!(
            matches!(placement(&report, "b", 5), Placement::Foreign { reason } if reason.contains("question paper"))
        );
        assert!(
            matches!(placement(&report, "b", 6), Placement::Unknown { reason } if reason.contains("disagree"))
        );
        assert_eq!(placement(&report, "b", 7), &placed(2, 3));
        assert!(
            matches!(placement(&report, "b", 8), Placement::Foreign { reason } if reason.contains("copy 4"))
        );
        assert_eq!(
            placement(&report, "b", 9),
            &Placement::Extra { assigned: None }
        );
        assert!(
            matches!(placement(&report, "b", 10), Placement::Foreign { reason } if reason.contains("extra sheet of another"))
        );
        assert!(report.extras.is_empty());
        assert_eq!(report.pages.len(), every_case().len());

        let state = |copy: u32| &report.copies[&copy].0;
        assert_eq!(state(1), &CopyState::Incomplete { missing: vec![3] });
        assert_eq!(
            state(2),
            &CopyState::Incomplete { missing: vec![2] },
            "a page in conflict is not placed"
        );
        assert_eq!(state(3), &CopyState::Absent);
        assert_eq!(
            report.copies[&1].1[&2],
            at("a", 1),
            "the first of identical scans stands"
        );
    }

    #[test]
    fn a_later_decision_stands_over_an_earlier_one() {
        let decisions = [
            Decision::Choose { at: at("b", 2) },
            Decision::Absent { copy: 2 },
            Decision::Choose { at: at("b", 1) },
            Decision::Present { copy: 2 },
        ];
        let report = split(&run(), &every_case(), &decisions);
        assert_eq!(
            placement(&report, "b", 1),
            &Placement::Placed {
                copy: 2,
                page: 2,
                by_hand: false
            },
            "the latest choice stands"
        );
        assert_eq!(
            placement(&report, "b", 2),
            &Placement::NotChosen { copy: 2, page: 2 }
        );
        assert_ne!(report.copies[&2].0, CopyState::Absent, "present again");
        assert_eq!(report.copies[&2].1[&2], at("b", 1));
    }

    #[test]
    fn decisions_place_unknown_pages_choose_in_conflicts_and_mark_copies_absent() {
        let decisions = [
            Decision::Place {
                at: at("b", 3),
                copy: 1,
                page: 3,
            },
            Decision::Choose { at: at("b", 2) },
            Decision::Absent { copy: 2 },
            Decision::AssignExtra {
                at: at("b", 9),
                copy: 1,
                question: "2".to_owned(),
            },
            // A placement of a page that has a code is not needed and changes nothing.
            Decision::Place {
                at: at("a", 4),
                copy: 3,
                page: 1,
            },
        ];
        let report = split(&run(), &every_case(), &decisions);
        assert_eq!(
            placement(&report, "b", 3),
            &Placement::Placed {
                copy: 1,
                page: 3,
                by_hand: true
            }
        );
        assert_eq!(report.copies[&1].0, CopyState::Complete);
        assert_eq!(
            placement(&report, "b", 2),
            &Placement::Placed {
                copy: 2,
                page: 2,
                by_hand: false
            }
        );
        assert_eq!(
            placement(&report, "b", 1),
            &Placement::NotChosen { copy: 2, page: 2 }
        );
        assert_eq!(
            report.copies[&2].0,
            CopyState::Absent,
            "a person's absent stands"
        );
        assert_eq!(report.copies[&3].0, CopyState::Absent);
        assert_eq!(
            placement(&report, "b", 9),
            &Placement::Extra {
                assigned: Some((1, "2".to_owned()))
            }
        );
        assert_eq!(report.extras[&1], [("2".to_owned(), at("b", 9))]);
        // A hand placement outside the set is no placement.
        let report = split(
            &run(),
            &every_case(),
            &[Decision::Place {
                at: at("b", 3),
                copy: 9,
                page: 1,
            }],
        );
        assert!(matches!(
            placement(&report, "b", 3),
            Placement::Unknown { .. }
        ));
    }

    fn any_page() -> impl Strategy<Value = (Option<(u32, u32)>, u8)> {
        (prop::option::weighted(0.9, (1u32..=4, 1u32..=5)), 0u8..3)
    }

    proptest! {
        /// Whatever the stack: every page gets one placement, no copy page holds two pages, a
        /// placed page is the copy page its code names, and a complete copy has every page.
        #[test]
        fn splitting_accounts_for_every_page_once(
            stack in prop::collection::vec(any_page(), 0..40)
        ) {
            let run = run();
            let pages: Vec<ScannedPage> = stack
                .iter()
                .enumerate()
                .map(|(i, (code, print))| match code {
                    Some((copy, page)) => {
                        coded("s", i as u32 + 1, *copy, *page, &format!("{copy}.{page}.{print}"))
                    }
                    None => uncoded("s", i as u32 + 1, &format!("u{i}")),
                })
                .collect();
            let report = split(&run, &pages, &[]);
            prop_assert_eq!(report.pages.len(), pages.len());
            let mut seen = BTreeSet::new();
            for (at, placement) in &report.pages {
                if let Placement::Placed { copy, page, .. } = placement {
                    prop_assert!(seen.insert((*copy, *page)), "copy {} page {} twice", copy, page);
                    let i = at.page as usize - 1;
                    prop_assert_eq!(stack[i].0, Some((*copy, *page)));
                    prop_assert_eq!(&report.copies[copy].1[page], at);
                }
            }
            for (copy, (state, placed)) in &report.copies {
                prop_assert_eq!(
                    placed.len(),
                    seen.iter().filter(|(c, _)| c == copy).count()
                );
                match state {
                    CopyState::Complete => prop_assert_eq!(placed.len() as u32, run.paper_pages),
                    CopyState::Incomplete { missing } => {
                        prop_assert!(!placed.is_empty() && !missing.is_empty());
                        prop_assert_eq!(placed.len() + missing.len(), run.paper_pages as usize);
                    }
                    CopyState::Absent => prop_assert!(placed.is_empty()),
                }
            }
        }
    }
}
