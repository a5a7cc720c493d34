//! The engine's [`Outcome`] as plain Python data, built directly.
//!
//! The result equals `json.loads(outcome.to_json())` exactly, keys in the same order; the test
//! suite checks that on every shared vector. Every engine struct is destructured exhaustively, so a
//! field added to the outcome fails to compile here instead of going missing in Python.

use examkit_engine::{
    CriterionReport, Decision, ErrorCode, FlagCode, Outcome, PartReport, QuestionReport, Rejection,
    Report, ReviewFlag, Score, Status, ValidationError,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString};

/// Builds the outcome dict.
pub fn outcome<'py>(py: Python<'py>, outcome: &Outcome) -> PyResult<Bound<'py, PyDict>> {
    match outcome {
        Outcome::Valid(report) => valid(py, report),
        Outcome::Invalid(rejection) => invalid(py, rejection),
    }
}

fn valid<'py>(py: Python<'py>, report: &Report) -> PyResult<Bound<'py, PyDict>> {
    let Report {
        valid,
        schema_version,
        assets_checked,
        status: st,
        score: sc,
        questions,
    } = report;
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "valid"), *valid)?;
    dict.set_item(intern!(py, "schemaVersion"), *schema_version)?;
    dict.set_item(intern!(py, "assetsChecked"), *assets_checked)?;
    dict.set_item(intern!(py, "status"), status(py, *st))?;
    dict.set_item(intern!(py, "score"), score(py, sc)?)?;
    let list = list_of(py, questions, question)?;
    dict.set_item(intern!(py, "questions"), list)?;
    Ok(dict)
}

fn question<'py>(py: Python<'py>, report: &QuestionReport) -> PyResult<Bound<'py, PyDict>> {
    let QuestionReport {
        label,
        status: st,
        score: sc,
        parts,
        criteria,
        review_flags,
    } = report;
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "label"), label)?;
    dict.set_item(intern!(py, "status"), status(py, *st))?;
    dict.set_item(intern!(py, "score"), score(py, sc)?)?;
    dict.set_item(intern!(py, "parts"), list_of(py, parts, part)?)?;
    dict.set_item(intern!(py, "criteria"), list_of(py, criteria, criterion)?)?;
    dict.set_item(
        intern!(py, "reviewFlags"),
        list_of(py, review_flags, review_flag)?,
    )?;
    Ok(dict)
}

fn part<'py>(py: Python<'py>, report: &PartReport) -> PyResult<Bound<'py, PyDict>> {
    let PartReport { id, score: sc } = report;
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "id"), id)?;
    dict.set_item(intern!(py, "score"), score(py, sc)?)?;
    Ok(dict)
}

fn criterion<'py>(py: Python<'py>, report: &CriterionReport) -> PyResult<Bound<'py, PyDict>> {
    let CriterionReport {
        id,
        code,
        submitted,
        effective,
        flags,
    } = report;
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "id"), id)?;
    dict.set_item(intern!(py, "code"), code)?;
    dict.set_item(intern!(py, "submitted"), decision(py, *submitted))?;
    dict.set_item(intern!(py, "effective"), decision(py, *effective))?;
    let list = PyList::new(py, flags.iter().map(|f| flag_code(py, *f)))?;
    dict.set_item(intern!(py, "flags"), list)?;
    Ok(dict)
}

fn review_flag<'py>(py: Python<'py>, flag: &ReviewFlag) -> PyResult<Bound<'py, PyDict>> {
    let ReviewFlag {
        code,
        criterion_id,
        path,
        message,
    } = flag;
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "code"), flag_code(py, *code))?;
    if let Some(id) = criterion_id {
        dict.set_item(intern!(py, "criterionId"), id)?;
    }
    dict.set_item(intern!(py, "path"), path)?;
    dict.set_item(intern!(py, "message"), message)?;
    Ok(dict)
}

fn invalid<'py>(py: Python<'py>, rejection: &Rejection) -> PyResult<Bound<'py, PyDict>> {
    let Rejection {
        valid,
        errors,
        truncated,
    } = rejection;
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "valid"), *valid)?;
    dict.set_item(intern!(py, "errors"), list_of(py, errors, error)?)?;
    dict.set_item(intern!(py, "truncated"), *truncated)?;
    Ok(dict)
}

fn error<'py>(py: Python<'py>, error: &ValidationError) -> PyResult<Bound<'py, PyDict>> {
    // `at` (the byte offset used for ordering) is not part of the outcome.
    let ValidationError {
        path,
        code,
        message,
        ..
    } = error;
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "path"), path)?;
    dict.set_item(intern!(py, "code"), error_code(py, *code))?;
    dict.set_item(intern!(py, "message"), message)?;
    Ok(dict)
}

/// A list of converted items, allocated once at its final size.
fn list_of<'py, T>(
    py: Python<'py>,
    items: &[T],
    convert: fn(Python<'py>, &T) -> PyResult<Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyList>> {
    let converted = items
        .iter()
        .map(|item| convert(py, item))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, converted)
}

fn score<'py>(py: Python<'py>, score: &Score) -> PyResult<Bound<'py, PyDict>> {
    let Score {
        awarded,
        possible,
        max,
    } = score;
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "awarded"), *awarded)?;
    dict.set_item(intern!(py, "possible"), *possible)?;
    dict.set_item(intern!(py, "max"), *max)?;
    Ok(dict)
}

fn status(py: Python<'_>, status: Status) -> &Bound<'_, PyString> {
    match status {
        Status::Completed => intern!(py, "completed"),
        Status::NeedsReview => intern!(py, "needs_review"),
    }
}

fn decision(py: Python<'_>, decision: Decision) -> &Bound<'_, PyString> {
    match decision {
        Decision::Awarded => intern!(py, "awarded"),
        Decision::Withheld => intern!(py, "withheld"),
        Decision::Uncertain => intern!(py, "uncertain"),
    }
}

/// One interned string per code, created on first use.
struct Codes<C: 'static>(&'static [C], PyOnceLock<Vec<Py<PyString>>>);

impl<C: Copy + Eq> Codes<C> {
    fn get<'py>(
        &self,
        py: Python<'py>,
        code: C,
        as_str: fn(C) -> &'static str,
    ) -> Bound<'py, PyString> {
        let strings = self.1.get_or_init(py, || {
            self.0
                .iter()
                .map(|&c| PyString::intern(py, as_str(c)).unbind())
                .collect()
        });
        match self.0.iter().position(|&c| c == code) {
            Some(index) => strings[index].bind(py).clone(),
            None => PyString::new(py, as_str(code)),
        }
    }
}

static ERROR_CODES: Codes<ErrorCode> = Codes(ErrorCode::ALL, PyOnceLock::new());
static FLAG_CODES: Codes<FlagCode> = Codes(FlagCode::ALL, PyOnceLock::new());

fn error_code(py: Python<'_>, code: ErrorCode) -> Bound<'_, PyString> {
    ERROR_CODES.get(py, code, ErrorCode::as_str)
}

fn flag_code(py: Python<'_>, code: FlagCode) -> Bound<'_, PyString> {
    FLAG_CODES.get(py, code, FlagCode::as_str)
}
