//! `RetryState` and `Reservation`: the core's job state and visibility
//! timeout as JS classes.

use std::cell::RefCell;

use ojs_retry::{Case, ErrorCode};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::convert::{self, JsResult, num};
use crate::policy::RetryPolicy;

/// A job's retry state: the attempt that last ran, a bounded error
/// history, the next retry instant, and whether it ended (spec §10).
///
/// Behind a `RefCell` and every method on `&self`: `recordFailure` reads
/// its arguments (which may run the caller's getters, and throw) before it
/// borrows the state mutably, so an exception thrown there cannot leave
/// the state borrowed. No borrow is held while the caller's code can run
/// (and the engine never calls back), so no borrow can fail.
#[wasm_bindgen]
pub struct RetryState(RefCell<ojs_retry::RetryState>);

/// The `historyLimit` of an option bag, if given.
fn history_limit(options: &JsValue) -> JsResult<Option<usize>> {
    Ok(convert::options(options)?.history_limit)
}

#[wasm_bindgen]
impl RetryState {
    /// A fresh state (no attempt has run); `historyLimit` bounds the error
    /// history (at least 10, spec §10.1).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "{ historyLimit?: number }")]
        options: &JsValue,
    ) -> JsResult<RetryState> {
        Ok(Self(RefCell::new(match history_limit(options)? {
            Some(n) => ojs_retry::RetryState::new().with_history_limit(n)?,
            None => ojs_retry::RetryState::new(),
        })))
    }

    /// A state from its §10 document (an object or JSON text).
    #[wasm_bindgen(js_name = fromJSON)]
    pub fn from_json(
        #[wasm_bindgen(unchecked_param_type = "RetryStateDocument | string")] state: &JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "{ historyLimit?: number }")]
        options: &JsValue,
    ) -> JsResult<RetryState> {
        let limit = history_limit(options)?.unwrap_or(ojs_retry::state::MIN_HISTORY);
        if state.is_string() {
            let text = convert::string(state, ErrorCode::StateInvalid, "")?;
            return Ok(Self(RefCell::new(ojs_retry::RetryState::from_json(
                &text, limit,
            )?)));
        }
        Ok(Self(RefCell::new(ojs_retry::RetryState::from_value(
            &convert::value(state, ErrorCode::StateInvalid)?,
            limit,
        )?)))
    }

    /// The attempt that last ran (0 before any).
    #[wasm_bindgen(getter)]
    pub fn attempt(&self) -> f64 {
        num(self.0.borrow().attempt())
    }

    /// The number the next attempt will have.
    #[wasm_bindgen(getter, js_name = nextAttempt)]
    pub fn next_attempt(&self) -> f64 {
        num(self.0.borrow().next_attempt())
    }

    /// When the pending retry is due (epoch ms), or `null`.
    #[wasm_bindgen(getter, js_name = nextRetryAt, unchecked_return_type = "number | null")]
    pub fn next_retry_at(&self) -> JsValue {
        convert::or_null(self.0.borrow().next_retry_at().map(num))
    }

    /// The terminal action (`"discard"` / `"dead_letter"`), or `null` while
    /// the job may still run.
    #[wasm_bindgen(getter, unchecked_return_type = "\"discard\" | \"dead_letter\" | null")]
    pub fn terminal(&self) -> JsValue {
        convert::or_null(self.0.borrow().terminal().map(|a| a.as_str()))
    }

    /// The most failures the history keeps.
    #[wasm_bindgen(getter, js_name = historyLimit)]
    pub fn history_limit(&self) -> f64 {
        num(self.0.borrow().history_limit() as u64)
    }

    /// The error history, oldest first (camelCase, `timestampMs` epoch ms).
    #[wasm_bindgen(getter, unchecked_return_type = "ErrorRecord[]")]
    pub fn errors(&self) -> JsResult<JsValue> {
        let state = self.0.borrow();
        let records: Vec<_> = state
            .errors()
            .map(|r| ojs_retry::Cased(r, Case::Camel))
            .collect();
        convert::out(&records, "errors")
    }

    /// Records the failure of the next attempt (`attempt` may be left out)
    /// and returns the policy's decision; the state takes it.
    #[wasm_bindgen(js_name = recordFailure, unchecked_return_type = "Decision")]
    pub fn record_failure(
        &self,
        policy: &RetryPolicy,
        #[wasm_bindgen(unchecked_optional_param_type = "Failure")] failure: &JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DecideOptions")] options: &JsValue,
    ) -> JsResult<JsValue> {
        // Every argument is read (getters run) before the state is looked
        // at: a getter may call back into this state.
        let failure = if failure.is_undefined() || failure.is_null() {
            None
        } else {
            Some(convert::value(failure, ErrorCode::InvalidArgument)?)
        };
        let o = convert::options(options)?;
        let now = convert::now(&o)?;
        let next = self.0.borrow().next_attempt();
        let failure = match failure {
            // `null` or `undefined`: no failure details (as an absent option is).
            None => ojs_retry::Failure::new(next),
            Some(v) => ojs_retry::Failure::from_value(&v, Case::Camel, Some(next))?,
        };
        let d =
            self.0
                .borrow_mut()
                .record_failure(&policy.0, &failure, now, o.jitter_or_entropy())?;
        convert::out(&ojs_retry::Cased(&d, Case::Camel), "decision")
    }

    /// The §10 state document (snake_case, RFC 3339 instants).
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "RetryStateDocument")]
    pub fn to_json(&self) -> JsResult<JsValue> {
        convert::out(&*self.0.borrow(), "state")
    }

    /// The §10 state document as JSON text.
    #[wasm_bindgen(js_name = toString)]
    pub fn to_string_js(&self) -> String {
        self.0.borrow().to_json()
    }
}

