//! Python values as documents: a serde `Deserializer` over Python objects,
//! read by the core's own reader (`Value::read`), so a Python document is
//! held to the same limits, depth and budget, with the same fault paths, as
//! a JavaScript one.
//!
//! A mapping is read once, through its `items()` (an exact `dict` through
//! a snapshot of its own pairs), so what is read is the mapping's own pairs
//! whatever its `__len__`, `keys()` or `values()` claim; at most one pair
//! more than the object limit is taken from it. An exception Python code
//! raises while a value is read becomes a fault at that value, except
//! `KeyboardInterrupt`, `SystemExit` and `MemoryError`, which are kept and
//! raised as themselves once reading stops.

use std::cell::RefCell;
use std::fmt;

use ojs_retry::limits::MAX_OBJECT_LEN;
use ojs_retry::{Fault, Value};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};

use crate::args::must_propagate;

/// Reads `obj` as a document: its value, or the fault locating what could
/// not be read. `Err`: an interrupt, an exit or a `MemoryError` raised
/// while it was read.
pub(crate) fn document(obj: &Bound<'_, PyAny>) -> PyResult<Result<Value, Fault>> {
    let fatal = RefCell::new(None);
    let read = Value::read(Py {
        src: Src::Obj(obj.clone()),
        fatal: &fatal,
    });
    finish(read, fatal)
}

