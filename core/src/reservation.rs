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
///
/// ```
/// use ojs_retry::Reservation;
/// let r = Reservation::new(2, 1_000, 30_000)?;
/// assert_eq!((r.attempt(), r.deadline()), (2, 31_000));
/// let json = serde_json::to_string(&r).unwrap();
/// assert_eq!(json, r#"{"attempt":2,"visibility_timeout_ms":30000,"deadline":31000}"#);
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    attempt: u64,
    visibility_timeout_ms: u64,
    deadline: u64,
}

/// The answer to a heartbeat.
///
/// ```
/// use ojs_retry::{Heartbeat, Reservation};
/// let mut r = Reservation::new(1, 0, 10_000)?;
/// assert_eq!(r.heartbeat(5_000)?, Heartbeat::Extended { deadline: 15_000 });
/// assert_eq!(r.heartbeat(15_000)?, Heartbeat::Expired);
/// # Ok::<(), ojs_retry::Error>(())
/// ```
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
    ///
    /// ```
    /// use ojs_retry::{MAX_INSTANT_MS, Reservation};
    /// assert_eq!(Reservation::new(1, 0, 30_000)?.deadline(), 30_000);
    /// assert_eq!(Reservation::new(1, MAX_INSTANT_MS, 30_000)?.deadline(), MAX_INSTANT_MS); // saturates
    /// assert_eq!(Reservation::new(0, 0, 30_000).unwrap_err().field(), Some("attempt"));
    /// assert_eq!(Reservation::new(1, 0, 0).unwrap_err().field(), Some("visibility_timeout_ms"));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
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
    ///
    /// ```
    /// assert_eq!(ojs_retry::Reservation::new(3, 0, 1_000)?.attempt(), 3);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn attempt(&self) -> u64 {
        self.attempt
    }
    /// The visibility timeout in ms.
    ///
    /// ```
    /// let mut r = ojs_retry::Reservation::new(1, 0, 1_000)?;
    /// r.heartbeat(500)?; // moves the deadline, not the timeout
    /// assert_eq!(r.visibility_timeout_ms(), 1_000);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn visibility_timeout_ms(&self) -> u64 {
        self.visibility_timeout_ms
    }
    /// The current deadline, epoch ms.
    ///
    /// ```
    /// let mut r = ojs_retry::Reservation::new(1, 0, 1_000)?;
    /// r.heartbeat(600)?;
    /// assert_eq!(r.deadline(), 1_600);
    /// r.heartbeat(100)?; // a skewed, earlier heartbeat never shortens it
    /// assert_eq!(r.deadline(), 1_600);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
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
    ///
    /// ```
    /// use ojs_retry::{Heartbeat, MAX_INSTANT_MS, Reservation};
    /// let mut r = Reservation::new(1, 0, 1_000)?;
    /// assert_eq!(r.heartbeat(999)?, Heartbeat::Extended { deadline: 1_999 });
    /// assert_eq!(r.heartbeat(MAX_INSTANT_MS + 1).unwrap_err().field(), Some("now"));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
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
    ///
    /// ```
    /// let r = ojs_retry::Reservation::new(1, 0, 1_000)?;
    /// assert!(!r.is_expired(999)?);
    /// assert!(r.is_expired(1_000)?); // the deadline itself is expired
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
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
    ///
    /// ```
    /// use ojs_retry::{Failure, Reservation};
    /// let r = Reservation::new(2, 0, 1_000)?;
    /// assert_eq!(r.expiry(999)?, None);
    /// assert_eq!(r.expiry(1_000)?, Some(Failure::timeout(2)));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
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
