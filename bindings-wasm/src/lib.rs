//! # ojs-retry-wasm
//!
//! The [`ojs_retry`] engine for JavaScript hosts through WebAssembly
//! (wasm-bindgen): browsers, bundlers, Cloudflare Workers (workerd), Deno,
//! Bun and Node. Published on npm as `ojs-retry-wasm`; the TypeScript
//! surface is `ojs-retry.d.ts`, shared with the native `ojs-retry` package.
//!
//! This crate is thin: it checks and converts JS arguments, calls the core
//! and turns every core error into a JS `Error` carrying `code`, `field` and
//! `faults`. Omitted `now` means `Date.now()`; an omitted jitter source
//! means OS entropy (`crypto.getRandomValues` through getrandom).

extern crate alloc;

mod convert;
#[cfg(any(test, all(not(target_feature = "atomics"), target_family = "wasm")))]
mod recycle;
mod registry;

// Talc instead of Rust's default dlmalloc: 6.8 KB less wasm after wasm-opt
// (2.7 KB gzipped), parse and batch speed within a few percent of dlmalloc's
// in the same harness. Single-threaded wasm only, which is what this module
// is built for. Small blocks go through free lists in front of it
// (`recycle`): a policy's few allocations then cost far less.
#[cfg(all(not(target_feature = "atomics"), target_family = "wasm"))]
#[global_allocator]
static ALLOCATOR: recycle::Recycling<talc::wasm::WasmDynamicTalc> =
    recycle::Recycling::new(talc::wasm::new_wasm_dynamic_allocator());

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::sync::RwLock;

use js_sys::{Array, Object};
use ojs_retry::{Action, Decision, Failure, Heartbeat, JobError, Reason, Reservation, RetryState};
use wasm_bindgen::prelude::*;

use convert::{
    Document, JsResult, arg_error, boolean, core, given, jitter, jitter_or_entropy, json_value,
    layer, now, opt_uint, options, policy_from_layers, prop, set, string, strings, uint,
};

/// `Decision` as the JS API shows it (camelCase keys in this order, `null`
/// when absent), through JSON text written here and `JSON.parse`: serde's
/// serialiser (into JS values, or into JSON through `io::Write`) costs
/// several times more at opt-level "z" for these nine fields.
fn decision_js(d: &Decision) -> JsResult<JsValue> {
    use core::fmt::Write as _;
    // Names of the core's enums are plain identifiers: no escaping needed.
    fn name(out: &mut String, s: Option<&str>) {
        match s {
            Some(s) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            None => out.push_str("null"),
        }
    }
    fn number(out: &mut String, n: Option<u64>) {
        match n {
            Some(n) => {
                let _ = write!(out, "{n}");
            }
            None => out.push_str("null"),
        }
    }
    let mut out = String::with_capacity(256);
    out.push_str("{\"action\":");
    name(&mut out, Some(d.action.as_str()));
    out.push_str(",\"reason\":");
    name(&mut out, Some(d.reason.as_str()));
    out.push_str(",\"handlerCode\":");
    name(&mut out, d.handler_code.map(ojs_retry::HandlerCode::as_str));
    out.push_str(",\"matchedPattern\":");
    match &d.reason {
        // A pattern is the caller's text: escaped by serde_json.
        Reason::NonRetryable { pattern } => {
            out.push_str(&serde_json::to_string(pattern).map_err(|e| {
                convert::js_error("internal.conversion", &e.to_string(), [("", "")])
            })?)
        }
        _ => out.push_str("null"),
    }
    out.push_str(",\"attempt\":");
    number(&mut out, Some(d.attempt));
    out.push_str(if d.timed_out {
        ",\"timedOut\":true"
    } else {
        ",\"timedOut\":false"
    });
    out.push_str(",\"retryNumber\":");
    number(&mut out, d.retry_number);
    out.push_str(",\"delayMs\":");
    number(&mut out, d.delay_ms);
    out.push_str(",\"nextRetryAt\":");
    number(&mut out, d.next_retry_at);
    out.push('}');
    js_sys::JSON::parse(&out)
}

