//! A fast keyed hasher for the engine's maps and sets, whose keys come from the document.
//!
//! Keys are chosen by whoever writes the document, so a hasher without a secret (such as FxHash)
//! lets a document be built whose keys all collide, and every lookup then scans them all. The
//! standard library's SipHash resists that but costs more than the rest of a lookup. This hasher
//! takes two secret 64-bit keys per map from the standard library's random source and mixes each
//! 8-byte word with a folded 128-bit multiplication (as foldhash and wyhash do): cheap, and without
//! the keys there is no way to aim for a collision.

use std::hash::{BuildHasher, Hasher, RandomState};

/// Makes keyed hashers; each value has its own random keys.
#[derive(Clone)]
pub(crate) struct Keyed {
    seed: u64,
    key: u64,
}

impl Default for Keyed {
    fn default() -> Self {
        let random = RandomState::new();
        Keyed {
            seed: random.hash_one(0x243f_6a88_85a3_08d3_u64),
            // Odd, so that multiplying by it loses nothing.
            key: random.hash_one(0x1319_8a2e_0370_7344_u64) | 1,
        }
    }
}

impl BuildHasher for Keyed {
    type Hasher = KeyedHasher;

    fn build_hasher(&self) -> KeyedHasher {
        KeyedHasher {
            state: self.seed,
            key: self.key,
        }
    }
}

/// A `HashMap` keyed with [`Keyed`].
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, Keyed>;
/// A `HashSet` keyed with [`Keyed`].
pub(crate) type HashSet<T> = std::collections::HashSet<T, Keyed>;

/// The high and low halves of the 128-bit product, folded together.
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// One hash in progress.
pub(crate) struct KeyedHasher {
    state: u64,
    key: u64,
}

impl KeyedHasher {
    fn mix(&mut self, word: u64) {
        self.state = fold(self.state ^ word, self.key);
    }
}

impl Hasher for KeyedHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut buffer = [0u8; 8];
            buffer.copy_from_slice(word);
            self.mix(u64::from_le_bytes(buffer));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut buffer = [0u8; 8];
            buffer[..rest.len()].copy_from_slice(rest);
            // The length tells a short tail from the same bytes followed by zeros.
            self.mix(u64::from_le_bytes(buffer) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn finish(&self) -> u64 {
        fold(self.state, self.key ^ 0x9e37_79b9_7f4a_7c15)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_work_and_hashes_spread() {
        let mut map: HashMap<&str, usize> = HashMap::default();
        let keys = [
            "q1-m1",
            "q1-a1",
            "q1-m1x",
            "",
            "a somewhat longer criterion id",
            "\0",
        ];
        for (i, key) in keys.iter().enumerate() {
            map.insert(key, i);
        }
        assert_eq!(map.get("q1-a1"), Some(&1));
        assert_eq!(map.get(""), Some(&3));
        assert_eq!(map.len(), keys.len());
        let keyed = Keyed::default();
        // Keys that share their low bytes (the weakness of an unkeyed multiplicative hash) spread
        // over the buckets of a small table.
        let buckets: std::collections::HashSet<u64> = (0..256u64)
            .map(|i| keyed.hash_one(format!("aaaaaaaa{}", char::from(i as u8))) & 63)
            .collect();
        assert!(buckets.len() > 40, "{}", buckets.len());
        assert_ne!(keyed.hash_one("ab"), keyed.hash_one("ab\0"));
        assert_ne!(
            Keyed::default().hash_one("same"),
            Keyed::default().hash_one("same")
        );
    }
}
