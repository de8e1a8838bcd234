//! Per-job retry state (spec §10, RET-14, RET-15): the attempt that last
//! ran, a bounded error history and `next_retry_at`, serialised in the §10
//! JSON shape with RFC 3339 UTC timestamps.
//!
//! `attempt` is the attempt that last ran (0 before the first): after three
//! failures with a retry pending it is 3, as the Open Job Spec conformance
//! suite asserts (level 1, L1-RTR-013); the attempt to run next is
//! [`RetryState::next_attempt`].
//!
//! ```
//! use ojs_retry::{RetryPolicy, RetryState, Failure, JitterSource, Action};
//! let policy = RetryPolicy::from_json(r#"{"max_attempts": 2, "jitter": false}"#).unwrap();
//! let mut state = RetryState::new();
//! let now = 1_770_892_265_000; // 2026-02-12T10:31:05Z
//! let failure = Failure::new(state.next_attempt()).with_type("net.reset").with_message("peer reset");
//! let d = state.record_failure(&policy, &failure, now, JitterSource::Uniform(0.5)).unwrap();
//! assert_eq!(d.action, Action::Retry);
//! assert_eq!((state.attempt(), state.next_attempt()), (1, 2));
//! assert_eq!(
//!     state.to_json(),
//!     r#"{"attempt":1,"errors":[{"attempt":1,"type":"net.reset","message":"peer reset","code":"RETRY","timestamp":"2026-02-12T10:31:05.000Z"}],"next_retry_at":"2026-02-12T10:31:06.000Z","terminal":null}"#
//! );
//! ```

use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::decision::{Action, Decision};
use crate::error::{Error, ErrorCode, Faults};
use crate::failure::Failure;
use crate::failure::HandlerCode;
use crate::jitter::JitterSource;
use crate::policy::RetryPolicy;
use crate::time;
use crate::value::Value;
use read::read_state;

mod read;

/// The smallest error-history bound accepted (RET-15).
///
/// ```
/// use ojs_retry::{RetryState, state::MIN_HISTORY};
/// assert_eq!(MIN_HISTORY, 10);
/// assert_eq!(RetryState::new().history_limit(), MIN_HISTORY);
/// assert!(RetryState::new().with_history_limit(MIN_HISTORY - 1).is_err());
/// ```
pub const MIN_HISTORY: usize = 10;

/// The error type recorded for an expired reservation with no type of its
/// own.
///
/// ```
/// use ojs_retry::{Failure, JitterSource, RetryPolicy, RetryState, state::TIMEOUT_ERROR_TYPE};
/// let mut s = RetryState::new();
/// s.record_failure(&RetryPolicy::default(), &Failure::timeout(1), 0, JitterSource::Uniform(0.5))?;
/// assert_eq!(s.errors().next().map(|e| e.error_type.as_str()), Some(TIMEOUT_ERROR_TYPE));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
pub const TIMEOUT_ERROR_TYPE: &str = "reservation.timeout";

/// The error type recorded for a failure that carries none.
///
/// ```
/// use ojs_retry::{Failure, JitterSource, RetryPolicy, RetryState, state::UNKNOWN_ERROR_TYPE};
/// let mut s = RetryState::new();
/// s.record_failure(&RetryPolicy::default(), &Failure::new(1), 0, JitterSource::Uniform(0.5))?;
/// assert_eq!(s.errors().next().map(|e| e.error_type.as_str()), Some(UNKNOWN_ERROR_TYPE));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
pub const UNKNOWN_ERROR_TYPE: &str = "unknown";

/// One entry of the error history (§10.1).
///
/// ```
/// use ojs_retry::{Failure, HandlerCode, JitterSource, RetryPolicy, RetryState};
/// let mut s = RetryState::new();
/// s.record_failure(&RetryPolicy::default(), &Failure::new(1).with_type("net.reset"), 5_000, JitterSource::Uniform(0.5))?;
/// let r = s.errors().next().unwrap();
/// assert_eq!((r.attempt, r.error_type.as_str(), r.code, r.timestamp_ms), (1, "net.reset", HandlerCode::Retry, 5_000));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorRecord {
    /// The attempt that failed.
    pub attempt: u64,
    /// The error type ([`TIMEOUT_ERROR_TYPE`] for an expired reservation,
    /// [`UNKNOWN_ERROR_TYPE`] when the failure had none).
    pub error_type: String,
    /// The message (`""` when the failure had none).
    pub message: String,
    /// The handler code (`RETRY` when the handler gave none).
    pub code: HandlerCode,
    /// When the failure was recorded, epoch ms.
    pub timestamp_ms: u64,
    /// Structured details, if any.
    pub details: Option<Value>,
}

