//! The rules the store applies inside its transactions, on what it read there: what a scanned
//! file may add to a set's stack ([`stack_file_fits`]), and which scripts a start makes and
//! which of the set's current scripts it supersedes ([`start`]). The store reads and writes;
//! these decide, so two requests at once are decided one after the other on what each finds.

use crate::store::marking::{MAX_FILES_PER_SESSION, MAX_SESSION_BYTES};

/// Why a stack takes no more files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackFull {
    /// The stack holds as many files as a session may.
    TooManyFiles,
    /// The file would take the stack over a session's total size.
    TooLarge,
}

/// Whether a stack of `files` files and `total_bytes` bytes takes one more file of `size`
/// bytes: a stack is limited as any session's files are.
pub fn stack_file_fits(files: i64, total_bytes: i64, size: i64) -> Result<(), StackFull> {
    if files >= MAX_FILES_PER_SESSION {
        return Err(StackFull::TooManyFiles);
    }
    if total_bytes.saturating_add(size) > MAX_SESSION_BYTES {
        return Err(StackFull::TooLarge);
    }
    Ok(())
}

/// A script as a start sees it: its copy and the stack pages it is made from (JSON, compared
/// as written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptKey<'a> {
    /// The copy.
    pub copy: i64,
    /// The stack pages it is made from, JSON.
    pub pages_json: &'a str,
}

/// A script a start is asked to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked<'a> {
    /// The script.
    pub script: ScriptKey<'a>,
    /// Made again even where the copy's current script has the same pages (its marker was held
    /// back from it).
    pub again: bool,
}

/// What a start does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// The scripts it makes: indexes into those asked for, in their order.
    pub make: Vec<usize>,
    /// The current scripts it supersedes: indexes into the current scripts, in their order.
    pub supersede: Vec<usize>,
    /// The scheme pages it queues for indexing (each script made holds the scheme).
    pub pages_needed: i64,
}

/// Decides a start on the set's `current` scripts: a script asked for is made unless the copy's
/// current script has the same pages (and it is not asked for `again`); a current script is
/// superseded when its copy is `gone` (said absent, or no longer scanned) or is made again.
/// Each script made queues the `scheme_pages` of its mark scheme.
pub fn start(
    current: &[ScriptKey<'_>],
    asked: &[Asked<'_>],
    gone: &[i64],
    scheme_pages: i64,
) -> Start {
    let make: Vec<usize> = asked
        .iter()
        .enumerate()
        .filter(|(_, a)| a.again || !current.contains(&a.script))
        .map(|(i, _)| i)
        .collect();
    let supersede = current
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            gone.contains(&c.copy) || make.iter().any(|&i| asked[i].script.copy == c.copy)
        })
        .map(|(i, _)| i)
        .collect();
    let pages_needed = scheme_pages.saturating_mul(i64::try_from(make.len()).unwrap_or(i64::MAX));
    Start {
        make,
        supersede,
        pages_needed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(copy: i64, pages_json: &str) -> ScriptKey<'_> {
        ScriptKey { copy, pages_json }
    }

    #[test]
    fn a_stack_is_limited_as_a_session_is() {
        assert_eq!(stack_file_fits(0, 0, 1), Ok(()));
        assert_eq!(
            stack_file_fits(MAX_FILES_PER_SESSION - 1, MAX_SESSION_BYTES - 10, 10),
            Ok(())
        );
        assert_eq!(
            stack_file_fits(MAX_FILES_PER_SESSION, 0, 1),
            Err(StackFull::TooManyFiles)
        );
        assert_eq!(
            stack_file_fits(1, MAX_SESSION_BYTES - 10, 11),
            Err(StackFull::TooLarge)
        );
        assert_eq!(
            stack_file_fits(1, i64::MAX, i64::MAX),
            Err(StackFull::TooLarge)
        );
    }

    #[test]
    fn a_script_with_the_same_pages_is_made_once() {
        let current = [key(1, "[a]"), key(2, "[b]"), key(3, "[c]")];
        let asked = [
            Asked {
                script: key(1, "[a]"),
                again: false,
            },
            Asked {
                script: key(2, "[b2]"),
                again: false,
            },
            Asked {
                script: key(3, "[c]"),
                again: true,
            },
            Asked {
                script: key(4, "[d]"),
                again: false,
            },
        ];
        let start = start(&current, &asked, &[], 3);
        assert_eq!(start.make, vec![1, 2, 3]);
        assert_eq!(start.supersede, vec![1, 2]);
        assert_eq!(start.pages_needed, 9);
    }

    #[test]
    fn a_gone_copy_is_superseded_without_a_new_script() {
        let current = [key(1, "[a]"), key(2, "[b]")];
        let start = start(&current, &[], &[2], 5);
        assert_eq!(start.make, Vec::<usize>::new());
        assert_eq!(start.supersede, vec![1]);
        assert_eq!(start.pages_needed, 0);
    }

    /// The set's current scripts after `start`: those not superseded, then those made.
    fn after<'a>(
        current: &[ScriptKey<'a>],
        asked: &[Asked<'a>],
        start: &Start,
    ) -> Vec<ScriptKey<'a>> {
        let kept = current
            .iter()
            .enumerate()
            .filter(|(i, _)| !start.supersede.contains(i))
            .map(|(_, c)| *c);
        kept.chain(start.make.iter().map(|&i| asked[i].script))
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn a_start_leaves_one_script_per_copy_and_starting_again_makes_nothing(
            current in proptest::collection::btree_map(0i64..6, 0usize..3, 0..6),
            asked in proptest::collection::btree_map(0i64..6, (0usize..3, proptest::bool::ANY), 0..6),
            gone in proptest::collection::btree_set(0i64..6, 0..3),
            scheme_pages in 0i64..5,
        ) {
            let pages = ["[1]", "[2]", "[3]"];
            let current: Vec<ScriptKey<'_>> = current.iter().map(|(&c, &p)| key(c, pages[p])).collect();
            let asked: Vec<Asked<'_>> = asked
                .iter()
                .filter(|(c, _)| !gone.contains(c))
                .map(|(&c, &(p, again))| Asked { script: key(c, pages[p]), again })
                .collect();
            let gone: Vec<i64> = gone.into_iter().collect();
            let first = start(&current, &asked, &gone, scheme_pages);
            let now = after(&current, &asked, &first);
            // Every script asked for stands, each copy has one script, and a gone copy has none.
            for a in &asked {
                proptest::prop_assert!(now.contains(&a.script));
            }
            for c in &now {
                proptest::prop_assert_eq!(now.iter().filter(|n| n.copy == c.copy).count(), 1);
                proptest::prop_assert!(!gone.contains(&c.copy));
            }
            let made = i64::try_from(first.make.len()).unwrap_or(i64::MAX);
            proptest::prop_assert_eq!(first.pages_needed, scheme_pages * made);
            // The same start again, asked for nothing again, makes and supersedes nothing.
            let same: Vec<Asked<'_>> =
                asked.iter().map(|a| Asked { again: false, ..*a }).collect();
            let second = start(&now, &same, &gone, scheme_pages);
            proptest::prop_assert!(second.make.is_empty());
            proptest::prop_assert!(second.supersede.is_empty());
        }
    }
}
