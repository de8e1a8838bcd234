//! ChasquiMQ 1.3.0 (PyPI `chasquimq`, whose engine is jotarios/chasquimq
//! `chasquimq/src/consumer/retry.rs`, `worker.rs`, `reader.rs`, read at
//! cd30b0889437005a26c482826ecf3435f0960cdf), checked against its real
//! worker on a real Redis 8.6 by `scripts/test-peers`.
//!
//! `trunc(min(delay · multiplier^(attempt − 1), max))` (Rust `powi`,
//! reproduced), then `fastrand_jitter(jitter_ms)` (`x % jitter_ms`, here
//! `floor(jitter_ms · u)`) *added* on top of the cap. A job whose attempt
//! would exceed `max_attempts` goes to the DLQ (with 0 it never runs); an
//! `UnrecoverableError` (the class or a subclass) goes there at once; a
//! panic is retried like any failure. The Python `Worker`'s default
//! `max_attempts` is 25, the Rust `ConsumerConfig`'s and the Node shim's 3
//! (`runtime`).
//!
//! `version: "documented"` is the documentation page instead
//! (`shared/spec/chasquimq-retry-and-backoff.md`): `± jitter_ms` after the
//! cap, never below 0, and panics to the DLQ at once.

use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;

use super::math::{Stages, clamp, f, mul, times_u, trunc_ms};
use super::read::{Reader, choice};
use super::system::{DEAD, Nearest, System, Terms, attempts};

choice! {
    /// Which behaviour: the released package or its documentation page.
    Version {
        /// 1.3.0 as it runs: jitter in `[0, jitter_ms)` on top of the cap,
        /// panics retried.
        V1_3 = "1.3",
        /// The documentation page: `± jitter_ms`, panics to the DLQ.
        Documented = "documented",
    }
}

choice! {
    /// Whose defaults: only `max_attempts`'s differs.
    Runtime {
        /// The Rust `ConsumerConfig`: 3 attempts.
        Rust = "rust",
        /// The Node shim: 3 attempts.
        Node = "node",
        /// The Python `Worker`: 25 attempts.
        Python = "python",
    }
}

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
    runtime: Runtime,
    system: &'static str,
    /// Error types that go to the DLQ at once.
    unrecoverable: Vec<String>,
    version: Version,
}

/// The `powi` exponent for retry `n`: `attempt.saturating_sub(1) as i32`
/// with ChasquiMQ's `u32` attempt (saturated at `u32::MAX`) and its
/// wrapping cast.
fn exponent(n: u64) -> i32 {
    let attempt = u32::try_from(n).unwrap_or(u32::MAX);
    #[allow(clippy::cast_possible_wrap)] // ChasquiMQ's own `as i32`
    let e = attempt.saturating_sub(1) as i32;
    e
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
        "version",
        "runtime",
        "max_attempts",
        "kind",
        "delay_ms",
        "max_delay_ms",
        "multiplier",
        "jitter_ms",
        "unrecoverable",
    ];

    fn read(r: &mut Reader<'_>) -> Self {
        let version = r.choice("version");
        let runtime = r.choice("runtime");
        let default_attempts = if runtime == Runtime::Python { 25 } else { 3 };
        let unrecoverable: &[&str] = match version {
            Version::V1_3 => &["UnrecoverableError"],
            Version::Documented => &["UnrecoverableError", "panic"],
        };
        Self {
            version,
            runtime,
            max_attempts: r.uint("max_attempts", default_attempts, 0, u32::MAX.into()),
            kind: r.choice("kind"),
            delay_ms: r.uint("delay_ms", 100, 0, MAX_MS),
            max_delay_ms: r.uint("max_delay_ms", 30_000, 0, MAX_MS),
            multiplier: r.number("multiplier", 2.0, 0.0, f64::MAX),
            jitter_ms: r.uint("jitter_ms", 100, 0, MAX_MS / 2),
            unrecoverable: r.patterns("unrecoverable", unrecoverable),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        let base = match self.kind {
            Kind::Exponential => f(self.delay_ms) * powi(self.multiplier, exponent(n)),
            Kind::Fixed => f(self.delay_ms),
        };
        let capped = trunc_ms(base.min(f(self.max_delay_ms)).max(0.0));
        let delay = match (self.jitter_ms, self.version) {
            (0, _) => capped,
            (j, Version::V1_3) => capped.saturating_add(times_u(j, k)),
            (j, Version::Documented) => capped
                .saturating_add(times_u(mul(j, 2), k))
                .saturating_sub(j),
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
