//! Reading the shared vector files of `tests/vectors/` (format: `tests/vectors/README.md`), for the
//! test binaries that run them. Each binary uses its own part of this module.
#![allow(dead_code)]

use std::path::PathBuf;

use examkit_engine::Asset;
use serde_json::Value;
use serde_json::value::RawValue;

/// The vector files, sorted by name.
pub fn vector_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors");
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

/// The `submission` member of a vector file, exactly as written.
#[derive(serde::Deserialize)]
struct RawSubmission<'a> {
    #[serde(borrow)]
    submission: Option<&'a RawValue>,
}

/// The bytes a vector gives the engine: the `submission` member's own text (key order and number
/// spelling kept) without whitespace, the `submissionText` string, or the decoded
/// `submissionBase64` bytes; then padded with spaces to `padToBytes` when given. `text` is the
/// whole file, `file` the same file parsed.
pub fn document_bytes(text: &str, file: &Value) -> Result<Vec<u8>, String> {
    let given: Vec<&str> = ["submission", "submissionText", "submissionBase64"]
        .into_iter()
        .filter(|key| file.get(*key).is_some())
        .collect();
    let mut bytes = match given.as_slice() {
        ["submission"] => {
            let raw: RawSubmission<'_> =
                serde_json::from_str(text).map_err(|e| format!("cannot read submission: {e}"))?;
            let raw = raw.submission.ok_or("submission is missing")?;
            minify(raw.get()).into_bytes()
        }
        ["submissionText"] => file["submissionText"]
            .as_str()
            .ok_or("\"submissionText\" must be a string")?
            .as_bytes()
            .to_vec(),
        ["submissionBase64"] => {
            let encoded = file["submissionBase64"]
                .as_str()
                .ok_or("\"submissionBase64\" must be a string")?;
            data_encoding::BASE64
                .decode(encoded.as_bytes())
                .map_err(|e| format!("submissionBase64 is not base64: {e}"))?
        }
        other => {
            return Err(format!(
                "needs exactly one of submission, submissionText, submissionBase64; has {other:?}"
            ));
        }
    };
    if let Some(pad) = file.get("padToBytes") {
        let pad = pad
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or("\"padToBytes\" must be a non-negative integer")?;
        if bytes.len() > pad {
            return Err(format!(
                "the document is {} bytes, more than padToBytes {pad}",
                bytes.len()
            ));
        }
        bytes.resize(pad, b' ');
    }
    Ok(bytes)
}

/// The vector's assets, read by the engine's own reader (`null` or absent: none).
pub fn assets(file: &Value) -> Result<Option<Vec<Asset>>, String> {
    match file.get("assets") {
        None | Some(Value::Null) => Ok(None),
        Some(list) => {
            let json =
                serde_json::to_vec(list).map_err(|e| format!("cannot serialise assets: {e}"))?;
            examkit_engine::assets_from_json(&json)
                .map(Some)
                .map_err(|e| format!("bad assets: {e}"))
        }
    }
}

/// Removes the whitespace between JSON tokens, leaving strings and numbers exactly as written.
pub fn minify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for ch in text.chars() {
        if in_string {
            out.push(ch);
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_string = false;
            }
        } else if !matches!(ch, ' ' | '\t' | '\n' | '\r') {
            in_string = ch == '"';
            out.push(ch);
        }
    }
    out
}
