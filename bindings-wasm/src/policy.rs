//! `RetryPolicy`: the exports the JS layer's class calls with its handle.

use std::borrow::Cow;

use ojs_retry::{ErrorCode, Failure, HandlerCode, Layer, Map, Value};

use crate::fw::{self, Core, Result, Thrown, Val, ret};
use crate::options::{Call, CallOptions};
use crate::out;
use crate::read::{self, Host, Prim, Shape};

/// An immutable, validated, effective retry policy.
pub struct Policy(pub(crate) ojs_retry::RetryPolicy);

/// The handle the JS layer holds (natively an `External`).
#[cfg(not(target_arch = "wasm32"))]
pub type PolicyRef = fw::Handle<Policy>;

/// The handle the JS layer holds.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub struct PolicyRef {
    p: Policy,
}

#[cfg(target_arch = "wasm32")]
impl std::ops::Deref for PolicyRef {
    type Target = Policy;
    fn deref(&self) -> &Policy {
        &self.p
    }
}

fn wrap(p: ojs_retry::RetryPolicy) -> PolicyRef {
    #[cfg(not(target_arch = "wasm32"))]
    return fw::handle(Policy(p));
    #[cfg(target_arch = "wasm32")]
    {
        fw::reserve_heap();
        PolicyRef { p: Policy(p) }
    }
}

/// One policy layer: JSON text, or a document read from a live value. A
/// value that cannot be read stays a layer: the core reports it with the
/// other layers' faults.
fn layer<H: Host>(h: &H, v: H::V) -> Core<Layer<'static>> {
    if read::is_string(h, &v) {
        let text = read::string_arg(h, &v, ErrorCode::RetryPolicyInvalid, "")?;
        return Ok(Layer::Json(Cow::Owned(text)));
    }
    Ok(match read::located(h, v) {
        Ok(value) => Layer::Value(value),
        Err(fault) => Layer::Unreadable(fault),
    })
}

/// A policy from a document (an object, or its JSON text) merged over the
/// defaults; `undefined`: the defaults.
#[cfg_attr(not(target_arch = "wasm32"), napi_derive::napi(js_name = "policyNew"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyNew")
)]
pub fn policy_new(policy: Val, ctx: Val) -> Result<PolicyRef> {
    let h = fw::host(&ctx);
    ret((|| {
        let layers = if read::is_undefined(&h, &policy) {
            Vec::new()
        } else {
            vec![layer(&h, policy)?]
        };
        Ok(wrap(ojs_retry::RetryPolicy::from_layers(layers)?))
    })())
}

/// A policy from its JSON text.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyFromJson")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyFromJson")
)]
pub fn policy_from_json(text: Val, ctx: Val) -> Result<PolicyRef> {
    let h = fw::host(&ctx);
    ret((|| {
        if !read::is_string(&h, &text) {
            return Err(Thrown::from(ojs_retry::Error::invalid_argument(
                "text",
                format!(
                    "expected JSON text (a string), found {}",
                    read::type_name(&h, &text)
                ),
            )));
        }
        let text = read::string_arg(&h, &text, ErrorCode::RetryPolicyInvalid, "")?;
        Ok(wrap(ojs_retry::RetryPolicy::from_json(&text)?))
    })())
}

/// Layers (objects or JSON texts) merged in order over the defaults, then
/// validated as one policy. The list's length (at most 16) is checked
/// before any layer is read.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyMerge")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyMerge")
)]
pub fn policy_merge(layers: Val, ctx: Val) -> Result<PolicyRef> {
    let h = fw::host(&ctx);
    ret((|| {
        let wrong = Thrown::from(ojs_retry::Error::invalid_argument(
            "layers",
            format!(
                "expected an array of layers, found {}",
                read::type_name(&h, &layers)
            ),
        ));
        let len = match h.prim(&layers) {
            Ok(Prim::Object) => match h.shape(&layers) {
                Ok(Shape::Array(len)) => len,
                Ok(_) => return Err(wrong),
                Err(m) => {
                    return Err(Thrown::from(ojs_retry::Error::invalid_argument(
                        "layers", m,
                    )));
                }
            },
            _ => return Err(wrong),
        };
        // At most 16 layers before any is read, so a merge reads at most
        // 16 documents of 1 MiB (the core then holds them to 1 MiB together).
        ojs_retry::limits::check_layers(len)?;
        let mut list = Vec::with_capacity(len);
        for i in 0..len {
            let v = h
                .own_at(&layers, i)
                .map_err(|m| Thrown::from(ojs_retry::Error::invalid_argument("layers", m)))?;
            list.push(layer(&h, v)?);
        }
        Ok(wrap(ojs_retry::RetryPolicy::from_layers(list)?))
    })())
}