/// A failure passed to `decide()`: `{attempt, type?, code?, timedOut?}`.
fn failure(v: &JsValue) -> JsResult<Failure> {
    let Some(obj) = options(v, "failure", &["attempt", "type", "code", "timedOut"])? else {
        return Err(arg_error(
            "failure",
            "expected a failure object {attempt, type?, code?, timedOut?}",
        ));
    };
    let mut f = Failure::new(uint(&prop(&obj, "attempt"), "attempt")?);
    if let Some(t) = given(&prop(&obj, "type")) {
        f.error_type = Some(string(t, "type")?);
    }
    if let Some(c) = given(&prop(&obj, "code")) {
        f.code = Some(core(ojs_retry::HandlerCode::parse(&string(c, "code")?))?);
    }
    if let Some(t) = given(&prop(&obj, "timedOut")) {
        f.timed_out = boolean(t, "timed_out")?;
    }
    Ok(f)
}

/// `{now?, jitter?}` with the defaults applied.
fn decide_options(v: &JsValue) -> JsResult<(u64, convert::Jitter)> {
    match options(v, "options", &["now", "jitter"])? {
        None => Ok((now(&JsValue::UNDEFINED)?, convert::Jitter::Entropy)),
        Some(o) => Ok((
            now(&prop(&o, "now"))?,
            jitter_or_entropy(&prop(&o, "jitter"))?,
        )),
    }
}

#[allow(clippy::cast_precision_loss)] // engine values stay below 2^53
fn num(n: u64) -> f64 {
    n as f64
}

/// A new policy from `layers`, registered: its handle.
fn made(policy: ojs_retry::RetryPolicy) -> JsResult<f64> {
    registry::register(Arc::new(policy)).ok_or_else(|| {
        convert::js_error(
            "internal.registry",
            "the policy registry is busy",
            [("", "")],
        )
    })
}

/// The policy behind `handle`, or the typed `policy` error: a freed
/// policy, or a handle that names none (stale, forged).
fn policy(handle: f64) -> JsResult<Arc<ojs_retry::RetryPolicy>> {
    registry::get(handle).map_err(|miss| {
        arg_error(
            "policy",
            match miss {
                registry::Miss::Freed => "expected a live RetryPolicy, found one already freed",
                registry::Miss::Unknown => {
                    "expected a live RetryPolicy, found a released or unknown policy handle"
                }
            },
        )
    })
}

/// The policy factories, through one export: `op` 0 `new RetryPolicy(a)`
/// (omitted: the defaults; `null` is a document, and not an object), 1
/// `merge(...a)` (the JS class passes the layers as one array), 2
/// `preset(a, b)`. Returns the new policy's handle; `api.js`'s
/// `RetryPolicy` class holds it. Hidden from the public types.
#[wasm_bindgen(js_name = __make)]
pub fn make(op: u32, a: JsValue, b: JsValue) -> JsResult<f64> {
    match op {
        // No layer: the defaults, built directly (the same policy as no
        // layer merged, without the merge).
        0 if a.is_undefined() => made(ojs_retry::RetryPolicy::default()),
        0 => made(policy_from_layers(alloc::vec![layer(&a)?])?),
        1 => {
            if !Array::is_array(&a) {
                return Err(arg_error("layers", "expected an array of policy layers"));
            }
            let arr: &Array = a.unchecked_ref();
            let mut out = Vec::with_capacity(arr.length() as usize);
            for l in arr.iter() {
                out.push(layer(&l)?);
            }
            made(policy_from_layers(out)?)
        }
        _ => {
            let system = string(&a, "system")?;
            let config = match given(&b) {
                Some(c) => convert::json_value(c, "preset", convert::Document::Policy)?,
                None => serde_json::Value::Object(serde_json::Map::new()),
            };
            made(core(ojs_retry::RetryPolicy::preset_value(
                &system, &config,
            ))?)
        }
    }
}

/// The policy in the first `len` bytes of the text buffer (see
/// [`scratch`]), which `api.js` fills with `TextEncoder.encodeInto`: its
/// handle, or `-1` for anything but a valid document (`api.js` then takes
/// `__make`, which reports the error). `api.js` sends ASCII text only, so
/// no U+FFFD here stands for a lone surrogate (the full path tells them
/// apart). Hidden from the public types.
#[wasm_bindgen(js_name = __parse)]
pub fn parse(len: f64) -> f64 {
    let Some(len) = fast_uint(len).and_then(|n| usize::try_from(n).ok()) else {
        return -1.0;
    };
    let parsed = {
        let Ok(buf) = TEXT.try_read() else {
            return -1.0;
        };
        let Some(text) = buf.get(..len).and_then(|b| core::str::from_utf8(b).ok()) else {
            return -1.0;
        };
        ojs_retry::RetryPolicy::from_json(text)
    };
    match parsed {
        Ok(p) => registry::register(Arc::new(p)).unwrap_or(-1.0),
        Err(e) => invalid(e),
    }
}

