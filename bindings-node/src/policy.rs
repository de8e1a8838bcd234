//! `RetryPolicy`: a napi-rs class wrapping the core's policy.

use std::borrow::Cow;

use napi::ValueType;
use napi::bindgen_prelude::{Either, Env, Float64ArraySlice, JsObjectValue, JsValue, Unknown};
use napi_derive::napi;
use ojs_retry::{Case, ErrorCode, Failure, Layer, Map, Value};

use crate::convert::{
    NumberArg, StringArg, document, json_text, num, options, string, to_js, uint, wrong_type,
};
use crate::error::OrThrow;

/// An immutable, validated, effective retry policy: the defaults merged
/// with the layers it was built from, or a preset of another system.
#[napi]
pub struct RetryPolicy {
    pub(crate) inner: ojs_retry::RetryPolicy,
}

/// One layer of a policy: JSON text, or any other value read by the core's
/// host walk (a field it cannot read is a fault of that field, reported
/// with the other layers' faults; a value that is not an object is
/// reported by the core as such).
fn layer(env: &Env, v: StringArg<'_>) -> napi::Result<Layer<'static>> {
    Ok(match v {
        Either::A(text) => Layer::Json(Cow::Owned(json_text(
            env,
            ErrorCode::RetryPolicyInvalid,
            &text,
        )?)),
        Either::B(v) => match crate::host::read(env, v, None)? {
            Ok(value) => Layer::Value(value),
            Err(fault) => Layer::Unreadable(fault),
        },
    })
}

#[napi]
impl RetryPolicy {
    /// A policy from a document (an object, or its JSON text) merged over
    /// the defaults; the defaults alone without one.
    #[napi(
        constructor,
        ts_args_type = "policy?: PolicyDocument | PresetDocument | string"
    )]
    pub fn new(env: Env, policy: StringArg<'_>) -> napi::Result<Self> {
        // Only `undefined` (or no argument) means "no document": `null` is
        // a document the core refuses.
        let layers = match policy {
            Either::B(v) if v.get_type()? == ValueType::Undefined => Vec::new(),
            p => vec![layer(&env, p)?],
        };
        let inner = ojs_retry::RetryPolicy::from_layers(layers).or_throw(&env)?;
        Ok(Self { inner })
    }

    /// A policy from its JSON text.
    #[napi(factory, js_name = "fromJSON", ts_args_type = "text: string")]
    pub fn from_json(env: Env, text: StringArg<'_>) -> napi::Result<Self> {
        let text = match text {
            Either::A(units) => json_text(&env, ErrorCode::RetryPolicyInvalid, &units)?,
            Either::B(other) => {
                return Err(wrong_type(&env, "text", "JSON text (a string)", &other));
            }
        };
        let inner = ojs_retry::RetryPolicy::from_json(&text).or_throw(&env)?;
        Ok(Self { inner })
    }

    /// Layers (objects or JSON texts) merged in order over the defaults —
    /// defaults ← first ← … ← last — then validated as one policy.
    #[napi(
        factory,
        ts_args_type = "layers: Array<PolicyDocument | PresetDocument | string>"
    )]
    pub fn merge(env: Env, layers: Unknown<'_>) -> napi::Result<Self> {
        if !layers.is_array()? {
            return Err(wrong_type(&env, "layers", "an array of layers", &layers));
        }
        let list = layers.coerce_to_object()?;
        let len = list.get_array_length()?;
        ojs_retry::limits::check_argument_len("layers", len as usize).or_throw(&env)?;
        let layers = (0..len)
            .map(|i| layer(&env, list.get_element::<StringArg>(i)?))
            .collect::<napi::Result<Vec<_>>>()?;
        let inner = ojs_retry::RetryPolicy::from_layers(layers).or_throw(&env)?;
        Ok(Self { inner })
    }

    /// `system`'s own retry configuration (`options` in that system's own
    /// terms), evaluated exactly as that system does.
    #[napi(
        factory,
        ts_args_type = "system: PresetSystem, options?: Record<string, unknown>"
    )]
    pub fn preset(
        env: Env,
        system: StringArg<'_>,
        options: Option<Unknown<'_>>,
    ) -> napi::Result<Self> {
        let system = string(&env, "system", system)?;
        let options = match options {
            Some(o) => document(&env, o, ErrorCode::RetryPolicyInvalid)?,
            None => Value::Object(Map::new()),
        };
        let inner = ojs_retry::RetryPolicy::preset(&system, &options).or_throw(&env)?;
        Ok(Self { inner })
    }

    /// The preset's system (`"sidekiq"`, ...), or null for an OJS policy.
    #[napi(getter, ts_return_type = "PresetSystem | null")]
    pub fn preset_system(&self) -> Option<String> {
        self.inner.preset_system().map(str::to_owned)
    }

    /// `max_attempts`.
    #[napi(getter)]
    pub fn max_attempts(&self) -> f64 {
        num(self.inner.max_attempts())
    }

    /// `initial_interval` in milliseconds.
    #[napi(getter)]
    pub fn initial_interval_ms(&self) -> f64 {
        num(self.inner.initial_interval_ms())
    }

    /// `backoff_coefficient`.
    #[napi(getter)]
    pub fn backoff_coefficient(&self) -> f64 {
        self.inner.backoff_coefficient()
    }

    /// `max_interval` in milliseconds.
    #[napi(getter)]
    pub fn max_interval_ms(&self) -> f64 {
        num(self.inner.max_interval_ms())
    }

    /// `jitter`.
    #[napi(getter)]
    pub fn jitter(&self) -> bool {
        self.inner.jitter()
    }

    /// `non_retryable_errors`.
    #[napi(getter)]
    pub fn non_retryable_errors(&self) -> Vec<String> {
        self.inner.non_retryable_errors().to_vec()
    }

    /// `on_exhaustion`: `"discard"` or `"dead_letter"`.
    #[napi(getter, ts_return_type = "\"discard\" | \"dead_letter\"")]
    pub fn on_exhaustion(&self) -> &'static str {
        self.inner.on_exhaustion().as_str()
    }

    /// `backoff_strategy`: `"none"`, `"linear"`, `"exponential"` or
    /// `"polynomial"`.
    #[napi(
        getter,
        ts_return_type = "\"none\" | \"linear\" | \"exponential\" | \"polynomial\""
    )]
    pub fn backoff_strategy(&self) -> &'static str {
        self.inner.strategy().as_str()
    }

    /// How many retries the policy allows (`max_attempts − 1`, at least 0).
    #[napi(getter)]
    pub fn max_retries(&self) -> f64 {
        num(self.inner.max_retries())
    }

    /// The canonical effective document (snake_case keys, durations as
    /// ISO 8601), or a preset's `{ "preset": { ... } }` document.
    #[napi(
        js_name = "toJSON",
        ts_return_type = "EffectivePolicy | PresetDocument"
    )]
    pub fn to_json(&self) -> napi::Result<serde_json::Value> {
        to_js(&self.inner)
    }

    /// The canonical document as compact JSON text.
    #[napi(js_name = "toString")]
    pub fn to_json_text(&self) -> String {
        self.inner.to_json()
    }

    /// The delay before retry `retryNumber` (1 = the first retry), in ms.
    #[napi(ts_args_type = "retryNumber: number, options?: Jitter")]
    pub fn delay(
        &self,
        env: Env,
        retry_number: NumberArg<'_>,
        options: Option<Unknown<'_>>,
    ) -> napi::Result<f64> {
        let n = uint(&env, "retry_number", retry_number)?;
        let opts = self::options(&env, options)?;
        let d = self
            .inner
            .delay(n, opts.jitter_or_entropy())
            .or_throw(&env)?;
        Ok(num(d))
    }

    /// The delays of many retries in one call: each slot of `retryNumbers`
    /// holds a retry number and receives its delay; the same array is
    /// returned.
    #[napi(
        ts_args_type = "retryNumbers: Float64Array, options?: Jitter",
        ts_return_type = "Float64Array"
    )]
    pub fn delays<'a>(
        &self,
        env: Env,
        retry_numbers: Either<Float64ArraySlice<'a>, Unknown<'a>>,
        options: Option<Unknown<'_>>,
    ) -> napi::Result<Float64ArraySlice<'a>> {
        let mut array = match retry_numbers {
            Either::A(a) => a,
            Either::B(other) => {
                return Err(wrong_type(
                    &env,
                    "retry_numbers",
                    "a Float64Array of retry numbers",
                    &other,
                ));
            }
        };
        let opts = self::options(&env, options)?;
        // The core works on a copy; the results are then stored through
        // napi-rs's element setter (its mutable view of a typed array's
        // memory is `unsafe`).
        let mut slots = array.to_vec();
        self.inner
            .delays_into(&mut slots, opts.jitter_or_entropy())
            .or_throw(&env)?;
        for (i, d) in (0u32..).zip(slots) {
            array.set_element(i, env.create_double(d)?)?;
        }
        Ok(array)
    }

    /// Retries 1 ..= `count`: raw, capped and jitter bounds per retry, and
    /// the drawn delay when a jitter source is given.
    #[napi(
        ts_args_type = "count: number, options?: Jitter",
        ts_return_type = "ScheduleRow[]"
    )]
    pub fn schedule(
        &self,
        env: Env,
        count: NumberArg<'_>,
        options: Option<Unknown<'_>>,
    ) -> napi::Result<serde_json::Value> {
        let count = uint(&env, "count", count)?;
        let opts = self::options(&env, options)?;
        let src = opts.jitter.as_ref().map(ojs_retry::Jitter::source);
        let rows = self.inner.schedule(count, src).or_throw(&env)?;
        let rows: Vec<_> = rows
            .iter()
            .map(|r| ojs_retry::Cased(r, Case::Camel))
            .collect();
        to_js(&rows)
    }

    /// Retry, discard or dead-letter after `failure`, and when.
    #[napi(
        ts_args_type = "failure: Failure, options?: DecideOptions",
        ts_return_type = "Decision"
    )]
    pub fn decide(
        &self,
        env: Env,
        failure: Unknown<'_>,
        options: Option<Unknown<'_>>,
    ) -> napi::Result<serde_json::Value> {
        let failure = document(&env, failure, ErrorCode::InvalidArgument)?;
        let failure = Failure::from_value(&failure, Case::Camel, None).or_throw(&env)?;
        let opts = self::options(&env, options)?;
        let now = opts.now.unwrap_or_else(crate::convert::clock_ms);
        let d = self
            .inner
            .decide(&failure, now, opts.jitter_or_entropy())
            .or_throw(&env)?;
        to_js(&ojs_retry::Cased(&d, Case::Camel))
    }
}
