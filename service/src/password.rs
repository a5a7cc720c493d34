//! Passwords of the app's accounts.
//!
//! Hashed with Argon2id (RFC 9106) at the `argon2` crate's default parameters: 19 MiB of memory,
//! two passes, one lane (m=19456, t=2, p=1), the minimum OWASP's password storage guidance
//! recommends, and a random 16-byte salt. The hash is stored as a PHC string
//! (`$argon2id$v=19$m=19456,t=2,p=1$…`) that names its parameters, so raising them later leaves
//! older hashes verifiable.

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};

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

/// Whether `password` matches the stored PHC string. A stored string that cannot be read matches
/// nothing.
pub fn verify(password: &str, phc: &str) -> bool {
    if password.len() > MAX_BYTES {
        return false;
    }
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
}

/// Spends the time of one verification, so that an unknown email answers as slowly as a wrong
/// password.
pub fn verify_nothing(password: &str) {
    static DUMMY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if let Some(phc) = DUMMY.get_or_init(|| hash("examkit: no such account").ok()) {
        let _ = verify(password, phc);
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
    fn a_stored_string_that_is_not_a_hash_matches_nothing() {
        assert!(!verify("anything at all", ""));
        assert!(!verify("anything at all", "$argon2id$v=19$garbage"));
        assert!(!verify("anything at all", "plain text"));
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
