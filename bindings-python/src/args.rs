//! Python arguments to the core's types. Documents (mappings, lists,
//! nested values) are read by the core's reader over `crate::read`; scalar
//! arguments are read here, and anything the core cannot receive (a `str`
//! where an integer is expected, a lone surrogate) is the core's
//! `invalid_argument` error naming the argument — never a silent coercion.

use std::time::{SystemTime, UNIX_EPOCH};

use ojs_retry::{Error, Jitter, Value};
use pyo3::exceptions::{PyException, PyMemoryError, PyOverflowError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyString};

use crate::errors::{CoreResult, bad_argument};

/// Whether an exception Python code raised while an argument was read must
/// reach the caller as itself rather than become a fault of the argument:
/// an interrupt or exit (`KeyboardInterrupt`, `SystemExit`: not an
/// `Exception`) or a `MemoryError`.
pub(crate) fn must_propagate(py: Python<'_>, e: &PyErr) -> bool {
    !e.is_instance_of::<PyException>(py) || e.is_instance_of::<PyMemoryError>(py)
}

/// `Ok(None)` for an exception that may become a fault, else the exception.
fn unless_fatal<T>(py: Python<'_>, r: PyResult<T>) -> PyResult<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if must_propagate(py, &e) => Err(e),
        Err(_) => Ok(None),
    }
}

/// A short description of a Python value for messages: its type and repr
/// (`?` when its `__repr__` raises; an interrupt there propagates).
pub(crate) fn describe(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = obj.py();
    let ty = unless_fatal(py, obj.get_type().name().map(|n| n.to_string()))?
        .unwrap_or_else(|| "object".to_owned());
    let repr =
        unless_fatal(py, obj.repr().map(|r| r.to_string()))?.unwrap_or_else(|| String::from("?"));
    let short: String = repr.chars().take(64).collect();
    let ellipsis = if short.len() < repr.len() { "..." } else { "" };
    Ok(format!("{ty} {short}{ellipsis}"))
}

/// A non-negative integer argument (an `int`, or a `float` with an
/// integral value, as in JSON); the core's `uint_from_f64` decides the
/// range, 0 ..= 2^53 − 1.
pub(crate) fn uint(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    let py = obj.py();
    // `bool` is an `int` subclass in Python, but `True` is not a count.
    if !obj.is_instance_of::<PyBool>() {
        if let Ok(i) = obj.cast::<PyInt>() {
            return ojs_retry::uint_from_f64(field, int_as_f64(i)?).py(py);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            return ojs_retry::uint_from_f64(field, f.value()).py(py);
        }
    }
    Err(bad_argument(
        field,
        format!("expected an integer, found {}", describe(obj)?),
    ))
    .py(py)
}

/// An `int` as the nearest double: exact up to 2^53, so every integer the
/// core accepts keeps its value and every larger one stays out of range
/// (an `int` beyond a double's range is an infinity of its sign). Read by
/// `int`'s own methods: a subclass's `__float__` or `__lt__` is not asked.
#[allow(clippy::cast_precision_loss)] // exact below 2^53, > 2^53 − 1 above
fn int_as_f64(i: &Bound<'_, PyInt>) -> PyResult<f64> {
    if let Ok(n) = i.extract::<u64>() {
        return Ok(n as f64);
    }
    let int = i.py().get_type::<PyInt>();
    match int.call_method1("__float__", (i,)) {
        Ok(x) => x.extract::<f64>(),
        Err(e) if e.is_instance_of::<PyOverflowError>(i.py()) => {
            if int.call_method1("__lt__", (i, 0))?.is_truthy()? {
                Ok(f64::NEG_INFINITY)
            } else {
                Ok(f64::INFINITY)
            }
        }
        Err(e) => Err(e),
    }
}

