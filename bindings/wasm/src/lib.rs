//! # examkit-wasm
//!
//! The examkit engine for JavaScript (Node and browsers), built with `wasm-bindgen`. This crate is a
//! thin adapter: it converts arguments, calls [`examkit_engine`] and hands back the engine's outcome.
//! No validation or scoring rule lives here, so a document gets the same outcome, byte for byte, as
//! from the CLI, the Python package and the HTTP service.
//!
//! Exported to JavaScript:
//!
//! | export | returns |
//! | --- | --- |
//! | `validate(document: string, assets?: Asset[])` | the outcome as an object (`Outcome`) |
//! | `validateJson(document: string, assets?: Asset[])` | the canonical outcome JSON (`Outcome::to_json`) |
//! | `validateBytes(document: Uint8Array, assets?: Asset[])` | the outcome of raw bytes (any encoding) |
//! | `validateBytesJson(document: Uint8Array, assets?: Asset[])` | canonical JSON of raw bytes |
//! | `explain(document: string, assets?: Asset[])` | the engine's human-readable report |
//! | `errorCodes()`, `flagCodes()` | every error code / review flag with its meaning |
//! | `schemaVersion()` | `"service-marking-import-v1"` (also `SCHEMA_VERSION` in the package) |
//!
//! A document given as a string is validated as its UTF-8 bytes. A JavaScript string can hold a lone
//! UTF-16 surrogate, which has no UTF-8 form; such a code unit is encoded the way WTF-8 does, which is
//! not UTF-8, so the engine reports `invalid_json` exactly as it does for invalid bytes from a file.
//!
//! Assets are serialised with `JSON.stringify` and read by [`examkit_engine::assets_from_json`]; a
//! malformed list is not a submission defect, so it throws an `Error` carrying the engine's message.
//! A document that is not a string (or not a `Uint8Array` for the bytes functions) throws a
//! `TypeError`.

