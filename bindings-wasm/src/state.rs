//! `RetryState` and `Reservation`: the exports the JS layer's classes call
//! with their handles.

use std::cell::RefCell;

use ojs_retry::{ErrorCode, Heartbeat};

use crate::fw::{self, Core, Result, Val, ret};
use crate::options::{Call, CallOptions};
use crate::out;
use crate::policy::{PolicyRef, typed_failure};
use crate::read;

/// A job's retry state. Behind a `RefCell`, borrowed only while the core
/// runs: every argument is read (the caller's getters run) before, and the
/// core never calls back, so no borrow can fail.
pub struct State(RefCell<ojs_retry::RetryState>);

/// The handle the JS layer holds (natively an `External`).
#[cfg(not(target_arch = "wasm32"))]
pub type StateRef = fw::Handle<State>;

/// The handle the JS layer holds.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub struct StateRef {
    s: State,
}

#[cfg(target_arch = "wasm32")]
impl std::ops::Deref for StateRef {
    type Target = State;
    fn deref(&self) -> &State {
        &self.s
    }
}

fn wrap(s: ojs_retry::RetryState) -> StateRef {
    #[cfg(not(target_arch = "wasm32"))]
    return fw::handle(State(RefCell::new(s)));
    #[cfg(target_arch = "wasm32")]
    {
        fw::reserve_heap();
        StateRef {
            s: State(RefCell::new(s)),
        }
    }
}

/// The history limit an option bag asks for.
fn history_limit<H: read::Host>(h: &H, options: H::V) -> Core<Option<usize>> {
    Ok(CallOptions::read(h, options, Call::History)?.history_limit)
}

/// A job that has not run yet (attempt 0).
#[cfg_attr(not(target_arch = "wasm32"), napi_derive::napi(js_name = "stateNew"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateNew")
)]
pub fn state_new(options: Val, ctx: Val) -> Result<StateRef> {
    let h = fw::host(&ctx);
    ret((|| {
        let state = ojs_retry::RetryState::new();
        Ok(wrap(match history_limit(&h, options)? {
            Some(limit) => state.with_history_limit(limit)?,
            None => state,
        }))
    })())
}

/// A state from its §10 document (an object, or its JSON text).
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "stateFromJson")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateFromJson")
)]
pub fn state_from_json(state: Val, options: Val, ctx: Val) -> Result<StateRef> {
    let h = fw::host(&ctx);
    ret((|| {
        let limit = history_limit(&h, options)?.unwrap_or(ojs_retry::state::MIN_HISTORY);
        let s = if read::is_string(&h, &state) {
            let text = read::string_arg(&h, &state, ErrorCode::StateInvalid, "")?;
            ojs_retry::RetryState::from_json(&text, limit)?
        } else {
            let doc = read::document(&h, state, ErrorCode::StateInvalid)?;
            ojs_retry::RetryState::from_value(&doc, limit)?
        };
        Ok(wrap(s))
    })())
}

/// The attempt that last ran (0 before the first).
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "stateAttempt")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateAttempt")
)]
pub fn state_attempt(state: &StateRef) -> f64 {
    out::num(state.0.borrow().attempt())
}

/// The number of the next attempt.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "stateNextAttempt")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateNextAttempt")
)]
pub fn state_next_attempt(state: &StateRef) -> f64 {
    out::num(state.0.borrow().next_attempt())
}

/// When the next attempt is due (epoch ms); none before a retry.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "stateNextRetryAt")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateNextRetryAt")
)]
pub fn state_next_retry_at(state: &StateRef) -> Option<f64> {
    state.0.borrow().next_retry_at().map(out::num)
}

/// `"discard"` or `"dead_letter"` once the job is finished.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "stateTerminal")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateTerminal")
)]
pub fn state_terminal(state: &StateRef) -> Option<String> {
    state.0.borrow().terminal().map(|a| a.as_str().to_owned())
}

/// The most error records the history keeps.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "stateHistoryLimit")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateHistoryLimit")
)]
pub fn state_history_limit(state: &StateRef) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let limit = state.0.borrow().history_limit() as f64;
    limit
}

/// The kept error records, oldest first, as JSON text (camelCase,
/// `timestampMs` in epoch ms).
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "stateErrors")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateErrors")
)]
pub fn state_errors(state: &StateRef) -> String {
    out::json(&out::Records(&state.0.borrow()))
}

/// The §10 state document as compact JSON text.
#[cfg_attr(not(target_arch = "wasm32"), napi_derive::napi(js_name = "stateText"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateText")
)]
pub fn state_text(state: &StateRef) -> String {
    state.0.borrow().to_json()
}

/// Records that the next attempt failed (a failure given field by field;
/// `attempt`, when given, must be the next attempt) and writes the decision
/// `policy` makes into `out`, as `policyDecide` does.
#[allow(clippy::too_many_arguments)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "stateRecord")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateRecord")
)]
pub fn state_record(
    state: &StateRef,
    policy: &PolicyRef,
    attempt: Option<f64>,
    error_type: Option<String>,
    code: Option<String>,
    timed_out: Option<bool>,
    message: Option<String>,
    u: Option<f64>,
    seed: Option<f64>,
    key: Option<String>,
    now: f64,
    out: fw::Slots,
) -> Result<Option<String>> {
    ret((|| {
        let next = state.0.borrow().next_attempt();
        let failure = typed_failure(attempt, error_type, code, timed_out, message, Some(next))?;
        let o = CallOptions::typed(Call::Decide, u, seed, key, Some(now))?;
        let now = o.now.unwrap_or_default();
        let d =
            state
                .0
                .borrow_mut()
                .record_failure(&policy.0, &failure, now, o.jitter_or_entropy())?;
        out::decision(&d, out)
    })())
}

