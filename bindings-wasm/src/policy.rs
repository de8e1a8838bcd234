//! `RetryPolicy`: the core's policy as a JS class.

use std::borrow::Cow;

use js_sys::{Array, Float64Array};
use ojs_retry::{Case, ErrorCode, Failure, Layer};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::convert::{self, JsResult, num};

#[wasm_bindgen]
extern "C" {
    /// The caller's `Float64Array` of `delays`, written only through its
    /// `set`, under `catch` (a subclass may override it).
    #[wasm_bindgen(js_name = Float64Array)]
    type Slots;
    #[wasm_bindgen(catch, method)]
    fn set(this: &Slots, values: &[f64]) -> Result<(), JsValue>;
}

/// An immutable, validated, effective retry policy (spec §11).
#[wasm_bindgen]
pub struct RetryPolicy(pub(crate) ojs_retry::RetryPolicy);

/// One policy layer: JSON text, or a document read by the core's host
/// walk. Unreadable values stay layers: the core reports them with the
/// other layers' faults.
fn layer(v: &JsValue) -> JsResult<Layer<'static>> {
    if v.is_string() {
        let text = convert::string(v, ErrorCode::RetryPolicyInvalid, "")?;
        return Ok(Layer::Json(Cow::Owned(text)));
    }
    Ok(match convert::located(v, None)? {
        Ok(value) => Layer::Value(value),
        Err(fault) => Layer::Unreadable(fault),
    })
}

