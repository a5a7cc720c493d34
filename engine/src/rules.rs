//! The rules of the schema for single values, shared by the structure stage (which reports each
//! value that breaks them) and the views of `submission` (which give only values that keep them),
//! so that the two cannot disagree.

use crate::json::Node;
use crate::limits::{MAX_CRITERION_ID_CHARS, MAX_PAGE_NUMBER};
use crate::outcome::Decision;
use crate::pages::{PageId, parse_page_id};

/// A non-empty string: the structure stage's rule for every string of the schema.
#[inline]
pub(crate) fn text(node: Node<'_>) -> Option<&str> {
    node.as_str().filter(|text| !text.is_empty())
}

/// An integer (a number with no fractional part) that is at least `minimum`.
#[inline]
pub(crate) fn integer(node: Node<'_>, minimum: f64) -> Option<f64> {
    node.as_number()
        .filter(|&n| n.fract() == 0.0 && n >= minimum)
}

/// A page number of a selection: an integer from 1 to 10,000.
#[inline]
pub(crate) fn page_number(node: Node<'_>) -> Option<u32> {
    // In range 1..=10,000, so the conversion is exact.
    integer(node, 1.0)
        .filter(|&n| n <= f64::from(MAX_PAGE_NUMBER))
        .map(|n| n as u32)
}

/// One of the allowed strings, as its value.
pub(crate) fn choice<T: Copy>(node: Node<'_>, options: &[(&str, T)]) -> Option<T> {
    let text = node.as_str()?;
    options
        .iter()
        .find(|(name, _)| *name == text)
        .map(|&(_, value)| value)
}

/// A well-formed page id.
pub(crate) fn page_id(node: Node<'_>) -> Option<PageId> {
    parse_page_id(text(node)?)
}

/// `^[A-Za-z0-9._:-]{1,64}$`
#[inline]
pub(crate) fn is_criterion_id(id: &str) -> bool {
    (1..=MAX_CRITERION_ID_CHARS).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// `^d?[MAB]1(ft|\*)?$`
pub(crate) fn is_mark_code(code: &str) -> bool {
    let rest = code.strip_prefix('d').unwrap_or(code);
    let Some(rest) = rest
        .strip_prefix(['M', 'A', 'B'])
        .and_then(|r| r.strip_prefix('1'))
    else {
        return false;
    };
    matches!(rest, "" | "ft" | "*")
}

/// How conditions combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConditionMode {
    All,
    Any,
}

/// The allowed `conditionMode` values.
pub(crate) const CONDITION_MODES: [(&str, ConditionMode); 2] =
    [("all", ConditionMode::All), ("any", ConditionMode::Any)];

/// A condition check's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckResult {
    Met,
    NotMet,
    Uncertain,
}

/// The allowed `result` values of a condition check.
pub(crate) const CHECK_RESULTS: [(&str, CheckResult); 3] = [
    ("met", CheckResult::Met),
    ("not_met", CheckResult::NotMet),
    ("uncertain", CheckResult::Uncertain),
];

/// The allowed `outcome` values of a decision.
pub(crate) const DECISIONS: [(&str, Decision); 3] = [
    ("awarded", Decision::Awarded),
    ("withheld", Decision::Withheld),
    ("uncertain", Decision::Uncertain),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_codes() {
        for good in [
            "M1", "A1", "B1", "dM1", "dA1", "A1ft", "dA1ft", "B1*", "dM1*",
        ] {
            assert!(is_mark_code(good), "{good}");
        }
        for bad in [
            "", "M2", "m1", "D1", "dd1", "M1f", "M1ft*", "A1 ", "dM", "B1**", "ftA1",
        ] {
            assert!(!is_mark_code(bad), "{bad}");
        }
    }

    #[test]
    fn criterion_ids() {
        assert!(is_criterion_id("q1.a:M1-2_b"));
        assert!(is_criterion_id(&"x".repeat(64)));
        assert!(!is_criterion_id(&"x".repeat(65)));
        assert!(!is_criterion_id("a b"));
        assert!(!is_criterion_id("é"));
    }
}
