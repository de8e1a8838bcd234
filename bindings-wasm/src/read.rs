//! Reading a caller's live JS values, the same way in both builds: the
//! core's one reader ([`ojs_retry::Value::read`], which also reads JSON
//! text and Python objects) over a serde `Deserializer` of JS values.
//!
//! The deserializer keeps the JS rules, so that the core knows nothing of
//! JavaScript:
//!
//! * plain data only: `null`, booleans, numbers, strings, BigInts, arrays
//!   and objects; anything else (a `Map`, a `Date`, a function, a symbol,
//!   an engine object) is a fault naming what it is. An object of another
//!   class is read by its own fields;
//! * own enumerable string-keyed properties only, each read once (a getter
//!   runs once); nothing is read through a prototype: an array's hole is a
//!   hole (`null`), never `Array.prototype[i]`;
//! * a member holding `undefined` is absent; `undefined` elsewhere is
//!   `null`;
//! * sizes are announced before anything is read or copied: an array's or
//!   an object's length to the core's limits (`size_hint`), a string's
//!   length in UTF-16 units before its text is copied (a string longer
//!   than a whole document is refused uncopied; a shorter one is copied and
//!   the core checks its bytes);
//! * a safe integer is an integer, any other number a double (NaN kept, for
//!   the reader to report);
//! * what the caller's code throws while a value is read (a getter, a
//!   proxy's trap) is a fault there, never an exception through the engine.
//!
//! The host answers a few questions ([`Host`]); in both builds the questions
//! that can run the caller's code go to the JS layer's readers
//! (`js/host.js`: intrinsics captured at load, every exception caught),
//! so both builds read the same value the same way.

use std::fmt;

use ojs_retry::{Error, ErrorCode, Fault, Map, Number, Value};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;

use crate::fw::Thrown;

/// What a value is, as far as `typeof` tells (nothing of the caller's code
/// runs to tell it).
pub(crate) enum Prim {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    /// A string of this many UTF-16 code units.
    String(usize),
    BigInt,
    Symbol,
    Function,
    Object,
}

/// What an object is (asked of the JS layer's `kindOf`).
pub(crate) enum Shape {
    /// An array of this length.
    Array(usize),
    /// Read by its own enumerable string-keyed properties.
    Plain,
    /// Not data: what it is ("a Map").
    Other(String),
}

/// The questions the reader asks of a host value. An `Err` is a fault's
/// message: the caller's code threw ("the value cannot be read ...").
pub(crate) trait Host {
    /// A JS value.
    type V: Clone;
    fn prim(&self, v: &Self::V) -> Result<Prim, String>;
    /// A string's text; `None` when it holds a lone surrogate.
    fn text(&self, v: &Self::V) -> Result<Option<String>, String>;
    /// A BigInt's value, saturated beyond 128 bits.
    fn bigint(&self, v: &Self::V) -> Result<i128, String>;
    fn shape(&self, v: &Self::V) -> Result<Shape, String>;
    /// An object's own enumerable string keys: the list and its length.
    fn keys(&self, v: &Self::V) -> Result<(Self::V, usize), String>;
    /// An entry of a list [`Host::keys`] made.
    fn key_at(&self, keys: &Self::V, i: usize) -> Result<Self::V, String>;
    /// An own property's value (`undefined` when it is not an own one).
    fn own(&self, o: &Self::V, key: &Self::V) -> Result<Self::V, String>;
    /// An array's own element (`undefined` for a hole).
    fn own_at(&self, o: &Self::V, i: usize) -> Result<Self::V, String>;
}

/// The fault of a value that is not plain data.
fn not_data(what: &str) -> String {
    format!("expected plain data (an object, array, string, number, boolean or null), found {what}")
}

pub(crate) const LONE_SURROGATE: &str = "expected well-formed text, found a lone UTF-16 surrogate";

/// A string argument of `units` UTF-16 code units (never more than its
/// UTF-8 bytes) measured before it is copied: nothing the engine reads is
/// longer than a whole document, so a longer one is refused as it is (the
/// core checks a shorter one's bytes).
pub(crate) fn check_units(code: ErrorCode, path: &str, units: usize) -> Result<(), Error> {
    let max = ojs_retry::limits::MAX_DOCUMENT_BYTES;
    if units > max {
        return Err(Error::new(
            code,
            path,
            format!("expected a string of at most {max} bytes, found one of {units} UTF-16 units"),
        ));
    }
    Ok(())
}

