//! Argument conversion at the boundary: Python values to the core's types,
//! with every bad type or range reported as a `PolicyError` naming the
//! argument, never a `TypeError`, a silent truncation or a clamp.

use std::time::{SystemTime, UNIX_EPOCH};

use ojs_retry::MAX_MS;
use ojs_retry::args::Jitter;
use ojs_retry::json::{Map, Number, Value};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};

use crate::errors::{self, arg};

pub(crate) use ojs_retry::args::{Document as Doc, MAX_DEPTH};

/// A short description of a Python value for messages: its type and repr.
pub(crate) fn describe(obj: &Bound<'_, PyAny>) -> String {
    let ty = obj
        .get_type()
        .name()
        .map_or_else(|_| "object".to_owned(), |n| n.to_string());
    let repr = obj
        .repr()
        .map_or_else(|_| String::from("?"), |r| r.to_string());
    let short: String = repr.chars().take(64).collect();
    let ellipsis = if short.len() < repr.len() { "..." } else { "" };
    format!("{ty} {short}{ellipsis}")
}

/// A non-negative integer argument, at most 2^53 − 1 (`bool` and `float`
/// are refused: Python's `True` is an `int`, but not a count).
pub(crate) fn uint(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    // The common case first, with one type comparison: an exact `int`
    // (never a `bool`, which is a subclass) in range.
    if obj.is_exact_instance_of::<PyInt>()
        && let Ok(n) = obj.extract::<u64>()
        && n <= MAX_MS
    {
        return Ok(n);
    }
    let py = obj.py();
    // Formatted only on failure: this runs on every hot call.
    let expected = || format!("expected an integer between 0 and {MAX_MS}");
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(arg(
            py,
            field,
            format!("{}, found {}", expected(), describe(obj)),
        ));
    }
    match obj.extract::<u64>() {
        Ok(n) if n <= MAX_MS => Ok(n),
        _ => Err(arg(
            py,
            field,
            format!("{}, found {}", expected(), describe(obj)),
        )),
    }
}

