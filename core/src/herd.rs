//! The retry herd: what a downstream service sees when many jobs fail at
//! the same instant and every retry fails again.
//!
//! [`RetryPolicy::herd`] takes `jobs` jobs whose jitter keys are the job
//! ids `"1"`, `"2"`, … `"{jobs}"` ([`JitterSource::Key`], so the result is
//! the same in every runtime), all failing at instant 0. Each job is then
//! decided exactly as a worker decides it ([`RetryPolicy::decide`], attempt
//! 1, 2, …, each failing the moment it arrives) until the policy stops
//! retrying it or `retries` rounds have run. Round `r` is the set of
//! arrivals of retry `r`; for each round the result holds
//!
//! * a histogram of arrival times in buckets of `bucket_ms`, aligned on
//!   multiples of `bucket_ms` after the failure (bucket `i` counts the
//!   arrivals in `[start_ms + i·bucket_ms, start_ms + (i+1)·bucket_ms)`),
//! * the first and last arrival, and the most arrivals in any one-second
//!   window `[t, t + 1000 ms)` of that round alone;
//!
//! and for the whole herd, the most arrivals in any one-second window over
//! every round together, and where that window starts.
//!
//! Nothing is read from a clock or an entropy source: every input is an
//! argument, so the same call gives the same herd everywhere.
//!
//! ```
//! use ojs_retry::RetryPolicy;
//! let p = RetryPolicy::from_json(r#"{"max_attempts": 4, "jitter": false}"#)?;
//! let h = p.herd(1_000, 10, 1_000)?;
//! // Without jitter, every job comes back at the same instant: 1 s, 3 s, 7 s.
//! assert_eq!(h.rounds.len(), 3); // max_attempts 4: three retries
//! assert_eq!((h.rounds[1].first_ms, h.rounds[1].last_ms, h.rounds[1].counts.as_slice()), (3_000, 3_000, &[1_000][..]));
//! assert_eq!(h.peak_per_second, 1_000);
//! # Ok::<(), ojs_retry::Error>(())
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt::Write as _;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::decision::Action;
use crate::error::Error;
use crate::failure::Failure;
use crate::jitter::JitterSource;
use crate::policy::RetryPolicy;

/// The most jobs one herd holds.
///
/// ```
/// use ojs_retry::{RetryPolicy, herd::MAX_HERD_JOBS};
/// let e = RetryPolicy::default().herd(MAX_HERD_JOBS + 1, 1, 1_000).unwrap_err();
/// assert_eq!(e.field(), Some("jobs"));
/// ```
pub const MAX_HERD_JOBS: u64 = 1_000_000;

/// The most decisions one herd takes: `jobs × retries` (a call at the
/// limit takes well under a second natively; see `bench/RESULTS.md`).
///
/// ```
/// use ojs_retry::{RetryPolicy, herd::MAX_HERD_DECISIONS};
/// assert_eq!(MAX_HERD_DECISIONS, 1_000_000);
/// let e = RetryPolicy::default().herd(100_000, 11, 1_000).unwrap_err();
/// assert_eq!(e.field(), Some("retries"));
/// ```
pub const MAX_HERD_DECISIONS: u64 = 1_000_000;

/// The most rounds (`retries`) one herd runs: each round is a histogram of
/// its own.
///
/// ```
/// use ojs_retry::{RetryPolicy, herd::MAX_HERD_ROUNDS};
/// let e = RetryPolicy::default().herd(1, MAX_HERD_ROUNDS + 1, 1_000).unwrap_err();
/// assert_eq!(e.field(), Some("retries"));
/// ```
pub const MAX_HERD_ROUNDS: u64 = 1_000;

/// The most buckets in the histograms of all rounds together.
///
/// ```
/// use ojs_retry::{RetryPolicy, herd::MAX_HERD_BUCKETS};
/// // Retry 1 of the defaults spreads over [0.5 s, 1.5 s): 1 ms buckets fit.
/// assert!(RetryPolicy::default().herd(100, 1, 1).is_ok());
/// assert_eq!(MAX_HERD_BUCKETS, 1_000_000);
/// ```
pub const MAX_HERD_BUCKETS: u64 = 1_000_000;

/// The window of the peak rate: one second.
const SECOND_MS: u64 = 1_000;

/// A simulated herd ([`RetryPolicy::herd`]). Serialises with snake_case
/// keys, as every document of the engine.
///
/// ```
/// use ojs_retry::RetryPolicy;
/// let h = RetryPolicy::default().herd(10, 1, 1_000)?;
/// let json = serde_json::to_string(&h).unwrap();
/// assert!(json.starts_with(r#"{"jobs":10,"bucket_ms":1000,"peak_per_second":"#));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Herd {
    /// The number of jobs (keys `"1"` … `"{jobs}"`).
    pub jobs: u64,
    /// The width of every histogram bucket, in ms.
    pub bucket_ms: u64,
    /// The most retry arrivals in any window `[t, t + 1000 ms)`, all rounds
    /// together.
    pub peak_per_second: u64,
    /// Where that window starts, in ms after the failure (the earliest such
    /// window).
    pub peak_at_ms: u64,
    /// One entry per retry round that had any arrival, in order.
    pub rounds: Vec<HerdRound>,
}

