//! The AWS SDKs' standard retry mode and the AWS Architecture Blog's
//! jitters.
//!
//! `aws`: boto/botocore `botocore/retries/standard.py`
//! (`ExponentialBackoff`, `MaxAttemptsChecker`), 1.44.5, and
//! smithy-lang/smithy-typescript `@smithy/core` retry, 3.41.0 /
//! `@smithy/util-retry` 4.6.2: `min(base · 2^c, 20 s)`, base 50 ms (1 s for
//! throttling errors), full jitter. The retry quota and
//! `x-amz-retry-after` are per-client state, not modelled.
//!
//! `aws_jitter`: the jitters of "Exponential Backoff And Jitter" (AWS
//! Architecture Blog, 2015) as its simulator computes them:
//! aws-samples/aws-arch-backoff-simulator `src/backoff_simulator.py` at
//! 095a07603079779edc86102ff1d91731a004cd2a. Full `uniform(0, v)`, equal
//! `v/2 + uniform(0, v/2)` over `v = min(cap, 2^n · base)` with the
//! simulator's `n` (1 at the first retry: its client increments the attempt
//! before sleeping), or `2^(n−1)` with `numbering: "sdk"`; decorrelated
//! `sleep = min(cap, uniform(base, sleep · 3))` carried as a float. Only the
//! returned delay is truncated to whole ms.
//!
//! `aws` is the engine's own backoff with full jitter; both raise when
//! exhausted (discard).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::{Backoff, Curve, Rounding, Spread, Strategy};
use crate::duration::MAX_MS;
use crate::jitter::Sample;

use super::math::{Stages, clamp, f, mul, pow2, trunc_ms, unit};
use super::read::{Reader, choice};
use super::system::{Chain, GONE, Nearest, System, Terms, attempts};

/// `min(cap, base · 2^c)` with `spread`.
fn backoff(base: u64, cap: u64, spread: Spread) -> Backoff {
    Backoff {
        initial_ms: base,
        curve: Curve::Exponential(2.0),
        offset_ms: 0,
        cap_ms: cap,
        spread,
        rounding: Rounding::Nearest,
    }
}

/// The engine's backoff for retry `n` with sample bits `k`.
fn engine_stages(b: &Backoff, n: u64, k: u64) -> Stages {
    let raw = b.raw_ms(n);
    let capped = raw.min(b.cap_ms);
    Stages {
        raw,
        capped,
        delay: b.jittered(capped, Sample::from_u64(k << 11)),
    }
}

/// The nearest plain policy: the same curve with OJS's jitter.
fn nearest(b: &Backoff) -> Nearest {
    Nearest::new(
        b.initial_ms,
        2.0,
        b.cap_ms.max(b.initial_ms),
        true,
        Strategy::Exponential,
    )
}

/// The SDKs' standard mode (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Aws {
    /// Every attempt, the first included.
    max_attempts: u64,
    /// Error types that are not retried.
    non_retryable: Vec<String>,
    system: &'static str,
    /// Whether the errors are throttling errors (a 1 s base).
    throttling: bool,
}

impl Aws {
    fn backoff(&self) -> Backoff {
        let base = if self.throttling { 1_000 } else { 50 };
        backoff(base, 20_000, Spread::Full)
    }
}

impl System for Aws {
    const NAME: &'static str = "aws";
    const OPTIONS: &'static [&'static str] = &["max_attempts", "throttling", "non_retryable"];

    fn read(r: &mut Reader<'_>) -> Self {
        Self {
            max_attempts: r.uint("max_attempts", 3, 1, MAX_MS),
            throttling: r.boolean("throttling", false),
            non_retryable: r.patterns("non_retryable", &[]),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        engine_stages(&self.backoff(), n, k)
    }

    fn uses_sample(&self) -> bool {
        true
    }

    fn terms(&self) -> Terms {
        Terms::new(attempts(self.max_attempts), GONE).with_rules(&self.non_retryable, GONE)
    }

    fn nearest(&self) -> Nearest {
        nearest(&self.backoff())
    }
}

