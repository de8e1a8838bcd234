//! Node.js native addon for the ojs-retry engine (napi-rs v3), published on
//! npm as `ojs-retry` behind a small JS loader that falls back to the wasm
//! build (`ojs-retry-wasm`) where this addon cannot load.
//!
//! Thin by design: every function converts its arguments
//! ([`convert`]), calls the core, and maps the answer or the error. The
//! public surface is `bindings-wasm/ojs-retry.d.ts` (plus the batch call
//! `RetryPolicy#delays`); errors are JS `Error`s carrying `code`, `field` and
//! `faults`. `RetryState` and `Reservation` are napi-rs classes;
//! `RetryPolicy` is a JS class in the loader over the `policy*` functions
//! below, holding a handle to a policy in this thread's table ([`slab`]).

mod convert;
mod napi_raw;
pub mod raw;
mod slab;

use std::rc::Rc;

use napi::bindgen_prelude::{
    Array, Either, Either3, Env, Float64Array, Float64ArraySlice, JsObjectValue, JsValue, Null,
    Object, ToNapiValue, Uint32ArraySlice, Unknown,
};
use napi::{JsString, Result, ValueType};
use napi_derive::napi;
use ojs_retry::json::{Map, Value};
use ojs_retry::{
    Action, Decision, Failure, HandlerCode, Heartbeat, JitterSource, JobError, Layer,
    Reservation as CoreReservation, RetryPolicy as CorePolicy, RetryState as CoreState,
    ScheduleRow, state::MIN_HISTORY,
};

use ojs_retry::args::{Document, Jitter};

use crate::convert::{
    Fail, Res, arg, doc_string, jitter, now_or_clock, num, string, strings, throw, type_name, uint,
    with_doc_str, with_js_str,
};

/// Runs `f` and turns a [`Fail`] into the JS error to throw.
fn run<T>(env: &Env, f: impl FnOnce() -> Res<T>) -> Result<T> {
    f().map_err(|e| throw(env, e))
}

/// `undefined` → `None`; anything else (including `null`) is a value.
fn given(v: Unknown<'_>) -> Res<Option<Unknown<'_>>> {
    Ok((v.get_type()? != ValueType::Undefined).then_some(v))
}

/// An options object (`undefined` → `None`).
fn options<'a>(v: Unknown<'a>, field: &str) -> Res<Option<Object<'a>>> {
    let t = v.get_type()?;
    match t {
        ValueType::Undefined => Ok(None),
        ValueType::Object if !v.is_array()? => Ok(Some(v.coerce_to_object()?)),
        _ => Err(arg(
            field,
            format!("expected an options object, found {}", type_name(t)),
        )),
    }
}

/// `{ now?, jitter? }` → (now, jitter source; OS entropy when omitted).
fn decide_options(v: Unknown<'_>) -> Res<(u64, Option<Jitter>)> {
    match options(v, "options")? {
        None => Ok((convert::clock_ms(), None)),
        Some(o) => {
            let now = now_or_clock(Some(o.get_named_property("now")?))?;
            let j = jitter(Some(o.get_named_property("jitter")?))?;
            Ok((now, j))
        }
    }
}

fn source(j: Option<&Jitter>) -> JitterSource<'_> {
    j.map_or(JitterSource::Entropy, Jitter::source)
}

