//! Where the jitter sample `u ∈ [0, 1)` comes from.
//!
//! The delay function is pure: it takes a [`Sample`], a 53-bit fraction
//! `k / 2^53` with `0 ≤ k < 2^53`. A [`JitterSource`] turns the caller's
//! choice into the sample for retry number `n`:
//!
//! | source | sample for retry `n` |
//! |---|---|
//! | [`JitterSource::Uniform`]`(u)` | `k = floor(u · 2^53)`; `u` must be finite and in `[0, 1)` |
//! | [`JitterSource::Seed`]`(s)` | `k = splitmix64(s, n) >> 11` |
//! | [`JitterSource::Key`]`(key)` | `k = splitmix64(fnv1a64(utf8(key)), n) >> 11` |
//! | [`JitterSource::Entropy`] (feature `std`) | 53 bits of a word drawn from the OS (rand's `OsRng`) at each sample |
//!
//! # The algorithms, precisely
//!
//! All arithmetic is on unsigned 64-bit integers, wrapping modulo 2^64.
//!
//! `splitmix64(s, n)` is the `n`-th output (1-based) of Steele, Lea and
//! Flood's SplitMix64 seeded with `s`, which is random-access:
//!
//! ```text
//! z = s + n * 0x9E3779B97F4A7C15
//! z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//! z = (z ^ (z >> 27)) * 0x94D049BB133111EB
//! return z ^ (z >> 31)
//! ```
//!
//! So `delay(n, Seed(s))` is the `n`-th row of `schedule(_, Seed(s))`, and a
//! worker can compute any retry's sample without the ones before it.
//!
//! `fnv1a64(bytes)` is 64-bit FNV-1a: start from `0xCBF29CE484222325`; for
//! each byte, `h = (h ^ byte) * 0x100000001B3`.
//!
//! Keyed jitter is what makes a redelivered failure land on the same
//! `next_retry_at` in every worker and every language: use the job id as the
//! key. Keyed and seeded jitter are deterministic, not secret: anyone who
//! knows the key can predict the delay.
//!
//! ```
//! use ojs_retry::{JitterSource, Sample};
//! let a = JitterSource::Key("job-42").sample(3).unwrap();
//! let b = JitterSource::Key("job-42").sample(3).unwrap();
//! assert_eq!(a, b);
//! assert_eq!(JitterSource::Uniform(0.5).sample(1).unwrap(), Sample::from_bits(1 << 52).unwrap());
//! ```

use crate::error::{Error, show_f64};
use alloc::format;
#[cfg(feature = "std")]
use rand::TryRngCore as _;

/// `2^53`: the number of distinct samples.
const SCALE: u64 = 1 << 53;

/// A jitter sample: the fraction `k / 2^53` with `0 ≤ k < 2^53`.
///
/// Working on the integer `k` keeps the jitter arithmetic exact and the same
/// on every platform (see [`crate::backoff`]).
///
/// ```
/// use ojs_retry::Sample;
/// let s = Sample::from_unit(0.75)?;
/// assert_eq!((s.bits(), s.as_unit()), (3 << 51, 0.75));
/// assert!(Sample::MIN < s && s < Sample::MAX);
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sample(u64);

impl Sample {
    /// The smallest sample (`u = 0`).
    ///
    /// ```
    /// use ojs_retry::{JitterSource, Sample};
    /// assert_eq!((Sample::MIN.bits(), Sample::MIN.as_unit()), (0, 0.0));
    /// assert_eq!(JitterSource::Uniform(0.0).sample(1)?, Sample::MIN);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub const MIN: Self = Self(0);
    /// The largest sample (`u = 1 − 2^-53`).
    ///
    /// ```
    /// use ojs_retry::Sample;
    /// assert_eq!(Sample::MAX.bits(), (1 << 53) - 1);
    /// assert!(Sample::MAX.as_unit() < 1.0);
    /// assert!(Sample::from_bits(Sample::MAX.bits() + 1).is_err());
    /// ```
    pub const MAX: Self = Self(SCALE - 1);

