//! ChasquiMQ: `shared/spec/chasquimq-retry-and-backoff.md`; cf.
//! jotarios/chasquimq `chasquimq/src/consumer/retry.rs`, `worker.rs`
//! (0.1.0).
//!
//! `trunc(min(delay · multiplier^(attempt − 1), max))` (Rust `powi`,
//! reproduced) with the documented `± jitter_ms` after the cap, never
//! below 0. An exhausted job, an `UnrecoverableError` or a panic goes to
//! the DLQ. The published source differs from its documentation (jitter in
//! `[0, jitter_ms)`, panics retried); the preset follows the documentation.

use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;

use super::math::{Stages, clamp, f, mul, times_u, trunc_ms};
use super::read::{Reader, choice};
use super::system::{DEAD, Nearest, System, Terms, attempts};

choice! {
    /// `kind`.
    Kind {
        /// `delay · multiplier^(attempt − 1)`.
        Exponential = "exponential",
        /// `delay`.
        Fixed = "fixed",
    }
}

/// A queue's retry spec (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Options {
    delay_ms: u64,
    jitter_ms: u64,
    kind: Kind,
    /// Every attempt, the first included.
    max_attempts: u64,
    max_delay_ms: u64,
    multiplier: f64,
    system: &'static str,
    /// Error types (and `panic`) that go to the DLQ at once.
    unrecoverable: Vec<String>,
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

impl System for Options {
    const NAME: &'static str = "chasquimq";
    const OPTIONS: &'static [&'static str] = &[
        "max_attempts",
        "kind",
        "delay_ms",
        "max_delay_ms",
        "multiplier",
        "jitter_ms",
        "unrecoverable",
    ];

    fn read(r: &mut Reader<'_>) -> Self {
        Self {
            max_attempts: r.uint("max_attempts", 3, 0, u32::MAX.into()),
            kind: r.choice("kind"),
            delay_ms: r.uint("delay_ms", 100, 0, MAX_MS),
            max_delay_ms: r.uint("max_delay_ms", 30_000, 0, MAX_MS),
            multiplier: r.number("multiplier", 2.0, 0.0, f64::MAX),
            jitter_ms: r.uint("jitter_ms", 100, 0, MAX_MS / 2),
            unrecoverable: r.patterns("unrecoverable", &["UnrecoverableError", "panic"]),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        let base = match self.kind {
            Kind::Exponential => {
                let e = i32::try_from(n.saturating_sub(1)).unwrap_or(i32::MAX);
                f(self.delay_ms) * powi(self.multiplier, e)
            }
            Kind::Fixed => f(self.delay_ms),
        };
        let capped = trunc_ms(base.min(f(self.max_delay_ms)).max(0.0));
        let delay = if self.jitter_ms == 0 {
            capped
        } else {
            let spread = times_u(mul(self.jitter_ms, 2), k);
            capped.saturating_add(spread).saturating_sub(self.jitter_ms)
        };
        Stages {
            raw: trunc_ms(base),
            capped,
            delay: clamp(delay),
        }
    }

    fn uses_sample(&self) -> bool {
        self.jitter_ms > 0
    }

    fn terms(&self) -> Terms {
        Terms::new(attempts(self.max_attempts), DEAD).with_rules(&self.unrecoverable, DEAD)
    }

    fn nearest(&self) -> Nearest {
        let strategy = match self.kind {
            Kind::Exponential => Strategy::Exponential,
            Kind::Fixed => Strategy::None,
        };
        Nearest::new(
            self.delay_ms,
            self.multiplier.max(1.0),
            self.max_delay_ms.max(self.delay_ms),
            self.jitter_ms > 0,
            strategy,
        )
        // Zero attempts are not the limit's one: the plain policy keeps them.
        .attempts(self.max_attempts)
    }
}

#[cfg(test)]
mod tests {
    use super::powi;

    #[test]
    fn powi_matches_repeated_multiplication() {
        assert_eq!(powi(2.0, 10), 1024.0);
        assert_eq!(powi(1.5, 3), 3.375);
        assert_eq!(powi(2.0, -1), 0.5);
        assert_eq!(powi(3.0, 0), 1.0);
    }
}
