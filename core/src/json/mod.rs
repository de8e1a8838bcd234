//! The engine's own JSON: a value type, a strict reader and the canonical
//! writer, so that the core needs no `serde_json` (which was most of the
//! WebAssembly module's code: its deserializer, float parser and tables,
//! and the `BTreeMap` behind its map).
//!
//! The reader accepts and rejects exactly what `serde_json` (with
//! `float_roundtrip`) does, reads numbers to the same values, and on top
//! rejects duplicate object keys at any depth (a plain `serde_json::Value`
//! keeps the last one silently, so `{"max_attempts": 1, "max_attempts": 99}`
//! would pass). The writer produces `serde_json`'s bytes, compact and
//! pretty. Tests in this module and the `json` fuzz target hold both to
//! `serde_json`.
//!
//! With the `serde_json` feature, [`Value`] converts to and from
//! `serde_json::Value`.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

mod big;
mod float;
pub(crate) mod read;
pub(crate) mod shortest;
pub(crate) mod write;

pub(crate) use read::parse;

/// Appends `s` to `out` as a JSON string literal, escaped exactly as
/// [`Value::to_text`] (and `serde_json`) escape it: the one JSON string
/// writer, for bindings that assemble JSON text themselves.
///
/// ```
/// let mut out = String::from("[");
/// ojs_retry::json::push_string(&mut out, "say \"hi\"\n");
/// assert_eq!(out, r#"["say \"hi\"\n""#);
/// ```
pub fn push_string(out: &mut String, s: &str) {
    out.push('"');
    write::escape_into(out, s);
    out.push('"');
}

/// Appends `n` as a JSON number (its decimal digits), as the writer
/// writes integers: for bindings that build small JSON texts by hand.
///
/// ```
/// let mut out = String::from("{\"deadline\":");
/// ojs_retry::json::push_u64(&mut out, 1_770_892_265_000);
/// out.push('}');
/// assert_eq!(out, r#"{"deadline":1770892265000}"#);
/// ```
pub fn push_u64(out: &mut String, n: u64) {
    crate::text::push_u64(out, n);
}

#[cfg(all(any(test, fuzzing), feature = "serde_json"))]
pub(crate) mod reference;

#[cfg(all(test, feature = "serde_json"))]
// Test-case generation: cut points within the generated text.
#[allow(clippy::arithmetic_side_effects)]
mod tests;

/// A JSON value, as the engine reads documents and keeps error details.
///
/// ```
/// use ojs_retry::json::Value;
/// let v = Value::from_text(r#"{"b": [1, -2, 2.5], "a": "x", "c": null}"#).unwrap();
/// assert_eq!(v.get("a").and_then(Value::as_str), Some("x"));
/// let b = v.get("b").and_then(Value::as_array).unwrap();
/// assert_eq!((b[0].as_u64(), b[1].as_i64(), b[2].as_f64()), (Some(1), Some(-2), Some(2.5)));
/// assert!(v.get("c").is_some_and(Value::is_null) && v.get("d").is_none());
/// // Keys come back in order; repeated keys are an error.
/// assert_eq!(v.to_text(), r#"{"a":"x","b":[1,-2,2.5],"c":null}"#);
/// assert!(Value::from_text(r#"{"a": 1, "a": 2}"#).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number (see [`Number`]).
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object (keys unique, iterated in key order).
    Object(Map),
}

/// A JSON number as `serde_json` keeps it: an integer literal that fits a
/// `u64`, a negative one that fits an `i64`, or else a finite double.
///
/// ```
/// use ojs_retry::json::{Number, Value};
/// let n = |t: &str| match Value::from_text(t).unwrap() {
///     Value::Number(n) => n,
///     _ => unreachable!(),
/// };
/// assert!(n("3").is_u64() && n("-3").is_i64() && n("3.0").is_f64());
/// assert_eq!(n("1e2").as_f64(), Some(100.0));
/// assert_eq!(n("18446744073709551616").as_u64(), None); // 2^64: a double
/// assert!(Number::from_f64(f64::NAN).is_none());
/// ```
#[derive(Clone, Copy, PartialEq)]
pub struct Number(N);

#[derive(Clone, Copy, PartialEq)]
enum N {
    PosInt(u64),
    /// Always below zero.
    NegInt(i64),
    /// Always finite.
    Float(f64),
}