/// A `str` argument, valid Unicode (no lone surrogates).
pub(crate) fn text(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<String> {
    let py = obj.py();
    let s = obj.cast::<PyString>().map_err(|_| {
        arg(
            py,
            field,
            format!("expected a string, found {}", describe(obj)),
        )
    })?;
    s.to_str().map(str::to_owned).map_err(|_| {
        arg(
            py,
            field,
            "expected a valid Unicode string, found one with a lone surrogate",
        )
    })
}

/// An optional `str` argument (`None` → `None`).
pub(crate) fn opt_text(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<String>> {
    match obj {
        Some(o) if !o.is_none() => text(o, field).map(Some),
        _ => Ok(None),
    }
}

/// A `bool` argument (exactly `True` or `False`).
pub(crate) fn boolean(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<bool> {
    obj.cast::<PyBool>().map(|b| b.is_true()).map_err(|_| {
        arg(
            obj.py(),
            field,
            format!("expected True or False, found {}", describe(obj)),
        )
    })
}

/// A list (or tuple) of strings; a lone `str` is refused rather than split
/// into characters.
pub(crate) fn text_list(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<String>> {
    let py = obj.py();
    let items: Vec<Bound<'_, PyAny>> = if let Ok(l) = obj.cast::<PyList>() {
        l.iter().collect()
    } else if let Ok(t) = obj.cast::<PyTuple>() {
        t.iter().collect()
    } else {
        return Err(arg(
            py,
            field,
            format!("expected a list of strings, found {}", describe(obj)),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| text(item, &format!("{field}[{i}]")))
        .collect()
}

/// Reads the jitter keyword arguments (`u` / `seed` / `key`).
pub(crate) trait JitterArgs: Sized {
    /// At most one source; none means OS entropy.
    fn from_args(
        py: Python<'_>,
        u: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self>;
    /// As [`JitterArgs::from_args`], but `None` when no source is given.
    fn opt_from_args<'py>(
        py: Python<'py>,
        u: Option<&Bound<'py, PyAny>>,
        seed: Option<&Bound<'py, PyAny>>,
        key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Self>>;
}

impl JitterArgs for Jitter {
    fn from_args(
        py: Python<'_>,
        u: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self::opt_from_args(py, u, seed, key)?.unwrap_or(Self::Entropy))
    }

    fn opt_from_args<'py>(
        py: Python<'py>,
        u: Option<&Bound<'py, PyAny>>,
        seed: Option<&Bound<'py, PyAny>>,
        key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Self>> {
        // The hot call, `delay(n, u=0.5)`: an exact float and nothing else.
        if let (Some(u), None, None) = (u, seed, key)
            && let Ok(f) = u.cast_exact::<PyFloat>()
        {
            return Ok(Some(Self::Uniform(f.value())));
        }
        fn given<'py>(o: Option<&Bound<'py, PyAny>>) -> Option<Bound<'py, PyAny>> {
            o.filter(|o| !o.is_none()).cloned()
        }
        let (u, seed, key) = (given(u), given(seed), given(key));
        let count = [u.is_some(), seed.is_some(), key.is_some()]
            .iter()
            .filter(|b| **b)
            .count();
        if count > 1 {
            return Err(arg(
                py,
                "jitter",
                "expected at most one jitter source (u, seed or key), found several",
            ));
        }
        if let Some(u) = u {
            if u.is_instance_of::<PyBool>()
                || !(u.is_instance_of::<PyFloat>() || u.is_instance_of::<PyInt>())
            {
                return Err(arg(
                    py,
                    "u",
                    format!("expected a float in [0, 1), found {}", describe(&u)),
                ));
            }
            let f = u.extract::<f64>().map_err(|_| {
                arg(
                    py,
                    "u",
                    format!("expected a float in [0, 1), found {}", describe(&u)),
                )
            })?;
            return Ok(Some(Self::Uniform(f)));
        }
        if let Some(seed) = seed {
            let expected = "expected an integer seed in [0, 2**64)";
            if seed.is_instance_of::<PyBool>() || !seed.is_instance_of::<PyInt>() {
                return Err(arg(
                    py,
                    "seed",
                    format!("{expected}, found {}", describe(&seed)),
                ));
            }
            return seed
                .extract::<u64>()
                .map(|s| Some(Self::Seed(s)))
                .map_err(|_| arg(py, "seed", format!("{expected}, found {}", describe(&seed))));
        }
        if let Some(key) = key {
            return text(&key, "key").map(|k| Some(Self::Key(k)));
        }
        Ok(None)
    }
}

static DATETIME: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ONE_MS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static JSON_LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `now`: epoch milliseconds (int) or an aware `datetime`; `None` (or
/// absent) reads the system clock. Sub-millisecond parts of a `datetime`
/// are truncated towards the past (floor).
pub(crate) fn now(py: Python<'_>, obj: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return clock(py);
    };
    let datetime = DATETIME.import(py, "datetime", "datetime")?;
    if obj.is_instance(datetime)? {
        if obj.call_method0("utcoffset")?.is_none() {
            return Err(arg(
                py,
                "now",
                format!(
                    "expected an aware datetime (with tzinfo), found a naive one: {}",
                    describe(obj)
                ),
            ));
        }
        let epoch = EPOCH.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            let m = py.import("datetime")?;
            let utc = m.getattr("timezone")?.getattr("utc")?;
            Ok(datetime.call1((1970, 1, 1, 0, 0, 0, 0, utc))?.unbind())
        })?;
        let one_ms = ONE_MS.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            let td = py.import("datetime")?.getattr("timedelta")?;
            let kw = PyDict::new(py);
            kw.set_item("milliseconds", 1)?;
            Ok(td.call((), Some(&kw))?.unbind())
        })?;
        let ms = obj.sub(epoch.bind(py))?.floor_div(one_ms.bind(py))?;
        return ms.extract::<u64>().map_err(|_| {
            arg(
                py,
                "now",
                format!(
                    "expected an instant at or after 1970-01-01T00:00:00Z, found {}",
                    describe(obj)
                ),
            )
        });
    }
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(arg(
            py,
            "now",
            format!(
                "expected epoch milliseconds (int) or an aware datetime, found {}",
                describe(obj)
            ),
        ));
    }
    obj.extract::<u64>().map_err(|_| {
        arg(
            py,
            "now",
            format!(
                "expected non-negative epoch milliseconds, found {}",
                describe(obj)
            ),
        )
    })
}

