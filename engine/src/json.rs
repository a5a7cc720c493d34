//! JSON documents as the engine reads them: a strict parser ([`parse`], RFC 8259) that keeps byte
//! positions, rejects duplicate keys and bounds nesting, and the parsed [`Document`] with its
//! read-only views ([`Node`], [`Items`], [`Members`]).
//!
//! `serde_json` is used for output; input needs what it does not give: duplicate-key rejection,
//! the byte offset of every value (errors are reported in document order), and a path for syntax
//! errors.
//!
//! The parsed document is a flat list of 12-byte slots in document order (a value, then what it
//! holds; an object member is its key's slot followed by its value), so memory grows with the
//! number of values and never with what each one could hold. Strings are read from the input
//! when they have no escapes and from one shared buffer of decoded text when they do; numbers are
//! read from their text when asked for, except small integers, which the slot holds.

mod parse;

pub(crate) use parse::parse;

/// A parsed document: the slots of its values and the text they refer to.
pub(crate) struct Document<'a> {
    /// The input up to its first byte that is not UTF-8 (all of it, for a document that parses).
    text: &'a str,
    slots: Vec<Slot>,
    /// The decoded text of every string with an escape, one after another.
    decoded: String,
    /// Where each escaped string's text starts in `decoded`.
    decoded_starts: Vec<u32>,
}

/// One value: its byte range and its kind, with a kind-specific payload in the upper bits of
/// `meta` (for an array or object, the index of the slot after everything it holds; for an
/// escaped string, its index in `decoded_starts`; for a number written as a small non-negative
/// integer, the integer plus one, so that page numbers and indices need no parsing).
#[derive(Clone, Copy)]
struct Slot {
    start: u32,
    end: u32,
    meta: u32,
}

const KIND_BITS: u32 = 3;
const NULL: u32 = 0;
const FALSE: u32 = 1;
const TRUE: u32 = 2;
const NUMBER: u32 = 3;
const TEXT: u32 = 4;
const ESCAPED: u32 = 5;
const ARRAY: u32 = 6;
const OBJECT: u32 = 7;

impl Slot {
    #[inline]
    fn kind(self) -> u32 {
        self.meta & ((1 << KIND_BITS) - 1)
    }

    #[inline]
    fn payload(self) -> u32 {
        self.meta >> KIND_BITS
    }
}

impl<'a> Document<'a> {
    /// The document's first value.
    #[inline]
    pub(crate) fn root(&self) -> Node<'_> {
        Node {
            doc: self,
            index: 0,
        }
    }

    #[inline]
    fn slot(&self, index: u32) -> Slot {
        self.slots[index as usize]
    }

    /// The index of the slot after the value at `index` and everything it holds.
    #[inline]
    fn skip(&self, index: u32) -> u32 {
        let slot = self.slot(index);
        match slot.kind() {
            ARRAY | OBJECT => slot.payload(),
            _ => index + 1,
        }
    }

    /// Whether the string at `index` is `name`: an unescaped key is compared by length first.
    #[inline]
    fn text_is(&self, index: u32, name: &str) -> bool {
        let slot = self.slot(index);
        if slot.kind() == TEXT {
            let raw = (slot.start as usize + 1)..(slot.end as usize - 1);
            return raw.len() == name.len()
                && self
                    .text
                    .as_bytes()
                    .get(raw)
                    .is_some_and(|key| key.iter().zip(name.as_bytes()).all(|(a, b)| a == b));
        }
        self.text(index) == name
    }

    /// The text of the string at `index`.
    #[inline]
    fn text(&self, index: u32) -> &str {
        let slot = self.slot(index);
        match slot.kind() {
            // Between two quotes, which are ASCII, so on character boundaries.
            TEXT => self
                .text
                .get(slot.start as usize + 1..slot.end as usize - 1)
                .unwrap_or_default(),
            ESCAPED => {
                // Each escaped string's text runs to where the next one starts.
                let i = slot.payload() as usize;
                let from = self.decoded_starts.get(i).map_or(0, |&at| at as usize);
                let to = self
                    .decoded_starts
                    .get(i + 1)
                    .map_or(self.decoded.len(), |&at| at as usize);
                self.decoded.get(from..to).unwrap_or_default()
            }
            _ => "",
        }
    }
}

/// A value of a parsed document.
#[derive(Clone, Copy)]
pub(crate) struct Node<'d> {
    doc: &'d Document<'d>,
    index: u32,
}

impl<'d> Node<'d> {
    /// Offset of the value's first byte.
    #[inline]
    pub(crate) fn start(self) -> u32 {
        self.doc.slot(self.index).start
    }

    /// Offset just past the value's last byte (for an object: just past `}`).
    #[inline]
    pub(crate) fn end(self) -> u32 {
        self.doc.slot(self.index).end
    }

