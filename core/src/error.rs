//! The one error type of the engine: a stable `code`, the offending `field`,
//! and a message saying what was expected and what was found.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The stable, machine-readable class of an [`Error`].
///
/// The string form ([`ErrorCode::as_str`]) is identical in every runtime and
/// never changes once released.
///
/// ```
/// use ojs_retry::ErrorCode;
/// assert_eq!(ErrorCode::RetryPolicyInvalid.as_str(), "validation.retry_policy_invalid");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A retry policy document or builder violates spec §11 / §14.
    RetryPolicyInvalid,
    /// A standalone duration string is not a valid ISO 8601 duration (§4).
    DurationInvalid,
    /// A call argument is out of range (attempt 0, `u` outside `[0, 1)`,
    /// an instant before 1970 or after 9999, ...).
    InvalidArgument,
    /// A serialised [`RetryState`](crate::RetryState) or
    /// [`Failure`](crate::Failure) document is malformed.
    StateInvalid,
}

impl ErrorCode {
    /// The stable string form of the code.
    ///
    /// ```
    /// assert_eq!(ojs_retry::ErrorCode::InvalidArgument.as_str(), "validation.invalid_argument");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::RetryPolicyInvalid => "validation.retry_policy_invalid",
            Self::DurationInvalid => "validation.duration_invalid",
            Self::InvalidArgument => "validation.invalid_argument",
            Self::StateInvalid => "validation.state_invalid",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The most faults an [`Error`] lists; the rest are counted in one last
/// fault ("and N more faults").
pub const MAX_FAULTS: usize = 100;

/// One fault found in the input: where, and what is wrong.
///
/// ```
/// let err = ojs_retry::RetryPolicy::from_json(r#"{"non_retryable_errors": ["net.*", 7]}"#).unwrap_err();
/// let f = &err.faults()[0];
/// assert_eq!(f.field.as_deref(), Some("non_retryable_errors"));
/// assert_eq!(f.path.as_deref(), Some("non_retryable_errors[1]"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fault {
    /// The policy (or argument) field the fault concerns, such as
    /// `"non_retryable_errors"`; `None` for the document as a whole.
    pub field: Option<String>,
    /// Where inside the document: `"non_retryable_errors[2]"`,
    /// `"preset.backoff"`; the field itself for a top-level fault; `None`
    /// for the document as a whole.
    pub path: Option<String>,
    /// What was expected and what was found.
    pub message: String,
}

impl Fault {
    /// A fault in `field` (a key as the document spells it, whatever
    /// characters it holds) at `path` inside it.
    pub(crate) fn at_field(field: &str, path: String, message: String) -> Self {
        Self {
            field: Some(field.into()),
            path: Some(path),
            message,
        }
    }

    /// The fault of an unknown key in an object, as every reader of the
    /// engine reports one: the key (quoted, at most 64 characters of it)
    /// and the keys the object takes (`expected`, as the host spells them).
    ///
    /// ```
    /// use ojs_retry::Fault;
    /// let f = Fault::unknown_field("kye", "attempt or type");
    /// assert_eq!((f.field.as_deref(), f.path.as_deref()), (Some("kye"), Some("kye")));
    /// assert_eq!(f.message, r#"unknown field "kye"; expected attempt or type"#);
    /// ```
    #[must_use]
    pub fn unknown_field(key: &str, expected: &str) -> Self {
        Self::at_field(
            key,
            key.into(),
            alloc::format!("unknown field {}; expected {expected}", quote(key)),
        )
    }

    /// A fault at `path` (`""`: the whole document); its field is the
    /// path's first segment.
    pub(crate) fn at(path: &str, message: String) -> Self {
        let field = path.split(['[', '.']).next().unwrap_or_default();
        Self {
            field: (!field.is_empty()).then(|| field.into()),
            path: (!path.is_empty()).then(|| path.into()),
            message,
        }
    }
}

