//! A failed attempt as the queue reports it: the one input of
//! [`RetryPolicy::decide`](crate::RetryPolicy::decide) and
//! [`RetryState::record_failure`](crate::RetryState::record_failure).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::describe::quote;
use crate::duration::MAX_MS;
use crate::error::{Error, ErrorCode, Fault, Faults};
use crate::limits::MAX_ANCESTORS;
use crate::options::uint_arg;
use crate::value::Value;

/// A handler error response code (§7.1).
///
/// ```
/// use ojs_retry::{Action, Failure, HandlerCode, JitterSource, RetryPolicy};
/// // The handler's code wins over the policy: attempts remain, yet the job is dead-lettered.
/// let f = Failure::new(1).with_code(HandlerCode::DeadLetter);
/// let d = RetryPolicy::default().decide(&f, 0, JitterSource::Uniform(0.5))?;
/// assert_eq!(d.action, Action::DeadLetter);
/// # Ok::<(), ojs_retry::Error>(())
/// ```
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
                format!(
                    "expected one of \"RETRY\", \"DISCARD\", \"DEAD_LETTER\", \"FAIL\", found {}",
                    quote(s)
                ),
            )),
        }
    }
}

/// A failed attempt.
///
/// ```
/// use ojs_retry::{Failure, HandlerCode};
/// let f = Failure::new(2).with_type("payment.card_stolen").with_code(HandlerCode::DeadLetter);
/// assert_eq!((f.attempt, f.error_type.as_deref()), (2, Some("payment.card_stolen")));
/// // A reservation that expired (RET-12) may still carry a type.
/// let t = Failure::timeout(3).with_type("worker.stalled");
/// assert!(t.timed_out);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Failure {
    /// The attempt that failed (1-based).
    pub attempt: u64,
    /// The error's dot-namespaced type, if any.
    pub error_type: Option<String>,
    /// The handler's response code, if any.
    pub code: Option<HandlerCode>,
    /// The reservation's visibility timeout expired (§9.2) instead of the
    /// handler answering.
    pub timed_out: bool,
    /// A human-readable message, kept in the error history.
    pub message: Option<String>,
    /// Structured details, kept in the error history.
    pub details: Option<Value>,
    /// The error type's base types, nearest first, as the queue's language
    /// names them (Python: the class's MRO after itself, without
    /// `object`). A preset's rules match them, as its system matches by
    /// class (`isinstance`); `non_retryable_errors` matches the type only
    /// (§6.2). At most [`MAX_ANCESTORS`].
    pub ancestors: Vec<String>,
}

impl Failure {
    /// A plain handler failure of `attempt`.
    ///
    /// ```
    /// let f = ojs_retry::Failure::new(1);
    /// assert_eq!((f.attempt, f.error_type, f.code, f.timed_out), (1, None, None, false));
    /// ```
    #[must_use]
    pub fn new(attempt: u64) -> Self {
        Self {
            attempt,
            ..Self::default()
        }
    }

