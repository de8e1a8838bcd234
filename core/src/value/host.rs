//! Reading a value a JavaScript host passes — the one walk both JS
//! bindings (napi-rs and wasm-bindgen) use, so that they give the same
//! answer for the same value.
//!
//! Why not the hosts' serde support: napi-rs's deserializer reads
//! *inherited* enumerable properties (a polluted `Object.prototype`
//! becomes policy fields), turns a `Map`, `Date` or `Promise` into an
//! empty object, rounds numbers beyond `i64` and replaces lone surrogates;
//! serde-wasm-bindgen reads a `Map` as an object and a `Date` as `{}`.
//! Neither can refuse a 2^32 − 1-long array before walking it. The host
//! answers a few questions ([`Host`]); this walk applies every rule:
//! own enumerable string keys only, plain data only, the
//! [`limits`] checked before anything is copied, the depth
//! bounded, every fault located at its path.

use alloc::string::String;
use alloc::vec::Vec;

use super::{MAX_DEPTH, Map, Number, Value};
use crate::error::Fault;
use crate::limits::{self, Budget};

/// What a host value is, as far as a document is concerned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// `null`.
    Null,
    /// `undefined`: an object member holding it is left out (as
    /// `JSON.stringify` does); anywhere else it reads as `null`.
    Undefined,
    /// A boolean.
    Bool(bool),
    /// A number (NaN and infinities included: readers report them).
    Number(f64),
    /// A BigInt that fits 64 bits (signed or not).
    BigInt(i128),
    /// A string of this many UTF-16 code units.
    String(usize),
    /// An array of this length.
    Array(usize),
    /// A plain object: its prototype is `Object.prototype` or `null`.
    Object,
    /// Anything else (a function, a symbol, a `Map`, a `Date`, a BigInt
    /// beyond 64 bits, ...), described for the fault: "a Map".
    Other(&'static str),
}

/// The questions the walk asks of a host value.
pub trait Host: Sized {
    /// The host's own failure (an exception a getter threw): passed
    /// through untouched.
    type Error;
    /// What the value is.
    fn kind(&self) -> Result<Kind, Self::Error>;
    /// A string's text; `None` when it holds a lone surrogate.
    fn text(&self) -> Result<Option<String>, Self::Error>;
    /// An array's element.
    fn element(&self, index: usize) -> Result<Self, Self::Error>;
    /// A plain object's own enumerable string keys, as an array value.
    fn keys(&self) -> Result<Self, Self::Error>;
    /// A plain object's own property, by a key [`Host::keys`] gave.
    fn member(&self, key: &Self) -> Result<Self, Self::Error>;
}

/// Reads a host value as a document: the value, or the first fault with
/// its path (`field`, `field[2]`, `field.key.sub`).
///
/// # Errors
///
/// The host's own error, if asking it failed.
///
/// ```
/// use ojs_retry::value::host::{Host, Kind, read};
/// // A host whose values are serde_json values (a test double).
/// struct J(serde_json::Value);
/// impl Host for J {
///     type Error = ();
///     fn kind(&self) -> Result<Kind, ()> {
///         Ok(match &self.0 {
///             serde_json::Value::Null => Kind::Null,
///             serde_json::Value::Bool(b) => Kind::Bool(*b),
///             serde_json::Value::Number(n) => Kind::Number(n.as_f64().unwrap_or(0.0)),
///             serde_json::Value::String(s) => Kind::String(s.len()),
///             serde_json::Value::Array(a) => Kind::Array(a.len()),
///             serde_json::Value::Object(_) => Kind::Object,
///         })
///     }
///     fn text(&self) -> Result<Option<String>, ()> { Ok(self.0.as_str().map(String::from)) }
///     fn element(&self, i: usize) -> Result<J, ()> { Ok(J(self.0[i].clone())) }
///     fn keys(&self) -> Result<J, ()> {
///         Ok(J(self.0.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()))
///     }
///     fn member(&self, k: &J) -> Result<J, ()> { Ok(J(self.0[k.0.as_str().unwrap_or("")].clone())) }
/// }
/// let v = read(&J(serde_json::json!({"a": [1, "x"]}))).unwrap().unwrap();
/// assert_eq!(v.to_string(), r#"{"a":[1,"x"]}"#);
/// let fault = read(&J(serde_json::json!({"a": [1, {"b": [true, "\u{0}"]}], "c": {}})));
/// assert!(fault.unwrap().is_ok());
/// ```
pub fn read<H: Host>(h: &H) -> Result<Result<Value, Fault>, H::Error> {
    read_as(h, None)
}

/// [`read`] for a value that is itself an argument named `field` (a list
/// of patterns): its faults are located at `field`, `field[3]`, ...
///
/// # Errors
///
/// The host's own error, if asking it failed.
pub fn read_as<H: Host>(h: &H, field: Option<&str>) -> Result<Result<Value, Fault>, H::Error> {
    let walk = Walk {
        budget: Budget::new(),
    };
    let mut at = At {
        field: field.map(String::from),
        path: field.map(String::from).unwrap_or_default(),
    };
    walk.value(h, &mut at, 0)
}

