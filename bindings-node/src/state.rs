//! `RetryState` and `Reservation`: napi-rs classes wrapping the core's.

use std::cell::RefCell;

use napi::bindgen_prelude::{Either, Env, Unknown};
use napi_derive::napi;
use ojs_retry::{Case, ErrorCode, Failure, Heartbeat, Map, Value};

use crate::convert::{
    NumberArg, StringArg, clock_ms, document, json_text, now_or_clock, num, options, to_js, uint,
    wrong_type,
};
use crate::error::OrThrow;
use crate::policy::RetryPolicy;

/// The history limit an option bag asks for; the core's default without one.
fn history_limit(env: &Env, opts: Option<Unknown<'_>>) -> napi::Result<Option<usize>> {
    Ok(options(env, opts)?.history_limit)
}

/// A job's retry state: the attempt that last ran, a bounded error history,
/// when the next attempt is due, and whether the job is finished.
#[napi]
pub struct RetryState {
    // A RefCell, not `&mut self`: an argument's getter may call back into
    // this state while its arguments are read, which must find it
    // unborrowed (the wasm build does the same).
    inner: RefCell<ojs_retry::RetryState>,
}

#[napi]
impl RetryState {
    /// A job that has not run yet (attempt 0).
    #[napi(constructor, ts_args_type = "options?: { historyLimit?: number }")]
    pub fn new(env: Env, options: Option<Unknown<'_>>) -> napi::Result<Self> {
        let state = ojs_retry::RetryState::new();
        let inner = match history_limit(&env, options)? {
            Some(limit) => state.with_history_limit(limit).or_throw(&env)?,
            None => state,
        };
        Ok(Self {
            inner: RefCell::new(inner),
        })
    }

    /// Reads a §10 state document (an object, or its JSON text).
    #[napi(
        factory,
        js_name = "fromJSON",
        ts_args_type = "state: RetryStateDocument | string, options?: { historyLimit?: number }"
    )]
    pub fn from_json(
        env: Env,
        state: StringArg<'_>,
        options: Option<Unknown<'_>>,
    ) -> napi::Result<Self> {
        let limit = history_limit(&env, options)?
            .unwrap_or_else(|| ojs_retry::RetryState::new().history_limit());
        let inner = match state {
            Either::A(units) => {
                let text = json_text(&env, ErrorCode::StateInvalid, &units)?;
                ojs_retry::RetryState::from_json(&text, limit)
            }
            Either::B(v) => ojs_retry::RetryState::from_value(
                &document(&env, v, ErrorCode::StateInvalid)?,
                limit,
            ),
        }
        .or_throw(&env)?;
        Ok(Self {
            inner: RefCell::new(inner),
        })
    }

    /// The attempt that last ran (0 before the first).
    #[napi(getter)]
    pub fn attempt(&self) -> f64 {
        num(self.inner.borrow().attempt())
    }

    /// The number of the next attempt (`attempt + 1`).
    #[napi(getter)]
    pub fn next_attempt(&self) -> f64 {
        num(self.inner.borrow().next_attempt())
    }

    /// When the next attempt is due (epoch ms), or null.
    #[napi(getter)]
    pub fn next_retry_at(&self) -> Option<f64> {
        self.inner.borrow().next_retry_at().map(num)
    }

    /// `"discard"` or `"dead_letter"` once the job is finished, else null.
    #[napi(getter, ts_return_type = "\"discard\" | \"dead_letter\" | null")]
    pub fn terminal(&self) -> Option<&'static str> {
        self.inner
            .borrow()
            .terminal()
            .map(ojs_retry::Action::as_str)
    }

    /// The most error records the history keeps.
    #[napi(getter)]
    pub fn history_limit(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let limit = self.inner.borrow().history_limit() as f64;
        limit
    }

    /// The kept error records, oldest first (camelCase, `timestampMs` in
    /// epoch ms).
    #[napi(getter, ts_return_type = "ErrorRecord[]")]
    pub fn errors(&self) -> napi::Result<serde_json::Value> {
        let state = self.inner.borrow();
        let records: Vec<_> = state
            .errors()
            .map(|r| ojs_retry::Cased(r, Case::Camel))
            .collect();
        to_js(&records)
    }

    /// Records that the next attempt failed (`failure.attempt`, when given,
    /// must be `nextAttempt`) and returns the decision `policy` makes.
    #[napi(
        ts_args_type = "policy: RetryPolicy, failure?: Failure, options?: DecideOptions",
        ts_return_type = "Decision"
    )]
    pub fn record_failure(
        &self,
        env: Env,
        policy: Either<&RetryPolicy, Unknown<'_>>,
        failure: Option<Unknown<'_>>,
        options: Option<Unknown<'_>>,
    ) -> napi::Result<serde_json::Value> {
        let policy = match policy {
            Either::A(p) => &p.inner,
            Either::B(other) => return Err(wrong_type(&env, "policy", "a RetryPolicy", &other)),
        };
        // Every argument is read (getters run) before the state is looked at.
        let failure = match failure {
            Some(f) => document(&env, f, ErrorCode::InvalidArgument)?,
            None => Value::Object(Map::new()),
        };
        let opts = self::options(&env, options)?;
        let next = self.inner.borrow().next_attempt();
        let failure = Failure::from_value(&failure, Case::Camel, Some(next)).or_throw(&env)?;
        let now = opts.now.unwrap_or_else(clock_ms);
        let d = self
            .inner
            .borrow_mut()
            .record_failure(policy, &failure, now, opts.jitter_or_entropy())
            .or_throw(&env)?;
        to_js(&ojs_retry::Cased(&d, Case::Camel))
    }

    /// The §10 state document (snake_case; RFC 3339 timestamps).
    #[napi(js_name = "toJSON", ts_return_type = "RetryStateDocument")]
    pub fn to_json(&self) -> napi::Result<serde_json::Value> {
        to_js(&*self.inner.borrow())
    }

    /// The §10 state document as compact JSON text.
    #[napi(js_name = "toString")]
    pub fn to_json_text(&self) -> String {
        self.inner.borrow().to_json()
    }
}

