//! Deciding after a failure: the rules of [`crate::decision`] applied with
//! this policy's limits, patterns and backoff.

use alloc::borrow::ToOwned;

use super::{OnExhaustion, RetryPolicy};
use crate::decision::{Action, Decision, Reason};
use crate::error::Error;
use crate::failure::{Failure, HandlerCode};
use crate::jitter::JitterSource;
use crate::matching::first_match;
use crate::presets::Why;
use crate::time::{MAX_INSTANT_MS, check_instant};

/// The action `on_exhaustion` names.
fn terminal_action(on_exhaustion: OnExhaustion) -> Action {
    match on_exhaustion {
        OnExhaustion::Discard => Action::Discard,
        OnExhaustion::DeadLetter => Action::DeadLetter,
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
            if let Some((action, why)) = p.terminal(failure.attempt, error_type, &failure.ancestors)
            {
                d.action = terminal_action(action);
                d.reason = match why {
                    Why::Exhausted => Reason::Exhausted,
                    Why::Rule(pattern) => Reason::NonRetryable { pattern },
                };
                return Ok(d);
            }
        }
        let terminal = terminal_action(self.on_exhaustion());
        if self.preset_ref().is_none()
            && !failure.timed_out
            && let Some(t) = &failure.error_type
            && let Some(pattern) = first_match(t, self.non_retryable_errors())
        {
            d.action = terminal;
            d.reason = Reason::NonRetryable {
                pattern: Some(pattern.to_owned()),
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
