//! Dramatiq: Bogdanp/dramatiq `dramatiq/middleware/retries.py`,
//! `dramatiq/common.py` (`compute_backoff`), 2.2.1.
//!
//! `min_backoff · 2^min(retries, 32)` ms, then `int(b · uniform(1, 2))`;
//! above `max_backoff` (itself capped at 7 days) Dramatiq draws again,
//! `int(max_backoff · uniform(0.5, 1))`. Both draws use the same `u` here
//! (what a pinned `random.random` gives). An exhausted job goes to the
//! dead-letter queue (`message.fail()`).

use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;

use super::math::{K_MAX, Stages, clamp, f, mul, pow2, trunc_ms, unit};
use super::read::Reader;
use super::system::{DEAD, Nearest, System, Terms};

/// Dramatiq's `DEFAULT_MAX_BACKOFF`, 7 days in ms: `max_backoff` is capped
/// at it.
const SEVEN_DAYS_MS: u64 = 604_800_000;

/// The `Retries` middleware's options (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Options {
    /// In ms.
    max_backoff: u64,
    /// `None` (`null`): unlimited.
    max_retries: Option<u64>,
    /// In ms.
    min_backoff: u64,
    system: &'static str,
    /// Error types that fail the message at once.
    throws: Vec<String>,
}

impl Options {
    /// `max_backoff = min(max_backoff, DEFAULT_MAX_BACKOFF)`.
    fn cap(&self) -> u64 {
        self.max_backoff.min(SEVEN_DAYS_MS)
    }

    /// The backoff before jitter for retry `n`.
    fn base(&self, n: u64) -> u64 {
        mul(self.min_backoff, pow2(n.saturating_sub(1).min(32)))
    }
}

/// Dramatiq's first draw: `int(backoff * uniform(1, 2))`.
fn first_draw(b: u64, u: f64) -> u64 {
    trunc_ms(f(b) * (1.0 + 1.0 * u))
}

impl System for Options {
    const NAME: &'static str = "dramatiq";
    const OPTIONS: &'static [&'static str] =
        &["max_retries", "min_backoff", "max_backoff", "throws"];

    fn read(r: &mut Reader<'_>) -> Self {
        Self {
            max_retries: r.uint_or_null("max_retries", 20),
            min_backoff: r.uint("min_backoff", 15_000, 0, MAX_MS),
            max_backoff: r.uint("max_backoff", SEVEN_DAYS_MS, 0, MAX_MS),
            throws: r.patterns("throws", &[]),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        let (b, max, u) = (self.base(n), self.cap(), unit(k));
        let first = first_draw(b, u);
        let delay = if first > max {
            trunc_ms(f(max) * (0.5 + 0.5 * u))
        } else {
            first
        };
        Stages {
            raw: clamp(b),
            capped: clamp(b.min(max)),
            delay: clamp(delay),
        }
    }

    fn uses_sample(&self) -> bool {
        true
    }

    /// Two branches, each increasing in `u`: find where the first draw
    /// first exceeds the cap and take both sides' ends.
    fn bounds(&self, n: u64) -> (u64, u64) {
        let at = |k| self.stages(n, k).delay;
        let (b, max) = (self.base(n), self.cap());
        let (mut lo, mut hi) = (0u64, K_MAX + 1);
        while lo < hi {
            // lo < hi ≤ K_MAX + 1: none of these can overflow.
            let mid = lo.saturating_add(hi.saturating_sub(lo) / 2);
            if first_draw(b, unit(mid)) > max {
                hi = mid;
            } else {
                lo = mid.saturating_add(1);
            }
        }
        let mut ends = Vec::with_capacity(4);
        if lo > 0 {
            ends.push(at(0));
            ends.push(at(lo.saturating_sub(1)));
        }
        if lo <= K_MAX {
            ends.push(at(lo));
            ends.push(at(K_MAX));
        }
        let min = ends.iter().copied().min().unwrap_or(0);
        let max = ends.iter().copied().max().unwrap_or(0);
        (min, max)
    }

    fn terms(&self) -> Terms {
        Terms::new(self.max_retries, DEAD).with_rules(&self.throws, DEAD)
    }

    fn nearest(&self) -> Nearest {
        Nearest::new(
            self.min_backoff,
            2.0,
            self.max_backoff.max(self.min_backoff),
            true,
            Strategy::Exponential,
        )
    }
}
