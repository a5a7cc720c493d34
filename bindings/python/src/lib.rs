//! The native half of the `examkit` Python package (`examkit._examkit`).
//!
//! It converts arguments, runs [`examkit_engine`] with the GIL released, and hands back the
//! engine's outcome: as its canonical JSON text, or as the same value built directly as Python
//! dicts and lists. No validation rule lives here: the assets list is written as JSON and read by
//! the engine's own reader, a `str` document is encoded exactly as
//! `document.encode("utf-8", "surrogatepass")` would (see `text`), and the Python half
//! (`python/examkit/__init__.py`) turns a parsed `dict` into JSON bytes.

mod assets;
mod text;
mod to_python;

use examkit_engine::{Asset, AssetsError, ErrorCode, FlagCode, Outcome};

/// The published JSON Schema of a submission, embedded at build time.
pub const SUBMISSION_SCHEMA_JSON: &str =
    include_str!("../../../schemas/service-marking-import-v1.schema.json");

/// Reads the optional assets list (JSON bytes) with the engine's own reader, so its errors are the
/// engine's.
pub fn read_assets(assets: Option<&[u8]>) -> Result<Option<Vec<Asset>>, AssetsError> {
    assets.map(examkit_engine::assets_from_json).transpose()
}

/// Validates a document against the optional assets and returns the engine's outcome.
pub fn outcome(document: &[u8], assets: Option<&[Asset]>) -> Outcome {
    examkit_engine::validate(document, assets)
}

/// Every error code and review flag as `(code, meaning, kind)`, errors first, each in the order
/// the engine documents them.
pub fn codes() -> Vec<(&'static str, &'static str, &'static str)> {
    let errors = ErrorCode::ALL
        .iter()
        .map(|c| (c.as_str(), c.meaning(), "error"));
    let flags = FlagCode::ALL
        .iter()
        .map(|c| (c.as_str(), c.meaning(), "review_flag"));
    errors.chain(flags).collect()
}

/// The extension module `examkit._examkit`.
#[pyo3::pymodule(name = "_examkit", gil_used = false)]
pub mod native {
    use pyo3::prelude::*;
    use pyo3::types::PyDict;

    /// The package version (the crate's).
    #[pymodule_export]
    pub const VERSION: &str = env!("CARGO_PKG_VERSION");

    /// The schema version the engine validates.
    #[pymodule_export]
    pub const SCHEMA_VERSION: &str = examkit_engine::SCHEMA_VERSION;

    /// The published JSON Schema of a submission, as text.
    #[pymodule_export]
    pub const SUBMISSION_SCHEMA_JSON: &str = super::SUBMISSION_SCHEMA_JSON;

    /// The largest document the engine accepts, in bytes.
    #[pymodule_export]
    pub const MAX_DOCUMENT_BYTES: usize = examkit_engine::limits::MAX_DOCUMENT_BYTES;

    fn assets_arg(
        assets: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Vec<examkit_engine::Asset>>> {
        super::assets::from_python(assets)
    }

    /// Writes an assets list (a list of dicts) as the JSON text the engine reads; `TypeError`
    /// when it is not a list of dicts of JSON values.
    #[pyfunction]
    pub fn assets_json(assets: &Bound<'_, PyAny>) -> PyResult<String> {
        super::assets::to_json(assets)
    }

    /// Validates `document` (JSON text as `str`, or UTF-8 JSON as `bytes` or `bytearray`) with
    /// the optional `assets` (a list of `{"id", "kind", "pageCount"}` dicts) and returns the
    /// canonical outcome JSON. Raises `TypeError` for a document of another type or when `assets`
    /// is not a list of dicts, and `ValueError`, with the engine's message, when the engine
    /// rejects the assets.
    #[pyfunction]
    #[pyo3(signature = (document, assets=None))]
    pub fn validate_json(
        py: Python<'_>,
        document: &Bound<'_, PyAny>,
        assets: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let document = super::text::document(document)?;
        let document = document.as_bytes();
        let assets = assets_arg(assets)?;
        Ok(py.detach(|| super::outcome(document, assets.as_deref()).to_json()))
    }

    /// Validates `document` like `validate_json` and returns the outcome as Python data: exactly
    /// `json.loads(validate_json(document, assets))`, built without the JSON round trip.
    #[pyfunction]
    #[pyo3(signature = (document, assets=None))]
    pub fn validate<'py>(
        py: Python<'py>,
        document: &Bound<'_, PyAny>,
        assets: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let document = super::text::document(document)?;
        let document = document.as_bytes();
        let assets = assets_arg(assets)?;
        let outcome = py.detach(|| super::outcome(document, assets.as_deref()));
        super::to_python::outcome(py, &outcome)
    }

