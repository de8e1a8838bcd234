//! RQ: rq/rq `rq/job.py` (`Retry`, `Job.get_retry_interval`, `Job.retry`,
//! `Retry.get_interval`), `rq/worker/base.py`, 3.0.0.
//!
//! `Retry(max, interval)`: a job that raised takes
//! `intervals[max(len − retries_left, 0)]` (the list is aligned to the
//! *last* retries); a job that returns `Retry` takes
//! `intervals[min(len − 1, retries)]`. An exhausted job goes to the
//! FailedJobRegistry (dead_letter).

use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;
use crate::value::{Value, read_uint};

use super::math::{Stages, secs};
use super::read::{Reader, choice};
use super::system::{DEAD, Nearest, System, Terms};

choice! {
    /// Which of RQ's two retry paths the job takes.
    RetryRule {
        /// The job raised: `Job.retry` with `Retry.get_interval`.
        Raised = "raised",
        /// The job returned a `Retry`: `Job.get_retry_interval`.
        Returned = "returned",
    }
}

/// `interval`: seconds, or a non-empty list of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum Interval {
    /// The same interval for every retry.
    Seconds(u64),
    /// One interval per retry.
    List(Vec<u64>),
}

impl Interval {
    fn as_slice(&self) -> &[u64] {
        match self {
            Self::Seconds(s) => core::slice::from_ref(s),
            Self::List(list) => list,
        }
    }
}

/// `Retry(max=..., interval=...)` (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Options {
    interval: Interval,
    /// Retries.
    max: u64,
    rule: RetryRule,
    system: &'static str,
}

/// `interval`; an empty list is a fault (RQ's raised rule fails on it).
fn read_interval(r: &mut Reader<'_>) -> Interval {
    let expected = "expected a non-negative integer of seconds or a non-empty list of them";
    match r.get("interval") {
        None => Interval::Seconds(0),
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match read_uint(item) {
                    Ok(s) => out.push(s),
                    Err(m) => r.item_fault("interval", i, m),
                }
            }
            Interval::List(out)
        }
        Some(v) => read_uint(v).map_or_else(
            |_| {
                r.bad("interval", expected, v);
                Interval::Seconds(0)
            },
            Interval::Seconds,
        ),
    }
}

impl System for Options {
    const NAME: &'static str = "rq";
    const OPTIONS: &'static [&'static str] = &["max", "interval", "rule"];

    fn read(r: &mut Reader<'_>) -> Self {
        Self {
            max: r.uint("max", 1, 1, MAX_MS),
            interval: read_interval(r),
            rule: r.choice("rule"),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, _k: u64) -> Stages {
        let intervals = self.interval.as_slice();
        let c = n.saturating_sub(1);
        let len = intervals.len() as u128;
        let last = len.saturating_sub(1);
        let idx = match self.rule {
            RetryRule::Returned => u128::from(c).min(last),
            RetryRule::Raised => {
                // index = max(len − retries_left, 0), retries_left = max − c.
                let left = i128::from(self.max).saturating_sub(i128::from(c));
                let i = i128::try_from(len).unwrap_or(0).saturating_sub(left);
                u128::try_from(i.max(0)).unwrap_or(0).min(last)
            }
        };
        let s = usize::try_from(idx)
            .ok()
            .and_then(|i| intervals.get(i))
            .copied()
            .unwrap_or(0);
        Stages::fixed(secs(s))
    }

    fn uses_sample(&self) -> bool {
        false
    }

    fn terms(&self) -> Terms {
        Terms::new(Some(self.max), DEAD)
    }

    fn nearest(&self) -> Nearest {
        // Lists have no OJS form: the first interval, constant.
        let first = self.interval.as_slice().first().copied().unwrap_or(0);
        let ms = secs(first);
        Nearest::new(ms, 1.0, ms, false, Strategy::None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_interval_is_a_list_of_one() {
        assert_eq!(Interval::Seconds(5).as_slice(), &[5]);
        assert_eq!(Interval::List(alloc::vec![1, 2]).as_slice(), &[1, 2]);
    }
}
