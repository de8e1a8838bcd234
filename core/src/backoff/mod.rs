//! Backoff: the delay before retry `n` (spec §3, §5, Appendix A; RET-04,
//! RET-05, RET-06).
//!
//! # The computation, step by step
//!
//! For retry number `n ≥ 1` (retry 1 follows the failure of attempt 1),
//! initial interval `I` ms, coefficient `C`, cap `M` ms:
//!
//! 1. **raw** (`f64`): `none` → `I`; `linear` → `I·n`; `exponential` →
//!    `I·C^(n−1)`; `polynomial` → `I·n^C`. Powers use the `libm` crate's
//!    `pow` (a pure-Rust port of FreeBSD's msun) in every build, so native
//!    code, wasm and every binding get bit-identical results.
//! 2. **raw_ms**: raw rounded to the nearest millisecond, halves away from
//!    zero; anything at or beyond 2^53 − 1 (including `+∞`) saturates to
//!    2^53 − 1. Never NaN: every input is validated finite and positive.
//! 3. **capped_ms** = `min(raw_ms, M)` (RET-04, cap before jitter, §3.5).
//! 4. **jittered** (when `jitter` is true) = `floor(capped_ms · (0.5 + u))`,
//!    computed exactly in integers from the [`Sample`]
//!    `k`: `(capped_ms · (2^52 + k)) >> 53`. So it lies in
//!    `[floor(capped/2), ceil(1.5·capped) − 1]`, the half-open `[0.5, 1.5)`
//!    range of RET-05, whatever the platform's float rounding.
//! 5. **delay_ms** = `min(jittered, M)` (RET-06, cap again after jitter).
//!
//! `delay_ms` is an integer in `[0, M]`, and with jitter off every strategy
//! is non-decreasing in `n`.
//!
//! ```
//! use ojs_retry::{RetryPolicy, JitterSource};
//! let p = RetryPolicy::from_json(r#"{"initial_interval":"PT10S","max_attempts":10}"#).unwrap();
//! // §5.3: retry 1 jitters within [5 s, 15 s).
//! assert_eq!(p.delay(1, JitterSource::Uniform(0.0)).unwrap(), 5_000);
//! assert_eq!(p.delay(1, JitterSource::Uniform(0.5)).unwrap(), 10_000);
//! ```
//!
//! The engine also carries what the compatibility presets need (a constant
//! offset, full / equal / additive jitter, explicit interval tables, floor
//! rounding); plain OJS policies use only the steps above.

use alloc::vec::Vec;

use crate::duration::MAX_MS;
use crate::jitter::Sample;
use serde::ser::SerializeStruct as _;

/// How the raw delay grows with the retry number (§3).
///
/// ```
/// use ojs_retry::{JitterSource, RetryPolicy, Strategy};
/// let p = RetryPolicy::from_json(r#"{"backoff_strategy": "linear", "jitter": false}"#)?;
/// assert_eq!(p.strategy(), Strategy::Linear);
/// assert_eq!(p.delay(3, JitterSource::Uniform(0.5))?, 3_000); // I·n = 1 s · 3
/// assert_eq!(Strategy::default(), Strategy::Exponential);
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// `delay(n) = I` — §3.1; `"none"` (alias `"constant"`).
    None,
    /// `delay(n) = I·n` — §3.2.
    Linear,
    /// `delay(n) = I·C^(n−1)` — §3.3, the default.
    #[default]
    Exponential,
    /// `delay(n) = I·n^C` — §3.4.
    Polynomial,
}

impl Strategy {
    /// The name used in documents (`backoff_strategy`).
    ///
    /// ```
    /// assert_eq!(ojs_retry::Strategy::None.as_str(), "none");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Linear => "linear",
            Self::Exponential => "exponential",
            Self::Polynomial => "polynomial",
        }
    }

    /// Parses a document name; `"constant"` is accepted for `"none"`.
    ///
    /// ```
    /// use ojs_retry::Strategy;
    /// assert_eq!(Strategy::parse("constant"), Some(Strategy::None));
    /// assert_eq!(Strategy::parse("Exponential"), None);
    /// ```
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" | "constant" => Some(Self::None),
            "linear" => Some(Self::Linear),
            "exponential" => Some(Self::Exponential),
            "polynomial" => Some(Self::Polynomial),
            _ => None,
        }
    }
}

