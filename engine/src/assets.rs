//! The import's assets as the validator knows them: id, role and page count.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// An uploaded file of the import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Asset {
    /// The asset id.
    pub id: Uuid,
    /// Completed student work, or a mark scheme.
    pub kind: AssetKind,
    /// Pages found when the file was inspected (≥ 1).
    pub page_count: u32,
}

/// An asset's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AssetKind {
    /// A completed student scan: the only evidence of an answer.
    Work,
    /// A mark scheme.
    Scheme,
}

impl AssetKind {
    /// The stable identifier.
    pub fn as_str(self) -> &'static str {
        match self {
            AssetKind::Work => "work",
            AssetKind::Scheme => "scheme",
        }
    }
}

/// Why an assets list could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AssetsError {
    /// Not a JSON array of `{id, kind, pageCount}` objects.
    #[error("assets must be a JSON array of {{\"id\", \"kind\", \"pageCount\"}} objects: {0}")]
    Malformed(String),
    /// Two assets share an id.
    #[error("asset {0} is listed twice")]
    Duplicate(Uuid),
    /// An asset has no pages.
    #[error("asset {0} has pageCount 0; every asset has at least one page")]
    NoPages(Uuid),
}

/// Reads an assets list from JSON (`[{"id", "kind", "pageCount"}]`), as the CLI and bindings take it.
pub fn assets_from_json(bytes: &[u8]) -> Result<Vec<Asset>, AssetsError> {
    let assets: Vec<Asset> =
        serde_json::from_slice(bytes).map_err(|e| AssetsError::Malformed(e.to_string()))?;
    check_assets(&assets)?;
    Ok(assets)
}

/// Checks an assets list: unique ids, at least one page each.
pub fn check_assets(assets: &[Asset]) -> Result<(), AssetsError> {
    let mut seen = std::collections::HashSet::with_capacity(assets.len());
    for asset in assets {
        if !seen.insert(asset.id) {
            return Err(AssetsError::Duplicate(asset.id));
        }
        if asset.page_count == 0 {
            return Err(AssetsError::NoPages(asset.id));
        }
    }
    Ok(())
}
