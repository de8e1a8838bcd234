//! Reading a [`Value`] from any serde `Deserializer`: depth-limited, a
//! repeated key refused, and for host values the fault located at the
//! member that could not be read.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{Map, Number, Value};
use crate::error::Fault;
use crate::limits::{self, Budget};

/// What one document's reading shares: its budget, and the path below the
/// member being read (kept as it was where reading failed, so a fault deep
/// inside a field is located at the value itself).
pub(crate) struct Reading {
    budget: Budget,
    trail: core::cell::RefCell<Vec<Seg>>,
}

impl Reading {
    fn new() -> Self {
        Self {
            budget: Budget::new(),
            trail: core::cell::RefCell::new(Vec::new()),
        }
    }

    fn take(&self, n: usize) -> Result<(), String> {
        self.budget.take(n)
    }

    fn push(&self, seg: Seg) {
        self.trail.borrow_mut().push(seg);
    }

    fn pop(&self) {
        self.trail.borrow_mut().pop();
    }

    /// `at` followed by the trail, which is then cleared.
    fn path(&self, at: String) -> String {
        let mut path = at;
        for seg in self.trail.borrow_mut().drain(..) {
            match seg {
                Seg::Key(k) => {
                    path.push('.');
                    path.push_str(&k);
                }
                Seg::Index(i) => path.push_str(&alloc::format!("[{i}]")),
            }
        }
        path
    }
}

enum Seg {
    Key(String),
    Index(usize),
}

/// How deep a host value may nest. Hosts hand over objects that can be
/// cyclic or arbitrarily deep; past this depth reading stops with an error
/// instead of recursing further (JSON text has serde_json's own limit).
///
/// ```
/// use ojs_retry::{Value, value::MAX_DEPTH};
/// let mut v = serde_json::json!(1);
/// for _ in 0..MAX_DEPTH {
///     v = serde_json::json!([v]);
/// }
/// assert!(Value::read(&v).is_ok());
/// assert!(Value::read(&serde_json::json!([v])).is_err()); // one level too deep
/// ```
pub const MAX_DEPTH: u32 = 64;

/// Reads any value, nested at most [`MAX_DEPTH`] levels and within the
/// [`limits`].
impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Depth(0, &Reading::new()).deserialize(d)
    }
}

/// A value at this nesting depth, and what is left of the document's size.
#[derive(Clone, Copy)]
struct Depth<'b>(u32, &'b Reading);

impl<'de> DeserializeSeed<'de> for Depth<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.0 > MAX_DEPTH {
            return Err(de::Error::custom(alloc::format!(
                "expected a value nested at most {MAX_DEPTH} levels deep (is it cyclic?)"
            )));
        }
        self.1.take(1).map_err(de::Error::custom)?;
        d.deserialize_any(ValueVisitor(self.0, self.1))
    }
}

struct ValueVisitor<'b>(u32, &'b Reading);

impl ValueVisitor<'_> {
    fn inner(&self) -> Depth<'_> {
        Depth(self.0.saturating_add(1), self.1)
    }

    /// A string within the limits, its bytes taken from the budget.
    fn string<E: de::Error>(&self, len: usize) -> Result<(), E> {
        limits::check_string(len).map_err(E::custom)?;
        self.1.take(len).map_err(E::custom)
    }
}

/// Refuses an array or object whose announced length is over the limit
/// before any member is read.
fn announced<E: de::Error>(
    hint: Option<usize>,
    check: fn(usize) -> Result<(), String>,
) -> Result<(), E> {
    hint.map_or(Ok(()), |n| check(n).map_err(E::custom))
}