/// The number-valued getters of the policy behind `handle`, `-1` for a
/// handle that names none (`api.js` then asks [`policy_value`], which
/// reports it): `k` 0 `maxAttempts`, 1 `initialIntervalMs`,
/// 2 `backoffCoefficient`, 3 `maxIntervalMs`, 4 `jitter` (0 or 1),
/// 5 `maxRetries` (`max(maxAttempts, 1) − 1`). None is negative. Hidden
/// from the public types.
#[wasm_bindgen(js_name = __policyNum)]
pub fn policy_number(handle: f64, k: u32) -> f64 {
    registry::with(handle, |p| number_of(p, k)).unwrap_or(-1.0)
}

fn number_of(p: &ojs_retry::RetryPolicy, k: u32) -> f64 {
    match k {
        0 => num(p.max_attempts()),
        1 => num(p.initial_interval_ms()),
        2 => p.backoff_coefficient(),
        3 => num(p.max_interval_ms()),
        4 => f64::from(u8::from(p.jitter())),
        _ => num(p.max_retries()),
    }
}

/// The other getters of the policy behind `handle`, and the numbers of
/// [`policy_number`] with the typed error for a bad handle: `k` 0–5 as
/// there, 6 `presetSystem` (`null` for a plain OJS policy),
/// 7 `onExhaustion`, 8 `backoffStrategy` (the strategy's name),
/// 9 `nonRetryableErrors`, 10 `toString()` (the canonical effective policy
/// as compact JSON text; `toJSON()` is `JSON.parse` of it). Hidden from
/// the public types.
#[wasm_bindgen(js_name = __policyValue)]
pub fn policy_value(handle: f64, k: u32) -> JsResult<JsValue> {
    let p = policy(handle)?;
    Ok(match k {
        0..=5 => number_of(&p, k).into(),
        6 => p.preset_system().map_or(JsValue::NULL, JsValue::from_str),
        7 => JsValue::from_str(p.on_exhaustion().as_str()),
        8 => JsValue::from_str(p.strategy().as_str()),
        9 => p
            .non_retryable_errors()
            .iter()
            .map(|s| JsValue::from_str(s))
            .collect::<Array>()
            .into(),
        _ => JsValue::from_str(&p.to_json()),
    })
}

/// The methods of the policy behind `handle` that take JS values, through
/// one export: `op` 0 `delay(a, b)` (the full path: `api.js` tries the
/// fast exports first), 1 `delays(a, b)`, 2 `schedule(a, b)` as numbers
/// (see [`schedule_numbers`]), 3 `decide(a, b)`. Hidden from the public
/// types.
#[wasm_bindgen(js_name = __policyCall)]
pub fn policy_call(op: u32, handle: f64, a: JsValue, b: JsValue) -> JsResult<JsValue> {
    // An `Arc` of its own, not a borrow of the registry: reading `a` and
    // `b` can run JS (getters) that frees or makes policies.
    let p = policy(handle)?;
    match op {
        0 => delay_full(&p, &a, &b).map(JsValue::from_f64),
        1 => delays_full(&p, &a, &b).map(Into::into),
        2 => schedule_numbers(&p, &a, &b)
            .map(|rows| js_sys::Float64Array::from(rows.as_slice()).into()),
        _ => {
            let f = self::failure(&a)?;
            let (now, j) = decide_options(&b)?;
            decision_js(&core(p.decide(&f, now, j.source()))?)
        }
    }
}

/// Frees the policy behind `handle` now (`free()`, `Symbol.dispose`), or,
/// `collected` (the class's `FinalizationRegistry`), gives its slot back.
/// A handle that names no policy is ignored. Hidden from the public types.
#[wasm_bindgen(js_name = __release)]
pub fn release(handle: f64, collected: bool) {
    if collected {
        registry::release(handle);
    } else {
        registry::free(handle);
    }
}

/// How many registry slots are taken (live policies, and freed ones whose
/// object is not collected yet): for the tests that check that collected
/// policies give their slots back. Hidden from the public types.
#[wasm_bindgen(js_name = __livePolicies)]
pub fn live_policies() -> f64 {
    registry::taken().map_or(-1.0, num)
}