    /// A sample from its 53-bit integer `k`.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` (field `"u"`) when `k ≥ 2^53`.
    ///
    /// ```
    /// assert!(ojs_retry::Sample::from_bits(1 << 53).is_err());
    /// ```
    pub fn from_bits(k: u64) -> Result<Self, Error> {
        if k < SCALE {
            Ok(Self(k))
        } else {
            Err(Error::arg(
                "u",
                format!("expected a 53-bit sample below 2^53, found {}", k),
            ))
        }
    }

    /// A sample from a uniform `u ∈ [0, 1)`: `k = floor(u · 2^53)` (exact:
    /// scaling by a power of two loses nothing).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` (field `"u"`) for NaN, infinities, and
    /// values outside `[0, 1)`. `-0.0` is accepted as `0`.
    ///
    /// ```
    /// use ojs_retry::Sample;
    /// assert_eq!(Sample::from_unit(0.25).unwrap().bits(), 1 << 51);
    /// assert!(Sample::from_unit(1.0).is_err());
    /// assert!(Sample::from_unit(f64::NAN).is_err());
    /// ```
    pub fn from_unit(u: f64) -> Result<Self, Error> {
        Self::unit(u).ok_or_else(|| bad_unit(u))
    }

    /// [`Sample::from_unit`] without the error, for the fast paths that
    /// fall back to the full one (which reports it) on `None`.
    pub(crate) fn unit(u: f64) -> Option<Self> {
        // `!(..)` so that NaN fails too.
        if !(0.0..1.0).contains(&u) {
            return None;
        }
        // 0 ≤ u ≤ 1 − 2^−53, and the product by a power of two is exact:
        // 0 ≤ u · 2^53 ≤ 2^53 − 1, and the (signed: one instruction on
        // x86-64, against six unsigned) cast is exact too, below `SCALE`
        // with no clamp.
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
        let k = (u * SCALE as f64) as i64;
        // 0 ≤ k (−0 converts to 0): reinterpreted as is, which takes
        // nothing, where `unsigned_abs` and a clamp put five operations
        // between the conversion and the delay's products.
        #[allow(clippy::cast_sign_loss)]
        Some(Self(k as u64))
    }

    /// The sample from the high 53 bits of a 64-bit random word.
    ///
    /// ```
    /// use ojs_retry::Sample;
    /// assert_eq!(Sample::from_u64(1 << 63).as_unit(), 0.5);
    /// assert_eq!(Sample::from_u64(u64::MAX), Sample::MAX);
    /// assert_eq!(Sample::from_u64(2047), Sample::MIN); // the low 11 bits are dropped
    /// ```
    #[must_use]
    pub const fn from_u64(word: u64) -> Self {
        Self(word >> 11)
    }

    /// The 53-bit integer `k`.
    ///
    /// ```
    /// assert_eq!(ojs_retry::Sample::from_unit(0.5)?.bits(), 1 << 52);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The fraction `k / 2^53` as `f64` (exact).
    ///
    /// ```
    /// assert_eq!(ojs_retry::Sample::from_bits(1 << 51)?.as_unit(), 0.25);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    #[allow(clippy::cast_precision_loss)] // k < 2^53: exact
    pub fn as_unit(self) -> f64 {
        self.0 as f64 / SCALE as f64
    }
}

/// Out of line so that the checks on the hot path stay small enough to
/// inline.
fn bad_unit(u: f64) -> Error {
    Error::arg(
        "u",
        format!("expected a finite number in [0, 1), found {}", show_f64(u)),
    )
}