/// A `bool` argument (not a truthy value: `1` or `"yes"` is refused).
pub(crate) fn boolean(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<bool> {
    match obj.cast::<PyBool>() {
        Ok(b) => Ok(b.is_true()),
        Err(_) => Err(bad_argument(
            field,
            format!("expected a boolean, found {}", describe(obj)?),
        ))
        .py(obj.py()),
    }
}

/// A `str` argument holding valid Unicode (a lone surrogate cannot be
/// UTF-8).
pub(crate) fn text(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<String> {
    let py = obj.py();
    let Ok(s) = obj.cast::<PyString>() else {
        return Err(bad_argument(
            field,
            format!("expected a string, found {}", describe(obj)?),
        ))
        .py(py);
    };
    match s.to_str() {
        Ok(t) => Ok(t.to_owned()),
        Err(_) => Err(bad_argument(
            field,
            "expected a valid Unicode string, found one with a lone surrogate".to_owned(),
        ))
        .py(py),
    }
}

/// A `str` argument, refused when it has more code points than a string
/// may have bytes (each is at least one byte) before its UTF-8 is asked for.
pub(crate) fn short_str<'py>(
    obj: &Bound<'py, PyAny>,
    field: &str,
) -> PyResult<Bound<'py, PyString>> {
    let py = obj.py();
    let Ok(s) = obj.cast::<PyString>() else {
        return Err(bad_argument(
            field,
            format!("expected a string, found {}", describe(obj)?),
        ))
        .py(py);
    };
    let max = ojs_retry::limits::MAX_STRING_BYTES;
    if s.len()? > max {
        return Err(bad_argument(
            field,
            format!("expected a string of at most {max} bytes, found a longer one"),
        ))
        .py(py);
    }
    Ok(s.clone())
}

/// The UTF-8 of a `str`, borrowed (a lone surrogate cannot be UTF-8).
pub(crate) fn borrow_str<'a>(s: &'a Bound<'_, PyString>, field: &str) -> PyResult<&'a str> {
    s.to_str()
        .map_err(|_| {
            bad_argument(
                field,
                "expected a valid Unicode string, found one with a lone surrogate".to_owned(),
            )
        })
        .py(s.py())
}

/// An optional `str` argument (`None` is absent).
pub(crate) fn opt_text(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<String>> {
    given(obj).map(|o| text(o, field)).transpose()
}

/// `None` given for an optional keyword is the same as leaving it out.
pub(crate) fn given<'a, 'py>(obj: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    obj.filter(|o| !o.is_none())
}

/// The jitter keywords: at most one of `u`, `seed`, `key` (the core's
/// `Jitter::from_parts` decides); `None` when none is given.
pub(crate) fn jitter(
    u: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    key: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Jitter>> {
    let (u, seed, key) = (given(u), given(seed), given(key));
    let Some(py) = u.or(seed).or(key).map(Bound::py) else {
        return Ok(None);
    };
    let u = u.map(|u| unit(u)).transpose()?;
    let seed = seed.map(|s| seed_of(s)).transpose()?;
    let key = opt_text(key, "key")?;
    Jitter::from_parts(u, seed, key).py(py).map(Some)
}

/// As [`jitter`], defaulting to OS entropy.
pub(crate) fn jitter_or_entropy(
    u: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    key: Option<&Bound<'_, PyAny>>,
) -> PyResult<Jitter> {
    Ok(jitter(u, seed, key)?.unwrap_or(Jitter::Entropy))
}

/// `u`: a number (the core checks `[0, 1)`).
fn unit(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    if !obj.is_instance_of::<PyBool>() {
        if let Ok(f) = obj.cast::<PyFloat>() {
            return Ok(f.value());
        }
        if let Ok(i) = obj.cast::<PyInt>() {
            return int_as_f64(i);
        }
    }
    Err(bad_argument(
        "u",
        format!("expected a float in [0, 1), found {}", describe(obj)?),
    ))
    .py(obj.py())
}

/// `seed`: an `int` in `[0, 2**64)`.
fn seed_of(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    if !obj.is_instance_of::<PyBool>()
        && obj.is_instance_of::<PyInt>()
        && let Ok(s) = obj.extract::<u64>()
    {
        return Ok(s);
    }
    Err(bad_argument(
        "seed",
        format!(
            "expected an integer in [0, 2**64), found {}",
            describe(obj)?
        ),
    ))
    .py(obj.py())
}

/// `now`: epoch milliseconds; `None` (or absent) reads the system clock.
pub(crate) fn now(py: Python<'_>, obj: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    if let Some(obj) = given(obj) {
        return uint(obj, "now");
    }
    let clock = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_millis()).ok());
    match clock {
        Some(ms) => Ok(ms),
        None => Err(bad_argument(
            "now",
            "the system clock is outside 1970 ..= 2^64 ms".to_owned(),
        ))
        .py(py),
    }
}