/// Every error the engine returns.
///
/// A document with several faults reports them (at most
/// [`MAX_FAULTS`], the last of which
/// then counts the rest), in a stable order
/// (the spec's field order, then unknown fields in name order, then rules
/// across fields); [`Error::field`], [`Error::path`] and
/// [`Error::message`] describe the first.
///
/// ```
/// use ojs_retry::{RetryPolicy, ErrorCode};
/// let err = RetryPolicy::from_json(r#"{"non_retryable_errors": [""], "jitter": "yes"}"#).unwrap_err();
/// assert_eq!(err.code(), ErrorCode::RetryPolicyInvalid);
/// assert_eq!(err.field(), Some("jitter"));
/// assert_eq!(err.faults()[1].path.as_deref(), Some("non_retryable_errors[0]"));
/// assert_eq!(err.faults()[1].field.as_deref(), Some("non_retryable_errors"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    // Never empty: every constructor has at least one fault.
    faults: Vec<Fault>,
}

impl Error {
    /// An error with one fault at `path` (`""`: the whole document), for
    /// hosts whose own argument conversion finds a fault (a string where a
    /// number is expected) and reports it as the engine reports its own.
    ///
    /// ```
    /// use ojs_retry::{Error, ErrorCode};
    /// let e = Error::new(ErrorCode::InvalidArgument, "retry_number", "expected a number, found a string");
    /// assert_eq!((e.field(), e.path()), (Some("retry_number"), Some("retry_number")));
    /// ```
    #[must_use]
    pub fn new(code: ErrorCode, path: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            faults: alloc::vec![Fault::at(path, message.into())],
        }
    }

    /// An argument error (`validation.invalid_argument`) at `path`.
    ///
    /// ```
    /// use ojs_retry::{Error, ErrorCode};
    /// let e = Error::invalid_argument("now", "expected an integer, found a string");
    /// assert_eq!(e.code(), ErrorCode::InvalidArgument);
    /// assert_eq!(e.to_string(), "validation.invalid_argument: now: expected an integer, found a string");
    /// ```
    #[must_use]
    pub fn invalid_argument(path: &str, message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, path, message)
    }

    pub(crate) fn arg(path: &str, message: impl Into<String>) -> Self {
        Self::invalid_argument(path, message)
    }

    /// An error of one fault (what [`Value::read`](crate::Value::read)
    /// reports) with `code`.
    ///
    /// ```
    /// use ojs_retry::{Error, ErrorCode, Fault};
    /// let fault = Fault { field: Some("attempt".into()), path: Some("attempt".into()), message: "expected an integer".into() };
    /// let e = Error::from_fault(ErrorCode::StateInvalid, fault.clone());
    /// assert_eq!((e.code(), e.faults()), (ErrorCode::StateInvalid, &[fault][..]));
    /// ```
    #[must_use]
    pub fn from_fault(code: ErrorCode, fault: Fault) -> Self {
        Self {
            code,
            faults: alloc::vec![fault],
        }
    }

    /// Builds an error from collected faults (a binding's reader of its
    /// host's own argument objects collects them as the engine's readers
    /// do); `None` when there are none. Past [`MAX_FAULTS`] the rest are
    /// counted in one last fault, so that a document of a million bad
    /// entries gives a message of bounded size.
    ///
    /// ```
    /// use ojs_retry::{Error, ErrorCode, Fault};
    /// let f = |k: &str| Fault { field: Some(k.into()), path: Some(k.into()), message: "unknown".into() };
    /// let e = Error::from_faults(ErrorCode::InvalidArgument, vec![f("a"), f("b")]).unwrap();
    /// assert_eq!((e.field(), e.faults().len()), (Some("a"), 2));
    /// assert!(Error::from_faults(ErrorCode::InvalidArgument, vec![]).is_none());
    /// ```
    #[must_use]
    pub fn from_faults(code: ErrorCode, mut faults: Vec<Fault>) -> Option<Self> {
        if faults.len() > MAX_FAULTS {
            let kept = MAX_FAULTS.saturating_sub(1);
            let more = faults.len().saturating_sub(kept);
            faults.truncate(kept);
            faults.push(Fault::at("", alloc::format!("and {more} more faults")));
        }
        (!faults.is_empty()).then_some(Self { code, faults })
    }

    /// The stable error code.
    ///
    /// ```
    /// use ojs_retry::{ErrorCode, RetryPolicy, parse_duration};
    /// assert_eq!(parse_duration("P").unwrap_err().code(), ErrorCode::DurationInvalid);
    /// assert_eq!(RetryPolicy::from_json("{").unwrap_err().code(), ErrorCode::RetryPolicyInvalid);
    /// ```
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The field of the first fault; `None` when it concerns the whole
    /// document.
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// assert_eq!(RetryPolicy::from_json(r#"{"jitter": 1}"#).unwrap_err().field(), Some("jitter"));
    /// // Not an object at all: a fault of the whole document.
    /// assert_eq!(RetryPolicy::from_json("[]").unwrap_err().field(), None);
    /// ```
    #[must_use]
    pub fn field(&self) -> Option<&str> {
        self.first().and_then(|f| f.field.as_deref())
    }

    /// The path of the first fault inside its field.
    ///
    /// ```
    /// let err = ojs_retry::RetryPolicy::from_json(r#"{"non_retryable_errors": ["ok", ""]}"#).unwrap_err();
    /// assert_eq!(err.field(), Some("non_retryable_errors"));
    /// assert_eq!(err.path(), Some("non_retryable_errors[1]"));
    /// ```
    #[must_use]
    pub fn path(&self) -> Option<&str> {
        self.first().and_then(|f| f.path.as_deref())
    }

    /// The message of the first fault.
    ///
    /// ```
    /// let err = ojs_retry::format_timestamp(u64::MAX).unwrap_err();
    /// assert!(err.message().starts_with("expected epoch milliseconds between 0 and"));
    /// assert!(!err.message().contains("validation.")); // the code is not part of it
    /// ```
    #[must_use]
    pub fn message(&self) -> &str {
        self.first().map_or("", |f| f.message.as_str())
    }

    /// Every fault, first one first.
    ///
    /// ```
    /// let err = ojs_retry::RetryPolicy::from_json(r#"{"jitter": "yes", "max_attempts": -1}"#).unwrap_err();
    /// let fields: Vec<_> = err.faults().iter().map(|f| f.field.as_deref()).collect();
    /// assert_eq!(fields, [Some("max_attempts"), Some("jitter")]); // the spec's field order
    /// ```
    #[must_use]
    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    fn first(&self) -> Option<&Fault> {
        self.faults.first()
    }
}

