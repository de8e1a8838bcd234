//! # ojs-retry-wasm
//!
//! The [`ojs_retry`] engine for JavaScript hosts through WebAssembly
//! (wasm-bindgen): browsers, bundlers, Cloudflare Workers (workerd), Deno,
//! Bun and Node. Published on npm as `ojs-retry-wasm`; the TypeScript
//! surface is `ojs-retry.d.ts`, shared with the native `ojs-retry` package.
//!
//! This crate is thin, and every export takes and returns numbers only, so
//! wasm-bindgen generates no shim around any of them: `api.js` checks the
//! JS arguments and turns JS values into JSON text, writes text into a
//! buffer in wasm memory ([`io`]) and numbers into the scratch buffer
//! ([`scratch`]), and calls [`run`], which calls the core's text entry
//! points and writes back JSON text: the result, or a core error as
//! `[code, message, field, fault message, …]`, which `api.js` turns into a
//! JS `Error` carrying `code`, `field` and `faults`. An omitted `now` is
//! `Date.now()` and an omitted jitter source a sample from
//! `crypto.getRandomValues`, both taken in `api.js`.

// Without threads (the build that ships), no `std`: the module's
// allocator is its own (`heap`, below), panics abort (the profile is `panic =
// "abort"`; none can come from the caller's input), and the statics live
// in `lock::RwLock`. std's panic machinery and its locks cost ~2 KB.
#![cfg_attr(
    all(target_family = "wasm", not(target_feature = "atomics"), not(test)),
    no_std
)]

extern crate alloc;

#[cfg(any(test, all(not(target_feature = "atomics"), target_family = "wasm")))]
mod heap;
mod lock;
mod registry;

// Not Rust's default dlmalloc, nor talc: `heap`'s size classes are
// smaller (see there), and as fast for the module's few, small blocks.
#[cfg(all(not(target_feature = "atomics"), target_family = "wasm"))]
#[global_allocator]
static ALLOCATOR: heap::Heap<heap::Wasm> = heap::Heap::new(heap::Wasm);

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use lock::RwLock;

use ojs_retry::{
    Decision, Error, Failure, HandlerCode, Heartbeat, JitterSource, JobError, Reservation,
    RetryPolicy, RetryState,
};
use registry::{Miss, OBJECTS, Obj};
use wasm_bindgen::prelude::*;

/// A panic aborts the instance (as `panic = "abort"` does with std): the
/// engine and this crate never panic on input, so one is a bug, and the
/// trap it becomes is what wasm-bindgen reports.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics"), not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

#[allow(clippy::cast_precision_loss)] // engine values stay below 2^53
fn num(n: u64) -> f64 {
    n as f64
}

/// `s` as a JSON string literal appended to `out`.
fn json_str(out: &mut String, s: &str) {
    ojs_retry::json::push_string(out, s);
}

/// `Some(s)` as a JSON string, `None` as `null`.
fn json_opt(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => json_str(out, s),
        None => out.push_str("null"),
    }
}

/// `Some(n)` as a JSON number, `None` as `null`.
fn json_num(out: &mut String, n: Option<u64>) {
    match n {
        Some(n) => ojs_retry::json::push_u64(out, n),
        None => out.push_str("null"),
    }
}

/// A decision for `api.js`, which builds the object (faster than
/// `JSON.parse` of its JSON): its numbers into [`ARGS`] (`attempt`,
/// `timedOut` 0 or 1, `retryNumber`, `delayMs`, `nextRetryAt` (`-1` for
/// none), and 1 when there is a matched pattern), and as text `action`,
/// `reason` and `handlerCode` (empty for none), each followed by a line
/// feed, then the matched pattern (the caller's text, last: it may hold
/// anything).
fn decision_text(d: &Decision) -> String {
    let pattern = match &d.reason {
        ojs_retry::Reason::NonRetryable { pattern } => Some(pattern.as_str()),
        _ => None,
    };
    if let Ok(mut a) = ARGS.try_write() {
        let nums = [
            num(d.attempt),
            f64::from(u8::from(d.timed_out)),
            d.retry_number.map_or(-1.0, num),
            d.delay_ms.map_or(-1.0, num),
            d.next_retry_at.map_or(-1.0, num),
            f64::from(u8::from(pattern.is_some())),
        ];
        for (slot, x) in a.iter_mut().zip(nums) {
            *slot = x;
        }
    }
    let mut out = String::with_capacity(64);
    for s in [
        d.action.as_str(),
        d.reason.as_str(),
        d.handler_code.map_or("", HandlerCode::as_str),
    ] {
        out.push_str(s);
        out.push('\n');
    }
    out.push_str(pattern.unwrap_or_default());
    out
}

/// A core error as `api.js` reads it: `[code, message, field, fault
/// message, field, fault message, …]`.
fn error_json(e: &Error) -> String {
    let mut out = String::from("[");
    json_str(&mut out, e.code().as_str());
    out.push(',');
    json_str(
        &mut out,
        &ojs_retry::error::render_message(
            e.code().as_str(),
            e.iter_faults()
                .map(|f| (f.field.as_str(), f.message.as_str())),
        ),
    );
    for f in e.iter_faults() {
        out.push(',');
        json_str(&mut out, &f.field);
        out.push(',');
        json_str(&mut out, &f.message);
    }
    out.push(']');
    out
}

