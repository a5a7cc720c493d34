//! Errors as the checks find them, kept only while they can still be among the reported ones.
//!
//! The outcome lists errors in document order (by byte offset; errors at one offset in the order
//! the checks found them) and stops after [`MAX_ERRORS`], or earlier once their paths and messages
//! pass [`MAX_ERROR_BYTES`]. A check hands over an error's code and offset with two closures that
//! build its path and message; they run only when the error can still be reported, so a document
//! with millions of defects costs millions of comparisons, not millions of strings.

use std::collections::BinaryHeap;

use crate::error::{ErrorCode, ValidationError};
use crate::limits::{MAX_ERROR_BYTES, MAX_ERRORS};
use crate::outcome::Outcome;

/// Where an error stands in document order: its offset, then the order it was found in.
type Key = (u32, u64);

/// The errors found so far: the ones that can still be reported, and how many were found.
pub(crate) struct Errors {
    /// The first errors in document order, largest key on top.
    kept: BinaryHeap<Kept>,
    /// Bytes of the kept errors' paths and messages.
    bytes: usize,
    /// Every error found, kept or not.
    found: u64,
    /// The smallest key of an error left out: nothing after it can be reported any more.
    cutoff: Option<Key>,
}

struct Kept {
    key: Key,
    error: ValidationError,
}

impl PartialEq for Kept {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Kept {}

impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Kept {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

fn size(error: &ValidationError) -> usize {
    error.path.len() + error.message.len()
}

impl Errors {
    pub(crate) fn new() -> Self {
        Errors {
            kept: BinaryHeap::new(),
            bytes: 0,
            found: 0,
            cutoff: None,
        }
    }

    /// Records an error at byte offset `at`; `path` and `message` are called only if it can
    /// still be reported.
    #[inline]
    pub(crate) fn push(
        &mut self,
        code: ErrorCode,
        at: u32,
        path: impl FnOnce() -> String,
        message: impl FnOnce() -> String,
    ) {
        let key = (at, self.found);
        self.found += 1;
        if self.cutoff.is_some_and(|cutoff| key > cutoff) {
            return;
        }
        if self.kept.len() == MAX_ERRORS && self.kept.peek().is_some_and(|top| key > top.key) {
            self.cutoff = Some(self.cutoff.map_or(key, |cutoff| cutoff.min(key)));
            return;
        }
        self.keep(key, ValidationError::new(code, path(), at, message()));
    }

    /// Whether no error at offset `at` or after can be reported any more: a later error stands
    /// after every error left out so far. A check whose errors all stand within a value that
    /// starts at `at` can then be skipped.
    pub(crate) fn closed_from(&self, at: u32) -> bool {
        self.cutoff.is_some_and(|(offset, _)| at >= offset)
    }

    fn keep(&mut self, key: Key, error: ValidationError) {
        self.bytes += size(&error);
        self.kept.push(Kept { key, error });
        // The first error is always reported, however long.
        while self.kept.len() > MAX_ERRORS || (self.bytes > MAX_ERROR_BYTES && self.kept.len() > 1)
        {
            let Some(last) = self.kept.pop() else { break };
            self.bytes -= size(&last.error);
            self.cutoff = Some(self.cutoff.map_or(last.key, |cutoff| cutoff.min(last.key)));
        }
    }

    /// Records an error that is already built.
    pub(crate) fn push_error(&mut self, error: ValidationError) {
        let ValidationError {
            path,
            code,
            message,
            at,
        } = error;
        self.push(code, at, || path, || message);
    }

    /// Whether no error was found.
    pub(crate) fn is_empty(&self) -> bool {
        self.found == 0
    }

    /// The invalid outcome: the kept errors in document order, and whether any was left out.
    pub(crate) fn into_outcome(self) -> Outcome {
        let truncated = self.found > self.kept.len() as u64;
        let errors = self
            .kept
            .into_sorted_vec()
            .into_iter()
            .map(|kept| kept.error)
            .collect();
        Outcome::rejected(errors, truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(errors: &mut Errors, at: u32, message: &str) {
        errors.push(ErrorCode::Type, at, String::new, || message.to_owned());
    }

    fn messages(errors: Errors) -> (Vec<String>, bool) {
        match errors.into_outcome() {
            Outcome::Invalid(rejection) => (
                rejection.errors.into_iter().map(|e| e.message).collect(),
                rejection.truncated,
            ),
            Outcome::Valid(_) => panic!("invalid expected"),
        }
    }

    #[test]
    fn keeps_the_first_in_document_order_ties_in_the_order_found() {
        let mut errors = Errors::new();
        for i in (0..MAX_ERRORS as u32 + 500).rev() {
            push(&mut errors, i / 2, &format!("{i}"));
        }
        let (kept, truncated) = messages(errors);
        assert!(truncated);
        assert_eq!(kept.len(), MAX_ERRORS);
        // Offsets 0, 0, 1, 1, …: at each offset the odd number was found first.
        assert_eq!(&kept[..4], ["1", "0", "3", "2"]);
        assert_eq!(kept[MAX_ERRORS - 1], format!("{}", MAX_ERRORS - 2));
    }

    #[test]
    fn builds_only_what_can_be_reported() {
        let mut errors = Errors::new();
        let mut built = 0;
        for i in 0..100_000u32 {
            errors.push(ErrorCode::Type, i, String::new, || {
                built += 1;
                String::from("x")
            });
        }
        assert_eq!(built, MAX_ERRORS);
        let (kept, truncated) = messages(errors);
        assert_eq!((kept.len(), truncated), (MAX_ERRORS, true));
    }

    #[test]
    fn stops_at_the_byte_budget_but_keeps_the_first_error() {
        let long = "x".repeat(MAX_ERROR_BYTES / 3 + 1);
        let mut errors = Errors::new();
        for i in (0..10).rev() {
            push(&mut errors, i, &long);
        }
        let (kept, truncated) = messages(errors);
        assert_eq!((kept.len(), truncated), (2, true));
        let mut errors = Errors::new();
        push(&mut errors, 5, &"y".repeat(MAX_ERROR_BYTES + 1));
        push(&mut errors, 9, "z");
        let (kept, truncated) = messages(errors);
        assert_eq!((kept.len(), truncated), (1, true));
        let mut errors = Errors::new();
        push(&mut errors, 0, "a");
        let (kept, truncated) = messages(errors);
        assert_eq!((kept, truncated), (vec![String::from("a")], false));
    }
}
