//! Oban: oban-bg/oban `lib/oban/worker.ex` (`backoff/1`),
//! `lib/oban/backoff.ex`, 2.15.0+.
//!
//! `15 + 2^min(attempt, 100)` s with `:inc` jitter (up to 10 % more);
//! above 20 attempts the attempt is rescaled to
//! `round(attempt / max_attempts · 20)`. An exhausted job is `discarded`.

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;

use super::math::{Stages, f, pow2, secs, trunc_ms, unit};
use super::read::Reader;
use super::system::{GONE, Nearest, System, Terms, attempts};

/// A worker's `max_attempts` (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Options {
    max_attempts: u64,
    system: &'static str,
}

impl System for Options {
    const NAME: &'static str = "oban";
    const OPTIONS: &'static [&'static str] = &["max_attempts"];

    fn read(r: &mut Reader<'_>) -> Self {
        Self {
            max_attempts: r.uint("max_attempts", 20, 1, i32::MAX.unsigned_abs().into()),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        let clamped = if self.max_attempts <= 20 {
            n
        } else {
            trunc_ms(libm::round(f(n) / f(self.max_attempts) * 20.0))
        };
        let time = pow2(clamped.min(100)).saturating_add(15);
        let diff = trunc_ms(unit(k) * 0.1 * f(time));
        Stages {
            raw: secs(time),
            capped: secs(time),
            delay: secs(time.saturating_add(diff)),
        }
    }

    fn uses_sample(&self) -> bool {
        true
    }

    fn terms(&self) -> Terms {
        Terms::new(attempts(self.max_attempts), GONE)
    }

    fn nearest(&self) -> Nearest {
        // OJS has no `+15 s` offset: 2 s doubled, starting from 17 s.
        Nearest::new(17_000, 2.0, MAX_MS, true, Strategy::Exponential)
    }
}