/// A worker's hold on one attempt of a job: a visibility-timeout deadline
/// that heartbeats extend, and the attempt's failure once it expires.
#[napi]
pub struct Reservation {
    inner: ojs_retry::Reservation,
}

#[napi]
impl Reservation {
    /// Reserves `attempt` for `visibilityTimeoutMs` from `now` (the system
    /// clock when omitted).
    #[napi(
        constructor,
        ts_args_type = "attempt: number, visibilityTimeoutMs: number, now?: number"
    )]
    pub fn new(
        env: Env,
        attempt: NumberArg<'_>,
        visibility_timeout_ms: NumberArg<'_>,
        now: Option<NumberArg<'_>>,
    ) -> napi::Result<Self> {
        let attempt = uint(&env, "attempt", attempt)?;
        let timeout = uint(&env, "visibility_timeout_ms", visibility_timeout_ms)?;
        let now = now_or_clock(&env, now)?;
        let inner = ojs_retry::Reservation::new(attempt, now, timeout).or_throw(&env)?;
        Ok(Self { inner })
    }

    /// The reserved attempt.
    #[napi(getter)]
    pub fn attempt(&self) -> f64 {
        num(self.inner.attempt())
    }

    /// The visibility timeout in ms.
    #[napi(getter)]
    pub fn visibility_timeout_ms(&self) -> f64 {
        num(self.inner.visibility_timeout_ms())
    }

    /// The deadline, epoch ms.
    #[napi(getter)]
    pub fn deadline(&self) -> f64 {
        num(self.inner.deadline())
    }

    /// Extends the deadline to `now + visibilityTimeoutMs`, unless it has
    /// already passed.
    #[napi(
        ts_args_type = "now?: number",
        ts_return_type = "{ extended: boolean; deadline: number | null }"
    )]
    pub fn heartbeat(
        &mut self,
        env: Env,
        now: Option<NumberArg<'_>>,
    ) -> napi::Result<serde_json::Value> {
        let now = now_or_clock(&env, now)?;
        let h = self.inner.heartbeat(now).or_throw(&env)?;
        Ok(match h {
            Heartbeat::Extended { deadline } => {
                serde_json::json!({ "extended": true, "deadline": deadline })
            }
            Heartbeat::Expired => serde_json::json!({ "extended": false, "deadline": null }),
        })
    }

    /// Whether the deadline has passed at `now`.
    #[napi(ts_args_type = "now?: number")]
    pub fn is_expired(&self, env: Env, now: Option<NumberArg<'_>>) -> napi::Result<bool> {
        let now = now_or_clock(&env, now)?;
        self.inner.is_expired(now).or_throw(&env)
    }

    /// Once expired, the failure to pass to `decide` / `recordFailure`
    /// (the attempt, timed out); null before.
    #[napi(ts_args_type = "now?: number", ts_return_type = "Failure | null")]
    pub fn expiry(&self, env: Env, now: Option<NumberArg<'_>>) -> napi::Result<serde_json::Value> {
        let now = now_or_clock(&env, now)?;
        Ok(match self.inner.expiry(now).or_throw(&env)? {
            Some(f) => expired_failure(&f),
            None => serde_json::Value::Null,
        })
    }
}

/// A timed-out failure as the JS `Failure` object `decide` takes.
fn expired_failure(f: &Failure) -> serde_json::Value {
    let mut out = serde_json::json!({ "attempt": f.attempt, "timedOut": f.timed_out });
    if let (Some(t), Some(obj)) = (&f.error_type, out.as_object_mut()) {
        obj.insert("type".to_owned(), t.clone().into());
    }
    out
}