/// A job's retry state.
///
/// Equal states show the same records: the history never holds more than
/// its limit, in memory or in JSON.
///
/// ```
/// use ojs_retry::{Action, Failure, JitterSource, RetryPolicy, RetryState};
/// let p = RetryPolicy::from_json(r#"{"max_attempts": 1}"#)?;
/// let mut s = RetryState::new();
/// s.record_failure(&p, &Failure::new(s.next_attempt()), 0, JitterSource::Uniform(0.5))?;
/// assert_eq!((s.attempt(), s.terminal(), s.next_retry_at()), (1, Some(Action::Discard), None));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RetryState {
    pub(crate) attempt: u64,
    pub(crate) errors: VecDeque<ErrorRecord>,
    pub(crate) limit: usize,
    pub(crate) next_retry_at: Option<u64>,
    pub(crate) terminal: Option<Action>,
}

impl Default for RetryState {
    fn default() -> Self {
        Self::new()
    }
}

impl RetryState {
    /// A job that has not run: attempt 0, no errors, keeping the 10 newest
    /// errors.
    ///
    /// ```
    /// let s = ojs_retry::RetryState::new();
    /// assert_eq!((s.attempt(), s.next_attempt(), s.errors().len(), s.history_limit()), (0, 1, 0, 10));
    /// assert_eq!((s.next_retry_at(), s.terminal()), (None, None));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            attempt: 0,
            errors: VecDeque::new(),
            limit: MIN_HISTORY,
            next_retry_at: None,
            terminal: None,
        }
    }

    /// Keeps the `limit` newest errors instead of 10.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` (field `"history_limit"`) below 10, or
    /// above [`MAX_ARRAY_LEN`](crate::limits::MAX_ARRAY_LEN) (a state
    /// document holds at most that many records, so a larger limit could
    /// write a state no reader takes back).
    ///
    /// ```
    /// assert!(ojs_retry::RetryState::new().with_history_limit(9).is_err());
    /// assert!(ojs_retry::RetryState::new().with_history_limit(10_000).is_ok());
    /// assert!(ojs_retry::RetryState::new().with_history_limit(10_001).is_err());
    /// ```
    pub fn with_history_limit(mut self, limit: usize) -> Result<Self, Error> {
        self.limit = check_history_limit(limit)?;
        self.trim();
        Ok(self)
    }

    pub(crate) fn trim(&mut self) {
        while self.errors.len() > self.limit {
            self.errors.pop_front();
        }
    }

    /// The attempt that last ran (1-based; 0 before the first).
    ///
    /// ```
    /// use ojs_retry::{Failure, JitterSource, RetryPolicy, RetryState};
    /// let mut s = RetryState::new();
    /// assert_eq!(s.attempt(), 0); // nothing has run yet
    /// s.record_failure(&RetryPolicy::default(), &Failure::new(1), 0, JitterSource::Uniform(0.5))?;
    /// assert_eq!(s.attempt(), 1); // the attempt that last ran
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn attempt(&self) -> u64 {
        self.attempt
    }
    /// The attempt to run next: `attempt() + 1`.
    ///
    /// ```
    /// use ojs_retry::RetryState;
    /// assert_eq!(RetryState::new().next_attempt(), 1);
    /// let s = RetryState::from_json(r#"{"attempt": 3, "errors": []}"#, 10)?;
    /// assert_eq!(s.next_attempt(), 4);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn next_attempt(&self) -> u64 {
        self.attempt.saturating_add(1)
    }
    /// The error history, oldest first, at most [`RetryState::history_limit`].
    ///
    /// ```
    /// use ojs_retry::{Failure, JitterSource, RetryPolicy, RetryState};
    /// let (p, mut s) = (RetryPolicy::from_json(r#"{"max_attempts": 20}"#)?, RetryState::new());
    /// for n in 1..=12 {
    ///     s.record_failure(&p, &Failure::new(n), 0, JitterSource::Uniform(0.5))?;
    /// }
    /// assert_eq!(s.errors().len(), 10); // the two oldest were dropped
    /// assert_eq!(s.errors().next().map(|e| e.attempt), Some(3));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn errors(&self) -> impl ExactSizeIterator<Item = &ErrorRecord> {
        self.errors.iter()
    }
    /// When the next attempt is due (epoch ms), while retrying.
    ///
    /// ```
    /// use ojs_retry::{Failure, JitterSource, RetryPolicy, RetryState};
    /// let mut s = RetryState::new();
    /// s.record_failure(&RetryPolicy::default(), &Failure::new(1), 1_000, JitterSource::Uniform(0.5))?;
    /// assert_eq!(s.next_retry_at(), Some(2_000)); // now + 1 s
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn next_retry_at(&self) -> Option<u64> {
        self.next_retry_at
    }
    /// The terminal outcome once the job is discarded or dead-lettered.
    ///
    /// ```
    /// use ojs_retry::{Action, Failure, HandlerCode, JitterSource, RetryPolicy, RetryState};
    /// let (p, mut s) = (RetryPolicy::default(), RetryState::new());
    /// s.record_failure(&p, &Failure::new(1).with_code(HandlerCode::DeadLetter), 0, JitterSource::Uniform(0.5))?;
    /// assert_eq!(s.terminal(), Some(Action::DeadLetter));
    /// assert_eq!(s.record_failure(&p, &Failure::new(2), 0, JitterSource::Uniform(0.5)).unwrap_err().field(), Some("state"));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn terminal(&self) -> Option<Action> {
        self.terminal
    }
    /// The error-history bound.
    ///
    /// ```
    /// let s = ojs_retry::RetryState::new().with_history_limit(25)?;
    /// assert_eq!(s.history_limit(), 25);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn history_limit(&self) -> usize {
        self.limit
    }

    /// Records that attempt [`RetryState::next_attempt`] failed with
    /// `failure` at `now_ms` and returns the decision (the same failure
    /// [`RetryPolicy::decide`] takes). On a retry `next_retry_at` is set;
    /// otherwise the state becomes terminal.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: the state is already terminal (field
    /// `"state"`), the failure's attempt is not the next one (field
    /// `"attempt"`), or as [`RetryPolicy::decide`].
    ///
    /// ```
    /// use ojs_retry::{Action, Failure, JitterSource, RetryPolicy, RetryState};
    /// let (p, mut s) = (RetryPolicy::default(), RetryState::new());
    /// let d = s.record_failure(&p, &Failure::new(1), 0, JitterSource::Uniform(0.5))?;
    /// assert_eq!((d.action, s.next_retry_at()), (Action::Retry, Some(1_000)));
    /// let e = s.record_failure(&p, &Failure::new(1), 0, JitterSource::Uniform(0.5)).unwrap_err();
    /// assert_eq!(e.field(), Some("attempt")); // attempt 2 is next
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn record_failure(
        &mut self,
        policy: &RetryPolicy,
        failure: &Failure,
        now_ms: u64,
        jitter: JitterSource<'_>,
    ) -> Result<Decision, Error> {
        if let Some(t) = self.terminal {
            return Err(Error::arg(
                "state",
                format!(
                    "expected a job that is still retrying, found one already terminal ({})",
                    t.as_str()
                ),
            ));
        }
        if failure.attempt != self.next_attempt() {
            return Err(Error::arg(
                "attempt",
                format!(
                    "expected the state's next attempt, {}, found {}",
                    self.next_attempt(),
                    failure.attempt
                ),
            ));
        }
        let decision = policy.decide(failure, now_ms, jitter)?;
        self.errors.push_back(record_of(failure, now_ms));
        self.trim();
        self.attempt = failure.attempt;
        if decision.action == Action::Retry {
            self.next_retry_at = decision.next_retry_at;
        } else {
            self.next_retry_at = None;
            self.terminal = Some(decision.action);
        }
        Ok(decision)
    }

    /// The §10 JSON shape, compact. `terminal` (`null`, `"discard"` or
    /// `"dead_letter"`) is this engine's addition so a stored state knows it
    /// is finished.
    ///
    /// ```
    /// use ojs_retry::RetryState;
    /// let s = RetryState::new();
    /// assert_eq!(s.to_json(), r#"{"attempt":0,"errors":[],"next_retry_at":null,"terminal":null}"#);
    /// assert_eq!(RetryState::from_json(&s.to_json(), 10)?, s);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        // Every value is a string, an integer or a finite tree (details are
        // checked finite when read): serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads the §10 JSON shape (keeping at most `history_limit` newest
    /// errors).
    ///
    /// # Errors
    ///
    /// `validation.state_invalid` naming the bad field, or
    /// `validation.invalid_argument` for a `history_limit` below 10.
    ///
    /// ```
    /// let s = ojs_retry::RetryState::from_json(r#"{"attempt":3,"errors":[],"next_retry_at":"2026-02-12T10:31:05Z"}"#, 10).unwrap();
    /// assert_eq!((s.attempt(), s.next_retry_at()), (3, Some(1_770_892_265_000)));
    /// ```
    pub fn from_json(text: &str, history_limit: usize) -> Result<Self, Error> {
        let v = Value::from_json(text).map_err(|m| Error::new(ErrorCode::StateInvalid, "", m))?;
        Self::from_value(&v, history_limit)
    }

    /// [`RetryState::from_value`] reading the document from any serde
    /// `Deserializer` (a host value).
    ///
    /// # Errors
    ///
    /// As [`RetryState::from_json`].
    ///
    /// ```
    /// let doc = serde_json::json!({"attempt": 2, "errors": []});
    /// let s = ojs_retry::RetryState::from_deserializer(&doc, 10)?;
    /// assert_eq!(s.next_attempt(), 3);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_deserializer<'de, D: serde::Deserializer<'de>>(
        d: D,
        history_limit: usize,
    ) -> Result<Self, Error> {
        let v = Value::read(d).map_err(|f| Error::from_fault(ErrorCode::StateInvalid, f))?;
        Self::from_value(&v, history_limit)
    }

    /// Reads the §10 shape from a [`Value`].
    ///
    /// # Errors
    ///
    /// As [`RetryState::from_json`], every fault listed.
    ///
    /// ```
    /// use ojs_retry::{RetryState, Value};
    /// let v = Value::from_json(r#"{"attempt": 2, "errors": []}"#).unwrap();
    /// assert_eq!(RetryState::from_value(&v, 10)?.attempt(), 2);
    /// let bad = Value::from_json(r#"{"attempt": "2", "errors": []}"#).unwrap();
    /// assert_eq!(RetryState::from_value(&bad, 10).unwrap_err().field(), Some("attempt"));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_value(v: &Value, history_limit: usize) -> Result<Self, Error> {
        let mut faults = Faults::default();
        let state = read_state(v, &mut faults);
        faults.into_error(ErrorCode::StateInvalid)?;
        let mut state = state.with_history_limit(history_limit)?;
        state.trim();
        Ok(state)
    }
}

