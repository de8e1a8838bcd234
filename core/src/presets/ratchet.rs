//! Ratchet: `shared/spec/ratchet-retry-strategies.md`
//! (`BackoffPolicyHandler.computeDelay`; no public source).
//!
//! NONE retries at once, FIXED waits the base, EXPONENTIAL
//! `base · 2^min(attempts − 1, 20)` capped at 24 h; no jitter. An
//! exhausted job, or one whose error is `@DoNotRetry`, goes to the DLQ.

use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::Strategy;

use super::math::{Stages, mul};
use super::read::{Reader, choice};
use super::system::{DEAD, Nearest, System, Terms};

/// Ratchet's delay cap, 24 h in ms.
const MAX_DELAY_MS: u64 = 86_400_000;

choice! {
    /// `backoffPolicy`.
    Policy {
        /// Retry at once.
        None = "NONE",
        /// The base every time.
        Fixed = "FIXED",
        /// The base doubled per retry.
        Exponential = "EXPONENTIAL",
    }
}

/// A job type's retry settings (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Options {
    /// In ms.
    backoff_delay_ms: u64,
    backoff_policy: Policy,
    /// Error types annotated `@DoNotRetry`.
    do_not_retry: Vec<String>,
    max_retries: u64,
    system: &'static str,
}

impl System for Options {
    const NAME: &'static str = "ratchet";
    const OPTIONS: &'static [&'static str] = &[
        "maxRetries",
        "backoffPolicy",
        "backoffDelayMs",
        "doNotRetry",
    ];

    fn read(r: &mut Reader<'_>) -> Self {
        let int_max = i32::MAX.unsigned_abs().into();
        Self {
            max_retries: r.uint("maxRetries", 0, 0, int_max),
            backoff_policy: r.choice("backoffPolicy"),
            backoff_delay_ms: r.uint("backoffDelayMs", 0, 0, int_max),
            do_not_retry: r.patterns("doNotRetry", &[]),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, _k: u64) -> Stages {
        let base = self.backoff_delay_ms;
        let d = match self.backoff_policy {
            Policy::None => 0,
            Policy::Fixed => base,
            Policy::Exponential => {
                // The exponent is capped at 20, as Ratchet caps it.
                let e = n.saturating_sub(1).min(20);
                mul(base, 1 << e).min(MAX_DELAY_MS)
            }
        };
        Stages::fixed(d)
    }

    fn uses_sample(&self) -> bool {
        false
    }

    fn terms(&self) -> Terms {
        Terms::new(Some(self.max_retries), DEAD).with_rules(&self.do_not_retry, DEAD)
    }

    fn nearest(&self) -> Nearest {
        let base = self.backoff_delay_ms;
        if self.backoff_policy == Policy::Exponential {
            Nearest::new(base, 2.0, MAX_DELAY_MS, false, Strategy::Exponential)
        } else {
            Nearest::new(base, 2.0, base, false, Strategy::None)
        }
    }
}