/// One retry round of a [`Herd`]: the arrivals of retry `retry_number`.
///
/// ```
/// use ojs_retry::RetryPolicy;
/// let h = RetryPolicy::default().herd(10_000, 2, 100)?;
/// let r = &h.rounds[0];
/// assert_eq!(r.counts.iter().sum::<u64>(), 10_000);
/// assert_eq!(r.start_ms % 100, 0);
/// assert!(r.start_ms <= r.first_ms && r.first_ms <= r.last_ms);
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HerdRound {
    /// The retry number (1: the retry after the first failure).
    pub retry_number: u64,
    /// The jobs retried in this round (the sum of `counts`).
    pub jobs: u64,
    /// The earliest arrival, in ms after the failure.
    pub first_ms: u64,
    /// The latest arrival, in ms after the failure.
    pub last_ms: u64,
    /// The start of the first bucket: `first_ms` rounded down to a multiple
    /// of the herd's `bucket_ms`.
    pub start_ms: u64,
    /// Arrivals per bucket, from `start_ms` on; the last bucket holds
    /// `last_ms`.
    pub counts: Vec<u64>,
    /// The most arrivals of this round in any window `[t, t + 1000 ms)`.
    pub peak_per_second: u64,
}

impl RetryPolicy {
    /// Simulates `jobs` jobs failing at the same instant under this policy,
    /// for at most `retries` retry rounds, with histograms in buckets of
    /// `bucket_ms` (see the [module docs](crate::herd)).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: field `"jobs"` outside
    /// `1..=`[`MAX_HERD_JOBS`]; `"retries"` of 0 or with `jobs × retries`
    /// above [`MAX_HERD_DECISIONS`]; `"bucket_ms"` of 0, or so narrow that a
    /// round would need more than [`MAX_HERD_BUCKETS`] buckets (the message
    /// gives the narrowest width that fits).
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// let p = RetryPolicy::from_json(r#"{"max_attempts": 11}"#)?;
    /// let h = p.herd(5_000, 10, 1_000)?;
    /// assert_eq!(h.rounds.len(), 10);
    /// assert!(h.rounds.iter().all(|r| r.counts.iter().sum::<u64>() == 5_000));
    /// // Retry 1 spreads over [0.5 s, 1.5 s): one second holds the whole
    /// // herd. By retry 10, jitter has spread it over minutes.
    /// assert_eq!(h.rounds[0].peak_per_second, 5_000);
    /// assert!(h.rounds[9].peak_per_second < 500);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn herd(&self, jobs: u64, retries: u64, bucket_ms: u64) -> Result<Herd, Error> {
        check_args(jobs, retries, bucket_ms)?;
        let arrivals = self.arrivals(jobs, retries)?;
        let mut rounds = Vec::with_capacity(arrivals.len());
        let mut buckets_left = MAX_HERD_BUCKETS;
        for (n, times) in (1..).zip(&arrivals) {
            rounds.push(round(n, times, bucket_ms, &mut buckets_left)?);
        }
        let mut all: Vec<u64> = arrivals.into_iter().flatten().collect();
        all.sort_unstable();
        let (peak_per_second, peak_at_ms) = peak(&all);
        Ok(Herd {
            jobs,
            bucket_ms,
            peak_per_second,
            peak_at_ms,
            rounds,
        })
    }

    /// The arrival times of each round (each round's sorted), as the
    /// workers' decisions give them; rounds with no arrival left out.
    fn arrivals(&self, jobs: u64, retries: u64) -> Result<Vec<Vec<u64>>, Error> {
        let per_round = usize::try_from(jobs).unwrap_or(0);
        let mut rounds: Vec<Vec<u64>> = Vec::new();
        let mut id = String::new();
        for job in 1..=jobs {
            id.clear();
            // Writing to a String cannot fail.
            let _ = write!(id, "{job}");
            let mut now = 0;
            for (attempt, slot) in (1..=retries).zip(0_usize..) {
                let d = self.decide(&Failure::new(attempt), now, JitterSource::Key(&id))?;
                let Some(at) = d.next_retry_at.filter(|_| d.action == Action::Retry) else {
                    break;
                };
                if rounds.len() <= slot {
                    rounds.push(Vec::with_capacity(per_round));
                }
                if let Some(r) = rounds.get_mut(slot) {
                    r.push(at);
                }
                now = at;
            }
        }
        for r in &mut rounds {
            r.sort_unstable();
        }
        Ok(rounds)
    }
}