/// The history entry for a failure.
pub(crate) fn record_of(failure: &Failure, now_ms: u64) -> ErrorRecord {
    let error_type = match (&failure.error_type, failure.timed_out) {
        (Some(t), _) => t.clone(),
        (None, true) => TIMEOUT_ERROR_TYPE.into(),
        (None, false) => UNKNOWN_ERROR_TYPE.into(),
    };
    let message = match (&failure.message, failure.timed_out) {
        (Some(m), _) => m.clone(),
        (None, true) => "the reservation's visibility timeout expired".into(),
        (None, false) => String::new(),
    };
    ErrorRecord {
        attempt: failure.attempt,
        error_type,
        message,
        code: failure.code.unwrap_or(HandlerCode::Retry),
        timestamp_ms: now_ms,
        // `null` details are no details: the §10 document leaves them out.
        details: failure.details.clone().filter(|d| !d.is_null()),
    }
}

impl Serialize for ErrorRecord {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("ErrorRecord", 6)?;
        st.serialize_field("attempt", &self.attempt)?;
        st.serialize_field("type", &self.error_type)?;
        st.serialize_field("message", &self.message)?;
        st.serialize_field("code", self.code.as_str())?;
        st.serialize_field(
            "timestamp",
            &time::format_ms(self.timestamp_ms.min(time::MAX_INSTANT_MS)),
        )?;
        if let Some(d) = &self.details {
            st.serialize_field("details", d)?;
        } else {
            st.skip_field("details")?;
        }
        st.end()
    }
}

