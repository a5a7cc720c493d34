//! API keys and scopes: key format, fingerprints, constant-time comparison.
//!
//! A key looks like `ek_live_` followed by 32 random base62 characters and a 6-character base62
//! CRC-32 checksum of those 32, so typos and truncated keys are rejected without a database look-up
//! and secret scanners can recognise leaked keys. The service stores only the SHA-256 fingerprint.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The recognisable prefix of every key.
pub const KEY_PREFIX: &str = "ek_live_";
const RANDOM_CHARS: usize = 32;
const CHECKSUM_CHARS: usize = 6;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The length of a well-formed key.
pub const KEY_LEN: usize = KEY_PREFIX.len() + RANDOM_CHARS + CHECKSUM_CHARS;

/// A permission a key may hold; scopes are independent of each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Search published questions; read content, schemes and diagrams.
    QuestionsRead,
    /// Read saved papers and prepared PDFs.
    PapersRead,
    /// Create and update papers; prepare PDFs.
    PapersWrite,
    /// Read uploaded scans, marking sessions and results.
    MarkingRead,
    /// Upload work and request automated marking.
    MarkingSubmit,
    /// Upload and submit externally marked work.
    MarkingImport,
    /// Edit existing mark decisions and annotations.
    MarkingReview,
}

impl Scope {
    /// Every scope, in the order the specification lists them.
    pub const ALL: &'static [Scope] = &[
        Scope::QuestionsRead,
        Scope::PapersRead,
        Scope::PapersWrite,
        Scope::MarkingRead,
        Scope::MarkingSubmit,
        Scope::MarkingImport,
        Scope::MarkingReview,
    ];

    /// The scope's name, such as `marking:import`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::QuestionsRead => "questions:read",
            Scope::PapersRead => "papers:read",
            Scope::PapersWrite => "papers:write",
            Scope::MarkingRead => "marking:read",
            Scope::MarkingSubmit => "marking:submit",
            Scope::MarkingImport => "marking:import",
            Scope::MarkingReview => "marking:review",
        }
    }

    /// Looks a scope up by name.
    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.iter().copied().find(|s| s.as_str() == name)
    }
}

/// Parses a comma-separated scope list (`marking:read,marking:import`), sorted and deduplicated.
pub fn parse_scopes(list: &str) -> Result<Vec<Scope>, String> {
    let mut scopes = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match Scope::parse(name) {
            Some(scope) => scopes.push(scope),
            None => {
                let known: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
                return Err(format!(
                    "unknown scope {name:?}; known scopes: {}",
                    known.join(", ")
                ));
            }
        }
    }
    scopes.sort();
    scopes.dedup();
    Ok(scopes)
}

/// Joins scopes into their stored comma-separated form.
pub fn join_scopes(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// A freshly generated key: the secret (shown once), its display prefix and its fingerprint.
#[derive(Debug)]
pub struct NewKey {
    /// The full key, to be shown once and never stored.
    pub secret: String,
    /// The first characters of the key, safe to display in listings.
    pub prefix: String,
    /// The SHA-256 fingerprint that is stored.
    pub fingerprint: String,
}

/// Generates a new random key.
pub fn generate_key() -> Result<NewKey, getrandom::Error> {
    let mut random = String::with_capacity(RANDOM_CHARS);
    let mut buf = [0u8; 64];
    while random.len() < RANDOM_CHARS {
        getrandom::fill(&mut buf)?;
        // Rejection sampling keeps every character equally likely.
        for &b in &buf {
            if b < 248 && random.len() < RANDOM_CHARS {
                random.push(char::from(BASE62[usize::from(b % 62)]));
            }
        }
    }
    let secret = format!("{KEY_PREFIX}{random}{}", checksum(&random));
    Ok(NewKey {
        prefix: secret[..KEY_PREFIX.len() + 6].to_owned(),
        fingerprint: fingerprint(&secret),
        secret,
    })
}

fn checksum(random: &str) -> String {
    let mut value = crc32fast::hash(random.as_bytes());
    let mut out = [b'0'; CHECKSUM_CHARS];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(value % 62) as usize];
        value /= 62;
    }
    out.iter().map(|&b| char::from(b)).collect()
}

/// Whether `key` has the shape of an examkit key with a correct checksum.
pub fn is_well_formed(key: &str) -> bool {
    let Some(rest) = key.strip_prefix(KEY_PREFIX) else {
        return false;
    };
    if rest.len() != RANDOM_CHARS + CHECKSUM_CHARS
        || !rest.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return false;
    }
    let (random, sum) = rest.split_at(RANDOM_CHARS);
    checksum(random).as_bytes().ct_eq(sum.as_bytes()).into()
}

/// The SHA-256 fingerprint of a key, as lowercase hex.
pub fn fingerprint(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

/// Compares two fingerprints in constant time.
pub fn fingerprints_match(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// SHA-256 of bytes, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_well_formed_and_distinct() {
        let a = generate_key().expect("randomness");
        let b = generate_key().expect("randomness");
        assert_ne!(a.secret, b.secret);
        assert_eq!(a.secret.len(), KEY_LEN);
        assert!(a.secret.starts_with("ek_live_"));
        assert!(is_well_formed(&a.secret));
        assert_eq!(a.fingerprint, fingerprint(&a.secret));
        assert_eq!(a.fingerprint.len(), 64);
        assert!(a.secret.starts_with(&a.prefix));
        assert!(!a.fingerprint.contains(&a.secret[KEY_PREFIX.len()..]));
    }

    #[test]
    fn a_changed_character_fails_the_checksum() {
        let key = generate_key().expect("randomness").secret;
        let mut chars: Vec<char> = key.chars().collect();
        let i = KEY_PREFIX.len() + 3;
        chars[i] = if chars[i] == 'a' { 'b' } else { 'a' };
        let typo: String = chars.into_iter().collect();
        assert!(!is_well_formed(&typo));
        assert!(!is_well_formed(&key[..key.len() - 1]));
        assert!(!is_well_formed(&format!(
            "ek_test_{}",
            &key[KEY_PREFIX.len()..]
        )));
        assert!(!is_well_formed(""));
    }

    #[test]
    fn scopes_parse_and_reject_unknown_names() {
        assert_eq!(
            parse_scopes("marking:read, marking:import,marking:read").expect("known"),
            vec![Scope::MarkingRead, Scope::MarkingImport]
        );
        assert!(parse_scopes("marking:admin").is_err());
        assert_eq!(
            join_scopes(&[Scope::MarkingRead, Scope::MarkingReview]),
            "marking:read,marking:review"
        );
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Some(*scope));
        }
    }

    #[test]
    fn fingerprints_compare_exactly() {
        let f = fingerprint("ek_live_x");
        assert!(fingerprints_match(&f, &fingerprint("ek_live_x")));
        assert!(!fingerprints_match(&f, &fingerprint("ek_live_y")));
        assert!(!fingerprints_match(&f, &f[..10]));
    }
}
