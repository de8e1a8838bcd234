//! Reservations (spec §9.2, §9.3; RET-12, RET-13): a worker owns a job until
//! a visibility-timeout deadline; a heartbeat inside the window extends it;
//! once `now` reaches the deadline the attempt counts as a failure.
//!
//! ```
//! use ojs_retry::{Reservation, Heartbeat};
//! let mut r = Reservation::new(1, 0, 30_000).unwrap();
//! assert_eq!(r.heartbeat(20_000).unwrap(), Heartbeat::Extended { deadline: 50_000 });
//! assert!(!r.is_expired(49_999).unwrap());
//! assert!(r.is_expired(50_000).unwrap());
//! assert_eq!(r.heartbeat(50_000).unwrap(), Heartbeat::Expired);
//! assert!(r.expiry(50_000).unwrap().unwrap().timed_out);
//! ```

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::duration::MAX_MS;
use crate::error::Error;
use crate::failure::Failure;
use crate::time::{MAX_INSTANT_MS, check_instant};
use alloc::format;

/// A worker's hold on one attempt of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    attempt: u64,
    visibility_timeout_ms: u64,
    deadline: u64,
}

/// The answer to a heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heartbeat {
    /// The heartbeat came inside the window: the deadline moved to
    /// `now + visibility_timeout`.
    Extended {
        /// The new deadline, epoch ms.
        deadline: u64,
    },
    /// The deadline had already passed: the reservation stays expired and
    /// the attempt is a failure (RET-12).
    Expired,
}

impl Reservation {
    /// Reserves `attempt` at `now_ms` for `visibility_timeout_ms`. The
    /// deadline saturates at [`MAX_INSTANT_MS`].
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: field `"attempt"` (0 or too large),
    /// `"now"`, or `"visibility_timeout_ms"` (0 or above 2^53 − 1).
    pub fn new(attempt: u64, now_ms: u64, visibility_timeout_ms: u64) -> Result<Self, Error> {
        Failure::new(attempt).check()?;
        check_instant("now", now_ms)?;
        if visibility_timeout_ms == 0 || visibility_timeout_ms > MAX_MS {
            return Err(Error::arg(
                "visibility_timeout_ms",
                format!(
                    "expected a timeout between 1 and {} ms, found {}",
                    MAX_MS, visibility_timeout_ms
                ),
            ));
        }
        Ok(Self {
            attempt,
            visibility_timeout_ms,
            deadline: deadline(now_ms, visibility_timeout_ms),
        })
    }

    /// The reserved attempt.
    #[must_use]
    pub fn attempt(&self) -> u64 {
        self.attempt
    }
    /// The visibility timeout in ms.
    #[must_use]
    pub fn visibility_timeout_ms(&self) -> u64 {
        self.visibility_timeout_ms
    }
    /// The current deadline, epoch ms.
    #[must_use]
    pub fn deadline(&self) -> u64 {
        self.deadline
    }

    /// A heartbeat at `now_ms`: extends the reservation when it has not yet
    /// expired (RET-13). A heartbeat from before the last one's instant
    /// (clock skew) never shortens the deadline.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` for a bad `now`.
    pub fn heartbeat(&mut self, now_ms: u64) -> Result<Heartbeat, Error> {
        if self.is_expired(now_ms)? {
            return Ok(Heartbeat::Expired);
        }
        self.deadline = self
            .deadline
            .max(deadline(now_ms, self.visibility_timeout_ms));
        Ok(Heartbeat::Extended {
            deadline: self.deadline,
        })
    }

    /// Whether the reservation has expired at `now_ms` (`now ≥ deadline`).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` for a bad `now`.
    pub fn is_expired(&self, now_ms: u64) -> Result<bool, Error> {
        check_instant("now", now_ms)?;
        Ok(now_ms >= self.deadline)
    }

    /// The failure to feed to [`decide`](crate::RetryPolicy::decide) when
    /// the reservation has expired at `now_ms`, else `None`.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` for a bad `now`.
    pub fn expiry(&self, now_ms: u64) -> Result<Option<Failure>, Error> {
        Ok(self
            .is_expired(now_ms)?
            .then(|| Failure::timeout(self.attempt)))
    }
}

fn deadline(now: u64, timeout: u64) -> u64 {
    now.saturating_add(timeout).min(MAX_INSTANT_MS)
}

impl Serialize for Reservation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Reservation", 3)?;
        st.serialize_field("attempt", &self.attempt)?;
        st.serialize_field("visibility_timeout_ms", &self.visibility_timeout_ms)?;
        st.serialize_field("deadline", &self.deadline)?;
        st.end()
    }
}
