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
//!    [`MAX_INSTANT_MS`]), so the job is never due
//!    before the delay has elapsed (RET-11).
//!
//! ```
//! use ojs_retry::{RetryPolicy, Failure, JitterSource, Action, Reason};
//! let p = RetryPolicy::from_json(r#"{"non_retryable_errors": ["auth.*"], "on_exhaustion": "dead_letter"}"#).unwrap();
//! let d = p.decide(&Failure::new(1).with_type("auth.forbidden"), 0, JitterSource::Uniform(0.5)).unwrap();
//! assert_eq!(d.action, Action::DeadLetter);
//! assert_eq!(d.reason, Reason::NonRetryable { pattern: "auth.*".into() });
//! let d = p.decide(&Failure::new(1).with_type("net.reset"), 1_000, JitterSource::Uniform(0.5)).unwrap();
//! assert_eq!((d.action, d.delay_ms, d.next_retry_at), (Action::Retry, Some(1_000), Some(2_000)));
//! ```

use alloc::borrow::ToOwned;
use alloc::string::String;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::error::{Error, quote};
use crate::jitter::JitterSource;
use crate::matching::first_match;
use crate::failure::Failure;
use crate::options::Case;
use crate::value::Value;
use crate::policy::{OnExhaustion, RetryPolicy};
use alloc::format;
use crate::time::{MAX_INSTANT_MS, check_instant};

/// A handler error response code (§7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandlerCode {
    /// Retry with the normal policy (the default).
    Retry,
    /// Discard now.
    Discard,
    /// Dead-letter now.
    DeadLetter,
    /// Permanent failure: discarded like `DISCARD`, reported distinctly.
    Fail,
}

impl HandlerCode {
    /// The wire name: `RETRY`, `DISCARD`, `DEAD_LETTER` or `FAIL`.
    ///
    /// ```
    /// assert_eq!(ojs_retry::HandlerCode::DeadLetter.as_str(), "DEAD_LETTER");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Retry => "RETRY",
            Self::Discard => "DISCARD",
            Self::DeadLetter => "DEAD_LETTER",
            Self::Fail => "FAIL",
        }
    }

    /// Parses a wire name (exact, upper case).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` with field `"code"`.
    ///
    /// ```
    /// use ojs_retry::HandlerCode;
    /// assert_eq!(HandlerCode::parse("FAIL").unwrap(), HandlerCode::Fail);
    /// assert!(HandlerCode::parse("fail").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Self, Error> {
        match s {
            "RETRY" => Ok(Self::Retry),
            "DISCARD" => Ok(Self::Discard),
            "DEAD_LETTER" => Ok(Self::DeadLetter),
            "FAIL" => Ok(Self::Fail),
            _ => Err(Error::arg(
                "code",
                format!("expected one of \"RETRY\", \"DISCARD\", \"DEAD_LETTER\", \"FAIL\", found {}", quote(s)),
            )),
        }
    }
}


/// What the queue should do with the job.
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

    fn terminal(on_exhaustion: OnExhaustion) -> Self {
        match on_exhaustion {
            OnExhaustion::Discard => Self::Discard,
            OnExhaustion::DeadLetter => Self::DeadLetter,
        }
    }
}

/// Why the decision was taken, for logs and metrics.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The handler's `DISCARD`, `DEAD_LETTER` or `FAIL` code decided.
    HandlerCode(HandlerCode),
    /// The error type matched this `non_retryable_errors` entry.
    NonRetryable {
        /// The entry that matched.
        pattern: String,
    },
    /// `max_attempts` was reached.
    Exhausted,
    /// The failure is retryable and attempts remain.
    Retryable,
}

impl Reason {
    /// `"handler_code"`, `"non_retryable"`, `"exhausted"` or `"retryable"`.
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
        }
    }
}

/// The answer to "this attempt failed: what now?".
///
/// Serialises (and crosses every binding) as an object with all keys
/// present, absent values as `null`:
/// `{"action","reason","handler_code","matched_pattern","attempt","timed_out","retry_number","delay_ms","next_retry_at"}`.
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
            Reason::HandlerCode(c) => format!("the handler returned {}, which takes precedence over the retry policy (spec §7.2)", c.as_str()),
            Reason::NonRetryable { pattern } => format!("its error type matches the non-retryable entry {} (spec §6.3), so it goes straight to the on_exhaustion outcome", quote(pattern)),
            Reason::Exhausted => "no attempts remain under max_attempts (spec §2.2)".to_owned(),
            Reason::Retryable => "the failure is retryable and attempts remain".to_owned(),
        };
        match (self.action, self.delay_ms, self.next_retry_at) {
            (Action::Retry, Some(delay), Some(at)) => format!("{}; {}. Retry {} (attempt {}) is scheduled after {} ({} ms), at {}.", what, why, self.retry_number.unwrap_or(self.attempt), self.attempt.saturating_add(1), crate::duration::format_ms(delay), delay, crate::time::format_ms(at)),
            (action, ..) => format!("{}; {}. The job is {}.", what, why, match action {
                    Action::DeadLetter => "moved to the dead letter queue",
                    _ => "discarded",
                }),
        }
    }
}

