//! Integer and floating-point helpers shared by the systems' formulas.
//!
//! Integer formulas (Sidekiq, Faktory, Celery, RQ, Ratchet, zzz_jobs) are
//! computed exactly in integers, saturating rather than wrapping. Formulas
//! the original computes in IEEE doubles (BullMQ, Temporal, Oban, Dramatiq,
//! ChasquiMQ) repeat the original's floating-point operations in the same
//! order, so that a pinned random value gives the same result bit for bit.
//! A random draw is always `u = k / 2^53` from the engine's
//! [`Sample`](crate::Sample).

use crate::duration::MAX_MS;

/// `2^53` as a float: `u = k / 2^53`.
#[allow(clippy::cast_precision_loss)]
const SCALE: f64 = (1u64 << 53) as f64;

/// The engine's `Sample` bits for `u` just below 1.
pub(crate) const K_MAX: u64 = (1 << 53) - 1;

/// The stages of one retry's delay, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stages {
    /// The formula's value before any cap.
    pub(crate) raw: u64,
    /// After the system's cap, before jitter.
    pub(crate) capped: u64,
    /// The delay with the sample's jitter.
    pub(crate) delay: u64,
}

impl Stages {
    /// A delay with no cap and no jitter.
    pub(crate) fn fixed(ms: u64) -> Self {
        Self {
            raw: ms,
            capped: ms,
            delay: ms,
        }
    }
}

/// `u = k / 2^53` for sample bits `k`.
pub(crate) fn unit(k: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // k < 2^53: exact
    let f = k as f64;
    f / SCALE
}

/// `a · b` saturating.
pub(crate) fn mul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

/// `floor(m · k / 2^53)`, i.e. `floor(m · u)`, exactly; saturating.
pub(crate) fn times_u(m: u64, k: u64) -> u64 {
    // Two u64 factors cannot overflow u128; saturating only to satisfy the lint.
    let p = u128::from(m).saturating_mul(u128::from(k)) >> 53;
    u64::try_from(p).unwrap_or(u64::MAX)
}

/// A non-negative float truncated to an integer, saturating at 2^53 − 1.
pub(crate) fn trunc_ms(x: f64) -> u64 {
    crate::backoff::to_ms(x, crate::backoff::Rounding::Floor)
}

/// Seconds to ms, saturating at [`MAX_MS`].
pub(crate) fn secs(s: u64) -> u64 {
    mul(s, 1_000).min(MAX_MS)
}

/// At most [`MAX_MS`].
pub(crate) fn clamp(ms: u64) -> u64 {
    ms.min(MAX_MS)
}

/// `2^e` saturating.
pub(crate) fn pow2(e: u64) -> u64 {
    if e >= 64 { u64::MAX } else { 1u64 << e }
}

/// An integer as a double (rounded to nearest above 2^53).
#[allow(clippy::cast_precision_loss)]
pub(crate) fn f(v: u64) -> f64 {
    v as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squared_square_is_saturating_pow_4() {
        // Around the overflow of c² (2^32) and of c⁴ (2^16): Sidekiq's `c⁴`.
        for c in [
            0,
            1,
            2,
            15,
            65_535,
            65_536,
            65_537,
            4_294_967_295,
            4_294_967_296,
            4_294_967_297,
            u64::MAX,
        ] {
            let c2 = mul(c, c);
            assert_eq!(mul(c2, c2), c.saturating_pow(4), "c = {c}");
        }
    }

    #[test]
    fn times_u_is_floor_of_the_product() {
        assert_eq!(times_u(10, 0), 0);
        assert_eq!(times_u(10, 1 << 52), 5);
        assert_eq!(times_u(10, K_MAX), 9);
        assert_eq!(times_u(1 << 53, K_MAX), K_MAX);
        assert_eq!(times_u(u64::MAX, 1 << 53), u64::MAX);
    }
}