fn layer(v: Unknown<'_>, i: usize, n: usize) -> Res<Layer<'static>> {
    let t = v.get_type()?;
    let field = "";
    match t {
        ValueType::String => Ok(Layer::Json(doc_string(v, field, Document::Policy)?.into())),
        ValueType::Undefined => Err(arg(
            field,
            if n > 1 {
                format!(
                    "layer {}: expected a policy document (an object or JSON text), found undefined",
                    i + 1
                )
            } else {
                "expected a policy document (an object or JSON text), found undefined".into()
            },
        )),
        // Objects, and everything else the core reports as "expected a
        // JSON object, found ...".
        _ => Ok(Layer::Value(convert::to_json(v, "", Document::Policy)?)),
    }
}

/// Merges the layers in the core (which handles every mix of forms).
fn policy_from_layers(layers: Vec<Layer<'_>>) -> Res<CorePolicy> {
    Ok(CorePolicy::from_layers(layers)?)
}

fn failure_input(v: Unknown<'_>) -> Res<Failure> {
    let t = v.get_type()?;
    if t != ValueType::Object || v.is_array()? {
        return Err(arg(
            "failure",
            format!(
                "expected a failure object {{ attempt, type?, code?, timedOut? }}, found {}",
                type_name(t)
            ),
        ));
    }
    let o = v.coerce_to_object()?;
    failure_fields(
        o.get_named_property("attempt")?,
        o.get_named_property("type")?,
        o.get_named_property("code")?,
        o.get_named_property("timedOut")?,
    )
}

/// A failure from the values of its fields (`undefined` for an absent one).
fn failure_fields(
    attempt: Unknown<'_>,
    error_type: Unknown<'_>,
    code: Unknown<'_>,
    timed_out: Unknown<'_>,
) -> Res<Failure> {
    let attempt = uint(attempt, "attempt")?;
    let error_type = match given(error_type)? {
        Some(t) => Some(string(t, "type")?),
        None => None,
    };
    let code = match given(code)? {
        Some(c) => Some(HandlerCode::parse(&string(c, "code")?)?),
        None => None,
    };
    let timed_out = match given(timed_out)? {
        Some(b) => {
            let t = b.get_type()?;
            if t != ValueType::Boolean {
                return Err(arg(
                    "timed_out",
                    format!("expected a boolean, found {}", type_name(t)),
                ));
            }
            b.coerce_to_bool()?
        }
        None => false,
    };
    Ok(Failure {
        attempt,
        error_type,
        code,
        timed_out,
    })
}

fn job_error(v: Unknown<'_>) -> Res<JobError> {
    let t = v.get_type()?;
    if t != ValueType::Object || v.is_array()? {
        return Err(arg(
            "error",
            format!(
                "expected an error object {{ type, message, code?, details? }}, found {}",
                type_name(t)
            ),
        ));
    }
    let o = v.coerce_to_object()?;
    let error_type = string(o.get_named_property("type")?, "type")?;
    let message = string(o.get_named_property("message")?, "message")?;
    let code = match given(o.get_named_property("code")?)? {
        Some(c) => Some(HandlerCode::parse(&string(c, "code")?)?),
        None => None,
    };
    let details = match given(o.get_named_property("details")?)? {
        Some(d) => Some(convert::to_json(d, "details", Document::Argument)?),
        None => None,
    };
    let mut e = JobError::new(error_type, message);
    e.code = code;
    e.details = details;
    Ok(e)
}

fn history_limit(v: Unknown<'_>) -> Res<usize> {
    let Some(o) = options(v, "options")? else {
        return Ok(MIN_HISTORY);
    };
    match given(o.get_named_property("historyLimit")?)? {
        None => Ok(MIN_HISTORY),
        Some(h) => {
            let n = uint(h, "history_limit")?;
            usize::try_from(n).map_err(|_| {
                arg(
                    "history_limit",
                    format!("expected a history limit this platform can hold, found {n}"),
                )
            })
        }
    }
}

/// A decision as the array `[action, reason, handlerCode, matchedPattern,
/// attempt, timedOut, retryNumber, delayMs, nextRetryAt]`, from which the
/// loader builds the object (`decisionOf` in `index.js`): nine named
/// properties set from here cost ~1.5 µs (each name made into a V8 string,
/// each property a map transition), nine elements a tenth of that.
fn decision_array<'e>(env: &'e Env, d: &Decision) -> Result<Array<'e>> {
    let pattern = match &d.reason {
        ojs_retry::Reason::NonRetryable { pattern } => Some(pattern.as_str()),
        _ => None,
    };
    let mut a = env.create_array(9)?;
    a.set(0, d.action.as_str())?;
    a.set(1, d.reason.as_str())?;
    a.set(2, d.handler_code.map(HandlerCode::as_str))?;
    a.set(3, pattern)?;
    a.set(4, num(d.attempt))?;
    a.set(5, d.timed_out)?;
    a.set(6, d.retry_number.map(num))?;
    a.set(7, d.delay_ms.map(num))?;
    a.set(8, d.next_retry_at.map(num))?;
    Ok(a)
}

fn row_object<'e>(env: &'e Env, r: &ScheduleRow) -> Result<Object<'e>> {
    let mut o = Object::new(env)?;
    o.set("retryNumber", num(r.retry_number))?;
    o.set("attempt", num(r.attempt))?;
    o.set("rawMs", num(r.raw_ms))?;
    o.set("cappedMs", num(r.capped_ms))?;
    o.set("minMs", num(r.min_ms))?;
    o.set("maxMs", num(r.max_ms))?;
    o.set("delayMs", r.delay_ms.map(num))?;
    o.set("cumulativeMs", num(r.cumulative_ms))?;
    Ok(o)
}

fn json_text_to_js<'e>(env: &'e Env, text: &str, ordered_depth: usize) -> Result<Unknown<'e>> {
    let v = Value::from_text(text)
        .map_err(|e| napi::Error::from_reason(format!("internal: bad canonical JSON: {e}")))?;
    convert::from_json(env, &v, ordered_depth)
}

