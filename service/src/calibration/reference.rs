//! A reference set: scans of students' scripts with the decisions a trusted marker (a teacher, or
//! a moderated marking) made on them, read from a folder.
//!
//! ```text
//! DIR/reference.json      the manifest (examkit-calibration-reference-v1)
//! DIR/<files>             each script's scan: one PDF, or one PNG or JPEG per page
//! DIR/<trusted>.json      each script's trusted decisions: a service-marking-import-v1 document
//! ```
//!
//! A trusted document's questions are labelled as the paper numbers them (`1`, `2`…), and its
//! criterion ids are the scheme's, optionally prefixed by the question's label and a dot
//! (`2.b1`), since the import contract wants them unique across the document.
//!
//! The manifest names the bank the papers come from, each paper (its id, title, writing space
//! and bank questions: the scans carry the paper's page codes, so the id must be the one the
//! paper was printed with), and each script: its paper, its files with the asset id that the
//! trusted document cites them by, and the asset id it cites the mark scheme by. The format is
//! published in `schemas/calibration-reference-v1.schema.json`.

use std::collections::{BTreeMap, HashSet};
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use uuid::Uuid;

/// The manifest's `schemaVersion`.
pub const SCHEMA_VERSION: &str = "examkit-calibration-reference-v1";

/// The manifest's file name inside the reference folder.
pub const MANIFEST: &str = "reference.json";

/// The largest file read from a reference set.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Manifest {
    /// [`SCHEMA_VERSION`].
    pub schema_version: String,
    /// `sample` for the bank built into examkit, or a bank folder relative to the reference
    /// folder (as `examkit bank import` reads).
    pub bank: String,
    /// The papers, by name.
    pub papers: BTreeMap<String, Paper>,
    /// The scripts, in the order they are marked.
    pub scripts: Vec<Script>,
}

/// A paper the scripts answer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Paper {
    /// The paper's id, as printed in its page codes.
    pub id: Uuid,
    /// Its title.
    pub title: String,
    /// Its writing space (`smart`, `none`, `1-page`…), as `POST /v1/papers` takes it.
    pub writing_space: String,
    /// Its questions, in order: bank question id and revision.
    pub questions: Vec<PaperQuestion>,
}

/// A bank question of a paper.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PaperQuestion {
    /// The bank question's id.
    pub question_id: Uuid,
    /// Its revision.
    pub revision: u32,
}

/// One student's script.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Script {
    /// Its name, unique in the set.
    pub name: String,
    /// The paper it answers (a key of `papers`).
    pub paper: String,
    /// The scan's files, in page order.
    pub files: Vec<ScriptFile>,
    /// The asset id by which the trusted decisions cite the paper's mark scheme.
    pub scheme_asset_id: Uuid,
    /// The trusted decisions' file.
    pub trusted: String,
}

/// One file of a scan.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScriptFile {
    /// The file, relative to the reference folder.
    pub path: String,
    /// The asset id by which the trusted decisions cite it.
    pub asset_id: Uuid,
}

/// Why a reference set cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{path}: {message}")]
pub struct ReferenceError {
    /// The file (or the manifest's field) at fault.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn error(path: impl Into<String>, message: impl Into<String>) -> ReferenceError {
    ReferenceError {
        path: path.into(),
        message: message.into(),
    }
}

/// A script's file, read.
#[derive(Debug, Clone)]
pub struct LoadedFile {
    /// Its name (the last part of its path).
    pub name: String,
    /// Its media type, from its extension.
    pub content_type: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The asset id the trusted decisions cite it by.
    pub asset_id: Uuid,
}

/// A script, read: its files and its trusted document.
#[derive(Debug, Clone)]
pub struct LoadedScript {
    /// The manifest's entry.
    pub script: Script,
    /// The files, in page order.
    pub files: Vec<LoadedFile>,
    /// The trusted document's bytes (checked later, with the real page counts).
    pub trusted: Vec<u8>,
}