/// The delay in ms before retry `retry_number`; `jitter` may be a plain
/// number `u` (the same as `{ u }`).
fn delay_full(
    p: &ojs_retry::RetryPolicy,
    retry_number: &JsValue,
    jitter: &JsValue,
) -> JsResult<f64> {
    let n = uint(retry_number, "retry_number")?;
    let d = match jitter.as_f64() {
        Some(u) => p.delay(n, ojs_retry::JitterSource::Uniform(u)),
        None => p.delay(n, jitter_or_entropy(jitter)?.source()),
    };
    core(d).map(num)
}

/// Retries `1..=count`, as numbers: 8 per row (`retryNumber`,
/// `attempt`, `rawMs`, `cappedMs`, `minMs`, `maxMs`, `delayMs` (`-1`
/// without a jitter source), `cumulativeMs`), one copy into a
/// `Float64Array`; `api.js`'s `schedule` makes the row objects (in JS,
/// several times faster than building them from Rust, or than JSON).
fn schedule_numbers(
    p: &ojs_retry::RetryPolicy,
    count: &JsValue,
    jitter: &JsValue,
) -> JsResult<Vec<f64>> {
    let count = uint(count, "count")?;
    let j = convert::jitter(jitter)?;
    let rows = core(p.schedule(count, j.as_ref().map(convert::Jitter::source)))?;
    let mut out = Vec::with_capacity(rows.len().saturating_mul(8));
    for r in &rows {
        out.extend([
            num(r.retry_number),
            num(r.attempt),
            num(r.raw_ms),
            num(r.capped_ms),
            num(r.min_ms),
            num(r.max_ms),
            r.delay_ms.map_or(-1.0, num),
            num(r.cumulative_ms),
        ]);
    }
    Ok(out)
}

/// The delays for many retry numbers in one call (one boundary
/// crossing): an array, `Uint32Array` or `Float64Array` of retry numbers.
fn delays_full(
    p: &ojs_retry::RetryPolicy,
    retry_numbers: &JsValue,
    jitter: &JsValue,
) -> JsResult<Array> {
    let listy = Array::is_array(retry_numbers)
        || retry_numbers.is_instance_of::<js_sys::Uint32Array>()
        || retry_numbers.is_instance_of::<js_sys::Float64Array>();
    if !listy {
        return Err(convert::arg_error(
            "retry_numbers",
            &alloc::format!(
                "expected an array, Uint32Array or Float64Array of retry numbers, found {}",
                convert::describe(retry_numbers)
            ),
        ));
    }
    let j = jitter_or_entropy(jitter)?;
    let items = Array::from(retry_numbers);
    let out = Array::new_with_length(items.length());
    // The entry's name is formatted only for an error.
    let field = |i: usize| alloc::format!("retry_numbers[{i}]");
    let src = j.source();
    for (i, v) in items.iter().enumerate() {
        let n = match v
            .as_f64()
            .and_then(|x| ojs_retry::args::uint_from_f64("", x).ok())
        {
            Some(n) => n,
            // Not a valid number: this reports why.
            None => uint(&v, &field(i))?,
        };
        let d = match p.delay(n, src) {
            Ok(d) => d,
            // The entry, not the parameter name, is what the caller must fix.
            Err(e) if e.field() == "retry_number" => {
                return Err(convert::arg_error(&field(i), e.message()));
            }
            Err(e) => return Err(convert::core_error(&e)),
        };
        out.set(
            u32::try_from(i).unwrap_or(u32::MAX),
            JsValue::from_f64(num(d)),
        );
    }
    Ok(out)
}

/// A JS number as an integer in `0 ..= 2^53 − 1`, or `None` (the fast
/// exports' check; the full methods report why).
use ojs_retry::args::uint_of_f64 as fast_uint;

/// A delay as a JS number, for the fast exports: `-1` (take the full
/// path) in the impossible case of a delay beyond `i64` (delays are at most
/// 2^53 − 1), so that the conversion is the signed one (as in `ojs_retry::args::uint_of_f64`).
#[inline(always)]
fn fast_num(d: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // below 2^53: exact
    i64::try_from(d).map_or(-1.0, |d| d as f64)
}

