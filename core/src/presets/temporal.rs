//! Temporal: temporalio/temporal `common/backoff/retry.go`
//! (`ExponentialBackoffAlgorithm`), `service/history/workflow/retry.go`,
//! v1.29+.
//!
//! `int64(initial_ns · coefficient^(attempt − 1))` in nanoseconds, then
//! the `maximumInterval` when that is 0 or above it; no jitter.
//! `maximumAttempts` counts every attempt, 0 for unlimited.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;

use super::math::{Stages, clamp, f, mul};
use super::read::Reader;
use super::system::{GONE, Nearest, System, Terms, attempts};

/// An activity's or workflow's `RetryPolicy` (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Options {
    backoff_coefficient: f64,
    /// In ms.
    initial_interval: u64,
    /// 0: unlimited.
    maximum_attempts: u64,
    /// In ms; 100 × the initial interval by default.
    maximum_interval: u64,
    non_retryable_error_types: Vec<String>,
    system: &'static str,
}

/// A double truncated towards zero to nanoseconds; 0 below.
fn trunc_ns(r: f64) -> u64 {
    if r.is_nan() || r <= 0.0 {
        return 0;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let v = r as u64;
    v
}

impl System for Options {
    const NAME: &'static str = "temporal";
    const OPTIONS: &'static [&'static str] = &[
        "initialInterval",
        "backoffCoefficient",
        "maximumInterval",
        "maximumAttempts",
        "nonRetryableErrorTypes",
    ];

    fn read(r: &mut Reader<'_>) -> Self {
        let initial_interval = r.uint("initialInterval", 1_000, 1, MAX_MS / 100);
        let backoff_coefficient = r.number("backoffCoefficient", 2.0, 1.0, f64::MAX);
        let maximum_interval = r.uint("maximumInterval", mul(initial_interval, 100), 1, MAX_MS);
        if maximum_interval < initial_interval {
            r.fault(
                "maximumInterval",
                format!("expected maximumInterval >= initialInterval, found {maximum_interval} ms < {initial_interval} ms"),
            );
        }
        Self {
            initial_interval,
            backoff_coefficient,
            maximum_interval,
            maximum_attempts: r.uint("maximumAttempts", 0, 0, i32::MAX.unsigned_abs().into()),
            non_retryable_error_types: r.patterns("nonRetryableErrorTypes", &[]),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, _k: u64) -> Stages {
        let c = n.saturating_sub(1);
        let r = f(self.initial_interval) * 1e6 * libm::pow(self.backoff_coefficient, f(c));
        // Go: `time.Duration(max(0, int64(result)))`, MaxInt64 above.
        let ns: u128 = if r >= 9_223_372_036_854_775_807.0 {
            u128::from(i64::MAX.unsigned_abs())
        } else {
            u128::from(trunc_ns(r))
        };
        let max_ns = u128::from(self.maximum_interval) * 1_000_000;
        let capped_ns = if ns == 0 || ns > max_ns { max_ns } else { ns };
        let ms = |v: u128| clamp(u64::try_from(v / 1_000_000).unwrap_or(MAX_MS));
        Stages {
            raw: ms(ns),
            capped: ms(capped_ns),
            delay: ms(capped_ns),
        }
    }

    fn uses_sample(&self) -> bool {
        false
    }

    fn terms(&self) -> Terms {
        let last = match self.maximum_attempts {
            0 => None,
            n => attempts(n),
        };
        Terms::new(last, GONE).with_rules(&self.non_retryable_error_types, GONE)
    }

    fn nearest(&self) -> Nearest {
        Nearest::new(
            self.initial_interval,
            self.backoff_coefficient,
            self.maximum_interval,
            false,
            Strategy::Exponential,
        )
    }
}
