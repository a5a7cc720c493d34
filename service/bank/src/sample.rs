//! The sample bank (`service/bank/sample/`), embedded so that a binary can load it anywhere.

use crate::error::BankError;
use crate::load::{self, Bank, MemoryBank};
use crate::model::Facets;

/// The sample bank's files, by name.
pub const FILES: [(&str, &str); 5] = [
    (
        "a-level-maths.json",
        include_str!("../sample/a-level-maths.json"),
    ),
    ("as-maths.json", include_str!("../sample/as-maths.json")),
    ("facets.json", include_str!("../sample/facets.json")),
    (
        "further-maths.json",
        include_str!("../sample/further-maths.json"),
    ),
    (
        "international.json",
        include_str!("../sample/international.json"),
    ),
];

/// The sample bank's asset files, by path relative to the bank folder.
pub const ASSETS: [(&str, &[u8]); 5] = [
    (
        "assets/area-under-quadratic.svg",
        include_bytes!("../sample/assets/area-under-quadratic.svg"),
    ),
    (
        "assets/beam-supports.svg",
        include_bytes!("../sample/assets/beam-supports.svg"),
    ),
    (
        "assets/inclined-plane.svg",
        include_bytes!("../sample/assets/inclined-plane.svg"),
    ),
    (
        "assets/triangle-abc.svg",
        include_bytes!("../sample/assets/triangle-abc.svg"),
    ),
    (
        "assets/velocity-time-graph.svg",
        include_bytes!("../sample/assets/velocity-time-graph.svg"),
    ),
];

/// The embedded sample bank as a [`MemoryBank`].
pub fn memory() -> MemoryBank {
    MemoryBank {
        files: FILES
            .iter()
            .map(|(name, text)| ((*name).to_owned(), text.as_bytes().to_vec()))
            .collect(),
        assets: ASSETS
            .iter()
            .map(|(path, bytes)| ((*path).to_owned(), bytes.to_vec()))
            .collect(),
    }
}

/// Loads and checks the embedded sample bank.
pub fn load() -> Result<Bank, Vec<BankError>> {
    load::load_memory(&memory(), &Facets::default())
}
