//! The document value every reader of the engine works on.
//!
//! Policy layers, preset options, state documents, failures and option
//! bags all arrive as a [`Value`]: JSON text through `serde_json`, a
//! JavaScript object through `serde-wasm-bindgen` or napi-rs, a Python
//! mapping through `pythonize` — any self-describing serde `Deserializer`.
//! The readers then check the tree and collect every fault with its field.
//!
//! Two things make [`Value`]'s `Deserialize` stricter than
//! `serde_json::Value`'s, in every host alike: a repeated key is an error
//! (`{"max_attempts": 1, "max_attempts": 99}` must not pass as 99), and
//! non-finite numbers (NaN from JavaScript or Python) are kept, so the
//! field that holds one is reported rather than silently read as `null`.
//!
//! ```
//! use ojs_retry::Value;
//! let v = Value::from_json(r#"{"b": [1, -2, 2.5], "a": "x"}"#).unwrap();
//! assert_eq!(v.get("a").and_then(Value::as_str), Some("x"));
//! assert_eq!(v.to_string(), r#"{"a":"x","b":[1,-2,2.5]}"#);
//! assert!(Value::from_json(r#"{"a": 1, "a": 2}"#).is_err());
//! ```

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use alloc::format;

use crate::duration::MAX_MS;
use serde::ser::{Serialize, Serializer};

/// A JSON-like document value.
///
/// ```
/// use ojs_retry::Value;
/// let v = Value::from_json(r#"{"max_attempts": 3, "jitter": null}"#).unwrap();
/// assert_eq!(v.get("max_attempts"), Some(&Value::from(3u64)));
/// assert!(v.get("jitter").is_some_and(Value::is_null));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// `null` (or JavaScript `undefined`, Python `None`).
    #[default]
    Null,
    /// A boolean.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object with unique keys, iterated in key order.
    Object(Map),
}

/// An object: unique keys in key order (faults about unknown fields are
/// listed in that order).
///
/// ```
/// use ojs_retry::{Map, Value};
/// let mut m = Map::new();
/// m.insert("b".into(), Value::from(1u64));
/// m.insert("a".into(), Value::Null);
/// assert_eq!(Value::from(m).to_string(), r#"{"a":null,"b":1}"#); // key order
/// ```
pub type Map = BTreeMap<String, Value>;

/// A number as a deserializer hands it over: a non-negative integer, a
/// negative one, or a double (which may be non-finite when it came from a
/// host value rather than JSON text).
///
/// ```
/// use ojs_retry::{Number, Value};
/// let n = |t: &str| match Value::from_json(t).unwrap() { Value::Number(n) => n, _ => unreachable!() };
/// assert_eq!(n("3").as_u64(), Some(3));
/// assert_eq!(n("3.0").as_u64(), None); // a double: the readers decide
/// assert_eq!(n("-3").as_f64(), -3.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// An integer at or above zero.
    PosInt(u64),
    /// An integer below zero.
    NegInt(i64),
    /// A double.
    Float(f64),
}

impl Number {
    /// A finite double; `None` for NaN and the infinities.
    ///
    /// ```
    /// use ojs_retry::Number;
    /// assert_eq!(Number::from_f64(2.5), Some(Number::Float(2.5)));
    /// assert_eq!(Number::from_f64(f64::NAN), None);
    /// ```
    #[must_use]
    pub fn from_f64(x: f64) -> Option<Self> {
        x.is_finite().then_some(Self::Float(x))
    }

    /// The value as a `u64`, when it was given as a non-negative integer.
    ///
    /// ```
    /// use ojs_retry::Number;
    /// assert_eq!(Number::PosInt(7).as_u64(), Some(7));
    /// assert_eq!(Number::NegInt(-7).as_u64(), None);
    /// assert_eq!(Number::Float(7.0).as_u64(), None);
    /// ```
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Self::PosInt(u) => Some(u),
            _ => None,
        }
    }

    /// The value as a double (integers rounded to nearest).
    ///
    /// ```
    /// use ojs_retry::Number;
    /// assert_eq!(Number::NegInt(-2).as_f64(), -2.0);
    /// assert_eq!(Number::PosInt(u64::MAX).as_f64(), 18_446_744_073_709_551_616.0); // rounded
    /// ```
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn as_f64(&self) -> f64 {
        match *self {
            Self::PosInt(u) => u as f64,
            Self::NegInt(i) => i as f64,
            Self::Float(f) => f,
        }
    }
}

/// As JSON and JavaScript spell numbers: `3`, `-1`, `2.5`, `1e300`, `NaN`.
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::PosInt(u) => write!(f, "{u}"),
            Self::NegInt(i) => write!(f, "{i}"),
            Self::Float(x) => f.write_str(&show_f64(x)),
        }
    }
}

use crate::describe::show_f64;