/// Keyword arguments (name, value) as one document object: one budget for
/// all of them, each fault located at its keyword.
pub(crate) fn keywords(pairs: &[(&str, &Bound<'_, PyAny>)]) -> PyResult<Result<Value, Fault>> {
    let fatal = RefCell::new(None);
    let items = pairs
        .iter()
        .map(|&(k, v)| (Key::Str(k.to_owned()), v.clone()))
        .collect();
    let read = Value::read(Py {
        src: Src::Pairs(items),
        fatal: &fatal,
    });
    finish(read, fatal)
}

fn finish(
    read: Result<Value, Fault>,
    fatal: RefCell<Option<PyErr>>,
) -> PyResult<Result<Value, Fault>> {
    match fatal.into_inner() {
        Some(e) => Err(e),
        None => Ok(read),
    }
}

/// The reader's error: a message (the core turns it into a fault).
#[derive(Debug)]
pub(crate) struct ReadError(String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

impl de::Error for ReadError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

enum Src<'py> {
    Obj(Bound<'py, PyAny>),
    Pairs(Vec<(Key<'py>, Bound<'py, PyAny>)>),
}

enum Key<'py> {
    Str(String),
    Obj(Bound<'py, PyAny>),
}

/// One Python value being read; `fatal` keeps an exception that must
/// reach the caller as itself.
struct Py<'f, 'py> {
    src: Src<'py>,
    fatal: &'f RefCell<Option<PyErr>>,
}

/// A Python exception as a fault of the value being read, or kept in
/// `fatal` to be raised as itself.
fn raised(fatal: &RefCell<Option<PyErr>>, py: Python<'_>, e: PyErr) -> ReadError {
    if must_propagate(py, &e) {
        let message = e.to_string();
        fatal.borrow_mut().get_or_insert(e);
        return ReadError(message);
    }
    ReadError(format!(
        "reading the value raised {}: {}",
        type_name(&e.get_type(py).into_any()),
        e.value(py)
    ))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    let ty = if obj.is_instance_of::<pyo3::types::PyType>() {
        obj.clone()
    } else {
        obj.get_type().into_any()
    };
    ty.getattr("__name__")
        .and_then(|n| n.extract::<String>())
        .unwrap_or_else(|_| "object".to_owned())
}

impl<'de> Deserializer<'de> for Py<'_, '_> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, ReadError> {
        let obj = match self.src {
            Src::Pairs(items) => return v.visit_map(Pairs::new(items, None, self.fatal)),
            Src::Obj(obj) => obj,
        };
        let fatal = self.fatal;
        if obj.is_none() {
            return v.visit_unit();
        }
        if let Ok(b) = obj.cast::<PyBool>() {
            return v.visit_bool(b.is_true());
        }
        if let Ok(i) = obj.cast::<PyInt>() {
            return int(i, v);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            return v.visit_f64(f.value());
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return match s.to_str() {
                Ok(t) => v.visit_str(t),
                Err(_) => Err(ReadError(
                    "expected a valid Unicode string, found one with a lone surrogate".into(),
                )),
            };
        }
        if let Ok(l) = obj.cast::<PyList>() {
            return v.visit_seq(Items::List(l.clone(), 0, fatal));
        }
        if let Ok(t) = obj.cast::<PyTuple>() {
            return v.visit_seq(Items::Tuple(t.clone(), 0, fatal));
        }
        if let Ok(d) = obj.cast_exact::<PyDict>() {
            // An exact dict: a snapshot of its own pairs (no Python code
            // runs), taken only when it is within the limit.
            let len = d.len();
            if len > MAX_OBJECT_LEN {
                return v.visit_map(Pairs::new(Vec::new(), Some(len), fatal));
            }
            let items = d.iter().map(|(k, o)| (Key::Obj(k), o)).collect();
            return v.visit_map(Pairs::new(items, None, fatal));
        }
        if obj.cast::<PyMapping>().is_ok() {
            let items = mapping_items(&obj).map_err(|e| raised(fatal, obj.py(), e))?;
            return v.visit_map(Pairs::new(items, None, fatal));
        }
        // Described as every argument is (its repr; an interrupt there is
        // the caller's).
        let found = crate::args::describe(&obj).map_err(|e| raised(fatal, obj.py(), e))?;
        Err(ReadError(format!(
            "expected JSON data (a mapping, list, tuple, str, int, float, bool or None), found {found}"
        )))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, ReadError> {
        // Skipped unread: nothing it could raise is lost behind the fault
        // that made the reader skip it.
        v.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier
    }
}

/// An `int` by its own value (a subclass's methods are not asked); beyond
/// 64 bits the core refuses it rather than rounding it.
fn int<'de, V: Visitor<'de>>(i: &Bound<'_, PyInt>, v: V) -> Result<V::Value, ReadError> {
    if let Ok(n) = i.extract::<i64>() {
        return v.visit_i64(n);
    }
    if let Ok(n) = i.extract::<u64>() {
        return v.visit_u64(n);
    }
    match i.extract::<i128>() {
        Ok(n) => v.visit_i128(n),
        Err(_) => Err(ReadError(
            "expected an integer between -2^63 and 2^64 - 1 (kept exactly), found a wider one"
                .into(),
        )),
    }
}

/// A mapping's pairs through one call of `items()`: at most one more than
/// the object limit is taken, so an over-long mapping is refused without
/// being read to its end.
fn mapping_items<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<(Key<'py>, Bound<'py, PyAny>)>> {
    let mut out = Vec::new();
    for item in obj.call_method0("items")?.try_iter()? {
        let item = item?;
        let Some(pair) = item.cast::<PyTuple>().ok().filter(|t| t.len() == 2) else {
            return Err(PyTypeError::new_err(format!(
                "items() yielded {}, not a (key, value) pair",
                type_name(&item)
            )));
        };
        out.push((Key::Obj(pair.get_item(0)?), pair.get_item(1)?));
        if out.len() > MAX_OBJECT_LEN {
            break;
        }
    }
    Ok(out)
}

enum Items<'f, 'py> {
    List(Bound<'py, PyList>, usize, &'f RefCell<Option<PyErr>>),
    Tuple(Bound<'py, PyTuple>, usize, &'f RefCell<Option<PyErr>>),
}

impl<'de> SeqAccess<'de> for Items<'_, '_> {
    type Error = ReadError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ReadError> {
        // By index, the length checked each time: a list may change while
        // its elements are read.
        let (item, fatal) = match self {
            Self::List(l, at, fatal) if *at < l.len() => {
                *at += 1;
                (
                    l.get_item(*at - 1).map_err(|e| raised(fatal, l.py(), e)),
                    *fatal,
                )
            }
            Self::Tuple(t, at, fatal) if *at < t.len() => {
                *at += 1;
                (
                    t.get_item(*at - 1).map_err(|e| raised(fatal, t.py(), e)),
                    *fatal,
                )
            }
            _ => return Ok(None),
        };
        let item = item?;
        seed.deserialize(Py {
            src: Src::Obj(item),
            fatal,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(match self {
            Self::List(l, ..) => l.len(),
            Self::Tuple(t, ..) => t.len(),
        })
    }
}

struct Pairs<'f, 'py> {
    items: std::vec::IntoIter<(Key<'py>, Bound<'py, PyAny>)>,
    hint: usize,
    value: Option<Bound<'py, PyAny>>,
    fatal: &'f RefCell<Option<PyErr>>,
}

impl<'f, 'py> Pairs<'f, 'py> {
    fn new(
        items: Vec<(Key<'py>, Bound<'py, PyAny>)>,
        hint: Option<usize>,
        fatal: &'f RefCell<Option<PyErr>>,
    ) -> Self {
        Self {
            hint: hint.unwrap_or(items.len()),
            items: items.into_iter(),
            value: None,
            fatal,
        }
    }
}

impl<'de> MapAccess<'de> for Pairs<'_, '_> {
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        let Some((key, value)) = self.items.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        let text = match key {
            Key::Str(s) => s,
            Key::Obj(k) => match k.cast::<PyString>().map(|s| s.to_str().map(str::to_owned)) {
                Ok(Ok(s)) => s,
                Ok(Err(_)) => {
                    return Err(ReadError(
                        "expected a valid Unicode key, found one with a lone surrogate".into(),
                    ));
                }
                Err(_) => {
                    return Err(ReadError(format!(
                        "expected string keys, found a key of type {}",
                        type_name(&k)
                    )));
                }
            },
        };
        seed.deserialize(text.into_deserializer()).map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, ReadError> {
        let Some(obj) = self.value.take() else {
            return Err(ReadError("a value read before its key".into()));
        };
        seed.deserialize(Py {
            src: Src::Obj(obj),
            fatal: self.fatal,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.hint)
    }
}