/// The path of the value being read: its top-level field and the rest.
#[derive(Default)]
struct At {
    field: Option<String>,
    path: String,
}

impl At {
    fn fault(&self, message: String) -> Fault {
        match &self.field {
            None => Fault::at("", message),
            Some(f) => Fault::at_field(f, self.path.clone(), message),
        }
    }
}

struct Walk {
    budget: Budget,
}

type Read = Result<Value, Fault>;

impl Walk {
    fn value<H: Host>(&self, h: &H, at: &mut At, depth: u32) -> Result<Read, H::Error> {
        if depth > MAX_DEPTH {
            return Ok(Err(at.fault(alloc::format!(
                "expected a value nested at most {MAX_DEPTH} levels deep (is it cyclic?)"
            ))));
        }
        if let Err(m) = self.budget.take(1) {
            return Ok(Err(at.fault(m)));
        }
        Ok(match h.kind()? {
            Kind::Null | Kind::Undefined => Ok(Value::Null),
            Kind::Bool(b) => Ok(Value::Bool(b)),
            Kind::Number(x) => Ok(number(x)),
            Kind::BigInt(i) => Ok(bigint(i)),
            Kind::String(units) => self.string(h, units)?.map(Value::String).map_err(|m| at.fault(m)),
            Kind::Array(len) => self.array(h, len, at, depth)?,
            Kind::Object => self.object(h, at, depth)?,
            Kind::Other(what) => Err(at.fault(alloc::format!(
                "expected plain data (an object, array, string, number, boolean or null), found {what}"
            ))),
        })
    }

    fn string<H: Host>(&self, h: &H, units: usize) -> Result<Result<String, String>, H::Error> {
        // UTF-16 units never outnumber UTF-8 bytes: a string refused here
        // is over the limit in bytes too, and is never copied.
        if let Err(m) = limits::check_string(units) {
            return Ok(Err(m));
        }
        let Some(text) = h.text()? else {
            return Ok(Err(
                "expected well-formed text, found a lone UTF-16 surrogate".into(),
            ));
        };
        let fits = limits::check_string(text.len()).and_then(|()| self.budget.take(text.len()));
        Ok(fits.map(|()| text))
    }

    fn array<H: Host>(&self, h: &H, len: usize, at: &mut At, depth: u32) -> Result<Read, H::Error> {
        if let Err(m) = limits::check_array(len) {
            return Ok(Err(at.fault(m)));
        }
        let mut items = Vec::with_capacity(len);
        for i in 0..len {
            let element = h.element(i)?;
            let mark = at.path.len();
            at.path.push_str(&alloc::format!("[{i}]"));
            let read = self.value(&element, at, depth.saturating_add(1))?;
            at.path.truncate(mark);
            match read {
                Ok(v) => items.push(v),
                Err(f) => return Ok(Err(f)),
            }
        }
        Ok(Ok(Value::Array(items)))
    }

    fn object<H: Host>(&self, h: &H, at: &mut At, depth: u32) -> Result<Read, H::Error> {
        let keys = h.keys()?;
        let len = match keys.kind()? {
            Kind::Array(len) => len,
            _ => 0,
        };
        if let Err(m) = limits::check_object(len) {
            return Ok(Err(at.fault(m)));
        }
        let mut m = Map::new();
        for i in 0..len {
            let key_value = keys.element(i)?;
            let key = match key_value.kind()? {
                Kind::String(units) => match self.string(&key_value, units)? {
                    Ok(k) => k,
                    Err(message) => return Ok(Err(at.fault(message))),
                },
                // Symbol keys are not data: left out, as JSON leaves them.
                _ => continue,
            };
            let member = h.member(&key_value)?;
            if member.kind()? == Kind::Undefined {
                continue;
            }
            let (field, mark) = (at.field.clone(), at.path.len());
            if at.field.is_none() {
                at.field = Some(key.clone());
                at.path.push_str(&key);
            } else {
                at.path.push('.');
                at.path.push_str(&key);
            }
            let read = self.value(&member, at, depth.saturating_add(1))?;
            at.field = field;
            at.path.truncate(mark);
            match read {
                Ok(v) => {
                    m.insert(key, v);
                }
                Err(f) => return Ok(Err(f)),
            }
        }
        Ok(Ok(Value::Object(m)))
    }
}

/// A JS number: a safe integer (integral, |x| ≤ 2^53 − 1, as
/// `Number.isSafeInteger` says) as an integer, anything else as a double
/// (NaN and infinities kept for the readers to report).
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::float_cmp
)]
fn number(x: f64) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if (-SAFE..=SAFE).contains(&x) {
        // Within ±2^53 the conversion is exact both ways for integers, so
        // the round trip tells whether `x` is one.
        let i = x as i64;
        if i as f64 == x {
            return Value::from(i);
        }
    }
    Value::Number(Number::Float(x))
}

/// A BigInt: within `i64`/`u64` as that integer, else as a double, which
/// every integer field refuses as too large.
#[allow(clippy::cast_precision_loss)]
fn bigint(i: i128) -> Value {
    if let Ok(v) = i64::try_from(i) {
        return v.into();
    }
    u64::try_from(i).map_or_else(|_| (i as f64).into(), Value::from)
}