/// Where the jitter sample for each retry comes from (see the
/// [module docs](self) for the exact algorithms).
///
/// ```
/// use ojs_retry::{JitterSource, RetryPolicy};
/// let p = RetryPolicy::default();
/// assert_eq!(p.delay(1, JitterSource::Uniform(0.0))?, 500); // the bottom of [0.5, 1.5) · 1 s
/// assert_eq!(p.delay(4, JitterSource::Key("job-1"))?, p.delay(4, JitterSource::Key("job-1"))?);
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JitterSource<'a> {
    /// An explicit uniform sample in `[0, 1)`, used for every retry.
    Uniform(f64),
    /// A reproducible stream from a 64-bit seed (SplitMix64).
    Seed(u64),
    /// Stateless deterministic jitter from a key such as the job id.
    Key(&'a str),
    /// Entropy for every sample: a word drawn from the OS (rand's `OsRng`,
    /// getrandom) at each draw, so a forked child never repeats its
    /// parent's draws.
    #[cfg(feature = "std")]
    Entropy,
}

impl JitterSource<'_> {
    /// The sample for retry number `n` (1-based).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` for a bad explicit `u`, or a key longer
    /// than [`MAX_STRING_BYTES`](crate::limits::MAX_STRING_BYTES).
    ///
    /// ```
    /// use ojs_retry::JitterSource;
    /// // The seeded source is the documented SplitMix64 stream.
    /// let s = JitterSource::Seed(1234567).sample(1).unwrap();
    /// assert_eq!(s.bits(), 6457827717110365317 >> 11);
    /// ```
    pub fn sample(&self, retry_number: u64) -> Result<Sample, Error> {
        match *self {
            Self::Uniform(u) => Sample::from_unit(u),
            Self::Seed(seed) => Ok(Sample::from_u64(splitmix64(seed, retry_number))),
            _ => self.sample_other(retry_number),
        }
    }

    /// [`JitterSource::sample`] for a key or OS entropy.
    fn sample_other(&self, retry_number: u64) -> Result<Sample, Error> {
        match *self {
            Self::Uniform(u) => Sample::from_unit(u),
            Self::Seed(seed) => Ok(Sample::from_u64(splitmix64(seed, retry_number))),
            Self::Key(key) => {
                crate::limits::check_string(key.len()).map_err(|m| Error::arg("key", m))?;
                Ok(Sample::from_u64(splitmix64(
                    fnv1a64(key.as_bytes()),
                    retry_number,
                )))
            }
            #[cfg(feature = "std")]
            Self::Entropy => rand::rngs::OsRng
                .try_next_u64()
                .map(Sample::from_u64)
                .map_err(|e| Error::arg("u", alloc::format!("no entropy from the OS: {e}"))),
        }
    }

    /// Checks the source without drawing from it (an explicit `u` must be in
    /// `[0, 1)` even when the policy has no jitter).
    pub(crate) fn check(&self) -> Result<(), Error> {
        match *self {
            Self::Uniform(u) => Sample::from_unit(u).map(|_| ()),
            Self::Key(key) => {
                crate::limits::check_string(key.len()).map_err(|m| Error::arg("key", m))
            }
            _ => Ok(()),
        }
    }

    /// The same source with a key hashed once (a key's stream is the seed
    /// stream of its hash), for a call that draws many samples.
    pub(crate) fn hashed(self) -> Result<Self, Error> {
        self.check()?;
        Ok(match self {
            Self::Key(key) => Self::Seed(fnv1a64(key.as_bytes())),
            other => other,
        })
    }
}

