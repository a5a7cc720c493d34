//! The `assets` argument: a Python list of `{"id", "kind", "pageCount"}` dicts, written as JSON
//! and read by the engine's own [`examkit_engine::assets_from_json`], so every complaint about
//! the values is the engine's. Only the shape of the argument is checked here: a list (or tuple)
//! of dicts whose values JSON can hold; anything else is a `TypeError`, as `json.dumps` would
//! raise, with the offending item named.
//!
//! The common case, a list of exact dicts holding exactly an `id` string that is a UUID, a `kind`
//! of `"work"` or `"scheme"` and an int `pageCount` that fits a `u32`, is read directly: those are
//! exactly the dicts whose JSON the engine's reader accepts, and the result is then checked by the
//! engine's own [`examkit_engine::check_assets`]. Anything else takes the JSON route, so every
//! error still comes from the engine's reader.

use examkit_engine::{Asset, AssetKind};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use uuid::Uuid;

/// How deep a value inside an asset may nest; an asset is flat, so this only stops runaways.
const MAX_DEPTH: usize = 32;

/// Converts the optional `assets` argument into the engine's assets.
pub fn from_python(assets: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<Asset>>> {
    let Some(assets) = assets.filter(|a| !a.is_none()) else {
        return Ok(None);
    };
    if let Some(read) = plain(assets) {
        return examkit_engine::check_assets(&read)
            .map(|()| Some(read))
            .map_err(|e| PyValueError::new_err(e.to_string()));
    }
    let json = to_json(assets)?;
    crate::read_assets(Some(json.as_bytes())).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The assets read directly when the argument is a list of plain, well-formed asset dicts (see the
/// module documentation); `None` sends it down the JSON route.
fn plain(assets: &Bound<'_, PyAny>) -> Option<Vec<Asset>> {
    let list = assets.cast_exact::<PyList>().ok()?;
    let py = assets.py();
    let mut read = Vec::with_capacity(list.len());
    for item in list.iter() {
        let dict = item.cast_exact::<PyDict>().ok()?;
        if dict.len() != 3 {
            return None;
        }
        let field = |name| dict.get_item(name).ok().flatten();
        let id = field(intern!(py, "id"))?;
        let id = id
            .cast_exact::<PyString>()
            .ok()?
            .to_cow()
            .ok()?
            .parse::<Uuid>()
            .ok()?;
        let kind = field(intern!(py, "kind"))?;
        let kind = match kind.cast_exact::<PyString>().ok()?.to_cow().ok()?.as_ref() {
            "work" => AssetKind::Work,
            "scheme" => AssetKind::Scheme,
            _ => return None,
        };
        let pages = field(intern!(py, "pageCount"))?;
        if !pages.is_exact_instance_of::<PyInt>() {
            return None;
        }
        let page_count = pages.extract::<u32>().ok()?;
        read.push(Asset {
            id,
            kind,
            page_count,
        });
    }
    Some(read)
}

/// The assets list as JSON text (compact; strings UTF-8, not escaped to ASCII).
pub fn to_json(assets: &Bound<'_, PyAny>) -> PyResult<String> {
    let items: Vec<Bound<'_, PyAny>> = if let Ok(list) = assets.cast::<PyList>() {
        list.iter().collect()
    } else if let Ok(tuple) = assets.cast::<PyTuple>() {
        tuple.iter().collect()
    } else {
        return Err(PyTypeError::new_err(format!(
            "assets must be None or a list of {{\"id\", \"kind\", \"pageCount\"}} dicts, not {}",
            type_name(assets)
        )));
    };
    let mut out = String::with_capacity(64 * items.len() + 2);
    out.push('[');
    for (index, item) in items.iter().enumerate() {
        if !item.is_instance_of::<PyDict>() {
            return Err(PyTypeError::new_err(format!(
                "assets[{index}] must be a dict with \"id\", \"kind\" and \"pageCount\", not {}",
                type_name(item)
            )));
        }
        if index > 0 {
            out.push(',');
        }
        write_value(item, &mut out, 0).map_err(|e| {
            let py = item.py();
            let prefix = format!("assets[{index}] cannot be serialised as JSON: ");
            if e.is_instance_of::<PyTypeError>(py) {
                PyTypeError::new_err(prefix + &e.value(py).to_string())
            } else {
                PyValueError::new_err(prefix + &e.value(py).to_string())
            }
        })?;
    }
    out.push(']');
    Ok(out)
}

fn write_value(value: &Bound<'_, PyAny>, out: &mut String, depth: usize) -> PyResult<()> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err("values nest too deeply"));
    }
    if value.is_none() {
        out.push_str("null");
    } else if let Ok(flag) = value.cast::<PyBool>() {
        out.push_str(if flag.is_true() { "true" } else { "false" });
    } else if value.is_exact_instance_of::<PyInt>() {
        out.push_str(&value.repr()?.to_cow()?);
    } else if value.is_instance_of::<PyInt>() {
        // A subclass (an IntEnum, say): its int value, as json.dumps writes it.
        let int = value.py().get_type::<PyInt>().call1((value,))?;
        out.push_str(&int.repr()?.to_cow()?);
    } else if let Ok(float) = value.cast::<PyFloat>() {
        let number = float.value();
        if !number.is_finite() {
            return Err(PyValueError::new_err(format!(
                "out of range float values are not JSON compliant: {number}"
            )));
        }
        out.push_str(&float.repr()?.to_cow()?);
    } else if let Ok(text) = value.cast::<PyString>() {
        write_string(&text.to_cow()?, out);
    } else if let Ok(dict) = value.cast::<PyDict>() {
        out.push('{');
        for (index, (key, item)) in dict.iter().enumerate() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "keys must be str, not {}",
                    type_name(&key)
                )));
            };
            if index > 0 {
                out.push(',');
            }
            write_string(&key.to_cow()?, out);
            out.push(':');
            write_value(&item, out, depth + 1)?;
        }
        out.push('}');
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        out.push('[');
        for (index, item) in value.try_iter()?.enumerate() {
            if index > 0 {
                out.push(',');
            }
            write_value(&item?, out, depth + 1)?;
        }
        out.push(']');
    } else {
        return Err(PyTypeError::new_err(format!(
            "Object of type {} is not JSON serializable",
            type_name(value)
        )));
    }
    Ok(())
}

fn write_string(text: &str, out: &mut String) {
    // serde_json's escaping of a plain string cannot fail.
    match serde_json::to_string(text) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| String::from("object"))
}
