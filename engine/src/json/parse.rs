//! The parser: one pass over the bytes, filling the document's slots in document order.
//!
//! Arrays and objects are read with an explicit stack of the containers the parser is inside
//! (one [`Open`] entry per level, on the heap), not by recursion: the call stack stays the same
//! however deep the input nests, and [`MAX_DEPTH`] is a documented limit of the format, not a
//! guard of the stack. A failure's path is read off that stack where it happens.

use std::hash::BuildHasher;

use super::{ARRAY, Document, ESCAPED, FALSE, KIND_BITS, NULL, NUMBER, OBJECT, Slot, TEXT, TRUE};
use crate::error::{ErrorCode, ValidationError};
use crate::hash::{HashMap, Keyed};
use crate::limits::MAX_DEPTH;
use crate::pointer::{Seg, pointer};

/// A parse failure on its way out, with the path of the value it belongs to.
struct Fail {
    code: ErrorCode,
    at: usize,
    message: String,
    path: Vec<OwnedSeg>,
}

enum OwnedSeg {
    Key(String),
    Index(usize),
}

/// A failure is boxed so that the success path passes a pointer-sized result.
type Failed = Box<Fail>;

/// An array or object the parser is inside.
struct Open {
    /// The container's slot, completed when it closes.
    slot: usize,
    /// An object (else an array).
    object: bool,
    /// The members or items read so far: in an array, the index of the item being read.
    count: usize,
    /// In an object, the slot of the key of the member being read.
    key: usize,
    /// In an object too large to scan, the hash of each key → its slot.
    by_hash: Option<HashMap<u64, u32>>,
}

/// Where a failure belongs: inside the value being read in the innermost container, or between
/// that container's members or items (then it is the container's own failure).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Within {
    Value,
    Container,
}

/// Parses a whole document.
pub(crate) fn parse(bytes: &[u8]) -> Result<Document<'_>, ValidationError> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(invalid(
            0,
            "the document starts with a byte order mark, which JSON does not allow",
        ));
    }
    // The longest UTF-8 prefix: parsing stops at the first byte that is not UTF-8 (inside a
    // string it is reported; outside, only ASCII is accepted), so every value lies within it.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    };
    let mut parser = Parser {
        bytes,
        pos: 0,
        doc: Document {
            text,
            slots: Vec::with_capacity(slot_estimate(bytes)),
            decoded: String::new(),
            decoded_starts: Vec::new(),
        },
        hasher: None,
        grown: false,
    };
    parser.skip_whitespace();
    if parser.pos == bytes.len() {
        return Err(invalid(0, "the document is empty"));
    }
    let result = parser.value().and_then(|()| {
        parser.skip_whitespace();
        if parser.pos == bytes.len() {
            Ok(())
        } else {
            Err(parser.fail("unexpected content after the JSON value"))
        }
    });
    match result {
        Ok(()) => Ok(parser.doc),
        Err(fail) => {
            let segments: Vec<Seg<'_>> = fail
                .path
                .iter()
                .map(|s| match s {
                    OwnedSeg::Key(k) => Seg::Key(k),
                    OwnedSeg::Index(i) => Seg::Index(*i),
                })
                .collect();
            let (line, column) = line_column(&bytes[..fail.at.min(bytes.len())]);
            Err(ValidationError::new(
                fail.code,
                pointer(&segments),
                offset(fail.at),
                format!("{} (line {line}, column {column})", fail.message),
            ))
        }
    }
}

/// The slots allocated up front: about one per eight bytes, more than documents of the schema need
/// (nearly all of their bytes are in strings).
fn slot_estimate(bytes: &[u8]) -> usize {
    bytes.len() / 8 + 8
}

