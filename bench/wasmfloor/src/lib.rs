//! The Node benchmarks' wasm floor: a plain wasm-bindgen class whose
//! methods have the shapes of the calls a queue makes on `RetryPolicy`,
//! and do nothing. Built exactly like `bindings-wasm` (the workspace's
//! wasm-bindgen, profile `wasm-release`, `wasm-bindgen --target web`,
//! `wasm-opt -Oz`: see `scripts/bench`), so that what the boundary costs by
//! itself sits next to what the binding costs in the same run.
//!
//! Two floors per call:
//!
//! * `delay`, `decide` — the objects read the way wasm-bindgen's guide
//!   reads objects, with serde-wasm-bindgen into typed structs, and the
//!   decision made by it (plain objects, `null` for absent values, as the
//!   binding's): the same values converted, nothing else done. These are
//!   the floors of the targets.
//! * `delayBare`, `decideBare` — the objects passed as `JsValue` and not
//!   read, `decideBare` returning `undefined`: the call alone.
//!
//! `delays` takes a `Float64Array` and returns it, as the batch call does.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

/// The option bag of `delay(n, { u | seed | key })` and
/// `decide(failure, { now, u | seed | key })`.
// The fields are written by serde and never read: a no-op.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    now: Option<f64>,
    u: Option<f64>,
    seed: Option<f64>,
    key: Option<String>,
}

/// The failure `decide` takes: `{ attempt, type, code, timedOut, message }`.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FailureArg {
    attempt: Option<f64>,
    #[serde(rename = "type")]
    error_type: Option<String>,
    code: Option<String>,
    timed_out: Option<bool>,
    message: Option<String>,
}

/// A decision with the keys of the binding's.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DecisionOut {
    action: &'static str,
    reason: &'static str,
    handler_code: Option<String>,
    matched_pattern: Option<String>,
    attempt: f64,
    timed_out: bool,
    retry_number: Option<f64>,
    delay_ms: Option<f64>,
    next_retry_at: Option<f64>,
}

/// A class whose methods have the shapes of `RetryPolicy`'s, and do nothing.
#[wasm_bindgen]
pub struct Floor {
    base: f64,
}

#[wasm_bindgen]
impl Floor {
    /// A floor object.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Floor {
        Floor { base: 0.0 }
    }

    /// `delay(n, { key })`'s shape; the option bag read with
    /// serde-wasm-bindgen. Returns `base + n` (touches `self`).
    pub fn delay(&self, n: f64, options: JsValue) -> f64 {
        let o: Option<Options> = serde_wasm_bindgen::from_value(options).ok().flatten();
        std::hint::black_box(o);
        self.base + n
    }

    /// `delay(n, options)` with the option bag passed and not read.
    #[wasm_bindgen(js_name = delayBare)]
    pub fn delay_bare(&self, n: f64, options: &JsValue) -> f64 {
        let _ = options;
        self.base + n
    }

    /// `delays(Float64Array, options)`: returns the same array.
    pub fn delays(&self, retry_numbers: &JsValue, options: &JsValue) -> JsValue {
        let _ = options;
        retry_numbers.clone()
    }

    /// `decide(failure, { key, now })`'s shape; both objects read and the
    /// decision object made with serde-wasm-bindgen (a retry).
    pub fn decide(&self, failure: JsValue, options: JsValue) -> JsValue {
        let f: Option<FailureArg> = serde_wasm_bindgen::from_value(failure).ok();
        let o: Option<Options> = serde_wasm_bindgen::from_value(options).ok().flatten();
        let attempt = f.as_ref().and_then(|f| f.attempt).unwrap_or(1.0);
        std::hint::black_box((f, o));
        let d = DecisionOut {
            action: "retry",
            reason: "retryable",
            handler_code: None,
            matched_pattern: None,
            attempt,
            timed_out: false,
            retry_number: Some(attempt),
            delay_ms: Some(self.base + 240_000.0),
            next_retry_at: Some(self.base + 1_770_892_505_000.0),
        };
        let out = serde_wasm_bindgen::Serializer::new()
            .serialize_maps_as_objects(true)
            .serialize_missing_as_null(true);
        d.serialize(&out).unwrap_or(JsValue::UNDEFINED)
    }

    /// `decide(failure, options)` with both objects passed and not read;
    /// returns `undefined`.
    #[wasm_bindgen(js_name = decideBare)]
    pub fn decide_bare(&self, failure: &JsValue, options: &JsValue) {
        let _ = (failure, options);
    }
}

/// What the floors of the typed calls take as the handle, as the binding's
/// handles are: a `#[wasm_bindgen]` struct.
#[wasm_bindgen]
pub struct FloorHandle;

/// A handle for the typed floors.
#[wasm_bindgen(js_name = floorHandle)]
pub fn floor_handle() -> FloorHandle {
    FloorHandle
}

/// The floor of the binding's `policyDelay(handle, n, u, seed, key)`: the
/// same argument types, converted by wasm-bindgen, and nothing done.
#[wasm_bindgen(js_name = policyDelay)]
pub fn policy_delay(
    handle: &FloorHandle,
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
#[wasm_bindgen(js_name = policyDecide)]
pub fn policy_decide(
    handle: &FloorHandle,
    attempt: f64,
    error_type: Option<String>,
    code: Option<String>,
    timed_out: Option<bool>,
    message: Option<String>,
    u: Option<f64>,
    seed: Option<f64>,
    key: Option<String>,
    now: f64,
    out: js_sys::Float64Array,
) -> Option<String> {
    std::hint::black_box((handle, error_type, code, timed_out, message, u, seed, key));
    let values = [0.0, 3.0, -1.0, attempt, 0.0, attempt, 4000.0, now + 4000.0];
    out.copy_from(&values);
    None
}