impl Value {
    /// Reads JSON text strictly: a repeated key, trailing data, a syntax
    /// error or a document over the [`limits`](crate::limits) is an error carrying
    /// `serde_json`'s message.
    ///
    /// # Errors
    ///
    /// The message, with line and column.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert_eq!(Value::from_json("[1, true]").unwrap(), Value::Array(vec![1u64.into(), true.into()]));
    /// assert!(Value::from_json("{} x").unwrap_err().contains("line 1 column"));
    /// ```
    pub fn from_json(text: &str) -> Result<Self, String> {
        if text.len() > crate::limits::MAX_DOCUMENT_BYTES {
            return Err(crate::limits::too_large());
        }
        serde_json::from_str(text).map_err(|e| alloc::format!("{e}"))
    }

    /// Reads JSON text given as bytes (invalid UTF-8 is an error).
    ///
    /// # Errors
    ///
    /// The message, with line and column.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert_eq!(Value::from_json_bytes(b"\"x\"").unwrap(), Value::from("x"));
    /// assert!(Value::from_json_bytes(b"\"\xff\"").unwrap_err().contains("invalid UTF-8 at byte 1"));
    /// ```
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Self, String> {
        match core::str::from_utf8(bytes) {
            Ok(text) => Self::from_json(text),
            Err(e) => Err(alloc::format!(
                "expected UTF-8 JSON text, found invalid UTF-8 at byte {}",
                e.valid_up_to()
            )),
        }
    }

    /// The object, if this is one.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// let v = Value::from_json(r#"{"a": 1, "b": 2}"#).unwrap();
    /// assert_eq!(v.as_object().map(|m| m.len()), Some(2));
    /// assert_eq!(Value::Null.as_object(), None);
    /// ```
    #[must_use]
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Self::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The array, if this is one.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert_eq!(Value::from_json("[1, 2]").unwrap().as_array().map(|a| a.len()), Some(2));
    /// assert_eq!(Value::from("[1, 2]").as_array(), None);
    /// ```
    #[must_use]
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Self::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The string, if this is one.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert_eq!(Value::from("PT1S").as_str(), Some("PT1S"));
    /// assert_eq!(Value::from(1u64).as_str(), None);
    /// ```
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert_eq!(Value::from(true).as_bool(), Some(true));
    /// assert_eq!(Value::from("true").as_bool(), None);
    /// ```
    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is one.
    ///
    /// ```
    /// use ojs_retry::{Number, Value};
    /// assert_eq!(Value::from(-3i64).as_number(), Some(Number::NegInt(-3)));
    /// assert_eq!(Value::from(3i64).as_number(), Some(Number::PosInt(3)));
    /// assert_eq!(Value::from("3").as_number(), None);
    /// ```
    #[must_use]
    pub fn as_number(&self) -> Option<Number> {
        match self {
            Self::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The number as a double, if this is a number.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert_eq!(Value::from_json("1e2").unwrap().as_f64(), Some(100.0));
    /// assert_eq!(Value::from("1").as_f64(), None);
    /// ```
    #[must_use]
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().map(|n| n.as_f64())
    }

    /// Whether this is a number.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert!(Value::from(2.5).is_number());
    /// assert!(!Value::from("2.5").is_number());
    /// ```
    #[must_use]
    pub fn is_number(&self) -> bool {
        matches!(self, Self::Number(_))
    }

    /// Whether this is `null`.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert!(Value::from_json("null").unwrap().is_null());
    /// assert!(!Value::from(0u64).is_null());
    /// ```
    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// The value at `key`, if this is an object holding it.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// let v = Value::from_json(r#"{"a": {"b": 1}}"#).unwrap();
    /// assert_eq!(v.get("a").and_then(|a| a.get("b")), Some(&Value::from(1u64)));
    /// assert_eq!(v.get("b"), None);
    /// ```
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|m| m.get(key))
    }

    /// How a message shows this value: `null`, `the boolean true`, `the
    /// number 2.5`, `the string "x"`, `an array`, `an object`.
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert_eq!(Value::from(2.5).describe(), "the number 2.5");
    /// assert_eq!(Value::from("x").describe(), r#"the string "x""#);
    /// assert_eq!(Value::Array(vec![]).describe(), "an array");
    /// ```
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Null => "null".into(),
            Self::Bool(b) => alloc::format!("the boolean {b}"),
            Self::Number(n) => alloc::format!("the number {n}"),
            Self::String(s) => alloc::format!("the string {}", crate::describe::quote(s)),
            Self::Array(_) => "an array".into(),
            Self::Object(_) => "an object".into(),
        }
    }

    /// Whether every number in the tree is finite (what JSON can hold).
    ///
    /// ```
    /// use ojs_retry::Value;
    /// assert!(Value::from_json("[1, 2.5]").unwrap().is_finite());
    /// assert!(!Value::Array(vec![Value::from(f64::NAN)]).is_finite());
    /// ```
    #[must_use]
    pub fn is_finite(&self) -> bool {
        match self {
            Self::Number(Number::Float(x)) => x.is_finite(),
            Self::Array(a) => a.iter().all(Self::is_finite),
            Self::Object(m) => m.values().all(Self::is_finite),
            _ => true,
        }
    }
}