/// An upper bound on the slots a document needs, for documents of tiny values that outgrow the
/// estimate: the list then grows once, to this. One slot per value and per key, and every one but
/// the first follows `,` or `:`, or opens a container that is not empty. Counting those bytes
/// everywhere (strings included) and taking away empty containers written as `{}` or `[]` can only
/// overcount (an empty pair across two blocks is not taken away); so can the length, since each
/// slot past the first takes at least two bytes. Counted in blocks, which the compiler vectorises.
fn slot_bound(bytes: &[u8]) -> usize {
    let mut count = 1usize;
    for block in bytes.chunks(4096) {
        let mut openers = 0u32;
        for &b in block {
            openers += u32::from((b == b',') | (b == b':') | (b == b'[') | (b == b'{'));
        }
        let mut empty = 0u32;
        for pair in block.windows(2) {
            empty += u32::from(
                ((pair[0] == b'{') & (pair[1] == b'}')) | ((pair[0] == b'[') & (pair[1] == b']')),
            );
        }
        count += (openers - empty) as usize;
    }
    count.min(bytes.len() / 2 + 1)
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

/// Objects with more members than this look duplicates up by hash instead of scanning.
const LINEAR_KEY_SCAN: usize = 32;

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    doc: Document<'a>,
    /// The keyed hasher of the duplicate-key lookups of large objects, made when first needed.
    hasher: Option<Keyed>,
    /// Whether the slot list has grown past its first estimate.
    grown: bool,
}

impl<'a> Parser<'a> {
    fn fail(&self, message: impl Into<String>) -> Failed {
        self.fail_at(self.pos, message)
    }

    fn fail_at(&self, at: usize, message: impl Into<String>) -> Failed {
        Box::new(Fail {
            code: ErrorCode::InvalidJson,
            at,
            message: message.into(),
            path: Vec::new(),
        })
    }

    fn unexpected(&self, expected: &str) -> Failed {
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

    fn invalid_utf8(&self, at: usize) -> Failed {
        self.fail_at(at, format!("invalid UTF-8 at byte {at}"))
    }

    /// The text of `start..end` (no quote or backslash inside), checked to be UTF-8.
    fn text(&self, start: usize, end: usize) -> Result<&'a str, Failed> {
        // `start` and `end` are at ASCII bytes (quotes, backslashes, digits), so on char boundaries.
        if let Some(text) = self.doc.text.get(start..end) {
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

    fn push(&mut self, start: usize, kind: u32, payload: u32) {
        let slots = &mut self.doc.slots;
        if slots.len() == slots.capacity() && !self.grown {
            // Grow once to what the whole document can need, rather than doubling step by step.
            self.grown = true;
            let bound = slot_bound(self.bytes);
            slots.reserve_exact(bound.saturating_sub(slots.len()).max(1));
        }
        self.doc.slots.push(Slot {
            start: offset(start),
            end: offset(self.pos),
            meta: kind | (payload << KIND_BITS),
        });
    }

    /// Reads one value (the whole document's), with everything it holds.
    fn value(&mut self) -> Result<(), Failed> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            // A value starts here: the document's, a member's or an item.
            self.skip_whitespace();
            let object = match self.bytes.get(self.pos) {
                Some(b'{') => true,
                Some(b'[') => false,
                _ => {
                    if let Err(fail) = self.scalar() {
                        return Err(self.locate(fail, &open, Within::Value));
                    }
                    if self.end_values(&mut open)? {
                        return Ok(());
                    }
                    continue;
                }
            };
            if open.len() >= MAX_DEPTH {
                let fail = Box::new(Fail {
                    code: ErrorCode::NestingTooDeep,
                    at: self.pos,
                    message: format!(
                        "arrays and objects nest deeper than {MAX_DEPTH} levels, the most a document may"
                    ),
                    path: Vec::new(),
                });
                return Err(self.locate(fail, &open, Within::Value));
            }
            let slot = self.open();
            open.push(Open {
                slot,
                object,
                count: 0,
                key: 0,
                by_hash: None,
            });
            self.skip_whitespace();
            let empty = self.bytes.get(self.pos) == Some(if object { &b'}' } else { &b']' });
            if empty {
                self.close(slot, if object { OBJECT } else { ARRAY });
                open.pop();
                if self.end_values(&mut open)? {
                    return Ok(());
                }
            } else {
                self.begin_entry(&mut open)?;
            }
        }
    }