#[wasm_bindgen]
impl RetryPolicy {
    /// A policy from a document object or JSON text, merged over the
    /// defaults and validated; no argument: the defaults.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "PolicyDocument | PresetDocument | string")]
        policy: JsValue,
    ) -> JsResult<RetryPolicy> {
        if policy.is_undefined() {
            return Ok(Self(ojs_retry::RetryPolicy::default()));
        }
        if policy.is_string() {
            let text = convert::string(&policy, ErrorCode::RetryPolicyInvalid, "")?;
            return Ok(Self(ojs_retry::RetryPolicy::from_json(&text)?));
        }
        Ok(Self(ojs_retry::RetryPolicy::from_layers(vec![layer(
            &policy,
        )?])?))
    }

    /// A policy from JSON text.
    #[wasm_bindgen(js_name = fromJSON)]
    pub fn from_json(
        #[wasm_bindgen(unchecked_param_type = "string")] text: &JsValue,
    ) -> JsResult<RetryPolicy> {
        let text = convert::string(text, ErrorCode::RetryPolicyInvalid, "")?;
        Ok(Self(ojs_retry::RetryPolicy::from_json(&text)?))
    }

    /// Layers (document objects or JSON text) merged in order over the
    /// defaults, then validated.
    pub fn merge(
        #[wasm_bindgen(unchecked_param_type = "Array<PolicyDocument | PresetDocument | string>")]
        layers: &JsValue,
    ) -> JsResult<RetryPolicy> {
        let layers: &Array = layers.dyn_ref().ok_or_else(|| {
            convert::arg_error(
                "layers",
                "expected an array of policy documents or JSON texts",
            )
        })?;
        ojs_retry::limits::check_argument_len("layers", layers.length() as usize)?;
        let layers = layers
            .iter()
            .map(|l| layer(&l))
            .collect::<JsResult<Vec<_>>>()?;
        Ok(Self(ojs_retry::RetryPolicy::from_layers(layers)?))
    }

    /// The policy a preset system's own options describe.
    pub fn preset(
        #[wasm_bindgen(unchecked_param_type = "PresetSystem")] system: &JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Record<string, unknown>")]
        options: &JsValue,
    ) -> JsResult<RetryPolicy> {
        let system = convert::string(system, ErrorCode::RetryPolicyInvalid, "preset.system")?;
        let options = if options.is_undefined() {
            ojs_retry::Value::Object(ojs_retry::Map::new())
        } else {
            convert::value(options, ErrorCode::RetryPolicyInvalid)?
        };
        Ok(Self(ojs_retry::RetryPolicy::preset(&system, &options)?))
    }

    /// The preset system this policy reproduces, or `null`.
    #[wasm_bindgen(getter, js_name = presetSystem, unchecked_return_type = "PresetSystem | null")]
    pub fn preset_system(&self) -> JsValue {
        convert::or_null(self.0.preset_system())
    }

    /// `max_attempts`.
    #[wasm_bindgen(getter, js_name = maxAttempts)]
    pub fn max_attempts(&self) -> f64 {
        num(self.0.max_attempts())
    }

    /// `initial_interval`, in milliseconds.
    #[wasm_bindgen(getter, js_name = initialIntervalMs)]
    pub fn initial_interval_ms(&self) -> f64 {
        num(self.0.initial_interval_ms())
    }

    /// `backoff_coefficient`.
    #[wasm_bindgen(getter, js_name = backoffCoefficient)]
    pub fn backoff_coefficient(&self) -> f64 {
        self.0.backoff_coefficient()
    }

    /// `max_interval`, in milliseconds.
    #[wasm_bindgen(getter, js_name = maxIntervalMs)]
    pub fn max_interval_ms(&self) -> f64 {
        num(self.0.max_interval_ms())
    }

    /// `jitter`.
    #[wasm_bindgen(getter)]
    pub fn jitter(&self) -> bool {
        self.0.jitter()
    }

    /// `non_retryable_errors`.
    #[wasm_bindgen(getter, js_name = nonRetryableErrors)]
    pub fn non_retryable_errors(&self) -> Vec<String> {
        self.0.non_retryable_errors().to_vec()
    }

    /// `on_exhaustion`: `"discard"` or `"dead_letter"`.
    #[wasm_bindgen(getter, js_name = onExhaustion, unchecked_return_type = "\"discard\" | \"dead_letter\"")]
    pub fn on_exhaustion(&self) -> String {
        self.0.on_exhaustion().as_str().into()
    }

    /// `backoff_strategy`: `"none"`, `"linear"`, `"exponential"` or `"polynomial"`.
    #[wasm_bindgen(
        getter,
        js_name = backoffStrategy,
        unchecked_return_type = "\"none\" | \"linear\" | \"exponential\" | \"polynomial\""
    )]
    pub fn backoff_strategy(&self) -> String {
        self.0.strategy().as_str().into()
    }

    /// The number of retries the policy allows (`max_attempts − 1`, at least 0).
    #[wasm_bindgen(getter, js_name = maxRetries)]
    pub fn max_retries(&self) -> f64 {
        num(self.0.max_retries())
    }

    /// The canonical effective policy document (snake_case), or the preset
    /// document `{ preset: { system, ... } }`.
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "EffectivePolicy | PresetDocument")]
    pub fn to_json(&self) -> JsResult<JsValue> {
        convert::out(&self.0, "policy")
    }

    /// The canonical JSON text of [`RetryPolicy::to_json`].
    #[wasm_bindgen(js_name = toString)]
    pub fn to_string_js(&self) -> String {
        self.0.to_json()
    }

    /// The delay before retry `retryNumber` (1-based), in milliseconds.
    pub fn delay(
        &self,
        #[wasm_bindgen(js_name = retryNumber, unchecked_param_type = "number")]
        retry_number: &JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Jitter")] options: &JsValue,
    ) -> JsResult<f64> {
        let n = convert::uint(retry_number, "retry_number")?;
        let o = convert::options(options)?;
        Ok(num(self.0.delay(n, o.jitter_or_entropy())?))
    }

    /// A batch of delays: each slot of `retryNumbers` holds a retry number
    /// and receives its delay; the same array is returned.
    #[wasm_bindgen(unchecked_return_type = "Float64Array")]
    pub fn delays(
        &self,
        #[wasm_bindgen(js_name = retryNumbers, unchecked_param_type = "Float64Array")]
        retry_numbers: &JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Jitter")] options: &JsValue,
    ) -> JsResult<JsValue> {
        // Read from an inert copy (a Float64Array's clone is a Float64Array,
        // even of a subclass; anything else is not), written back through
        // the array's own `set` under `catch`.
        let copy: Float64Array = convert::inert(retry_numbers, ErrorCode::InvalidArgument)?
            .dyn_into()
            .map_err(|_| convert::arg_error("retry_numbers", "expected a Float64Array"))?;
        let o = convert::options(options)?;
        let mut slots = copy.to_vec();
        self.0.delays_into(&mut slots, o.jitter_or_entropy())?;
        retry_numbers
            .unchecked_ref::<Slots>()
            .set(&slots)
            .map_err(|_| {
                convert::arg_error(
                    "retry_numbers",
                    "the array refused the delays (its `set` threw)",
                )
            })?;
        Ok(retry_numbers.clone())
    }

    /// The first `count` retries: raw, capped, jitter bounds and (with a
    /// source) the drawn delay; camelCase rows.
    #[wasm_bindgen(unchecked_return_type = "ScheduleRow[]")]
    pub fn schedule(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] count: &JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Jitter")] options: &JsValue,
    ) -> JsResult<JsValue> {
        let count = convert::uint(count, "count")?;
        let o = convert::options(options)?;
        let rows = self
            .0
            .schedule(count, o.jitter.as_ref().map(|j| j.source()))?;
        let rows: Vec<_> = rows
            .iter()
            .map(|r| ojs_retry::Cased(r, Case::Camel))
            .collect();
        convert::out(&rows, "count")
    }

    /// Retry, discard or dead-letter after `failure`, and why; camelCase.
    #[wasm_bindgen(unchecked_return_type = "Decision")]
    pub fn decide(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Failure")] failure: &JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DecideOptions")] options: &JsValue,
    ) -> JsResult<JsValue> {
        let failure = failure_arg(failure, None)?;
        let o = convert::options(options)?;
        let d = self
            .0
            .decide(&failure, convert::now(&o)?, o.jitter_or_entropy())?;
        convert::out(&ojs_retry::Cased(&d, Case::Camel), "decision")
    }
}

/// A failure object `{ attempt?, type?, code?, timedOut?, message?, details? }`,
/// read by the core; `attempt` may be left out where `default_attempt` is given.
fn failure_arg(v: &JsValue, default_attempt: Option<u64>) -> JsResult<Failure> {
    Ok(Failure::from_value(
        &convert::value(v, ErrorCode::InvalidArgument)?,
        Case::Camel,
        default_attempt,
    )?)
}