/// `parts` joined, as `[..].concat()` would, without `alloc`'s generic
/// join (1 KB of wasm, with a panic for a length overflow that cannot
/// happen).
fn cat(parts: &[&str]) -> String {
    let mut out = String::new();
    for p in parts {
        out.push_str(p);
    }
    out
}

/// `n` in decimal.
fn int(n: u64) -> String {
    let mut out = String::new();
    ojs_retry::json::push_u64(&mut out, n);
    out
}

/// A `validation.invalid_argument` error for one field.
fn arg_error(field: &str, message: &str) -> Error {
    ojs_retry::args::Document::Argument.fault(field, message)
}

/// The error for a handle naming no live object of class `what`, with
/// `field` (`policy`; `this` for a `RetryState` or a `Reservation`);
/// `noun` names the handle in the message.
fn miss_error(miss: &Miss, field: &str, what: &str, noun: &str) -> Error {
    arg_error(
        field,
        &match miss {
            Miss::Freed => cat(&["expected a live ", what, ", found one already freed"]),
            Miss::Unknown => cat(&[
                "expected a live ",
                what,
                ", found a released or unknown ",
                noun,
                " handle",
            ]),
        },
    )
}

/// The policy behind `handle`, or the typed `policy` error: a freed
/// policy, or a handle that names none (stale, forged).
fn policy(handle: f64) -> Result<Arc<RetryPolicy>, Error> {
    registry::get(handle).map_err(|m| miss_error(&m, "policy", "RetryPolicy", "policy"))
}

/// A new policy, registered: its handle.
fn made(policy: RetryPolicy) -> Result<f64, Error> {
    registry::register(Arc::new(policy)).ok_or_else(full)
}

/// A new `RetryState` or `Reservation`, registered: its handle.
fn made_obj(obj: Obj) -> Result<f64, Error> {
    OBJECTS
        .try_write()
        .ok()
        .and_then(|mut r| r.register(obj))
        .ok_or_else(full)
}

#[cold]
fn busy() -> Error {
    arg_error("", "the object registry is busy")
}

/// A registration refused: every slot is taken (the registry is never
/// busy then, see [`registry::register`]).
#[cold]
fn full() -> Error {
    arg_error(
        "",
        "too many live objects of one kind (2^25); free() unused ones",
    )
}

/// `f` of the `RetryState` or `Reservation` behind `handle`.
fn with_obj<R>(
    handle: f64,
    what: &str,
    f: impl FnOnce(&mut Obj) -> Option<Result<R, Error>>,
) -> Result<R, Error> {
    let mut r = OBJECTS.try_write().map_err(|_| busy())?;
    let found = r.get_mut(handle).map(f);
    match found {
        Ok(Some(out)) => out,
        // A handle of the other class: as unknown as a forged one.
        Ok(None) => Err(miss_error(&Miss::Unknown, "this", what, "object")),
        Err(m) => Err(miss_error(&m, "this", what, "object")),
    }
}

fn state<R>(handle: f64, f: impl FnOnce(&mut RetryState) -> Result<R, Error>) -> Result<R, Error> {
    with_obj(handle, "RetryState", |o| match o {
        Obj::State(s) => Some(f(s)),
        Obj::Reservation(_) => None,
    })
}

fn reservation<R>(
    handle: f64,
    f: impl FnOnce(&mut Reservation) -> Result<R, Error>,
) -> Result<R, Error> {
    with_obj(handle, "Reservation", |o| match o {
        Obj::Reservation(r) => Some(f(r)),
        Obj::State(_) => None,
    })
}
/// The policy in the first `len` bytes of the text buffer (see
/// [`scratch`]), which `api.js` fills with `TextEncoder.encodeInto`: its
/// handle, or `-1` for anything but a valid document (`api.js` then takes
/// `__run`, which reports the error). `api.js` sends ASCII text only, so
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

/// The text buffer of [`run`] (arguments in, results out), which may
/// move when it grows: `api.js` asks [`io`] for its address before each
/// read or write. A lock for the reason given in [`registry`]: a plain
/// cell without threads.
static IO: RwLock<Vec<u8>> = RwLock::new(Vec::new());

/// The address of [`run`]'s text buffer, grown to at least `len` bytes
/// first; `-1` if it cannot be had. Hidden from the public types.
#[wasm_bindgen(js_name = __io)]
pub fn io(len: f64) -> f64 {
    let Some(len) = fast_uint(len).and_then(|n| usize::try_from(n).ok()) else {
        return -1.0;
    };
    let Ok(mut b) = IO.try_write() else {
        return -1.0;
    };
    if b.len() < len {
        b.resize(len, 0);
    }
    // JS writes through this address: its provenance is exposed.
    u32::try_from(b.as_mut_ptr().expose_provenance()).map_or(-1.0, f64::from)
}