    /// After a value: reads the commas and closing brackets that follow it, closing each container
    /// that ends, up to where the next value starts. Returns whether the document's value ended.
    fn end_values(&mut self, open: &mut Vec<Open>) -> Result<bool, Failed> {
        loop {
            let Some(top) = open.last_mut() else {
                return Ok(true);
            };
            top.count += 1;
            let (object, slot) = (top.object, top.slot);
            self.skip_whitespace();
            match (self.bytes.get(self.pos), object) {
                (Some(b','), _) => {
                    self.pos += 1;
                    self.begin_entry(open)?;
                    return Ok(false);
                }
                (Some(b'}'), true) => {
                    self.close(slot, OBJECT);
                    open.pop();
                }
                (Some(b']'), false) => {
                    self.close(slot, ARRAY);
                    open.pop();
                }
                _ => {
                    let fail = self.unexpected(if object { "',' or '}'" } else { "',' or ']'" });
                    return Err(self.locate(fail, open, Within::Container));
                }
            }
        }
    }

    /// Starts the next member or item of the innermost container: in an object, reads its key and
    /// the colon after it; in an array, checks that an item starts here.
    fn begin_entry(&mut self, open: &mut [Open]) -> Result<(), Failed> {
        self.skip_whitespace();
        let Some(top) = open.last_mut() else {
            return Ok(());
        };
        if !top.object {
            // No item starts here (a trailing comma, the end of input): the failure is between
            // items, so it belongs to the array itself.
            if matches!(
                self.bytes.get(self.pos),
                Some(b'{' | b'[' | b'"' | b't' | b'f' | b'n' | b'-' | b'0'..=b'9')
            ) {
                return Ok(());
            }
            let fail = self.unexpected("an array item");
            return Err(self.locate(fail, open, Within::Container));
        }
        if self.bytes.get(self.pos) != Some(&b'"') {
            let fail = self.unexpected("a string key");
            return Err(self.locate(fail, open, Within::Container));
        }
        let key_at = self.pos;
        let key = self.doc.slots.len();
        if let Err(fail) = self.string() {
            return Err(self.locate(fail, open, Within::Container));
        }
        top.key = key;
        if self.is_duplicate(top.slot, key, top.count, &mut top.by_hash) {
            let text = self.doc.text(offset(key));
            let fail = self.fail_at(key_at, format!("duplicate key {text:?} in one object"));
            return Err(self.locate(fail, open, Within::Value));
        }
        self.skip_whitespace();
        if self.bytes.get(self.pos) != Some(&b':') {
            let fail = self.unexpected("':' after an object key");
            return Err(self.locate(fail, open, Within::Container));
        }
        self.pos += 1;
        Ok(())
    }

    /// Gives `fail` its path: the member or item being read in each container the parser is
    /// inside, the innermost one's only when the failure is within its value.
    fn locate(&self, mut fail: Failed, open: &[Open], within: Within) -> Failed {
        let levels = match within {
            Within::Value => open.len(),
            Within::Container => open.len().saturating_sub(1),
        };
        fail.path = open[..levels]
            .iter()
            .map(|level| {
                if level.object {
                    self.key_segment(level.key)
                } else {
                    OwnedSeg::Index(level.count)
                }
            })
            .collect();
        fail
    }

    /// Reads a string, number, `true`, `false` or `null` and records its slot.
    fn scalar(&mut self) -> Result<(), Failed> {
        let start = self.pos;
        match self.bytes.get(self.pos) {
            Some(b'"') => self.string(),
            Some(b't') => self.literal("true", TRUE),
            Some(b'f') => self.literal("false", FALSE),
            Some(b'n') => self.literal("null", NULL),
            Some(b'-' | b'0'..=b'9') => {
                let small = self.number()?;
                self.push(start, NUMBER, small);
                Ok(())
            }
            _ => Err(self.unexpected("a JSON value")),
        }
    }

