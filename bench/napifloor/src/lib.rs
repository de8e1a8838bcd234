//! The Node benchmarks' native floor: a plain napi-rs class whose methods
//! have the shapes of the calls a queue makes on `RetryPolicy`, and do
//! nothing. Built exactly like `bindings-node` (same napi-rs version and
//! features, `napi build --release`), so that what the boundary costs by
//! itself sits next to what the binding costs in the same run.
//!
//! Two floors per call:
//!
//! * `delay`, `decide` — the arguments declared as napi-rs's own types
//!   (`#[napi(object)]` option bags and failure, a `#[napi(object)]`
//!   decision out): napi-rs converts the same values the binding reads and
//!   writes, and nothing else happens. These are the floors of the targets.
//! * `delayBare`, `decideBare` — the objects taken as `Unknown` and not
//!   read, `decideBare` returning `undefined`: the call alone.
//! * `delaySerde`, `decideSerde` — the objects read through napi-rs's serde
//!   support (`Env::from_js_value`) into typed structs and the decision
//!   made from a `serde_json::Value`, the route the binding takes for its
//!   objects: what that route costs without the engine.
//!
//! `delays` takes a `Float64Array` and returns it, as the batch call does.

use napi::Env;
use napi::bindgen_prelude::{Either, Float64ArraySlice, Null, Unknown};
use napi_derive::napi;
use serde::Deserialize;

/// The jitter option bag of `delay(n, { u | seed | key })`.
#[napi(object)]
pub struct JitterOptions {
    /// A caller's uniform sample in `[0, 1)`.
    pub u: Option<f64>,
    /// A seed.
    pub seed: Option<f64>,
    /// A jitter key (a queue's job id).
    pub key: Option<String>,
}

/// The option bag of `decide(failure, { now, u | seed | key })`.
#[napi(object)]
pub struct DecideOptions {
    /// The current instant, epoch ms.
    pub now: Option<f64>,
    /// A caller's uniform sample in `[0, 1)`.
    pub u: Option<f64>,
    /// A seed.
    pub seed: Option<f64>,
    /// A jitter key (a queue's job id).
    pub key: Option<String>,
}

/// The failure `decide` takes: `{ attempt, type, code, timedOut, message }`.
#[napi(object)]
pub struct FailureArg {
    /// The attempt that failed.
    pub attempt: Option<f64>,
    /// The error type.
    #[napi(js_name = "type")]
    pub error_type: Option<String>,
    /// A handler code.
    pub code: Option<String>,
    /// Whether the reservation expired.
    pub timed_out: Option<bool>,
    /// The error message.
    pub message: Option<String>,
}

/// A decision with the keys of the binding's (`null` for absent values).
#[napi(object)]
pub struct DecisionOut {
    /// `"retry"`, `"discard"` or `"dead_letter"`.
    pub action: String,
    /// Why.
    pub reason: String,
    /// The failure's handler code, or `null` (napi-rs leaves a `None`
    /// field out; the binding's decision has every key).
    pub handler_code: Either<String, Null>,
    /// The non-retryable pattern that matched, or `null`.
    pub matched_pattern: Either<String, Null>,
    /// The attempt that failed.
    pub attempt: f64,
    /// Whether the failure was a timeout.
    pub timed_out: bool,
    /// The retry number when retrying.
    pub retry_number: Option<f64>,
    /// The delay when retrying.
    pub delay_ms: Option<f64>,
    /// `now + delayMs` when retrying.
    pub next_retry_at: Option<f64>,
}

/// The option bag read through napi-rs's serde support.
// Written by serde and never read: a no-op.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SerdeOptions {
    now: Option<f64>,
    u: Option<f64>,
    seed: Option<f64>,
    key: Option<String>,
}

/// The failure read through napi-rs's serde support.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SerdeFailure {
    attempt: Option<f64>,
    #[serde(rename = "type")]
    error_type: Option<String>,
    code: Option<String>,
    timed_out: Option<bool>,
    message: Option<String>,
}

/// A class whose methods have the shapes of `RetryPolicy`'s, and do nothing.
#[napi]
pub struct Floor {
    base: f64,
}

