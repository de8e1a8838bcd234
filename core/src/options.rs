//! What a caller passes beside a document: the jitter source, `now`, a
//! history limit — read here, in the engine's spelling of keys, for hosts
//! that receive them as one object (Ruby's keyword hash), and an owned
//! [`Jitter`] that outlives the borrowed [`JitterSource`].

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;

use crate::describe::{quote, show_f64};
use crate::duration::MAX_MS;
use crate::error::{Error, ErrorCode, Faults};
use crate::jitter::JitterSource;
use crate::value::{Number, Value};

/// An integer given as a double (a JavaScript number, a Python float): it
/// must be finite, integral and within `0..=2^53 − 1`; anything else is an
/// error naming `field`, never a truncation or a clamp. `-0` is `0`.
///
/// # Errors
///
/// `validation.invalid_argument` at `field`.
///
/// ```
/// use ojs_retry::uint_from_f64;
/// assert_eq!(uint_from_f64("attempt", 3.0).unwrap(), 3);
/// assert_eq!(uint_from_f64("attempt", 2.5).unwrap_err().field(), Some("attempt"));
/// assert!(uint_from_f64("now", f64::NAN).is_err());
/// assert!(uint_from_f64("now", 9_007_199_254_740_992.0).is_err());
/// ```
pub fn uint_from_f64(field: &str, x: f64) -> Result<u64, Error> {
    #[allow(clippy::cast_precision_loss)]
    let max = MAX_MS as f64;
    if x.is_finite() && libm::trunc(x) == x && (0.0..=max).contains(&x) {
        // Integral and within [0, 2^53): exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        return Ok(x as u64);
    }
    Err(Error::arg(
        field,
        format!(
            "expected an integer between 0 and {MAX_MS}, found {}",
            show_f64(x)
        ),
    ))
}

/// Where the jitter sample comes from, owned (a key is the caller's
/// string); [`Jitter::source`] lends it to the engine.
///
/// ```
/// use ojs_retry::{Jitter, JitterSource};
/// let j = Jitter::from_parts(None, None, Some("job-1".into())).unwrap();
/// assert_eq!(j.source(), JitterSource::Key("job-1"));
/// assert!(Jitter::from_parts(Some(0.5), Some(1), None).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Jitter {
    /// An explicit sample in `[0, 1)`.
    Uniform(f64),
    /// The documented SplitMix64 stream.
    Seed(u64),
    /// Stateless keyed jitter (the job id).
    Key(String),
    /// OS entropy.
    #[cfg(feature = "std")]
    Entropy,
}

impl Jitter {
    /// The borrowed source to pass to the engine.
    ///
    /// ```
    /// use ojs_retry::{Jitter, JitterSource};
    /// assert_eq!(Jitter::Seed(7).source(), JitterSource::Seed(7));
    /// assert_eq!(Jitter::Key("job-1".into()).source(), JitterSource::Key("job-1"));
    /// ```
    #[must_use]
    pub fn source(&self) -> JitterSource<'_> {
        match self {
            Self::Uniform(u) => JitterSource::Uniform(*u),
            Self::Seed(s) => JitterSource::Seed(*s),
            Self::Key(k) => JitterSource::Key(k),
            #[cfg(feature = "std")]
            Self::Entropy => JitterSource::Entropy,
        }
    }

    /// At most one of `u`, `seed` and `key`; none is OS entropy.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` when several are given, or (without
    /// `std`) none.
    ///
    /// ```
    /// use ojs_retry::Jitter;
    /// assert_eq!(Jitter::from_parts(Some(0.5), None, None)?, Jitter::Uniform(0.5));
    /// assert_eq!(Jitter::from_parts(None, Some(9), None)?, Jitter::Seed(9));
    /// assert_eq!(Jitter::from_parts(None, Some(9), Some("k".into())).unwrap_err().field(), Some("u"));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_parts(
        u: Option<f64>,
        seed: Option<u64>,
        key: Option<String>,
    ) -> Result<Self, Error> {
        match (u, seed, key) {
            (Some(u), None, None) => Ok(Self::Uniform(u)),
            (None, Some(s), None) => Ok(Self::Seed(s)),
            (None, None, Some(k)) => Ok(Self::Key(k)),
            #[cfg(feature = "std")]
            (None, None, None) => Ok(Self::Entropy),
            #[cfg(not(feature = "std"))]
            (None, None, None) => Err(Error::arg("u", "expected one of u, seed or key")),
            _ => Err(Error::arg(
                "u",
                "expected at most one jitter source of u, seed and key, found several",
            )),
        }
    }
}

/// The options a caller passes beside a call, as one object:
/// the jitter source (`u`, `seed` or `key`), `now` (epoch ms) and
/// `history_limit`. Unknown keys are errors: a typo must not silently mean
/// "no jitter key".
///
/// ```
/// use ojs_retry::{CallOptions, Jitter, Value};
/// let v = Value::from_json(r#"{"key": "job-7", "now": 1000}"#).unwrap();
/// let o = CallOptions::from_value(&v).unwrap();
/// assert_eq!((o.now, o.jitter), (Some(1000), Some(Jitter::Key("job-7".into()))));
/// let typo = Value::from_json(r#"{"kye": "job-7"}"#).unwrap();
/// assert_eq!(CallOptions::from_value(&typo).unwrap_err().field(), Some("kye"));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallOptions {
    /// `now`, epoch ms.
    pub now: Option<u64>,
    /// The jitter source, when one was given.
    pub jitter: Option<Jitter>,
    /// `history_limit`.
    pub history_limit: Option<usize>,
}

