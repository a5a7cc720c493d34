//! Reading a bank: its files strictly parsed, checked against the schema and the importer's rules
//! 1–10, and its asset files read. The only I/O is reading the bank's own files.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use uuid::Uuid;

use crate::error::{BankError, push_token, sort_errors};
use crate::loaded::AssetReader;
pub use crate::loaded::{AssetData, LoadedFile};
use crate::model::{BankFile, Facets, Question};

/// The bank schema, `schemas/question-bank.schema.json`, embedded.
pub const SCHEMA: &str = include_str!("../../../schemas/question-bank.schema.json");

/// A whole bank that passed every check.
#[derive(Debug, Clone, PartialEq)]
pub struct Bank {
    /// The files in name order.
    pub files: Vec<LoadedFile>,
    /// Every asset of every revision, by id.
    pub assets: BTreeMap<Uuid, AssetData>,
}

impl Bank {
    /// Every question with the file and index it was read from, in file order.
    pub fn questions(&self) -> impl Iterator<Item = (&LoadedFile, usize, &Question)> {
        self.files.iter().flat_map(|f| {
            f.file
                .questions
                .iter()
                .enumerate()
                .map(move |(i, q)| (f, i, q))
        })
    }

    /// The number of questions.
    pub fn question_count(&self) -> usize {
        self.files.iter().map(|f| f.file.questions.len()).sum()
    }

    /// The facet options declared across the files, merged, in first-declaration order.
    pub fn facets(&self) -> Facets {
        fn merge<T: Clone>(into: &mut Vec<T>, from: &[T], id: impl Fn(&T) -> &str) {
            for option in from {
                if !into.iter().any(|o| id(o) == id(option)) {
                    into.push(option.clone());
                }
            }
        }
        let mut out = Facets::default();
        for f in &self.files {
            if let Some(facets) = &f.file.facets {
                merge(&mut out.course, &facets.course, |o| &o.id);
                merge(&mut out.board, &facets.board, |o| &o.id);
                merge(&mut out.module, &facets.module, |o| &o.id);
                merge(&mut out.topic, &facets.topic, |o| &o.id);
                merge(&mut out.subtopic, &facets.subtopic, |o| &o.id);
            }
        }
        out
    }
}

/// A bank held in memory (for example embedded in a binary): files by name, and asset files by
/// their path relative to the bank folder (`assets/x.svg`).
#[derive(Debug, Clone, Default)]
pub struct MemoryBank {
    /// `(file name, bytes)` of each bank file.
    pub files: Vec<(String, Vec<u8>)>,
    /// Asset files by relative path.
    pub assets: BTreeMap<String, Vec<u8>>,
}

struct FolderAssets {
    dir: PathBuf,
}

impl AssetReader for FolderAssets {
    fn read(&self, file: &str) -> Result<Vec<u8>, String> {
        let segments: Vec<&str> = file.split('/').collect();
        if file.starts_with('/')
            || file.contains('\\')
            || segments
                .iter()
                .any(|s| s.is_empty() || *s == "." || *s == "..")
        {
            return Err("file must be a relative path with no . or .. segments".to_owned());
        }
        let root = self
            .dir
            .canonicalize()
            .map_err(|e| format!("cannot open the bank folder: {e}"))?;
        let path = root.join(file);
        let target = match path.canonicalize() {
            Ok(target) => target,
            Err(_) => return Err(format!("file {file:?} not found")),
        };
        if !target.starts_with(&root) {
            return Err("file lies outside the bank folder".to_owned());
        }
        let meta = std::fs::metadata(&target).map_err(|e| format!("cannot read {file:?}: {e}"))?;
        if !meta.is_file() {
            return Err(format!("file {file:?} not found"));
        }
        if meta.len() > crate::svg::MAX_ASSET_BYTES as u64 {
            return Err(format!(
                "SVG {file:?}: larger than {} bytes",
                crate::svg::MAX_ASSET_BYTES
            ));
        }
        std::fs::read(&target).map_err(|e| format!("cannot read {file:?}: {e}"))
    }
}

impl AssetReader for MemoryBank {
    fn read(&self, file: &str) -> Result<Vec<u8>, String> {
        self.assets
            .get(file)
            .cloned()
            .ok_or_else(|| format!("file {file:?} not found"))
    }
}

/// Reads the bank at `path` (a folder: every `*.json` directly in it, in name order; or one
/// file) and checks it completely. Every error is returned, in a stable order.
pub fn load(path: &Path) -> Result<Bank, Vec<BankError>> {
    load_with(path, &Facets::default())
}