// ---------------------------------------------------------------- RetryPolicy
//
// `RetryPolicy` is a JS class in the loader (`index.js`) that holds a
// handle to a policy stored in this thread's table (`slab`); these free
// functions are its constructor, factories, getters and methods, each
// taking the handle first. Not part of the public surface: the loader
// exports only the class.

/// The error for a handle that names no policy of this thread: released,
/// from another thread, or made up (only the hidden exports can be given
/// one; the loader passes the handles of live objects).
fn unknown_handle() -> Fail {
    arg(
        "policy",
        "expected a live RetryPolicy, found a released or unknown policy handle",
    )
}

/// The policy of `handle`, kept alive while JS runs (argument getters).
fn policy(handle: f64) -> Res<Rc<CorePolicy>> {
    slab::get(handle).ok_or_else(unknown_handle)
}

/// `f` on the policy of `handle`, for getters (`f` never calls into JS).
fn read<T>(env: &Env, handle: f64, f: impl FnOnce(&CorePolicy) -> T) -> Result<T> {
    slab::with(handle, f).ok_or_else(|| throw(env, unknown_handle()))
}

/// Stores a new policy in this thread's table: its handle.
fn store(p: CorePolicy) -> Res<f64> {
    slab::insert(p).map_err(|e| {
        Fail::Napi(napi::Error::from_reason(match e {
            slab::InsertError::Full => {
                "ojs-retry: this thread holds 16777216 live RetryPolicy objects, the most it can address"
            }
            slab::InsertError::Busy => "ojs-retry: internal: the policy table is in use",
        }))
    })
}

/// `new RetryPolicy(policy?)`: a partial document (object or JSON text)
/// merged over the defaults; its handle.
#[napi(js_name = "policyNew")]
pub fn policy_new(env: Env, policy: Unknown<'_>) -> Result<f64> {
    run(&env, || {
        let t = policy.get_type()?;
        let p = match t {
            ValueType::Undefined => CorePolicy::default(),
            // The one-layer form of `from_layers`, without the layer list.
            ValueType::String => with_doc_str(policy, "", Document::Policy, |text| {
                Ok(CorePolicy::from_json(text)?)
            })?,
            _ => policy_from_layers(vec![layer(policy, 0, 1)?])?,
        };
        store(p)
    })
}

/// `new RetryPolicy(text)`: [`policy_new`] for a string, which the loader
/// has checked (`typeof text === 'string'`): no type check, no coercion.
#[napi(js_name = "policyFromText")]
pub fn policy_from_text(env: Env, text: JsString<'_>) -> Result<f64> {
    run(&env, || {
        let p = with_js_str(text, "", Document::Policy, |text| {
            Ok(CorePolicy::from_json(text)?)
        })?;
        store(p)
    })
}

/// `RetryPolicy.merge(...layers)` (the loader passes the array).
#[napi(js_name = "policyMerge")]
pub fn policy_merge(env: Env, layers: Unknown<'_>) -> Result<f64> {
    run(&env, || {
        let t = layers.get_type()?;
        if t != ValueType::Object || !layers.is_array()? {
            return Err(arg(
                "layers",
                format!("expected an array of layers, found {}", type_name(t)),
            ));
        }
        let arr = layers.coerce_to_object()?;
        let n = arr.get_array_length()?;
        let count = usize::try_from(n).unwrap_or(usize::MAX);
        let mut out = Vec::with_capacity(count);
        for i in 0..n {
            let item: Unknown<'_> = arr.get_element(i)?;
            out.push(layer(
                item,
                usize::try_from(i).unwrap_or(usize::MAX),
                count,
            )?);
        }
        store(policy_from_layers(out)?)
    })
}

/// `RetryPolicy.preset(system, config?)`: `system`'s own retry
/// configuration, evaluated exactly as that system does.
#[napi(js_name = "policyPreset")]
pub fn policy_preset(env: Env, system: Unknown<'_>, config: Unknown<'_>) -> Result<f64> {
    run(&env, || {
        let system = string(system, "system")?;
        let config = match given(config)? {
            Some(c) => convert::to_json(c, "preset", Document::Policy)?,
            None => Value::Object(Map::new()),
        };
        store(CorePolicy::preset_value(&system, &config)?)
    })
}

/// Frees the table entry of a collected `RetryPolicy` (the loader's
/// `FinalizationRegistry` calls it). Unknown handles are ignored.
#[napi(js_name = "__release")]
pub fn release(policy: f64) {
    slab::release(policy);
}

/// How many policies this thread's table holds (tests: entries are freed
/// after GC). Hidden from the public types.
#[napi(js_name = "__livePolicies")]
#[allow(clippy::cast_precision_loss)]
pub fn live_policies() -> f64 {
    slab::live() as f64
}