    /// The number, when the value is one.
    #[inline]
    pub(crate) fn as_number(self) -> Option<f64> {
        let slot = self.doc.slot(self.index);
        if slot.kind() != NUMBER {
            return None;
        }
        if slot.payload() > 0 {
            return Some(f64::from(slot.payload() - 1));
        }
        // The literal was read as a finite f64 while parsing, so this cannot fail.
        self.doc
            .text
            .get(slot.start as usize..slot.end as usize)
            .and_then(|literal| literal.parse().ok())
    }

    /// The boolean, when the value is `true` or `false`.
    #[inline]
    pub(crate) fn as_bool(self) -> Option<bool> {
        match self.doc.slot(self.index).kind() {
            FALSE => Some(false),
            TRUE => Some(true),
            _ => None,
        }
    }

    /// The text, when the value is a string.
    #[inline]
    pub(crate) fn as_str(self) -> Option<&'d str> {
        match self.doc.slot(self.index).kind() {
            TEXT | ESCAPED => Some(self.doc.text(self.index)),
            _ => None,
        }
    }

    /// The items, when the value is an array.
    #[inline]
    pub(crate) fn as_array(self) -> Option<Items<'d>> {
        let slot = self.doc.slot(self.index);
        (slot.kind() == ARRAY).then_some(Items {
            doc: self.doc,
            next: self.index + 1,
            end: slot.payload(),
        })
    }

    /// The members, when the value is an object.
    #[inline]
    pub(crate) fn as_object(self) -> Option<Members<'d>> {
        let slot = self.doc.slot(self.index);
        (slot.kind() == OBJECT).then_some(Members {
            doc: self.doc,
            next: self.index + 1,
            end: slot.payload(),
        })
    }

    /// The JSON type's name, for messages.
    pub(crate) fn type_name(self) -> &'static str {
        match self.doc.slot(self.index).kind() {
            NULL => "null",
            FALSE | TRUE => "a boolean",
            NUMBER => "a number",
            TEXT | ESCAPED => "a string",
            ARRAY => "an array",
            _ => "an object",
        }
    }

    /// A compact handle, for lists that keep many values.
    #[inline]
    pub(crate) fn handle(self) -> u32 {
        self.index
    }

    /// The value of a handle from [`Node::handle`] on the same document.
    #[inline]
    pub(crate) fn at_handle(self, handle: u32) -> Node<'d> {
        Node {
            doc: self.doc,
            index: handle,
        }
    }
}

/// The items of an array, in order.
#[derive(Clone, Copy)]
pub(crate) struct Items<'d> {
    doc: &'d Document<'d>,
    next: u32,
    end: u32,
}

/// No document: the empty list.
static EMPTY: Document<'static> = Document {
    text: "",
    slots: Vec::new(),
    decoded: String::new(),
    decoded_starts: Vec::new(),
};

impl Default for Items<'_> {
    /// No items.
    fn default() -> Self {
        Items {
            doc: &EMPTY,
            next: 0,
            end: 0,
        }
    }
}

impl<'d> Items<'d> {
    /// How many items there are (counted: the list is walked).
    pub(crate) fn len(self) -> usize {
        self.count()
    }

    /// Whether there is no item.
    #[inline]
    pub(crate) fn is_empty(self) -> bool {
        self.next >= self.end
    }
}

impl<'d> Iterator for Items<'d> {
    type Item = Node<'d>;

    #[inline]
    fn next(&mut self) -> Option<Node<'d>> {
        if self.next >= self.end {
            return None;
        }
        let node = Node {
            doc: self.doc,
            index: self.next,
        };
        self.next = self.doc.skip(self.next);
        Some(node)
    }
}

/// The members of an object, in document order.
#[derive(Clone, Copy)]
pub(crate) struct Members<'d> {
    doc: &'d Document<'d>,
    next: u32,
    end: u32,
}

impl<'d> Members<'d> {
    /// The member named `name`, if any.
    #[inline]
    pub(crate) fn get(self, name: &str) -> Option<Node<'d>> {
        let mut key = self.next;
        while key < self.end {
            if self.doc.text_is(key, name) {
                return Some(Node {
                    doc: self.doc,
                    index: key + 1,
                });
            }
            key = self.doc.skip(key + 1);
        }
        None
    }
}

impl<'d> Iterator for Members<'d> {
    type Item = (&'d str, Node<'d>);

    #[inline]
    fn next(&mut self) -> Option<(&'d str, Node<'d>)> {
        if self.next >= self.end {
            return None;
        }
        let key = self.doc.text(self.next);
        let value = Node {
            doc: self.doc,
            index: self.next + 1,
        };
        self.next = self.doc.skip(self.next + 1);
        Some((key, value))
    }
}
