//! Ruby bindings for the `ojs-retry` engine (the gem `ojs-retry`,
//! `require "ojs_retry"`): magnus classes wrapping the core's types,
//! magnus's own argument parsing (`scan_args`, `get_kwargs`), and a serde
//! deserializer over Ruby values ([`read`]) feeding the core's readers.
//! Arguments are converted, the core is called, and its errors become
//! `OjsRetry::PolicyError` in one function (`errors::to_ruby_error`).
#![forbid(unsafe_code)]

mod args;
mod convert;
mod errors;
mod policy;
mod read;
mod state;
mod transaction;

use std::time::{SystemTime, UNIX_EPOCH};

use magnus::prelude::*;
use magnus::scan_args::scan_args;
use magnus::{Error, RArray, RHash, RModule, Ruby, Value, function, method};
use ojs_retry::ErrorCode;

use crate::errors::{CoreResult, bad_argument};
use crate::policy::{Decision, RetryPolicy, ScheduleRow};
use crate::state::{Reservation, RetryState};

/// Epoch milliseconds of the system clock.
pub(crate) fn clock_ms(ruby: &Ruby) -> Result<u64, Error> {
    let clock = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_millis()).ok());
    match clock {
        Some(ms) => Ok(ms),
        None => Err(bad_argument(
            "now",
            "the system clock is outside 1970 ..= 2^64 ms".to_owned(),
        ))
        .rb(ruby),
    }
}

/// The patterns argument of `matches` / `first_match`: an `Array` of
/// `String`s (a lone `String` is refused rather than read as one pattern).
fn patterns(ruby: &Ruby, v: Value) -> Result<Vec<String>, Error> {
    let Some(a) = RArray::from_value(v) else {
        return Err(bad_argument(
            "patterns",
            format!("expected an Array of Strings, found {}", args::describe(v)),
        ))
        .rb(ruby);
    };
    ojs_retry::limits::check_argument_len("patterns", a.len()).rb(ruby)?;
    let mut out = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        let index = isize::try_from(i)
            .map_err(|e| Error::new(ruby.exception_range_error(), e.to_string()))?;
        let p: Value = a.entry(index)?;
        out.push(args::text(ruby, p, &format!("patterns[{i}]"))?);
    }
    Ok(out)
}

/// `OjsRetry.matches(error_type, patterns)`: whether `error_type` matches
/// any pattern (§6.2: exact, or `prefix.*`).
fn matches(ruby: &Ruby, error_type: Value, patterns: Value) -> Result<bool, Error> {
    let t = args::text(ruby, error_type, "error_type")?;
    let patterns = self::patterns(ruby, patterns)?;
    Ok(ojs_retry::matching::try_first_match(&t, &patterns)
        .rb(ruby)?
        .is_some())
}

/// `OjsRetry.first_match(error_type, patterns)`: the first pattern that
/// matches, or `nil`.
fn first_match(ruby: &Ruby, error_type: Value, patterns: Value) -> Result<Option<String>, Error> {
    let t = args::text(ruby, error_type, "error_type")?;
    let patterns = self::patterns(ruby, patterns)?;
    Ok(ojs_retry::matching::try_first_match(&t, &patterns)
        .rb(ruby)?
        .map(str::to_owned))
}

/// An ISO 8601 duration (`"PT1.5S"`) in milliseconds.
fn parse_duration(ruby: &Ruby, text: Value) -> Result<u64, Error> {
    let t = args::text_as(ruby, text, "duration", ErrorCode::DurationInvalid)?;
    ojs_retry::parse_duration(&t).rb(ruby)
}

/// Milliseconds as the canonical duration string.
fn format_duration(ruby: &Ruby, ms: Value) -> Result<String, Error> {
    let n = args::uint(ruby, ms, "duration")?;
    ojs_retry::format_duration(n).rb(ruby)
}

/// An RFC 3339 timestamp in epoch milliseconds.
fn parse_timestamp(ruby: &Ruby, text: Value) -> Result<u64, Error> {
    let t = args::text(ruby, text, "timestamp")?;
    ojs_retry::parse_timestamp(&t).rb(ruby)
}

/// Epoch milliseconds as RFC 3339 UTC (`2026-02-12T10:31:05.250Z`).
fn format_timestamp(ruby: &Ruby, ms: Value) -> Result<String, Error> {
    let n = args::uint(ruby, ms, "timestamp")?;
    ojs_retry::format_timestamp(n).rb(ruby)
}

/// `OjsRetry.jitter_sample(retry_number, u:/seed:/key:)`: the 53-bit
/// sample `k` (`u = k / 2**53`) a jitter source gives for a retry.
fn jitter_sample(ruby: &Ruby, args: &[Value]) -> Result<u64, Error> {
    let args = scan_args::<(Value,), (), (), (), RHash, ()>(args)?;
    let (n,) = args.required;
    let n = args::uint(ruby, n, "retry_number")?;
    let kw = args.keywords;
    let (u, seed, key) = policy::jitter_kw(ruby, kw)?;
    let opts = args::options(ruby, &[("u", u), ("seed", seed), ("key", key)])?;
    opts.jitter_or_entropy()
        .sample(n)
        .map(ojs_retry::Sample::bits)
        .rb(ruby)
}

