//! What a caller passes beside a document, as the host's own numbers:
//! integers given as doubles (checked here once for every binding), and
//! an owned [`Jitter`] that outlives the borrowed [`JitterSource`].

use alloc::format;
use alloc::string::String;

use crate::describe::show_f64;
use crate::duration::MAX_MS;
use crate::error::Error;
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

fn expected(what: &str, found: &Value) -> String {
    format!("expected {what}, found {}", found.describe())
}
