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
//! `aws_jitter`: "Exponential Backoff And Jitter" (2015): full, equal or
//! decorrelated jitter over `min(cap, base · 2^c)`.
//!
//! Both are the engine's own backoff with another spread; an exhausted
//! call raises (discard).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::{Backoff, Curve, Rounding, Spread, Strategy};
use crate::duration::MAX_MS;
use crate::jitter::Sample;

use super::math::Stages;
use super::read::{Reader, choice};
use super::system::{GONE, Nearest, System, Terms, attempts};

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
    /// The blog post's three jitters.
    Jitter {
        /// `floor(u · d)`.
        Full = "full",
        /// `⌊d/2⌋ + floor(u · (d − ⌊d/2⌋))`.
        Equal = "equal",
        /// `min(cap, base + floor(u · (3 · prev − base)))`.
        Decorrelated = "decorrelated",
    }
}

/// The blog post's parameters (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct AwsJitter {
    base_ms: u64,
    cap_ms: u64,
    jitter: Jitter,
    /// Every attempt, the first included.
    max_attempts: u64,
    /// Error types that are not retried.
    non_retryable: Vec<String>,
    system: &'static str,
}

impl AwsJitter {
    fn backoff(&self) -> Backoff {
        let spread = match self.jitter {
            Jitter::Full => Spread::Full,
            Jitter::Equal => Spread::Equal,
            Jitter::Decorrelated => Spread::Decorrelated,
        };
        backoff(self.base_ms, self.cap_ms, spread)
    }
}

impl System for AwsJitter {
    const NAME: &'static str = "aws_jitter";
    const OPTIONS: &'static [&'static str] = &[
        "jitter",
        "base_ms",
        "cap_ms",
        "max_attempts",
        "non_retryable",
    ];

    fn read(r: &mut Reader<'_>) -> Self {
        let jitter = r.choice("jitter");
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
            base_ms,
            cap_ms,
            max_attempts: r.uint("max_attempts", 3, 1, MAX_MS),
            non_retryable: r.patterns("non_retryable", &[]),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        let b = self.backoff();
        if self.jitter == Jitter::Decorrelated {
            // A single step from the base: the chain is walked by the
            // caller (`chain`).
            let d = b.decorrelated(1, |_| Sample::from_u64(k << 11));
            return Stages {
                raw: b.initial_ms,
                capped: b.initial_ms,
                delay: d,
            };
        }
        engine_stages(&b, n, k)
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

    fn chain(&self) -> Option<Backoff> {
        (self.jitter == Jitter::Decorrelated).then(|| self.backoff())
    }
}
