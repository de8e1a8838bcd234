//! The backoff of a policy: one delay, a batch, the schedule table.

use alloc::format;
use alloc::vec::Vec;

use super::{MAX_SCHEDULE_ROWS, RetryPolicy};
use crate::backoff::ScheduleRow;
use crate::duration::MAX_MS;
use crate::error::Error;
use crate::jitter::{JitterSource, Sample};
use crate::options::uint_from_f64;

impl RetryPolicy {
    /// The delay in ms before retry `retry_number` (1-based; retry 1 follows
    /// the failure of attempt 1). See [`crate::backoff`] for every step.
    /// This is the backoff function alone: it does not look at
    /// `max_attempts` (use [`RetryPolicy::decide`] for that).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: field `"retry_number"` outside
    /// `1..=2^53−1`, or field `"u"` for an explicit sample outside `[0, 1)`.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let p = RetryPolicy::from_json(r#"{"jitter": false}"#).unwrap();
    /// assert_eq!(p.delay(10, JitterSource::Seed(1)).unwrap(), 300_000); // 512 s capped at PT5M
    /// ```
    pub fn delay(&self, retry_number: u64, jitter: JitterSource<'_>) -> Result<u64, Error> {
        check_retry_number(retry_number)?;
        self.delay_for(retry_number, &jitter)
    }

    /// Several delays with one jitter source, for batches: the source is
    /// checked, and a key hashed, once; then [`Delays::delay`] gives each
    /// retry's delay, equal to [`RetryPolicy::delay`] with that source.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`, field `"u"`, for an explicit sample
    /// outside `[0, 1)` — here, before any retry number is looked at (a
    /// single [`RetryPolicy::delay`] checks the retry number first).
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let p = RetryPolicy::from_json(r#"{"initial_interval": "PT1S"}"#).unwrap();
    /// let d = p.delays_with(JitterSource::Key("job-8f3a")).unwrap();
    /// for n in 1..=25 {
    ///     assert_eq!(d.delay(n).unwrap(), p.delay(n, JitterSource::Key("job-8f3a")).unwrap());
    /// }
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn delays_with<'p>(&'p self, jitter: JitterSource<'p>) -> Result<Delays<'p>, Error> {
        let jitter = jitter.hashed()?;
        let draw = if self.preset.is_some() {
            Draw::Each(jitter)
        } else if !self.backoff.uses_sample() {
            jitter.check()?;
            Draw::Fixed(Sample::MIN)
        } else {
            match jitter {
                JitterSource::Uniform(u) => Draw::Fixed(Sample::from_unit(u)?),
                JitterSource::Seed(seed) => Draw::Stream(seed),
                // Hashed above: a key's stream is its hash's.
                JitterSource::Key(key) => Draw::Stream(crate::jitter::fnv1a64(key.as_bytes())),
                #[cfg(feature = "std")]
                JitterSource::Entropy => Draw::Each(jitter),
            }
        };
        Ok(Delays { policy: self, draw })
    }

    /// The delays of a batch in place: each slot holds a retry number (as a
    /// double, as hosts with only doubles hold it) and receives its delay in
    /// ms, as [`Delays::fill`] gives them.
    ///
    /// # Errors
    ///
    /// As [`Delays::fill`].
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let mut slots = [1.0, 2.0, 3.0];
    /// RetryPolicy::default().delays_into(&mut slots, JitterSource::Uniform(0.5))?;
    /// assert_eq!(slots, [1_000.0, 2_000.0, 4_000.0]);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn delays_into(&self, slots: &mut [f64], jitter: JitterSource<'_>) -> Result<(), Error> {
        self.delays_with(jitter)?.fill(slots)
    }

    /// The delay of retry `n` (already checked), from the preset's formula
    /// when there is one.
    pub(crate) fn delay_for(&self, n: u64, jitter: &JitterSource<'_>) -> Result<u64, Error> {
        if let Some(p) = &self.preset {
            return p.delay(n, jitter);
        }
        let sample = self.sample(n, jitter)?;
        Ok(self.backoff.delay_capped(n, sample, &self.capped))
    }

    /// The schedule of retries `1..=count`: raw, capped, the jitter range
    /// and, when a source is given, the drawn delay and the running total.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: field `"count"` above
    /// [`MAX_SCHEDULE_ROWS`], or a bad explicit sample.
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// let p = RetryPolicy::from_json(r#"{"initial_interval":"PT10S"}"#).unwrap();
    /// let rows = p.schedule(6, None).unwrap();
    /// // §5.3, retry 6: capped at 300 s, jitter range [150 s, 300 s].
    /// assert_eq!((rows[5].raw_ms, rows[5].capped_ms, rows[5].min_ms, rows[5].max_ms), (320_000, 300_000, 150_000, 300_000));
    /// ```
    pub fn schedule(
        &self,
        count: u64,
        jitter: Option<JitterSource<'_>>,
    ) -> Result<Vec<ScheduleRow>, Error> {
        if count > MAX_SCHEDULE_ROWS {
            return Err(Error::arg(
                "count",
                format!(
                    "expected at most {} rows, found {}",
                    MAX_SCHEDULE_ROWS, count
                ),
            ));
        }
        // A key is hashed once for all the rows, not once per row.
        let jitter = jitter.map(JitterSource::hashed).transpose()?;
        if let Some(p) = &self.preset {
            return p.schedule(count, jitter.as_ref());
        }
        let mut rows = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut total: u64 = 0;
        for n in 1..=count {
            let sample = match &jitter {
                Some(j) => Some(self.sample(n, j)?),
                None => None,
            };
            let mut row = self.backoff.row(n, sample);
            row.accumulate(&mut total);
            rows.push(row);
        }
        Ok(rows)
    }