/// A reference set, read.
#[derive(Debug, Clone)]
pub struct Reference {
    /// The folder.
    pub dir: PathBuf,
    /// The manifest.
    pub manifest: Manifest,
    /// The scripts, in order.
    pub scripts: Vec<LoadedScript>,
    /// `sha256:` and the hex SHA-256 of the set's files (see [`digest`]): which set a saved
    /// calibration was measured on.
    pub digest: String,
}

impl Reference {
    /// The bank folder, when the set names one; `None` for the built-in sample bank.
    pub fn bank_dir(&self) -> Result<Option<PathBuf>, ReferenceError> {
        if self.manifest.bank == "sample" {
            return Ok(None);
        }
        inside(&self.dir, &self.manifest.bank, "bank").map(Some)
    }
}

/// `relative` under `dir`, refusing absolute paths and `..`.
fn inside(dir: &Path, relative: &str, field: &str) -> Result<PathBuf, ReferenceError> {
    let path = Path::new(relative);
    if relative.is_empty()
        || path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(error(
            format!("{MANIFEST}: {field}"),
            format!("{relative:?} must be a relative path inside the reference folder"),
        ));
    }
    Ok(dir.join(path))
}

fn read(path: &Path, shown: &str) -> Result<Vec<u8>, ReferenceError> {
    let meta = std::fs::metadata(path).map_err(|e| error(shown, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(error(shown, "is not a file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(error(
            shown,
            format!("is larger than {} MiB", MAX_FILE_BYTES >> 20),
        ));
    }
    std::fs::read(path).map_err(|e| error(shown, format!("cannot read: {e}")))
}

fn content_type(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// Reads and checks the reference set in `dir`: the manifest's fields, that every named paper
/// and file exists, names and asset ids are unique, and files are PDFs or images.
pub fn load(dir: &Path) -> Result<Reference, ReferenceError> {
    let manifest_bytes = read(&dir.join(MANIFEST), MANIFEST)?;
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| error(MANIFEST, format!("not a reference manifest: {e}")))?;
    if manifest.schema_version != SCHEMA_VERSION {
        return Err(error(
            format!("{MANIFEST}: schemaVersion"),
            format!("must be {SCHEMA_VERSION:?}"),
        ));
    }
    for (name, paper) in &manifest.papers {
        if paper.questions.is_empty() {
            return Err(error(
                format!("{MANIFEST}: papers.{name}.questions"),
                "a paper needs at least one question",
            ));
        }
        if paper.title.trim().is_empty() {
            return Err(error(
                format!("{MANIFEST}: papers.{name}.title"),
                "must not be empty",
            ));
        }
    }
    if manifest.scripts.is_empty() {
        return Err(error(
            format!("{MANIFEST}: scripts"),
            "a reference set needs at least one script",
        ));
    }
    let mut names = HashSet::new();
    let mut asset_ids = HashSet::new();
    let mut scripts = Vec::new();
    for (n, script) in manifest.scripts.iter().enumerate() {
        let at = |field: &str| format!("{MANIFEST}: scripts[{n}].{field}");
        if script.name.trim().is_empty() || !names.insert(script.name.clone()) {
            return Err(error(at("name"), "names must be non-empty and unique"));
        }
        if !manifest.papers.contains_key(&script.paper) {
            return Err(error(
                at("paper"),
                format!("no paper named {:?}", script.paper),
            ));
        }
        if script.files.is_empty() {
            return Err(error(at("files"), "a script needs at least one file"));
        }
        if !asset_ids.insert(script.scheme_asset_id) {
            return Err(error(at("schemeAssetId"), "asset ids must be unique"));
        }
        let mut files = Vec::new();
        for (k, file) in script.files.iter().enumerate() {
            let field = format!("scripts[{n}].files[{k}].path");
            let path = inside(dir, &file.path, &field)?;
            let content_type = content_type(&file.path).ok_or_else(|| {
                error(
                    format!("{MANIFEST}: {field}"),
                    "must end .pdf, .png, .jpg, .jpeg or .webp",
                )
            })?;
            if !asset_ids.insert(file.asset_id) {
                return Err(error(
                    format!("{MANIFEST}: scripts[{n}].files[{k}].assetId"),
                    "asset ids must be unique",
                ));
            }
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.path.clone());
            files.push(LoadedFile {
                name,
                content_type,
                bytes: read(&path, &file.path)?,
                asset_id: file.asset_id,
            });
        }
        let trusted_path = inside(dir, &script.trusted, &format!("scripts[{n}].trusted"))?;
        let trusted = read(&trusted_path, &script.trusted)?;
        scripts.push(LoadedScript {
            script: script.clone(),
            files,
            trusted,
        });
    }
    let digest = digest(&manifest_bytes, &scripts);
    Ok(Reference {
        dir: dir.to_path_buf(),
        manifest,
        scripts,
        digest,
    })
}