/// The growth curve inside the engine: the four spec strategies plus an
/// explicit table (the last entry repeats), for queues that list intervals.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Curve {
    Constant,
    Linear,
    Exponential(f64),
    Polynomial(f64),
    // Used by the compatibility presets.
    #[allow(dead_code)]
    Table(Vec<u64>),
}

/// How a jitter sample moves the capped delay `d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spread {
    /// No jitter: the delay is `d`.
    None,
    /// OJS §5: `d · (0.5 + u)`.
    Proportional,
    /// "Full jitter": `d · u`.
    #[allow(dead_code)]
    Full,
    /// "Equal jitter": `d/2 + (d/2) · u`.
    #[allow(dead_code)]
    Equal,
    /// Additive: `d + max_ms · u`.
    #[allow(dead_code)]
    Additive(u64),
    /// "Decorrelated jitter": `base + (3·prev − base) · u`, where `prev` is
    /// the previous retry's delay (the initial interval before retry 1). It
    /// depends on the chain of earlier samples, so [`Backoff::decorrelated`]
    /// walks it; with a seeded or keyed source every sample is
    /// random-access, so the chain is reproducible anywhere.
    #[allow(dead_code)]
    Decorrelated,
}

/// How the raw `f64` delay becomes integer milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rounding {
    /// To nearest, halves away from zero (OJS).
    Nearest,
    /// Towards zero, as queues that truncate do.
    Floor,
}

/// A fully resolved backoff: everything the delay of retry `n` depends on
/// except the jitter sample.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Backoff {
    pub(crate) initial_ms: u64,
    pub(crate) curve: Curve,
    /// Added to the raw delay before rounding and the cap.
    pub(crate) offset_ms: u64,
    pub(crate) cap_ms: u64,
    pub(crate) spread: Spread,
    pub(crate) rounding: Rounding,
}

/// The capped delays (`min(raw_ms(n), cap)`) of one backoff that are known
/// at construction ([`Backoff::capped_delays`]): those of retries
/// `1..=len` in a table, and the cap from retry `from` on. Kept in the
/// policy, so that most delays cost a lookup and the jitter, not a power.
///
/// The table holds `u32`s, at most [`CappedDelays::TABLE`] of them, inline:
/// the §8 default policy needs 9 (1 s doubling to 300 s), §12.3 4 (15 s ×
/// 4^(n−1) to 1 h); inline, they cost no allocation per policy, and 64
/// bytes. A value that does not fit a `u32` (49.7 days) ends the table;
/// later retries are computed as before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CappedDelays {
    /// From this retry on, the capped delay is the cap.
    from: u64,
    /// How many entries of `table` hold a value (≤ `TABLE`).
    len: u32,
    /// `table[i]` is the capped delay of retry `i + 1`, for `i < len`.
    table: [u32; CappedDelays::TABLE],
}

impl CappedDelays {
    /// The table's capacity, in retries (a power of two: see `get`).
    pub(crate) const TABLE: usize = 16;

    /// Nothing known.
    pub(crate) const NONE: Self = Self {
        from: u64::MAX,
        len: 0,
        table: [0; Self::TABLE],
    };

    /// Records `ms` as the capped delay of retry `n` when the table holds
    /// retries `1..n` and has room and `ms` fits; `false` otherwise. Once
    /// one retry is refused every later one is, so the table has no gaps.
    fn push(&mut self, n: u64, ms: u64) -> bool {
        if u64::from(self.len).checked_add(1) != Some(n) {
            return false;
        }
        let slot = usize::try_from(self.len)
            .ok()
            .and_then(|i| self.table.get_mut(i));
        match (slot, u32::try_from(ms)) {
            (Some(slot), Ok(ms)) => {
                *slot = ms;
                self.len = self.len.saturating_add(1);
                true
            }
            _ => false,
        }
    }

    /// The tabled capped delay of retry `n`, if there is one.
    fn get(&self, n: u64) -> Option<u64> {
        // n = 0 wraps to u64::MAX: not in the table.
        let i = n.wrapping_sub(1);
        if i >= u64::from(self.len) {
            return None;
        }
        // i < len ≤ TABLE, so the mask keeps it (and tells the compiler
        // that the lookup needs no bounds check).
        #[allow(clippy::cast_possible_truncation)]
        let i = (i as usize) & (Self::TABLE - 1);
        self.table.get(i).map(|&ms| u64::from(ms))
    }

    /// The first retry from which the capped delay is the cap.
    #[cfg(test)]
    pub(crate) fn from(&self) -> u64 {
        self.from
    }

