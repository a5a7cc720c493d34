//! The names students wrote on their covers, checked against the roster.
//!
//! With a vision model configured, the name written on each named copy's cover is read (see
//! `crate::marking::names`). Those names are matched to the roster all at once, as one
//! assignment over the whole set: each roster student goes to at most one written name, and the
//! assignment is the one whose names agree best in total (the Hungarian method), so a student
//! whose name two covers resemble goes to the better of them and the other is left to a person.
//! A written name agreeing with no roster name well enough ([`MATCH_AT`]) matches nobody.
//!
//! A reading is a prediction, never a decision: a name that disagrees with the copy's student as
//! it stands, or matches nobody, is flagged for a person; who wrote the copy changes only by a
//! person's `student` decision (`super::students`).

use std::collections::BTreeMap;

use super::scans::Stack;
use super::students::Writer;
use crate::store::class_sets::names::NameRow;
use crate::store::words::NameState;

/// The least similarity (0 to 1) at which a written name matches a roster name.
pub const MATCH_AT: f64 = 0.7;

/// What was read on a copy's cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Being read.
    Reading,
    /// Read: the name as written, `None` when the line is blank.
    Read(Option<String>),
    /// It could not be read, and why.
    Failed(String),
}

/// A roster student a written name matches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    /// The roster copy of the student (the copy printed for them).
    pub student: u32,
    /// How similar the names are, 0 to 1 (1: the same letters).
    pub confidence: f64,
}

/// How a copy's written name bears on who wrote it as it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not read yet.
    Pending,
    /// It matches the copy's student.
    Agrees,
    /// It matches another roster student.
    Disagrees,
    /// It matches nobody on the roster.
    Unmatched,
    /// Nothing is written on the line.
    Blank,
    /// It could not be read.
    Unread,
}

impl Verdict {
    /// Its name in the API.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pending => "pending",
            Verdict::Agrees => "agrees",
            Verdict::Disagrees => "disagrees",
            Verdict::Unmatched => "unmatched",
            Verdict::Blank => "blank",
            Verdict::Unread => "unread",
        }
    }
}

/// One copy's written name, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NameCheck {
    /// What was read.
    pub reading: Reading,
    /// The roster student it matches, in the whole-set assignment.
    pub matched: Option<Match>,
    /// How it bears on the copy's student.
    pub verdict: Verdict,
    /// Whether a person must look: it disagrees or matches nobody, and no person has said who
    /// wrote the copy.
    pub flagged: bool,
}

/// The written name of every copy whose cover was read, checked against the roster (`roster`:
/// each named copy's printed student) and who wrote each copy as it stands.
pub fn check(
    stack: &Stack,
    rows: &[NameRow],
    roster: &[(u32, &str)],
    writers: &BTreeMap<u32, Writer>,
) -> BTreeMap<u32, NameCheck> {
    let written = written(stack, rows);
    let written: Vec<(u32, &str)> = written.iter().map(|(c, n)| (*c, n.as_str())).collect();
    check_matched(stack, rows, &assign(&written, roster), writers)
}

/// The names read on the covers as the stack places them: (copy, name), in copy order.
pub fn written(stack: &Stack, rows: &[NameRow]) -> Vec<(u32, String)> {
    readings(stack, rows)
        .into_iter()
        .filter_map(|(copy, r)| match r {
            Reading::Read(Some(name)) => Some((copy, name)),
            _ => None,
        })
        .collect()
}

/// Each copy's cover as the stack places it, and what was read on it.
fn readings(stack: &Stack, rows: &[NameRow]) -> BTreeMap<u32, Reading> {
    let mut readings: BTreeMap<u32, Reading> = BTreeMap::new();
    for (copy, (_, placed)) in &stack.report.copies {
        let Some(cover) = placed.get(&1) else {
            continue;
        };
        let Some(row) = rows
            .iter()
            .find(|r| r.asset_id == cover.file && r.page == i64::from(cover.page))
        else {
            continue;
        };
        let reading = match row.state {
            NameState::Read => Reading::Read(row.written.clone()),
            NameState::Failed => Reading::Failed(row.error.clone().unwrap_or_default()),
            NameState::Reading => Reading::Reading,
        };
        readings.insert(*copy, reading);
    }
    readings
}

