//! Celery: `celery/app/autoretry.py`, `celery/utils/time.py`
//! (`get_exponential_backoff_interval`), `celery/app/task.py`
//! (`Task.retry`), 5.7.0.
//!
//! With `retry_backoff`: `min(retry_backoff_max, factor · 2^retries)` s,
//! then `randrange(countdown + 1)` with `retry_jitter`; without it, the
//! fixed `default_retry_delay`. `request.retries + 1 > max_retries` raises
//! `MaxRetriesExceededError`: the task fails (a FAILURE result, discard).
//!
//! `autoretry_for` (a list) retries only the error types it lists: the
//! autoretry wrapper lets any other exception propagate (FAILURE, discard),
//! after `dont_autoretry_for`. Both match by `isinstance`, so a failure's
//! ancestors match too. `null` (the default) retries every type, as a task
//! that calls `self.retry` on any exception does.

use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;
use crate::value::Value;

use super::math::{Stages, mul, pow2, secs, times_u};
use super::read::{Reader, in_range};
use super::system::{GONE, Nearest, System, Terms};

/// `retry_backoff: bool | seconds`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum RetryBackoff {
    /// `true` is a factor of 1 s; `false`, no backoff.
    Flag(bool),
    /// A factor in seconds, kept as written (`2` or `2.5`).
    Seconds(Value),
}

/// The task's retry options (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Options {
    /// The error types that are retried (`None`, `null`: every type).
    autoretry_for: Option<Vec<String>>,
    /// The fixed delay without `retry_backoff`, in seconds.
    default_retry_delay: f64,
    /// Error types that are not retried (`dont_autoretry_for`).
    dont_autoretry_for: Vec<String>,
    /// `None` (`null`): unlimited.
    max_retries: Option<u64>,
    retry_backoff: RetryBackoff,
    /// The cap in seconds.
    retry_backoff_max: u64,
    retry_jitter: bool,
    system: &'static str,
    /// `int(max(1.0, retry_backoff))`; `None`: no backoff.
    #[serde(skip)]
    factor: Option<u64>,
}

/// `retry_backoff`, with the factor it gives.
fn read_retry_backoff(r: &mut Reader<'_>) -> (RetryBackoff, Option<u64>) {
    match r.get("retry_backoff") {
        None | Some(Value::Bool(false)) => (RetryBackoff::Flag(false), None),
        Some(Value::Bool(true)) => (RetryBackoff::Flag(true), Some(1)),
        Some(v) => match in_range(v, 0.0, f64::MAX) {
            // `float(retry_backoff)`; 0 is falsy;
            // `factor = int(max(1.0, retry_backoff))`.
            Some(x) => {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let factor = (x != 0.0).then(|| libm::trunc(x.max(1.0)).min(9.0e15) as u64);
                (RetryBackoff::Seconds(v.clone()), factor)
            }
            None => {
                r.bad(
                    "retry_backoff",
                    "expected true, false or a non-negative number of seconds",
                    v,
                );
                (RetryBackoff::Flag(false), None)
            }
        },
    }
}

impl Options {
    /// `default_retry_delay` in ms, truncated.
    fn fixed_ms(&self) -> u64 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ms = libm::trunc(self.default_retry_delay * 1000.0) as u64;
        ms.min(MAX_MS)
    }
}

impl System for Options {
    const NAME: &'static str = "celery";
    const OPTIONS: &'static [&'static str] = &[
        "max_retries",
        "retry_backoff",
        "retry_backoff_max",
        "retry_jitter",
        "default_retry_delay",
        "dont_autoretry_for",
        "autoretry_for",
    ];

    fn read(r: &mut Reader<'_>) -> Self {
        let max_retries = r.uint_or_null("max_retries", 3);
        let (retry_backoff, factor) = read_retry_backoff(r);
        Self {
            max_retries,
            retry_backoff,
            factor,
            retry_backoff_max: r.uint("retry_backoff_max", 600, 0, MAX_MS),
            retry_jitter: r.boolean("retry_jitter", true),
            default_retry_delay: r.number("default_retry_delay", 180.0, 0.0, 9.0e12),
            dont_autoretry_for: r.patterns("dont_autoretry_for", &[]),
            autoretry_for: r.patterns_or_null("autoretry_for"),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        let Some(factor) = self.factor else {
            return Stages::fixed(self.fixed_ms());
        };
        let raw_s = mul(factor, pow2(n.saturating_sub(1)));
        // The cap applies before the jitter.
        let countdown = raw_s.min(self.retry_backoff_max);
        let d = if self.retry_jitter {
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

    fn uses_sample(&self) -> bool {
        self.factor.is_some() && self.retry_jitter
    }

    fn terms(&self) -> Terms {
        Terms::new(self.max_retries, GONE)
            .with_rules(&self.dont_autoretry_for, GONE)
            .retrying_only(self.autoretry_for.as_deref(), GONE)
    }

    fn nearest(&self) -> Nearest {
        match self.factor {
            Some(f) => Nearest::new(
                mul(f, 1000),
                2.0,
                mul(self.retry_backoff_max, 1000),
                self.retry_jitter,
                Strategy::Exponential,
            ),
            None => {
                let ms = self.fixed_ms();
                Nearest::new(ms, 1.0, ms, false, Strategy::None)
            }
        }
    }
}