/// Reads a Python object as a document value (`crate::read`): its value,
/// or the fault locating what could not be read. `Err`: an interrupt, an
/// exit or a `MemoryError` raised while it was read, as itself.
pub(crate) fn value(obj: &Bound<'_, PyAny>) -> PyResult<Result<Value, ojs_retry::Fault>> {
    crate::read::document(obj)
}

/// Reads a document with a core reader; a value that cannot be read is the
/// core's error `code` at its path.
pub(crate) fn read<T>(
    obj: &Bound<'_, PyAny>,
    code: ojs_retry::ErrorCode,
    from_value: impl FnOnce(&Value) -> Result<T, Error>,
) -> PyResult<T> {
    let py = obj.py();
    match value(obj)? {
        Ok(v) => from_value(&v).py(py),
        Err(fault) => Err(Error::from_fault(code, fault)).py(py),
    }
}

/// Keyword arguments as one document object, read with one budget:
/// `Err(fault)` locates a value that cannot be read.
pub(crate) fn keywords(
    pairs: &[(&str, &Bound<'_, PyAny>)],
) -> PyResult<Result<Value, ojs_retry::Fault>> {
    crate::read::keywords(pairs)
}

/// Document fields given as keyword arguments (`RetryPolicy(**fields)`) as
/// one policy layer.
pub(crate) fn keyword_layer(fields: &Bound<'_, PyDict>) -> PyResult<ojs_retry::Layer<'static>> {
    let items: Vec<(String, Bound<'_, PyAny>)> = fields
        .iter()
        .map(|(k, v)| Ok((k.extract::<String>()?, v)))
        .collect::<PyResult<_>>()?;
    let pairs: Vec<(&str, &Bound<'_, PyAny>)> =
        items.iter().map(|(k, v)| (k.as_str(), v)).collect();
    Ok(match keywords(&pairs)? {
        Ok(v) => ojs_retry::Layer::Value(v),
        Err(fault) => ojs_retry::Layer::Unreadable(fault),
    })
}

/// A policy layer: JSON text (`str`, or UTF-8 `bytes` / `bytearray`) or a
/// mapping.
pub(crate) fn layer(obj: &Bound<'_, PyAny>) -> PyResult<ojs_retry::Layer<'static>> {
    use ojs_retry::Layer;
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(match s.to_str() {
            Ok(t) => Layer::Json(t.to_owned().into()),
            // A lone surrogate cannot be UTF-8: hand the core the bytes
            // Python has for it, and the core reports the text as not UTF-8.
            Err(_) => Layer::JsonBytes(
                s.call_method1("encode", ("utf-8", "surrogatepass"))?
                    .cast_into::<PyBytes>()?
                    .as_bytes()
                    .to_vec()
                    .into(),
            ),
        });
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Layer::JsonBytes(b.as_bytes().to_vec().into()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Layer::JsonBytes(b.to_vec().into()));
    }
    Ok(match value(obj)? {
        Ok(v) => Layer::Value(v),
        // from_layers reports the fault with the other layers' faults.
        Err(fault) => Layer::Unreadable(fault),
    })
}

/// The layers of one merge read in order until they are over the merge's
/// budget together: the layers after that one are not read (the core
/// reports the budget at the layer that passed it).
pub(crate) fn layers_within_budget(
    layers: &Bound<'_, pyo3::types::PyTuple>,
) -> PyResult<Vec<ojs_retry::Layer<'static>>> {
    use ojs_retry::limits::{MAX_DOCUMENT_BYTES, document_size};
    let mut out = Vec::with_capacity(layers.len());
    let mut total: usize = 0;
    for l in layers.iter() {
        let layer = layer(&l)?;
        total = total.saturating_add(match &layer {
            ojs_retry::Layer::Json(t) => t.len(),
            ojs_retry::Layer::JsonBytes(b) => b.len(),
            ojs_retry::Layer::Value(v) => document_size(v, MAX_DOCUMENT_BYTES),
            _ => 0,
        });
        out.push(layer);
        if total > MAX_DOCUMENT_BYTES {
            break;
        }
    }
    Ok(out)
}
