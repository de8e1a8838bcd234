//! Argument conversions every binding needs, kept here so that no two
//! bindings carry the same branch: JavaScript numbers are `f64`, and a
//! caller's jitter choice must outlive the borrowed [`JitterSource`].

use alloc::string::String;

use crate::duration::MAX_MS;
use crate::error::{Error, ErrorCode, show_f64};
use crate::jitter::JitterSource;
use crate::text::msg;

/// An integer argument given as a float (a JavaScript number): it must be
/// finite, integral and in `0..=2^53−1`; anything else is an error naming
/// `field`, never a truncation or a clamp. `-0` is `0`.
///
/// # Errors
///
/// `validation.invalid_argument` with `field`.
///
/// ```
/// use ojs_retry::args::uint_from_f64;
/// assert_eq!(uint_from_f64("attempt", 3.0).unwrap(), 3);
/// assert_eq!(uint_from_f64("attempt", 2.5).unwrap_err().field(), "attempt");
/// assert!(uint_from_f64("now", f64::NAN).is_err());
/// assert!(uint_from_f64("now", 9_007_199_254_740_992.0).is_err());
/// ```
#[inline]
pub fn uint_from_f64(field: &str, value: f64) -> Result<u64, Error> {
    uint_of_f64(value).ok_or_else(|| bad_uint(field, value))
}

/// [`uint_from_f64`] without its error, for bindings' fast paths (which
/// fall back to their full method on `None`): the integer in
/// `0..=2^53−1` that `value` is, or `None`. `-0` is `0`.
///
/// ```
/// use ojs_retry::args::uint_of_f64;
/// assert_eq!(uint_of_f64(3.0), Some(3));
/// assert_eq!(uint_of_f64(9_007_199_254_740_991.0), Some(9_007_199_254_740_991));
/// assert_eq!(uint_of_f64(2.5), None);
/// assert_eq!(uint_of_f64(-1.0), None);
/// assert_eq!(uint_of_f64(f64::NAN), None);
/// ```
#[inline(always)]
#[must_use]
pub fn uint_of_f64(value: f64) -> Option<u64> {
    // Retry numbers, seeds and handles in practice.
    if let Some(k) = uint_below_2_52(value) {
        return Some(k);
    }
    #[allow(clippy::cast_precision_loss)]
    let max = MAX_MS as f64;
    // NaN fails the range. In `[0, 2^53)` the cast is exact for an integral
    // value and drops the fraction of any other, so the round trip tells
    // them apart (as `trunc(x) == x` would, without the call). `-0` passes
    // as 0. Signed conversions, after the range test: one instruction each
    // way on x86-64, where the unsigned ones take six. Written out:
    // `RangeInclusive::contains` stays a call at opt-level z.
    #[allow(clippy::manual_range_contains)]
    if value >= 0.0 && value <= max {
        #[allow(clippy::cast_possible_truncation)]
        let n = value as i64;
        #[allow(clippy::cast_precision_loss)]
        if n as f64 == value {
            return Some(n.unsigned_abs());
        }
    }
    None
}

/// `value` if it is an integer in `0..2^52` (`-0` as 0), else `None`:
/// the common case of [`uint_of_f64`], without a float-to-integer
/// conversion.
///
/// Adding 2^52 lands where consecutive `f64`s are 1 apart: for `value` in
/// range the sum's bits are 2^52's plus `round(value)`, and taking 2^52
/// off again gives `value` back only for an integer. Anything out of range
/// (negative, 2^52 and above, NaN, infinities) has a sum whose bits are not
/// within 2^52 above 2^52's. An addition, a subtraction and integer
/// compares: V8 compiles wasm's float-to-integer conversion to a rounding,
/// the conversion and a conversion back, and each float range comparison
/// to a flag set (1–2 ns of a wasm `delay` of ~25 ns).
///
/// ```
/// use ojs_retry::args::uint_below_2_52;
/// assert_eq!(uint_below_2_52(7.0), Some(7));
/// assert_eq!(uint_below_2_52(-0.0), Some(0));
/// assert_eq!(uint_below_2_52(4_503_599_627_370_496.0), None); // 2^52
/// assert_eq!(uint_below_2_52(0.5), None);
/// ```
#[inline(always)]
#[must_use]
pub fn uint_below_2_52(value: f64) -> Option<u64> {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    const MANTISSA: u64 = (1 << 52) - 1;
    let shifted = value + TWO_52;
    let k = shifted.to_bits().wrapping_sub(TWO_52.to_bits());
    if k > MANTISSA || shifted - TWO_52 != value {
        return None;
    }
    Some(k)
}

/// Out of line so that [`uint_from_f64`] inlines into the hot paths.
#[cold]
#[inline(never)]
fn bad_uint(field: &str, value: f64) -> Error {
    Error::arg(
        field,
        msg!(
            "expected an integer between 0 and ",
            MAX_MS,
            ", found ",
            show_f64(value)
        ),
    )
}

