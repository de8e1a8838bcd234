//! Ruby values in: a serde `Deserializer` over a Ruby value, so that the
//! core's own readers (`Layer::read`, `Value::read`, `Failure`,
//! `CallOptions` and `RetryState` `from_deserializer`) apply every rule of
//! a document — depth, the limits, a repeated key, each fault located at
//! its path — exactly as they do for Python's and JavaScript's values.
//!
//! Why not `serde_magnus` (0.11): it is built on magnus 0.8 (this crate
//! uses 0.9, and the two cannot share values), it copies a string before
//! anyone can measure it, and it raises `RangeError` for an `Integer`
//! beyond 64 bits. What this reader decides, and the core cannot see:
//!
//! * plain data only: `Hash`, `Array`, `String`, `Symbol`, `Integer`,
//!   `Float`, `true`, `false`, `nil` (subclasses of `Hash`, `Array` and
//!   `String` are read as their data; their methods are never called);
//!   anything else is a fault at its path;
//! * a `Hash`'s keys are `String`s or `Symbol`s, read as their text: `{a: 1,
//!   "a" => 2}` is then a repeated key, which the core refuses;
//! * a `Symbol` value reads as its name, as `JSON.generate` writes it;
//! * a `String` is measured (bytes) before it is copied, then read as UTF-8
//!   text: one in another encoding is transcoded by Ruby (the same text),
//!   one whose bytes are not valid in its encoding is a fault;
//! * an `Integer` is exact up to 128 bits, and beyond that the nearest
//!   double, which every integer field refuses as too large; `Float::NAN`
//!   and the infinities reach the core, whose readers report them.
//!
//! No Ruby method is called while a value is read (only Ruby's C API: the
//! values are read, never sent messages), so nothing can change a `Hash`
//! while it is read. Ruby values are held on the stack or in a Ruby
//! `Array` the reader makes, never in Rust's heap, where Ruby's garbage
//! collector could neither see them nor update them when it compacts.

use std::cell::RefCell;
use std::fmt;
use std::vec;

use magnus::prelude::*;
use magnus::r_hash::ForEach;
use magnus::value::{Qfalse, Qtrue};
use magnus::{
    Error, Fixnum, Float, RArray, RBignum, RHash, RString, Ruby, Symbol, TryConvert, Value,
    encoding::{EncodingCapable, RbEncoding},
};
use ojs_retry::Error as CoreError;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;

use crate::errors::CoreResult;

/// What went wrong reading a value: its message, which the core's reader
/// turns into a fault at the value's path.
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

/// One read of Ruby values: an exception Ruby raised while reading (which
/// the core would only see as a message) is kept, and raised as itself.
pub(crate) struct Reader<'r> {
    ruby: &'r Ruby,
    raised: RefCell<Option<Error>>,
}

