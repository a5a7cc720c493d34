//! Errors found in a bank: each names its file and a JSON pointer into it.

use std::cmp::Ordering;
use std::fmt;

/// One problem with a bank: the file (its name within the bank folder), an RFC 6901 JSON pointer
/// into that file (empty for the whole file) and a message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BankError {
    /// The file's name within the bank folder (or the path given, for a missing bank).
    pub file: String,
    /// JSON pointer to the offending value; empty for the whole file.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl BankError {
    /// A new error.
    pub fn new(
        file: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        BankError {
            file: file.into(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for BankError {
    /// `file:/json/pointer: message`, with `/` standing for the whole file (as `check.py` prints).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{}:{}: {}", self.file, pointer, self.message)
    }
}

impl std::error::Error for BankError {}

/// Appends one reference token to a JSON pointer, escaping `~` and `/` (RFC 6901).
pub fn push_token(pointer: &str, token: impl fmt::Display) -> String {
    let token = token.to_string().replace('~', "~0").replace('/', "~1");
    format!("{pointer}/{token}")
}

/// Compares two JSON pointers token by token, array indices numerically (so `/questions/2`
/// comes before `/questions/10`), a parent before its children.
pub fn compare_pointers(a: &str, b: &str) -> Ordering {
    let mut left = a.split('/').skip(1);
    let mut right = b.split('/').skip(1);
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// Puts errors in their stable order: by file (in the order given by `file_rank`, then by name),
/// then by pointer ([`compare_pointers`]), then by message; exact repeats are dropped.
pub fn sort_errors(errors: &mut Vec<BankError>, file_rank: impl Fn(&str) -> usize) {
    errors.sort_by(|a, b| {
        file_rank(&a.file)
            .cmp(&file_rank(&b.file))
            .then_with(|| a.file.cmp(&b.file))
            .then_with(|| compare_pointers(&a.pointer, &b.pointer))
            .then_with(|| a.message.cmp(&b.message))
    });
    errors.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_order_indices_numerically() {
        assert_eq!(
            compare_pointers("/questions/2", "/questions/10"),
            Ordering::Less
        );
        assert_eq!(
            compare_pointers("/questions/2", "/questions/2/id"),
            Ordering::Less
        );
        assert_eq!(compare_pointers("", "/facets"), Ordering::Less);
        assert_eq!(compare_pointers("/facets", "/questions"), Ordering::Less);
        assert_eq!(push_token("/a", "b/c~d"), "/a/b~1c~0d");
    }

    #[test]
    fn errors_print_as_file_pointer_message() {
        assert_eq!(
            BankError::new("a.json", "", "bad").to_string(),
            "a.json:/: bad"
        );
        assert_eq!(
            BankError::new("a.json", "/x/0", "bad").to_string(),
            "a.json:/x/0: bad"
        );
    }
}
