//! A strict JSON parser (RFC 8259) that keeps byte positions, borrows strings from the input where it
//! can, rejects duplicate keys and bounds nesting, so that every failure has a precise location.
//!
//! `serde_json` is used for output; input needs what it does not give: duplicate-key rejection,
//! the byte offset of every value (errors are reported in document order), and a path for syntax
//! errors.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::error::{ErrorCode, ValidationError};
use crate::limits::MAX_DEPTH;
use crate::pointer::{Seg, pointer};

/// A parsed value with the byte range it occupies.
#[derive(Debug)]
pub(crate) struct Node<'a> {
    /// Offset of the value's first byte.
    pub start: u32,
    /// Offset just past the value's last byte (for an object: just past `}`).
    pub end: u32,
    /// The value.
    pub value: Value<'a>,
}

/// A JSON value; objects keep their members in document order.
#[derive(Debug)]
pub(crate) enum Value<'a> {
    Null,
    Bool(bool),
    Number(f64),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl Value<'_> {
    /// The JSON type's name, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// A parse failure on its way out: the path is collected in reverse while the recursion unwinds.
struct Fail {
    code: ErrorCode,
    at: usize,
    message: String,
    reversed_path: Vec<OwnedSeg>,
}

enum OwnedSeg {
    Key(String),
    Index(usize),
}

impl Fail {
    fn within(mut self, segment: OwnedSeg) -> Self {
        self.reversed_path.push(segment);
        self
    }
}

/// Parses a whole document.
pub(crate) fn parse(bytes: &[u8]) -> Result<Node<'_>, ValidationError> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(invalid(
            0,
            "the document starts with a byte order mark, which JSON does not allow",
        ));
    }
    let text = std::str::from_utf8(bytes).ok();
    let mut parser = Parser {
        bytes,
        text,
        pos: 0,
    };
    parser.skip_whitespace();
    if parser.pos == bytes.len() {
        return Err(invalid(0, "the document is empty"));
    }
    let result = parser.value(1).and_then(|root| {
        parser.skip_whitespace();
        if parser.pos == bytes.len() {
            Ok(root)
        } else {
            Err(parser.fail("unexpected content after the JSON value"))
        }
    });
    result.map_err(|fail| {
        let segments: Vec<Seg<'_>> = fail
            .reversed_path
            .iter()
            .rev()
            .map(|s| match s {
                OwnedSeg::Key(k) => Seg::Key(k),
                OwnedSeg::Index(i) => Seg::Index(*i),
            })
            .collect();
        let (line, column) = line_column(&bytes[..fail.at.min(bytes.len())]);
        ValidationError::new(
            fail.code,
            pointer(&segments),
            offset(fail.at),
            format!("{} (line {line}, column {column})", fail.message),
        )
    })
}

fn invalid(at: usize, message: impl Into<String>) -> ValidationError {
    ValidationError::new(ErrorCode::InvalidJson, String::new(), offset(at), message)
}

/// Offsets fit in `u32`: documents are at most 4 MiB.
fn offset(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
}

/// 1-based line and column (in characters) of the end of `prefix`.
fn line_column(prefix: &[u8]) -> (usize, usize) {
    let line = prefix.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = prefix
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&prefix[line_start..])
        .chars()
        .count()
        + 1;
    (line, column)
}

/// Objects with more members than this look duplicates up in a hash set instead of scanning.
const LINEAR_KEY_SCAN: usize = 32;