use examkit_engine::{Asset, ErrorCode, FlagCode, Outcome};
use js_sys::{JSON, JsString, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// The TypeScript types of the values this package takes and returns, emitted into the generated
/// `.d.ts` so that `validate` returns a real `Outcome` rather than `any`.
///
/// The `ErrorCode` and `FlagCode` unions are checked against the engine's lists by this crate's
/// tests, so they cannot drift from [`ErrorCode::ALL`] and [`FlagCode::ALL`].
// Read at compile time by the section below, which rustc does not count as a use.
#[allow(dead_code)]
const TYPESCRIPT_TYPES: &str = r#"
/** An asset's role: completed student work, or a mark scheme. */
export type AssetKind = "work" | "scheme";

/** An uploaded file of the import, as the validator knows it. */
export interface Asset {
  /** The asset id: a canonical lowercase hyphenated UUID. */
  id: string;
  /** Completed student work, or a mark scheme. */
  kind: AssetKind;
  /** Pages found when the file was inspected (an integer, at least 1). */
  pageCount: number;
}

/** Why a submission is invalid: a stable identifier. */
export type ErrorCode =
  | "invalid_json"
  | "nesting_too_deep"
  | "payload_too_large"
  | "unknown_field"
  | "required"
  | "type"
  | "const"
  | "enum"
  | "pattern"
  | "format"
  | "min_length"
  | "max_length"
  | "min_items"
  | "max_items"
  | "unique_items"
  | "minimum"
  | "maximum"
  | "duplicate_label"
  | "duplicate_part_id"
  | "duplicate_criterion_id"
  | "unknown_part"
  | "part_max_mismatch"
  | "unknown_dependency"
  | "self_dependency"
  | "cross_question_dependency"
  | "dependency_cycle"
  | "dependent_code_without_dependencies"
  | "condition_mode_required"
  | "missing_decision"
  | "duplicate_decision"
  | "unknown_criterion"
  | "condition_check_missing"
  | "condition_check_duplicate"
  | "condition_index_out_of_range"
  | "invalid_page_id"
  | "page_not_selected"
  | "unknown_asset"
  | "page_out_of_range"
  | "asset_role_mismatch"
  | "missing_page_role"
  | "box_out_of_bounds"
  | "box_not_positive"
  | "model_required"
  | "coverage_mismatch";

/** Why a valid submission's question needs a person's review: a stable identifier. */
export type FlagCode =
  | "uncertain_decision"
  | "condition_conflict"
  | "condition_uncertain"
  | "dependency_withheld"
  | "dependency_uncertain"
  | "reported_score_mismatch"
  | "completion_claim_overridden";

/** A one-mark decision. */
export type Decision = "awarded" | "withheld" | "uncertain";

/** A question's (or the submission's) status. */
export type Status = "completed" | "needs_review";

/** One reason a submission is invalid. */
export interface ValidationError {
  /** RFC 6901 JSON Pointer into the submitted document ("" is the whole document). */
  path: string;
  /** The stable code. */
  code: ErrorCode;
  /** A sentence for people; not stable. */
  message: string;
}

/** One reason a question needs review. */
export interface ReviewFlag {
  /** The stable flag code. */
  code: FlagCode;
  /** The criterion concerned; absent for question-level flags. */
  criterionId?: string;
  /** RFC 6901 JSON Pointer to what raised the flag. */
  path: string;
  /** A sentence for people, naming the cause. */
  message: string;
}

/** A score range: awarded <= possible <= max. `possible` is never a confirmed score. */
export interface Score {
  /** Marks effectively awarded. */
  awarded: number;
  /** Awarded plus effectively uncertain marks. */
  possible: number;
  /** The number of one-mark criteria. */
  max: number;
}

/** A part's score range. */
export interface PartReport {
  /** The part id. */
  id: string;
  /** The part's score range. */
  score: Score;
}

/** A criterion's submitted and effective outcome. */
export interface CriterionReport {
  /** The criterion id. */
  id: string;
  /** The mark code, such as "dM1". */
  code: string;
  /** The outcome the marker submitted. */
  submitted: Decision;
  /** The outcome after conditions and dependencies. */
  effective: Decision;
  /** The review flags of this criterion, in the order the scoring steps raised them. */
  flags: FlagCode[];
}

/** A question's computed result. */
export interface QuestionReport {
  /** The question's label. */
  label: string;
  /** "completed" when the question has no review flag. */
  status: Status;
  /** The question's score range. */
  score: Score;
  /** One entry per rubric part, in rubric order. */
  parts: PartReport[];
  /** One entry per criterion, in rubric order. */
  criteria: CriterionReport[];
  /** Every review flag of the question. */
  reviewFlags: ReviewFlag[];
}

/** The outcome of a valid submission: computed scores and review flags. */
export interface ValidOutcome {
  valid: true;
  schemaVersion: "service-marking-import-v1";
  /** Whether page references were checked against the import's assets. */
  assetsChecked: boolean;
  /** "needs_review" when any question needs review, else "completed". */
  status: Status;
  /** The whole submission's score range. */
  score: Score;
  /** One entry per question, in submission order. */
  questions: QuestionReport[];
}

/** The outcome of an invalid submission: every error, in document order. */
export interface InvalidOutcome {
  valid: false;
  /** Every error (at most 1,000), in document order. */
  errors: ValidationError[];
  /** Whether errors past the first 1,000 were left out. */
  truncated: boolean;
}

/** The validation outcome, discriminated on `valid`. */
export type Outcome = ValidOutcome | InvalidOutcome;

/** An error code and its one-line meaning, as published in schemas/error-codes.json. */
export interface ErrorCodeInfo {
  code: ErrorCode;
  meaning: string;
}

/** A review flag and its one-line meaning, as published in schemas/error-codes.json. */
export interface FlagCodeInfo {
  code: FlagCode;
  meaning: string;
}
"#;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT_SECTION: &'static str = TYPESCRIPT_TYPES;

#[wasm_bindgen]
extern "C" {
    /// The assets argument as JavaScript passes it: expected to be an `Asset[]`, checked by the
    /// engine after `JSON.stringify`.
    #[wasm_bindgen(typescript_type = "Asset[]")]
    pub type AssetList;

    /// A JavaScript string, seen through the methods this crate needs beyond `js_sys::JsString`.
    #[wasm_bindgen(js_name = String)]
    type Text;

    /// `String.prototype.isWellFormed`: whether a string has no lone surrogate.
    #[wasm_bindgen(method, catch, js_name = isWellFormed)]
    fn is_well_formed(this: &Text) -> Result<bool, JsValue>;
}

/// Validates a submission given as text and returns the outcome as a JavaScript object.
///
/// Throws a `TypeError` when `document` is not a string and an `Error` when `assets` is malformed.
#[wasm_bindgen(unchecked_return_type = "Outcome")]
pub fn validate(
    #[wasm_bindgen(unchecked_param_type = "string")] document: JsValue,
    assets: Option<AssetList>,
) -> Result<JsValue, JsValue> {
    let outcome = run(&text_bytes(&document)?, assets)?;
    outcome_value(&outcome)
}

/// Validates a submission given as text and returns the canonical outcome JSON, byte-identical to
/// the engine's `Outcome::to_json()` and to the CLI's output.
#[wasm_bindgen(js_name = validateJson)]
pub fn validate_json(
    #[wasm_bindgen(unchecked_param_type = "string")] document: JsValue,
    assets: Option<AssetList>,
) -> Result<String, JsValue> {
    Ok(run(&text_bytes(&document)?, assets)?.to_json())
}

/// Validates a submission given as raw bytes (for example a file's contents, which may not be
/// UTF-8) and returns the outcome as a JavaScript object.
#[wasm_bindgen(js_name = validateBytes, unchecked_return_type = "Outcome")]
pub fn validate_bytes(
    #[wasm_bindgen(unchecked_param_type = "Uint8Array")] document: JsValue,
    assets: Option<AssetList>,
) -> Result<JsValue, JsValue> {
    let outcome = run(&raw_bytes(&document)?, assets)?;
    outcome_value(&outcome)
}

/// Validates a submission given as raw bytes and returns the canonical outcome JSON.
#[wasm_bindgen(js_name = validateBytesJson)]
pub fn validate_bytes_json(
    #[wasm_bindgen(unchecked_param_type = "Uint8Array")] document: JsValue,
    assets: Option<AssetList>,
) -> Result<String, JsValue> {
    Ok(run(&raw_bytes(&document)?, assets)?.to_json())
}

/// Validates a submission given as text and returns the engine's human-readable report: per
/// question, each criterion's submitted and effective outcome with, beneath it, the criterion's
/// requirement, the marker's reason, any condition not met or uncertain, the evidence quoted with
/// its page (each text on one line, cut at 100 characters) and every flag; for an invalid
/// submission, its errors. The same text as `examkit validate --explain`.
#[wasm_bindgen]
pub fn explain(
    #[wasm_bindgen(unchecked_param_type = "string")] document: JsValue,
    assets: Option<AssetList>,
) -> Result<String, JsValue> {
    let bytes = text_bytes(&document)?;
    let outcome = run(&bytes, assets)?;
    Ok(examkit_engine::explain(&bytes, &outcome))
}

/// Every error code the engine can emit, with its one-line meaning, in documented order.
#[wasm_bindgen(js_name = errorCodes, unchecked_return_type = "ErrorCodeInfo[]")]
pub fn error_codes() -> Result<JsValue, JsValue> {
    parse_json(&error_codes_json())
}

/// Every review flag the engine can raise, with its one-line meaning, in documented order.
#[wasm_bindgen(js_name = flagCodes, unchecked_return_type = "FlagCodeInfo[]")]
pub fn flag_codes() -> Result<JsValue, JsValue> {
    parse_json(&flag_codes_json())
}

/// The schema version this engine validates: `"service-marking-import-v1"`.
#[wasm_bindgen(js_name = schemaVersion, unchecked_return_type = "\"service-marking-import-v1\"")]
pub fn schema_version() -> String {
    examkit_engine::SCHEMA_VERSION.to_owned()
}

/// Reads the assets argument and runs the engine.
fn run(document: &[u8], assets: Option<AssetList>) -> Result<Outcome, JsValue> {
    let assets = match assets {
        None => None,
        Some(list) => Some(read_assets(list.as_ref())?),
    };
    Ok(examkit_engine::validate(document, assets.as_deref()))
}

/// Serialises the assets argument with `JSON.stringify` and lets the engine read it.
fn read_assets(value: &JsValue) -> Result<Vec<Asset>, JsValue> {
    // `JSON.stringify` throws on cycles and BigInts, and yields `undefined` for a function.
    let text = JSON::stringify(value)
        .map_err(|thrown| {
            assets_error(&format!(
                "assets could not be serialised: {}",
                describe(&thrown)
            ))
        })?
        .as_string()
        .ok_or_else(|| {
            assets_error("assets must be a JSON array of {\"id\", \"kind\", \"pageCount\"} objects")
        })?;
    examkit_engine::assets_from_json(text.as_bytes()).map_err(|e| assets_error(&e.to_string()))
}

/// The UTF-8 bytes of a string argument; lone surrogates are kept as WTF-8 so the engine rejects them.
fn text_bytes(document: &JsValue) -> Result<Vec<u8>, JsValue> {
    let Some(string) = document.dyn_ref::<JsString>() else {
        return Err(type_error(&format!(
            "document must be a string (the submission's JSON text), not {}",
            js_type_name(document)
        )));
    };
    // `isWellFormed` is missing only on old engines; checking every code unit is then the fallback.
    let well_formed = match string.unchecked_ref::<Text>().is_well_formed() {
        Ok(answer) => answer,
        Err(_) => string.is_valid_utf16(),
    };
    if well_formed {
        // A well-formed string converts to UTF-8 without loss.
        Ok(string
            .as_string()
            .map(String::into_bytes)
            .unwrap_or_default())
    } else {
        Ok(wtf8_from_utf16(string.iter()))
    }
}

/// The bytes of a `Uint8Array` argument.
fn raw_bytes(document: &JsValue) -> Result<Vec<u8>, JsValue> {
    match document.dyn_ref::<Uint8Array>() {
        Some(bytes) => Ok(bytes.to_vec()),
        None => Err(type_error(&format!(
            "document must be a Uint8Array (the submission's bytes), not {}",
            js_type_name(document)
        ))),
    }
}

/// The outcome as a JavaScript object, parsed from the canonical JSON so that key order and numbers
/// are exactly those of every other surface.
fn outcome_value(outcome: &Outcome) -> Result<JsValue, JsValue> {
    parse_json(&outcome.to_json())
}

/// `JSON.parse` of JSON this crate produced.
fn parse_json(text: &str) -> Result<JsValue, JsValue> {
    JSON::parse(text)
}

/// Encodes UTF-16 code units as UTF-8, writing each lone surrogate as its three-byte WTF-8 form
/// (which is not valid UTF-8).
fn wtf8_from_utf16(units: impl IntoIterator<Item = u16>) -> Vec<u8> {
    let mut out = Vec::new();
    for decoded in char::decode_utf16(units) {
        match decoded {
            Ok(c) => {
                let mut buffer = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            }
            Err(lone) => {
                let unit = lone.unpaired_surrogate();
                out.extend_from_slice(&[
                    0xE0 | (unit >> 12) as u8,
                    0x80 | ((unit >> 6) & 0x3F) as u8,
                    0x80 | (unit & 0x3F) as u8,
                ]);
            }
        }
    }
    out
}

/// `[{"code", "meaning"}]` for every error code.
fn error_codes_json() -> String {
    codes_json(ErrorCode::ALL.iter().map(|c| (c.as_str(), c.meaning())))
}

/// `[{"code", "meaning"}]` for every review flag.
fn flag_codes_json() -> String {
    codes_json(FlagCode::ALL.iter().map(|c| (c.as_str(), c.meaning())))
}

fn codes_json<'a>(codes: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let list: Vec<serde_json::Value> = codes
        .map(|(code, meaning)| serde_json::json!({ "code": code, "meaning": meaning }))
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// A JavaScript `TypeError`.
fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

/// A JavaScript `Error` for a malformed assets list.
fn assets_error(message: &str) -> JsValue {
    js_sys::Error::new(message).into()
}

/// A short description of a thrown JavaScript value.
fn describe(thrown: &JsValue) -> String {
    match thrown.dyn_ref::<js_sys::Error>() {
        Some(error) => String::from(error.message()),
        None => thrown
            .as_string()
            .unwrap_or_else(|| String::from("unknown error")),
    }
}

/// The JavaScript type of a value, for messages (`null` and arrays named as such).
fn js_type_name(value: &JsValue) -> String {
    if value.is_null() {
        String::from("null")
    } else if js_sys::Array::is_array(value) {
        String::from("an array")
    } else {
        value
            .js_typeof()
            .as_string()
            .unwrap_or_else(|| String::from("unknown"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The members of `export type <name> = | "a" | "b";` in the TypeScript section.
    fn union_members(name: &str) -> Vec<String> {
        let start = TYPESCRIPT_TYPES
            .find(&format!("export type {name} ="))
            .unwrap_or_else(|| panic!("no type {name}"));
        let rest = &TYPESCRIPT_TYPES[start..];
        let end = rest.find(';').unwrap_or(rest.len());
        rest[..end]
            .split('"')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect()
    }

    #[test]
    fn error_code_union_is_the_engine_list() {
        let engine: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(union_members("ErrorCode"), engine);
    }

    #[test]
    fn flag_code_union_is_the_engine_list() {
        let engine: Vec<&str> = FlagCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(union_members("FlagCode"), engine);
    }

    #[test]
    fn schema_version_literal_matches_the_engine() {
        let literal = format!("schemaVersion: \"{}\";", examkit_engine::SCHEMA_VERSION);
        assert!(TYPESCRIPT_TYPES.contains(&literal));
    }

    #[test]
    fn wtf8_keeps_valid_text_as_utf8() {
        let text = "é€😀 plain";
        assert_eq!(wtf8_from_utf16(text.encode_utf16()), text.as_bytes());
    }

    #[test]
    fn wtf8_encodes_lone_surrogates_as_invalid_utf8() {
        let bytes = wtf8_from_utf16([0x22, 0xD800, 0x22, 0xDFFF]);
        assert_eq!(bytes, [0x22, 0xED, 0xA0, 0x80, 0x22, 0xED, 0xBF, 0xBF]);
        assert!(std::str::from_utf8(&bytes).is_err());
    }

    #[test]
    fn code_lists_are_complete_json() {
        let errors: Vec<serde_json::Value> =
            serde_json::from_str(&error_codes_json()).unwrap_or_default();
        assert_eq!(errors.len(), ErrorCode::ALL.len());
        assert_eq!(errors[0]["code"], "invalid_json");
        assert_eq!(errors[0]["meaning"], ErrorCode::InvalidJson.meaning());
        let flags: Vec<serde_json::Value> =
            serde_json::from_str(&flag_codes_json()).unwrap_or_default();
        assert_eq!(flags.len(), FlagCode::ALL.len());
    }
}
