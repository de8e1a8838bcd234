//! The nearest plain OJS policy of a preset policy.

use crate::policy::RetryPolicy;

impl RetryPolicy {
    /// The plain OJS policy nearest to this one: for a preset policy, its
    /// translation to the §2 fields (what its accessors return, without
    /// the preset's own formula and rules); any other policy is returned
    /// unchanged. `docs/presets.md` says how each system translates.
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// let p = RetryPolicy::preset_json("celery", r#"{"retry_backoff": true, "max_retries": 4}"#)?;
    /// let plain = p.nearest_plain();
    /// assert_eq!(plain.preset_system(), None);
    /// assert_eq!(plain.max_attempts(), p.max_attempts());
    /// assert!(plain.to_json().starts_with(r#"{"max_attempts":5,"#));
    /// assert_eq!(RetryPolicy::from_json(&plain.to_json())?, plain);
    /// assert_eq!(RetryPolicy::default().nearest_plain(), RetryPolicy::default());
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[must_use]
    pub fn nearest_plain(&self) -> RetryPolicy {
        RetryPolicy::assemble(
            self.max_attempts(),
            self.initial_interval_ms(),
            self.backoff_coefficient(),
            self.max_interval_ms(),
            self.jitter(),
            self.non_retryable_errors().to_vec(),
            self.on_exhaustion(),
            self.strategy(),
        )
    }
}
