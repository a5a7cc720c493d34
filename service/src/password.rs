//! Passwords of the app's accounts.
//!
//! Hashed with Argon2id (RFC 9106) at the `argon2` crate's default parameters: 19 MiB of memory,
//! two passes, one lane (m=19456, t=2, p=1), the minimum OWASP's password storage guidance
//! recommends, and a random 16-byte salt. The hash is stored as a PHC string
//! (`$argon2id$v=19$m=19456,t=2,p=1$…`) that names its parameters, so raising them later leaves
//! older hashes verifiable.
//!
//! The functions here do the work where they are called. The service and the administration
//! commands call them only through [`checks`], which bounds how many run at once in the process.

pub mod checks;

use argon2::password_hash::PasswordHasher;
use argon2::password_hash::phc::PasswordHash;
use argon2::{Algorithm, Argon2, Block, Params, Version};
use subtle::ConstantTimeEq;

/// The fewest characters a password may have.
pub const MIN_CHARS: usize = 10;
/// The most bytes a password may have (hashing is bounded whatever is sent).
pub const MAX_BYTES: usize = 1024;

/// Why a password is refused.
pub fn check(password: &str) -> Result<(), String> {
    if password.chars().count() < MIN_CHARS {
        return Err(format!("a password needs at least {MIN_CHARS} characters"));
    }
    if password.len() > MAX_BYTES {
        return Err(format!("a password may have at most {MAX_BYTES} bytes"));
    }
    Ok(())
}

/// The PHC string of a new hash of `password`.
pub fn hash(password: &str) -> Result<String, String> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| format!("hashing the password failed: {e}"))
}

/// Argon2's working memory, kept by a thread and used again for each of its checks
/// ([`verify_in`]).
///
/// Each check needs 19 MiB. Had every check allocate its own, as `argon2` does, the allocator would
/// keep some of each freed block (glibc raises its large-allocation threshold after the first one
/// is freed, so later ones come from arenas it does not give back): a thread's resident memory grew
/// by about 19 MiB a check, for ten checks or more, and each thread has such an arena. Held here,
/// a thread's memory is one check's, however many it makes.
#[derive(Debug, Default)]
pub struct Memory(Vec<Block>);

impl Memory {
    /// No memory yet: it is allocated at the first check.
    pub fn new() -> Memory {
        Memory(Vec::new())
    }

    /// `count` blocks: the ones kept, when the check needs no more than [`KEPT_BLOCKS`] (grown to
    /// that once); otherwise blocks of this check's own, given back after it.
    fn blocks(&mut self, count: usize, run: impl FnOnce(&mut [Block]) -> bool) -> bool {
        if count > KEPT_BLOCKS {
            let mut own = vec![Block::default(); count];
            return run(&mut own);
        }
        if self.0.len() < count {
            self.0.resize(KEPT_BLOCKS, Block::default());
        }
        match self.0.get_mut(..count) {
            Some(blocks) => run(blocks),
            None => false,
        }
    }
}

/// The most Argon2 memory a thread keeps between checks, in 1 KiB blocks: the default parameters'
/// (19 MiB). A stored hash made with more is checked in memory of its own.
pub const KEPT_BLOCKS: usize = Params::DEFAULT_M_COST as usize;

/// Whether `password` matches the stored PHC string. A stored string that cannot be read matches
/// nothing.
pub fn verify(password: &str, phc: &str) -> bool {
    verify_in(&mut Memory::new(), password, phc)
}

/// [`verify`], in `memory`: the stored string's algorithm, version, parameters and salt, the hash
/// computed again and compared with the stored one in constant time (what `argon2`'s own
/// verification does, with memory it is given).
pub fn verify_in(memory: &mut Memory, password: &str, phc: &str) -> bool {
    if password.len() > MAX_BYTES {
        return false;
    }
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (&parsed.salt, &parsed.hash) else {
        return false;
    };
    let Ok(algorithm) = Algorithm::try_from(parsed.algorithm.as_str()) else {
        return false;
    };
    let version = match parsed.version.map(Version::try_from).transpose() {
        Ok(version) => version.unwrap_or_default(),
        Err(_) => return false,
    };
    let Ok(params) = Params::try_from(&parsed) else {
        return false;
    };
    let argon2 = Argon2::new(algorithm, version, params);
    let mut computed = vec![0u8; expected.len()];
    memory.blocks(argon2.params().block_count(), |blocks| {
        argon2
            .hash_password_into_with_memory(password.as_bytes(), salt, &mut computed, blocks)
            .is_ok()
            && bool::from(computed.ct_eq(expected.as_bytes()))
    })
}