impl<'de> Visitor<'de> for ValueVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        // Outside i64/u64 (a JavaScript BigInt, a Python int) a value
        // cannot be kept exactly: refused rather than rounded.
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(i), _) => Ok(i.into()),
            (_, Ok(u)) => Ok(u.into()),
            _ => Err(E::custom(wide_integer(v))),
        }
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        u64::try_from(v)
            .map(Value::from)
            .map_err(|_| E::custom(wide_integer(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(Number::Float(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.string(v.len())?;
        Ok(v.into())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.string(v.len())?;
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        announced(seq.size_hint(), limits::check_array)?;
        let mut items = Vec::new();
        loop {
            // Left on the trail when reading the element fails.
            self.1.push(Seg::Index(items.len()));
            let Some(item) = seq.next_element_seed(self.inner())? else {
                self.1.pop();
                break;
            };
            self.1.pop();
            limits::check_array(items.len().saturating_add(1)).map_err(de::Error::custom)?;
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        announced(map.size_hint(), limits::check_object)?;
        let mut m = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            limits::check_object(m.len().saturating_add(1)).map_err(de::Error::custom)?;
            // Left on the trail when the key or its value is refused.
            self.1.push(Seg::Key(key.clone()));
            self.string(key.len())?;
            if m.contains_key(&key) {
                return Err(de::Error::custom(duplicate(&key)));
            }
            let value = map.next_value_seed(self.inner())?;
            self.1.pop();
            m.insert(key, value);
        }
        Ok(Value::Object(m))
    }
}

fn wide_integer(v: impl fmt::Display) -> String {
    alloc::format!("expected an integer between -2^63 and 2^64 - 1 (kept exactly), found {v}")
}

fn duplicate(key: &str) -> String {
    alloc::format!("duplicate key {}", crate::describe::quote(key))
}

impl Value {
    /// Reads a document from any serde `Deserializer` (a host value): its
    /// value, or the fault that stopped reading it: its field (the
    /// top-level key) and the path of the value that could not be read,
    /// however deep (`details.x[1]`: nested too deep, over a
    /// [limit](crate::limits), a type JSON has not, a string that is not
    /// Unicode), or the document itself. A NaN is readable: the
    /// document's reader reports it with its field.
    ///
    /// # Errors
    ///
    /// The fault; [`Error::from_fault`](crate::Error::from_fault) gives it
    /// the code of the document being read.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// let v = Value::read(&serde_json::json!({"a": [1, 2]})).unwrap();
    /// assert_eq!(v.to_string(), r#"{"a":[1,2]}"#);
    /// ```
    pub fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Value, Fault> {
        let budget = Reading::new();
        // The document itself is a value too (the members count theirs
        // as they are read).
        if let Err(m) = budget.take(1) {
            return Err(Fault::at("", m));
        }
        match d.deserialize_any(Locate {
            field: None,
            budget: &budget,
        }) {
            Ok(read) => read,
            Err(e) => Err(Fault::at("", alloc::format!("{e}"))),
        }
    }
}

impl Value {
    /// Reads a host's argument `field` (a list of patterns, say) as a
    /// document of its own: the value counts one against the budget, then
    /// its members as in [`Value::read`], and a fault is located below
    /// `field` (`patterns[15]`).
    ///
    /// # Errors
    ///
    /// The fault, at `field` or below it.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// let v = Value::read_argument("patterns", &serde_json::json!(["a.*"])).unwrap();
    /// assert_eq!(v.to_string(), r#"["a.*"]"#);
    /// let long = "x".repeat(ojs_retry::limits::MAX_STRING_BYTES + 1);
    /// let f = Value::read_argument("patterns", &serde_json::json!(["a", long])).unwrap_err();
    /// assert_eq!(f.path.as_deref(), Some("patterns[1]"));
    /// ```
    pub fn read_argument<'de, D: Deserializer<'de>>(field: &str, d: D) -> Result<Value, Fault> {
        let budget = Reading::new();
        let at = Locate {
            field: Some(field),
            budget: &budget,
        };
        match at.deserialize(d) {
            Ok(read) => read,
            Err(e) => Err(Fault::at_field(
                field,
                budget.path(field.into()),
                alloc::format!("{e}"),
            )),
        }
    }
}

pub(crate) fn read_document<'de, D: Deserializer<'de>>(d: D) -> Result<Value, Fault> {
    Value::read(d)
}

type Located = Result<Value, Fault>;

/// Reads a document so that a fault is located: at its top level
/// (`field: None`), each field's value is read with `field` set, which
/// reads an array's or an object's members one by one, so that a member
/// that cannot be read is located at `field[i]` / `field.key` and below
/// (the reading's trail). After a
/// fault the other entries are still read (and dropped): some
/// deserializers refuse a map left half-read, which would hide the fault.
#[derive(Clone, Copy)]
struct Locate<'k, 'b> {
    field: Option<&'k str>,
    budget: &'b Reading,
}

impl<'b> Locate<'_, 'b> {
    /// The plain reader at this level's depth.
    fn plain(self) -> ValueVisitor<'b> {
        ValueVisitor(u32::from(self.field.is_some()), self.budget)
    }

    /// The reader of this level's members.
    fn member(self) -> Depth<'b> {
        Depth(2, self.budget)
    }

    /// A fault of the whole value at this level.
    fn fault(self, message: String) -> Fault {
        match self.field {
            None => Fault::at("", message),
            Some(name) => Fault::at_field(name, name.into(), message),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Locate<'_, '_> {
    type Value = Located;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Located, D::Error> {
        if let Err(m) = self.budget.take(1) {
            return Ok(Err(self.fault(m)));
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Locate<'_, '_> {
    type Value = Located;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Located, A::Error> {
        if let Err(m) = map.size_hint().map_or(Ok(()), limits::check_object) {
            return Ok(Err(self.fault(m)));
        }
        let mut m = Map::new();
        let mut first = None;
        while let Some(key) = map.next_key::<String>()? {
            if first.is_some() {
                // Skipped without being read: reading it could raise (a
                // host's interrupt) and that must not be lost behind the
                // first fault.
                map.next_value::<de::IgnoredAny>()?;
                continue;
            }
            // The key is counted before its value, as it comes first.
            let limit = limits::check_string(key.len()).and_then(|()| self.budget.take(key.len()));
            self.budget.trail.borrow_mut().clear();
            let read = match self.field {
                None => map.next_value_seed(Locate {
                    field: Some(&key),
                    budget: self.budget,
                }),
                Some(_) => map.next_value_seed(self.member()).map(Ok),
            };
            let at = match self.field {
                None => key.clone(),
                Some(name) => alloc::format!("{name}.{key}"),
            };
            // Where reading the value failed, below this member.
            let deep = self.budget.path(at.clone());
            let fault = |message: String| Fault::at_field(self.field.unwrap_or(&key), at, message);
            if let Err(message) = limits::check_object(m.len().saturating_add(1)) {
                first = Some(self.fault(message));
                continue;
            }
            if let Err(message) = limit {
                first = Some(fault(message));
                continue;
            }
            if m.contains_key(&key) {
                first = Some(match self.field {
                    None => Fault::at("", duplicate(&key)),
                    Some(_) => fault(duplicate(&key)),
                });
                continue;
            }
            match read {
                Ok(Ok(value)) => {
                    m.insert(key, value);
                }
                Ok(Err(f)) => first = Some(f),
                Err(e) => {
                    let field = self.field.unwrap_or(&key);
                    first = Some(Fault::at_field(field, deep, alloc::format!("{e}")));
                }
            }
        }
        Ok(first.map_or(Ok(Value::Object(m)), Err))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Located, A::Error> {
        let Some(name) = self.field else {
            return self.plain().visit_seq(seq).map(Ok);
        };
        if let Err(m) = seq.size_hint().map_or(Ok(()), limits::check_array) {
            return Ok(Err(self.fault(m)));
        }
        let mut items = Vec::new();
        // The first member that cannot be read ends the array: a streaming
        // deserializer stays inside it and would fail again forever.
        loop {
            let at = || alloc::format!("{name}[{}]", items.len());
            self.budget.trail.borrow_mut().clear();
            match seq.next_element_seed(self.member()) {
                Ok(None) => return Ok(Ok(Value::Array(items))),
                Ok(Some(item)) => {
                    if let Err(m) = limits::check_array(items.len().saturating_add(1)) {
                        return Ok(Err(self.fault(m)));
                    }
                    items.push(item);
                }
                Err(e) => {
                    let path = self.budget.path(at());
                    return Ok(Err(Fault::at_field(name, path, alloc::format!("{e}"))));
                }
            }
        }
    }
    fn visit_bool<E>(self, v: bool) -> Result<Located, E> {
        Ok(Ok(Value::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Located, E> {
        self.plain().visit_i64(v).map(Ok)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Located, E> {
        self.plain().visit_u64(v).map(Ok)
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Located, E> {
        self.plain().visit_i128(v).map(Ok)
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Located, E> {
        self.plain().visit_u128(v).map(Ok)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Located, E> {
        self.plain().visit_f64(v).map(Ok)
    }
    fn visit_str<E>(self, v: &str) -> Result<Located, E> {
        let limit = limits::check_string(v.len()).and_then(|()| self.budget.take(v.len()));
        Ok(limit.map(|()| v.into()).map_err(|m| self.fault(m)))
    }
    fn visit_unit<E>(self) -> Result<Located, E> {
        Ok(Ok(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Located, E> {
        Ok(Ok(Value::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Located, D::Error> {
        d.deserialize_any(self)
    }
}