    /// How many retries the table holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> u32 {
        self.len
    }
}

/// One row of a schedule: every intermediate value for one retry.
///
/// ```
/// use ojs_retry::{JitterSource, RetryPolicy};
/// let rows = RetryPolicy::default().schedule(3, Some(JitterSource::Uniform(0.5)))?;
/// let r = rows.last().unwrap();
/// assert_eq!((r.retry_number, r.attempt, r.capped_ms, r.delay_ms), (3, 4, 4_000, Some(4_000)));
/// assert_eq!((r.min_ms, r.max_ms, r.cumulative_ms), (2_000, 5_999, 7_000));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleRow {
    /// The retry number `n` (1-based).
    pub retry_number: u64,
    /// The attempt this retry will be (`n + 1`).
    pub attempt: u64,
    /// The formula's value in ms, saturated at 2^53 − 1.
    pub raw_ms: u64,
    /// `min(raw_ms, max_interval)`.
    pub capped_ms: u64,
    /// The smallest delay jitter can produce (inclusive).
    pub min_ms: u64,
    /// The largest delay jitter can produce (inclusive, after the cap).
    pub max_ms: u64,
    /// The delay drawn from the jitter source, when one was given.
    pub delay_ms: Option<u64>,
    /// Sum of the delays of retries `1..=n` (drawn when a source was given,
    /// else the capped delays), saturating at 2^53 − 1.
    pub cumulative_ms: u64,
}

impl ScheduleRow {
    /// Adds this row's delay (drawn, else capped) to the running `total`,
    /// saturating at 2^53 − 1, and records it as `cumulative_ms`.
    pub(crate) fn accumulate(&mut self, total: &mut u64) {
        *total = total
            .saturating_add(self.delay_ms.unwrap_or(self.capped_ms))
            .min(MAX_MS);
        self.cumulative_ms = *total;
    }
}

/// Converts a non-negative `f64` to milliseconds, saturating at `MAX_MS`.
pub(crate) fn to_ms(raw: f64, rounding: Rounding) -> u64 {
    let r = match rounding {
        Rounding::Nearest => libm::round(raw),
        Rounding::Floor => libm::floor(raw),
    };
    // NaN (which validated inputs cannot produce) saturates too.
    #[allow(clippy::cast_precision_loss)]
    if r.is_nan() || r >= MAX_MS as f64 {
        return MAX_MS;
    }
    if r <= 0.0 {
        return 0;
    }
    // 0 < r < 2^53: exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ms = r as u64;
    ms
}

/// `b^e` when `b ∈ 1..=1024` and `e ∈ 0..=1024` are integers and the
/// result is at most 2^53; `None` otherwise.
///
/// The fast path of [`Backoff::raw_ms`]: `libm::pow` takes tens of
/// nanoseconds through its log/exp route even for `4^3`, which made it most
/// of the cost of a delay. On this domain the power is an integer that `f64`
/// represents exactly and `libm::pow` returns exactly it (its error is below
/// one ulp and no other `f64` is that close); `int_pow_matches_libm` checks
/// every pair of the domain against `libm::pow`.
fn int_pow(b: f64, e: f64) -> Option<u64> {
    let in_domain = |x: f64| (1.0..=1024.0).contains(&x);
    if !(in_domain(b) && (e == 0.0 || in_domain(e))) {
        return None;
    }
    // In range, so the casts are exact when the values are integral.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (bi, ei) = (b as u64, e as u32);
    #[allow(clippy::cast_precision_loss)]
    if bi as f64 != b || f64::from(ei) != e {
        return None;
    }
    if bi == 1 {
        return Some(1);
    }
    // bi ≥ 2: past 2^53 within 53 steps. p ≤ 2^53 and bi ≤ 2^10, so
    // p · bi ≤ 2^63 never wraps.
    let mut p: u64 = 1;
    for _ in 0..ei {
        p = p.wrapping_mul(bi);
        if p > 1 << 53 {
            return None;
        }
    }
    Some(p)
}

/// `floor(d · k / 2^53)` exactly (`MAX_MS` if that does not fit a `u64`).
fn scale(d: u64, k: u64) -> u64 {
    let p = u128::from(d).saturating_mul(u128::from(k)) >> 53;
    u64::try_from(p).unwrap_or(MAX_MS)
}