/// Throws the error for a value that is not a `RetryPolicy` where one is
/// required (an argument, or `this` of a method called on another object).
#[napi(js_name = "__notAPolicy")]
pub fn not_a_policy(env: Env, value: Unknown<'_>) -> Result<()> {
    run(&env, || {
        Err(arg(
            "policy",
            format!(
                "expected a RetryPolicy instance, found {}",
                type_name(value.get_type()?)
            ),
        ))
    })
}

/// The preset's system name, or `null` for a plain OJS policy.
#[napi(js_name = "policyPresetSystem")]
pub fn policy_preset_system(env: Env, policy: f64) -> Result<Option<String>> {
    read(&env, policy, |p| p.preset_system().map(ToOwned::to_owned))
}
/// `max_attempts`.
#[napi(js_name = "policyMaxAttempts")]
pub fn policy_max_attempts(env: Env, policy: f64) -> Result<f64> {
    read(&env, policy, |p| num(p.max_attempts()))
}
/// `initial_interval` in ms.
#[napi(js_name = "policyInitialIntervalMs")]
pub fn policy_initial_interval_ms(env: Env, policy: f64) -> Result<f64> {
    read(&env, policy, |p| num(p.initial_interval_ms()))
}
/// `backoff_coefficient`.
#[napi(js_name = "policyBackoffCoefficient")]
pub fn policy_backoff_coefficient(env: Env, policy: f64) -> Result<f64> {
    read(&env, policy, CorePolicy::backoff_coefficient)
}
/// `max_interval` in ms.
#[napi(js_name = "policyMaxIntervalMs")]
pub fn policy_max_interval_ms(env: Env, policy: f64) -> Result<f64> {
    read(&env, policy, |p| num(p.max_interval_ms()))
}
/// `jitter`.
#[napi(js_name = "policyJitter")]
pub fn policy_jitter(env: Env, policy: f64) -> Result<bool> {
    read(&env, policy, CorePolicy::jitter)
}
/// `non_retryable_errors`.
#[napi(js_name = "policyNonRetryableErrors")]
pub fn policy_non_retryable_errors(env: Env, policy: f64) -> Result<Vec<String>> {
    read(&env, policy, |p| p.non_retryable_errors().to_vec())
}
/// `on_exhaustion`.
#[napi(js_name = "policyOnExhaustion")]
pub fn policy_on_exhaustion(env: Env, policy: f64) -> Result<&'static str> {
    read(&env, policy, |p| p.on_exhaustion().as_str())
}
/// The backoff strategy.
#[napi(js_name = "policyBackoffStrategy")]
pub fn policy_backoff_strategy(env: Env, policy: f64) -> Result<&'static str> {
    read(&env, policy, |p| p.strategy().as_str())
}
/// `max(max_attempts, 1) − 1`.
#[napi(js_name = "policyMaxRetries")]
pub fn policy_max_retries(env: Env, policy: f64) -> Result<f64> {
    read(&env, policy, |p| num(p.max_retries()))
}

/// The canonical effective policy as an object.
#[napi(js_name = "policyToJson")]
pub fn policy_to_json(env: &Env, policy: f64) -> Result<Unknown<'_>> {
    let text = read(env, policy, CorePolicy::to_json)?;
    json_text_to_js(env, &text, 1)
}

/// The canonical effective policy as compact JSON text.
#[napi(js_name = "policyToString")]
pub fn policy_to_string(env: Env, policy: f64) -> Result<String> {
    read(&env, policy, CorePolicy::to_json)
}

/// `delay(retryNumber, jitter?)`, checking every argument. `jitter` may be
/// a plain number `u` (the same as `{ u }`).
// `Either<f64, _>`: napi-rs reads a number with one type check and one
// read, where `Unknown` took a coercion and an object lookup per property.
#[napi(js_name = "policyDelay")]
pub fn policy_delay(
    env: Env,
    policy: f64,
    retry_number: Either<f64, Unknown<'_>>,
    jitter: Either<f64, Unknown<'_>>,
) -> Result<f64> {
    run(&env, || {
        let p = self::policy(policy)?;
        let n = match retry_number {
            Either::A(x) => convert::uint_from_f64(x, "retry_number")?,
            Either::B(v) => uint(v, "retry_number")?,
        };
        let d = match jitter {
            Either::A(u) => p.delay(n, JitterSource::Uniform(u))?,
            Either::B(v) => {
                let j = convert::jitter(Some(v))?;
                p.delay(n, source(j.as_ref()))?
            }
        };
        Ok(num(d))
    })
}

