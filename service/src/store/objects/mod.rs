//! Stored files outside the database: uploads, automated marking's page images and exported PDFs
//! in a directory or an S3-compatible bucket, named by the SHA-256 of their bytes.
//!
//! The database stays the default place for them (`--asset-store database`), so the embedded
//! service needs nothing else. With an object store configured:
//!
//! 1. a writer first claims the object's row in `stored_objects` (its own short transaction),
//! 2. then writes the object (a whole-object PUT, or a file renamed into place: never partial),
//! 3. then, in the transaction that saves the row naming it, touches the claim again.
//!
//! So a row never names an object that is not there, and an interrupted write leaves at most an
//! object nothing names. The sweep ([`Store::sweep_objects`]) deletes those after a grace period:
//! it marks the claim `deleting` in one statement that also checks that no row names the object
//! and that nobody touched it within the grace period, then deletes the object, then the claim. A
//! writer that finds a claim `deleting` waits for the sweep to finish and writes the object again.
//! Objects the database has no claim for at all (for example after restoring an older backup) are
//! found by listing the store and deleted the same way.
//!
//! A row says only *which* content it holds; the configured store says *where* content lives. That
//! is what lets `examkit assets migrate` copy every object to another store before the service is
//! switched over to it.
//!
//! A prefix belongs to one database: the sweep deletes what *its* database does not name, so two
//! deployments sharing a prefix would delete each other's files. The first database to use a
//! prefix binds it (the object `<prefix>/.examkit-deployment` names the database's deployment id,
//! see [`super::deployment`]); a database pointed at a prefix bound to another refuses to use it.
//!
//! - [`url`] reads where stored files live: the database, a directory or an S3 bucket;
//! - [`backend`] opens a directory or a bucket as one object store and reads and writes its
//!   objects, and binds its prefix to a database;
//! - [`kept`] keeps a row's bytes in the database or as an object, claimed before it is written
//!   and held by the row that names it;
//! - [`sweep`] deletes the objects nothing names;
//! - [`moving`] moves stored files between the database and an object store;
//! - this file holds what they share: object names and the columns that name objects.

mod backend;
mod kept;
mod moving;
mod sweep;
#[cfg(test)]
mod tests;
mod url;

use sha2::{Digest, Sha256};

use super::StoreError;

pub use backend::{Listed, Objects};
pub use kept::Kept;
pub use moving::Movable;
pub use sweep::Swept;
pub use url::AssetStoreUrl;

fn missing_or(sha256: &str, e: object_store::Error) -> StoreError {
    match e {
        object_store::Error::NotFound { .. } => StoreError::MissingObject(sha256.to_owned()),
        e => StoreError::Objects(format!("reading object {sha256}: {e}")),
    }
}

/// The lower-case hex SHA-256 of some bytes.
pub fn hex_sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

fn is_sha256(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The object under a store's prefix that names the database the prefix is bound to.
pub const BINDING: &str = ".examkit-deployment";

/// The columns that name objects: `(table, column)`.
pub const OBJECT_COLUMNS: [(&str, &str); 5] = [
    ("asset_blobs", "object"),
    ("asset_pages", "image_object"),
    ("paper_exports", "question_paper_object"),
    ("paper_exports", "mark_scheme_object"),
    ("class_sets", "pdf_object"),
];

/// `NOT EXISTS` for every row that could name the object `s.sha256`.
fn unreferenced(alias: &str) -> String {
    OBJECT_COLUMNS
        .iter()
        .map(|(table, column)| {
            format!("NOT EXISTS (SELECT 1 FROM {table} r WHERE r.{column} = {alias}.sha256)")
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}
