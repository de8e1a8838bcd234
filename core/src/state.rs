//! Per-job retry state (spec §10, RET-14, RET-15): the attempt number, a
//! bounded error history and `next_retry_at`, serialised in the §10 JSON
//! shape with RFC 3339 UTC timestamps.
//!
//! ```
//! use ojs_retry::{RetryPolicy, RetryState, JobError, JitterSource, Action};
//! let policy = RetryPolicy::from_json(r#"{"max_attempts": 2, "jitter": false}"#).unwrap();
//! let mut state = RetryState::new();
//! let now = 1_770_892_265_000; // 2026-02-12T10:31:05Z
//! let d = state.record_failure(&policy, &JobError::new("net.reset", "peer reset"), now, JitterSource::Uniform(0.5)).unwrap();
//! assert_eq!(d.action, Action::Retry);
//! assert_eq!(state.attempt(), 2);
//! assert_eq!(
//!     state.to_json(),
//!     r#"{"attempt":2,"errors":[{"attempt":1,"type":"net.reset","message":"peer reset","code":"RETRY","timestamp":"2026-02-12T10:31:05.000Z"}],"next_retry_at":"2026-02-12T10:31:06.000Z","terminal":null}"#
//! );
//! ```

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::json::write::Writer;
use crate::json::{AsValue, Value};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::decision::{Action, Decision, Failure, HandlerCode};
use crate::duration::MAX_MS;
use crate::error::{Error, ErrorCode};
use crate::jitter::JitterSource;
use crate::policy::{RetryPolicy, kind, read_uint};
use crate::text::msg;
use crate::time;

/// The smallest error-history bound accepted (RET-15).
pub const MIN_HISTORY: usize = 10;

/// The error type recorded for an expired reservation.
pub const TIMEOUT_ERROR_TYPE: &str = "reservation.timeout";

/// The error a handler reported (§7.3).
#[derive(Debug, Clone, PartialEq)]
pub struct JobError {
    /// Dot-namespaced error type.
    pub error_type: String,
    /// Human-readable description.
    pub message: String,
    /// Response code; `None` means `RETRY`.
    pub code: Option<HandlerCode>,
    /// Arbitrary structured data.
    pub details: Option<Value>,
}

impl JobError {
    /// An error with a type and a message, no code, no details.
    #[must_use]
    pub fn new(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error_type: error_type.into(),
            message: message.into(),
            code: None,
            details: None,
        }
    }

    /// Sets the handler code.
    #[must_use]
    pub fn with_code(mut self, code: HandlerCode) -> Self {
        self.code = Some(code);
        self
    }
}

/// One entry of the error history (§10.1).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorRecord {
    /// The attempt that failed.
    pub attempt: u64,
    /// The error type ([`TIMEOUT_ERROR_TYPE`] for an expired reservation).
    pub error_type: String,
    /// The message.
    pub message: String,
    /// The handler code (`RETRY` when the handler gave none).
    pub code: HandlerCode,
    /// When the failure was recorded, epoch ms.
    pub timestamp_ms: u64,
    /// Structured details, if any.
    pub details: Option<Value>,
}

/// A job's retry state.
#[derive(Clone, PartialEq)]
pub struct RetryState {
    attempt: u64,
    errors: History,
    next_retry_at: Option<u64>,
    terminal: Option<Action>,
}

/// The newest `limit` error records, oldest first.
///
/// A `Vec` whose oldest records are dropped in bulk rather than one at a
/// time: records pushed out by newer ones stay, unseen, until there are
/// `limit` of them, then go together, so recording a failure is O(1)
/// amortised whatever the limit. Not a `VecDeque`: its ring
/// arithmetic was 0.9 KB of the wasm module (0.45 KB gzipped) for a
/// history of ten.
#[derive(Clone)]
struct History {
    records: Vec<ErrorRecord>,
    limit: usize,
}

impl History {
    /// The records shown: the newest `limit`.
    fn shown(&self) -> &[ErrorRecord] {
        let hidden = self.records.len().saturating_sub(self.limit);
        self.records.get(hidden..).unwrap_or_default()
    }

    fn push(&mut self, record: ErrorRecord) {
        self.records.push(record);
        if self.records.len() >= self.limit.saturating_mul(2) {
            self.trim();
        }
    }

    /// Drops the records not shown.
    fn trim(&mut self) {
        let hidden = self.records.len().saturating_sub(self.limit);
        if hidden > 0 {
            // Not `drain`: its machinery is ~0.6 KB of wasm.
            self.records = self.records.split_off(hidden);
        }
    }
}