/// [`check_units`] for a member of a document: the fault's message.
fn measured(units: usize) -> Result<(), String> {
    check_units(ErrorCode::InvalidArgument, "", units).map_err(|e| {
        e.faults()
            .first()
            .map(|f| f.message.clone())
            .unwrap_or_default()
    })
}

/// The deserializer's error: a fault's message.
#[derive(Debug)]
pub(crate) struct DeError(String);

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

impl From<String> for DeError {
    fn from(m: String) -> Self {
        Self(m)
    }
}

/// A JS value to deserialize.
pub(crate) struct De<'h, H: Host>(pub(crate) &'h H, pub(crate) H::V);

/// A safe integer as an integer, anything else as a double.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::float_cmp
)]
fn visit_number<'de, V: Visitor<'de>>(x: f64, v: V) -> Result<V::Value, DeError> {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if (-SAFE..=SAFE).contains(&x) {
        let i = x as i64;
        if i as f64 == x {
            return v.visit_i64(i);
        }
    }
    v.visit_f64(x)
}

/// A JS number as a document value, as the deserializer reads it.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::float_cmp
)]
pub(crate) fn number(x: f64) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if (-SAFE..=SAFE).contains(&x) {
        let i = x as i64;
        if i as f64 == x {
            return Value::from(i);
        }
    }
    Value::Number(Number::Float(x))
}

impl<'de, H: Host> Deserializer<'de> for De<'_, H> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let De(h, v) = self;
        match h.prim(&v)? {
            Prim::Undefined | Prim::Null => visitor.visit_unit(),
            Prim::Bool(b) => visitor.visit_bool(b),
            Prim::Number(x) => visit_number(x, visitor),
            Prim::String(units) => {
                measured(units)?;
                match h.text(&v)? {
                    Some(s) => visitor.visit_string(s),
                    None => Err(DeError(LONE_SURROGATE.into())),
                }
            }
            Prim::BigInt => {
                // Within u64 or i64 as that integer (a seed up to 2^64 − 1);
                // beyond, the reader makes it a double that every integer
                // field refuses.
                let i = h.bigint(&v)?;
                match (u64::try_from(i), i64::try_from(i)) {
                    (Ok(u), _) => visitor.visit_u64(u),
                    (_, Ok(s)) => visitor.visit_i64(s),
                    _ => visitor.visit_i128(i),
                }
            }
            Prim::Symbol => Err(DeError(not_data("a symbol"))),
            Prim::Function => Err(DeError(not_data("a function"))),
            Prim::Object => match h.shape(&v)? {
                Shape::Array(len) => visitor.visit_seq(Elements { h, a: v, len, i: 0 }),
                Shape::Plain => {
                    let (keys, len) = h.keys(&v)?;
                    visitor.visit_map(Members {
                        h,
                        o: v,
                        keys,
                        len,
                        i: 0,
                        value: None,
                    })
                }
                Shape::Other(what) => Err(DeError(not_data(&what))),
            },
        }
    }

    /// What the reader skips is not read (no getter runs for it).
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier
    }
}

/// An array's elements, by own index.
struct Elements<'h, H: Host> {
    h: &'h H,
    a: H::V,
    len: usize,
    i: usize,
}

impl<'de, H: Host> SeqAccess<'de> for Elements<'_, H> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        if self.i >= self.len {
            return Ok(None);
        }
        let e = self.h.own_at(&self.a, self.i)?;
        self.i = self.i.saturating_add(1);
        seed.deserialize(De(self.h, e)).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len.saturating_sub(self.i))
    }
}

/// An object's own enumerable members; those holding `undefined` are left
/// out.
struct Members<'h, H: Host> {
    h: &'h H,
    o: H::V,
    keys: H::V,
    len: usize,
    i: usize,
    value: Option<H::V>,
}

impl<'de, H: Host> MapAccess<'de> for Members<'_, H> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        while self.i < self.len {
            let key = self.h.key_at(&self.keys, self.i)?;
            self.i = self.i.saturating_add(1);
            let value = self.h.own(&self.o, &key)?;
            if matches!(self.h.prim(&value)?, Prim::Undefined) {
                continue;
            }
            self.value = Some(value);
            return seed.deserialize(De(self.h, key)).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, DeError> {
        match self.value.take() {
            Some(v) => seed.deserialize(De(self.h, v)),
            None => Err(DeError("a member was read twice".into())),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len.saturating_sub(self.i))
    }
}