fn check_args(jobs: u64, retries: u64, bucket_ms: u64) -> Result<(), Error> {
    if jobs == 0 || jobs > MAX_HERD_JOBS {
        return Err(Error::arg(
            "jobs",
            format!("expected between 1 and {MAX_HERD_JOBS} jobs, found {jobs}"),
        ));
    }
    if retries == 0
        || retries > MAX_HERD_ROUNDS
        || jobs.saturating_mul(retries) > MAX_HERD_DECISIONS
    {
        let most = MAX_HERD_DECISIONS
            .checked_div(jobs)
            .unwrap_or(0)
            .min(MAX_HERD_ROUNDS);
        return Err(Error::arg(
            "retries",
            format!(
                "expected between 1 and {most} retries for {jobs} jobs (at most {MAX_HERD_ROUNDS} rounds and {MAX_HERD_DECISIONS} decisions), found {retries}"
            ),
        ));
    }
    if bucket_ms == 0 {
        return Err(Error::arg(
            "bucket_ms",
            "expected a bucket width of at least 1 ms, found 0",
        ));
    }
    Ok(())
}

/// Round `n`'s histogram and peak from its sorted, non-empty arrivals;
/// its buckets are taken from what the earlier rounds left.
fn round(
    n: u64,
    times: &[u64],
    bucket_ms: u64,
    buckets_left: &mut u64,
) -> Result<HerdRound, Error> {
    let first_ms = times.first().copied().unwrap_or(0);
    let last_ms = times.last().copied().unwrap_or(0);
    let start_ms = first_ms.saturating_sub(first_ms.checked_rem(bucket_ms).unwrap_or(0));
    let span = last_ms.saturating_sub(start_ms);
    let buckets = span.checked_div(bucket_ms).unwrap_or(0).saturating_add(1);
    let Some(left) = buckets_left.checked_sub(buckets) else {
        let narrowest = span
            .checked_div((*buckets_left).max(1))
            .unwrap_or(0)
            .saturating_add(1);
        return Err(Error::arg(
            "bucket_ms",
            format!(
                "retry {n} arrives over {span} ms: {bucket_ms} ms buckets would be {buckets}, more than the {buckets_left} left of {MAX_HERD_BUCKETS} for all rounds; expected a width of at least {narrowest} ms"
            ),
        ));
    };
    *buckets_left = left;
    let mut counts = vec![0_u64; usize::try_from(buckets).unwrap_or(0)];
    for t in times {
        let i = t
            .saturating_sub(start_ms)
            .checked_div(bucket_ms)
            .unwrap_or(0);
        if let Some(c) = usize::try_from(i).ok().and_then(|i| counts.get_mut(i)) {
            *c = c.saturating_add(1);
        }
    }
    Ok(HerdRound {
        retry_number: n,
        jobs: u64::try_from(times.len()).unwrap_or(u64::MAX),
        first_ms,
        last_ms,
        start_ms,
        counts,
        peak_per_second: peak(times).0,
    })
}

/// The most of the sorted `times` in any window `[t, t + 1000 ms)`, and
/// the earliest `t` (an arrival) where a window holds that many.
fn peak(times: &[u64]) -> (u64, u64) {
    let (mut best, mut at) = (0_usize, 0_u64);
    // `lo` is the first arrival less than a second before `t` (never past
    // `t` itself, so `lo <= i`).
    let mut lo = 0_usize;
    for (i, &t) in times.iter().enumerate() {
        while times
            .get(lo)
            .is_some_and(|&s| t.saturating_sub(s) >= SECOND_MS)
        {
            lo = lo.saturating_add(1);
        }
        let n = i.saturating_sub(lo).saturating_add(1);
        if n > best {
            best = n;
            at = times.get(lo).copied().unwrap_or(t);
        }
    }
    (u64::try_from(best).unwrap_or(u64::MAX), at)
}

impl Serialize for Herd {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let h = self;
        let mut st = s.serialize_struct("Herd", 5)?;
        st.serialize_field("jobs", &h.jobs)?;
        st.serialize_field("bucket_ms", &h.bucket_ms)?;
        st.serialize_field("peak_per_second", &h.peak_per_second)?;
        st.serialize_field("peak_at_ms", &h.peak_at_ms)?;
        st.serialize_field("rounds", &h.rounds)?;
        st.end()
    }
}

impl Serialize for HerdRound {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self;
        let mut st = s.serialize_struct("HerdRound", 7)?;
        st.serialize_field("retry_number", &r.retry_number)?;
        st.serialize_field("jobs", &r.jobs)?;
        st.serialize_field("first_ms", &r.first_ms)?;
        st.serialize_field("last_ms", &r.last_ms)?;
        st.serialize_field("start_ms", &r.start_ms)?;
        st.serialize_field("counts", &r.counts)?;
        st.serialize_field("peak_per_second", &r.peak_per_second)?;
        st.end()
    }
}

#[cfg(test)]
mod tests;