/// Equal when the records shown are.
impl PartialEq for History {
    fn eq(&self, other: &Self) -> bool {
        self.limit == other.limit && self.shown() == other.shown()
    }
}

/// The fields, with the records shown.
impl fmt::Debug for RetryState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryState")
            .field("attempt", &self.attempt)
            .field("errors", &self.errors.shown())
            .field("next_retry_at", &self.next_retry_at)
            .field("terminal", &self.terminal)
            .field("history_limit", &self.errors.limit)
            .finish()
    }
}

impl Default for RetryState {
    fn default() -> Self {
        Self::new()
    }
}

impl RetryState {
    /// A fresh job: attempt 1, no errors, keeping the 10 newest errors.
    #[must_use]
    pub fn new() -> Self {
        Self {
            attempt: 1,
            errors: History {
                records: Vec::new(),
                limit: MIN_HISTORY,
            },
            next_retry_at: None,
            terminal: None,
        }
    }

    /// Keeps the `limit` newest errors instead of 10.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` (field `"history_limit"`) below 10.
    ///
    /// ```
    /// assert!(ojs_retry::RetryState::new().with_history_limit(9).is_err());
    /// ```
    pub fn with_history_limit(mut self, limit: usize) -> Result<Self, Error> {
        if limit < MIN_HISTORY {
            return Err(Error::arg(
                "history_limit",
                msg!(
                    "expected at least ",
                    MIN_HISTORY,
                    " (spec §10.1), found ",
                    limit
                ),
            ));
        }
        // Records pushed out under the old limit stay out under a larger one.
        self.errors.trim();
        self.errors.limit = limit;
        self.errors.trim();
        Ok(self)
    }

    /// The current attempt (1-based).
    #[must_use]
    pub fn attempt(&self) -> u64 {
        self.attempt
    }
    /// The error history, oldest first.
    pub fn errors(&self) -> impl ExactSizeIterator<Item = &ErrorRecord> {
        self.errors.shown().iter()
    }
    /// When the next attempt is due (epoch ms), while retrying.
    #[must_use]
    pub fn next_retry_at(&self) -> Option<u64> {
        self.next_retry_at
    }
    /// The terminal outcome once the job is discarded or dead-lettered.
    #[must_use]
    pub fn terminal(&self) -> Option<Action> {
        self.terminal
    }
    /// The error-history bound.
    #[must_use]
    pub fn history_limit(&self) -> usize {
        self.errors.limit
    }

    /// Records that the current attempt failed with `error` at `now_ms` and
    /// returns the decision; on a retry the attempt advances and
    /// `next_retry_at` is set, otherwise the state becomes terminal.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: the state is already terminal (field
    /// `"state"`), or as [`RetryPolicy::decide`].
    pub fn record_failure(
        &mut self,
        policy: &RetryPolicy,
        error: &JobError,
        now_ms: u64,
        jitter: JitterSource<'_>,
    ) -> Result<Decision, Error> {
        let failure = Failure {
            attempt: self.attempt,
            error_type: Some(error.error_type.clone()),
            code: error.code,
            timed_out: false,
        };
        self.apply(policy, &failure, error, now_ms, jitter)
    }

    /// Records that the current attempt's reservation expired (RET-12).
    ///
    /// # Errors
    ///
    /// As [`RetryState::record_failure`].
    pub fn record_timeout(
        &mut self,
        policy: &RetryPolicy,
        now_ms: u64,
        jitter: JitterSource<'_>,
    ) -> Result<Decision, Error> {
        let failure = Failure::timeout(self.attempt);
        let error = JobError::new(
            TIMEOUT_ERROR_TYPE,
            "the reservation's visibility timeout expired",
        );
        self.apply(policy, &failure, &error, now_ms, jitter)
    }