#[napi]
impl Floor {
    /// A floor object.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self { base: 0.0 }
    }

    /// `delay(n, { key })`'s shape; napi-rs reads the option bag. Returns
    /// `base + n` (touches `this`).
    #[napi]
    pub fn delay(&self, n: f64, options: Option<JitterOptions>) -> f64 {
        let _ = options;
        self.base + n
    }

    /// `delay(n, options)` with the option bag passed and not read.
    #[napi]
    pub fn delay_bare(&self, n: f64, options: Option<Unknown<'_>>) -> f64 {
        let _ = options;
        self.base + n
    }

    /// `delay(n, options)` with the option bag read through napi-rs's serde
    /// support.
    #[napi]
    pub fn delay_serde(&self, env: Env, n: f64, options: Option<Unknown<'_>>) -> napi::Result<f64> {
        let o = options
            .map(|v| env.from_js_value::<SerdeOptions, _>(v))
            .transpose()?;
        std::hint::black_box(o);
        Ok(self.base + n)
    }

    /// `delays(Float64Array, options)`: returns the same array.
    #[napi]
    pub fn delays<'a>(
        &self,
        retry_numbers: Float64ArraySlice<'a>,
        options: Option<Unknown<'_>>,
    ) -> Float64ArraySlice<'a> {
        let _ = options;
        retry_numbers
    }

    /// `decide(failure, { key, now })`'s shape; napi-rs reads both objects
    /// and makes a decision object of the binding's keys (a retry).
    #[napi]
    pub fn decide(&self, failure: FailureArg, options: Option<DecideOptions>) -> DecisionOut {
        let _ = options;
        DecisionOut {
            action: "retry".to_owned(),
            reason: "retryable".to_owned(),
            handler_code: Either::B(Null),
            matched_pattern: Either::B(Null),
            attempt: failure.attempt.unwrap_or(1.0),
            timed_out: false,
            retry_number: failure.attempt,
            delay_ms: Some(self.base + 240_000.0),
            next_retry_at: Some(self.base + 1_770_892_505_000.0),
        }
    }

    /// `decide(failure, options)` with both objects read through napi-rs's
    /// serde support and the decision made from a `serde_json::Value`.
    #[napi]
    pub fn decide_serde(
        &self,
        env: Env,
        failure: Unknown<'_>,
        options: Option<Unknown<'_>>,
    ) -> napi::Result<serde_json::Value> {
        let f = env.from_js_value::<SerdeFailure, _>(failure)?;
        let o = options
            .map(|v| env.from_js_value::<SerdeOptions, _>(v))
            .transpose()?;
        let attempt = f.attempt.unwrap_or(1.0);
        std::hint::black_box((f, o));
        Ok(serde_json::json!({
            "action": "retry",
            "reason": "retryable",
            "handlerCode": null,
            "matchedPattern": null,
            "attempt": attempt,
            "timedOut": false,
            "retryNumber": attempt,
            "delayMs": self.base + 240_000.0,
            "nextRetryAt": self.base + 1_770_892_505_000.0,
        }))
    }

    /// `decide(failure, options)` with both objects passed and not read;
    /// returns `undefined`.
    #[napi]
    pub fn decide_bare(&self, failure: Unknown<'_>, options: Option<Unknown<'_>>) {
        let _ = (failure, options);
    }
}

/// A free function that does nothing: the cheapest call napi-rs makes.
#[napi]
pub fn noop() {}

/// What the floors of the typed calls take as the handle: an `External`, as
/// the binding's (napi-rs type-checks it).
pub struct FloorHandle;

/// A handle for the typed floors.
#[napi(js_name = "floorHandle")]
pub fn floor_handle() -> napi::bindgen_prelude::External<FloorHandle> {
    napi::bindgen_prelude::External::new(FloorHandle)
}

/// The floor of the binding's `policyDelay(handle, n, u, seed, key)`: the
/// same argument types, converted by napi-rs, and nothing done.
#[napi(js_name = "policyDelay")]
pub fn policy_delay(
    handle: &napi::bindgen_prelude::External<FloorHandle>,
    n: f64,
    u: Option<f64>,
    seed: Option<f64>,
    key: Option<String>,
) -> f64 {
    std::hint::black_box((handle, u, seed, key));
    n
}

/// The floor of the binding's `policyDecide(handle, attempt, type, code,
/// timedOut, message, u, seed, key, now, out)`: the same argument types,
/// the decision's eight numbers written into `out`, no pattern returned.
#[allow(clippy::too_many_arguments)]
#[napi(js_name = "policyDecide")]
pub fn policy_decide(
    handle: &napi::bindgen_prelude::External<FloorHandle>,
    attempt: f64,
    error_type: Option<String>,
    code: Option<String>,
    timed_out: Option<bool>,
    message: Option<String>,
    u: Option<f64>,
    seed: Option<f64>,
    key: Option<String>,
    now: f64,
    mut out: napi::bindgen_prelude::BufferSlice<'_>,
) -> Option<String> {
    std::hint::black_box((handle, error_type, code, timed_out, message, u, seed, key));
    let values = [0.0, 3.0, -1.0, attempt, 0.0, attempt, 4000.0, now + 4000.0];
    for (c, v) in out.chunks_exact_mut(8).zip(values) {
        c.copy_from_slice(&v.to_ne_bytes());
    }
    None
}