/// [`check`] with the whole-set assignment made already (`matches`, by [`assign`] of
/// [`written`]): the assignment is the costly part, made once for a set's names and roster.
pub fn check_matched(
    stack: &Stack,
    rows: &[NameRow],
    matches: &BTreeMap<u32, Match>,
    writers: &BTreeMap<u32, Writer>,
) -> BTreeMap<u32, NameCheck> {
    let readings = readings(stack, rows);
    readings
        .into_iter()
        .map(|(copy, reading)| {
            let matched = matches.get(&copy).copied();
            let writer = writers.get(&copy).copied().unwrap_or(Writer::Numbered);
            let verdict = match (&reading, matched) {
                (Reading::Reading, _) => Verdict::Pending,
                (Reading::Failed(_), _) => Verdict::Unread,
                (Reading::Read(None), _) => Verdict::Blank,
                (Reading::Read(Some(_)), None) => Verdict::Unmatched,
                (Reading::Read(Some(_)), Some(m)) if writer.student() == Some(m.student) => {
                    Verdict::Agrees
                }
                (Reading::Read(Some(_)), Some(_)) => Verdict::Disagrees,
            };
            let decided = matches!(writer, Writer::Confirmed(_) | Writer::NotOnRoster);
            let flagged = matches!(verdict, Verdict::Disagrees | Verdict::Unmatched) && !decided;
            (
                copy,
                NameCheck {
                    reading,
                    matched,
                    verdict,
                    flagged,
                },
            )
        })
        .collect()
}

/// The whole-set assignment of written names (copy, name) to roster students (roster copy,
/// name): each student to at most one written name, the total similarity the greatest; a pair
/// less similar than [`MATCH_AT`] is no match.
pub fn assign(written: &[(u32, &str)], roster: &[(u32, &str)]) -> BTreeMap<u32, Match> {
    if written.is_empty() || roster.is_empty() {
        return BTreeMap::new();
    }
    let roster_keys: Vec<String> = roster.iter().map(|(_, n)| key(n)).collect();
    let similarity: Vec<Vec<f64>> = written
        .iter()
        .map(|(_, w)| {
            let w = key(w);
            roster_keys.iter().map(|r| similar(&w, r)).collect()
        })
        .collect();
    // Below the threshold a pair is worth nothing, so the assignment never trades a good match
    // for a poor one.
    let worth = |i: usize, j: usize| {
        let s = similarity[i][j];
        if s >= MATCH_AT { s } else { 0.0 }
    };
    let pairs = best_assignment(written.len(), roster.len(), &worth);
    pairs
        .into_iter()
        .filter(|&(i, j)| similarity[i][j] >= MATCH_AT)
        .map(|(i, j)| {
            (
                written[i].0,
                Match {
                    student: roster[j].0,
                    confidence: (similarity[i][j] * 100.0).round() / 100.0,
                },
            )
        })
        .collect()
}

/// A name as compared: lower case, letters and digits, its words in alphabetical order (so
/// "Turing, Alan" is "Alan Turing").
fn key(name: &str) -> String {
    let lowered: String = name
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let mut words: Vec<&str> = lowered.split_whitespace().collect();
    words.sort_unstable();
    words.join(" ")
}

/// One minus the edit distance over the longer length (in characters): 1 for the same, 0 for
/// nothing shared, and 0 for two empty names (nothing written matches no one).
fn similar(a: &str, b: &str) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    strsim::normalized_levenshtein(a, b)
}