impl CallOptions {
    /// Reads an option object (`null` is no options).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` listing every fault.
    ///
    /// ```
    /// use ojs_retry::{CallOptions, Jitter, Value};
    /// assert_eq!(CallOptions::from_value(&Value::Null)?, CallOptions::default());
    /// let v = Value::from_json(r#"{"history_limit": 20, "u": 0.5}"#).unwrap();
    /// let o = CallOptions::from_value(&v)?;
    /// assert_eq!((o.history_limit, o.jitter), (Some(20), Some(Jitter::Uniform(0.5))));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        let mut faults = Faults::default();
        let mut out = Self::default();
        let map = match value {
            Value::Null => return Ok(out),
            Value::Object(m) => m,
            other => {
                faults.push(
                    "",
                    format!("expected an options object, found {}", other.describe()),
                );
                faults.into_error(ErrorCode::InvalidArgument)?;
                return Ok(out);
            }
        };
        let (mut u, mut seed, mut key) = (None, None, None);
        for (k, v) in map {
            let name = k.as_str();
            match name {
                _ if v.is_null() => {} // an absent option, as `undefined` is
                "u" => match v.as_number() {
                    Some(n) => u = Some(n.as_f64()),
                    None => faults.push(name, expected("a number", v)),
                },
                "seed" => match read_seed(v) {
                    Some(s) => seed = Some(s),
                    None => faults.push(
                        name,
                        expected("an integer in 0..2^64 (a number or a decimal string)", v),
                    ),
                },
                "key" => match v.as_str() {
                    Some(s) => key = Some(s.to_owned()),
                    None => faults.push(name, expected("a string", v)),
                },
                "now" => match uint_arg(name, v) {
                    Ok(n) => out.now = Some(n),
                    Err(e) => faults.0.extend(e.faults().iter().cloned()),
                },
                "history_limit" => match uint_arg(name, v) {
                    Ok(n) => out.history_limit = Some(usize::try_from(n).unwrap_or(usize::MAX)),
                    Err(e) => faults.0.extend(e.faults().iter().cloned()),
                },
                _ => faults.push_key(
                    name,
                    format!(
                        "unknown option {}; expected u, seed, key, now or history_limit",
                        quote(name)
                    ),
                ),
            }
        }
        faults.into_error(ErrorCode::InvalidArgument)?;
        if u.is_some() || seed.is_some() || key.is_some() {
            out.jitter = Some(Jitter::from_parts(u, seed, key)?);
        }
        Ok(out)
    }

    /// [`CallOptions::from_value`] reading the object from any serde
    /// `Deserializer` (a host value).
    ///
    /// # Errors
    ///
    /// As [`CallOptions::from_value`].
    ///
    /// ```
    /// use ojs_retry::{CallOptions, Jitter};
    /// let o = CallOptions::from_deserializer(&serde_json::json!({"seed": 42, "now": 0}))?;
    /// assert_eq!((o.now, o.jitter), (Some(0), Some(Jitter::Seed(42))));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_deserializer<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Self, Error> {
        let v = Value::read(d).map_err(|f| Error::from_fault(ErrorCode::InvalidArgument, f))?;
        Self::from_value(&v)
    }

    /// The jitter source to use: the one given, else OS entropy.
    ///
    /// ```
    /// use ojs_retry::{CallOptions, Jitter, JitterSource};
    /// assert_eq!(CallOptions::default().jitter_or_entropy(), JitterSource::Entropy);
    /// let o = CallOptions { jitter: Some(Jitter::Key("job-1".into())), ..CallOptions::default() };
    /// assert_eq!(o.jitter_or_entropy(), JitterSource::Key("job-1"));
    /// ```
    #[cfg(feature = "std")]
    #[must_use]
    pub fn jitter_or_entropy(&self) -> JitterSource<'_> {
        self.jitter
            .as_ref()
            .map_or(JitterSource::Entropy, Jitter::source)
    }
}

/// An integer argument given as a [`Value`] (an integer, or a double with
/// an integral value), in `0..=2^53 − 1`.
///
/// # Errors
///
/// `validation.invalid_argument` at `field`.
///
/// ```
/// use ojs_retry::{Value, uint_from_value};
/// assert_eq!(uint_from_value("now", &Value::from(5u64)).unwrap(), 5);
/// assert_eq!(uint_from_value("now", &Value::from("5")).unwrap_err().field(), Some("now"));
/// ```
pub fn uint_from_value(field: &str, v: &Value) -> Result<u64, Error> {
    uint_arg(field, v)
}

pub(crate) fn uint_arg(field: &str, v: &Value) -> Result<u64, Error> {
    match v {
        Value::Number(Number::PosInt(u)) if *u <= MAX_MS => Ok(*u),
        Value::Number(n) => uint_from_f64(field, n.as_f64()),
        other => Err(Error::arg(field, expected("an integer", other))),
    }
}

fn read_seed(v: &Value) -> Option<u64> {
    match v {
        Value::Number(Number::PosInt(u)) => Some(*u),
        Value::Number(n) => uint_from_f64("seed", n.as_f64()).ok(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn expected(what: &str, found: &Value) -> String {
    format!("expected {what}, found {}", found.describe())
}