/// A JS value as a document: its value, or the fault (located at its
/// field) that stopped reading it.
pub(crate) fn located<H: Host>(h: &H, v: H::V) -> Result<Value, Fault> {
    Value::read(De(h, v))
}

/// A JS value as a document whose faults have `code`.
pub(crate) fn document<H: Host>(h: &H, v: H::V, code: ErrorCode) -> Result<Value, Thrown> {
    located(h, v).map_err(|f| Thrown::from(Error::from_fault(code, f)))
}

/// An argument named `field` read as a document (a list of patterns): it
/// alone counts against the budget (one for it, then its members), and
/// its faults are located at `field`, `field[2]`.
pub(crate) fn named<H: Host>(
    h: &H,
    v: H::V,
    code: ErrorCode,
    field: &str,
) -> Result<Value, Thrown> {
    Value::read_argument(field, De(h, v)).map_err(|f| Thrown::from(Error::from_fault(code, f)))
}

/// What a value is, for "found ..." messages (`typeof`, and `null`).
pub(crate) fn type_name<H: Host>(h: &H, v: &H::V) -> &'static str {
    match h.prim(v) {
        Ok(Prim::Undefined) => "undefined",
        Ok(Prim::Null) => "null",
        Ok(Prim::Bool(_)) => "a boolean",
        Ok(Prim::Number(_)) => "a number",
        Ok(Prim::String(_)) => "a string",
        Ok(Prim::BigInt) => "a BigInt",
        Ok(Prim::Symbol) => "a symbol",
        Ok(Prim::Function) => "a function",
        Ok(Prim::Object) => "an object",
        Err(_) => "a value",
    }
}

/// A string argument at `field` (`""`: the whole document, with `code`):
/// measured before it is copied, a lone surrogate refused.
pub(crate) fn string_arg<H: Host>(
    h: &H,
    v: &H::V,
    code: ErrorCode,
    field: &str,
) -> Result<String, Thrown> {
    let fault = |m: String| Thrown::from(Error::new(code, field, m));
    match h.prim(v).map_err(fault)? {
        Prim::String(units) => {
            check_units(code, field, units)?;
            h.text(v)
                .map_err(fault)?
                .ok_or_else(|| fault(LONE_SURROGATE.into()))
        }
        _ => Err(fault(format!(
            "expected a string, found {}",
            type_name(h, v)
        ))),
    }
}

/// A string's length in UTF-16 units, when it is a string.
pub(crate) fn string_len<H: Host>(h: &H, v: &H::V) -> Option<usize> {
    match h.prim(v) {
        Ok(Prim::String(units)) => Some(units),
        _ => None,
    }
}

/// An integer argument (0 ..= 2^53 − 1): a JS number, nothing coerced.
pub(crate) fn uint_arg<H: Host>(h: &H, v: &H::V, field: &str) -> Result<u64, Thrown> {
    match h.prim(v) {
        Ok(Prim::Number(x)) => Ok(ojs_retry::uint_from_f64(field, x)?),
        _ => Err(Thrown::from(Error::invalid_argument(
            field,
            format!("expected an integer number, found {}", type_name(h, v)),
        ))),
    }
}

/// Whether a value is `undefined`.
pub(crate) fn is_undefined<H: Host>(h: &H, v: &H::V) -> bool {
    matches!(h.prim(v), Ok(Prim::Undefined))
}

/// Whether a value is a string.
pub(crate) fn is_string<H: Host>(h: &H, v: &H::V) -> bool {
    matches!(h.prim(v), Ok(Prim::String(_)))
}

/// An object of named values, for the readers of typed records (a failure
/// or options read field by field by the JS layer): the members that are
/// given, as the deserializer would have read them.
#[derive(Default)]
pub(crate) struct Record(Map);

impl Record {
    pub(crate) fn num(&mut self, key: &str, x: Option<f64>) -> &mut Self {
        if let Some(x) = x {
            self.0.insert(key.into(), number(x));
        }
        self
    }

    pub(crate) fn text(&mut self, key: &str, s: Option<String>) -> &mut Self {
        if let Some(s) = s {
            self.0.insert(key.into(), Value::String(s));
        }
        self
    }

    pub(crate) fn flag(&mut self, key: &str, b: Option<bool>) -> &mut Self {
        if let Some(b) = b {
            self.0.insert(key.into(), Value::Bool(b));
        }
        self
    }

    pub(crate) fn into_value(self) -> Value {
        Value::Object(self.0)
    }
}
