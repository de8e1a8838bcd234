//! Retry policies: documents, defaults, merging and validation (spec §2, §8,
//! §8.1, §11, §14; RET-03, RET-09, RET-10, RET-16, RET-20).
//!
//! A policy is built from one or more *partial* layers merged in order over
//! the §8 defaults (defaults ← queue ← job), then validated as a whole: a
//! layer may set `initial_interval` alone only if it stays within the
//! effective `max_interval`.
//!
//! ```
//! use ojs_retry::RetryPolicy;
//! // §8.1: a partial document merges with the defaults.
//! let p = RetryPolicy::from_json(r#"{"max_attempts": 10, "on_exhaustion": "dead_letter"}"#).unwrap();
//! assert_eq!(
//!     p.to_json(),
//!     r#"{"max_attempts":10,"initial_interval":"PT1S","backoff_coefficient":2.0,"max_interval":"PT5M","jitter":true,"non_retryable_errors":[],"on_exhaustion":"dead_letter"}"#
//! );
//! ```

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::backoff::{Backoff, CappedDelays, Curve, Rounding, Spread, Strategy};
use crate::duration;
use crate::error::Fault;
use crate::value::Value;

/// The largest number of rows [`RetryPolicy::schedule`] builds in one call.
///
/// ```
/// use ojs_retry::{MAX_SCHEDULE_ROWS, RetryPolicy};
/// let err = RetryPolicy::default().schedule(MAX_SCHEDULE_ROWS + 1, None).unwrap_err();
/// assert_eq!(err.field(), Some("count"));
/// ```
pub const MAX_SCHEDULE_ROWS: u64 = 10_000;

/// One policy layer in the form the caller holds it (see
/// [`RetryPolicy::from_layers`]).
///
/// ```
/// use ojs_retry::{Layer, RetryPolicy};
/// let queue = Layer::Json(r#"{"max_attempts": 5}"#.into());
/// let job = Layer::JsonBytes(b"{\"jitter\": false}"[..].into());
/// let p = RetryPolicy::from_layers(vec![queue, job])?;
/// assert_eq!((p.max_attempts(), p.jitter()), (5, false));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Layer<'a> {
    /// JSON text.
    Json(Cow<'a, str>),
    /// The raw bytes of JSON text (checked to be UTF-8).
    JsonBytes(Cow<'a, [u8]>),
    /// A document value (a JS object or a Python dict, read through serde).
    Value(Value),
    /// A host value that could not be read, with its fault (see
    /// [`Layer::read`]): reported with the other layers' faults.
    Unreadable(Fault),
}

impl Layer<'_> {
    /// One layer read from any serde `Deserializer` (a host value): its
    /// [`Value`], or the fault at the top-level field whose value could not
    /// be read (nested too deep, a type JSON has not).
    ///
    /// ```
    /// use ojs_retry::{Layer, RetryPolicy};
    /// let layer = Layer::read(&serde_json::json!({"max_attempts": 7}));
    /// assert_eq!(RetryPolicy::from_layers(vec![layer])?.max_attempts(), 7);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn read<'de, D: serde::Deserializer<'de>>(d: D) -> Self {
        match crate::value::read_document(d) {
            Ok(v) => Layer::Value(v),
            Err(fault) => Layer::Unreadable(fault),
        }
    }
}

pub use crate::exhaustion::OnExhaustion;

mod build;
mod decide;
mod delays;
mod partial;
mod preset;
#[cfg(test)]
mod tests;

pub use delays::Delays;
pub use partial::PartialPolicy;

/// An immutable, validated, effective retry policy (spec §2).
///
/// ```
/// use ojs_retry::{RetryPolicy, JitterSource};
/// let p = RetryPolicy::default(); // §8
/// assert_eq!(p.max_attempts(), 3);
/// assert_eq!(p.delay(2, JitterSource::Uniform(0.5)).unwrap(), 2_000);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    max_attempts: u64,
    initial_interval_ms: u64,
    backoff_coefficient: f64,
    max_interval_ms: u64,
    jitter: bool,
    non_retryable_errors: Vec<String>,
    on_exhaustion: OnExhaustion,
    strategy: Strategy,
    backoff: Backoff,
    /// [`Backoff::capped_delays`], computed once.
    capped: CappedDelays,
    /// Set for a policy built from another system's configuration.
    preset: Option<alloc::boxed::Box<crate::presets::Preset>>,
}