/// A JSON object: unique keys kept sorted, so iteration is in key order as
/// with `serde_json`'s default map (messages list unknown fields in that
/// order). A sorted vector rather than a `BTreeMap`: documents have a
/// handful of keys, and the tree's code was ~7 KB of the wasm build.
///
/// The type parameters only let `Map<String, Value>` (serde_json's
/// spelling) name this type; it exists for those two alone.
///
/// ```
/// use ojs_retry::json::{Map, Value};
/// let mut m = Map::new();
/// assert_eq!(m.insert("b".into(), Value::from(2u64)), None);
/// m.insert("a".into(), Value::from(true));
/// assert_eq!(m.insert("b".into(), Value::from(3u64)), Some(Value::from(2u64)));
/// assert_eq!(m.keys().map(String::as_str).collect::<Vec<_>>(), ["a", "b"]);
/// assert_eq!(m.remove("a"), Some(Value::Bool(true)));
/// assert!(m.contains_key("b") && !m.contains_key("a") && m.len() == 1);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Map<K = String, V = Value> {
    entries: Vec<(K, V)>,
}

impl Map {
    /// An empty object.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    /// An empty object with room for `n` entries.
    #[must_use]
    pub fn with_capacity(n: usize) -> Self {
        Self {
            entries: Vec::with_capacity(n),
        }
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|(k, _)| key_order(k.as_bytes(), key.as_bytes()))
    }

    /// The value at `key`.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        let i = self.find(key).ok()?;
        self.entries.get(i).map(|(_, v)| v)
    }

    /// Whether `key` is present.
    #[must_use]
    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`, returning the value it replaces.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match self.find(&key) {
            Ok(i) => self
                .entries
                .get_mut(i)
                .map(|(_, v)| core::mem::replace(v, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// Sets `key` to `value` unless it is there already (then `Err` gives
    /// the value back): one search for both.
    pub(crate) fn insert_new(&mut self, key: String, value: Value) -> Result<(), (String, Value)> {
        match self.find(&key) {
            Ok(_) => Err((key, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                Ok(())
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.find(key).ok()?;
        Some(self.entries.remove(i).1)
    }

    /// Moves every entry of `other` into `self` (its values win).
    pub fn append(&mut self, other: &mut Self) {
        for (k, v) in core::mem::take(&mut other.entries) {
            self.insert(k, v);
        }
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &String> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// The entries, in key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&String, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// `str`'s order (bytewise), without its call to `memcmp`: keys are
/// short and mostly differ in their first bytes, so the call was most of
/// the cost of a lookup (a sixth of reading a document).
#[inline]
fn key_order(a: &[u8], b: &[u8]) -> core::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = core::iter::Map<
        core::slice::Iter<'a, (String, Value)>,
        fn(&'a (String, Value)) -> (&'a String, &'a Value),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = alloc::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

/// Later entries win, as with [`Map::insert`].
impl Extend<(String, Value)> for Map {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl FromIterator<(String, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        let mut m = Self::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

impl Number {
    /// A finite double (`None` for NaN and the infinities, which JSON
    /// cannot hold).
    #[must_use]
    pub fn from_f64(x: f64) -> Option<Self> {
        x.is_finite().then_some(Self(N::Float(x)))
    }

    /// The value as a `u64`, when it is a non-negative integer literal.
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            N::PosInt(u) => Some(u),
            _ => None,
        }
    }

    /// The value as an `i64`, when it is an integer literal in range.
    #[must_use]
    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            N::PosInt(u) => i64::try_from(u).ok(),
            N::NegInt(i) => Some(i),
            N::Float(_) => None,
        }
    }

    /// The value as a double (integers rounded to nearest).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn as_f64(&self) -> Option<f64> {
        Some(match self.0 {
            N::PosInt(u) => u as f64,
            N::NegInt(i) => i as f64,
            N::Float(f) => f,
        })
    }

    /// Whether [`Number::as_u64`] answers.
    #[must_use]
    pub fn is_u64(&self) -> bool {
        matches!(self.0, N::PosInt(_))
    }

    /// Whether [`Number::as_i64`] answers.
    #[must_use]
    pub fn is_i64(&self) -> bool {
        match self.0 {
            N::PosInt(u) => i64::try_from(u).is_ok(),
            N::NegInt(_) => true,
            N::Float(_) => false,
        }
    }

    /// Whether the number is held as a double.
    #[must_use]
    pub fn is_f64(&self) -> bool {
        matches!(self.0, N::Float(_))
    }
}

/// As `serde_json` writes numbers: integers in decimal, doubles in their
/// shortest round-trip form (as `zmij`, the formatter `serde_json` uses:
/// `2.0`, `0.1`, `1e300`, `-0.0`).
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            N::PosInt(u) => fmt::Display::fmt(&u, f),
            N::NegInt(i) => fmt::Display::fmt(&i, f),
            N::Float(x) => {
                let mut out = String::new();
                shortest::push(&mut out, x);
                f.write_str(&out)
            }
        }
    }
}

/// As its `Display`, for messages (`text::msg!`).
impl crate::text::Piece for Number {
    fn push_to(&self, out: &mut String) {
        match self.0 {
            N::PosInt(u) => u.push_to(out),
            N::NegInt(i) => i.push_to(out),
            N::Float(x) => shortest::push(out, x),
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({self})")
    }
}

macro_rules! from_unsigned {
    ($($t:ty)*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Self {
                Self(N::PosInt(u64::from(n)))
            }
        }
        impl From<$t> for Value {
            fn from(n: $t) -> Self {
                Value::Number(n.into())
            }
        }
    )*};
}
from_unsigned!(u8 u16 u32 u64);

macro_rules! from_signed {
    ($($t:ty)*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Self {
                let n = i64::from(n);
                Self(u64::try_from(n).map_or(N::NegInt(n), N::PosInt))
            }
        }
        impl From<$t> for Value {
            fn from(n: $t) -> Self {
                Value::Number(n.into())
            }
        }
    )*};
}
from_signed!(i8 i16 i32 i64);

impl From<usize> for Value {
    fn from(n: usize) -> Self {
        // usize is at most 64 bits on every target Rust supports.
        Value::Number(Number(N::PosInt(u64::try_from(n).unwrap_or(u64::MAX))))
    }
}

/// NaN and the infinities become `null`, as in `serde_json`.
impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(String::from(s))
    }
}

impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Self {
        Value::Array(v)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Value::Object(m)
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Self {
        Value::Number(n)
    }
}

impl Value {
    /// The object, if this is one.
    #[must_use]
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The array, if this is one.
    #[must_use]
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The string, if this is one.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// See [`Number::as_u64`].
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// See [`Number::as_i64`].
    #[must_use]
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// See [`Number::as_f64`].
    #[must_use]
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    /// Whether this is a number.
    #[must_use]
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    /// Whether this is a number held as an `i64`-compatible integer.
    #[must_use]
    pub fn is_i64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_i64())
    }

    /// Whether this is `null`.
    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value at `key` when this is an object.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?.get(key)
    }

    /// Parses JSON text strictly (see the [module](self) notes). The error
    /// is a human message with the line and column.
    ///
    /// # Errors
    ///
    /// The message, for text that is not one JSON document.
    pub fn from_text(text: &str) -> Result<Self, String> {
        parse(text)
    }

    /// The compact JSON text, as `serde_json::to_string` writes it.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut w = write::Writer::new(false);
        w.value(self);
        w.finish()
    }
}

/// JSON text, compact.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// Anything a JSON document can be given as to the engine's `from_value`
/// entry points: the engine's own [`Value`], or (feature `serde_json`) a
/// `serde_json::Value`, converted at the edge.
///
/// ```
/// use ojs_retry::{RetryPolicy, json::Value};
/// let doc = Value::from_text(r#"{"max_attempts": 4}"#).unwrap();
/// assert_eq!(RetryPolicy::from_value(&doc).unwrap().max_attempts(), 4);
/// ```
pub trait AsValue {
    /// The value as the engine's own.
    fn as_value(&self) -> Cow<'_, Value>;
}