/// `new RetryPolicy()`: the defaults, registered (built directly, the
/// same policy as no layer merged, without the merge or a text to read):
/// its handle, or `-1` (`api.js` then takes [`run`], which reports why).
/// Hidden from the public types.
#[wasm_bindgen(js_name = __defaultPolicy)]
pub fn default_policy() -> f64 {
    registry::register(Arc::new(RetryPolicy::default())).unwrap_or(-1.0)
}

/// The arguments of one [`run`] call: up to [`ARG_NUMS`] numbers, which
/// `api.js` writes into [`ARGS`], and strings, which it writes into the
/// text buffer, each as a little-endian `u32` byte length and its UTF-8.
struct Args<'a> {
    nums: [f64; ARG_NUMS],
    texts: Vec<&'a str>,
}

/// How many numbers a call takes.
const ARG_NUMS: usize = 8;

impl Args<'_> {
    fn num(&self, i: usize) -> f64 {
        self.nums.get(i).copied().unwrap_or(f64::NAN)
    }

    /// Number `i`, an integer argument called `field`.
    fn uint(&self, i: usize, field: &str) -> Result<u64, Error> {
        ojs_retry::args::uint_from_f64(field, self.num(i))
    }

    /// Number `i` as an optional bound: negative means none.
    fn limit(&self, i: usize) -> Result<Option<usize>, Error> {
        if self.num(i) < 0.0 {
            return Ok(None);
        }
        let n = self.uint(i, "history_limit")?;
        usize::try_from(n).map(Some).map_err(|_| {
            arg_error(
                "history_limit",
                &cat(&[
                    "expected at most ",
                    &int(u64::try_from(usize::MAX).unwrap_or(u64::MAX)),
                    " in wasm32, found ",
                    &int(n),
                ]),
            )
        })
    }

    fn text(&self, i: usize) -> Result<&str, Error> {
        self.texts.get(i).copied().ok_or_else(malformed)
    }

    /// The jitter source in numbers `i..`: kind 0 `u` (`i + 1`), 1 a seed
    /// (high and low 32 bits at `i + 1`, `i + 2`), 2 a key (the text
    /// numbered `i + 1`), anything else none.
    fn jitter(&self, i: usize) -> Result<Option<JitterSource<'_>>, Error> {
        let at = i.saturating_add(1);
        Ok(Some(match fast_uint(self.num(i)) {
            Some(0) => JitterSource::Uniform(self.num(at)),
            Some(1) => {
                let hi = self.uint(at, "seed")?;
                let lo = self.uint(at.saturating_add(1), "seed")?;
                JitterSource::Seed(hi.checked_shl(32).unwrap_or(0) | lo)
            }
            Some(2) => {
                let key = usize::try_from(self.uint(at, "key")?).map_err(|_| malformed())?;
                JitterSource::Key(self.text(key)?)
            }
            _ => return Ok(None),
        }))
    }

    /// [`Args::jitter`] where one is required (`api.js` draws a sample
    /// from the host's entropy when none is given).
    fn source(&self, i: usize) -> Result<JitterSource<'_>, Error> {
        self.jitter(i)?.ok_or_else(malformed)
    }
}

#[cold]
fn malformed() -> Error {
    arg_error("", "malformed call from api.js")
}

/// The texts in `buf` (see [`Args`]).
fn texts(buf: &[u8]) -> Option<Vec<&str>> {
    let mut texts = Vec::new();
    let mut rest = buf;
    while let Some((head, tail)) = rest.split_first_chunk::<4>() {
        let n = usize::try_from(u32::from_le_bytes(*head)).ok()?;
        let (text, tail) = tail.split_at_checked(n)?;
        texts.push(core::str::from_utf8(text).ok()?);
        rest = tail;
    }
    rest.is_empty().then_some(texts)
}

/// What an operation answers: text, a number, numbers (a schedule's
/// rows), or a decision (see [`run`]).
enum Out {
    Text(String),
    Number(f64),
    Numbers(Vec<f64>),
    Decision(Decision),
}

/// Runs operation `op` (see [`call`]) on the numbers `api.js` wrote into
/// [`ARGS`] and the texts in the first `len` bytes of the text buffer
/// (see [`Args`]), and writes its result into the text buffer: JSON text
/// (or plain text where [`call`] says so), a number (into the first slot
/// of [`ARGS`], the text empty), numbers as little-endian
/// `f64`s from the first address that is a multiple of 8 (so that a
/// `Float64Array` can view them), or a decision (see [`decision_text`]). Returns the result's byte length `n`
/// (without the padding), or `-n − 1` when the result is an error (see
/// [`error_json`]). Hidden from the public types.
#[wasm_bindgen(js_name = __run)]
pub fn run(op: u32, handle: f64, len: f64) -> f64 {
    let result = {
        let mut nums = [f64::NAN; ARG_NUMS];
        if let Ok(a) = ARGS.try_read() {
            for (slot, x) in nums.iter_mut().zip(a.iter()) {
                *slot = *x;
            }
        }
        let Ok(buf) = IO.try_read() else {
            return -1.0;
        };
        let input = fast_uint(len)
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| buf.get(..n))
            .and_then(texts);
        match input {
            Some(texts) => call(op, handle, &Args { nums, texts }),
            None => Err(malformed()),
        }
    };
    let Ok(mut b) = IO.try_write() else {
        return -1.0;
    };
    b.clear();
    let (ok, n) = match result {
        Ok(Out::Text(t)) => {
            b.extend_from_slice(t.as_bytes());
            (true, t.len())
        }
        Ok(Out::Number(x)) => {
            if let Ok(mut a) = ARGS.try_write() {
                if let Some(slot) = a.first_mut() {
                    *slot = x;
                }
            }
            (true, 0)
        }
        Ok(Out::Numbers(xs)) => {
            let n = xs.len().saturating_mul(8);
            b.reserve(n.saturating_add(8));
            // The buffer does not move after the reservation.
            let pad = b.as_ptr().addr().wrapping_neg() % 8;
            b.resize(pad, 0);
            for x in xs {
                b.extend_from_slice(&x.to_le_bytes());
            }
            (true, n)
        }
        Ok(Out::Decision(d)) => {
            let t = decision_text(&d);
            b.extend_from_slice(t.as_bytes());
            (true, t.len())
        }
        Err(e) => {
            let t = error_json(&e);
            b.extend_from_slice(t.as_bytes());
            (false, t.len())
        }
    };
    let n = u64::try_from(n).map_or(f64::MAX, num);
    if ok { n } else { -n - 1.0 }
}

