//! What reading a bank yields and what its checks share ([`crate::load`] reads, [`crate::rules`]
//! checks): a file read and valid against the schema, an asset's bytes with their digest, and
//! where asset files are read from.

use crate::digest::sha256_hex;
use crate::model::BankFile;

/// One file of a bank, read and valid against the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedFile {
    /// The file's name (errors and the summary use it).
    pub name: String,
    /// Its content.
    pub file: BankFile,
}

/// An asset file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetData {
    /// The asset's media type (`image/svg+xml`).
    pub media_type: String,
    /// SHA-256 of the bytes, lowercase hexadecimal.
    pub sha256: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

impl AsRef<[u8]> for AssetData {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// Where asset files are read from.
pub(crate) trait AssetReader {
    /// The bytes of `file` (relative to the bank folder), or why they cannot be read.
    fn read(&self, file: &str) -> Result<Vec<u8>, String>;
}

/// An asset's bytes with their media type and SHA-256 digest.
pub(crate) fn asset_data(media_type: &str, bytes: Vec<u8>) -> AssetData {
    AssetData {
        media_type: media_type.to_owned(),
        sha256: sha256_hex(&bytes),
        bytes,
    }
}