/// `system`'s own retry configuration (`options` in that system's terms),
/// evaluated exactly as that system does.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyPreset")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyPreset")
)]
pub fn policy_preset(system: Val, options: Val, ctx: Val) -> Result<PolicyRef> {
    let h = fw::host(&ctx);
    ret((|| {
        let system = read::string_arg(&h, &system, ErrorCode::InvalidArgument, "system")?;
        let options = if read::is_undefined(&h, &options) {
            Value::Object(Map::new())
        } else {
            read::document(&h, options, ErrorCode::RetryPolicyInvalid)?
        };
        Ok(wrap(ojs_retry::RetryPolicy::preset(&system, &options)?))
    })())
}

/// The getters' values as JSON text: `presetSystem`, `maxAttempts`,
/// `initialIntervalMs`, `backoffCoefficient`, `maxIntervalMs`, `jitter`,
/// `nonRetryableErrors`, `onExhaustion`, `backoffStrategy`, `maxRetries`.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyProps")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyProps")
)]
pub fn policy_props(policy: &PolicyRef) -> String {
    let p = &policy.0;
    serde_json::json!({
        "presetSystem": p.preset_system(),
        "maxAttempts": p.max_attempts(),
        "initialIntervalMs": p.initial_interval_ms(),
        "backoffCoefficient": p.backoff_coefficient(),
        "maxIntervalMs": p.max_interval_ms(),
        "jitter": p.jitter(),
        "nonRetryableErrors": p.non_retryable_errors(),
        "onExhaustion": p.on_exhaustion().as_str(),
        "backoffStrategy": p.strategy().as_str(),
        "maxRetries": p.max_retries(),
    })
    .to_string()
}

/// The canonical document as compact JSON text.
#[cfg_attr(not(target_arch = "wasm32"), napi_derive::napi(js_name = "policyText"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyText")
)]
pub fn policy_text(policy: &PolicyRef) -> String {
    policy.0.to_json()
}

/// The delay before retry `n`, the jitter source given field by field (at
/// most one; none is OS entropy).
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyDelay")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyDelay")
)]
pub fn policy_delay(
    policy: &PolicyRef,
    n: f64,
    u: Option<f64>,
    seed: Option<f64>,
    key: Option<String>,
) -> Result<f64> {
    ret((|| {
        let n = ojs_retry::uint_from_f64("retry_number", n)?;
        let o = CallOptions::typed(Call::Jitter, u, seed, key, None)?;
        Ok(out::num(policy.0.delay(n, o.jitter_or_entropy())?))
    })())
}

/// [`policy_delay`] with the retry number and the options as the caller
/// passed them.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyDelayWith")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyDelayWith")
)]
pub fn policy_delay_with(policy: &PolicyRef, n: Val, options: Val, ctx: Val) -> Result<f64> {
    let h = fw::host(&ctx);
    ret((|| {
        let n = read::uint_arg(&h, &n, "retry_number")?;
        let o = CallOptions::read(&h, options, Call::Jitter)?;
        Ok(out::num(policy.0.delay(n, o.jitter_or_entropy())?))
    })())
}

/// Checks the length of an array argument before it is copied.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "checkLength")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "checkLength")
)]
pub fn check_length(field: String, len: f64) -> Result<()> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = if len.is_finite() && len > 0.0 {
        len as usize
    } else {
        0
    };
    ret(ojs_retry::limits::check_argument_len(&field, n).map_err(Thrown::from))
}

/// The delays of many retries: each slot holds a retry number and
/// receives its delay. (The JS layer passes a copy it made of the caller's
/// array, whose length it checked, and writes the delays back.)
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyDelays")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyDelays")
)]
pub fn policy_delays(
    policy: &PolicyRef,
    slots: fw::Slots,
    u: Option<f64>,
    seed: Option<f64>,
    key: Option<String>,
) -> Result<()> {
    ret((|| {
        let o = CallOptions::typed(Call::Jitter, u, seed, key, None)?;
        fill_delays(&policy.0, slots, &o)
    })())
}

/// [`policy_delays`] with the options as the caller passed them.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyDelaysWith")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyDelaysWith")
)]
pub fn policy_delays_with(
    policy: &PolicyRef,
    slots: fw::Slots,
    options: Val,
    ctx: Val,
) -> Result<()> {
    let h = fw::host(&ctx);
    ret((|| {
        let o = CallOptions::read(&h, options, Call::Jitter)?;
        fill_delays(&policy.0, slots, &o)
    })())
}

fn fill_delays(p: &ojs_retry::RetryPolicy, mut slots: fw::Slots, o: &CallOptions) -> Core<()> {
    ojs_retry::limits::check_argument_len("retry_numbers", fw::slots_len(&slots))?;
    let mut numbers = fw::read_f64s(&slots);
    p.delays_into(&mut numbers, o.jitter_or_entropy())?;
    fw::write_f64s(&mut slots, &numbers);
    Ok(())
}