fn json_u64(n: u64) -> String {
    let mut out = String::new();
    json_num(&mut out, Some(n));
    out
}

/// A §7.3 failure of `decide` from numbers `0..` (attempt, timed out,
/// …) and the texts in order: the type when bit 1 of number 7 is set, the
/// code when bit 2 is.
fn failure(a: &Args<'_>) -> Result<Failure, Error> {
    let mut f = Failure::new(a.uint(0, "attempt")?);
    f.timed_out = a.num(1) != 0.0;
    let flags = a.uint(7, "")?;
    let mut next = 0;
    if flags & 1 != 0 {
        f.error_type = Some(String::from(a.text(next)?));
        next = 1;
    }
    if flags & 2 != 0 {
        f.code = Some(HandlerCode::parse(a.text(next)?)?);
    }
    Ok(f)
}

/// The job error of `recordFailure`: texts type, message, then the code
/// (bit 1 of number 6) and the details as JSON text (bit 2).
fn job_error(a: &Args<'_>) -> Result<JobError, Error> {
    let mut e = JobError::new(a.text(0)?, a.text(1)?);
    let flags = a.uint(6, "")?;
    let mut next = 2;
    if flags & 1 != 0 {
        e.code = Some(HandlerCode::parse(a.text(next)?)?);
        next = 3;
    }
    if flags & 2 != 0 {
        set_details(&mut e, a.text(next)?)?;
    }
    Ok(e)
}

/// Sets a job error's `details` from JSON text (`api.js` wrote it from a JS
/// value: always one valid JSON document).
fn set_details(e: &mut JobError, text: &str) -> Result<(), Error> {
    e.details = Some(ojs_retry::json::Value::from_text(text).map_err(|_| malformed())?);
    Ok(())
}

/// The numbers of the policy getters (see [`policy_number`]).
fn number_of(p: &RetryPolicy, k: u32) -> f64 {
    match k {
        0 => num(p.max_attempts()),
        1 => num(p.initial_interval_ms()),
        2 => p.backoff_coefficient(),
        3 => num(p.max_interval_ms()),
        4 => f64::from(u8::from(p.jitter())),
        _ => num(p.max_retries()),
    }
}

