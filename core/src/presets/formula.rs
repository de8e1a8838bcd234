//! Each system's delay formula, evaluated the way the system evaluates it.
//!
//! Integer formulas (Sidekiq, Faktory, Celery, RQ, Ratchet, zzz_jobs) are
//! computed exactly in integers. Formulas the original computes in IEEE
//! doubles (BullMQ, Temporal, Oban, Dramatiq, ChasquiMQ) repeat the
//! original's floating-point operations in the same order, so that a pinned
//! random value gives the same result bit for bit. A random draw is always
//! `u = k / 2^53` from the engine's [`Sample`](crate::Sample).

use alloc::vec::Vec;

use crate::backoff::Backoff;
use crate::duration::MAX_MS;

/// `2^53` as a float: `u = k / 2^53`.
#[allow(clippy::cast_precision_loss)]
const SCALE: f64 = (1u64 << 53) as f64;

/// The engine's `Sample` bits for `u` just below 1.
pub(crate) const K_MAX: u64 = (1 << 53) - 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SidekiqJitter {
    /// 6.2.2 – 7.x: `rand(10) * (count + 1)`.
    V7,
    /// 8.x: `rand(10 * (count + 1))`.
    V8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BullKind {
    None,
    Fixed,
    Exponential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RatchetPolicy {
    None,
    Fixed,
    Exponential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZzzStrategy {
    Exponential,
    Linear,
    Constant,
}

/// A system's delay formula with its parameters resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Formula {
    /// `count**4 + 15` s plus `steps`-based jitter (Sidekiq, Faktory).
    Quartic { jitter: SidekiqJitter, steps: u64 },
    /// Celery: `min(maximum, factor * 2**retries)` s, then
    /// `randrange(countdown + 1)`; or the fixed `default_retry_delay`.
    Celery {
        backoff: Option<(u64, u64, bool)>,
        fixed_ms: u64,
    },
    /// BullMQ `Backoffs.builtinStrategies`.
    Bullmq {
        kind: BullKind,
        delay: f64,
        jitter: f64,
    },
    /// Temporal server `ExponentialBackoffAlgorithm` in nanoseconds.
    Temporal {
        initial_ms: u64,
        coefficient: f64,
        max_ms: u64,
    },
    /// Oban ≥ 2.15 `Worker.backoff/1`.
    Oban { max_attempts: u64 },
    /// RQ interval lists (seconds).
    Rq {
        intervals: Vec<u64>,
        max: u64,
        returned: bool,
    },
    /// Dramatiq 2.x `compute_backoff`.
    Dramatiq { min_backoff: u64, max_backoff: u64 },
    /// The engine's own backoff (AWS SDKs, the AWS jitters).
    Engine(Backoff),
    /// The AWS "decorrelated jitter" chain.
    Decorrelated(Backoff),
    /// Ratchet `BackoffPolicyHandler.computeDelay`.
    Ratchet { policy: RatchetPolicy, base_ms: u64 },
    /// zzz_jobs retry strategies (seconds).
    Zzz {
        strategy: ZzzStrategy,
        base_s: u64,
        max_s: u64,
        jitter: bool,
        delay_s: u64,
    },
    /// ChasquiMQ `backoff_ms_from_spec` with the documented ± jitter.
    Chasqui {
        exponential: bool,
        delay_ms: u64,
        max_ms: u64,
        multiplier: f64,
        jitter_ms: u64,
    },
}

/// The stages of one retry's delay, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stages {
    pub(crate) raw: u64,
    pub(crate) capped: u64,
    pub(crate) delay: u64,
}

fn unit(k: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // k < 2^53: exact
    let f = k as f64;
    f / SCALE
}

/// `a · b` saturating. Out of line, as are [`times_u`] and [`secs`]: on
/// wasm32 each inlined copy is a 128-bit multiply with its overflow check
/// (~25 of them in `eval`).
pub(crate) fn mul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

/// `floor(m · k / 2^53)`, i.e. `floor(m · u)`, exactly; saturating.
fn times_u(m: u64, k: u64) -> u64 {
    // Two u64 factors cannot overflow u128; saturating only to satisfy the lint.
    let p = u128::from(m).saturating_mul(u128::from(k)) >> 53;
    u64::try_from(p).unwrap_or(u64::MAX)
}

/// A non-negative float truncated to an integer, saturating at 2^53 − 1.
fn trunc_ms(x: f64) -> u64 {
    crate::backoff::to_ms(x, crate::backoff::Rounding::Floor)
}

fn secs(s: u64) -> u64 {
    mul(s, 1_000).min(MAX_MS)
}

fn clamp(ms: u64) -> u64 {
    ms.min(MAX_MS)
}

/// `2^e` saturating.
fn pow2(e: u64) -> u64 {
    if e >= 64 { u64::MAX } else { 1u64 << e }
}

#[allow(clippy::cast_precision_loss)]
fn f(v: u64) -> f64 {
    v as f64
}

/// JavaScript's `Math.round` for non-negative finite values (ties up).
fn js_round(x: f64) -> f64 {
    if x >= 4_503_599_627_370_496.0 {
        x // 2^52 and above are integers already
    } else {
        libm::floor(x + 0.5)
    }
}

/// Rust's `f64::powi` as compiled (LLVM `llvm.powi` → compiler-builtins
/// `__powidf2`): binary exponentiation by squaring. Written out because
/// `powi`'s result is not specified across targets, and ChasquiMQ's
/// delays depend on its exact rounding.
fn powi(mut a: f64, b: i32) -> f64 {
    let recip = b < 0;
    let mut e = b.unsigned_abs();
    let mut r = 1.0;
    loop {
        if e & 1 != 0 {
            r *= a;
        }
        e >>= 1;
        if e == 0 {
            break;
        }
        a *= a;
    }
    if recip { 1.0 / r } else { r }
}

impl Formula {
    /// The stages of retry `n ≥ 1` with sample `k`. `n` is the attempt
    /// that failed (1-based); each arm converts it to its system's counter.
    pub(crate) fn eval(&self, n: u64, k: u64) -> Stages {
        // Most systems count retries from 0 at the first failure.
        let c = n.saturating_sub(1);
        let u = unit(k);
        match self {
            Self::Quartic { jitter, steps } => {
                // `c⁴` saturating, as `saturating_pow(4)`: a square of a
                // saturated square stays saturated.
                let c2 = mul(c, c);
                let base = mul(c2, c2).saturating_add(15);
                let j = match jitter {
                    SidekiqJitter::V7 => mul(times_u(*steps, k), n),
                    SidekiqJitter::V8 => times_u(mul(*steps, n), k),
                };
                let raw = secs(base);
                Stages {
                    raw,
                    capped: raw,
                    delay: secs(base.saturating_add(j)),
                }
            }
            Self::Celery { backoff, fixed_ms } => match backoff {
                None => Stages {
                    raw: *fixed_ms,
                    capped: *fixed_ms,
                    delay: *fixed_ms,
                },
                Some((factor, maximum, jitter)) => {
                    let raw_s = mul(*factor, pow2(c));
                    let countdown = raw_s.min(*maximum);
                    let d = if *jitter {
                        times_u(countdown.saturating_add(1), k)
                    } else {
                        countdown
                    };
                    Stages {
                        raw: secs(raw_s),
                        capped: secs(countdown),
                        delay: secs(d),
                    }
                }
            },
            Self::Bullmq {
                kind,
                delay,
                jitter,
            } => {
                let top = match kind {
                    BullKind::None => 0.0,
                    BullKind::Fixed => *delay,
                    BullKind::Exponential => js_round(libm::pow(2.0, f(c)) * delay),
                };
                let d = if *jitter > 0.0 && *kind != BullKind::None {
                    let min_delay = top * (1.0 - jitter);
                    libm::floor(u * top * jitter + min_delay)
                } else {
                    top
                };
                let raw = trunc_ms(top);
                Stages {
                    raw,
                    capped: raw,
                    delay: trunc_ms(d),
                }
            }
            Self::Temporal {
                initial_ms,
                coefficient,
                max_ms,
            } => {
                let r = f(*initial_ms) * 1e6 * libm::pow(*coefficient, f(c));
                // Go: `time.Duration(max(0, int64(result)))`, MaxInt64 above.
                let ns: u128 = if r >= 9_223_372_036_854_775_807.0 {
                    u128::from(i64::MAX.unsigned_abs())
                } else {
                    u128::from(trunc_ns(r))
                };
                let max_ns = u128::from(*max_ms) * 1_000_000;
                let capped_ns = if ns == 0 || ns > max_ns { max_ns } else { ns };
                let ms = |v: u128| clamp(u64::try_from(v / 1_000_000).unwrap_or(MAX_MS));
                Stages {
                    raw: ms(ns),
                    capped: ms(capped_ns),
                    delay: ms(capped_ns),
                }
            }
            Self::Oban { max_attempts } => {
                let clamped = if *max_attempts <= 20 {
                    n
                } else {
                    trunc_ms(libm::round(f(n) / f(*max_attempts) * 20.0))
                };
                let time = pow2(clamped.min(100)).saturating_add(15);
                let diff = trunc_ms(u * 0.1 * f(time));
                Stages {
                    raw: secs(time),
                    capped: secs(time),
                    delay: secs(time.saturating_add(diff)),
                }
            }
            Self::Rq {
                intervals,
                max,
                returned,
            } => {
                let len = intervals.len() as u128;
                let last = len.saturating_sub(1);
                let idx = if *returned {
                    u128::from(c).min(last)
                } else {
                    // index = max(len − retries_left, 0), retries_left = max − c.
                    let left = i128::from(*max).saturating_sub(i128::from(c));
                    let i = i128::try_from(len).unwrap_or(0).saturating_sub(left);
                    u128::try_from(i.max(0)).unwrap_or(0).min(last)
                };
                let s = usize::try_from(idx)
                    .ok()
                    .and_then(|i| intervals.get(i))
                    .copied()
                    .unwrap_or(0);
                let ms = secs(s);
                Stages {
                    raw: ms,
                    capped: ms,
                    delay: ms,
                }
            }
            Self::Dramatiq {
                min_backoff,
                max_backoff,
            } => {
                let b = mul(*min_backoff, pow2(c.min(32)));
                Stages {
                    raw: clamp(b),
                    capped: clamp(b.min(*max_backoff)),
                    delay: clamp(dramatiq_jitter(b, *max_backoff, u)),
                }
            }
            Self::Engine(b) => {
                let raw = b.raw_ms(n);
                let capped = raw.min(b.cap_ms);
                Stages {
                    raw,
                    capped,
                    delay: b.jittered(capped, crate::Sample::from_u64(k << 11)),
                }
            }
            Self::Decorrelated(b) => {
                // A single step from the base: the chain is walked by the caller.
                let d = b.decorrelated(1, |_| crate::Sample::from_u64(k << 11));
                Stages {
                    raw: b.initial_ms,
                    capped: b.initial_ms,
                    delay: d,
                }
            }
            Self::Ratchet { policy, base_ms } => {
                const MAX_DELAY: u64 = 86_400_000;
                let d = match policy {
                    RatchetPolicy::None => 0,
                    RatchetPolicy::Fixed => *base_ms,
                    RatchetPolicy::Exponential => {
                        // The exponent is capped at 20, as Ratchet caps it.
                        let m = 1u64
                            .checked_shl(u32::try_from(c.min(20)).unwrap_or(20))
                            .unwrap_or(1 << 20);
                        mul(*base_ms, m).min(MAX_DELAY)
                    }
                };
                Stages {
                    raw: d,
                    capped: d,
                    delay: d,
                }
            }
            Self::Zzz {
                strategy,
                base_s,
                max_s,
                jitter,
                delay_s,
            } => {
                let raw_s = match strategy {
                    ZzzStrategy::Exponential => mul(*base_s, pow2(c)),
                    ZzzStrategy::Linear => mul(*base_s, n),
                    ZzzStrategy::Constant => *delay_s,
                };
                let capped_s = match strategy {
                    ZzzStrategy::Constant => raw_s,
                    _ => raw_s.min(*max_s),
                };
                let capped = secs(capped_s);
                let extra = if *jitter && *strategy == ZzzStrategy::Exponential {
                    times_u(capped, k) / 4
                } else {
                    0
                };
                Stages {
                    raw: secs(raw_s),
                    capped,
                    delay: clamp(capped.saturating_add(extra)),
                }
            }
            Self::Chasqui {
                exponential,
                delay_ms,
                max_ms,
                multiplier,
                jitter_ms,
            } => {
                let base = if *exponential {
                    let e = i32::try_from(c).unwrap_or(i32::MAX);
                    f(*delay_ms) * powi(*multiplier, e)
                } else {
                    f(*delay_ms)
                };
                let capped = trunc_ms(base.min(f(*max_ms)).max(0.0));
                let d = if *jitter_ms == 0 {
                    capped
                } else {
                    let spread = times_u(mul(*jitter_ms, 2), k);
                    capped.saturating_add(spread).saturating_sub(*jitter_ms)
                };
                Stages {
                    raw: trunc_ms(base),
                    capped,
                    delay: clamp(d),
                }
            }
        }
    }

    /// The smallest and largest delay jitter can produce for retry `n`.
    pub(crate) fn bounds(&self, n: u64) -> (u64, u64) {
        let at = |k| self.eval(n, k).delay;
        match self {
            Self::Dramatiq {
                min_backoff,
                max_backoff,
            } => {
                // Two branches, each increasing in u: find where the first
                // draw first exceeds the cap and take both sides' ends.
                let b = min_backoff.saturating_mul(pow2(n.saturating_sub(1).min(32)));
                let over = |k| dramatiq_first(b, unit(k)) > *max_backoff;
                let (mut lo, mut hi) = (0u64, K_MAX + 1);
                while lo < hi {
                    // lo < hi ≤ K_MAX + 1: none of these can overflow.
                    let mid = lo.saturating_add(hi.saturating_sub(lo) / 2);
                    if over(mid) {
                        hi = mid
                    } else {
                        lo = mid.saturating_add(1)
                    }
                }
                let mut vals = Vec::with_capacity(4);
                if lo > 0 {
                    vals.push(at(0));
                    vals.push(at(lo.saturating_sub(1)));
                }
                if lo <= K_MAX {
                    vals.push(at(lo));
                    vals.push(at(K_MAX));
                }
                let min = vals.iter().copied().min().unwrap_or(0);
                let max = vals.iter().copied().max().unwrap_or(0);
                (min, max)
            }
            _ => (at(0), at(K_MAX)),
        }
    }

    /// Whether the delay depends on the sample at all.
    pub(crate) fn uses_sample(&self) -> bool {
        match self {
            Self::Quartic { .. } | Self::Oban { .. } | Self::Dramatiq { .. } => true,
            Self::Celery { backoff, .. } => matches!(backoff, Some((_, _, true))),
            Self::Bullmq { jitter, kind, .. } => *jitter > 0.0 && *kind != BullKind::None,
            Self::Engine(b) | Self::Decorrelated(b) => b.uses_sample(),
            Self::Zzz {
                jitter, strategy, ..
            } => *jitter && *strategy == ZzzStrategy::Exponential,
            Self::Chasqui { jitter_ms, .. } => *jitter_ms > 0,
            Self::Temporal { .. } | Self::Rq { .. } | Self::Ratchet { .. } => false,
        }
    }
}

fn trunc_ns(r: f64) -> u64 {
    if r.is_nan() || r <= 0.0 {
        return 0;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let v = r as u64;
    v
}

/// Dramatiq's first draw: `int(backoff * uniform(1, 2))`.
fn dramatiq_first(b: u64, u: f64) -> u64 {
    trunc_ms(f(b) * (1.0 + 1.0 * u))
}

/// Dramatiq's jitter; both draws use the same `u` (see the presets docs).
fn dramatiq_jitter(b: u64, max: u64, u: f64) -> u64 {
    let first = dramatiq_first(b, u);
    if first > max {
        trunc_ms(f(max) * (0.5 + 0.5 * u))
    } else {
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squared_square_is_saturating_pow_4() {
        // Around the overflow of c² (2^32) and of c⁴ (2^16).
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
    fn powi_matches_repeated_multiplication() {
        assert_eq!(powi(2.0, 10), 1024.0);
        assert_eq!(powi(1.5, 3), 3.375);
        assert_eq!(powi(2.0, -1), 0.5);
        assert_eq!(powi(3.0, 0), 1.0);
    }

    #[test]
    fn js_round_ties_up() {
        assert_eq!(js_round(2.5), 3.0);
        assert_eq!(js_round(2.4999), 2.0);
        assert_eq!(js_round(9_007_199_254_740_991.0), 9_007_199_254_740_991.0);
    }
}