/// The §8 defaults (RET-09): the default policy, and what fills the fields
/// no layer sets (without building a whole default policy each time).
struct Defaults {
    max_attempts: u64,
    initial_interval_ms: u64,
    backoff_coefficient: f64,
    max_interval_ms: u64,
    jitter: bool,
    on_exhaustion: OnExhaustion,
    strategy: Strategy,
}

impl Defaults {
    const OJS: Self = Self {
        max_attempts: 3,
        initial_interval_ms: 1_000,
        backoff_coefficient: 2.0,
        max_interval_ms: 300_000,
        jitter: true,
        on_exhaustion: OnExhaustion::Discard,
        strategy: Strategy::Exponential,
    };
}

impl Default for RetryPolicy {
    /// The §8 default policy (RET-09).
    fn default() -> Self {
        let d = Defaults::OJS;
        Self::assemble(
            d.max_attempts,
            d.initial_interval_ms,
            d.backoff_coefficient,
            d.max_interval_ms,
            d.jitter,
            Vec::new(),
            d.on_exhaustion,
            d.strategy,
        )
    }
}

impl RetryPolicy {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        max_attempts: u64,
        initial_interval_ms: u64,
        backoff_coefficient: f64,
        max_interval_ms: u64,
        jitter: bool,
        non_retryable_errors: Vec<String>,
        on_exhaustion: OnExhaustion,
        strategy: Strategy,
    ) -> Self {
        let curve = match strategy {
            Strategy::None => Curve::Constant,
            Strategy::Linear => Curve::Linear,
            Strategy::Exponential => Curve::Exponential(backoff_coefficient),
            Strategy::Polynomial => Curve::Polynomial(backoff_coefficient),
        };
        let backoff = Backoff {
            initial_ms: initial_interval_ms,
            curve,
            offset_ms: 0,
            cap_ms: max_interval_ms,
            spread: if jitter {
                Spread::Proportional
            } else {
                Spread::None
            },
            rounding: Rounding::Nearest,
        };
        Self {
            max_attempts,
            initial_interval_ms,
            backoff_coefficient,
            max_interval_ms,
            jitter,
            non_retryable_errors,
            on_exhaustion,
            strategy,
            capped: backoff.capped_delays(),
            backoff,
            preset: None,
        }
    }

    /// This policy (the nearest plain translation) carrying a preset.
    pub(crate) fn into_preset(mut self, preset: alloc::boxed::Box<crate::presets::Preset>) -> Self {
        self.preset = Some(preset);
        self
    }

    pub(crate) fn preset_ref(&self) -> Option<&crate::presets::Preset> {
        self.preset.as_deref()
    }

    /// `max_attempts`: total attempts including the first (0 behaves as 1).
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// assert_eq!(RetryPolicy::default().max_attempts(), 3);
    /// assert_eq!(RetryPolicy::from_json(r#"{"max_attempts": 0}"#)?.max_attempts(), 0);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn max_attempts(&self) -> u64 {
        self.max_attempts
    }
    /// `initial_interval` in ms.
    ///
    /// ```
    /// let p = ojs_retry::RetryPolicy::from_json(r#"{"initial_interval": "PT0.25S"}"#)?;
    /// assert_eq!(p.initial_interval_ms(), 250);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn initial_interval_ms(&self) -> u64 {
        self.initial_interval_ms
    }
    /// `backoff_coefficient`.
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// assert_eq!(RetryPolicy::default().backoff_coefficient(), 2.0);
    /// assert_eq!(RetryPolicy::from_json(r#"{"backoff_coefficient": 1.5}"#)?.backoff_coefficient(), 1.5);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn backoff_coefficient(&self) -> f64 {
        self.backoff_coefficient
    }
    /// `max_interval` in ms.
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// assert_eq!(RetryPolicy::default().max_interval_ms(), 300_000); // PT5M
    /// assert_eq!(RetryPolicy::from_json(r#"{"max_interval": "PT1H"}"#)?.max_interval_ms(), 3_600_000);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn max_interval_ms(&self) -> u64 {
        self.max_interval_ms
    }
    /// `jitter`.
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// assert!(RetryPolicy::default().jitter());
    /// assert!(!RetryPolicy::from_json(r#"{"jitter": false}"#)?.jitter());
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn jitter(&self) -> bool {
        self.jitter
    }
    /// `non_retryable_errors`.
    ///
    /// ```
    /// let p = ojs_retry::RetryPolicy::from_json(r#"{"non_retryable_errors": ["auth.*", "validation.bad_email"]}"#)?;
    /// assert_eq!(p.non_retryable_errors(), ["auth.*", "validation.bad_email"]);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn non_retryable_errors(&self) -> &[String] {
        &self.non_retryable_errors
    }
    /// `on_exhaustion`.
    ///
    /// ```
    /// use ojs_retry::{OnExhaustion, RetryPolicy};
    /// assert_eq!(RetryPolicy::default().on_exhaustion(), OnExhaustion::Discard);
    /// ```
    #[must_use]
    pub fn on_exhaustion(&self) -> OnExhaustion {
        self.on_exhaustion
    }
    /// The backoff strategy (`backoff_strategy`, exponential when absent).
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, Strategy};
    /// assert_eq!(RetryPolicy::default().strategy(), Strategy::Exponential);
    /// assert_eq!(RetryPolicy::from_json(r#"{"backoff_strategy": "constant"}"#)?.strategy(), Strategy::None);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }
    /// The number of retries the policy allows: `max(max_attempts, 1) − 1`.
    ///
    /// ```
    /// assert_eq!(ojs_retry::RetryPolicy::default().max_retries(), 2);
    /// ```
    #[must_use]
    pub fn max_retries(&self) -> u64 {
        self.max_attempts.saturating_sub(1)
    }

    /// The canonical effective policy as compact JSON: the §2.1 field order,
    /// canonical durations ([`crate::format_duration`]), and
    /// `backoff_strategy` only when it is not the default exponential (so
    /// that the output stays valid against the §14 schema whenever it can).
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// let p = RetryPolicy::from_json(r#"{"initial_interval": "PT60S", "max_interval": "PT1H"}"#)?;
    /// assert!(p.to_json().contains(r#""initial_interval":"PT1M","backoff_coefficient":2.0,"max_interval":"PT1H""#));
    /// assert_eq!(RetryPolicy::from_json(&p.to_json())?, p); // round-trips
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        self.write(false)
    }

    /// [`RetryPolicy::to_json`], indented.
    ///
    /// ```
    /// let text = ojs_retry::RetryPolicy::default().to_json_pretty();
    /// assert!(text.starts_with("{\n  \"max_attempts\": 3,\n  \"initial_interval\": \"PT1S\","));
    /// ```
    #[must_use]
    pub fn to_json_pretty(&self) -> String {
        self.write(true)
    }

    fn write(&self, pretty: bool) -> String {
        let text = if pretty {
            serde_json::to_string_pretty(self)
        } else {
            serde_json::to_string(self)
        };
        // Serialising a policy cannot fail: every value is a string, an
        // integer, a finite double or a boolean.
        text.unwrap_or_default()
    }
}