    fn apply(
        &mut self,
        policy: &RetryPolicy,
        failure: &Failure,
        error: &JobError,
        now_ms: u64,
        jitter: JitterSource<'_>,
    ) -> Result<Decision, Error> {
        if let Some(t) = self.terminal {
            return Err(Error::arg(
                "state",
                msg!(
                    "expected a job that is still retrying, found one already terminal (",
                    t.as_str(),
                    ")"
                ),
            ));
        }
        let decision = policy.decide(failure, now_ms, jitter)?;
        self.errors.push(ErrorRecord {
            attempt: self.attempt,
            error_type: error.error_type.clone(),
            message: error.message.clone(),
            code: error.code.unwrap_or(HandlerCode::Retry),
            timestamp_ms: now_ms,
            details: error.details.clone(),
        });
        if decision.action == Action::Retry {
            // decide() rejected attempts above 2^53 − 1 and retries only
            // below max_attempts ≤ 2^53 − 1, so this cannot overflow.
            self.attempt = self.attempt.saturating_add(1);
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
    #[must_use]
    pub fn to_json(&self) -> String {
        // The `Serialize` impl's output as `serde_json` writes it (the
        // tests hold the two together).
        let mut w = Writer::new(false);
        w.open('{');
        w.key(true, "attempt");
        w.u64(self.attempt);
        w.key(false, "errors");
        w.open('[');
        for (i, e) in self.errors().enumerate() {
            w.item(i == 0);
            e.write(&mut w);
        }
        w.close(']', self.errors.shown().is_empty());
        w.key(false, "next_retry_at");
        w.opt_str(
            self.next_retry_at
                .map(|t| time::format_ms(t.min(time::MAX_INSTANT_MS)))
                .as_deref(),
        );
        w.key(false, "terminal");
        w.opt_str(self.terminal.map(Action::as_str));
        w.close('}', false);
        w.finish()
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
    /// assert_eq!(s.next_retry_at(), Some(1_770_892_265_000));
    /// ```
    pub fn from_json(text: &str, history_limit: usize) -> Result<Self, Error> {
        let v = crate::json::parse(text).map_err(|m| Error::new(ErrorCode::StateInvalid, "", m))?;
        Self::from_json_value(&v, history_limit)
    }

    /// Reads the §10 shape from a JSON value.
    ///
    /// # Errors
    ///
    /// As [`RetryState::from_json`].
    pub fn from_value<V: AsValue + ?Sized>(v: &V, history_limit: usize) -> Result<Self, Error> {
        Self::from_json_value(&v.as_value(), history_limit)
    }

    fn from_json_value(v: &Value, history_limit: usize) -> Result<Self, Error> {
        let bad = |field: &str, m: String| Error::new(ErrorCode::StateInvalid, field, m);
        let Value::Object(map) = v else {
            return Err(bad("", msg!("expected a JSON object, found ", kind(v))));
        };
        for key in map.keys() {
            if !["attempt", "errors", "next_retry_at", "terminal"].contains(&key.as_str()) {
                return Err(bad(
                    key,
                    msg!(
                        "unknown field ",
                        crate::error::quote(key),
                        "; expected attempt, errors, next_retry_at, terminal"
                    ),
                ));
            }
        }
        let attempt = match map.get("attempt") {
            Some(a) => read_uint(a).map_err(|m| bad("attempt", m))?,
            None => {
                return Err(bad(
                    "attempt",
                    "expected an attempt number, found nothing".to_owned(),
                ));
            }
        };
        if attempt == 0 {
            return Err(bad(
                "attempt",
                "expected an attempt number of at least 1, found 0".to_owned(),
            ));
        }
        let next_retry_at = match map.get("next_retry_at") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(time::parse_ms(s).map_err(|m| bad("next_retry_at", m))?),
            Some(other) => {
                return Err(bad(
                    "next_retry_at",
                    msg!("expected an RFC 3339 string or null, found ", kind(other)),
                ));
            }
        };
        let terminal = match map.get("terminal") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s == "discard" => Some(Action::Discard),
            Some(Value::String(s)) if s == "dead_letter" => Some(Action::DeadLetter),
            Some(other) => {
                return Err(bad(
                    "terminal",
                    msg!(
                        "expected null, \"discard\" or \"dead_letter\", found ",
                        kind(other)
                    ),
                ));
            }
        };
        let mut records = Vec::new();
        match map.get("errors") {
            None => {}
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    records.push(read_record(item, &msg!("errors[", i, "]"))?);
                }
            }
            Some(other) => {
                return Err(bad(
                    "errors",
                    msg!("expected an array, found ", kind(other)),
                ));
            }
        }
        let state = Self {
            attempt,
            errors: History {
                records,
                limit: MIN_HISTORY,
            },
            next_retry_at,
            terminal,
        };
        state.with_history_limit(history_limit)
    }
}