/// The operations of [`run`], by number (`api.js`'s `OP`); `h` is the
/// policy's or the object's handle, `n0`, `n1`, … the numbers and `t0`,
/// `t1`, … the texts (a handle, a number or a boolean comes back as a
/// number, see [`call_number`] and [`run`]):
///
/// | op | what | arguments | result |
/// |---|---|---|---|
/// | 0 | policy from layers | texts: the layers (none: the defaults) | handle |
/// | 1 | preset | t0 system, t1 configuration | handle |
/// | 2 | policy getter `n0` | `h` (6 `[presetSystem, onExhaustion, backoffStrategy, nonRetryableErrors]`, 10 `toString()`: plain text) | JSON |
/// | 3 | `delay` | `h`, n0 retry number, jitter at n1 | number |
/// | 4 | `schedule` | `h`, n0 count, jitter at n1 (none allowed) | 8 numbers per row (see [`run`]) |
/// | 5 | `decide` | `h`, see [`failure`]; n2 now, jitter at n3 | decision (see [`decision_text`]) |
/// | 6 | `new RetryState` | n0 history limit (negative: none) | handle |
/// | 7 | `RetryState.fromJSON` | t0 document, n0 history limit | handle |
/// | 8 | state getter `n0` | `h` (0 attempt, 1 historyLimit, 2 nextRetryAt, 3 terminal, 4 `toString()`: plain text) | JSON |
/// | 9 | `recordFailure` | `h`, n0 policy, n1 now, jitter at n2, see [`job_error`] | decision |
/// | 10 | `recordTimeout` | `h`, n0 policy, n1 now, jitter at n2 | decision |
/// | 11 | `new Reservation` | n0 attempt, n1 timeout, n2 now | handle |
/// | 12 | reservation getter `n0` | `h` (0 attempt, 1 visibilityTimeoutMs, 2 deadline) | number |
/// | 13–15 | `heartbeat`, `isExpired`, `expiry` | `h`, n0 now | JSON |
/// | 16, 17 | `matches`, `firstMatch` | t0 error type, then the patterns | JSON |
/// | 18–21 | `parseDuration` (t0), `formatDuration` (n0), `formatTimestamp` (n0), `parseTimestamp` (t0) | | JSON |
/// | 22 | `jitterSample` | n0 retry number, jitter at n1 | number |
/// | 23 | the error of a bad integer | t0 field, n0 value | `null` when valid |
/// | 24 | the error of a bad handler code | t0 code | `null` when valid |
/// | 25 | Rust's debug form of t0 (for messages) | | plain text |
fn call(op: u32, h: f64, a: &Args<'_>) -> Result<Out, Error> {
    match op {
        4 => {}
        5 => {
            let p = policy(h)?;
            let f = failure(a)?;
            let d = p.decide(&f, a.uint(2, "now")?, a.source(3)?)?;
            return Ok(Out::Decision(d));
        }
        9 | 10 => {
            let p = policy(a.num(0))?;
            let now = a.uint(1, "now")?;
            let src = a.source(2)?;
            let e = if op == 9 { Some(job_error(a)?) } else { None };
            return state(h, |s| match &e {
                Some(e) => s.record_failure(&p, e, now, src),
                None => s.record_timeout(&p, now, src),
            })
            .map(Out::Decision);
        }
        0 | 1 | 3 | 6 | 7 | 11 | 14 | 16 | 18 | 21 | 22 => {
            return call_number(op, h, a).map(Out::Number);
        }
        _ => return call_text(op, h, a).map(Out::Text),
    }
    let p = policy(h)?;
    let rows = p.schedule(a.uint(0, "count")?, a.jitter(1)?)?;
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
    Ok(Out::Numbers(out))
}

/// [`call`] for the operations that answer a number: a new object's
/// handle, a delay, a boolean (0 or 1), a parsed duration or timestamp, a
/// jitter sample.
fn call_number(op: u32, h: f64, a: &Args<'_>) -> Result<f64, Error> {
    let flag = |b: bool| f64::from(u8::from(b));
    Ok(match op {
        0 if a.texts.is_empty() => made(RetryPolicy::default())?,
        0 => made(RetryPolicy::from_json_layers(&a.texts)?)?,
        1 => made(RetryPolicy::preset(a.text(0)?, a.text(1)?)?)?,
        3 => num(policy(h)?.delay(a.uint(0, "retry_number")?, a.source(1)?)?),
        6 => {
            let mut s = RetryState::new();
            if let Some(n) = a.limit(0)? {
                s = s.with_history_limit(n)?;
            }
            made_obj(Obj::State(s))?
        }
        7 => {
            let limit = a.limit(0)?.unwrap_or(ojs_retry::state::MIN_HISTORY);
            made_obj(Obj::State(RetryState::from_json(a.text(0)?, limit)?))?
        }
        11 => made_obj(Obj::Reservation(Reservation::new(
            a.uint(0, "attempt")?,
            a.uint(2, "now")?,
            a.uint(1, "visibility_timeout_ms")?,
        )?))?,
        14 => {
            let now = a.uint(0, "now")?;
            flag(reservation(h, |r| r.is_expired(now))?)
        }
        16 => flag(ojs_retry::matches(
            a.text(0)?,
            a.texts.get(1..).unwrap_or_default(),
        )),
        18 => num(ojs_retry::parse_duration(a.text(0)?)?),
        21 => num(ojs_retry::parse_timestamp(a.text(0)?)?),
        22 => {
            let n = a.uint(0, "retry_number")?;
            num(a.source(1)?.sample(n)?.bits())
        }
        _ => return Err(malformed()),
    })
}

