//! Repeats within one list: strings (`dependsOn` entries) and page numbers (a selection's pages),
//! found in time linear in the list, or `n log n` for a long list of strings.

use std::hash::BuildHasher;

use crate::hash::{HashSet, Keyed};
use crate::json::Items;
use crate::limits::MAX_PAGE_NUMBER;
use crate::rules::text;

/// The strings of one list seen so far: scanned while there are few, and allocation-free until a
/// second arrives, as most lists are empty or hold one. Past that, for a list known in advance,
/// every repeat in the whole list is found at once by sorting the strings' hashes (a hash set that
/// large misses the cache on every insertion); strings not from a known list go to a hash set.
pub(crate) struct Seen<'d> {
    list: Items<'d>,
    first: Option<&'d str>,
    more: Vec<&'d str>,
    /// Bit `i` is set when item `i` of the list repeats an earlier item.
    repeats: Option<Vec<u64>>,
    set: Option<Box<HashSet<&'d str>>>,
}

/// Lists up to this long are scanned.
const LINEAR_SCAN: usize = 16;

impl<'d> Seen<'d> {
    /// For the strings of `list` (the non-empty strings, as [`text`] reads them), or of no list
    /// known in advance when `list` is empty.
    #[inline]
    pub(crate) fn new(list: Items<'d>) -> Self {
        Seen {
            list,
            first: None,
            more: Vec::new(),
            repeats: None,
            set: None,
        }
    }

    /// Adds `text`, item `index` of the list; returns whether an earlier item was the same.
    pub(crate) fn repeat(&mut self, index: usize, text: &'d str) -> bool {
        if let Some(repeats) = &self.repeats {
            return repeats
                .get(index / 64)
                .is_some_and(|word| word & (1 << (index % 64)) != 0);
        }
        if let Some(set) = &mut self.set {
            return !set.insert(text);
        }
        let Some(first) = self.first else {
            self.first = Some(text);
            return false;
        };
        if first == text || self.more.contains(&text) {
            return true;
        }
        if self.more.len() < LINEAR_SCAN {
            self.more.push(text);
        } else if !self.list.is_empty() {
            self.more = Vec::new();
            self.repeats = Some(repeats(self.list));
        } else {
            let mut set: HashSet<&'d str> = std::mem::take(&mut self.more).into_iter().collect();
            set.insert(first);
            set.insert(text);
            self.set = Some(Box::new(set));
        }
        false
    }
}

/// Which items of `list` repeat an earlier item: the strings' hashes are sorted, so that items
/// with one text stand together, in list order.
fn repeats(list: Items<'_>) -> Vec<u64> {
    let keyed = Keyed::default();
    // (hash, index, handle) of every string of the list.
    let mut entries: Vec<(u64, u32, u32)> = list
        .enumerate()
        .filter_map(|(i, item)| {
            let text = text(item)?;
            Some((keyed.hash_one(text), u32::try_from(i).ok()?, item.handle()))
        })
        .collect();
    entries.sort_unstable();
    let mut repeats = vec![0u64; entries.len() / 64 + 1];
    let Some(base) = list.into_iter().next() else {
        return repeats;
    };
    let text_of = |handle: u32| text(base.at_handle(handle)).unwrap_or_default();
    // Within one hash, the distinct texts met so far (nearly always one).
    let mut distinct: Vec<&str> = Vec::new();
    for run in entries.chunk_by(|a, b| a.0 == b.0) {
        if run.len() < 2 {
            continue;
        }
        distinct.clear();
        for &(_, index, handle) in run {
            let text = text_of(handle);
            if distinct.contains(&text) {
                let index = index as usize;
                if repeats.len() <= index / 64 {
                    repeats.resize(index / 64 + 1, 0);
                }
                repeats[index / 64] |= 1 << (index % 64);
            } else {
                distinct.push(text);
            }
        }
    }
    repeats
}

/// A set of page numbers (1 to 10,000), one bit each.
pub(crate) struct PageSet {
    bits: Vec<u64>,
}

impl PageSet {
    #[inline]
    pub(crate) fn new() -> Self {
        PageSet { bits: Vec::new() }
    }

    /// Adds `number`; returns whether it was new.
    pub(crate) fn insert(&mut self, number: u32) -> bool {
        if self.bits.is_empty() {
            self.bits = vec![0; MAX_PAGE_NUMBER as usize / 64 + 1];
        }
        let (word, bit) = (number as usize / 64, number % 64);
        let Some(word) = self.bits.get_mut(word) else {
            return false;
        };
        let new = *word & (1 << bit) == 0;
        *word |= 1 << bit;
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_finds_repeats_in_short_and_long_lists() {
        let names: Vec<String> = (0..100).map(|i| format!("n{i}")).collect();
        let mut seen = Seen::new(Items::default());
        for (i, name) in names.iter().enumerate() {
            assert!(!seen.repeat(i, name));
        }
        for (i, name) in names.iter().enumerate() {
            assert!(seen.repeat(100 + i, name));
        }
        // A known list: every repeat found at once, in list order.
        let items: Vec<String> = (0..300)
            .map(|i| format!("\"n{}\"", if i % 3 == 2 { i / 7 } else { i }))
            .collect();
        let text = format!("[{},\"\",1]", items.join(","));
        let doc = crate::json::parse(text.as_bytes()).expect("valid");
        let list = doc.root().as_array().expect("array");
        let mut seen = Seen::new(list);
        let mut earlier = std::collections::HashSet::new();
        for (i, item) in list.enumerate() {
            let Some(name) = super::text(item) else {
                continue;
            };
            assert_eq!(seen.repeat(i, name), !earlier.insert(name), "{i} {name}");
        }
        let mut pages = PageSet::new();
        assert!(pages.insert(10_000));
        assert!(!pages.insert(10_000));
        assert!(pages.insert(1));
    }
}