/// `delay(n, u)` for two plain numbers: the delay, or `-1` for any invalid
/// argument (an unknown handle included). The loader (`index.js`) calls it
/// (as `__delayU`, registered by [`raw`]) when both arguments are numbers
/// and, on `-1`, calls [`policy_delay`], which reports the error. Hidden
/// from the public types.
pub(crate) fn delay_u(policy: f64, retry_number: f64, u: f64) -> f64 {
    slab::with(policy, |p| {
        fast_delay(p, retry_number, JitterSource::Uniform(u))
    })
    .unwrap_or(-1.0)
}

/// `delay(n)` with no jitter source, as [`delay_u`] (`__delayE`): the sample is a word
/// of this thread's entropy generator (a core `entropy::Generator` kept
/// beside the policies, see [`slab::with_word`]), handed to the engine as
/// it is. `-1` also when the OS has no entropy to give (the
/// full route then reports it).
pub(crate) fn delay_e(policy: f64, retry_number: f64) -> f64 {
    let Some(n) = ojs_retry::args::uint_of_f64(retry_number) else {
        return -1.0;
    };
    slab::with_word(policy, |p, word| {
        delay_num(p.delay_sampled(n, ojs_retry::Sample::from_u64(word)))
    })
    .unwrap_or(-1.0)
}

/// `delay(n, { seed })` for a number seed, as [`delay_u`] (`__delayS`).
pub(crate) fn delay_s(policy: f64, retry_number: f64, seed: f64) -> f64 {
    match ojs_retry::args::uint_of_f64(seed) {
        Some(s) => slab::with(policy, |p| {
            fast_delay(p, retry_number, JitterSource::Seed(s))
        })
        .unwrap_or(-1.0),
        None => -1.0,
    }
}

/// `delays(numbers, { u } | { seed })` in place, in one `Float64Array` the
/// loader reuses (given as its bytes, `__delaysInPlace`, registered by
/// [`raw`]): `[policy handle, seeded (0 | 1), u or seed, len, n_1 …
/// n_len]`; the delays replace `n_1 … n_len`. Returns `-1` (the buffer
/// then holds a mix) for any invalid argument, an unknown handle included;
/// the loader then calls [`policy_delays`], which reports the error.
/// Hidden from the public types.
// One typed-array argument written in place: no result array to create
// (a new `Float64Array` is an external buffer with a finalizer), no
// per-element Node-API call, nothing allocated; the header, the handle
// included, rides in the buffer because each further argument is another
// Node-API call. A byte view rather than the `Float64Array` itself: Node's
// `napi_get_typedarray_info` finds an array's type by testing each type in
// turn, `Uint8Array` second and `Float64Array` tenth (a fifth of the
// batch's boundary cost in a profile); the addon reads the bytes as the
// `f64`s the `Float64Array` lays out (`napi_raw::with_f64s`).
pub(crate) fn delays_in_place(buf: &mut [f64]) -> f64 {
    let Some(([handle, seeded, x, len], slots)) = buf.split_first_chunk_mut::<4>() else {
        return -1.0;
    };
    let src = if *seeded == 0.0 {
        JitterSource::Uniform(*x)
    } else {
        match ojs_retry::args::uint_of_f64(*x) {
            Some(s) => JitterSource::Seed(s),
            None => return -1.0,
        }
    };
    let Some(slots) = ojs_retry::args::uint_of_f64(*len)
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| slots.get_mut(..n))
    else {
        return -1.0;
    };
    slab::with(*handle, |p| {
        // The source's work once for the batch, then the core's loop.
        match p.delays_with(src).and_then(|d| d.fill(slots)) {
            Ok(()) => 0.0,
            Err(_) => -1.0,
        }
    })
    .unwrap_or(-1.0)
}

/// The delay of retry `n` (a JS number), or `-1` for any invalid input.
// Inlined into each caller, which then knows its jitter source: only that
// source's arm of the core's `delay` is left.
#[inline(always)]
fn fast_delay(p: &CorePolicy, retry_number: f64, src: JitterSource<'_>) -> f64 {
    let Some(n) = ojs_retry::args::uint_of_f64(retry_number) else {
        return -1.0;
    };
    delay_num(p.delay_ok(n, src))
}

/// A fast export's answer: the delay as a JS number, `-1` for `None`.
#[inline(always)]
fn delay_num(d: Option<u64>) -> f64 {
    match d {
        // A delay is at most `max_interval` ≤ 2^53 − 1 (the `min` says so
        // to the compiler): the signed conversion, one instruction, is exact.
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_wrap)]
        Some(d) => d.min(ojs_retry::MAX_MS) as i64 as f64,
        None => -1.0,
    }
}