/// A jitter choice that owns its key, for bindings that receive the key
/// as a foreign string and call the core later.
///
/// ```
/// use ojs_retry::args::Jitter;
/// let j = Jitter::Key("job-1".to_owned());
/// assert_eq!(j.source().sample(1).unwrap(), ojs_retry::JitterSource::Key("job-1").sample(1).unwrap());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Jitter {
    /// An explicit sample in `[0, 1)`.
    Uniform(f64),
    /// The documented SplitMix64 stream.
    Seed(u64),
    /// Stateless keyed jitter.
    Key(String),
    /// OS entropy.
    #[cfg(feature = "std")]
    Entropy,
}

impl Jitter {
    /// The borrowed source to pass to the core.
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
}

/// How many levels of nesting a binding reads from a host value (a JS
/// object, a Python dict) given as a document. Deeper (or cyclic) values are
/// a [`Document::too_deep`] error instead of a deep recursion.
pub const MAX_DEPTH: usize = 64;

/// The kind of document a binding converts a host value into. It decides
/// the error code of a conversion fault (a NaN, a lone surrogate, a value
/// nested too deep), so that such a fault reads exactly like the faults the
/// core finds in the same document.
///
/// ```
/// use ojs_retry::args::Document;
/// let e = Document::Policy.fault("max_attempts", "expected a finite number, found NaN");
/// assert_eq!((e.code().as_str(), e.field()), ("validation.retry_policy_invalid", "max_attempts"));
/// let e = Document::Policy.too_deep("non_retryable_errors[0][0]");
/// assert_eq!(e.field(), "non_retryable_errors");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// A retry policy layer (`validation.retry_policy_invalid`).
    Policy,
    /// A §10 state document (`validation.state_invalid`).
    State,
    /// Any other argument, such as an error's `details`
    /// (`validation.invalid_argument`).
    Argument,
}

impl Document {
    /// The error code of a fault in this kind of document.
    #[must_use]
    pub const fn code(self) -> ErrorCode {
        match self {
            Self::Policy => ErrorCode::RetryPolicyInvalid,
            Self::State => ErrorCode::StateInvalid,
            Self::Argument => ErrorCode::InvalidArgument,
        }
    }

    /// A value at `path` (`"max_attempts"`, `"non_retryable_errors[1]"`,
    /// `""` for the document) that has no JSON form.
    #[must_use]
    pub fn fault(self, path: &str, message: impl Into<String>) -> Error {
        Error::new(self.code(), path, message)
    }

    /// A value nested deeper than [`MAX_DEPTH`] at `path`. The fault names
    /// the top-level field the path starts in (`""` for the document), so
    /// every binding reports the same field whatever its path syntax.
    #[must_use]
    pub fn too_deep(self, path: &str) -> Error {
        let top = path.split(['.', '[']).next().unwrap_or_default();
        Error::new(
            self.code(),
            top,
            msg!(
                "expected a JSON value nested at most ",
                MAX_DEPTH,
                " levels deep (is it cyclic?)"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signed route, and the fast routes without an error, give the
    /// unsigned one's answer (value or error) for edges, every power of two,
    /// and a spread of integral and fractional values.
    #[test]
    fn uint_from_f64_matches_the_unsigned_route() {
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        let reference = |v: f64| -> Option<u64> {
            let n = v as u64;
            (v >= 0.0 && v <= MAX_MS as f64 && n as f64 == v).then_some(n)
        };
        #[allow(clippy::cast_precision_loss)]
        let mut vs = alloc::vec![
            0.0,
            -0.0,
            0.5,
            1.0,
            2.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            MAX_MS as f64,
            MAX_MS as f64 - 0.5,
            MAX_MS as f64 + 1.0,
            2f64.powi(63),
            2f64.powi(64),
            1e300,
            -1e300,
            5e-324,
            4_294_967_295.0,
            4_294_967_296.0,
            4_294_967_296.5,
            // Around 2^52, where `uint_below_2_52` hands over.
            4_503_599_627_370_495.5,
            4_503_599_627_370_494.5,
            -f64::NAN,
        ];
        for e in -1074..=1023 {
            let p = libm::ldexp(1.0, e);
            vs.extend([p, -p, p + 1.0, p - 1.0, p + 0.5]);
        }
        let mut x: u64 = 1;
        for _ in 0..200_000 {
            x = crate::jitter::splitmix64(x, 1);
            #[allow(clippy::cast_precision_loss)]
            vs.extend([(x >> 11) as f64, (x >> 20) as f64 + 0.25, f64::from_bits(x)]);
        }
        for v in vs {
            assert_eq!(uint_from_f64("f", v).ok(), reference(v), "{v:e}");
            assert_eq!(uint_of_f64(v), reference(v), "uint_of_f64({v:e})");
            let below = reference(v).filter(|&n| n < 1 << 52);
            assert_eq!(uint_below_2_52(v), below, "uint_below_2_52({v:e})");
        }
    }
}