/// The delay of retry `retry_number` for `policy`, or `-1` for any invalid
/// input.
#[inline(always)]
fn fast_delay(
    policy: &ojs_retry::RetryPolicy,
    retry_number: f64,
    src: ojs_retry::JitterSource<'_>,
) -> f64 {
    // Written out (`and_then`'s closure stays a call at opt-level "z",
    // returning its `Option` through memory).
    let Some(n) = fast_uint(retry_number) else {
        return -1.0;
    };
    match policy.delay_ok(n, src) {
        Some(d) => fast_num(d),
        None => -1.0,
    }
}

#[cold]
fn invalid(_: ojs_retry::Error) -> f64 {
    -1.0
}

/// `policy.delay(n, u)` for the policy behind `handle` (see [`registry`]),
/// without `JsValue`s, a `Result` or wasm-bindgen's method shim crossing the
/// boundary: the delay, or `-1` when anything is invalid (including an
/// unknown or freed handle). `api.js` calls it for plain numbers and `{ u }`
/// and falls back to the full `delay` (which reports the error) on `-1`.
/// Hidden from the public types.
///
/// A raw export of the module, not a `#[wasm_bindgen]` one: `api.js` calls
/// it on the instance's exports (wasm-bindgen keeps the export and makes no
/// JS for it). The export function `#[wasm_bindgen]` generates around a
/// plain `(f64, f64, f64) -> f64` function still splits and rejoins each
/// argument through a shadow-stack frame at opt-level "z" (an 80-byte frame,
/// a dozen stores and loads before the work starts): measured 11 ns of the
/// 40 ns call in Node, more than the whole delay.
// SAFETY: `export_name` is unsafe because two symbols of one name would
// clash at link time. These names are taken by nothing else in the module
// (wasm-bindgen's exports have names of their own: no `#[wasm_bindgen]`
// item is called `__delayU` or `__delayS`); the functions are safe Rust of
// plain numbers, so no value crossing the boundary can be invalid.
#[allow(unsafe_code)]
#[unsafe(export_name = "__delayU")]
pub extern "C" fn delay_u(handle: f64, retry_number: f64, u: f64) -> f64 {
    registry::delay(
        handle,
        retry_number,
        ojs_retry::JitterSource::Uniform(u),
        fast_delay,
    )
}

/// `policy.delay(n, { seed })` for a number seed, as [`delay_u`] (a raw
/// export too): the delay, or `-1` for anything invalid. Hidden from the
/// public types.
// SAFETY: as `delay_u`'s.
#[allow(unsafe_code)]
#[unsafe(export_name = "__delayS")]
pub extern "C" fn delay_s(handle: f64, retry_number: f64, seed: f64) -> f64 {
    let Some(seed) = fast_uint(seed) else {
        return -1.0;
    };
    registry::delay(
        handle,
        retry_number,
        ojs_retry::JitterSource::Seed(seed),
        fast_delay,
    )
}

/// The most numbers [`scratch`] makes room for (`api.js` asks for 1024).
const SCRATCH_MAX: u64 = 1 << 16;

/// [`delays_fast`]'s numbers, in place: `api.js` writes the retry numbers
/// through a `Float64Array` view on this buffer and reads the delays back
/// from it. The buffer is allocated once and never resized, so the view's
/// address stays valid (only a memory growth detaches the view, and
/// `api.js` then makes a new one at the same address). A lock for the
/// reason given in [`registry`]: a plain cell without threads.
static SCRATCH: RwLock<Vec<f64>> = RwLock::new(Vec::new());

/// [`parse`]'s text: `api.js` writes a policy document's UTF-8 through a
/// `Uint8Array` view on this buffer (`TextEncoder.encodeInto`), allocated
/// once and never moved, as [`SCRATCH`].
static TEXT: RwLock<Vec<u8>> = RwLock::new(Vec::new());

/// The address (bytes into wasm memory) of a scratch buffer: `kind` 0 (or
/// omitted) that of [`delays_fast`], holding at least `len` numbers; 1
/// that of [`parse`], holding at least `len` bytes (at most `SCRATCH_MAX`
/// either way). `-1` if it cannot be had, including a later call asking
/// for more than the first one got (a buffer never moves). Hidden from the
/// public types.
#[wasm_bindgen(js_name = __scratch)]
pub fn scratch(len: f64, kind: u32) -> f64 {
    let Some(len) = fast_uint(len)
        .filter(|&n| n <= SCRATCH_MAX)
        .and_then(|n| usize::try_from(n).ok())
    else {
        return -1.0;
    };
    if kind == 1 {
        TEXT.try_write().map_or(-1.0, |mut s| fixed_at(&mut s, len))
    } else {
        SCRATCH
            .try_write()
            .map_or(-1.0, |mut s| fixed_at(&mut s, len))
    }
}