impl Serialize for RetryPolicy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(p) = &self.preset {
            let mut st = s.serialize_struct("RetryPolicy", 1)?;
            st.serialize_field("preset", &**p)?;
            return st.end();
        }
        let extra = usize::from(self.strategy != Strategy::Exponential);
        let mut st = s.serialize_struct("RetryPolicy", extra.saturating_add(7))?;
        st.serialize_field("max_attempts", &self.max_attempts)?;
        st.serialize_field(
            "initial_interval",
            &duration::format_ms(self.initial_interval_ms),
        )?;
        st.serialize_field("backoff_coefficient", &self.backoff_coefficient)?;
        st.serialize_field("max_interval", &duration::format_ms(self.max_interval_ms))?;
        st.serialize_field("jitter", &self.jitter)?;
        st.serialize_field("non_retryable_errors", &self.non_retryable_errors)?;
        st.serialize_field("on_exhaustion", self.on_exhaustion.as_str())?;
        if extra == 1 {
            st.serialize_field("backoff_strategy", self.strategy.as_str())?;
        }
        st.end()
    }
}

/// A policy embedded in the caller's own serde data, read and validated as
/// [`RetryPolicy::from_deserializer`] reads it; an error's message is the
/// engine error's one line.
impl<'de> serde::Deserialize<'de> for RetryPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::from_deserializer(d).map_err(serde::de::Error::custom)
    }
}
