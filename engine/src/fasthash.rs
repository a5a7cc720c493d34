//! A small, fast hasher for the engine's internal maps (FxHash, as used in rustc).
//!
//! Keys are ids from the document, and every map is bounded by the document's limits (at most 2,400
//! criteria), so the worst case of a non-keyed hash is bounded too. The parser's duplicate-key check,
//! whose objects are unbounded, keeps the standard library's keyed hasher.

use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FxHasher`].
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The Fx hash: multiply and rotate per word.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_work_and_hashes_differ() {
        let mut map: HashMap<&str, usize> = HashMap::default();
        for (i, key) in [
            "q1-m1",
            "q1-a1",
            "q1-m1x",
            "",
            "a somewhat longer criterion id",
        ]
        .iter()
        .enumerate()
        {
            map.insert(key, i);
        }
        assert_eq!(map.get("q1-a1"), Some(&1));
        assert_eq!(map.get(""), Some(&3));
        assert_eq!(map.len(), 5);
        let hash = |s: &str| {
            let mut h = FxHasher::default();
            h.write(s.as_bytes());
            h.finish()
        };
        assert_ne!(hash("abcdefgh1"), hash("abcdefgh2"));
    }
}