/// As [`load`], with facet options already stored (`known`) counted as declared, so a single
/// question file can be checked against the facets of the bank it joins.
pub fn load_with(path: &Path, known: &Facets) -> Result<Bank, Vec<BankError>> {
    let shown = path.display().to_string();
    let (dir, files) = if path.is_dir() {
        let entries = match std::fs::read_dir(path) {
            Ok(entries) => entries,
            Err(e) => {
                return Err(vec![BankError::new(
                    shown,
                    "",
                    format!("cannot read the folder: {e}"),
                )]);
            }
        };
        let mut names: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
            .collect();
        names.sort();
        if names.is_empty() {
            return Err(vec![BankError::new(
                shown,
                "",
                "no *.json files in the bank folder",
            )]);
        }
        (path.to_path_buf(), names)
    } else if path.is_file() {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        (dir, vec![path.to_path_buf()])
    } else {
        return Err(vec![BankError::new(shown, "", "no such file or folder")]);
    };
    let mut raw = Vec::with_capacity(files.len());
    let mut errors = Vec::new();
    for file in &files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.display().to_string());
        match std::fs::read(file) {
            Ok(bytes) => raw.push((name, bytes)),
            Err(e) => errors.push(BankError::new(name, "", format!("cannot read: {e}"))),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    check_files(&raw, &FolderAssets { dir }, known)
}

/// Reads a bank held in memory, with the same checks as [`load_with`].
pub fn load_memory(bank: &MemoryBank, known: &Facets) -> Result<Bank, Vec<BankError>> {
    let mut files = bank.files.clone();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    if files.is_empty() {
        return Err(vec![BankError::new("", "", "no *.json files in the bank")]);
    }
    check_files(&files, bank, known)
}