/// `code: path: message; path: message` (a fault of the whole document
/// shows its message alone): the one-line message of every runtime.
///
/// ```
/// let err = ojs_retry::parse_duration("PT").unwrap_err();
/// assert!(err.to_string().starts_with("validation.duration_invalid: "));
/// ```
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code.as_str())?;
        f.write_str(":")?;
        for (i, fault) in self.faults.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { "; " })?;
            if let Some(path) = &fault.path {
                write!(f, "{path}: ")?;
            }
            f.write_str(&fault.message)?;
        }
        Ok(())
    }
}

impl core::error::Error for Error {}

/// Collects faults while validating a document.
#[derive(Default)]
pub(crate) struct Faults(pub(crate) Vec<Fault>);

impl Faults {
    /// A fault of `key`, a field the document holds, spelled as given (an
    /// unknown field named `"a.b"` is that field, not a path into `a`).
    pub(crate) fn push_key(&mut self, key: &str, message: impl Into<String>) {
        self.0
            .push(Fault::at_field(key, key.into(), message.into()));
    }

    pub(crate) fn push(&mut self, path: impl AsRef<str>, message: impl Into<String>) {
        self.0.push(Fault::at(path.as_ref(), message.into()));
    }

    pub(crate) fn into_error(self, code: ErrorCode) -> Result<(), Error> {
        match Error::from_faults(code, self.0) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

pub(crate) use crate::describe::{quote, show_f64};