/// Kept for hosts that call it in a child after `fork()` (Python's
/// `os.register_at_fork(after_in_child=...)`): entropy is drawn from the OS
/// at each draw ([`JitterSource::Entropy`]), with no generator state a
/// child could share with its parent, so there is nothing to reseed.
///
/// ```
/// ojs_retry::reseed_after_fork();
/// ```
#[cfg(feature = "std")]
pub fn reseed_after_fork() {}

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The `n`-th output (1-based) of SplitMix64 seeded with `seed`.
///
/// Hand-written rather than taken from a PRNG crate because the exact
/// stream is part of the cross-language contract (it is reimplemented in
/// the vectors' reference script) and it is five lines.
///
/// ```
/// // Reference outputs of SplitMix64 for seed 1234567.
/// assert_eq!(ojs_retry::jitter::splitmix64(1234567, 1), 6457827717110365317);
/// assert_eq!(ojs_retry::jitter::splitmix64(1234567, 2), 3203168211198807973);
/// ```
#[must_use]
pub const fn splitmix64(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_mul(GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 64-bit FNV-1a of `bytes`.
///
/// ```
/// // Reference values from the FNV test suite.
/// assert_eq!(ojs_retry::jitter::fnv1a64(b""), 0xcbf29ce484222325);
/// assert_eq!(ojs_retry::jitter::fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
/// assert_eq!(ojs_retry::jitter::fnv1a64(b"foobar"), 0x85944171f73967e8);
/// ```
#[must_use]
pub const fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        // `i < len` just above: in bounds (a const fn cannot use iterators).
        #[allow(clippy::indexing_slicing)]
        let b = bytes[i];
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01B3);
        i = i.saturating_add(1);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_samples_stay_below_scale_unclamped() {
        let cases = [
            (0.0, Some(0)),
            (-0.0, Some(0)),
            (f64::MIN_POSITIVE, Some(0)),
            (1e-300, Some(0)),
            (2f64.powi(-53), Some(1)),
            (0.5, Some(1 << 52)),
            (1.0 - 2f64.powi(-53), Some(SCALE - 1)),
            (1.0 - 2f64.powi(-52), Some(SCALE - 2)),
            (1.0, None),
            (-f64::from_bits(1), None),
            (f64::NAN, None),
        ];
        for (u, k) in cases {
            assert_eq!(Sample::unit(u).map(Sample::bits), k, "{u:e}");
        }
        // Every sample is below SCALE: the clamp it once had never bit.
        let mut u = 1.0 - 2f64.powi(-53);
        for _ in 0..10_000 {
            let k = Sample::unit(u).map_or(SCALE, Sample::bits);
            assert!(k < SCALE, "{u:e}");
            u = f64::from_bits(u.to_bits().saturating_sub(0x1_0000_0001));
        }
    }

    #[test]
    fn splitmix_reference_stream() {
        // SplitMix64 reference outputs for seed 1234567 (the values used by
        // the reference C implementation's test and Java's SplittableRandom).
        let expected = [
            6_457_827_717_110_365_317_u64,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
            4_593_380_528_125_082_431,
            16_408_922_859_458_223_821,
        ];
        for (i, e) in expected.iter().enumerate() {
            assert_eq!(splitmix64(1_234_567, i as u64 + 1), *e);
        }
    }

    /// The signed conversion gives the unsigned one's sample for every `u`
    /// tried: edges, every power of two in range, and a spread of values.
    #[test]
    fn from_unit_matches_the_unsigned_conversion() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let reference = |u: f64| ((u * SCALE as f64) as u64).min(SCALE - 1);
        let mut us = alloc::vec![
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            5e-324,
            0.5,
            1.0 - f64::EPSILON / 2.0
        ];
        us.extend((1..=1074).map(|e| libm::ldexp(1.0, -e)));
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x = splitmix64(x, 1);
            us.push(Sample::from_u64(x).bits() as f64 / SCALE as f64);
            us.push(f64::from_bits(x >> 2) % 1.0);
        }
        for u in us {
            if (0.0..1.0).contains(&u) {
                assert_eq!(Sample::from_unit(u).unwrap().bits(), reference(u), "{u:e}");
            }
        }
    }

    #[test]
    fn unit_edges() {
        assert_eq!(Sample::from_unit(0.0).unwrap().bits(), 0);
        assert_eq!(Sample::from_unit(-0.0).unwrap().bits(), 0);
        let below_one = f64::from_bits(1.0f64.to_bits() - 1);
        assert_eq!(Sample::from_unit(below_one).unwrap(), Sample::MAX);
        for bad in [
            1.0,
            -1e-300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e308,
        ] {
            assert!(Sample::from_unit(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Sample::from_unit(f64::MIN_POSITIVE / 2.0).unwrap().bits(),
            0
        );
    }
}