/// The delays for many retry numbers in one call (one boundary crossing),
/// as a `Float64Array`: one copy, where a JS array costs a Node-API call
/// per element. The loader (`index.js`) hands callers a plain array.
#[napi(js_name = "policyDelays")]
pub fn policy_delays(
    env: Env,
    policy: f64,
    retry_numbers: Either3<Uint32ArraySlice<'_>, Float64ArraySlice<'_>, Unknown<'_>>,
    jitter: Unknown<'_>,
) -> Result<Float64Array> {
    run(&env, || {
        let p = self::policy(policy)?;
        let j = convert::jitter(Some(jitter))?;
        let src = source(j.as_ref());
        let field = |i: usize| move || format!("retry_numbers[{i}]");
        // The error of entry `i` names it; nothing is formatted on success.
        let one = |i: usize, n: Res<u64>| -> Res<f64> {
            let n = n.map_err(|f| convert::refield(f, field(i)))?;
            match p.delay(n, src) {
                Ok(d) => Ok(num(d)),
                Err(e) if e.field() == "retry_number" => Err(convert::refield(e.into(), field(i))),
                Err(e) => Err(e.into()),
            }
        };
        match retry_numbers {
            Either3::A(u32s) => u32s
                .iter()
                .enumerate()
                .map(|(i, n)| one(i, Ok(u64::from(*n))))
                .collect(),
            Either3::B(f64s) => f64s
                .iter()
                .enumerate()
                .map(|(i, x)| one(i, convert::uint_from_f64(*x, "retry_number")))
                .collect(),
            Either3::C(v) => {
                let t = v.get_type()?;
                if t != ValueType::Object || !v.is_array()? {
                    return Err(arg(
                        "retry_numbers",
                        format!(
                            "expected an array, Uint32Array or Float64Array of retry numbers, found {}",
                            type_name(t)
                        ),
                    ));
                }
                let arr = v.coerce_to_object()?;
                let len = arr.get_array_length()?;
                let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
                for i in 0..len {
                    let i_us = usize::try_from(i).unwrap_or(usize::MAX);
                    let item: Unknown<'_> = arr.get_element(i)?;
                    out.push(one(i_us, uint(item, "retry_number"))?);
                }
                Ok(out)
            }
        }
    })
    .map(Float64Array::new)
}

/// Retries `1..count`: raw, capped, bounds, and the drawn delay when a
/// jitter source is given.
#[napi(js_name = "policySchedule")]
pub fn policy_schedule<'e>(
    env: &'e Env,
    policy: f64,
    count: Unknown<'_>,
    jitter: Unknown<'_>,
) -> Result<Vec<Object<'e>>> {
    let rows = run(env, || {
        let p = self::policy(policy)?;
        let count = uint(count, "count")?;
        let j = convert::jitter(Some(jitter))?;
        Ok(p.schedule(count, j.as_ref().map(Jitter::source))?)
    })?;
    rows.iter().map(|r| row_object(env, r)).collect()
}

/// Retry, discard or dead-letter after a failure.
/// The loader builds the decision object from the array (see
/// [`decision_array`]); it calls [`decide_fields_call`] instead when `failure`
/// is an object and `options` an object or absent.
#[napi(js_name = "policyDecide")]
pub fn policy_decide<'e>(
    env: &'e Env,
    policy: f64,
    failure: Unknown<'_>,
    options: Unknown<'_>,
) -> Result<Array<'e>> {
    decided(env, policy, || {
        let f = failure_input(failure)?;
        let (now, j) = decide_options(options)?;
        Ok((f, now, j))
    })
}

/// The decision of `policy` for the failure, `now` and jitter that
/// `inputs` reads, as [`decision_array`]'s array.
fn decided<'e>(
    env: &'e Env,
    policy: f64,
    inputs: impl FnOnce() -> Res<(Failure, u64, Option<Jitter>)>,
) -> Result<Array<'e>> {
    let d = run(env, || {
        let p = self::policy(policy)?;
        let (f, now, j) = inputs()?;
        Ok(p.decide(&f, now, source(j.as_ref()))?)
    })?;
    decision_array(env, &d)
}

