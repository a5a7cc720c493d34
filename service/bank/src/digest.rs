//! Digests of a revision: the versions a pin carries and the digest the importer compares.
//!
//! **Canonical JSON** of a model value is its `serde_json` serialisation (the bank format's field
//! names and spellings, optional fields omitted when absent, as the model writes them) written
//! compactly: no whitespace, object members sorted by key (byte order of the UTF-8 names), strings
//! escaped as `serde_json` escapes them, integers in decimal, floats in `serde_json`'s shortest
//! round-trip form. The ordering is done here, so it does not depend on `serde_json` features.
//!
//! With `H` = SHA-256 and `hex` = lowercase hexadecimal, and a revision's assets taken in order of
//! their id (the lowercase hyphenated UUID text), each contributing the line
//! `"\n" + id + " " + hex(H(file bytes))`:
//!
//! - `content_version` = hex(H(canonical(`content`) + asset lines));
//! - `scheme_version` = hex(H(canonical(`scheme`)));
//! - `revision_digest` = hex(H(canonical(revision without `status`, and with each asset's `file`
//!   removed) + asset lines)): every field but `status`, asset files by their bytes, not by path.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::model::{Content, Revision, Scheme};

/// A revision names an asset whose bytes were not supplied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the bytes of asset {0} are missing")]
pub struct MissingAsset(pub Uuid);

/// The three digests of a revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digests {
    /// [`content_version`].
    pub content_version: String,
    /// [`scheme_version`].
    pub scheme_version: String,
    /// [`revision_digest`].
    pub revision_digest: String,
}

/// Lowercase hexadecimal SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// The canonical JSON text of a model value (see the module documentation).
pub fn canonical_json<T: Serialize>(value: &T) -> String {
    // The model's types always serialise (string keys, finite numbers); a failure would be a bug
    // in the model and is written as `null` rather than a panic.
    let value = serde_json::to_value(value).unwrap_or(Value::Null);
    let mut out = String::new();
    write_canonical(&value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The asset lines of a revision, in id order.
fn asset_lines<B: AsRef<[u8]>>(
    revision: &Revision,
    assets: &BTreeMap<Uuid, B>,
) -> Result<String, MissingAsset> {
    let mut ids: Vec<Uuid> = revision.assets.iter().map(|a| a.id).collect();
    ids.sort_by_key(|id| id.hyphenated().to_string());
    ids.dedup();
    let mut out = String::new();
    for id in ids {
        let bytes = assets.get(&id).ok_or(MissingAsset(id))?;
        out.push('\n');
        out.push_str(&id.hyphenated().to_string());
        out.push(' ');
        out.push_str(&sha256_hex(bytes.as_ref()));
    }
    Ok(out)
}

fn digest_of(canonical: &str, lines: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(canonical.as_bytes());
    hasher.update(lines.as_bytes());
    hex(&hasher.finalize())
}

/// The content version of a pin: SHA-256 over the canonical `content` and, for each asset of the
/// revision in id order, its id and the SHA-256 of its bytes. `assets` maps asset ids to bytes.
pub fn content_version<B: AsRef<[u8]>>(
    revision: &Revision,
    assets: &BTreeMap<Uuid, B>,
) -> Result<String, MissingAsset> {
    Ok(content_version_of(
        &revision.content,
        &asset_lines(revision, assets)?,
    ))
}

fn content_version_of(content: &Content, lines: &str) -> String {
    digest_of(&canonical_json(content), lines)
}

/// The scheme version of a pin: SHA-256 over the canonical `scheme`.
pub fn scheme_version(scheme: &Scheme) -> String {
    digest_of(&canonical_json(scheme), "")
}

/// The importer's digest of a revision: SHA-256 over every field but `status` (asset `file` paths
/// replaced by the files' bytes), so a revision whose status alone changes keeps its digest.
pub fn revision_digest<B: AsRef<[u8]>>(
    revision: &Revision,
    assets: &BTreeMap<Uuid, B>,
) -> Result<String, MissingAsset> {
    Ok(revision_digest_of(
        revision,
        &asset_lines(revision, assets)?,
    ))
}

fn revision_digest_of(revision: &Revision, lines: &str) -> String {
    let mut value = serde_json::to_value(revision).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.remove("status");
        if let Some(Value::Array(assets)) = map.get_mut("assets") {
            for asset in assets {
                if let Value::Object(asset) = asset {
                    asset.remove("file");
                }
            }
        }
    }
    let mut canonical = String::new();
    write_canonical(&value, &mut canonical);
    digest_of(&canonical, lines)
}

/// All three digests at once (the asset files are hashed once).
pub fn digests<B: AsRef<[u8]>>(
    revision: &Revision,
    assets: &BTreeMap<Uuid, B>,
) -> Result<Digests, MissingAsset> {
    let lines = asset_lines(revision, assets)?;
    Ok(Digests {
        content_version: content_version_of(&revision.content, &lines),
        scheme_version: scheme_version(&revision.scheme),
        revision_digest: revision_digest_of(revision, &lines),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_and_drops_whitespace() {
        let value = json!({"b": [1, {"z": true, "a": null}], "a": "x\ny", "é": 0.5});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":"x\ny","b":[1,{"a":null,"z":true}],"é":0.5}"#
        );
    }

    #[test]
    fn sha256_of_empty_input() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
