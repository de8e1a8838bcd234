//! Preset policies: another system's retry configuration
//! ([`crate::presets`]) wrapped as a policy whose plain OJS fields are the
//! nearest translation.

use super::RetryPolicy;
use crate::error::Error;
use crate::presets::{self, Plain, Preset};
use crate::value::Value;

impl RetryPolicy {
    /// A preset policy: the nearest plain policy carrying the preset.
    pub(super) fn from_preset((preset, plain): (Preset, Plain)) -> Self {
        Self::assemble(
            plain.max_attempts,
            plain.initial_interval_ms,
            plain.backoff_coefficient,
            plain.max_interval_ms,
            plain.jitter,
            plain.non_retryable_errors,
            plain.on_exhaustion,
            plain.strategy,
        )
        .into_preset(alloc::boxed::Box::new(preset))
    }

    /// A preset policy: `system` (one of
    /// [`PRESET_SYSTEMS`](crate::PRESET_SYSTEMS)) configured with that
    /// system's own options as a JSON object (`"{}"` for its defaults).
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` with field `preset.<option>` for
    /// every bad or unknown option, or `preset.system` for an unknown
    /// system.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// // Celery: `retry_backoff=True, retry_jitter=False`: 1, 2, 4 ... s.
    /// let p = RetryPolicy::preset_json("celery", r#"{"retry_backoff": true, "retry_jitter": false}"#)?;
    /// assert_eq!(p.delay(3, JitterSource::Uniform(0.0))?, 4_000);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn preset_json(system: &str, config_json: &str) -> Result<Self, Error> {
        presets::from_json(system, config_json).map(Self::from_preset)
    }

    /// [`RetryPolicy::preset_json`] with the configuration as a [`Value`]
    /// (what the bindings pass for a JS object or a Python dict; `null`
    /// for the defaults).
    ///
    /// # Errors
    ///
    /// As [`RetryPolicy::preset_json`]; a `system` key inside the
    /// configuration must agree with `system`.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, Value};
    /// let p = RetryPolicy::preset("rq", &Value::from_json(r#"{"max": 3, "interval": [1, 5]}"#).unwrap())?;
    /// assert_eq!(p.to_json(), r#"{"preset":{"interval":[1,5],"max":3,"rule":"raised","system":"rq"}}"#);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn preset(system: &str, config: &Value) -> Result<Self, Error> {
        presets::from_options(system, config).map(Self::from_preset)
    }

    /// The preset's system name, when this policy is a preset.
    ///
    /// ```
    /// let p = ojs_retry::RetryPolicy::preset_json("oban", "{}").unwrap();
    /// assert_eq!(p.preset_system(), Some("oban"));
    /// assert_eq!(ojs_retry::RetryPolicy::default().preset_system(), None);
    /// ```
    #[must_use]
    pub fn preset_system(&self) -> Option<&str> {
        self.preset_ref().map(Preset::system)
    }
}