    /// Opens a container at `self.pos`: its slot is completed by [`Parser::close`].
    fn open(&mut self) -> usize {
        let index = self.doc.slots.len();
        self.push(self.pos, NULL, 0);
        self.pos += 1;
        index
    }

    fn close(&mut self, index: usize, kind: u32) {
        self.pos += 1;
        let next = offset(self.doc.slots.len());
        let slot = &mut self.doc.slots[index];
        slot.end = offset(self.pos);
        slot.meta = kind | (next << KIND_BITS);
    }

    /// The text of the key at slot `index`, owned, for a failure's path.
    fn key_segment(&self, index: usize) -> OwnedSeg {
        OwnedSeg::Key(self.doc.text(offset(index)).to_owned())
    }

    /// Whether the key at slot `key` repeats one of the `members` keys before it in the object
    /// whose slot is `object`.
    fn is_duplicate(
        &mut self,
        object: usize,
        key: usize,
        members: usize,
        by_hash: &mut Option<HashMap<u64, u32>>,
    ) -> bool {
        let doc = &self.doc;
        let text = doc.text(offset(key));
        let earlier = || {
            let mut i = offset(object) + 1;
            std::iter::from_fn(move || {
                (i < offset(key)).then(|| {
                    let at = i;
                    i = doc.skip(i + 1);
                    at
                })
            })
        };
        if members < LINEAR_KEY_SCAN {
            return earlier().any(|k| doc.text(k) == text);
        }
        let hasher = self.hasher.get_or_insert_with(Keyed::default);
        let set = by_hash.get_or_insert_with(|| {
            let mut set = HashMap::with_capacity_and_hasher(2 * LINEAR_KEY_SCAN, Keyed::default());
            for k in earlier() {
                set.entry(hasher.hash_one(doc.text(k))).or_insert(k);
            }
            set
        });
        let hash = hasher.hash_one(text);
        match set.get(&hash) {
            None => {
                set.insert(hash, offset(key));
                false
            }
            Some(&k) if doc.text(k) == text => true,
            // Two texts with one hash: rare enough to settle by scanning.
            Some(_) => earlier().any(|k| doc.text(k) == text),
        }
    }

    fn literal(&mut self, word: &'static str, kind: u32) -> Result<(), Failed> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            let start = self.pos;
            self.pos += word.len();
            self.push(start, kind, 0);
            Ok(())
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

    /// Reads a number and checks that it is a finite `f64`; the caller records its slot. Returns
    /// the slot's payload: one more than the value when the number is written as an integer of at
    /// most eight digits with no sign, fraction or exponent, else 0.
    fn number(&mut self) -> Result<u32, Failed> {
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
        if literal.len() <= 8 && literal.bytes().all(|b| b.is_ascii_digit()) {
            let value = literal
                .bytes()
                .fold(0u32, |n, digit| n * 10 + u32::from(digit - b'0'));
            return Ok(value + 1);
        }
        match literal.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(0),
            _ => Err(self.fail_at(
                start,
                format!("the number {literal} is out of range for a 64-bit float"),
            )),
        }
    }

    /// Parses a string and records its slot; `self.pos` is at its opening quote.
    fn string(&mut self) -> Result<(), Failed> {
        let quote = self.pos;
        let start = self.pos + 1;
        let mut i = start;
        // Fast path: no escapes, the string is read from the input when asked for.
        loop {
            match self.bytes.get(i) {
                None => return Err(self.fail_at(self.pos, "unterminated string")),
                Some(b'"') => {
                    self.text(start, i)?;
                    self.pos = i + 1;
                    self.push(quote, TEXT, 0);
                    return Ok(());
                }
                Some(b'\\') => break,
                Some(&c) if c < 0x20 => {
                    return Err(self.fail_at(i, "control character in a string; escape it"));
                }
                Some(_) => i += 1,
            }
        }
        let escape_index = offset(self.doc.decoded_starts.len());
        self.doc.decoded_starts.push(offset(self.doc.decoded.len()));
        let mut owned = std::mem::take(&mut self.doc.decoded);
        let result = self.decode(start, i, &mut owned);
        self.doc.decoded = owned;
        let end = result?;
        self.pos = end;
        self.push(quote, ESCAPED, escape_index);
        Ok(())
    }