struct Parser<'a> {
    bytes: &'a [u8],
    /// The whole document as text, when it is valid UTF-8 (checked once, up front); otherwise each
    /// string is checked on its own so the bad byte is reported where it stands.
    text: Option<&'a str>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn fail(&self, message: impl Into<String>) -> Fail {
        self.fail_at(self.pos, message)
    }

    fn fail_at(&self, at: usize, message: impl Into<String>) -> Fail {
        Fail {
            code: ErrorCode::InvalidJson,
            at,
            message: message.into(),
            reversed_path: Vec::new(),
        }
    }

    fn unexpected(&self, expected: &str) -> Fail {
        let rest = &self.bytes[self.pos..];
        let Some(&first) = rest.first() else {
            return self.fail(format!("unexpected end of input; expected {expected}"));
        };
        // Outside strings only ASCII is valid JSON; show the character if the bytes are UTF-8.
        let width = match first {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        let shown = rest.get(..width).and_then(|b| std::str::from_utf8(b).ok());
        match shown.and_then(|s| s.chars().next()) {
            Some(c) => self.fail(format!("unexpected {c:?}; expected {expected}")),
            None => self.invalid_utf8(self.pos),
        }
    }

    fn invalid_utf8(&self, at: usize) -> Fail {
        self.fail_at(at, format!("invalid UTF-8 at byte {at}"))
    }

    /// The text of `start..end` (no quote or backslash inside), checked to be UTF-8.
    fn text(&self, start: usize, end: usize) -> Result<&'a str, Fail> {
        // `start` and `end` are at ASCII bytes (quotes, backslashes, digits), so on char boundaries.
        if let Some(text) = self.text.and_then(|t| t.get(start..end)) {
            return Ok(text);
        }
        std::str::from_utf8(&self.bytes[start..end])
            .map_err(|e| self.invalid_utf8(start + e.valid_up_to()))
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node<'a>, Fail> {
        self.skip_whitespace();
        let start = self.pos;
        let value = match self.bytes.get(self.pos) {
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Value::String(self.string()?),
            Some(b't') => self.literal("true", Value::Bool(true))?,
            Some(b'f') => self.literal("false", Value::Bool(false))?,
            Some(b'n') => self.literal("null", Value::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            _ => return Err(self.unexpected("a JSON value")),
        };
        Ok(Node {
            start: offset(start),
            end: offset(self.pos),
            value,
        })
    }

    fn enter(&self, depth: usize) -> Result<(), Fail> {
        if depth > MAX_DEPTH {
            return Err(Fail {
                code: ErrorCode::NestingTooDeep,
                at: self.pos,
                message: format!(
                    "arrays and objects nest deeper than the schema allows ({MAX_DEPTH} levels)"
                ),
                reversed_path: Vec::new(),
            });
        }
        Ok(())
    }

    fn object(&mut self, depth: usize) -> Result<Value<'a>, Fail> {
        self.enter(depth)?;
        self.pos += 1;
        let mut members: Vec<(Cow<'a, str>, Node<'a>)> = Vec::with_capacity(8);
        let mut index: Option<HashSet<Cow<'a, str>>> = None;
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.unexpected("a string key"));
            }
            let key_at = self.pos;
            let key = self.string()?;
            let duplicate = match &mut index {
                Some(set) => !set.insert(key.clone()),
                None => members.iter().any(|(k, _)| *k == key),
            };
            if duplicate {
                let message = format!("duplicate key {:?} in one object", key.as_ref());
                return Err(self
                    .fail_at(key_at, message)
                    .within(OwnedSeg::Key(key.into_owned())));
            }
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err(self.unexpected("':' after an object key"));
            }
            self.pos += 1;
            let node = match self.value(depth + 1) {
                Ok(node) => node,
                Err(fail) => return Err(fail.within(OwnedSeg::Key(key.into_owned()))),
            };
            members.push((key, node));
            if index.is_none() && members.len() >= LINEAR_KEY_SCAN {
                index = Some(members.iter().map(|(k, _)| k.clone()).collect());
            }
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.unexpected("',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value<'a>, Fail> {
        self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            // No item starts here (a trailing comma, the end of input): the failure is between
            // items, so it belongs to the array itself.
            self.skip_whitespace();
            if !matches!(
                self.bytes.get(self.pos),
                Some(b'{' | b'[' | b'"' | b't' | b'f' | b'n' | b'-' | b'0'..=b'9')
            ) {
                return Err(self.unexpected("an array item"));
            }
            let node = match self.value(depth + 1) {
                Ok(node) => node,
                Err(fail) => return Err(fail.within(OwnedSeg::Index(items.len()))),
            };
            items.push(node);
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.unexpected("',' or ']'")),
            }
        }
    }

    fn literal(&mut self, word: &'static str, value: Value<'a>) -> Result<Value<'a>, Fail> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.unexpected("a JSON value"))
        }
    }

    fn digits(&mut self) -> usize {
        let from = self.pos;
        while let Some(b'0'..=b'9') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
        self.pos - from
    }

    fn number(&mut self) -> Result<Value<'a>, Fail> {
        let start = self.pos;
        if self.bytes.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        match self.bytes.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.unexpected("a digit")),
        }
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.unexpected("a digit after the decimal point"));
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.unexpected("a digit in the exponent"));
            }
        }
        let literal = self.text(start, self.pos)?;
        match literal.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(Value::Number(value)),
            _ => Err(self.fail_at(
                start,
                format!("the number {literal} is out of range for a 64-bit float"),
            )),
        }
    }

    /// Parses a string; `self.pos` is at its opening quote.
    fn string(&mut self) -> Result<Cow<'a, str>, Fail> {
        let start = self.pos + 1;
        let mut i = start;
        // Fast path: no escapes, the string is borrowed from the input.
        loop {
            match self.bytes.get(i) {
                None => return Err(self.fail_at(self.pos, "unterminated string")),
                Some(b'"') => {
                    let text = self.text(start, i)?;
                    self.pos = i + 1;
                    return Ok(Cow::Borrowed(text));
                }
                Some(b'\\') => break,
                Some(&c) if c < 0x20 => {
                    return Err(self.fail_at(i, "control character in a string; escape it"));
                }
                Some(_) => i += 1,
            }
        }
        let mut owned = String::with_capacity(i - start + 16);
        owned.push_str(self.text(start, i)?);
        let mut run = i;
        loop {
            match self.bytes.get(i) {
                None => return Err(self.fail_at(self.pos, "unterminated string")),
                Some(b'"') => {
                    owned.push_str(self.text(run, i)?);
                    self.pos = i + 1;
                    return Ok(Cow::Owned(owned));
                }
                Some(b'\\') => {
                    owned.push_str(self.text(run, i)?);
                    i = self.escape(i, &mut owned)?;
                    run = i;
                }
                Some(&c) if c < 0x20 => {
                    return Err(self.fail_at(i, "control character in a string; escape it"));
                }
                Some(_) => i += 1,
            }
        }
    }

    /// Decodes the escape at `i` (a backslash) into `out`; returns the offset after it.
    fn escape(&self, i: usize, out: &mut String) -> Result<usize, Fail> {
        let simple = match self.bytes.get(i + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let high = self.hex4(i + 2)?;
                if (0xDC00..0xE000).contains(&high) {
                    return Err(self.fail_at(i, "lone low surrogate in a \\u escape"));
                }
                if !(0xD800..0xDC00).contains(&high) {
                    out.push(char::from_u32(high).unwrap_or('\u{FFFD}'));
                    return Ok(i + 6);
                }
                if self.bytes.get(i + 6) != Some(&b'\\') || self.bytes.get(i + 7) != Some(&b'u') {
                    return Err(self.fail_at(i, "lone high surrogate in a \\u escape"));
                }
                let low = self.hex4(i + 8)?;
                if !(0xDC00..0xE000).contains(&low) {
                    return Err(self.fail_at(i, "lone high surrogate in a \\u escape"));
                }
                let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                return Ok(i + 12);
            }
            _ => return Err(self.fail_at(i, "invalid escape in a string")),
        };
        out.push(simple);
        Ok(i + 2)
    }

    fn hex4(&self, at: usize) -> Result<u32, Fail> {
        let digits = self
            .bytes
            .get(at..at + 4)
            .ok_or_else(|| self.fail_at(at, "truncated \\u escape"))?;
        let mut value = 0u32;
        for &d in digits {
            let nibble = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.fail_at(at, "invalid hex digit in a \\u escape")),
            };
            value = value * 16 + u32::from(nibble);
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &[u8]) -> ValidationError {
        match parse(text) {
            Ok(_) => panic!(
                "expected a parse error for {:?}",
                String::from_utf8_lossy(text)
            ),
            Err(e) => e,
        }
    }

    #[test]
    fn parses_all_value_kinds_with_positions() {
        let text = br#" {"a": [1, -2.5e3, true, false, null], "b\n": "x\u00e9\ud83d\ude00"} "#;
        let root = parse(text).expect("valid");
        assert_eq!(
            (root.start as usize, root.end as usize),
            (1, text.len() - 1)
        );
        let Value::Object(members) = &root.value else {
            panic!("object")
        };
        assert_eq!(members[0].0, "a");
        assert_eq!(members[1].0, "b\n");
        let Value::String(s) = &members[1].1.value else {
            panic!("string")
        };
        assert_eq!(s, "xé😀");
        let Value::Array(items) = &members[0].1.value else {
            panic!("array")
        };
        assert!(matches!(items[1].value, Value::Number(n) if n == -2500.0));
    }

    #[test]
    fn rejects_duplicate_keys_at_the_repeat() {
        let e = error(br#"{"source": {"name": "a", "name": "b"}}"#);
        assert_eq!(e.code, ErrorCode::InvalidJson);
        assert_eq!(e.path, "/source/name");
        assert!(e.message.contains("duplicate key"), "{}", e.message);
    }

    #[test]
    fn rejects_duplicates_in_large_objects() {
        let mut text = String::from("{");
        for i in 0..50 {
            text.push_str(&format!("\"k{i}\": {i},"));
        }
        text.push_str("\"k7\": 0}");
        assert_eq!(error(text.as_bytes()).path, "/k7");
    }

    #[test]
    fn locates_syntax_errors() {
        let e = error(b"{\n  \"questions\": [1, 2,, 3]}");
        assert_eq!(e.path, "/questions");
        assert!(e.message.contains("line 2, column 22"), "{}", e.message);
        assert_eq!(error(b"").message, "the document is empty");
        assert_eq!(error(b"  \n ").message, "the document is empty");
        assert!(error(b"{} x").message.contains("after the JSON value"));
        assert!(error(b"\xEF\xBB\xBF{}").message.contains("byte order mark"));
        let e = error(b"{\"a\": \"x\xff\"}");
        assert!(
            e.message.contains("invalid UTF-8 at byte 8"),
            "{}",
            e.message
        );
        assert_eq!(e.path, "/a");
        assert!(
            error(b"{\"a\": \xc3\xa9}")
                .message
                .contains("unexpected '\u{e9}'")
        );
        assert!(
            error(b"{\"a\": \xc3}")
                .message
                .contains("invalid UTF-8 at byte 6")
        );
        let e = error(b"{\"a\xff\": 1}");
        assert_eq!(
            (
                e.path.as_str(),
                e.message.contains("invalid UTF-8 at byte 3")
            ),
            ("", true)
        );
    }

    #[test]
    fn rejects_bad_numbers_strings_and_literals() {
        for bad in [
            &b"01"[..],
            b"1.",
            b"1e",
            b"-",
            b"+1",
            b".5",
            b"1e400",
            b"-1e999",
            b"tru",
            b"nul",
            b"\"a",
            b"\"\\x\"",
            b"\"\\ud800\"",
            b"\"\\udc00\"",
            b"\"\\ud800\\u0041\"",
            b"\"\t\"",
            b"\"\\u12\"",
            b"[1 2]",
            b"{\"a\" 1}",
            b"{1: 2}",
            b"{\"a\": 1,}",
            b"[1,]",
        ] {
            assert_eq!(
                error(bad).code,
                ErrorCode::InvalidJson,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(error(b"{\"x\": 1e400}").message.contains("out of range"));
        assert_eq!(error(b"{\"x\": 1e400}").path, "/x");
    }

    #[test]
    fn bounds_nesting() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(ok.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let e = error(deep.as_bytes());
        assert_eq!(e.code, ErrorCode::NestingTooDeep);
        assert_eq!(e.path, "/0/0/0/0/0/0/0/0/0/0");
        let unclosed = "[".repeat(MAX_DEPTH);
        assert_eq!(error(unclosed.as_bytes()).path, "/0/0/0/0/0/0/0/0/0");
        let very_deep = "[".repeat(1_000_000);
        assert_eq!(error(very_deep.as_bytes()).code, ErrorCode::NestingTooDeep);
    }

    fn to_serde(node: &Node<'_>) -> serde_json::Value {
        match &node.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::json!(n),
            Value::String(s) => serde_json::Value::String(s.to_string()),
            Value::Array(items) => items.iter().map(to_serde).collect(),
            Value::Object(members) => members
                .iter()
                .map(|(k, v)| (k.to_string(), to_serde(v)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }

    /// Numbers compared as f64, as both parsers read them here.
    fn normalise(value: serde_json::Value) -> serde_json::Value {
        match value {
            serde_json::Value::Number(n) => serde_json::json!(n.as_f64()),
            serde_json::Value::Array(items) => items.into_iter().map(normalise).collect(),
            serde_json::Value::Object(map) => map
                .into_iter()
                .map(|(k, v)| (k, normalise(v)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
            other => other,
        }
    }

    fn depth(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            serde_json::Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    fn json_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("false".to_owned()),
            "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,3})?",
            "\"([a-z\\\\\" ]|\\\\[nrtbf/\"]|\\\\u00[0-7][0-9a-f]|é|😀){0,8}\"",
        ];
        leaf.prop_recursive(12, 64, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                proptest::collection::vec(("[a-c]{1,2}", inner), 0..4).prop_map(|v| {
                    let members: Vec<String> = v
                        .into_iter()
                        .map(|(k, v)| format!("\"{k}\" : {v}"))
                        .collect();
                    format!("{{ {} }}", members.join(",\n"))
                }),
            ]
        })
    }

    proptest::proptest! {
        /// Agrees with serde_json wherever their rules coincide: same value when both accept;
        /// otherwise the difference is one of this parser's documented rules.
        #[test]
        fn agrees_with_serde_json(text in json_text(), cut in 0usize..200) {
            for candidate in [text.clone(), text.chars().take(cut).collect::<String>()] {
                let ours = parse(candidate.as_bytes());
                let theirs = serde_json::from_str::<serde_json::Value>(&candidate);
                match (ours, theirs) {
                    (Ok(node), Ok(value)) => proptest::prop_assert_eq!(normalise(to_serde(&node)), normalise(value)),
                    (Err(e), Ok(value)) => proptest::prop_assert!(
                        (e.code == ErrorCode::NestingTooDeep && depth(&value) > MAX_DEPTH)
                            || e.message.contains("duplicate key")
                            || e.message.contains("out of range"),
                        "rejected what serde_json accepts: {candidate:?}: {e}"
                    ),
                    (Ok(_), Err(e)) => proptest::prop_assert!(false, "accepted what serde_json rejects: {candidate:?}: {e}"),
                    (Err(_), Err(_)) => {}
                }
            }
        }
    }
}