/// Spends the time of one verification, so that an unknown email answers as slowly as a wrong
/// password.
pub fn verify_nothing(password: &str) {
    verify_nothing_in(&mut Memory::new(), password);
}

/// [`verify_nothing`], in `memory`.
pub fn verify_nothing_in(memory: &mut Memory, password: &str) {
    static DUMMY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if let Some(phc) = DUMMY.get_or_init(|| hash("examkit: no such account").ok()) {
        let _ = verify_in(memory, password, phc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_argon2id_at_the_documented_parameters_and_verifies() {
        let phc = hash("correct horse battery").expect("hash");
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        assert!(verify("correct horse battery", &phc));
        assert!(!verify("correct horse batterY", &phc));
        // Two hashes of one password differ (the salt).
        assert_ne!(phc, hash("correct horse battery").expect("hash"));
    }

    #[test]
    fn kept_memory_checks_as_the_library_does_for_every_stored_form() {
        use argon2::password_hash::PasswordVerifier;
        let mut memory = Memory::new();
        let library = |password: &str, phc: &str| {
            PasswordHash::new(phc).is_ok_and(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
        };
        let default = hash("correct horse battery").expect("hash");
        // Made with other parameters, algorithms and versions than the default: a smaller and a
        // larger memory than the kept one, more passes, two lanes, a longer output, Argon2i,
        // Argon2d, version 0x10.
        let custom = |algorithm, version, m, t, p, out| {
            let params = Params::new(m, t, p, Some(out)).expect("params");
            Argon2::new(algorithm, version, params)
                .hash_password_with_salt(b"correct horse battery", b"sixteen byte salt")
                .expect("hash")
                .to_string()
        };
        let stored = [
            default,
            custom(Algorithm::Argon2id, Version::V0x13, 8, 1, 1, 32),
            custom(Algorithm::Argon2id, Version::V0x13, 24 * 1024, 2, 1, 32),
            custom(Algorithm::Argon2id, Version::V0x13, 1024, 3, 2, 64),
            custom(Algorithm::Argon2i, Version::V0x13, 1024, 2, 1, 32),
            custom(Algorithm::Argon2d, Version::V0x10, 1024, 2, 1, 32),
        ];
        for phc in &stored {
            for password in ["correct horse battery", "correct horse batterY", ""] {
                assert_eq!(
                    verify_in(&mut memory, password, phc),
                    library(password, phc),
                    "{password:?} against {phc}"
                );
            }
            assert!(
                verify_in(&mut memory, "correct horse battery", phc),
                "{phc}"
            );
        }
        // The memory kept is one default check's, whatever was checked.
        assert_eq!(memory.0.len(), KEPT_BLOCKS);
        // A stored hash whose output was cut short or altered matches nothing.
        let phc = &stored[0];
        let (head, tail) = phc.rsplit_once('$').expect("a hash part");
        for altered in [
            format!("{head}${}", &tail[..tail.len() - 4]),
            format!(
                "{head}${}{}",
                if tail.starts_with('A') { 'B' } else { 'A' },
                &tail[1..]
            ),
            format!("{head}$"),
            head.to_owned(),
        ] {
            assert!(
                !verify_in(&mut memory, "correct horse battery", &altered),
                "{altered}"
            );
        }
    }

    #[test]
    fn a_stored_string_that_is_not_a_hash_matches_nothing() {
        assert!(!verify("anything at all", ""));
        assert!(!verify("anything at all", "$argon2id$v=19$garbage"));
        assert!(!verify("anything at all", "plain text"));
        assert!(!verify(
            "anything at all",
            "$scrypt$ln=16,r=8,p=1$aM15713r3Xsvxbi31lqr1Q$nFNh2CVHVjNldFVKDHDlm4CbdRSCdEBsjjJxD+iCs5E"
        ));
        assert!(!verify(
            "anything at all",
            "$argon2id$v=99$m=19456,t=2,p=1$c2l4dGVlbiBieXRlIHNhbHQ$AAAA"
        ));
    }

    #[test]
    fn short_and_oversized_passwords_are_refused_with_the_rule() {
        assert!(
            check("123456789")
                .expect_err("refused")
                .contains("at least 10")
        );
        assert!(check("1234567890").is_ok());
        // Characters, not bytes, count towards the minimum.
        assert!(check("ééééééééé").is_err());
        let long = "x".repeat(MAX_BYTES + 1);
        assert!(check(&long).expect_err("refused").contains("at most"));
        assert!(!verify(&long, &hash("1234567890").expect("hash")));
    }
}