/// The address of `buf`, allocated with `len` items on the first call and
/// never moved after (a view `api.js` holds stays on it); `-1` when a
/// later call asks for more.
fn fixed_at<T: Default + Clone>(buf: &mut Vec<T>, len: usize) -> f64 {
    if buf.is_empty() {
        buf.resize(len, T::default());
    } else if buf.len() < len {
        return -1.0;
    }
    // JS writes through this address: its provenance is exposed.
    u32::try_from(buf.as_mut_ptr().expose_provenance()).map_or(-1.0, f64::from)
}

/// The wasm memory, for `api.js`'s view on the scratch buffer. Hidden from
/// the public types.
#[wasm_bindgen(js_name = __memory)]
pub fn memory() -> JsValue {
    wasm_bindgen::memory()
}

/// `policy.delays(ns, jitter)` for the policy behind `handle` and the
/// first `len` numbers of the scratch buffer, overwritten with their
/// delays: `0`, or `-1` when anything is invalid (then some entries may
/// already be overwritten, and `api.js` takes the full `delays`, which
/// reports the error). `kind` 0: `jitter` is `u`; 1: a seed. Hidden from the
/// public types.
#[wasm_bindgen(js_name = __delays)]
pub fn delays_fast(handle: f64, kind: u32, jitter: f64, len: f64) -> f64 {
    let src = if kind == 0 {
        ojs_retry::JitterSource::Uniform(jitter)
    } else {
        match fast_uint(jitter) {
            Some(s) => ojs_retry::JitterSource::Seed(s),
            None => return -1.0,
        }
    };
    let Some(len) = fast_uint(len).and_then(|n| usize::try_from(n).ok()) else {
        return -1.0;
    };
    let Ok(mut s) = SCRATCH.try_write() else {
        return -1.0;
    };
    let Some(slots) = s.get_mut(..len) else {
        return -1.0;
    };
    registry::with(handle, |p| {
        // The core's batch: the source's and the spread's work once.
        match p.delays_with(src).and_then(|d| d.fill(slots)) {
            Ok(()) => 0.0,
            Err(_) => -1.0,
        }
    })
    .unwrap_or(-1.0)
}

/// `{historyLimit?}`.
fn history_limit(v: &JsValue) -> JsResult<Option<usize>> {
    let Some(o) = options(v, "options", &["historyLimit"])? else {
        return Ok(None);
    };
    match opt_uint(&prop(&o, "historyLimit"), "history_limit")? {
        None => Ok(None),
        Some(n) => usize::try_from(n).map(Some).map_err(|_| {
            arg_error(
                "history_limit",
                &alloc::format!("expected at most {} in wasm32, found {n}", usize::MAX),
            )
        }),
    }
}

fn action_js(a: Option<Action>) -> JsValue {
    a.map_or(JsValue::NULL, |a| JsValue::from_str(a.as_str()))
}

/// Per-job retry state (§10).
#[wasm_bindgen(js_name = RetryState)]
pub struct JsRetryState {
    inner: RetryState,
}