fn read_record(v: &Value, at: &str) -> Result<ErrorRecord, Error> {
    let bad = |field: &str, m: String| Error::new(ErrorCode::StateInvalid, msg!(at, ".", field), m);
    let Value::Object(map) = v else {
        return Err(Error::new(
            ErrorCode::StateInvalid,
            at,
            msg!("expected an object, found ", kind(v)),
        ));
    };
    let text = |field: &str| match map.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        other => Err(bad(
            field,
            msg!(
                "expected a string, found ",
                other.map_or("nothing".to_owned(), kind)
            ),
        )),
    };
    let attempt = match map.get("attempt") {
        Some(a) => read_uint(a).map_err(|m| bad("attempt", m))?,
        None => {
            return Err(bad(
                "attempt",
                "expected an attempt number, found nothing".to_owned(),
            ));
        }
    };
    let code = match map.get("code") {
        None | Some(Value::Null) => HandlerCode::Retry,
        Some(Value::String(s)) => {
            HandlerCode::parse(s).map_err(|e| bad("code", e.message().to_owned()))?
        }
        Some(other) => {
            return Err(bad(
                "code",
                msg!("expected a handler code string, found ", kind(other)),
            ));
        }
    };
    let timestamp_ms = time::parse_ms(&text("timestamp")?).map_err(|m| bad("timestamp", m))?;
    Ok(ErrorRecord {
        attempt: attempt.min(MAX_MS),
        error_type: text("type")?,
        message: text("message")?,
        code,
        timestamp_ms,
        details: map.get("details").filter(|d| !d.is_null()).cloned(),
    })
}

impl ErrorRecord {
    /// As the `Serialize` impl below, as `serde_json` writes it.
    fn write(&self, w: &mut Writer) {
        w.open('{');
        w.key(true, "attempt");
        w.u64(self.attempt);
        w.key(false, "type");
        w.string(&self.error_type);
        w.key(false, "message");
        w.string(&self.message);
        w.key(false, "code");
        w.string(self.code.as_str());
        w.key(false, "timestamp");
        w.string(&time::format_ms(
            self.timestamp_ms.min(time::MAX_INSTANT_MS),
        ));
        if let Some(d) = &self.details {
            w.key(false, "details");
            w.value(d);
        }
        w.close('}', false);
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

impl Serialize for RetryState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("RetryState", 4)?;
        st.serialize_field("attempt", &self.attempt)?;
        st.serialize_field("errors", self.errors.shown())?;
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

#[cfg(test)]
mod tests {
    use super::{JobError, RetryState};
    use crate::{JitterSource, RetryPolicy};
    use alloc::format;
    use alloc::vec::Vec;

    /// A state after `n` failures (messages "m1" …), under a policy that
    /// retries them all.
    fn after(n: u64, limit: usize) -> RetryState {
        let p = RetryPolicy::from_json(r#"{"max_attempts": 1000000}"#).unwrap();
        let mut s = RetryState::new().with_history_limit(limit).unwrap();
        for i in 1..=n {
            let e = JobError::new("x", format!("m{i}"));
            s.record_failure(&p, &e, i, JitterSource::Uniform(0.5))
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
    fn the_newest_records_are_kept_whatever_the_count() {
        for n in [0, 1, 9, 10, 11, 19, 20, 21, 39, 40, 41, 1000] {
            let s = after(n, 10);
            let want = range(n.saturating_sub(9).max(1), n);
            assert_eq!(messages(&s), want, "after {n}");
            assert_eq!(s.errors().len(), want.len());
            assert_eq!(s.attempt(), n + 1);
            // The JSON holds the same records, and reads back equal.
            let back = RetryState::from_json(&s.to_json(), 10).unwrap();
            assert_eq!(back, s, "after {n}");
            assert_eq!(back.to_json(), s.to_json());
        }
    }

    #[test]
    fn a_larger_limit_does_not_bring_back_dropped_records() {
        for n in [11, 15, 19, 25] {
            let s = after(n, 10).with_history_limit(30).unwrap();
            assert_eq!(messages(&s), range(n - 9, n), "after {n}");
        }
        let s = after(25, 20).with_history_limit(10).unwrap();
        assert_eq!(messages(&s), range(16, 25));
    }

    #[test]
    fn states_showing_the_same_records_are_equal() {
        // A state and its JSON's reading (which holds no records beyond
        // the 10 shown) are equal; the same failures kept under another
        // limit are not.
        let a = after(15, 10);
        let b = RetryState::from_json(&a.to_json(), 10).unwrap();
        assert_eq!(a, b);
        assert_ne!(after(15, 10), after(15, 20));
        let debug = format!("{a:?}");
        assert_eq!(debug.matches("message").count(), 10, "{debug}");
        assert!(
            debug.contains(r#""m6""#) && !debug.contains(r#""m5""#),
            "{debug}"
        );
        assert!(debug.ends_with("history_limit: 10 }"), "{debug}");
    }
}