/// Retries 1 ..= `count` as JSON text: raw, capped and jitter bounds per
/// retry, and the drawn delay when a jitter source is given.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policySchedule")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policySchedule")
)]
pub fn policy_schedule(policy: &PolicyRef, count: Val, options: Val, ctx: Val) -> Result<String> {
    let h = fw::host(&ctx);
    ret((|| {
        let count = read::uint_arg(&h, &count, "count")?;
        let o = CallOptions::read(&h, options, Call::Jitter)?;
        let rows = policy
            .0
            .schedule(count, o.jitter.as_ref().map(ojs_retry::Jitter::source))?;
        Ok(out::json(&out::Rows(&rows)))
    })())
}

/// A failure given field by field (the JS layer read the caller's object
/// by own-property lookups), checked as the same object would be:
/// directly when nothing in it can be wrong, else by the core's reader of
/// failure objects, which lists every fault.
#[allow(clippy::too_many_arguments)]
pub(crate) fn typed_failure(
    attempt: Option<f64>,
    error_type: Option<String>,
    code: Option<String>,
    timed_out: Option<bool>,
    message: Option<String>,
    default_attempt: Option<u64>,
) -> Core<Failure> {
    let a = match attempt {
        Some(x) => ojs_retry::uint_from_f64("attempt", x).ok(),
        None => default_attempt,
    };
    let c = match code.as_deref().map(HandlerCode::parse) {
        None => Some(None),
        Some(Ok(c)) => Some(Some(c)),
        Some(Err(_)) => None,
    };
    if let (Some(a), Some(c)) = (a, c) {
        let mut f = Failure::new(a);
        f.error_type = error_type;
        f.code = c;
        f.timed_out = timed_out.unwrap_or(false);
        f.message = message;
        return Ok(f);
    }
    let mut r = read::Record::default();
    r.num("attempt", attempt)
        .text("type", error_type)
        .text("code", code)
        .flag("timedOut", timed_out)
        .text("message", message);
    crate::keys::failure(r.into_value(), default_attempt)
}

/// A failure object as the caller passed it, read by the core's reader of
/// failures (`attempt` may be left out where `default_attempt` is given).
pub(crate) fn failure_object<H: Host>(
    h: &H,
    v: H::V,
    default_attempt: Option<u64>,
) -> Core<Failure> {
    let doc = read::document(h, v, ErrorCode::InvalidArgument)?;
    crate::keys::failure(doc, default_attempt)
}

/// Retry, discard or dead-letter after a failure given field by field, and
/// when: the decision's numbers go into `out` ([`out::decision`]), the
/// matched pattern is returned. `now` is the caller's, or the JS layer's
/// clock.
#[allow(clippy::too_many_arguments)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyDecide")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyDecide")
)]
pub fn policy_decide(
    policy: &PolicyRef,
    attempt: f64,
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
        let failure = typed_failure(Some(attempt), error_type, code, timed_out, message, None)?;
        let o = CallOptions::typed(Call::Decide, u, seed, key, Some(now))?;
        let now = o.now.unwrap_or_default();
        let d = policy.0.decide(&failure, now, o.jitter_or_entropy())?;
        out::decision(&d, out)
    })())
}

/// [`policy_decide`] with the failure and the options as the caller passed
/// them; `now` is the JS layer's clock, for options without one.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyDecideWith")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyDecideWith")
)]
pub fn policy_decide_with(
    policy: &PolicyRef,
    failure: Val,
    options: Val,
    now: f64,
    ctx: Val,
    out: fw::Slots,
) -> Result<Option<String>> {
    let h = fw::host(&ctx);
    ret((|| {
        let failure = failure_object(&h, failure, None)?;
        let o = CallOptions::read(&h, options, Call::Decide)?;
        let now = match o.now {
            Some(n) => n,
            None => ojs_retry::uint_from_f64("now", now)?,
        };
        let d = policy.0.decide(&failure, now, o.jitter_or_entropy())?;
        out::decision(&d, out)
    })())
}

/// `jobs` jobs (jitter keys "1" … "jobs") failing at the same instant, for
/// at most `retries` rounds, as JSON text: per round, the histogram of
/// retry arrivals in buckets of `bucketMs`, and the peak arrivals per
/// second.
#[cfg_attr(not(target_arch = "wasm32"), napi_derive::napi(js_name = "policyHerd"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyHerd")
)]
pub fn policy_herd(
    policy: &PolicyRef,
    jobs: Val,
    retries: Val,
    bucket_ms: Val,
    ctx: Val,
) -> Result<String> {
    let h = fw::host(&ctx);
    ret((|| {
        let herd = policy.0.herd(
            read::uint_arg(&h, &jobs, "jobs")?,
            read::uint_arg(&h, &retries, "retries")?,
            read::uint_arg(&h, &bucket_ms, "bucket_ms")?,
        )?;
        Ok(out::json(&out::HerdOut(&herd)))
    })())
}

/// The plain OJS policy nearest to this one (a preset's translation; any
/// other policy unchanged).
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "policyNearestPlain")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "policyNearestPlain")
)]
pub fn policy_nearest_plain(policy: &PolicyRef) -> PolicyRef {
    wrap(policy.0.nearest_plain())
}