    /// Appends the text of the string whose content starts at `start` (its first escape is at
    /// `i`) to `out`; returns the offset after the closing quote.
    fn decode(&self, start: usize, mut i: usize, out: &mut String) -> Result<usize, Failed> {
        out.push_str(self.text(start, i)?);
        let mut run = i;
        loop {
            match self.bytes.get(i) {
                None => return Err(self.fail_at(start - 1, "unterminated string")),
                Some(b'"') => {
                    out.push_str(self.text(run, i)?);
                    return Ok(i + 1);
                }
                Some(b'\\') => {
                    out.push_str(self.text(run, i)?);
                    i = self.escape(i, out)?;
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
    fn escape(&self, i: usize, out: &mut String) -> Result<usize, Failed> {
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

    fn hex4(&self, at: usize) -> Result<u32, Failed> {
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
    use crate::json::Node;

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
        let doc = parse(text).expect("valid");
        let root = doc.root();
        assert_eq!(
            (root.start() as usize, root.end() as usize),
            (1, text.len() - 1)
        );
        let members: Vec<(&str, Node<'_>)> = root.as_object().expect("object").collect();
        assert_eq!(members[0].0, "a");
        assert_eq!(members[1].0, "b\n");
        assert_eq!(members[1].1.as_str(), Some("xé😀"));
        let items: Vec<Node<'_>> = members[0].1.as_array().expect("array").collect();
        assert_eq!(items.len(), 5);
        assert_eq!(items[1].as_number(), Some(-2500.0));
        assert_eq!(items[2].as_bool(), Some(true));
        assert_eq!(items[4].type_name(), "null");
        assert_eq!((items[1].start(), items[1].end()), (11, 17));
        assert_eq!(root.as_object().map(|m| m.get("b\n").is_some()), Some(true));
    }

    #[test]
    fn rejects_duplicate_keys_at_the_repeat() {
        let e = error(br#"{"source": {"name": "a", "name": "b"}}"#);
        assert_eq!(e.code, ErrorCode::InvalidJson);
        assert_eq!(e.path, "/source/name");
        assert!(e.message.contains("duplicate key"), "{}", e.message);
        let e = error(br#"{"a": 1, "\u0061": 2}"#);
        assert_eq!(e.path, "/a");
    }

    #[test]
    fn rejects_duplicates_in_large_objects() {
        let mut text = String::from("{");
        for i in 0..50 {
            text.push_str(&format!("\"k{i}\": {i},"));
        }
        text.push_str("\"k7\": 0}");
        assert_eq!(error(text.as_bytes()).path, "/k7");
        let mut text = String::from("{");
        for i in 0..50 {
            text.push_str(&format!("\"k{i}\": {{\"a\": 1, \"b\": [{i}]}},"));
        }
        text.push_str("\"\\u006b49\": 0}");
        assert_eq!(error(text.as_bytes()).path, "/k49");
        let distinct: String = (0..100).map(|i| format!("\"k{i}\": {i},")).collect();
        assert!(parse(format!("{{{distinct}\"z\": 0}}").as_bytes()).is_ok());
    }

    #[test]
    fn bounds_the_slot_list_by_the_values() {
        for text in [
            &b"{}"[..],
            b"[]",
            b"[[], {}, [1, [2]], {\"a\": {}}]",
            b"[[],{},[1,[2]],{\"a\":{}}]",
            b"{\"a,b\": \"[{:\\\"{}\", \"c\": [ ] }",
            b"  \"x\"  ",
            b"[1,2,3]",
        ] {
            let doc = parse(text).expect("valid");
            let bound = slot_bound(text);
            assert!(
                doc.slots.len() <= bound,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(slot_bound(b"[[],{},[1,[2]],{\"a\":{}}]"), 10);
        assert_eq!(slot_bound(&[b','; 100]), 51);
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
        let ok = format!("{}{}", r#"{"a":"#.repeat(MAX_DEPTH), "}".repeat(MAX_DEPTH));
        let ok = ok.replacen(r#"{"a":}"#, "{}", 1);
        assert!(parse(ok.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let e = error(deep.as_bytes());
        assert_eq!(e.code, ErrorCode::NestingTooDeep);
        assert_eq!(e.path, "/0".repeat(MAX_DEPTH));
        let unclosed = "[".repeat(MAX_DEPTH);
        assert_eq!(error(unclosed.as_bytes()).path, "/0".repeat(MAX_DEPTH - 1));
        let very_deep = "[".repeat(1_000_000);
        assert_eq!(error(very_deep.as_bytes()).code, ErrorCode::NestingTooDeep);
        let objects = format!(
            "{}1{}",
            r#"{"k":"#.repeat(MAX_DEPTH + 1),
            "}".repeat(MAX_DEPTH + 1)
        );
        let e = error(objects.as_bytes());
        assert_eq!(e.code, ErrorCode::NestingTooDeep);
        assert_eq!(e.path, "/k".repeat(MAX_DEPTH));
    }

    /// The limit leaves room well beyond the schema's own depth, so that values nested a little
    /// too deep reach the structure checks.
    #[test]
    fn nesting_limit_is_well_above_the_schema_depth() {
        use crate::limits::SCHEMA_DEPTH;
        const { assert!(MAX_DEPTH >= 128 && MAX_DEPTH > 4 * SCHEMA_DEPTH) };
        for levels in [
            SCHEMA_DEPTH + 1,
            SCHEMA_DEPTH + 5,
            2 * SCHEMA_DEPTH,
            MAX_DEPTH,
        ] {
            let text = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
            assert!(parse(text.as_bytes()).is_ok(), "{levels} levels");
        }
    }

    /// Nesting costs no call stack: the deepest documents parse, and fail, on a thread whose stack
    /// is far smaller than any platform's default.
    #[test]
    fn nesting_does_not_grow_the_call_stack() {
        let run = || {
            let arrays = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
            let mixed: String = (0..MAX_DEPTH)
                .map(|i| if i % 2 == 0 { r#"{"a":["# } else { "" })
                .collect::<String>();
            let levels = MAX_DEPTH / 2 * 2;
            let mixed = format!("{mixed}1{}", "]}".repeat(levels / 2));
            let too_deep = "[".repeat(100_000);
            (
                parse(arrays.as_bytes()).is_ok(),
                parse(mixed.as_bytes()).is_ok(),
                parse(too_deep.as_bytes()).err().map(|e| e.code),
            )
        };
        let outcome = std::thread::Builder::new()
            .stack_size(48 * 1024)
            .spawn(run)
            .expect("a thread")
            .join()
            .expect("parsing within a 48 KiB stack");
        assert_eq!(outcome, (true, true, Some(ErrorCode::NestingTooDeep)));
    }

    fn to_serde(node: Node<'_>) -> serde_json::Value {
        if let Some(b) = node.as_bool() {
            serde_json::Value::Bool(b)
        } else if let Some(n) = node.as_number() {
            serde_json::json!(n)
        } else if let Some(s) = node.as_str() {
            serde_json::Value::String(s.to_string())
        } else if let Some(items) = node.as_array() {
            items.map(to_serde).collect()
        } else if let Some(members) = node.as_object() {
            members
                .map(|(k, v)| (k.to_string(), to_serde(v)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        } else {
            serde_json::Value::Null
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
                    (Ok(doc), Ok(value)) => {
                        proptest::prop_assert!(doc.slots.len() <= slot_bound(candidate.as_bytes()));
                        proptest::prop_assert_eq!(normalise(to_serde(doc.root())), normalise(value));
                    }
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