/// Reseeds this process's entropy generator in a forked child, whose copy
/// would otherwise repeat the parent's next samples (Resque forks a child
/// per job); `lib/ojs_retry.rb` calls it from `Process._fork`.
fn after_fork() {
    ojs_retry::reseed_after_fork();
}

/// `RetryPolicy`, then the other classes. None has an allocator: each is
/// made by its `new` (or by the engine), never half-initialised.
fn define_classes(ruby: &Ruby, m: RModule) -> Result<(), Error> {
    let c = m.define_class("RetryPolicy", ruby.class_object())?;
    c.undef_default_alloc_func();
    c.define_singleton_method("new", function!(RetryPolicy::new, -1))?;
    c.define_singleton_method("merge", function!(RetryPolicy::merge, -1))?;
    c.define_singleton_method("from_json", function!(RetryPolicy::from_json, 1))?;
    c.define_singleton_method("preset", function!(RetryPolicy::preset, -1))?;
    c.define_method("preset_system", method!(RetryPolicy::preset_system, 0))?;
    c.define_method("max_attempts", method!(RetryPolicy::max_attempts, 0))?;
    c.define_method(
        "initial_interval_ms",
        method!(RetryPolicy::initial_interval_ms, 0),
    )?;
    c.define_method(
        "backoff_coefficient",
        method!(RetryPolicy::backoff_coefficient, 0),
    )?;
    c.define_method("max_interval_ms", method!(RetryPolicy::max_interval_ms, 0))?;
    c.define_method("jitter?", method!(RetryPolicy::jitter, 0))?;
    c.define_method(
        "non_retryable_errors",
        method!(RetryPolicy::non_retryable_errors, 0),
    )?;
    c.define_method("on_exhaustion", method!(RetryPolicy::on_exhaustion, 0))?;
    c.define_method(
        "backoff_strategy",
        method!(RetryPolicy::backoff_strategy, 0),
    )?;
    c.define_method("max_retries", method!(RetryPolicy::max_retries, 0))?;
    c.define_method("to_json", method!(RetryPolicy::to_json, -1))?;
    c.define_method("to_h", method!(RetryPolicy::to_h, 0))?;
    c.define_method("delay", method!(RetryPolicy::delay, -1))?;
    c.define_method("schedule", method!(RetryPolicy::schedule, -1))?;
    c.define_method("decide", method!(RetryPolicy::decide, -1))?;
    c.define_method("==", method!(RetryPolicy::eq, 1))?;
    c.define_method("eql?", method!(RetryPolicy::eq, 1))?;
    c.define_method("hash", method!(RetryPolicy::hash, 0))?;
    c.define_method("inspect", method!(RetryPolicy::inspect, 0))?;
    define_value_classes(ruby, m)?;
    define_state_classes(ruby, m)
}

/// `Decision` and `ScheduleRow`: results, made only by the engine.
fn define_value_classes(ruby: &Ruby, m: RModule) -> Result<(), Error> {
    let c = m.define_class("Decision", ruby.class_object())?;
    c.undef_default_alloc_func();
    c.define_method("action", method!(Decision::action, 0))?;
    c.define_method("reason", method!(Decision::reason, 0))?;
    c.define_method("handler_code", method!(Decision::handler_code, 0))?;
    c.define_method("matched_pattern", method!(Decision::matched_pattern, 0))?;
    c.define_method("attempt", method!(Decision::attempt, 0))?;
    c.define_method("timed_out?", method!(Decision::timed_out, 0))?;
    c.define_method("retry_number", method!(Decision::retry_number, 0))?;
    c.define_method("delay_ms", method!(Decision::delay_ms, 0))?;
    c.define_method("next_retry_at", method!(Decision::next_retry_at, 0))?;
    c.define_method("explain", method!(Decision::explain, 0))?;
    c.define_method("to_h", method!(Decision::to_h, 0))?;
    c.define_method("==", method!(Decision::eq, 1))?;
    c.define_method("eql?", method!(Decision::eq, 1))?;
    c.define_method("hash", method!(Decision::hash, 0))?;
    c.define_method("inspect", method!(Decision::inspect, 0))?;

    let c = m.define_class("ScheduleRow", ruby.class_object())?;
    c.undef_default_alloc_func();
    c.define_method("retry_number", method!(ScheduleRow::retry_number, 0))?;
    c.define_method("attempt", method!(ScheduleRow::attempt, 0))?;
    c.define_method("raw_ms", method!(ScheduleRow::raw_ms, 0))?;
    c.define_method("capped_ms", method!(ScheduleRow::capped_ms, 0))?;
    c.define_method("min_ms", method!(ScheduleRow::min_ms, 0))?;
    c.define_method("max_ms", method!(ScheduleRow::max_ms, 0))?;
    c.define_method("delay_ms", method!(ScheduleRow::delay_ms, 0))?;
    c.define_method("cumulative_ms", method!(ScheduleRow::cumulative_ms, 0))?;
    c.define_method("to_h", method!(ScheduleRow::to_h, 0))?;
    c.define_method("==", method!(ScheduleRow::eq, 1))?;
    c.define_method("eql?", method!(ScheduleRow::eq, 1))?;
    c.define_method("hash", method!(ScheduleRow::hash, 0))?;
    c.define_method("inspect", method!(ScheduleRow::inspect, 0))?;
    Ok(())
}