fn check_files(
    raw: &[(String, Vec<u8>)],
    assets: &dyn AssetReader,
    known: &Facets,
) -> Result<Bank, Vec<BankError>> {
    let rank = |name: &str| {
        raw.iter()
            .position(|(n, _)| n == name)
            .unwrap_or(usize::MAX)
    };
    let mut errors = Vec::new();
    let mut files = Vec::with_capacity(raw.len());
    for (name, bytes) in raw {
        match parse_file(name, bytes) {
            Ok(file) => files.push(LoadedFile {
                name: name.clone(),
                file,
            }),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if !errors.is_empty() {
        sort_errors(&mut errors, rank);
        return Err(errors);
    }
    let mut asset_data = BTreeMap::new();
    crate::rules::check(&files, known, assets, &mut asset_data, &mut errors);
    if !errors.is_empty() {
        sort_errors(&mut errors, rank);
        return Err(errors);
    }
    Ok(Bank {
        files,
        assets: asset_data,
    })
}

/// Parses one bank file: strict JSON, the schema, then the model.
pub fn parse_file(name: &str, bytes: &[u8]) -> Result<BankFile, Vec<BankError>> {
    let value = strict_json(bytes)
        .map_err(|(pointer, message)| vec![BankError::new(name, pointer, message)])?;
    let mut errors: Vec<BankError> = schema_errors(&value)
        .into_iter()
        .map(|(pointer, message)| BankError::new(name, pointer, message))
        .collect();
    if !errors.is_empty() {
        sort_errors(&mut errors, |_| 0);
        return Err(errors);
    }
    serde_json::from_value::<BankFile>(value).map_err(|e| {
        vec![BankError::new(
            name,
            "",
            format!("does not match the bank model: {e}"),
        )]
    })
}

// ---------------------------------------------------------------------------------------------
// Strict JSON

/// Parses UTF-8 JSON without a byte order mark, refusing duplicate keys at any depth. On error,
/// returns the pointer where parsing stopped and a message.
pub fn strict_json(bytes: &[u8]) -> Result<Value, (String, String)> {
    if bytes.starts_with(&[0xef, 0xbb, 0xbf]) {
        return Err((
            String::new(),
            "invalid JSON: starts with a byte order mark".to_owned(),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        (
            String::new(),
            format!(
                "invalid JSON: not UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })?;
    let path = RefCell::new(Vec::new());
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let result = StrictSeed(&path)
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value));
    result.map_err(|e| {
        let pointer = path
            .borrow()
            .iter()
            .fold(String::new(), |p, token: &String| push_token(&p, token));
        (pointer, format!("invalid JSON: {e}"))
    })
}

struct StrictSeed<'a>(&'a RefCell<Vec<String>>);

impl<'de> DeserializeSeed<'de> for StrictSeed<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(StrictVisitor(self.0))
    }
}

struct StrictVisitor<'a>(&'a RefCell<Vec<String>>);

impl<'de> Visitor<'de> for StrictVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number out of range"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            self.0.borrow_mut().push(items.len().to_string());
            match seq.next_element_seed(StrictSeed(self.0))? {
                Some(item) => items.push(item),
                None => {
                    self.0.borrow_mut().pop();
                    return Ok(Value::Array(items));
                }
            }
            self.0.borrow_mut().pop();
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.borrow_mut().push(key.clone());
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            let value = map.next_value_seed(StrictSeed(self.0))?;
            self.0.borrow_mut().pop();
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

// ---------------------------------------------------------------------------------------------
// Schema

fn validator() -> Result<&'static Validator, String> {
    static VALIDATOR: OnceLock<Result<Validator, String>> = OnceLock::new();
    VALIDATOR
        .get_or_init(|| {
            let schema: Value = serde_json::from_str(SCHEMA).map_err(|e| e.to_string())?;
            jsonschema::draft202012::new(&schema).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Every schema error of a parsed bank file as `(pointer, message)`, with messages in the words
/// `check.py` uses.
pub fn schema_errors(value: &Value) -> Vec<(String, String)> {
    let validator = match validator() {
        Ok(v) => v,
        Err(e) => {
            return vec![(
                String::new(),
                format!("the bank schema does not compile: {e}"),
            )];
        }
    };
    let mut out = Vec::new();
    for error in validator.iter_errors(value) {
        describe(&error, &mut out);
    }
    out
}

fn describe(error: &ValidationError<'_>, out: &mut Vec<(String, String)>) {
    let path = error.instance_path().as_str().to_owned();
    let instance = error.instance();
    let message = match error.kind() {
        ValidationErrorKind::Type { kind } => match kind {
            TypeKind::Single(t) => format!("expected {t}"),
            TypeKind::Multiple(_) => "has the wrong type".to_owned(),
        },
        ValidationErrorKind::Constant { expected_value } => format!("must be {expected_value}"),
        ValidationErrorKind::Enum { options } => {
            let list = options
                .as_array()
                .map(|o| {
                    o.iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            format!("must be one of {list}")
        }
        ValidationErrorKind::MinLength { limit } => format!("shorter than {limit} characters"),
        ValidationErrorKind::MaxLength { limit } => format!("longer than {limit} characters"),
        ValidationErrorKind::Pattern { pattern } => format!("does not match {pattern}"),
        ValidationErrorKind::Minimum { limit } => format!("less than {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("greater than {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("not greater than {limit}"),
        ValidationErrorKind::MinItems { limit } => format!("fewer than {limit} items"),
        ValidationErrorKind::MaxItems { limit } => format!("more than {limit} items"),
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            out.push((push_token(&path, name), "required".to_owned()));
            return;
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            for name in unexpected {
                out.push((push_token(&path, name), "unknown field".to_owned()));
            }
            return;
        }
        ValidationErrorKind::UniqueItems => {
            if let Value::Array(items) = instance.as_ref() {
                for (i, item) in items.iter().enumerate() {
                    if items[..i].contains(item) {
                        out.push((push_token(&path, i), "repeats an earlier item".to_owned()));
                    }
                }
            }
            return;
        }
        ValidationErrorKind::OneOfNotValid { context } => {
            // Blocks: report against the alternative whose `type` constant matches.
            let type_pointer = push_token(&path, "type");
            let matching = context.iter().find(|branch| {
                !branch.iter().any(|e| {
                    e.instance_path().as_str() == type_pointer
                        && matches!(e.kind(), ValidationErrorKind::Constant { .. })
                })
            });
            match (matching, instance.get("type")) {
                (Some(branch), Some(_)) => {
                    for e in branch {
                        describe(e, out);
                    }
                }
                (None, Some(_)) => out.push((type_pointer, "unknown block type".to_owned())),
                _ => out.push((
                    path,
                    "matches 0 of the alternatives, expected exactly one".to_owned(),
                )),
            }
            return;
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            "matches several of the alternatives, expected exactly one".to_owned()
        }
        _ => error.to_string(),
    };
    out.push((path, message));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_json_refuses_duplicates_with_their_pointer() {
        let (pointer, message) =
            strict_json(br#"{"a": [{"b": 1, "b": 2}]}"#).expect_err("duplicate key");
        assert_eq!(pointer, "/a/0/b");
        assert!(
            message.starts_with("invalid JSON: duplicate key \"b\""),
            "{message}"
        );
        let (pointer, message) = strict_json(b"\xef\xbb\xbf{}").expect_err("bom");
        assert_eq!(
            (pointer.as_str(), message.as_str()),
            ("", "invalid JSON: starts with a byte order mark")
        );
        assert!(strict_json(b"{\"a\": \"\xff\"}").is_err());
        assert!(strict_json(b"{} {}").is_err());
        assert_eq!(
            strict_json(br#"{"a":[1,2.5,null,true,"x"]}"#).ok(),
            Some(serde_json::json!({"a":[1,2.5,null,true,"x"]}))
        );
    }
}