    /// Validates `document` like `validate_json` and returns the engine's report for people
    /// (`examkit_engine::explain`): each criterion's outcome with its requirement, the marker's
    /// reason, conditions not met or uncertain, and the evidence quoted with its page.
    #[pyfunction]
    #[pyo3(signature = (document, assets=None))]
    pub fn explain(
        py: Python<'_>,
        document: &Bound<'_, PyAny>,
        assets: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let document = super::text::document(document)?;
        let document = document.as_bytes();
        let assets = assets_arg(assets)?;
        Ok(py.detach(|| {
            examkit_engine::explain(document, &super::outcome(document, assets.as_deref()))
        }))
    }

    /// Runs the engine `iterations` times on `document` (GIL released) and returns the total
    /// nanoseconds spent in `examkit_engine::validate` alone, or with `to_json` also in writing
    /// each outcome's canonical JSON: the native figures benchmarks compare the Python entry
    /// points with, measured in the same process and conditions.
    #[pyfunction]
    #[pyo3(signature = (document, assets=None, iterations=1, to_json=false))]
    pub fn time_engine(
        py: Python<'_>,
        document: &[u8],
        assets: Option<&Bound<'_, PyAny>>,
        iterations: u32,
        to_json: bool,
    ) -> PyResult<u128> {
        let assets = assets_arg(assets)?;
        Ok(py.detach(|| {
            let start = std::time::Instant::now();
            for _ in 0..iterations {
                let outcome = super::outcome(std::hint::black_box(document), assets.as_deref());
                if to_json {
                    std::hint::black_box(outcome.to_json());
                } else {
                    std::hint::black_box(outcome);
                }
            }
            start.elapsed().as_nanos()
        }))
    }

    /// Every error code and review flag as `(code, meaning, kind)` tuples; kind is `"error"` or
    /// `"review_flag"`.
    #[pyfunction]
    pub fn error_codes() -> Vec<(&'static str, &'static str, &'static str)> {
        super::codes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_assets_give_the_engine_error() {
        let Err(error) = read_assets(Some(b"{}")) else {
            panic!("an object is not a list")
        };
        assert!(matches!(error, AssetsError::Malformed(_)), "{error}");
        assert_eq!(read_assets(None), Ok(None));
        assert_eq!(read_assets(Some(b"[]")), Ok(Some(Vec::new())));
    }

    #[test]
    fn codes_cover_every_error_and_flag_once() {
        let all = codes();
        assert_eq!(all.len(), ErrorCode::ALL.len() + FlagCode::ALL.len());
        let mut names: Vec<_> = all.iter().map(|c| c.0).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert!(
            all.iter()
                .any(|c| c == &("invalid_json", ErrorCode::InvalidJson.meaning(), "error"))
        );
        assert!(
            all.iter()
                .any(|c| c.0 == "uncertain_decision" && c.2 == "review_flag")
        );
    }

    #[test]
    fn embedded_schema_is_draft_2020_12() {
        let schema: serde_json::Value =
            serde_json::from_str(SUBMISSION_SCHEMA_JSON).unwrap_or(serde_json::Value::Null);
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
}