/// The pairs (row, column) of a `rows` × `columns` matrix, each row and column at most once,
/// with the greatest total `worth` (the Hungarian method, O(n² m)).
pub fn best_assignment(
    rows: usize,
    columns: usize,
    worth: &dyn Fn(usize, usize) -> f64,
) -> Vec<(usize, usize)> {
    // The method wants no more rows than columns: transpose when there are.
    if rows > columns {
        return best_assignment(columns, rows, &|i, j| worth(j, i))
            .into_iter()
            .map(|(i, j)| (j, i))
            .collect();
    }
    // Minimising cost = −worth, 1-based with a sentinel column 0 (after e-maxx).
    let cost = |i: usize, j: usize| -worth(i - 1, j - 1);
    let (n, m) = (rows, columns);
    let mut u = vec![0.0f64; n + 1];
    let mut v = vec![0.0f64; m + 1];
    let mut p = vec![0usize; m + 1];
    let mut way = vec![0usize; m + 1];
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0;
        let mut minv = vec![f64::INFINITY; m + 1];
        let mut used = vec![false; m + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let mut delta = f64::INFINITY;
            let mut j1 = 0;
            for j in 1..=m {
                if !used[j] {
                    let cur = cost(i0, j) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=m {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    (1..=m)
        .filter(|&j| p[j] != 0)
        .map(|j| (p[j] - 1, j - 1))
        .collect()
}

/// Puts the items whose written name a person must check (`flagged`) first, keeping the order
/// of each group: a set's page lists its copies this way, conflicts leading.
pub fn flagged_first<T>(items: &mut [T], flagged: impl Fn(&T) -> bool) {
    items.sort_by_key(|item| !flagged(item));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ROSTER: [(u32, &str); 4] = [
        (1, "Ada Lovelace"),
        (2, "Alan Turing"),
        (3, "Grace Hopper"),
        (4, "Mary Somerville"),
    ];

    #[test]
    fn names_compare_by_their_letters_in_any_order() {
        assert_eq!(similar(&key("Alan Turing"), &key("alan  TURING")), 1.0);
        assert_eq!(similar(&key("Turing, Alan"), &key("Alan Turing")), 1.0);
        assert!(similar(&key("Alan Turning"), &key("Alan Turing")) > 0.9);
        assert!(similar(&key("Ada Lovelace"), &key("Grace Hopper")) < 0.4);
        assert_eq!(similar("", ""), 0.0);
    }

    #[test]
    fn the_whole_class_is_matched_each_student_once() {
        // Alan sat in Ada's seat and wrote his name; Ada wrote hers on Alan's copy, misspelt.
        let written = [
            (1, "Alan Turing"),
            (2, "Ada Lovelase"),
            (3, "Grace Hopper"),
            (4, "Someone New"),
        ];
        let matched = assign(&written, &ROSTER);
        assert_eq!(matched[&1].student, 2);
        assert_eq!(matched[&1].confidence, 1.0);
        assert_eq!(matched[&2].student, 1);
        assert!(matched[&2].confidence < 1.0 && matched[&2].confidence >= MATCH_AT);
        assert_eq!(matched[&3].student, 3);
        assert!(!matched.contains_key(&4), "nobody on the roster");
    }

    #[test]
    fn two_covers_like_one_student_give_them_to_the_closer() {
        let written = [(1, "Alan Turing"), (2, "Alan Turin")];
        let matched = assign(&written, &ROSTER);
        assert_eq!(matched[&1].student, 2);
        assert!(!matched.contains_key(&2), "Alan is taken: a person looks");
    }

    /// A stack whose copies 1 to 5 each have a cover at page `copy` of file `f`.
    fn stack_of_covers() -> Stack {
        use super::super::stack::{CopyState, Report, Run, StackPage};
        let copies = (1..=5u32)
            .map(|copy| {
                let cover = StackPage {
                    file: "f".into(),
                    page: copy,
                };
                (
                    copy,
                    (
                        CopyState::Incomplete { missing: vec![2] },
                        BTreeMap::from([(1, cover)]),
                    ),
                )
            })
            .collect();
        Stack {
            run: Run {
                id: uuid::Uuid::nil(),
                copies: (1..=5).collect(),
                paper_pages: 2,
                pages_per_copy: 2,
            },
            reading: Vec::new(),
            report: Report {
                pages: Vec::new(),
                copies,
                extras: BTreeMap::new(),
            },
        }
    }

    fn row(page: i64, state: &str, written: Option<&str>) -> NameRow {
        NameRow {
            asset_id: "f".into(),
            page,
            state: NameState::parse(state).expect("a name state"),
            written: written.map(str::to_owned),
            error: (state == "failed").then(|| "the model provider could not be reached".into()),
        }
    }

    #[test]
    fn every_reading_gets_its_verdict_and_only_an_undecided_disagreement_is_flagged() {
        let rows = [
            row(1, "read", Some("Alan Turing")),
            row(2, "reading", None),
            row(3, "failed", None),
            row(4, "read", None),
            row(5, "read", Some("Sophie Germain")),
        ];
        let roster: Vec<(u32, &str)> = ROSTER
            .iter()
            .copied()
            .chain([(5, "Emmy Noether")])
            .collect();
        let printed: BTreeMap<u32, Writer> = (1..=5).map(|c| (c, Writer::Printed(c))).collect();
        let checks = check(&stack_of_covers(), &rows, &roster, &printed);
        let verdicts: Vec<(Verdict, bool)> =
            checks.values().map(|c| (c.verdict, c.flagged)).collect();
        assert_eq!(
            verdicts,
            vec![
                (Verdict::Disagrees, true),
                (Verdict::Pending, false),
                (Verdict::Unread, false),
                (Verdict::Blank, false),
                (Verdict::Unmatched, true),
            ]
        );
        assert_eq!(
            checks[&3].reading,
            Reading::Failed("the model provider could not be reached".into())
        );
        // A person spoke for copies 1 and 5: shown, no longer flagged.
        let mut decided = printed.clone();
        decided.insert(1, Writer::Confirmed(1));
        decided.insert(5, Writer::NotOnRoster);
        let checks = check(&stack_of_covers(), &rows, &roster, &decided);
        assert_eq!(checks[&1].verdict, Verdict::Disagrees);
        assert!(!checks[&1].flagged && !checks[&5].flagged);
        // Given to Alan by a person, the reading agrees.
        decided.insert(1, Writer::Confirmed(2));
        let checks = check(&stack_of_covers(), &rows, &roster, &decided);
        assert_eq!(checks[&1].verdict, Verdict::Agrees);
        // A cover placed by no reading (by hand, or not read) has no check.
        assert!(check(&stack_of_covers(), &[], &roster, &printed).is_empty());
    }

    /// The best total by trying every assignment.
    fn brute(w: &[Vec<f64>], row: usize, taken: &mut Vec<bool>) -> f64 {
        if row == w.len() {
            return 0.0;
        }
        let mut best = brute(w, row + 1, taken); // row left unassigned
        for j in 0..taken.len() {
            if !taken[j] {
                taken[j] = true;
                best = best.max(w[row][j] + brute(w, row + 1, taken));
                taken[j] = false;
            }
        }
        best
    }

    proptest! {
        #[test]
        fn flagged_names_lead_and_each_group_keeps_its_order(
            flags in proptest::collection::vec(any::<bool>(), 0..40),
        ) {
            let mut items: Vec<(usize, bool)> = flags.iter().copied().enumerate().collect();
            flagged_first(&mut items, |&(_, flagged)| flagged);
            let leading = flags.iter().filter(|&&f| f).count();
            prop_assert!(items[..leading].iter().all(|&(_, f)| f));
            prop_assert!(items[leading..].iter().all(|&(_, f)| !f));
            for group in [&items[..leading], &items[leading..]] {
                prop_assert!(group.windows(2).all(|w| w[0].0 < w[1].0));
            }
        }

        #[test]
        fn the_assignment_is_the_best_there_is(
            rows in 1usize..5,
            columns in 1usize..5,
            values in proptest::collection::vec(0u8..=100, 25),
        ) {
            let w: Vec<Vec<f64>> = (0..rows)
                .map(|i| (0..columns).map(|j| f64::from(values[i * 5 + j]) / 100.0).collect())
                .collect();
            let pairs = best_assignment(rows, columns, &|i, j| w[i][j]);
            let mut seen_rows = std::collections::BTreeSet::new();
            let mut seen_columns = std::collections::BTreeSet::new();
            for &(i, j) in &pairs {
                prop_assert!(seen_rows.insert(i) && seen_columns.insert(j));
            }
            let total: f64 = pairs.iter().map(|&(i, j)| w[i][j]).sum();
            let best = brute(&w, 0, &mut vec![false; columns]);
            prop_assert!((total - best).abs() < 1e-9, "{total} vs {best}");
        }
    }
}