/// The system clock in epoch milliseconds.
pub(crate) fn clock(py: Python<'_>) -> PyResult<u64> {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|_| arg(py, "now", "the system clock is set before 1970"))?;
    u64::try_from(since.as_millis()).map_err(|_| arg(py, "now", "the system clock is out of range"))
}

/// A Python value (dict, list, tuple, str, int, float, bool, None, nested)
/// as a JSON value. `root` is the field of the value itself ("" for a
/// document). NaN / infinity, non-string keys and other types are faults
/// at their path; integers beyond 64 bits become floats, exactly as the
/// same number in JSON text would, so the core reports them as it does for
/// text.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, root: &str, doc: Doc) -> PyResult<Value> {
    let mut path = root.to_owned();
    value_at(obj, &mut path, 0, doc).map_err(|e| errors::from_core(obj.py(), &e))
}

fn value_at(
    obj: &Bound<'_, PyAny>,
    path: &mut String,
    depth: usize,
    doc: Doc,
) -> Result<Value, ojs_retry::Error> {
    let fault = |path: &str, msg: String| Err(doc.fault(path, msg));
    if depth > MAX_DEPTH {
        return Err(doc.too_deep(path));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::Number(u.into()));
        }
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        // Beyond 64 bits: the nearest double, as JSON text gives.
        return match obj.extract::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Value::Number(n)),
            None => fault(
                path,
                format!("expected a JSON number, found {}", describe(obj)),
            ),
        };
    }
    if obj.is_instance_of::<PyFloat>() {
        let f = obj.extract::<f64>().unwrap_or(f64::NAN);
        return match Number::from_f64(f) {
            Some(n) => Ok(Value::Number(n)),
            None => fault(
                path,
                format!("expected a finite number, found {}", describe(obj)),
            ),
        };
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return match s.to_str() {
            Ok(s) => Ok(Value::String(s.to_owned())),
            Err(_) => fault(
                path,
                "expected a valid Unicode string, found one with a lone surrogate".to_owned(),
            ),
        };
    }
    let items: Option<Vec<Bound<'_, PyAny>>> = if let Ok(l) = obj.cast::<PyList>() {
        Some(l.iter().collect())
    } else if let Ok(t) = obj.cast::<PyTuple>() {
        Some(t.iter().collect())
    } else {
        None
    };
    if let Some(items) = items {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let v = value_at(item, path, depth + 1, doc);
            path.truncate(len);
            out.push(v?);
        }
        return Ok(Value::Array(out));
    }
    if let Ok(m) = obj.cast::<PyMapping>() {
        let pairs = m
            .items()
            .map_err(|e| doc.fault(path, format!("could not read the mapping: {e}")))?;
        let mut out = Map::new();
        for pair in pairs.iter() {
            let (k, v) = pair
                .extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()
                .map_err(|e| doc.fault(path, format!("could not read the mapping: {e}")))?;
            let key = match k.cast::<PyString>().ok().map(|s| s.to_str()) {
                Some(Ok(s)) => s.to_owned(),
                _ => {
                    return fault(
                        path,
                        format!("expected string keys, found the key {}", describe(&k)),
                    );
                }
            };
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&key);
            let v = value_at(&v, path, depth + 1, doc);
            path.truncate(len);
            out.insert(key, v?);
        }
        return Ok(Value::Object(out));
    }
    fault(
        path,
        format!(
            "expected a JSON value (dict, list, str, int, float, bool or None), found {}",
            describe(obj)
        ),
    )
}

/// JSON text (always produced by the core's serialisers) as Python objects,
/// keys in the serialised order.
pub(crate) fn from_json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    JSON_LOADS.import(py, "json", "loads")?.call1((text,))
}
