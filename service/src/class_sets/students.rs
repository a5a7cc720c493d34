//! Who wrote each copy of a named set. The roster printed a student's name on a copy, but that is
//! a prediction, not a fact: students swap seats. A person says who wrote a copy (a `student`
//! decision: the roster copy printed for that student, or none of the roster), and that stands.
//!
//! Two copies never hold the same student. A copy whose printed student a person gave to another
//! copy is **displaced**: it holds nobody until a person says who wrote it. Two people's answers
//! giving one student to two copies are refused, so a swap is two decisions: the first displaces,
//! the second settles.

use std::collections::BTreeMap;

use super::request::{Problem, problem};
use super::stack::Decision;

/// Who wrote a copy, as it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// A numbered set: nobody is named.
    Numbered,
    /// The student printed on the copy, not confirmed.
    Printed(u32),
    /// The roster student (their printed copy) a person said wrote it.
    Confirmed(u32),
    /// A person said the student is not on the roster.
    NotOnRoster,
    /// Its printed student was given to another copy: a person must say who wrote it.
    Displaced,
}

impl Writer {
    /// The roster copy of the student, when one is held.
    pub fn student(self) -> Option<u32> {
        match self {
            Writer::Printed(s) | Writer::Confirmed(s) => Some(s),
            _ => None,
        }
    }

    /// Its name in the API.
    pub fn name(self) -> &'static str {
        match self {
            Writer::Numbered => "numbered",
            Writer::Printed(_) => "printed",
            Writer::Confirmed(_) => "confirmed",
            Writer::NotOnRoster => "notOnRoster",
            Writer::Displaced => "displaced",
        }
    }
}

/// Who wrote each copy, from the copies (each with whether it was printed for a student) and
/// people's decisions in order (the latest about a copy stands).
pub fn writers(copies: &[(u32, bool)], decisions: &[Decision]) -> BTreeMap<u32, Writer> {
    // copy → (the student said, when it was said).
    let mut said: BTreeMap<u32, (Option<u32>, usize)> = BTreeMap::new();
    for (n, decision) in decisions.iter().enumerate() {
        if let Decision::Student { copy, student } = decision {
            said.insert(*copy, (*student, n));
        }
    }
    // Checked decisions never give one student to two copies; should two that raced do so, the
    // later stands and the earlier copy is displaced, so nobody is ever held twice.
    let mut holder: BTreeMap<u32, (u32, usize)> = BTreeMap::new();
    for (&copy, &(student, n)) in &said {
        if let Some(student) = student
            && holder.get(&student).is_none_or(|&(_, m)| m < n)
        {
            holder.insert(student, (copy, n));
        }
    }
    let said: BTreeMap<u32, Option<Option<u32>>> = said
        .into_iter()
        .map(|(copy, (student, _))| match student {
            Some(s) if holder.get(&s).map(|h| h.0) != Some(copy) => (copy, None),
            other => (copy, Some(other)),
        })
        .collect();
    let taken: Vec<u32> = holder.keys().copied().collect();
    copies
        .iter()
        .map(|&(copy, named)| {
            let writer = match (said.get(&copy), named) {
                (Some(None), _) => Writer::Displaced,
                (Some(Some(Some(student))), _) => Writer::Confirmed(*student),
                (Some(Some(None)), _) => Writer::NotOnRoster,
                (None, false) => Writer::Numbered,
                (None, true) if taken.contains(&copy) => Writer::Displaced,
                (None, true) => Writer::Printed(copy),
            };
            (copy, writer)
        })
        .collect()
}