/// [`call`] for every operation but the schedule.
fn call_text(op: u32, h: f64, a: &Args<'_>) -> Result<String, Error> {
    let k = || u32::try_from(a.uint(0, "")?).map_err(|_| malformed());
    let mut out = String::new();
    match op {
        2 => {
            let p = policy(h)?;
            match k()? {
                6 => {
                    out.push('[');
                    json_opt(&mut out, p.preset_system());
                    out.push(',');
                    json_str(&mut out, p.on_exhaustion().as_str());
                    out.push(',');
                    json_str(&mut out, p.strategy().as_str());
                    out.push_str(",[");
                    for (i, s) in p.non_retryable_errors().iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        json_str(&mut out, s);
                    }
                    out.push_str("]]");
                }
                10 => return Ok(p.to_json()),
                // The numbers come from `__policyNum`; this only reports a
                // bad handle.
                _ => out.push_str("null"),
            }
        }
        8 => {
            let k = k()?;
            return state(h, |s| {
                Ok(match k {
                    0 => json_u64(s.attempt()),
                    1 => json_u64(u64::try_from(s.history_limit()).unwrap_or(u64::MAX)),
                    2 => {
                        json_num(&mut out, s.next_retry_at());
                        out
                    }
                    3 => {
                        json_opt(&mut out, s.terminal().map(ojs_retry::Action::as_str));
                        out
                    }
                    _ => s.to_json(),
                })
            });
        }
        12 => {
            let k = k()?;
            return reservation(h, |r| {
                Ok(json_u64(match k {
                    0 => r.attempt(),
                    1 => r.visibility_timeout_ms(),
                    _ => r.deadline(),
                }))
            });
        }
        13 | 15 => {
            let now = a.uint(0, "now")?;
            return reservation(h, |r| {
                Ok(match op {
                    13 => match r.heartbeat(now)? {
                        Heartbeat::Extended { deadline } => {
                            cat(&["{\"extended\":true,\"deadline\":", &int(deadline), "}"])
                        }
                        Heartbeat::Expired => String::from("{\"extended\":false}"),
                    },
                    _ => match r.expiry(now)? {
                        None => String::from("null"),
                        Some(f) => cat(&[
                            "{\"attempt\":",
                            &int(f.attempt),
                            ",\"timedOut\":",
                            if f.timed_out { "true" } else { "false" },
                            "}",
                        ]),
                    },
                })
            });
        }
        17 => json_opt(
            &mut out,
            ojs_retry::first_match(a.text(0)?, a.texts.get(1..).unwrap_or_default()),
        ),
        19 => json_str(
            &mut out,
            &ojs_retry::format_duration(a.uint(0, "duration")?)?,
        ),
        20 => json_str(
            &mut out,
            &ojs_retry::format_timestamp(a.uint(0, "timestamp")?)?,
        ),
        23 => {
            ojs_retry::args::uint_from_f64(a.text(0)?, a.num(0))?;
            out.push_str("null");
        }
        24 => {
            HandlerCode::parse(a.text(0)?)?;
            out.push_str("null");
        }
        _ => return Err(malformed()),
    }
    Ok(out)
}

/// The number-valued getters of the policy behind `handle`, `-1` for a
/// handle that names none (`api.js` then asks [`run`], which reports
/// it): `k` 0 `maxAttempts`, 1 `initialIntervalMs`, 2 `backoffCoefficient`,
/// 3 `maxIntervalMs`, 4 `jitter` (0 or 1), 5 `maxRetries`
/// (`max(maxAttempts, 1) − 1`). None is negative. Hidden from the public
/// types.
#[wasm_bindgen(js_name = __policyNum)]
pub fn policy_number(handle: f64, k: u32) -> f64 {
    registry::with(handle, |p| number_of(p, k)).unwrap_or(-1.0)
}

/// The number-valued getters of the `RetryState` or `Reservation` behind
/// `handle`: `k` 0 `attempt`, 1 `historyLimit`, 2 `nextRetryAt` (`-1`
/// when not retrying), 6 `terminal` (the action's number in its enum,
/// `-1` for none) of a state; 3 `attempt`, 4 `visibilityTimeoutMs`,
/// 5 `deadline` of a reservation. `-2` for a handle that names no object
/// of that class (`api.js` then asks [`run`], which reports why). Hidden
/// from the public types.
#[wasm_bindgen(js_name = __objNum)]
pub fn object_number(handle: f64, k: u32) -> f64 {
    let Ok(mut r) = OBJECTS.try_write() else {
        return -2.0;
    };
    match (r.get_mut(handle), k) {
        (Ok(Obj::State(s)), 0) => num(s.attempt()),
        (Ok(Obj::State(s)), 1) => u64::try_from(s.history_limit()).map_or(-2.0, num),
        (Ok(Obj::State(s)), 2) => s.next_retry_at().map_or(-1.0, num),
        // The action's number in its enum, which `api.js` maps to its name
        // (asked once through `run`).
        (Ok(Obj::State(s)), 6) => s.terminal().map_or(-1.0, |a| f64::from(a as u8)),
        (Ok(Obj::Reservation(r)), 3) => num(r.attempt()),
        (Ok(Obj::Reservation(r)), 4) => num(r.visibility_timeout_ms()),
        (Ok(Obj::Reservation(r)), 5) => num(r.deadline()),
        _ => -2.0,
    }
}

/// Frees the object behind `handle` now (`free()`, `Symbol.dispose`), or,
/// `collected` (the class's `FinalizationRegistry`), gives its slot back:
/// a policy (`kind` 0) or a `RetryState` / `Reservation` (1). A handle
/// that names nothing is ignored. Hidden from the public types.
#[wasm_bindgen(js_name = __release)]
pub fn release(handle: f64, collected: bool, kind: u32) {
    if kind == 0 {
        if collected {
            registry::release(handle);
        } else {
            registry::free(handle);
        }
    } else if let Ok(mut r) = OBJECTS.try_write() {
        if collected {
            r.release(handle);
        } else {
            r.free(handle);
        }
    }
}

