//! zzz_jobs: `shared/spec/zzz_jobs-retry-strategies.md` (no public
//! source).
//!
//! Exponential `min(base · 2^c, max)` s plus up to 25 % jitter (after the
//! cap), linear `min(base · n, max)` s (our reading: the doc lists no
//! linear fields), constant `delay_seconds`. An exhausted job is
//! `discarded` (kept in the store).

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;

use super::math::{Stages, clamp, mul, pow2, secs, times_u};
use super::read::{Reader, choice};
use super::system::{GONE, Nearest, System, Terms, attempts};

choice! {
    /// `strategy`.
    Kind {
        /// `min(base · 2^c, max)` s, with jitter.
        Exponential = "exponential",
        /// `min(base · n, max)` s.
        Linear = "linear",
        /// `delay_seconds`.
        Constant = "constant",
    }
}

/// A worker's retry settings (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Options {
    base_seconds: u64,
    delay_seconds: u64,
    /// Up to 25 % more, for the exponential strategy.
    jitter: bool,
    /// Every attempt, the first included.
    max_attempts: u64,
    max_seconds: u64,
    strategy: Kind,
    system: &'static str,
}

impl System for Options {
    const NAME: &'static str = "zzz_jobs";
    const OPTIONS: &'static [&'static str] = &[
        "max_attempts",
        "strategy",
        "base_seconds",
        "max_seconds",
        "jitter",
        "delay_seconds",
    ];

    fn read(r: &mut Reader<'_>) -> Self {
        Self {
            max_attempts: r.uint("max_attempts", 20, 0, i32::MAX.unsigned_abs().into()),
            strategy: r.choice("strategy"),
            base_seconds: r.uint("base_seconds", 15, 0, MAX_MS),
            max_seconds: r.uint("max_seconds", 3_600, 0, MAX_MS),
            jitter: r.boolean("jitter", true),
            delay_seconds: r.uint("delay_seconds", 10, 0, MAX_MS),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        let raw_s = match self.strategy {
            Kind::Exponential => mul(self.base_seconds, pow2(n.saturating_sub(1))),
            Kind::Linear => mul(self.base_seconds, n),
            Kind::Constant => self.delay_seconds,
        };
        let capped_s = match self.strategy {
            Kind::Constant => raw_s,
            Kind::Exponential | Kind::Linear => raw_s.min(self.max_seconds),
        };
        let capped = secs(capped_s);
        let extra = if self.uses_sample() {
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

    fn uses_sample(&self) -> bool {
        self.jitter && self.strategy == Kind::Exponential
    }

    fn terms(&self) -> Terms {
        Terms::new(attempts(self.max_attempts), GONE)
    }

    fn nearest(&self) -> Nearest {
        let nearest = match self.strategy {
            Kind::Constant => {
                let ms = secs(self.delay_seconds);
                Nearest::new(ms, 2.0, ms, self.jitter, Strategy::None)
            }
            Kind::Exponential | Kind::Linear => {
                let strategy = if self.strategy == Kind::Linear {
                    Strategy::Linear
                } else {
                    Strategy::Exponential
                };
                let max = secs(self.max_seconds.max(self.base_seconds));
                Nearest::new(secs(self.base_seconds), 2.0, max, self.jitter, strategy)
            }
        };
        // Zero attempts are not the limit's one: the plain policy keeps them.
        nearest.attempts(self.max_attempts)
    }
}