/// A history entry as a host shows it: its instant as epoch ms
/// (`timestamp_ms`), where the §10 document (`ErrorRecord`'s own
/// `Serialize`) writes RFC 3339.
///
/// ```
/// use ojs_retry::{Failure, JitterSource, RecordMs, RetryPolicy, RetryState};
/// let mut s = RetryState::new();
/// s.record_failure(&RetryPolicy::default(), &Failure::new(1).with_type("net.reset"), 5_000, JitterSource::Uniform(0.5))?;
/// let r = s.errors().next().unwrap();
/// let json = serde_json::to_string(&RecordMs(r)).unwrap();
/// assert!(json.contains(r#""timestamp_ms":5000"#));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RecordMs<'a>(pub &'a ErrorRecord);

impl Serialize for RecordMs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut st = s.serialize_struct("ErrorRecord", 6)?;
        st.serialize_field("attempt", &r.attempt)?;
        st.serialize_field("type", &r.error_type)?;
        st.serialize_field("message", &r.message)?;
        st.serialize_field("code", r.code.as_str())?;
        st.serialize_field("timestamp_ms", &r.timestamp_ms)?;
        st.serialize_field("details", &r.details)?;
        st.end()
    }
}

impl Serialize for RetryState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("RetryState", 4)?;
        st.serialize_field("attempt", &self.attempt)?;
        st.serialize_field("errors", &self.errors)?;
        st.serialize_field(
            "next_retry_at",
            &self
                .next_retry_at
                .map(|t| time::format_ms(t.min(time::MAX_INSTANT_MS))),
        )?;
        st.serialize_field("terminal", &self.terminal.map(Action::as_str))?;
        st.end()
    }
}