/// How many registry slots are taken (live policies and objects, and
/// freed ones whose object is not collected yet): for the tests that check
/// that collected objects give their slots back. Hidden from the public
/// types.
#[wasm_bindgen(js_name = __livePolicies)]
pub fn live_policies() -> f64 {
    registry::taken().map_or(-1.0, num)
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

/// A delay, or `-1` for `None` (an invalid input).
#[inline(always)]
fn fast_delay(d: Option<u64>) -> f64 {
    match d {
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
/// unknown or freed handle). A negative `u` (api.js passes `-1`) means
/// `delay(n)`: a sample from the host's entropy ([`ENTROPY`]), or `-2`
/// when none is left (api.js refills the pool and calls again). `api.js`
/// calls it for retry numbers below 2^32 with no jitter source, a number
/// `u ≥ 0` or `{ u }`, and falls back to the full `delay` (which reports
/// the error) on `-1`. Hidden from the public types.
///
/// The handle and the retry number are wasm `i32`s: V8 passes a small JS
/// integer as one with no conversion, where an `f64` has to be checked
/// and converted here (2 to 3 ns of a 16 ns call, measured).
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
// item is called `__delayU`, `__delayS` or `__sample`); the functions are
// safe Rust of plain numbers, so no value crossing the boundary can be
// invalid.
#[allow(unsafe_code)]
#[unsafe(export_name = "__delayU")]
pub extern "C" fn delay_u(handle: u32, retry_number: u32, u: f64) -> f64 {
    let n = u64::from(retry_number);
    if u < 0.0 {
        // The word as the engine's sample, with no fraction in between
        // (turned into `u` and back, it cost 4 ns of a 20 ns call). A
        // route of its own: one route for both samples (0.5 KB less)
        // measured 2 ns slower on each.
        let Some(word) = entropy_word() else {
            return -2.0;
        };
        let s = ojs_retry::Sample::from_u64(word);
        return registry::fast(handle, |p| fast_delay(p.delay_sampled(n, s)));
    }
    let u = ojs_retry::JitterSource::Uniform(u);
    registry::fast(handle, |p| fast_delay(p.delay_ok(n, u)))
}

/// `policy.delay(n, { seed })` for a number seed, as [`delay_u`] (a raw
/// export too): the delay, or `-1` for anything invalid. Hidden from the
/// public types.
// SAFETY: as `delay_u`'s.
#[allow(unsafe_code)]
#[unsafe(export_name = "__delayS")]
pub extern "C" fn delay_s(handle: u32, retry_number: u32, seed: f64) -> f64 {
    // The engine's own out-of-line `delay` (the one `run` calls), not a
    // third inlined copy of it: seeds have no speed target of their own,
    // and the copy was 0.9 KB of wasm.
    let Some(seed) = fast_uint(seed) else {
        return -1.0;
    };
    let n = u64::from(retry_number);
    let seed = ojs_retry::JitterSource::Seed(seed);
    registry::fast(handle, |p| p.delay(n, seed).map_or(-1.0, fast_num))
}

/// Words of the host's entropy (64 KiB, the most one
/// `crypto.getRandomValues` call gives), for every call without a jitter
/// source: `api.js` writes them through a `Uint32Array` view and marks
/// them fresh ([`scratch`], kind 3); each is read once ([`entropy_word`]),
/// in order, and cleared.
///
/// In the module rather than in `api.js`: `delay(n)` then passes no
/// sample across the boundary, and reads it here (with the pool in a JS
/// array, 26 ns a call against 22). One host call per 8 192 samples:
/// `getRandomValues` costs ~2 µs a call plus ~1.6 ns per 8 bytes (Node
/// 20, measured), so smaller pools cost more per sample and larger ones
/// need several calls. Atomics rather than a lock: without threads they
/// are plain loads and stores, at addresses known when linking.
const ENTROPY_WORDS: usize = 8192;
static ENTROPY: [AtomicU64; ENTROPY_WORDS] = [const { AtomicU64::new(0) }; ENTROPY_WORDS];
/// The next fresh word of [`ENTROPY`]; `ENTROPY_WORDS` (none) until
/// `api.js` fills the pool.
static ENTROPY_NEXT: AtomicUsize = AtomicUsize::new(ENTROPY_WORDS);

/// A fresh sample of the host's entropy, `k / 2^53` with `k` the high 53
/// bits of the next word of [`ENTROPY`]; `-2` when none is left (`api.js`
/// refills the pool and asks again). Hidden from the public types.
// SAFETY: as `delay_u`'s.
#[allow(unsafe_code)]
#[unsafe(export_name = "__sample")]
pub extern "C" fn sample() -> f64 {
    // k < 2^53 converts exactly, and the product by 2^−53 is exact.
    entropy_word().map_or(-2.0, |w| ojs_retry::Sample::from_u64(w).as_unit())
}

/// The next fresh word of [`ENTROPY`] (cleared as it is read), `None`
/// when none is left.
#[inline(always)]
fn entropy_word() -> Option<u64> {
    let i = ENTROPY_NEXT.load(Ordering::Relaxed);
    let w = ENTROPY.get(i)?.swap(0, Ordering::Relaxed);
    ENTROPY_NEXT.store(i + 1, Ordering::Relaxed);
    Some(w)
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

/// [`run`]'s numbers: `api.js` writes them through a `Float64Array` view
/// on this buffer, allocated once and never moved, as [`SCRATCH`].
static ARGS: RwLock<Vec<f64>> = RwLock::new(Vec::new());

/// [`parse`]'s text: `api.js` writes a policy document's UTF-8 through a
/// `Uint8Array` view on this buffer (`TextEncoder.encodeInto`), allocated
/// once and never moved, as [`SCRATCH`].
static TEXT: RwLock<Vec<u8>> = RwLock::new(Vec::new());

/// The address (bytes into wasm memory) of a scratch buffer: `kind` 0 (or
/// omitted) that of [`delays_fast`], holding at least `len` numbers; 1
/// that of [`parse`], holding at least `len` bytes; 2 that of [`run`]'s
/// numbers (at most `SCRATCH_MAX` each); 3 that of [`ENTROPY`], whose
/// words `len = 8192` marks fresh (api.js calls it again once it has
/// written them; any other `len` marks nothing). `-1` if it cannot be
/// had, including a later call asking for more than the first one got (a
/// buffer never moves). Hidden from the public types.
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
    } else if kind == 2 {
        ARGS.try_write().map_or(-1.0, |mut s| fixed_at(&mut s, len))
    } else if kind == 3 {
        // Marked fresh only once written (`len` is the pool's size): a
        // failed refill leaves it empty, never reread.
        if len == ENTROPY_WORDS {
            ENTROPY_NEXT.store(0, Ordering::Relaxed);
        }
        u32::try_from(ENTROPY.as_ptr().expose_provenance()).map_or(-1.0, f64::from)
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
    // The engine's out-of-line `delay` for each (the one `run` calls), not
    // its batch, which inlines a copy of the delay (1.5 KB of wasm):
    // inside the module a call per retry costs little next to crossing
    // the boundary per retry.
    registry::with(handle, |p| {
        for slot in slots {
            let d = fast_uint(*slot).and_then(|n| p.delay(n, src).ok());
            match d {
                Some(d) => *slot = num(d),
                None => return -1.0,
            }
        }
        0.0
    })
    .unwrap_or(-1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `texts` in the layout `api.js` writes.
    fn layout(texts: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for t in texts {
            out.extend_from_slice(&u32::try_from(t.len()).unwrap_or(0).to_le_bytes());
            out.extend_from_slice(t.as_bytes());
        }
        out
    }

    #[test]
    fn texts_read_back_what_api_js_writes_and_refuse_anything_else() {
        for case in [
            &[][..],
            &[""][..],
            &["a", "", "\u{e9}\u{1F600}", "x\0y"][..],
        ] {
            assert_eq!(texts(&layout(case)).as_deref(), Some(case));
        }
        let good = layout(&["abc", "de"]);
        for cut in 1..good.len() {
            // Cut after "abc": the layout of ["abc"], valid.
            let want = (cut == 7).then(|| alloc::vec!["abc"]);
            assert_eq!(texts(good.get(..cut).unwrap_or_default()), want, "{cut}");
        }
        // A length past the end, and bytes that are not UTF-8.
        assert_eq!(texts(&[9, 0, 0, 0, b'a']), None);
        assert_eq!(texts(&[2, 0, 0, 0, 0xC3, 0x28]), None);
    }

    #[test]
    fn json_strings_read_back_as_the_same_text() {
        for s in [
            "",
            "plain",
            "q\"uote",
            "back\\slash",
            "\n\r\t\u{0}\u{1f}\u{7f}",
            "\u{2028}\u{2029}\u{e9}\u{1F600}",
            "</script>",
        ] {
            let mut out = String::new();
            json_str(&mut out, s);
            let back: String = serde_json::from_str(&out).unwrap_or_default();
            assert_eq!(back, s, "{out}");
        }
    }

    #[test]
    fn errors_cross_with_every_fault() {
        let Err(e) = RetryPolicy::from_json(r#"{"max_attempts": -1, "jitter": "yes", "x\"y": 1}"#)
        else {
            panic!("an invalid policy");
        };
        let back: Vec<String> = serde_json::from_str(&error_json(&e)).unwrap_or_default();
        let mut want = alloc::vec![
            String::from(e.code().as_str()),
            alloc::string::ToString::to_string(&e)
        ];
        for f in e.iter_faults() {
            want.push(f.field.clone());
            want.push(f.message.clone());
        }
        assert!(want.len() >= 8, "{want:?}");
        assert_eq!(back, want);
    }

    #[test]
    fn decisions_cross_as_numbers_and_names() {
        let p = RetryPolicy::from_json(r#"{"non_retryable_errors": ["a.*"]}"#).unwrap_or_default();
        let f = Failure::new(2)
            .with_type("a.b")
            .with_code(HandlerCode::Retry);
        let d = p.decide(&f, 1000, JitterSource::Uniform(0.5));
        let Ok(d) = d else {
            panic!("a valid decision");
        };
        if let Ok(mut a) = ARGS.try_write() {
            a.resize(ARG_NUMS, 0.0);
        }
        let text = decision_text(&d);
        assert_eq!(
            text,
            alloc::format!("{}\n{}\nRETRY\na.*", d.action.as_str(), d.reason.as_str())
        );
        let nums: Vec<f64> = ARGS.try_read().map(|a| a.clone()).unwrap_or_default();
        assert_eq!(nums.get(..6), Some(&[2.0, 0.0, -1.0, -1.0, -1.0, 1.0][..]));
    }
}