/// The SHA-256 of a reference set, as `sha256:` and 64 hex digits: over the manifest's bytes, then
/// each script in the manifest's order, its files in page order and then its trusted decisions,
/// each file as its path in the manifest, its length and its bytes. Any change to a scan, a
/// trusted decision or the manifest changes it; nothing else (file times, other files in the
/// folder) does.
pub fn digest(manifest: &[u8], scripts: &[LoadedScript]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut add = |name: &str, bytes: &[u8]| {
        hasher.update((name.len() as u64).to_be_bytes());
        hasher.update(name.as_bytes());
        hasher.update((bytes.len() as u64).to_be_bytes());
        hasher.update(bytes);
    };
    add(MANIFEST, manifest);
    for script in scripts {
        for (file, loaded) in script.script.files.iter().zip(&script.files) {
            add(&file.path, &loaded.bytes);
        }
        add(&script.script.trusted, &script.trusted);
    }
    let sum = hasher.finalize();
    let hex: String = sum.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PAPER: &str = "0b6f1c9e-2a4d-4f8b-9c3e-5d7a1b2c3d4e";
    const SCAN: &str = "1c7a2d0f-3b5e-4a9c-8d4f-6e8b2c3d4e5f";
    const SCHEME: &str = "2d8b3e1a-4c6f-4b0d-9e5a-7f9c3d4e5f60";

    fn manifest() -> serde_json::Value {
        json!({
            "schemaVersion": SCHEMA_VERSION,
            "bank": "sample",
            "papers": { "p": { "id": PAPER, "title": "Mock", "writingSpace": "smart",
                               "questions": [{ "questionId": PAPER, "revision": 1 }] } },
            "scripts": [{ "name": "a", "paper": "p",
                          "files": [{ "path": "a/scan.pdf", "assetId": SCAN }],
                          "schemeAssetId": SCHEME, "trusted": "a/trusted.json" }]
        })
    }

    fn folder(manifest: &serde_json::Value) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(dir.path().join("a")).expect("mkdir");
        std::fs::write(dir.path().join("a/scan.pdf"), b"%PDF-1.4").expect("write");
        std::fs::write(dir.path().join("a/trusted.json"), b"{}").expect("write");
        std::fs::write(dir.path().join(MANIFEST), manifest.to_string()).expect("write");
        dir
    }

    fn refused(change: impl FnOnce(&mut serde_json::Value)) -> ReferenceError {
        let mut m = manifest();
        change(&mut m);
        let dir = folder(&m);
        load(dir.path()).expect_err("refused")
    }

    #[test]
    fn a_good_set_loads() {
        let dir = folder(&manifest());
        let set = load(dir.path()).expect("loads");
        assert_eq!(set.scripts.len(), 1);
        assert_eq!(set.scripts[0].files[0].content_type, "application/pdf");
        assert_eq!(set.scripts[0].files[0].name, "scan.pdf");
        assert_eq!(set.bank_dir(), Ok(None));
    }

    #[test]
    fn the_digest_changes_with_any_file_of_the_set_and_only_with_them() {
        let dir = folder(&manifest());
        let first = load(dir.path()).expect("loads").digest;
        assert!(
            first.starts_with("sha256:") && first.len() == 7 + 64,
            "{first}"
        );
        assert_eq!(load(dir.path()).expect("loads").digest, first, "stable");
        std::fs::write(dir.path().join("unrelated.txt"), b"notes").expect("write");
        assert_eq!(load(dir.path()).expect("loads").digest, first);
        std::fs::write(dir.path().join("a/trusted.json"), b"{ }").expect("write");
        let trusted = load(dir.path()).expect("loads").digest;
        assert_ne!(trusted, first, "a trusted decision changed");
        std::fs::write(dir.path().join("a/scan.pdf"), b"%PDF-1.5").expect("write");
        let scan = load(dir.path()).expect("loads").digest;
        assert_ne!(scan, trusted, "a scan changed");
        let mut m = manifest();
        m["papers"]["p"]["title"] = json!("Mock 2");
        std::fs::write(dir.path().join(MANIFEST), m.to_string()).expect("write");
        assert_ne!(
            load(dir.path()).expect("loads").digest,
            scan,
            "the manifest changed"
        );
    }

    #[test]
    fn bad_sets_are_refused_with_the_place_at_fault() {
        type Change = Box<dyn FnOnce(&mut serde_json::Value)>;
        let cases: Vec<(Change, &str)> = vec![
            (
                Box::new(|m| m["schemaVersion"] = json!("v0")),
                "schemaVersion",
            ),
            (Box::new(|m| m["extra"] = json!(1)), "unknown field"),
            (Box::new(|m| m["papers"]["p"]["id"] = json!("nope")), "UUID"),
            (
                Box::new(|m| m["papers"]["p"]["questions"] = json!([])),
                "papers.p.questions",
            ),
            (Box::new(|m| m["scripts"] = json!([])), "scripts"),
            (
                Box::new(|m| m["scripts"][0]["paper"] = json!("q")),
                "no paper named",
            ),
            (Box::new(|m| m["scripts"][0]["files"] = json!([])), "files"),
            (
                Box::new(|m| m["scripts"][0]["files"][0]["path"] = json!("../scan.pdf")),
                "inside the reference folder",
            ),
            (
                Box::new(|m| m["scripts"][0]["files"][0]["path"] = json!("/etc/passwd")),
                "inside the reference folder",
            ),
            (
                Box::new(|m| m["scripts"][0]["files"][0]["path"] = json!("a/trusted.json")),
                "must end .pdf",
            ),
            (
                Box::new(|m| m["scripts"][0]["files"][0]["assetId"] = json!(SCHEME)),
                "unique",
            ),
            (
                Box::new(|m| m["scripts"][0]["trusted"] = json!("a/missing.json")),
                "cannot read",
            ),
            (
                Box::new(|m| m["scripts"][0]["files"][0]["path"] = json!("a")),
                "must end .pdf",
            ),
        ];
        for (change, expected) in cases {
            let e = refused(change);
            assert!(
                e.to_string().contains(expected),
                "{e} should say {expected}"
            );
        }
        // The bank's folder is checked when it is used.
        let mut m = manifest();
        m["bank"] = json!("../bank");
        let dir = folder(&m);
        let set = load(dir.path()).expect("loads");
        let e = set.bank_dir().expect_err("outside");
        assert!(e.to_string().contains("inside the reference folder"), "{e}");
    }

    #[test]
    fn the_shipped_set_loads_and_matches_its_published_schema() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let schema: serde_json::Value = serde_json::from_slice(
            &std::fs::read(root.join("schemas/calibration-reference-v1.schema.json"))
                .expect("schema"),
        )
        .expect("schema JSON");
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        let dir = root.join("examples/calibration");
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(MANIFEST)).expect("manifest"))
                .expect("manifest JSON");
        let errors: Vec<String> = validator
            .iter_errors(&manifest)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        let set = load(&dir).expect("the shipped set loads");
        assert!(set.manifest.papers.len() >= 3);
        assert_eq!(set.scripts.len(), 5);
        // The schema refuses what the loader refuses.
        let mut bad = manifest.clone();
        bad["scripts"][0]["extra"] = serde_json::json!(true);
        assert!(!validator.is_valid(&bad));
    }

    #[test]
    fn a_folder_without_a_manifest_or_with_broken_json_is_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let e = load(dir.path()).expect_err("no manifest");
        assert_eq!(e.path, MANIFEST);
        std::fs::write(dir.path().join(MANIFEST), b"{ not json").expect("write");
        let e = load(dir.path()).expect_err("broken");
        assert!(e.message.contains("not a reference manifest"), "{e}");
    }
}