impl Serialize for Decision {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Decision", 9)?;
        st.serialize_field("action", self.action.as_str())?;
        st.serialize_field("reason", self.reason.as_str())?;
        st.serialize_field("handler_code", &self.handler_code.map(HandlerCode::as_str))?;
        let pattern = match &self.reason {
            Reason::NonRetryable { pattern } => Some(pattern.as_str()),
            _ => None,
        };
        st.serialize_field("matched_pattern", &pattern)?;
        st.serialize_field("attempt", &self.attempt)?;
        st.serialize_field("timed_out", &self.timed_out)?;
        st.serialize_field("retry_number", &self.retry_number)?;
        st.serialize_field("delay_ms", &self.delay_ms)?;
        st.serialize_field("next_retry_at", &self.next_retry_at)?;
        st.end()
    }
}

impl Decision {
    /// The decision as an object for a host: the keys of its JSON form in
    /// `case` (`delayMs`, `nextRetryAt` in [`Case::Camel`]).
    ///
    /// ```
    /// use ojs_retry::{Case, Failure, JitterSource, RetryPolicy};
    /// let d = RetryPolicy::default().decide(&Failure::new(1), 0, JitterSource::Uniform(0.5)).unwrap();
    /// let v = d.to_value(Case::Camel);
    /// assert_eq!(v.get("delayMs").and_then(|x| x.as_number()).map(|n| n.as_f64()), Some(1000.0));
    /// ```
    #[must_use]
    pub fn to_value(&self, case: Case) -> Value {
        crate::value::to_cased_value(self, case)
    }
}

impl RetryPolicy {
    /// Decides what happens after `failure`, at instant `now_ms` (epoch ms),
    /// drawing jitter from `jitter` (see the [module docs](crate::decision)
    /// for the order of the rules).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: field `"attempt"` (0 or above
    /// 2^53 − 1), `"code"` (a code on a timeout), `"now"` (past
    /// [`MAX_INSTANT_MS`]), `"u"` (a bad explicit sample).
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, Failure, HandlerCode, JitterSource, Action};
    /// let p = RetryPolicy::from_json(r#"{"on_exhaustion": "dead_letter"}"#).unwrap();
    /// // FAIL discards even when on_exhaustion is dead_letter (§7.2).
    /// let d = p.decide(&Failure::new(1).with_code(HandlerCode::Fail), 0, JitterSource::Uniform(0.5)).unwrap();
    /// assert_eq!(d.action, Action::Discard);
    /// ```
    pub fn decide(
        &self,
        failure: &Failure,
        now_ms: u64,
        jitter: JitterSource<'_>,
    ) -> Result<Decision, Error> {
        failure.check()?;
        check_instant("now", now_ms)?;
        jitter.check()?;
        let mut d = Decision {
            action: Action::Discard,
            reason: Reason::Retryable,
            handler_code: failure.code,
            attempt: failure.attempt,
            timed_out: failure.timed_out,
            retry_number: None,
            delay_ms: None,
            next_retry_at: None,
        };
        match failure.code {
            Some(code @ (HandlerCode::Discard | HandlerCode::Fail)) => {
                d.reason = Reason::HandlerCode(code);
                return Ok(d);
            }
            Some(HandlerCode::DeadLetter) => {
                d.action = Action::DeadLetter;
                d.reason = Reason::HandlerCode(HandlerCode::DeadLetter);
                return Ok(d);
            }
            Some(HandlerCode::Retry) | None => {}
        }
        if let Some(p) = self.preset_ref() {
            let error_type = if failure.timed_out {
                None
            } else {
                failure.error_type.as_deref()
            };
            if let Some((action, pattern)) = p.terminal(failure.attempt, error_type) {
                d.action = Action::terminal(action);
                d.reason = match pattern {
                    Some(pattern) => Reason::NonRetryable { pattern },
                    None => Reason::Exhausted,
                };
                return Ok(d);
            }
        }
        let terminal = Action::terminal(self.on_exhaustion());
        if self.preset_ref().is_none()
            && !failure.timed_out
            && let Some(t) = &failure.error_type
            && let Some(pattern) = first_match(t, self.non_retryable_errors())
        {
            d.action = terminal;
            d.reason = Reason::NonRetryable {
                pattern: pattern.to_owned(),
            };
            return Ok(d);
        }
        if self.preset_ref().is_none() && failure.attempt >= self.max_attempts().max(1) {
            d.action = terminal;
            d.reason = Reason::Exhausted;
            return Ok(d);
        }
        let n = failure.attempt;
        let delay = self.delay_for(n, &jitter)?;
        d.action = Action::Retry;
        d.retry_number = Some(n);
        d.delay_ms = Some(delay);
        d.next_retry_at = Some(now_ms.saturating_add(delay).min(MAX_INSTANT_MS));
        Ok(d)
    }
}
