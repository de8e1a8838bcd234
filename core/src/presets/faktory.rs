//! Faktory: contribsys/faktory `manager/retry.go` (`nextRetry`, `Fail`),
//! v1.9.4.
//!
//! Sidekiq's `c⁴ + 15` s with `rand.Intn(30) * (c + 1)` s of jitter.
//! `retry: 0` is "completely ephemeral" (discarded at once), `retry: -1`
//! sends the job to the dead set at once.

use serde::Serialize;

use crate::value::read_uint;

use super::math::Stages;
use super::read::Reader;
use super::sidekiq::{Version, nearest_quartic, quartic};
use super::system::{DEAD, GONE, Nearest, System, Terms};

/// A job's `retry` (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Options {
    /// `-1`, `0` or a number of retries.
    retry: i64,
    system: &'static str,
}

/// `retry`: an integer, `-1` included (the dead set at once).
fn read_retry(r: &mut Reader<'_>) -> i64 {
    let Some(v) = r.get("retry") else {
        return 25;
    };
    match read_uint(v) {
        // At most 2^53 - 1: exact.
        Ok(n) => i64::try_from(n).unwrap_or(i64::MAX),
        // `-1`, `-1.0`, `-1e0`: the one negative integer allowed.
        Err(_) if v.as_f64() == Some(-1.0) => -1,
        Err(_) => {
            r.bad(
                "retry",
                "expected an integer between -1 and 9007199254740991",
                v,
            );
            25
        }
    }
}

impl System for Options {
    const NAME: &'static str = "faktory";
    const OPTIONS: &'static [&'static str] = &["retry"];

    fn read(r: &mut Reader<'_>) -> Self {
        Self {
            retry: read_retry(r),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        // `rand.Intn(30) * (count + 1)`: Sidekiq 7's shape.
        quartic(Version::V7, 30, n, k)
    }

    fn uses_sample(&self) -> bool {
        true
    }

    fn terms(&self) -> Terms {
        match self.retry {
            0 => Terms::new(Some(0), GONE),
            n if n < 0 => Terms::new(Some(0), DEAD),
            n => Terms::new(Some(n.unsigned_abs()), DEAD),
        }
    }

    fn nearest(&self) -> Nearest {
        nearest_quartic()
    }
}