/// Runs a core reader over Ruby values: its result, its error as a
/// `PolicyError`, or an exception Ruby raised while a value was read.
pub(crate) fn with_reader<T>(
    ruby: &Ruby,
    f: impl FnOnce(&Reader<'_>) -> Result<T, CoreError>,
) -> Result<T, Error> {
    let reader = Reader {
        ruby,
        raised: RefCell::new(None),
    };
    let result = f(&reader);
    match reader.raised.into_inner() {
        Some(e) => Err(e),
        None => result.rb(ruby),
    }
}

impl<'r> Reader<'r> {
    /// A Ruby value as a serde `Deserializer`.
    pub(crate) fn value(&self, v: Value) -> Rb<'_, 'r> {
        Rb { v, r: self }
    }

    /// Named values (keyword arguments) as one document object, read as if
    /// they were a `Hash`; `None` entries are left out.
    pub(crate) fn pairs(&self, pairs: &[(&'static str, Option<Value>)]) -> Pairs<'_, 'r> {
        let values = self.ruby.ary_new_capa(pairs.len());
        let mut names = Vec::with_capacity(pairs.len());
        for &(name, v) in pairs {
            if let Some(v) = v {
                names.push(name);
                // A failed push (out of memory) is raised after the read.
                if let Err(e) = values.push(v) {
                    self.raised(e);
                }
            }
        }
        Pairs {
            names: names.into_iter(),
            values,
            next: 0,
            value: None,
            r: self,
        }
    }

    /// Keeps an exception Ruby raised, and gives the core its message.
    fn raised(&self, e: Error) -> ReadError {
        let message = e.to_string();
        self.raised.borrow_mut().get_or_insert(e);
        ReadError(message)
    }
}

/// A Ruby value being read.
pub(crate) struct Rb<'a, 'r> {
    v: Value,
    r: &'a Reader<'r>,
}

/// A `String`'s text, measured before it is copied.
pub(crate) fn string_text(s: RString) -> Result<String, String> {
    ojs_retry::limits::check_string(s.len())?;
    utf8(s)
}

/// A `String` as UTF-8 text (no length check: see [`string_text`]).
pub(crate) fn utf8(s: RString) -> Result<String, String> {
    s.to_string().map_err(|_| {
        if s.is_utf8_compatible_encoding() {
            "expected UTF-8 text, found a String whose bytes are not valid UTF-8".to_owned()
        } else {
            let encoding = RbEncoding::from(s.enc_get());
            format!(
                "expected UTF-8 text, found a {} String that Ruby cannot convert to UTF-8",
                encoding.name()
            )
        }
    })
}

/// The classes a value may be, for a fault's "found ...".
fn kind_of(ruby: &Ruby, v: Value) -> &'static str {
    let known = [
        (ruby.class_rational(), "a Rational"),
        (ruby.class_complex(), "a Complex"),
        (ruby.class_time(), "a Time"),
        (ruby.class_range(), "a Range"),
        (ruby.class_proc(), "a Proc"),
        (ruby.class_struct(), "a Struct"),
        (ruby.class_regexp(), "a Regexp"),
        (ruby.class_module(), "a Module or Class"),
    ];
    known
        .iter()
        .find(|(class, _)| v.is_kind_of(*class))
        .map_or("an object that is not plain data", |&(_, name)| name)
}

impl<'de> Deserializer<'de> for Rb<'_, '_> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        let v = self.v;
        if v.is_nil() {
            return visitor.visit_unit();
        }
        if Qtrue::from_value(v).is_some() {
            return visitor.visit_bool(true);
        }
        if Qfalse::from_value(v).is_some() {
            return visitor.visit_bool(false);
        }
        if let Some(i) = Fixnum::from_value(v) {
            return visitor.visit_i64(i.to_i64());
        }
        if let Some(b) = RBignum::from_value(v) {
            return bignum(self.r, b, visitor);
        }
        if let Some(f) = Float::from_value(v) {
            return visitor.visit_f64(f.to_f64());
        }
        if let Some(s) = RString::from_value(v) {
            return visitor.visit_string(string_text(s).map_err(ReadError)?);
        }
        if let Some(sym) = Symbol::from_value(v) {
            return visitor.visit_string(symbol_text(sym)?);
        }
        if let Some(a) = RArray::from_value(v) {
            return visitor.visit_seq(Seq {
                a,
                next: 0,
                len: a.len(),
                r: self.r,
            });
        }
        if let Some(h) = RHash::from_value(v) {
            return visitor.visit_map(Map {
                h,
                len: h.len(),
                items: None,
                next: 0,
                value: None,
                r: self.r,
            });
        }
        Err(ReadError(format!(
            "expected plain data (a Hash, Array, String, Symbol, Integer, Float, true, false \
             or nil), found {}",
            kind_of(self.r.ruby, v)
        )))
    }

    /// A value the core skips (after a fault) is not walked: it may be
    /// nested without bound.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier
    }
}

/// An `Integer` beyond a machine word: exact within 128 bits, else the
/// nearest double (Ruby's own conversion, C only).
fn bignum<'de, V: Visitor<'de>>(
    r: &Reader<'_>,
    b: RBignum,
    visitor: V,
) -> Result<V::Value, ReadError> {
    if let Ok(u) = b.to_u64() {
        return visitor.visit_u64(u);
    }
    if let Ok(i) = b.to_i128() {
        return visitor.visit_i128(i);
    }
    let x = f64::try_convert(b.as_value()).map_err(|e| r.raised(e))?;
    visitor.visit_f64(x)
}

fn symbol_text(sym: Symbol) -> Result<String, ReadError> {
    let name = sym
        .name()
        .map_err(|_| ReadError("expected UTF-8 text, found a Symbol that is not".into()))?;
    ojs_retry::limits::check_string(name.len()).map_err(ReadError)?;
    Ok(name.into_owned())
}