/// Checks a `student` decision against the set and earlier decisions: the set has a roster, the
/// student is one of it, and no other copy is said to hold them.
pub fn check(
    copies: &[(u32, bool)],
    earlier: &[Decision],
    copy: u32,
    student: Option<u32>,
) -> Result<(), Vec<Problem>> {
    if !copies.iter().any(|&(_, named)| named) {
        return Err(vec![problem(
            "/student",
            "not_in_set",
            "the set was printed without a roster: its copies are numbered, not named",
        )]);
    }
    let Some(student) = student else {
        return Ok(());
    };
    if !copies.iter().any(|&(c, named)| c == student && named) {
        return Err(vec![problem(
            "/student",
            "not_in_set",
            format!("no copy {student} was printed for a student of the roster"),
        )]);
    }
    let holder = writers(copies, earlier)
        .into_iter()
        .find(|&(other, writer)| other != copy && writer == Writer::Confirmed(student));
    match holder {
        Some((other, _)) => Err(vec![problem(
            "/student",
            "student_taken",
            format!(
                "copy {other} is already said to be by this student; say who wrote copy {other} first"
            ),
        )]),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROSTER: [(u32, bool); 3] = [(1, true), (2, true), (3, true)];

    fn said(copy: u32, student: Option<u32>) -> Decision {
        Decision::Student { copy, student }
    }

    #[test]
    fn printed_names_stand_unconfirmed_until_a_person_speaks() {
        let w = writers(&ROSTER, &[]);
        assert_eq!(w[&1], Writer::Printed(1));
        assert_eq!(w[&3].name(), "printed");
        let numbered = writers(&[(1, false), (2, false)], &[]);
        assert_eq!(numbered[&1], Writer::Numbered);
        assert_eq!(numbered[&2].student(), None);
    }

    #[test]
    fn a_swap_displaces_then_settles_and_nobody_is_held_twice() {
        // Copy 1 was written by copy 2's student: copy 2 is displaced, not Alan twice.
        let first = [said(1, Some(2))];
        let w = writers(&ROSTER, &first);
        assert_eq!(w[&1], Writer::Confirmed(2));
        assert_eq!(w[&2], Writer::Displaced);
        assert_eq!(w[&3], Writer::Printed(3));
        // Giving copy 3 the same student is refused; settling copy 2 is not.
        let refused = check(&ROSTER, &first, 3, Some(2)).expect_err("taken");
        assert_eq!(refused[0].code, "student_taken");
        assert_eq!(refused[0].path, "/student");
        check(&ROSTER, &first, 2, Some(1)).expect("copy 2 may be copy 1's student");
        let both = [said(1, Some(2)), said(2, Some(1))];
        let w = writers(&ROSTER, &both);
        assert_eq!(w[&1], Writer::Confirmed(2));
        assert_eq!(w[&2], Writer::Confirmed(1));
        // Saying copy 1 again (a correction) is not a clash with itself.
        check(&ROSTER, &both, 1, Some(2)).expect("the same answer again");
        // A student not on the roster frees the printed one.
        let w = writers(&ROSTER, &[said(3, None), said(1, Some(3))]);
        assert_eq!(w[&3], Writer::NotOnRoster);
        assert_eq!(w[&1], Writer::Confirmed(3));
        assert_eq!(w[&2], Writer::Printed(2));
        for writer in w.values() {
            assert_eq!(
                w.values()
                    .filter(|o| o.student().is_some() && o.student() == writer.student())
                    .count(),
                usize::from(writer.student().is_some())
            );
        }
    }

    #[test]
    fn two_raced_answers_never_hold_one_student_twice() {
        // Both checked against the same earlier state, both recorded: the later stands.
        let w = writers(&ROSTER, &[said(1, Some(3)), said(2, Some(3))]);
        assert_eq!(w[&2], Writer::Confirmed(3));
        assert_eq!(w[&1], Writer::Displaced);
        assert_eq!(w[&3], Writer::Displaced);
    }

    #[test]
    fn students_must_be_of_the_roster() {
        assert_eq!(
            check(&ROSTER, &[], 1, Some(4)).expect_err("no copy 4")[0].code,
            "not_in_set"
        );
        assert_eq!(
            check(&[(1, false)], &[], 1, None).expect_err("numbered")[0].code,
            "not_in_set"
        );
        check(&ROSTER, &[], 1, None).expect("not on the roster");
    }
}
