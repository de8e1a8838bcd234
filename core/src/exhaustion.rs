//! What happens to a job whose attempts are exhausted or whose error is
//! non-retryable: its own module so that both the policy and the presets
//! (which must not depend on the policy) can name it.

/// What happens to a job whose attempts are exhausted or whose error is
/// non-retryable (§2.2 `on_exhaustion`, RET-17).
///
/// ```
/// use ojs_retry::{Action, Failure, JitterSource, OnExhaustion, RetryPolicy};
/// let p = RetryPolicy::from_json(r#"{"max_attempts": 1, "on_exhaustion": "dead_letter"}"#)?;
/// assert_eq!(p.on_exhaustion(), OnExhaustion::DeadLetter);
/// assert_eq!(p.decide(&Failure::new(1), 0, JitterSource::Uniform(0.5))?.action, Action::DeadLetter);
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnExhaustion {
    /// The job is discarded (the default).
    #[default]
    Discard,
    /// The job moves to the dead letter queue.
    DeadLetter,
}

impl OnExhaustion {
    /// The document name: `"discard"` or `"dead_letter"`.
    ///
    /// ```
    /// assert_eq!(ojs_retry::OnExhaustion::DeadLetter.as_str(), "dead_letter");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Discard => "discard",
            Self::DeadLetter => "dead_letter",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "discard" => Some(Self::Discard),
            "dead_letter" => Some(Self::DeadLetter),
            _ => None,
        }
    }
}
