//! Deciding what happens after a failure (spec §6.3, §7, §9.2; RET-01,
//! RET-07, RET-08, RET-11, RET-12, RET-17).
//!
//! The order, for a failure of attempt `a` (1-based):
//!
//! 1. A handler code decides first (§7.2): `DISCARD` and `FAIL` discard,
//!    `DEAD_LETTER` dead-letters, whatever `max_attempts` and
//!    `on_exhaustion` say. `RETRY` (or no code) goes on.
//! 2. An error type matching `non_retryable_errors` goes to the
//!    `on_exhaustion` outcome. A timed-out reservation is never matched
//!    (§9.2: timeouts are always retryable unless attempts are exhausted).
//! 3. If `a ≥ max(max_attempts, 1)`, attempts are exhausted: the
//!    `on_exhaustion` outcome. `max_attempts` 0 and 1 both make the first
//!    failure terminal; an attempt past `max_attempts` is exhausted too.
//! 4. Otherwise retry number `n = a` with the backoff delay, and
//!    `next_retry_at = now + delay` (saturating at
//!    [`MAX_INSTANT_MS`](crate::MAX_INSTANT_MS)), so the job is never due
//!    before the delay has elapsed (RET-11).
//!
//! ```
//! use ojs_retry::{RetryPolicy, Failure, JitterSource, Action, Reason};
//! let p = RetryPolicy::from_json(r#"{"non_retryable_errors": ["auth.*"], "on_exhaustion": "dead_letter"}"#).unwrap();
//! let d = p.decide(&Failure::new(1).with_type("auth.forbidden"), 0, JitterSource::Uniform(0.5)).unwrap();
//! assert_eq!(d.action, Action::DeadLetter);
//! assert_eq!(d.reason, Reason::NonRetryable { pattern: Some("auth.*".into()) });
//! let d = p.decide(&Failure::new(1).with_type("net.reset"), 1_000, JitterSource::Uniform(0.5)).unwrap();
//! assert_eq!((d.action, d.delay_ms, d.next_retry_at), (Action::Retry, Some(1_000), Some(2_000)));
//! ```

use alloc::borrow::ToOwned;
use alloc::string::String;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::error::quote;
use crate::failure::HandlerCode;
use alloc::format;

/// What the queue should do with the job.
///
/// ```
/// use ojs_retry::{Action, Failure, JitterSource, RetryPolicy};
/// // The default policy allows 3 attempts, then discards.
/// let d = RetryPolicy::default().decide(&Failure::new(3), 0, JitterSource::Uniform(0.5))?;
/// assert_eq!((d.action, d.delay_ms), (Action::Discard, None));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Schedule the next attempt after `delay_ms`.
    Retry,
    /// Discard the job.
    Discard,
    /// Move the job to the dead letter queue.
    DeadLetter,
}

impl Action {
    /// `"retry"`, `"discard"` or `"dead_letter"`.
    ///
    /// ```
    /// assert_eq!(ojs_retry::Action::DeadLetter.as_str(), "dead_letter");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Retry => "retry",
            Self::Discard => "discard",
            Self::DeadLetter => "dead_letter",
        }
    }
}

/// Why the decision was taken, for logs and metrics.
///
/// ```
/// use ojs_retry::{Failure, HandlerCode, JitterSource, Reason, RetryPolicy};
/// let f = Failure::new(1).with_code(HandlerCode::Fail);
/// let d = RetryPolicy::default().decide(&f, 0, JitterSource::Uniform(0.5))?;
/// assert_eq!(d.reason, Reason::HandlerCode(HandlerCode::Fail));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The handler's `DISCARD`, `DEAD_LETTER` or `FAIL` code decided.
    HandlerCode(HandlerCode),
    /// The error type matched this `non_retryable_errors` entry, or (no
    /// pattern) a preset whose system retries only the error types it lists
    /// (Celery's `autoretry_for`) was given a type it does not list.
    NonRetryable {
        /// The entry that matched; `None` for a type outside the list of
        /// retried types.
        pattern: Option<String>,
    },
    /// `max_attempts` was reached.
    Exhausted,
    /// The failure is retryable and attempts remain.
    Retryable,
    /// The job's policy (or the failure) was refused at failure time, so
    /// the [failure transaction](crate::transaction) dead-lettered the job.
    PolicyInvalid {
        /// The refusal's code.
        code: crate::ErrorCode,
        /// The refusal's first field, if any.
        field: Option<String>,
    },
}

impl Reason {
    /// `"handler_code"`, `"non_retryable"`, `"exhausted"`, `"retryable"` or
    /// `"policy_invalid"`.
    ///
    /// ```
    /// assert_eq!(ojs_retry::Reason::Exhausted.as_str(), "exhausted");
    /// ```
    #[must_use]
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::HandlerCode(_) => "handler_code",
            Self::NonRetryable { .. } => "non_retryable",
            Self::Exhausted => "exhausted",
            Self::Retryable => "retryable",
            Self::PolicyInvalid { .. } => "policy_invalid",
        }
    }
}