/// [`policy_decide`] with the failure's, the options' and a jitter
/// object's fields as values, which the loader reads (the same reads, in
/// the same order, as [`failure_input`], [`decide_options`] and
/// `convert::jitter`): reading them here, each name made into a V8 string
/// and looked up, cost ~2.5 µs. The same checks and errors. Hidden from the
/// public types.
#[allow(clippy::too_many_arguments)]
#[napi(js_name = "__decideFields")]
pub fn decide_fields_call<'e>(
    env: &'e Env,
    policy: f64,
    attempt: Unknown<'_>,
    error_type: Unknown<'_>,
    code: Unknown<'_>,
    timed_out: Unknown<'_>,
    now: Unknown<'_>,
    jitter: Unknown<'_>,
    jitter_u: Unknown<'_>,
    jitter_seed: Unknown<'_>,
    jitter_key: Unknown<'_>,
) -> Result<Array<'e>> {
    decided(env, policy, || {
        let f = failure_fields(attempt, error_type, code, timed_out)?;
        let now = now_or_clock(Some(now))?;
        // A jitter object's fields come read too; anything else is checked
        // (and reported) as the options' `jitter` is.
        let j = if jitter.get_type()? == ValueType::Object && !jitter.is_array()? {
            Some(convert::jitter_fields(jitter_u, jitter_seed, jitter_key)?)
        } else {
            self::jitter(Some(jitter))?
        };
        Ok((f, now, j))
    })
}

// ----------------------------------------------------------------- RetryState

/// A job's retry state: attempt, bounded error history, `nextRetryAt`.
#[napi]
pub struct RetryState {
    inner: CoreState,
}

#[napi]
impl RetryState {
    /// A fresh job at attempt 1.
    #[napi(constructor)]
    pub fn new(env: Env, options: Unknown<'_>) -> Result<Self> {
        run(&env, || {
            let limit = history_limit(options)?;
            Ok(Self {
                inner: CoreState::new().with_history_limit(limit)?,
            })
        })
    }

    /// Reads a §10 state document (object or JSON text).
    #[napi(factory, js_name = "fromJSON")]
    pub fn from_json(env: Env, state: Unknown<'_>, options: Unknown<'_>) -> Result<Self> {
        run(&env, || {
            let limit = history_limit(options)?;
            let inner = if state.get_type()? == ValueType::String {
                with_doc_str(state, "", Document::State, |text| {
                    Ok(CoreState::from_json(text, limit)?)
                })?
            } else {
                CoreState::from_value(&convert::to_json(state, "", Document::State)?, limit)?
            };
            Ok(Self { inner })
        })
    }

    /// The current attempt.
    #[napi(getter)]
    pub fn attempt(&self) -> f64 {
        num(self.inner.attempt())
    }
    /// Epoch ms of the next attempt, or null.
    #[napi(getter)]
    pub fn next_retry_at(&self) -> Option<f64> {
        self.inner.next_retry_at().map(num)
    }
    /// `"discard"`, `"dead_letter"` or null.
    #[napi(getter)]
    pub fn terminal(&self) -> Option<&'static str> {
        self.inner.terminal().map(Action::as_str)
    }
    /// The error-history bound.
    #[napi(getter)]
    pub fn history_limit(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let n = self.inner.history_limit() as f64;
        n
    }

    /// Records a handler failure of the current attempt. `policy` is the
    /// handle of a `RetryPolicy`: the loader wraps this method and passes
    /// it (or reports a value that is not a policy).
    #[napi]
    pub fn record_failure<'e>(
        &mut self,
        env: &'e Env,
        policy: f64,
        error: Unknown<'_>,
        options: Unknown<'_>,
    ) -> Result<Array<'e>> {
        let d = run(env, || {
            let p = self::policy(policy)?;
            let e = job_error(error)?;
            let (now, j) = decide_options(options)?;
            Ok(self.inner.record_failure(&p, &e, now, source(j.as_ref()))?)
        })?;
        decision_array(env, &d)
    }

    /// Records that the current attempt's reservation expired (`policy`:
    /// a handle, as in [`RetryState::record_failure`]).
    #[napi]
    pub fn record_timeout<'e>(
        &mut self,
        env: &'e Env,
        policy: f64,
        options: Unknown<'_>,
    ) -> Result<Array<'e>> {
        let d = run(env, || {
            let p = self::policy(policy)?;
            let (now, j) = decide_options(options)?;
            Ok(self.inner.record_timeout(&p, now, source(j.as_ref()))?)
        })?;
        decision_array(env, &d)
    }

    /// The §10 state document.
    #[napi(js_name = "toJSON")]
    pub fn to_json<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        json_text_to_js(env, &self.inner.to_json(), 2)
    }

    /// The §10 state document as compact JSON text.
    #[napi(js_name = "toString")]
    pub fn to_json_string(&self) -> String {
        self.inner.to_json()
    }
}

// ---------------------------------------------------------------- Reservation

/// A worker's hold on one attempt of a job.
#[napi]
pub struct Reservation {
    inner: CoreReservation,
}