    /// The sample for retry `n`, drawing only when jitter is on.
    pub(crate) fn sample(&self, n: u64, jitter: &JitterSource<'_>) -> Result<Sample, Error> {
        if self.backoff.uses_sample() {
            jitter.sample(n)
        } else {
            jitter.check().map(|()| Sample::MIN)
        }
    }
}

/// Delays of one policy with one jitter source
/// ([`RetryPolicy::delays_with`]).
///
/// ```
/// use ojs_retry::{JitterSource, RetryPolicy};
/// let p = RetryPolicy::default();
/// let d = p.delays_with(JitterSource::Key("job-1"))?; // the key is hashed once
/// assert_eq!(d.delay(2)?, p.delay(2, JitterSource::Key("job-1"))?);
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Delays<'p> {
    policy: &'p RetryPolicy,
    draw: Draw<'p>,
}

/// Where each retry's sample comes from, with the per-source work done.
#[derive(Debug, Clone, Copy)]
enum Draw<'p> {
    /// The same sample for every retry (an explicit `u`, or no jitter).
    Fixed(Sample),
    /// SplitMix64 from this seed (a seed, or a key's hash).
    Stream(u64),
    /// The source itself, drawn per retry (presets, OS entropy).
    Each(JitterSource<'p>),
}

impl Delays<'_> {
    /// The delay in ms before retry `retry_number`, as
    /// [`RetryPolicy::delay`] gives it.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: field `"retry_number"` outside
    /// `1..=2^53−1` (or what the source reports when it is drawn per retry).
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let p = RetryPolicy::from_json(r#"{"jitter": false}"#).unwrap();
    /// let d = p.delays_with(JitterSource::Seed(1)).unwrap();
    /// assert_eq!(d.delay(10).unwrap(), 300_000);
    /// assert!(d.delay(0).is_err());
    /// ```
    pub fn delay(&self, retry_number: u64) -> Result<u64, Error> {
        check_retry_number(retry_number)?;
        let p = self.policy;
        let sample = match self.draw {
            Draw::Fixed(s) => s,
            Draw::Stream(seed) => Sample::from_u64(crate::jitter::splitmix64(seed, retry_number)),
            Draw::Each(ref j) => return p.delay_for(retry_number, j),
        };
        Ok(p.backoff.delay_capped(retry_number, sample, &p.capped))
    }

    /// The delays of many retries in place: each slot holds a retry number
    /// as a double (as [`crate::uint_from_f64`] takes it) and is overwritten with that retry's delay in ms (exact:
    /// at most 2^53 − 1). Each answer equals [`Delays::delay`]'s.
    ///
    /// # Errors
    ///
    /// The first slot that is not a valid retry number stops the batch with
    /// the error [`crate::uint_from_f64`] or [`Delays::delay`] gives
    /// for it (field `"retry_number"`); the slots before it hold their
    /// delays, it and the later ones are unchanged.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let p = RetryPolicy::default();
    /// let mut slots = [1.0, 2.0, 10.0];
    /// p.delays_with(JitterSource::Uniform(0.5))?.fill(&mut slots)?;
    /// assert_eq!(slots, [1_000.0, 2_000.0, 300_000.0]);
    /// let mut bad = [1.0, 0.5, 3.0];
    /// let e = p.delays_with(JitterSource::Uniform(0.5))?.fill(&mut bad).unwrap_err();
    /// assert_eq!((e.field(), bad), (Some("retry_number"), [1_000.0, 0.5, 3.0]));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn fill(&self, slots: &mut [f64]) -> Result<(), Error> {
        for slot in slots {
            let n = uint_from_f64("retry_number", *slot)?;
            let d = self.delay(n)?;
            // d ≤ 2^53 − 1: exact as a double.
            #[allow(clippy::cast_precision_loss)]
            let d = d as f64;
            *slot = d;
        }
        Ok(())
    }
}

pub(crate) fn check_retry_number(n: u64) -> Result<(), Error> {
    if n == 0 || n > MAX_MS {
        return Err(bad_retry_number(n));
    }
    Ok(())
}

fn bad_retry_number(n: u64) -> Error {
    Error::arg(
        "retry_number",
        format!(
            "expected a retry number between 1 and {}, found {}",
            MAX_MS, n
        ),
    )
}