#[wasm_bindgen(js_class = RetryState)]
impl JsRetryState {
    /// A fresh job at attempt 1.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> JsResult<JsRetryState> {
        let mut inner = RetryState::new();
        if let Some(n) = history_limit(&options)? {
            inner = core(inner.with_history_limit(n))?;
        }
        Ok(Self { inner })
    }

    /// Reads a §10 state document (object or JSON text).
    #[wasm_bindgen(js_name = fromJSON)]
    pub fn from_json(state: JsValue, options: JsValue) -> JsResult<JsRetryState> {
        let limit = history_limit(&options)?.unwrap_or(ojs_retry::state::MIN_HISTORY);
        let inner = match convert::text(&state, "", Document::State) {
            Some(t) => core(RetryState::from_json(&t?, limit))?,
            None => core(RetryState::from_value(
                &json_value(&state, "", Document::State)?,
                limit,
            ))?,
        };
        Ok(Self { inner })
    }

    /// The number-valued getters, through one export: `k` 0 `attempt`
    /// (1-based), 1 `historyLimit` (the bound on the error history),
    /// 2 `nextRetryAt` (epoch ms; `-1` when not retrying, which `api.js`
    /// shows as `null`). Hidden from the public types.
    #[wasm_bindgen(js_name = __num)]
    pub fn number(&self, k: u32) -> f64 {
        match k {
            0 => num(self.inner.attempt()),
            #[allow(clippy::cast_precision_loss)] // a usize below 2^32 in wasm32
            1 => self.inner.history_limit() as f64,
            _ => self.inner.next_retry_at().map_or(-1.0, num),
        }
    }

    /// `"discard"`, `"dead_letter"` or null.
    #[wasm_bindgen(getter)]
    pub fn terminal(&self) -> JsValue {
        action_js(self.inner.terminal())
    }

    /// Records a handler failure and returns the decision (`policy`: the
    /// policy's handle, which `api.js` passes).
    #[wasm_bindgen(js_name = recordFailure)]
    pub fn record_failure(
        &mut self,
        policy: f64,
        error: JsValue,
        options: JsValue,
    ) -> JsResult<JsValue> {
        // The policy first, as an `Arc` of its own: reading the arguments
        // can run JS (getters) that frees it.
        let policy = self::policy(policy)?;
        let e = job_error(&error)?;
        let (now, j) = decide_options(&options)?;
        let d = core(self.inner.record_failure(&policy, &e, now, j.source()))?;
        decision_js(&d)
    }

    /// Records an expired reservation and returns the decision (`policy`:
    /// the policy's handle).
    #[wasm_bindgen(js_name = recordTimeout)]
    pub fn record_timeout(&mut self, policy: f64, options: JsValue) -> JsResult<JsValue> {
        let policy = self::policy(policy)?;
        let (now, j) = decide_options(&options)?;
        let d = core(self.inner.record_timeout(&policy, now, j.source()))?;
        decision_js(&d)
    }

    /// The §10 state document as compact JSON text (`api.js`'s `toJSON()`
    /// is `JSON.parse` of it).
    #[wasm_bindgen(js_name = toString)]
    pub fn to_string_js(&self) -> String {
        self.inner.to_json()
    }
}

/// `{type, message, code?, details?}`.
fn job_error(v: &JsValue) -> JsResult<JobError> {
    let Some(obj) = options(v, "error", &["type", "message", "code", "details"])? else {
        return Err(arg_error(
            "error",
            "expected an error object {type, message, code?, details?}",
        ));
    };
    let mut e = JobError::new(
        string(&prop(&obj, "type"), "type")?,
        string(&prop(&obj, "message"), "message")?,
    );
    if let Some(c) = given(&prop(&obj, "code")) {
        e.code = Some(core(ojs_retry::HandlerCode::parse(&string(c, "code")?))?);
    }
    let details = prop(&obj, "details");
    if !details.is_undefined() {
        e.details = Some(json_value(&details, "details", Document::Argument)?.into());
    }
    Ok(e)
}

/// A visibility-timeout reservation (§9.2, §9.3).
#[wasm_bindgen(js_name = Reservation)]
pub struct JsReservation {
    inner: Reservation,
}