/// `limit` when it is a history limit a state can have:
/// [`MIN_HISTORY`] (spec §10.1) to [`MAX_ARRAY_LEN`](crate::limits::MAX_ARRAY_LEN)
/// (the most records a state document holds, so that every state reads
/// back); else `validation.invalid_argument` at `history_limit`.
///
/// ```
/// use ojs_retry::state::check_history_limit;
/// assert_eq!(check_history_limit(10).ok(), Some(10));
/// assert_eq!(check_history_limit(9).unwrap_err().field(), Some("history_limit"));
/// ```
pub fn check_history_limit(limit: usize) -> Result<usize, Error> {
    let max = crate::limits::MAX_ARRAY_LEN;
    if (MIN_HISTORY..=max).contains(&limit) {
        return Ok(limit);
    }
    Err(Error::arg(
        "history_limit",
        format!(
            "expected {MIN_HISTORY} (spec §10.1) to {max} (the most records a state document holds), found {limit}"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::RetryState;
    use crate::{Failure, JitterSource, RetryPolicy};
    use alloc::format;
    use alloc::vec::Vec;

    /// A state after `n` failures (messages "m1" …), under a policy that
    /// retries them all.
    fn after(n: u64, limit: usize) -> RetryState {
        let p = RetryPolicy::from_json(r#"{"max_attempts": 1000000}"#).unwrap();
        let mut s = RetryState::new().with_history_limit(limit).unwrap();
        for i in 1..=n {
            let f = Failure::new(i).with_type("x").with_message(format!("m{i}"));
            s.record_failure(&p, &f, i, JitterSource::Uniform(0.5))
                .unwrap();
        }
        s
    }

    fn messages(s: &RetryState) -> Vec<&str> {
        s.errors().map(|e| e.message.as_str()).collect()
    }

    fn range(from: u64, to: u64) -> Vec<alloc::string::String> {
        (from..=to).map(|i| format!("m{i}")).collect()
    }

    #[test]
    fn the_newest_records_are_kept_and_read_back_unchanged() {
        for n in [0, 1, 9, 10, 11, 19, 20, 21, 39, 40, 41, 1000] {
            let s = after(n, 10);
            let want = range(n.saturating_sub(9).max(1), n);
            assert_eq!(messages(&s), want, "after {n}");
            assert_eq!(s.attempt(), n);
            let back = RetryState::from_json(&s.to_json(), 10).unwrap();
            assert_eq!(back, s, "after {n}");
            assert_eq!(back.to_json(), s.to_json());
        }
    }

    #[test]
    fn a_larger_limit_does_not_bring_back_dropped_records() {
        let s = after(25, 10).with_history_limit(30).unwrap();
        assert_eq!(messages(&s), range(16, 25));
        let s = after(25, 20).with_history_limit(10).unwrap();
        assert_eq!(messages(&s), range(16, 25));
    }

    #[test]
    fn null_details_are_no_details_and_non_finite_ones_are_refused() {
        let p = RetryPolicy::default();
        let mut s = RetryState::new();
        let f = Failure::new(1).with_details(crate::Value::Null);
        s.record_failure(&p, &f, 0, JitterSource::Uniform(0.5))
            .unwrap();
        assert_eq!(RetryState::from_json(&s.to_json(), 10).unwrap(), s);
        let nan = Failure::new(2).with_details(crate::Value::from(f64::NAN));
        let e = s
            .record_failure(&p, &nan, 0, JitterSource::Uniform(0.5))
            .unwrap_err();
        assert_eq!(e.field(), Some("details"));
    }

    #[test]
    fn only_the_next_attempt_is_recorded() {
        let p = RetryPolicy::default();
        let mut s = RetryState::new();
        let e = s
            .record_failure(&p, &Failure::new(2), 0, JitterSource::Uniform(0.5))
            .unwrap_err();
        assert_eq!(e.field(), Some("attempt"));
    }
}
