//! The one error type of the engine: a stable `code`, the offending `field`,
//! and a message saying what was expected and what was found.

use crate::text::msg;
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

/// One fault found in the input: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The offending field: `"max_attempts"`, `"non_retryable_errors[2]"`,
    /// or `""` for the document itself.
    pub field: String,
    /// What was expected and what was found.
    pub message: String,
}

/// Every error the engine returns.
///
/// A policy document with several faults reports all of them, in a stable
/// order (the spec's field order, then unknown fields in name order, then
/// rules across fields); [`Error::field`] and [`Error::message`] describe
/// the first.
///
/// ```
/// use ojs_retry::{RetryPolicy, ErrorCode};
/// let err = RetryPolicy::from_json(r#"{"max_attempts": -1, "jitter": "yes"}"#).unwrap_err();
/// assert_eq!(err.code(), ErrorCode::RetryPolicyInvalid);
/// assert_eq!(err.field(), "max_attempts");
/// assert_eq!(err.faults().len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    // Never empty: every constructor pushes at least one fault.
    first: Fault,
    more: Vec<Fault>,
}

impl Error {
    /// An error with one fault.
    pub(crate) fn new(
        code: ErrorCode,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            code,
            first: Fault {
                field: field.into(),
                message: message.into(),
            },
            more: Vec::new(),
        }
    }

    /// An argument error (`validation.invalid_argument`).
    pub(crate) fn arg(field: &str, message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, field, message)
    }

    /// Builds an error from collected faults; `None` when there are none.
    pub(crate) fn from_faults(code: ErrorCode, faults: Vec<Fault>) -> Option<Self> {
        let mut it = faults.into_iter();
        let first = it.next()?;
        Some(Self {
            code,
            first,
            more: it.collect(),
        })
    }

    /// The stable error code.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The field of the first fault (`""` for the document itself).
    #[must_use]
    pub fn field(&self) -> &str {
        &self.first.field
    }

    /// The message of the first fault.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.first.message
    }

    /// Every fault, first one first.
    #[must_use]
    pub fn faults(&self) -> Vec<Fault> {
        let mut v = Vec::with_capacity(self.more.len().saturating_add(1));
        v.push(self.first.clone());
        v.extend(self.more.iter().cloned());
        v
    }

    /// Iterates the faults without cloning.
    pub fn iter_faults(&self) -> impl Iterator<Item = &Fault> {
        core::iter::once(&self.first).chain(self.more.iter())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&render_message(
            self.code.as_str(),
            self.iter_faults()
                .map(|fault| (fault.field.as_str(), fault.message.as_str())),
        ))
    }
}

/// The one-line message every runtime shows for an error:
/// `code: field: message; field: message` (a fault on the document itself,
/// field `""`, shows its message alone). Bindings use it for the errors of
/// their own argument checks too, so every error reads the same everywhere.
///
/// ```
/// use ojs_retry::error::render_message;
/// assert_eq!(
///     render_message("validation.invalid_argument", [("now", "expected a number"), ("", "and more")]),
///     "validation.invalid_argument: now: expected a number; and more"
/// );
/// ```
pub fn render_message<'a>(
    code: &str,
    faults: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let mut out = String::from(code);
    out.push(':');
    for (i, (field, message)) in faults.into_iter().enumerate() {
        out.push_str(if i == 0 { " " } else { "; " });
        if !field.is_empty() {
            out.push_str(field);
            out.push_str(": ");
        }
        out.push_str(message);
    }
    out
}

impl core::error::Error for Error {}

/// Collects faults while validating a document.
#[derive(Default)]
pub(crate) struct Faults(pub(crate) Vec<Fault>);

impl Faults {
    pub(crate) fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(Fault {
            field: field.into(),
            message: message.into(),
        });
    }

    pub(crate) fn into_error(self, code: ErrorCode) -> Result<(), Error> {
        match Error::from_faults(code, self.0) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A float for messages, spelled as JavaScript and JSON spell it: `NaN`,
/// `Infinity`, `-Infinity`, `2.5`, `-1`, `1e+300`.
///
/// It goes through the JSON writer's shortest round-trip formatter, which the
/// engine links anyway, instead of core's float `Display`: that one would
/// add ~15 KB (a fifth of the engine) to the wasm build for a few messages.
pub(crate) fn show_f64(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let mut text = String::new();
    crate::json::shortest::push(&mut text, x);
    match text.strip_suffix(".0") {
        Some(integral) => integral.into(),
        None => text,
    }
}

/// Quotes a user string for a message, escaped as in a JSON document
/// (not Rust's `Debug`, whose printable-character tables cost ~3 KB of
/// wasm), and shortened so a 10 MB input does not produce a 10 MB message.
pub(crate) fn quote(s: &str) -> String {
    const MAX: usize = 64;
    let mut out = String::from("\"");
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => {
            crate::json::write::escape_into(&mut out, s.get(..cut).unwrap_or(""));
            out.push_str("...");
            out.push_str(&msg!("\" (", s.len(), " bytes)"));
        }
        None => {
            crate::json::write::escape_into(&mut out, s);
            out.push('"');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_escapes_as_json_and_shortens() {
        assert_eq!(quote("it's"), "\"it's\"");
        assert_eq!(quote("a\"b\\c\nd\u{1}é"), "\"a\\\"b\\\\c\\nd\\u0001é\"");
        let long = "é".repeat(70);
        let q = quote(&long);
        assert_eq!(q, alloc::format!("\"{}...\" (140 bytes)", "é".repeat(64)));
        assert_eq!(quote(""), "\"\"");
    }

    #[test]
    fn floats_in_messages() {
        let cases = [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (2.5, "2.5"),
            (-1.0, "-1"),
            (3.0, "3"),
            (1e300, "1e+300"),
            (0.1, "0.1"),
            (9_007_199_254_740_992.0, "9007199254740992"),
        ];
        for (x, text) in cases {
            assert_eq!(show_f64(x), text);
        }
    }
}