#[wasm_bindgen(js_class = Reservation)]
impl JsReservation {
    /// Reserves `attempt` until `now + visibilityTimeoutMs`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        attempt: JsValue,
        visibility_timeout_ms: JsValue,
        now: JsValue,
    ) -> JsResult<JsReservation> {
        let attempt = uint(&attempt, "attempt")?;
        let timeout = uint(&visibility_timeout_ms, "visibility_timeout_ms")?;
        let now = convert::now(&now)?;
        Ok(Self {
            inner: core(Reservation::new(attempt, now, timeout))?,
        })
    }

    /// The number-valued getters, through one export: `k` 0 `attempt` (the
    /// reserved attempt), 1 `visibilityTimeoutMs`, 2 `deadline` (epoch ms).
    /// Hidden from the public types.
    #[wasm_bindgen(js_name = __num)]
    pub fn number(&self, k: u32) -> f64 {
        num(match k {
            0 => self.inner.attempt(),
            1 => self.inner.visibility_timeout_ms(),
            _ => self.inner.deadline(),
        })
    }

    /// Extends the deadline, unless already expired.
    pub fn heartbeat(&mut self, now: JsValue) -> JsResult<JsValue> {
        let now = convert::now(&now)?;
        let out = Object::new();
        match core(self.inner.heartbeat(now))? {
            Heartbeat::Extended { deadline } => {
                set(&out, "extended", &JsValue::TRUE);
                set(&out, "deadline", &JsValue::from_f64(num(deadline)));
            }
            Heartbeat::Expired => set(&out, "extended", &JsValue::FALSE),
        }
        Ok(out.into())
    }

    /// Whether `now` has reached the deadline.
    #[wasm_bindgen(js_name = isExpired)]
    pub fn is_expired(&self, now: JsValue) -> JsResult<bool> {
        core(self.inner.is_expired(convert::now(&now)?))
    }

    /// The failure to pass to `decide()` once expired, else null.
    pub fn expiry(&self, now: JsValue) -> JsResult<JsValue> {
        match core(self.inner.expiry(convert::now(&now)?))? {
            None => Ok(JsValue::NULL),
            Some(f) => {
                let out = Object::new();
                set(&out, "attempt", &JsValue::from_f64(num(f.attempt)));
                set(&out, "timedOut", &JsValue::from_bool(f.timed_out));
                Ok(out.into())
            }
        }
    }
}

// The module-level functions, reached through one export ([`call`]):
// one wasm-bindgen shim (externref arguments, `Result` return) instead of
// seven. `api.js` defines the public functions.

/// Whether `errorType` matches one of `patterns` (§6).
fn matches(error_type: &JsValue, patterns: &JsValue) -> JsResult<JsValue> {
    let t = string(error_type, "error_type")?;
    let p = strings(patterns, "patterns")?;
    Ok(JsValue::from_bool(ojs_retry::matches(&t, &p)))
}

/// The first entry of `patterns` that `errorType` matches, or null.
fn first_match(error_type: &JsValue, patterns: &JsValue) -> JsResult<JsValue> {
    let t = string(error_type, "error_type")?;
    let p = strings(patterns, "patterns")?;
    Ok(ojs_retry::first_match(&t, &p).map_or(JsValue::NULL, JsValue::from_str))
}

/// An ISO 8601 duration as milliseconds.
fn parse_duration(text: &JsValue) -> JsResult<JsValue> {
    core(ojs_retry::parse_duration(&string(text, "duration")?)).map(|n| num(n).into())
}

/// Milliseconds as the canonical duration string.
fn format_duration(ms: &JsValue) -> JsResult<JsValue> {
    core(ojs_retry::format_duration(uint(ms, "duration")?)).map(|s| JsValue::from_str(&s))
}

/// Epoch milliseconds as RFC 3339 UTC.
fn format_timestamp(ms: &JsValue) -> JsResult<JsValue> {
    core(ojs_retry::format_timestamp(uint(ms, "timestamp")?)).map(|s| JsValue::from_str(&s))
}

/// RFC 3339 text as epoch milliseconds.
fn parse_timestamp(text: &JsValue) -> JsResult<JsValue> {
    core(ojs_retry::parse_timestamp(&string(text, "timestamp")?)).map(|n| num(n).into())
}

/// The 53-bit sample `k` (`u = k / 2^53`) a jitter source gives for a retry.
fn jitter_sample(retry_number: &JsValue, jitter: &JsValue) -> JsResult<JsValue> {
    let n = uint(retry_number, "retry_number")?;
    let Some(j) = self::jitter(jitter)? else {
        return Err(arg_error(
            "jitter",
            "expected a jitter source {u}, {seed} or {key}",
        ));
    };
    core(j.source().sample(n)).map(|s| num(s.bits()).into())
}

/// The module-level function number `op` (the order of `api.js`'s
/// `FUNCTIONS`): `matches`, `firstMatch`, `parseDuration`,
/// `formatDuration`, `formatTimestamp`, `parseTimestamp`, `jitterSample`.
/// Hidden from the public types.
#[wasm_bindgen(js_name = __call)]
pub fn call(op: u32, a: JsValue, b: JsValue) -> JsResult<JsValue> {
    match op {
        0 => matches(&a, &b),
        1 => first_match(&a, &b),
        2 => parse_duration(&a),
        3 => format_duration(&a),
        4 => format_timestamp(&a),
        5 => parse_timestamp(&a),
        6 => jitter_sample(&a, &b),
        _ => Err(arg_error("op", "unknown function")),
    }
}