choice! {
    /// The simulator's three jitters.
    Jitter {
        /// `ExpoBackoffFullJitter`: `uniform(0, v)`.
        Full = "full",
        /// `ExpoBackoffEqualJitter`: `v/2 + uniform(0, v/2)`.
        Equal = "equal",
        /// `ExpoBackoffDecorr`: `sleep = min(cap, uniform(base, sleep · 3))`.
        Decorrelated = "decorrelated",
    }
}

choice! {
    /// Which exponent retry `n` sees in `min(cap, 2^e · base)`.
    Numbering {
        /// The simulator's: `e = n` (its client counts the attempt before
        /// the first sleep), so the first retry is up to `2·base`.
        Simulator = "simulator",
        /// The AWS SDKs' retry count: `e = n − 1`, the first retry up to
        /// `base`.
        Sdk = "sdk",
    }
}

/// The simulator's parameters (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct AwsJitter {
    base_ms: u64,
    cap_ms: u64,
    jitter: Jitter,
    /// Every attempt, the first included.
    max_attempts: u64,
    /// Error types that are not retried.
    non_retryable: Vec<String>,
    numbering: Numbering,
    system: &'static str,
}

/// CPython's `random.uniform(a, b)`: `a + (b − a) · random()`.
fn uniform(a: f64, b: f64, u: f64) -> f64 {
    a + (b - a) * u
}

impl AwsJitter {
    /// `2^e · base` for retry `n`, before the cap (saturating).
    fn raw(&self, n: u64) -> u64 {
        let e = match self.numbering {
            Numbering::Simulator => n,
            Numbering::Sdk => n.saturating_sub(1),
        };
        mul(self.base_ms, pow2(e))
    }

    /// `Backoff.expo`: `min(cap, 2^e · base)`, exactly (Python integers).
    fn expo(&self, n: u64) -> u64 {
        self.raw(n).min(self.cap_ms)
    }
}

impl System for AwsJitter {
    const NAME: &'static str = "aws_jitter";
    const OPTIONS: &'static [&'static str] = &[
        "jitter",
        "numbering",
        "base_ms",
        "cap_ms",
        "max_attempts",
        "non_retryable",
    ];

    fn read(r: &mut Reader<'_>) -> Self {
        let jitter = r.choice("jitter");
        let numbering = r.choice("numbering");
        let base_ms = r.uint("base_ms", 100, 1, MAX_MS);
        let cap_ms = r.uint("cap_ms", 20_000, 1, MAX_MS);
        if cap_ms < base_ms {
            r.fault(
                "cap_ms",
                format!("expected cap_ms >= base_ms, found {cap_ms} < {base_ms}"),
            );
        }
        Self {
            jitter,
            numbering,
            base_ms,
            cap_ms,
            max_attempts: r.uint("max_attempts", 3, 1, MAX_MS),
            non_retryable: r.patterns("non_retryable", &[]),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        let u = unit(k);
        let v = self.expo(n);
        let delay = match self.jitter {
            Jitter::Full => uniform(0.0, f(v), u),
            Jitter::Equal => {
                let half = f(v) / 2.0;
                half + uniform(0.0, half, u)
            }
            // A single step from the base: `Preset` walks the chain.
            Jitter::Decorrelated => {
                let c = self.chain_params();
                return Stages {
                    raw: self.base_ms,
                    capped: self.base_ms,
                    delay: Chain::ms(c.step(c.start(), k)),
                };
            }
        };
        Stages {
            raw: clamp(self.raw(n)),
            capped: v,
            delay: trunc_ms(delay),
        }
    }

    fn uses_sample(&self) -> bool {
        true
    }

    fn terms(&self) -> Terms {
        Terms::new(attempts(self.max_attempts), GONE).with_rules(&self.non_retryable, GONE)
    }

    fn nearest(&self) -> Nearest {
        let first = self.expo(1);
        Nearest::new(
            first,
            2.0,
            self.cap_ms.max(first),
            true,
            Strategy::Exponential,
        )
    }

    fn chain(&self) -> Option<Chain> {
        (self.jitter == Jitter::Decorrelated).then(|| self.chain_params())
    }
}

impl AwsJitter {
    fn chain_params(&self) -> Chain {
        Chain {
            base: f(self.base_ms),
            cap: f(self.cap_ms),
        }
    }
}