/// Compact JSON text (non-finite numbers, which JSON cannot hold, as
/// `null`, as serde_json writes them).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| fmt::Error)?)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Self::Number(Number::PosInt(n))
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Self::Number(u64::try_from(n).map_or(Number::NegInt(n), Number::PosInt))
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Self::Number(Number::Float(x))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::String(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Self {
        Self::Array(a)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Self::Object(m)
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => s.serialize_unit(),
            Self::Bool(b) => s.serialize_bool(*b),
            Self::Number(Number::PosInt(u)) => s.serialize_u64(*u),
            Self::Number(Number::NegInt(i)) => s.serialize_i64(*i),
            Self::Number(Number::Float(x)) => s.serialize_f64(*x),
            Self::String(t) => s.serialize_str(t),
            Self::Array(a) => s.collect_seq(a),
            Self::Object(m) => s.collect_map(m),
        }
    }
}

const _: () = assert!(MAX_MS == 9_007_199_254_740_991);

/// Reads an integer field: JSON Schema integers (`3`, `3.0`, `1e2`), at
/// most 2^53 − 1.
pub(crate) fn read_uint(v: &Value) -> Result<u64, String> {
    // A literal (MAX_MS spelled out, checked below) so that the success
    // path formats nothing.
    let expected = "expected a non-negative integer at most 9007199254740991";
    let Value::Number(n) = v else {
        return Err(format!("{}, found {}", expected, v.describe()));
    };
    if let Some(u) = n.as_u64() {
        return if u <= MAX_MS {
            Ok(u)
        } else {
            Err(format!("{}, found {}", expected, n))
        };
    }
    if matches!(n, Number::NegInt(_)) {
        return Err(format!("{}, found {}", expected, n));
    }
    let f = n.as_f64();
    if !f.is_finite() || libm::trunc(f) != f {
        return Err(format!("{}, found {} (not an integer)", expected, n));
    }
    #[allow(clippy::cast_precision_loss)]
    if f < 0.0 || f > MAX_MS as f64 {
        return Err(format!("{}, found {}", expected, n));
    }
    // Integral and within [0, 2^53): exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(f as u64)
}

mod read;

pub use read::MAX_DEPTH;
pub(crate) use read::read_document;

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn text_is_read_strictly() {
        for bad in [
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"b":1,"b":1}}"#,
            "{} x",
            "[1,]",
            "nul",
        ] {
            assert!(Value::from_json(bad).is_err(), "{bad}");
        }
        assert!(Value::from_json_bytes(b"{\"a\": \xff}").is_err());
        let v = Value::from_json(r#"{"z":[1,-2,2.5,1e300],"a":null}"#).unwrap_or_default();
        assert_eq!(v.to_string(), r#"{"a":null,"z":[1,-2,2.5,1e+300]}"#);
    }

    #[test]
    fn host_values_are_read_to_a_bounded_depth_and_faults_located() {
        let mut deep = serde_json::json!([]);
        for _ in 0..200 {
            deep = serde_json::Value::Array(alloc::vec![deep]);
        }
        let doc = serde_json::json!({"a": 1, "b": [1, deep.clone()], "c": {"k": deep.clone()}});
        // Located at the value too deep: level 65, 63 levels below b[1].
        let below = "[0]".repeat(63);
        let fault = Value::read(&doc).unwrap_err();
        assert_eq!(
            (fault.field.as_deref(), fault.path),
            (Some("b"), Some(alloc::format!("b[1]{below}")))
        );
        let fault = Value::read(serde_json::json!({"c": {"k": deep.clone()}})).unwrap_err();
        assert_eq!(fault.path, Some(alloc::format!("c.k{below}")));
        assert!(<Value as serde::Deserialize>::deserialize(&deep).is_err());
        let shallow = serde_json::json!({"a": [[[[1]]]], "b": null});
        assert_eq!(
            Value::read(&shallow).unwrap().to_string(),
            r#"{"a":[[[[1]]]],"b":null}"#
        );
    }

    #[test]
    fn a_streaming_reader_that_fails_inside_an_array_returns() {
        // serde_json's streaming deserializer stays inside a member it
        // could not read: the reader must stop there, not ask again.
        for text in [
            r#"{"a": [{"b": 1, "b": 2}]}"#,
            r#"{"x": [[1,,2]]}"#,
            r#"{"a": [1"#,
        ] {
            let mut de = serde_json::Deserializer::from_str(text);
            assert!(Value::read(&mut de).is_err(), "{text}");
        }
    }

    #[test]
    fn numbers_show_as_javascript_does() {
        assert!(!Value::from(f64::NAN).is_finite());
    }
}