impl Backoff {
    /// The formula's value for retry `n ≥ 1`, in ms, before the cap.
    pub(crate) fn raw_ms(&self, n: u64) -> u64 {
        if let Some(ms) = self.exact_raw_ms(n) {
            return ms;
        }
        #[allow(clippy::cast_precision_loss)] // I, n ≤ 2^53: exact
        let (i, nf) = (self.initial_ms as f64, n as f64);
        let raw = match &self.curve {
            Curve::Constant => i,
            Curve::Linear => i * nf,
            Curve::Exponential(c) => i * libm::pow(*c, nf - 1.0),
            Curve::Polynomial(c) => i * libm::pow(nf, *c),
            Curve::Table(t) => {
                let idx = usize::try_from(n.saturating_sub(1)).unwrap_or(usize::MAX);
                let v = t.get(idx).or(t.last()).copied().unwrap_or(self.initial_ms);
                #[allow(clippy::cast_precision_loss)]
                let v = v as f64;
                v
            }
        };
        #[allow(clippy::cast_precision_loss)]
        let offset = self.offset_ms as f64;
        to_ms(raw + offset, self.rounding)
    }

    /// [`Backoff::raw_ms`] in integers, when the power is an exact integer
    /// ([`int_pow`]): the same value as the `f64` route, which computes
    /// `round(I·p + offset)` with every term an integer (exact below 2^53,
    /// and saturated to 2^53 − 1 at or above it either way).
    fn exact_raw_ms(&self, n: u64) -> Option<u64> {
        #[allow(clippy::cast_precision_loss)] // n ≤ 2^53: exact
        let p = match &self.curve {
            Curve::Exponential(c) => int_pow(*c, n.saturating_sub(1) as f64)?,
            Curve::Polynomial(c) => int_pow(n as f64, *c)?,
            _ => return None,
        };
        let raw = self.initial_ms.checked_mul(p)?;
        Some(raw.saturating_add(self.offset_ms).min(MAX_MS))
    }

    /// The delay after cap, jitter and the second cap.
    pub(crate) fn jittered(&self, capped: u64, sample: Sample) -> u64 {
        let k = sample.bits();
        let d = match self.spread {
            Spread::None => capped,
            Spread::Proportional => scale(capped, k.saturating_add(1 << 52)),
            Spread::Full => scale(capped, k),
            Spread::Equal => {
                let half = capped / 2;
                half.saturating_add(scale(capped.saturating_sub(half), k))
            }
            Spread::Additive(max) => capped.saturating_add(scale(max, k)),
            // Without the chain, a single step from `capped` as the previous delay.
            Spread::Decorrelated => self.decorrelated_step(capped, sample),
        };
        d.min(self.cap_ms)
    }

    /// One schedule row for retry `n` (without the cumulative sum).
    pub(crate) fn row(&self, n: u64, sample: Option<Sample>) -> ScheduleRow {
        let raw_ms = self.raw_ms(n);
        let capped_ms = raw_ms.min(self.cap_ms);
        ScheduleRow {
            retry_number: n,
            attempt: n.saturating_add(1),
            raw_ms,
            capped_ms,
            min_ms: self.jittered(capped_ms, Sample::MIN),
            max_ms: self.jittered(capped_ms, Sample::MAX),
            delay_ms: sample.map(|s| self.jittered(capped_ms, s)),
            cumulative_ms: 0,
        }
    }

    /// The reference route that [`Backoff::delay_capped`] must equal.
    #[cfg(test)]
    pub(crate) fn delay(&self, n: u64, sample: Sample) -> u64 {
        self.jittered(self.raw_ms(n).min(self.cap_ms), sample)
    }

    /// [`Backoff::delay`], with the capped value of retry `n` from `known`
    /// ([`Backoff::capped_delays`]) where it holds it.
    pub(crate) fn delay_capped(&self, n: u64, sample: Sample, known: &CappedDelays) -> u64 {
        self.jittered(self.capped_ms(n, known), sample)
    }

    /// `min(raw_ms(n), cap)`: from the table, the cap from `known.from` on,
    /// else computed.
    pub(crate) fn capped_ms(&self, n: u64, known: &CappedDelays) -> u64 {
        if let Some(ms) = known.get(n) {
            return ms;
        }
        if n >= known.from {
            return self.cap_ms;
        }
        self.capped_ms_slow(n)
    }

    /// Out of line in native builds: the hot path is the table and the cap.
    fn capped_ms_slow(&self, n: u64) -> u64 {
        self.raw_ms(n).min(self.cap_ms)
    }