    /// An expired reservation of `attempt` (RET-12).
    ///
    /// ```
    /// use ojs_retry::{Action, Failure, JitterSource, RetryPolicy};
    /// // A timeout is never matched against non_retryable_errors (§9.2).
    /// let p = RetryPolicy::from_json(r#"{"non_retryable_errors": ["worker.*"]}"#)?;
    /// let d = p.decide(&Failure::timeout(1).with_type("worker.stalled"), 0, JitterSource::Uniform(0.5))?;
    /// assert_eq!((d.action, d.timed_out), (Action::Retry, true));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn timeout(attempt: u64) -> Self {
        Self {
            timed_out: true,
            ..Self::new(attempt)
        }
    }

    /// Sets the error type.
    ///
    /// ```
    /// use ojs_retry::{Action, Failure, JitterSource, RetryPolicy};
    /// let p = RetryPolicy::from_json(r#"{"non_retryable_errors": ["validation.*"]}"#)?;
    /// let d = p.decide(&Failure::new(1).with_type("validation.bad_email"), 0, JitterSource::Uniform(0.5))?;
    /// assert_eq!(d.action, Action::Discard);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn with_type(mut self, error_type: impl Into<String>) -> Self {
        self.error_type = Some(error_type.into());
        self
    }

    /// Sets the handler code.
    ///
    /// ```
    /// use ojs_retry::{Action, Failure, HandlerCode, JitterSource, RetryPolicy};
    /// let f = Failure::new(1).with_code(HandlerCode::Discard);
    /// assert_eq!(f.code, Some(HandlerCode::Discard));
    /// assert_eq!(RetryPolicy::default().decide(&f, 0, JitterSource::Uniform(0.5))?.action, Action::Discard);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn with_code(mut self, code: HandlerCode) -> Self {
        self.code = Some(code);
        self
    }

    /// Sets the message.
    ///
    /// ```
    /// use ojs_retry::{Failure, JitterSource, RetryPolicy, RetryState};
    /// let mut s = RetryState::new();
    /// let f = Failure::new(1).with_message("SMTP server unreachable");
    /// s.record_failure(&RetryPolicy::default(), &f, 0, JitterSource::Uniform(0.5))?;
    /// assert_eq!(s.errors().next().map(|e| e.message.as_str()), Some("SMTP server unreachable"));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Sets the details.
    ///
    /// ```
    /// use ojs_retry::{Failure, Value};
    /// let f = Failure::new(1).with_details(Value::from_json(r#"{"status": 503}"#).unwrap());
    /// assert_eq!(f.details.unwrap().get("status").and_then(Value::as_f64), Some(503.0));
    /// ```
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Sets the error type's ancestors, nearest first.
    ///
    /// ```
    /// use ojs_retry::{Action, Failure, JitterSource, RetryPolicy};
    /// // Celery's autoretry_for=(OSError,) retries a ConnectionError, a subclass.
    /// let p = RetryPolicy::preset_json("celery", r#"{"autoretry_for": ["OSError"], "retry_jitter": false}"#)?;
    /// let f = Failure::new(1).with_type("ConnectionError").with_ancestors(["OSError", "Exception", "BaseException"]);
    /// assert_eq!(p.decide(&f, 0, JitterSource::Uniform(0.5))?.action, Action::Retry);
    /// assert_eq!(p.decide(&Failure::new(1).with_type("ConnectionError"), 0, JitterSource::Uniform(0.5))?.action, Action::Discard);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn with_ancestors<S: Into<String>>(
        mut self,
        ancestors: impl IntoIterator<Item = S>,
    ) -> Self {
        self.ancestors = ancestors.into_iter().map(Into::into).collect();
        self
    }

    /// Reads a failure object: `attempt`, `type`, `ancestors`, `code`,
    /// `timed_out`, `message` and `details`. `null`
    /// stands for an absent key; unknown keys are faults. `attempt` may be
    /// left out only when `default_attempt` is given (a state knows its
    /// next attempt).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument` listing every fault.
    ///
    /// ```
    /// use ojs_retry::{Failure, Value};
    /// let v = Value::from_json(r#"{"attempt": 2, "type": "net.reset", "timed_out": false}"#).unwrap();
    /// let f = Failure::from_value(&v, None).unwrap();
    /// assert_eq!(f, Failure::new(2).with_type("net.reset"));
    /// let typo = Value::from_json(r#"{"attempt": 2, "error_type": "x"}"#).unwrap();
    /// assert_eq!(Failure::from_value(&typo, None).unwrap_err().field(), Some("error_type"));
    /// ```
    pub fn from_value(value: &Value, default_attempt: Option<u64>) -> Result<Self, Error> {
        let mut faults = Faults::default();
        let mut f = Self::new(default_attempt.unwrap_or(0));
        let Some(map) = value.as_object() else {
            faults.push(
                "",
                format!("expected a failure object, found {}", value.describe()),
            );
            faults.into_error(ErrorCode::InvalidArgument)?;
            return Ok(f);
        };
        let mut has_attempt = default_attempt.is_some();
        for (key, v) in map {
            let k = key.as_str();
            let text = |faults: &mut Faults| match v.as_str() {
                Some(s) => Some(s.into()),
                None => {
                    faults.push(k, format!("expected a string, found {}", v.describe()));
                    None
                }
            };
            match k {
                _ if v.is_null() => {}
                "attempt" => match uint_arg(k, v) {
                    Ok(n) => {
                        f.attempt = n;
                        has_attempt = true;
                    }
                    Err(e) => faults.0.extend(e.faults().iter().cloned()),
                },
                "type" => f.error_type = text(&mut faults),
                "message" => f.message = text(&mut faults),
                "code" => match v.as_str().map(HandlerCode::parse) {
                    Some(Ok(c)) => f.code = Some(c),
                    Some(Err(e)) => faults.0.extend(e.faults().iter().cloned()),
                    None => faults.push(
                        k,
                        format!("expected a handler code string, found {}", v.describe()),
                    ),
                },
                "details" if v.is_finite() => f.details = Some(v.clone()),
                "details" => faults.push(k, "expected JSON data, found a non-finite number"),
                "ancestors" => f.ancestors = ancestors(v, &mut faults),
                "timed_out" => match v.as_bool() {
                    Some(b) => f.timed_out = b,
                    None => faults.push(k, format!("expected a boolean, found {}", v.describe())),
                },
                _ => faults.0.push(Fault::unknown_field(
                    k,
                    "attempt, type, ancestors, code, timed_out, message or details",
                )),
            }
        }
        if !has_attempt {
            faults.push(
                "attempt",
                "expected the failed attempt number, found nothing",
            );
        }
        faults.into_error(ErrorCode::InvalidArgument)?;
        Ok(f)
    }

    /// [`Failure::from_value`] reading the object from any serde
    /// `Deserializer` (a host value), a value that cannot be read located
    /// at its field.
    ///
    /// # Errors
    ///
    /// As [`Failure::from_value`].
    ///
    /// ```
    /// use ojs_retry::Failure;
    /// let f = Failure::from_deserializer(&serde_json::json!({"attempt": 1}), None)?;
    /// assert_eq!(f.attempt, 1);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_deserializer<'de, D: serde::Deserializer<'de>>(
        d: D,
        default_attempt: Option<u64>,
    ) -> Result<Self, Error> {
        let v = Value::read(d).map_err(|f| Error::from_fault(ErrorCode::InvalidArgument, f))?;
        Self::from_value(&v, default_attempt)
    }

    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.attempt == 0 || self.attempt > MAX_MS {
            return Err(Error::arg(
                "attempt",
                format!(
                    "expected the failed attempt number, between 1 and {MAX_MS}, found {}",
                    self.attempt
                ),
            ));
        }
        if let Some(t) = &self.error_type {
            crate::limits::check_string(t.len()).map_err(|m| Error::arg("type", m))?;
        }
        if self.details.as_ref().is_some_and(|d| !d.is_finite()) {
            return Err(Error::arg(
                "details",
                "expected JSON data, found a non-finite number (JSON cannot hold it)",
            ));
        }
        if self.timed_out && self.code.is_some() {
            return Err(Error::arg(
                "code",
                "expected no handler code on a timed-out reservation (the handler never answered)",
            ));
        }
        Ok(())
    }
}

/// A failure's `ancestors`: at most [`MAX_ANCESTORS`] non-empty strings.
fn ancestors(v: &Value, faults: &mut Faults) -> Vec<String> {
    let Some(items) = v.as_array() else {
        faults.push(
            "ancestors",
            format!("expected an array of error types, found {}", v.describe()),
        );
        return Vec::new();
    };
    if items.len() > MAX_ANCESTORS {
        faults.push(
            "ancestors",
            format!(
                "expected at most {MAX_ANCESTORS} ancestors, found {}",
                items.len()
            ),
        );
        return Vec::new();
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(s) if !s.is_empty() => out.push(s.into()),
            _ => faults.push(
                format!("ancestors[{i}]"),
                format!("expected a non-empty error type, found {}", item.describe()),
            ),
        }
    }
    out
}