#[napi]
impl Reservation {
    /// Reserves `attempt` for `visibilityTimeoutMs` from `now`.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        attempt: Unknown<'_>,
        visibility_timeout_ms: Unknown<'_>,
        now: Unknown<'_>,
    ) -> Result<Self> {
        run(&env, || {
            let a = uint(attempt, "attempt")?;
            let t = uint(visibility_timeout_ms, "visibility_timeout_ms")?;
            let now = now_or_clock(Some(now))?;
            Ok(Self {
                inner: CoreReservation::new(a, now, t)?,
            })
        })
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

    /// Extends the reservation unless it has expired.
    #[napi]
    pub fn heartbeat<'e>(&mut self, env: &'e Env, now: Unknown<'_>) -> Result<Object<'e>> {
        let h = run(env, || {
            let now = now_or_clock(Some(now))?;
            Ok(self.inner.heartbeat(now)?)
        })?;
        let mut o = Object::new(env)?;
        match h {
            Heartbeat::Extended { deadline } => {
                o.set("extended", true)?;
                o.set("deadline", num(deadline))?;
            }
            Heartbeat::Expired => o.set("extended", false)?,
        }
        Ok(o)
    }

    /// Whether the reservation has expired at `now`.
    #[napi]
    pub fn is_expired(&self, env: Env, now: Unknown<'_>) -> Result<bool> {
        run(&env, || {
            let now = now_or_clock(Some(now))?;
            Ok(self.inner.is_expired(now)?)
        })
    }

    /// The failure to pass to `decide()` once expired, else null.
    #[napi]
    pub fn expiry<'e>(&self, env: &'e Env, now: Unknown<'_>) -> Result<Unknown<'e>> {
        let f = run(env, || {
            let now = now_or_clock(Some(now))?;
            Ok(self.inner.expiry(now)?)
        })?;
        match f {
            None => Null.into_unknown(env),
            Some(f) => {
                let mut o = Object::new(env)?;
                o.set("attempt", num(f.attempt))?;
                o.set("timedOut", f.timed_out)?;
                Ok(o.to_unknown())
            }
        }
    }
}

// ------------------------------------------------------------------ functions

/// Whether `errorType` matches any pattern.
#[napi]
pub fn matches(env: Env, error_type: Unknown<'_>, patterns: Unknown<'_>) -> Result<bool> {
    run(&env, || {
        let t = string(error_type, "error_type")?;
        let p = strings(patterns, "patterns")?;
        Ok(ojs_retry::matches(&t, &p))
    })
}

/// The first pattern `errorType` matches, or null.
#[napi]
pub fn first_match(
    env: Env,
    error_type: Unknown<'_>,
    patterns: Unknown<'_>,
) -> Result<Option<String>> {
    run(&env, || {
        let t = string(error_type, "error_type")?;
        let p = strings(patterns, "patterns")?;
        Ok(ojs_retry::first_match(&t, &p).map(str::to_owned))
    })
}

/// An ISO 8601 duration in ms.
#[napi]
pub fn parse_duration(env: Env, text: Unknown<'_>) -> Result<f64> {
    run(&env, || {
        Ok(num(ojs_retry::parse_duration(&string(text, "duration")?)?))
    })
}

/// The canonical duration string for `ms`.
#[napi]
pub fn format_duration(env: Env, ms: Unknown<'_>) -> Result<String> {
    run(&env, || {
        Ok(ojs_retry::format_duration(uint(ms, "duration")?)?)
    })
}

/// RFC 3339 UTC text for epoch ms.
#[napi]
pub fn format_timestamp(env: Env, ms: Unknown<'_>) -> Result<String> {
    run(&env, || {
        Ok(ojs_retry::format_timestamp(uint(ms, "timestamp")?)?)
    })
}

/// Epoch ms of an RFC 3339 timestamp.
#[napi]
pub fn parse_timestamp(env: Env, text: Unknown<'_>) -> Result<f64> {
    run(&env, || {
        Ok(num(ojs_retry::parse_timestamp(&string(
            text,
            "timestamp",
        )?)?))
    })
}

/// The 53-bit sample `k` a jitter source gives for a retry.
#[napi]
pub fn jitter_sample(env: Env, retry_number: Unknown<'_>, jitter: Unknown<'_>) -> Result<f64> {
    run(&env, || {
        let n = uint(retry_number, "retry_number")?;
        let Some(j) = convert::jitter(Some(jitter))? else {
            return Err(arg(
                "jitter",
                "expected one of { u: number }, { seed: number | bigint }, { key: string }, found undefined",
            ));
        };
        Ok(num(j.source().sample(n)?.bits()))
    })
}

/// Does nothing: the baseline for measuring the cost of a native call.
#[napi(js_name = "__noop")]
pub fn noop() {}