/// The answer to "this attempt failed: what now?".
///
/// Serialises (and crosses every binding) as an object with all keys
/// present, absent values as `null`:
/// `{"action","reason","handler_code","matched_pattern","attempt","timed_out","retry_number","delay_ms","next_retry_at"}`.
///
/// ```
/// use ojs_retry::{Failure, JitterSource, RetryPolicy};
/// let d = RetryPolicy::default().decide(&Failure::new(2), 10_000, JitterSource::Uniform(0.5))?;
/// assert_eq!((d.retry_number, d.delay_ms, d.next_retry_at), (Some(2), Some(2_000), Some(12_000)));
/// let json = serde_json::to_string(&d).unwrap();
/// assert!(json.starts_with(r#"{"action":"retry","reason":"retryable","handler_code":null"#));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// What to do.
    pub action: Action,
    /// Why.
    pub reason: Reason,
    /// The handler code the failure carried, if any.
    pub handler_code: Option<HandlerCode>,
    /// The attempt that failed.
    pub attempt: u64,
    /// Whether the failure was an expired reservation.
    pub timed_out: bool,
    /// The retry number (`= attempt`) when retrying.
    pub retry_number: Option<u64>,
    /// The delay before the next attempt when retrying.
    pub delay_ms: Option<u64>,
    /// `now + delay_ms` (epoch ms) when retrying.
    pub next_retry_at: Option<u64>,
}

impl Decision {
    /// A one-paragraph, human-readable explanation.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, Failure, JitterSource};
    /// let d = RetryPolicy::default().decide(&Failure::new(3), 0, JitterSource::Uniform(0.0)).unwrap();
    /// assert!(d.explain().starts_with("Attempt 3 failed"));
    /// ```
    #[must_use]
    pub fn explain(&self) -> String {
        let what = if self.timed_out {
            format!("Attempt {} failed: its reservation timed out", self.attempt)
        } else {
            format!("Attempt {} failed", self.attempt)
        };
        let why = match &self.reason {
            Reason::HandlerCode(c) => format!(
                "the handler returned {}, which takes precedence over the retry policy (spec §7.2)",
                c.as_str()
            ),
            Reason::NonRetryable {
                pattern: Some(pattern),
            } => format!(
                "its error type matches the non-retryable entry {} (spec §6.3), so it goes straight to the on_exhaustion outcome",
                quote(pattern)
            ),
            Reason::NonRetryable { pattern: None } => "its error type is none of the types the policy's system retries (Celery's autoretry_for), so the job is not retried".to_owned(),
            Reason::Exhausted => "no attempts remain under max_attempts (spec §2.2)".to_owned(),
            Reason::Retryable => "the failure is retryable and attempts remain".to_owned(),
            Reason::PolicyInvalid { code, field } => format!(
                "the engine refused the job's policy or failure ({code}{}), so the job cannot be decided by its policy",
                field
                    .as_deref()
                    .map(|f| format!(", field {f}"))
                    .unwrap_or_default()
            ),
        };
        match (self.action, self.delay_ms, self.next_retry_at) {
            (Action::Retry, Some(delay), Some(at)) => format!(
                "{}; {}. Retry {} (attempt {}) is scheduled after {} ({} ms), at {}.",
                what,
                why,
                self.retry_number.unwrap_or(self.attempt),
                self.attempt.saturating_add(1),
                crate::duration::format_ms(delay),
                delay,
                crate::time::format_ms(at)
            ),
            (action, ..) => format!(
                "{}; {}. The job is {}.",
                what,
                why,
                match action {
                    Action::DeadLetter => "moved to the dead letter queue",
                    _ => "discarded",
                }
            ),
        }
    }
}

impl Serialize for Decision {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self;
        let pattern = match &d.reason {
            Reason::NonRetryable { pattern } => pattern.as_deref(),
            _ => None,
        };
        let mut st = s.serialize_struct("Decision", 9)?;
        st.serialize_field("action", d.action.as_str())?;
        st.serialize_field("reason", d.reason.as_str())?;
        st.serialize_field("handler_code", &d.handler_code.map(HandlerCode::as_str))?;
        st.serialize_field("matched_pattern", &pattern)?;
        st.serialize_field("attempt", &d.attempt)?;
        st.serialize_field("timed_out", &d.timed_out)?;
        st.serialize_field("retry_number", &d.retry_number)?;
        st.serialize_field("delay_ms", &d.delay_ms)?;
        st.serialize_field("next_retry_at", &d.next_retry_at)?;
        st.end()
    }
}