struct Seq<'a, 'r> {
    a: RArray,
    next: usize,
    len: usize,
    r: &'a Reader<'r>,
}

impl<'de> SeqAccess<'de> for Seq<'_, '_> {
    type Error = ReadError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ReadError> {
        if self.next >= self.len {
            return Ok(None);
        }
        let v = entry(self.r, self.a, self.next)?;
        self.next = self.next.saturating_add(1);
        seed.deserialize(self.r.value(v)).map(Some)
    }

    /// The length is announced first: the core refuses a long array before
    /// any element is read.
    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}

struct Map<'a, 'r> {
    h: RHash,
    len: usize,
    /// The entries as a flat `Array` `[k0, v0, k1, v1, ...]`, taken on the
    /// first key: after the core has checked the announced length.
    items: Option<RArray>,
    next: usize,
    value: Option<Value>,
    r: &'a Reader<'r>,
}

impl Map<'_, '_> {
    /// The next entry, if any.
    fn entry(&mut self) -> Result<Option<(Value, Value)>, ReadError> {
        let items = match self.items {
            Some(items) => items,
            None => {
                let all = self.r.ruby.ary_new_capa(self.len.saturating_mul(2));
                self.h
                    .foreach(|k: Value, v: Value| {
                        all.push(k)?;
                        all.push(v)?;
                        Ok(ForEach::Continue)
                    })
                    .map_err(|e| self.r.raised(e))?;
                self.items = Some(all);
                all
            }
        };
        if self.next >= items.len() {
            return Ok(None);
        }
        let k = entry(self.r, items, self.next)?;
        let v = entry(self.r, items, self.next.saturating_add(1))?;
        self.next = self.next.saturating_add(2);
        Ok(Some((k, v)))
    }
}

/// An `Array`'s element.
fn entry(r: &Reader<'_>, a: RArray, index: usize) -> Result<Value, ReadError> {
    let index = isize::try_from(index).map_err(de::Error::custom)?;
    a.entry(index).map_err(|e| r.raised(e))
}

impl<'de> MapAccess<'de> for Map<'_, '_> {
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        let Some((k, v)) = self.entry()? else {
            return Ok(None);
        };
        self.value = Some(v);
        let key = if let Some(s) = RString::from_value(k) {
            string_text(s).map_err(ReadError)?
        } else if let Some(sym) = Symbol::from_value(k) {
            symbol_text(sym)?
        } else {
            return Err(ReadError(format!(
                "expected String or Symbol keys, found a key that is {}",
                describe_key(self.r.ruby, k)
            )));
        };
        seed.deserialize(de::value::StringDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ReadError> {
        let v = self
            .value
            .take()
            .ok_or_else(|| ReadError("a Hash value was read before its key".into()))?;
        seed.deserialize(self.r.value(v))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}

fn describe_key(ruby: &Ruby, k: Value) -> &'static str {
    if Fixnum::from_value(k).is_some() || RBignum::from_value(k).is_some() {
        "an Integer"
    } else if Float::from_value(k).is_some() {
        "a Float"
    } else if k.is_nil() {
        "nil"
    } else if Qtrue::from_value(k).is_some() || Qfalse::from_value(k).is_some() {
        "a boolean"
    } else if RArray::from_value(k).is_some() {
        "an Array"
    } else if RHash::from_value(k).is_some() {
        "a Hash"
    } else {
        kind_of(ruby, k)
    }
}

/// Keyword arguments as one document object (see [`Reader::pairs`]).
pub(crate) struct Pairs<'a, 'r> {
    names: vec::IntoIter<&'static str>,
    /// The values, in the names' order.
    values: RArray,
    next: usize,
    value: Option<Value>,
    r: &'a Reader<'r>,
}

impl<'de> Deserializer<'de> for Pairs<'_, '_> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_map(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> MapAccess<'de> for Pairs<'_, '_> {
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        let Some(k) = self.names.next() else {
            return Ok(None);
        };
        self.value = Some(entry(self.r, self.values, self.next)?);
        self.next = self.next.saturating_add(1);
        seed.deserialize(de::value::StrDeserializer::new(k))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ReadError> {
        let v = self
            .value
            .take()
            .ok_or_else(|| ReadError("a keyword's value was read before its name".into()))?;
        seed.deserialize(self.r.value(v))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.values.len())
    }
}