    /// What [`Backoff::capped_ms`] can know before any retry: the capped
    /// value of the first retries, and the first retry from which
    /// `raw_ms(n) ≥ cap` for every later `n` too (`u64::MAX` when that is
    /// not certain).
    ///
    /// This runs for every parsed policy, so it keeps only values it
    /// computes anyway to find that retry (no `libm::pow` is called here).
    /// `from` is found only for curves whose raw value is non-decreasing
    /// exactly, not merely up to a `libm::pow` rounding: a constant; linear
    /// (`I·n + offset`, a correctly rounded product and sum, then rounding
    /// and saturation, all monotone); and exponential with an integral
    /// coefficient `C ∈ 2..=1024`, whose powers are exact integers
    /// ([`int_pow`]) until `I·C^(n−1)` leaves that route, where it is at
    /// least 2^53 − 1 and saturates to 2^53 − 1 ≥ the cap. Searched up to
    /// retry 64 (beyond, no shortcut).
    pub(crate) fn capped_delays(&self) -> CappedDelays {
        const SEARCHED: u64 = 64;
        let mut known = CappedDelays::NONE;
        match self.curve {
            // One value for every retry: computed once.
            Curve::Constant => {
                let raw = self.raw_ms(1);
                if raw >= self.cap_ms {
                    known.from = 1;
                } else {
                    let mut n: u64 = 1;
                    while known.push(n, raw) {
                        n = n.saturating_add(1);
                    }
                }
            }
            Curve::Linear => {
                for n in 1..=SEARCHED {
                    let raw = self.raw_ms(n);
                    if raw >= self.cap_ms {
                        known.from = n;
                        break;
                    }
                    known.push(n, raw);
                }
            }
            // `raw_ms` step by step without its checks: `I·C^(n−1) + offset`
            // while the power is exact, else saturated.
            Curve::Exponential(c) if (2.0..=1024.0).contains(&c) && libm::trunc(c) == c => {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let c = c as u64;
                let mut p: u64 = 1;
                for n in 1..=SEARCHED {
                    // `mul`, not `checked_mul` / `saturating_mul`: on wasm32
                    // those are 128-bit library calls, and this loop runs
                    // for every parsed policy.
                    let raw = (p <= 1 << 53)
                        .then(|| self.initial_ms.checked_mul(p))
                        .flatten()
                        .map_or(MAX_MS, |r| r.saturating_add(self.offset_ms).min(MAX_MS));
                    if raw >= self.cap_ms {
                        known.from = n;
                        break;
                    }
                    known.push(n, raw);
                    p = p.saturating_mul(c);
                }
            }
            _ => {}
        }
        known
    }

    fn decorrelated_step(&self, prev: u64, sample: Sample) -> u64 {
        let base = self.initial_ms;
        let upper = prev.saturating_mul(3).max(base);
        base.saturating_add(scale(upper.saturating_sub(base), sample.bits()))
            .min(self.cap_ms)
    }

    /// The decorrelated-jitter delay of retry `n`, walking the chain from
    /// `prev = initial` with `sample(i)` for retries `1..=n`. `n` is bounded
    /// by the caller (the chain is linear in `n`).
    #[allow(dead_code)]
    pub(crate) fn decorrelated(&self, n: u64, mut sample: impl FnMut(u64) -> Sample) -> u64 {
        let mut prev = self.initial_ms;
        for i in 1..=n {
            prev = self.decorrelated_step(prev, sample(i));
        }
        prev
    }

    /// Whether a jitter sample changes anything (so sources need not draw).
    pub(crate) fn uses_sample(&self) -> bool {
        self.spread != Spread::None
    }
}

/// The row's JSON form (snake_case keys).
impl serde::Serialize for ScheduleRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self;
        let mut st = s.serialize_struct("ScheduleRow", 8)?;
        st.serialize_field("retry_number", &r.retry_number)?;
        st.serialize_field("attempt", &r.attempt)?;
        st.serialize_field("raw_ms", &r.raw_ms)?;
        st.serialize_field("capped_ms", &r.capped_ms)?;
        st.serialize_field("min_ms", &r.min_ms)?;
        st.serialize_field("max_ms", &r.max_ms)?;
        st.serialize_field("delay_ms", &r.delay_ms)?;
        st.serialize_field("cumulative_ms", &r.cumulative_ms)?;
        st.end()
    }
}

#[cfg(test)]
mod tests;