/// [`state_record`] with the failure and the options as the caller passed
/// them (`failure` `undefined` or `null`: no details); `now` is the JS
/// layer's clock, for options without one.
#[allow(clippy::too_many_arguments)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "stateRecordWith")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "stateRecordWith")
)]
pub fn state_record_with(
    state: &StateRef,
    policy: &PolicyRef,
    failure: Val,
    options: Val,
    now: f64,
    ctx: Val,
    out: fw::Slots,
) -> Result<Option<String>> {
    let h = fw::host(&ctx);
    ret((|| {
        // Every argument is read (getters run) before the state is looked
        // at: a getter may call back into this state.
        let absent = matches!(
            read::Host::prim(&h, &failure),
            Ok(read::Prim::Undefined | read::Prim::Null)
        );
        let doc = if absent {
            None
        } else {
            Some(read::document(&h, failure, ErrorCode::InvalidArgument)?)
        };
        let o = CallOptions::read(&h, options, Call::Decide)?;
        let now = match o.now {
            Some(n) => n,
            None => ojs_retry::uint_from_f64("now", now)?,
        };
        let next = state.0.borrow().next_attempt();
        let failure = match doc {
            None => ojs_retry::Failure::new(next),
            Some(v) => crate::keys::failure(v, Some(next))?,
        };
        let d =
            state
                .0
                .borrow_mut()
                .record_failure(&policy.0, &failure, now, o.jitter_or_entropy())?;
        out::decision(&d, out)
    })())
}

/// A worker's hold on one attempt of a job.
pub struct Hold(RefCell<ojs_retry::Reservation>);

/// The handle the JS layer holds (natively an `External`).
#[cfg(not(target_arch = "wasm32"))]
pub type ReservationRef = fw::Handle<Hold>;

/// The handle the JS layer holds.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub struct ReservationRef {
    r: Hold,
}

#[cfg(target_arch = "wasm32")]
impl std::ops::Deref for ReservationRef {
    type Target = Hold;
    fn deref(&self) -> &Hold {
        &self.r
    }
}

/// Reserves `attempt` for `visibilityTimeoutMs` from `now` (the JS layer's
/// clock when the caller gave none).
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "reservationNew")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "reservationNew")
)]
pub fn reservation_new(
    attempt: Val,
    visibility_timeout_ms: Val,
    now: Val,
    ctx: Val,
) -> Result<ReservationRef> {
    let h = fw::host(&ctx);
    ret((|| {
        let attempt = read::uint_arg(&h, &attempt, "attempt")?;
        let timeout = read::uint_arg(&h, &visibility_timeout_ms, "visibility_timeout_ms")?;
        let now = read::uint_arg(&h, &now, "now")?;
        let r = RefCell::new(ojs_retry::Reservation::new(attempt, now, timeout)?);
        #[cfg(not(target_arch = "wasm32"))]
        return Ok(fw::handle(Hold(r)));
        #[cfg(target_arch = "wasm32")]
        {
            fw::reserve_heap();
            Ok(ReservationRef { r: Hold(r) })
        }
    })())
}

/// `[attempt, visibilityTimeoutMs, deadline]`.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "reservationProps")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "reservationProps")
)]
pub fn reservation_props(reservation: &ReservationRef, out: fw::Slots) {
    let r = reservation.0.borrow();
    let values = [
        out::num(r.attempt()),
        out::num(r.visibility_timeout_ms()),
        out::num(r.deadline()),
    ];
    let mut out = out;
    fw::write_f64s(&mut out, &values);
}

/// Extends the deadline to `now + visibilityTimeoutMs` and returns it,
/// unless it had already passed (−1).
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "reservationHeartbeat")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "reservationHeartbeat")
)]
pub fn reservation_heartbeat(reservation: &ReservationRef, now: Val, ctx: Val) -> Result<f64> {
    let h = fw::host(&ctx);
    ret((|| {
        let now = read::uint_arg(&h, &now, "now")?;
        Ok(match reservation.0.borrow_mut().heartbeat(now)? {
            Heartbeat::Extended { deadline } => out::num(deadline),
            Heartbeat::Expired => -1.0,
        })
    })())
}

/// Whether the deadline has passed at `now`.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "reservationIsExpired")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "reservationIsExpired")
)]
pub fn reservation_is_expired(reservation: &ReservationRef, now: Val, ctx: Val) -> Result<bool> {
    let h = fw::host(&ctx);
    ret((|| {
        let now = read::uint_arg(&h, &now, "now")?;
        Ok(reservation.0.borrow().is_expired(now)?)
    })())
}

/// Once expired, the attempt's failure as JSON text (`{ attempt, timedOut,
/// type? }`, what `decide` and `recordFailure` take); none before.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "reservationExpiry")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "reservationExpiry")
)]
pub fn reservation_expiry(
    reservation: &ReservationRef,
    now: Val,
    ctx: Val,
) -> Result<Option<String>> {
    let h = fw::host(&ctx);
    ret((|| {
        let now = read::uint_arg(&h, &now, "now")?;
        Ok(reservation.0.borrow().expiry(now)?.map(|f| {
            let mut m = serde_json::Map::new();
            m.insert("attempt".into(), f.attempt.into());
            m.insert("timedOut".into(), f.timed_out.into());
            if let Some(t) = f.error_type {
                m.insert("type".into(), t.into());
            }
            serde_json::Value::Object(m).to_string()
        }))
    })())
}