impl AsValue for Value {
    fn as_value(&self) -> Cow<'_, Value> {
        Cow::Borrowed(self)
    }
}

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => match n.0 {
                N::PosInt(u) => s.serialize_u64(u),
                N::NegInt(i) => s.serialize_i64(i),
                N::Float(x) => s.serialize_f64(x),
            },
            Value::String(t) => s.serialize_str(t),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(m) => m.serialize(s),
        }
    }
}

impl serde::Serialize for Map {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// For the `Deserialize` impls of the `serde` feature: any self-describing
/// format's value, a repeated key keeping its last value (as
/// `serde_json::Value` did).
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AnyValue)
    }
}

#[cfg(feature = "serde")]
struct AnyValue;

#[cfg(feature = "serde")]
impl<'de> serde::de::Visitor<'de> for AnyValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
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
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::Deserialize::deserialize(d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut v = Vec::new();
        while let Some(item) = seq.next_element()? {
            v.push(item);
        }
        Ok(Value::Array(v))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }
}

#[cfg(feature = "serde_json")]
mod interop {
    use super::{AsValue, Map, N, Number, Value};
    use alloc::borrow::Cow;
    use alloc::vec::Vec;

    /// Containers deeper than JSON text may nest (the reader's limit) are
    /// converted empty: no engine entry point looks that deep into a
    /// document (they read its top level, a list's elements, a preset's
    /// `backoff` object), every binding refuses host values nested past 64
    /// levels, and converting a 100 000-deep value level by level would
    /// overflow the stack, where the engine used to read only its top.
    fn convert(v: &serde_json::Value, depth: u32) -> Value {
        let deeper = depth.saturating_add(1);
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.into()),
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(_) if deeper >= super::read::MAX_DEPTH => {
                Value::Array(Vec::new())
            }
            serde_json::Value::Object(_) if deeper >= super::read::MAX_DEPTH => {
                Value::Object(Map::new())
            }
            serde_json::Value::Array(a) => {
                Value::Array(a.iter().map(|x| convert(x, deeper)).collect())
            }
            serde_json::Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), convert(x, deeper)))
                    .collect(),
            ),
        }
    }

    /// Containers nested past 128 levels convert empty (no engine entry
    /// point reads that deep).
    impl From<&serde_json::Value> for Value {
        fn from(v: &serde_json::Value) -> Self {
            convert(v, 0)
        }
    }

    /// Containers nested past 128 levels convert empty (no engine entry
    /// point reads that deep).
    impl From<serde_json::Value> for Value {
        fn from(v: serde_json::Value) -> Self {
            convert(&v, 0)
        }
    }

    impl From<&serde_json::Number> for Number {
        fn from(n: &serde_json::Number) -> Self {
            // Without `arbitrary_precision` a serde_json number is exactly
            // one of these three (a finite double in the last case).
            if let Some(u) = n.as_u64() {
                Number(N::PosInt(u))
            } else if let Some(i) = n.as_i64() {
                Number(N::NegInt(i))
            } else {
                Number(N::Float(n.as_f64().unwrap_or(0.0)))
            }
        }
    }

    impl From<Number> for serde_json::Number {
        fn from(n: Number) -> Self {
            match n.0 {
                N::PosInt(u) => u.into(),
                N::NegInt(i) => i.into(),
                N::Float(x) => serde_json::Number::from_f64(x).unwrap_or_else(|| 0.into()),
            }
        }
    }

    impl From<Value> for serde_json::Value {
        fn from(v: Value) -> Self {
            match v {
                Value::Null => serde_json::Value::Null,
                Value::Bool(b) => serde_json::Value::Bool(b),
                Value::Number(n) => serde_json::Value::Number(n.into()),
                Value::String(s) => serde_json::Value::String(s),
                Value::Array(a) => {
                    serde_json::Value::Array(a.into_iter().map(Into::into).collect())
                }
                Value::Object(m) => {
                    serde_json::Value::Object(m.into_iter().map(|(k, v)| (k, v.into())).collect())
                }
            }
        }
    }

    impl From<&Value> for serde_json::Value {
        fn from(v: &Value) -> Self {
            v.clone().into()
        }
    }

    impl AsValue for serde_json::Value {
        fn as_value(&self) -> Cow<'_, Value> {
            Cow::Owned(self.into())
        }
    }

    impl From<Map> for serde_json::Map<alloc::string::String, serde_json::Value> {
        fn from(m: Map) -> Self {
            m.into_iter().map(|(k, v)| (k, v.into())).collect()
        }
    }
}