/// A reservation of one attempt: its visibility-timeout deadline, extended
/// by heartbeats; once passed, the attempt counts as a timed-out failure
/// (RET-12, RET-13).
#[wasm_bindgen]
pub struct Reservation(ojs_retry::Reservation);

/// What a heartbeat did: the new deadline, or that the reservation had
/// already expired.
#[derive(Serialize)]
struct Heartbeat {
    extended: bool,
    deadline: Option<u64>,
}

/// A reservation's expiry as the failure `decide` / `recordFailure` take.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Expiry {
    attempt: u64,
    timed_out: bool,
}

#[wasm_bindgen]
impl Reservation {
    /// Reserves `attempt` at `now` (default: the clock) for
    /// `visibilityTimeoutMs`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "number")] attempt: &JsValue,
        #[wasm_bindgen(js_name = visibilityTimeoutMs, unchecked_param_type = "number")]
        visibility_timeout_ms: &JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] now: &JsValue,
    ) -> JsResult<Reservation> {
        let attempt = convert::uint(attempt, "attempt")?;
        let timeout = convert::uint(visibility_timeout_ms, "visibility_timeout_ms")?;
        let now = convert::now_or_clock(now)?;
        Ok(Self(ojs_retry::Reservation::new(attempt, now, timeout)?))
    }

    /// The reserved attempt.
    #[wasm_bindgen(getter)]
    pub fn attempt(&self) -> f64 {
        num(self.0.attempt())
    }

    /// The visibility timeout, in milliseconds.
    #[wasm_bindgen(getter, js_name = visibilityTimeoutMs)]
    pub fn visibility_timeout_ms(&self) -> f64 {
        num(self.0.visibility_timeout_ms())
    }

    /// The current deadline (epoch ms).
    #[wasm_bindgen(getter)]
    pub fn deadline(&self) -> f64 {
        num(self.0.deadline())
    }

    /// Extends the deadline to `now + visibilityTimeoutMs`, unless it has
    /// already passed.
    #[wasm_bindgen(unchecked_return_type = "{ extended: boolean; deadline: number | null }")]
    pub fn heartbeat(
        &mut self,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] now: &JsValue,
    ) -> JsResult<JsValue> {
        let now = convert::now_or_clock(now)?;
        let h = match self.0.heartbeat(now)? {
            ojs_retry::Heartbeat::Extended { deadline } => Heartbeat {
                extended: true,
                deadline: Some(deadline),
            },
            ojs_retry::Heartbeat::Expired => Heartbeat {
                extended: false,
                deadline: None,
            },
        };
        convert::out(&h, "heartbeat")
    }

    /// Whether the deadline has passed at `now`.
    #[wasm_bindgen(js_name = isExpired)]
    pub fn is_expired(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] now: &JsValue,
    ) -> JsResult<bool> {
        Ok(self.0.is_expired(convert::now_or_clock(now)?)?)
    }

    /// The timed-out failure of the attempt once expired, else `null`.
    #[wasm_bindgen(unchecked_return_type = "Failure | null")]
    pub fn expiry(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] now: &JsValue,
    ) -> JsResult<JsValue> {
        match self.0.expiry(convert::now_or_clock(now)?)? {
            Some(f) => convert::out(
                &Expiry {
                    attempt: f.attempt,
                    timed_out: f.timed_out,
                },
                "expiry",
            ),
            None => Ok(JsValue::NULL),
        }
    }
}
