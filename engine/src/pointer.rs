//! RFC 6901 JSON Pointers, built as a linked list on the stack and rendered only when an error needs one.

use std::fmt::Write;

/// A location in the document: the root, a member of an object, or an item of an array.
#[derive(Clone, Copy)]
pub(crate) enum Path<'p> {
    /// The whole document.
    Root,
    /// A member `key` of the object at the parent path.
    Key(&'p Path<'p>, &'p str),
    /// Item `index` of the array at the parent path.
    Index(&'p Path<'p>, usize),
}

impl<'p> Path<'p> {
    /// The path of member `key` below this one.
    pub(crate) fn key(&'p self, key: &'p str) -> Path<'p> {
        Path::Key(self, key)
    }

    /// The path of item `index` below this one.
    pub(crate) fn index(&'p self, index: usize) -> Path<'p> {
        Path::Index(self, index)
    }

    /// The RFC 6901 form, such as `/questions/0/label`.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Key(parent, key) => {
                parent.render_into(out);
                out.push('/');
                push_escaped(out, key);
            }
            Path::Index(parent, index) => {
                parent.render_into(out);
                let _ = write!(out, "/{index}");
            }
        }
    }
}

/// One reference token of a JSON Pointer: `segment` with `~` as `~0` and `/` as `~1`, as RFC 6901
/// requires. Every surface that locates an error in a document (the service's field errors, its
/// class-set requests, its marking views) writes tokens with this.
pub fn pointer_token(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    push_escaped(&mut out, segment);
    out
}

/// Appends `segment` with `~` and `/` escaped as RFC 6901 requires.
pub(crate) fn push_escaped(out: &mut String, segment: &str) {
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// A segment of a pointer built after parsing, when only indices and fixed names are known.
pub(crate) enum Seg<'a> {
    /// An object member.
    Key(&'a str),
    /// An array item.
    Index(usize),
}

/// Renders a pointer from segments.
pub(crate) fn pointer(segments: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for segment in segments {
        match segment {
            Seg::Key(key) => {
                out.push('/');
                push_escaped(&mut out, key);
            }
            Seg::Index(index) => {
                let _ = write!(out, "/{index}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_tilde_and_slash() {
        let root = Path::Root;
        let a = root.key("a/b~c");
        let b = a.index(3);
        assert_eq!(b.render(), "/a~1b~0c/3");
        assert_eq!(Path::Root.render(), "");
        assert_eq!(
            pointer(&[Seg::Key("questions"), Seg::Index(2), Seg::Key("~")]),
            "/questions/2/~0"
        );
    }

    #[test]
    fn a_token_escapes_tilde_before_slash_so_it_reads_back_as_written() {
        assert_eq!(pointer_token("a/b~c"), "a~1b~0c");
        assert_eq!(pointer_token("~1"), "~01", "a written ~1 is not a slash");
        assert_eq!(pointer_token(""), "");
        for name in ["plain", "a/b", "~", "~0/~1", "é/ü"] {
            let back = pointer_token(name).replace("~1", "/").replace("~0", "~");
            assert_eq!(back, name, "RFC 6901 decoding order");
        }
    }
}