/// `RetryState` and `Reservation`: the mutable classes.
fn define_state_classes(ruby: &Ruby, m: RModule) -> Result<(), Error> {
    let c = m.define_class("RetryState", ruby.class_object())?;
    c.undef_default_alloc_func();
    c.define_singleton_method("new", function!(RetryState::new, -1))?;
    c.define_singleton_method("from_json", function!(RetryState::from_json, -1))?;
    c.define_method("attempt", method!(RetryState::attempt, 0))?;
    c.define_method("next_attempt", method!(RetryState::next_attempt, 0))?;
    c.define_method("next_retry_at", method!(RetryState::next_retry_at, 0))?;
    c.define_method("terminal", method!(RetryState::terminal, 0))?;
    c.define_method("history_limit", method!(RetryState::history_limit, 0))?;
    c.define_method("errors", method!(RetryState::errors, 0))?;
    c.define_method("record_failure", method!(RetryState::record_failure, -1))?;
    c.define_method("to_json", method!(RetryState::to_json, -1))?;
    c.define_method("to_h", method!(RetryState::to_h, 0))?;
    c.define_method("inspect", method!(RetryState::inspect, 0))?;

    let c = m.define_class("Reservation", ruby.class_object())?;
    c.undef_default_alloc_func();
    c.define_singleton_method("new", function!(Reservation::new, -1))?;
    c.define_method("attempt", method!(Reservation::attempt, 0))?;
    c.define_method(
        "visibility_timeout_ms",
        method!(Reservation::visibility_timeout_ms, 0),
    )?;
    c.define_method("deadline", method!(Reservation::deadline, 0))?;
    c.define_method("heartbeat", method!(Reservation::heartbeat, -1))?;
    c.define_method("expired?", method!(Reservation::is_expired, -1))?;
    c.define_method("expiry", method!(Reservation::expiry, -1))?;
    c.define_method("inspect", method!(Reservation::inspect, 0))?;
    Ok(())
}

/// The extension's entry point: `Init_ojs_retry`, which Ruby calls on
/// `require "ojs_retry/ojs_retry"` (inside a private module: the exported
/// symbol is not part of the crate's API).
mod entry {
    #[magnus::init(name = "ojs_retry")]
    fn init(ruby: &magnus::Ruby) -> Result<(), magnus::Error> {
        super::init(ruby)
    }
}

/// Defines the module `OjsRetry`: its classes, functions and constants.
fn init(ruby: &Ruby) -> Result<(), Error> {
    let m = ruby.define_module("OjsRetry")?;
    errors::define(ruby, m)?;
    define_classes(ruby, m)?;
    m.define_module_function("matches", function!(matches, 2))?;
    m.define_module_function("first_match", function!(first_match, 2))?;
    m.define_module_function("parse_duration", function!(parse_duration, 1))?;
    m.define_module_function("format_duration", function!(format_duration, 1))?;
    m.define_module_function("parse_timestamp", function!(parse_timestamp, 1))?;
    m.define_module_function("format_timestamp", function!(format_timestamp, 1))?;
    m.define_module_function("jitter_sample", function!(jitter_sample, -1))?;
    m.define_module_function("_after_fork", function!(after_fork, 0))?;
    m.define_module_function(
        "run_transaction",
        function!(transaction::run_transaction, -1),
    )?;
    let codes: Vec<&str> = errors::ERROR_CODES.iter().map(|c| c.as_str()).collect();
    m.const_set("ERROR_CODES", frozen_strings(ruby, &codes))?;
    m.const_set(
        "PRESET_SYSTEMS",
        frozen_strings(ruby, &ojs_retry::PRESET_SYSTEMS),
    )?;
    m.const_set("MAX_MS", ojs_retry::MAX_MS)?;
    m.const_set("MAX_INSTANT_MS", ojs_retry::MAX_INSTANT_MS)?;
    m.const_set("MAX_SCHEDULE_ROWS", ojs_retry::MAX_SCHEDULE_ROWS)?;
    m.const_set("NATIVE_VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// A frozen `Array` of frozen `String`s (a constant's value).
fn frozen_strings(ruby: &Ruby, items: &[&str]) -> RArray {
    let a = ruby.ary_from_iter(
        items
            .iter()
            .map(|s| magnus::RString::new_frozen(ruby.str_new(s))),
    );
    a.freeze();
    a
}
