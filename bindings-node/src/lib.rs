//! Node.js native addon for the ojs-retry engine (napi-rs v3), published on
//! npm as `ojs-retry`; its `index.js` loads this addon, or the wasm build
//! (`ojs-retry-wasm`, the same surface) where the addon cannot load.
//!
//! Thin by design: `#[napi]` classes wrap the core's types and every call
//! converts its arguments with napi-rs (scalars by its argument types,
//! objects by its serde support into the core's readers), calls the core,
//! and converts the answer back; a core error becomes a JS `Error` in one
//! function ([`error::js_error`]). No policy logic lives here.

mod convert;
mod error;
mod host;
mod policy;
mod state;

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use ojs_retry::ErrorCode;

use crate::convert::{NumberArg, StringArg, num, options, string, uint};
use crate::error::OrThrow;

pub use crate::policy::RetryPolicy;
pub use crate::state::{Reservation, RetryState};

/// A list of patterns argument: an array of strings, read as a document
/// (its length checked before any element is read).
type PatternsArg<'a> = Unknown<'a>;

fn patterns(env: &Env, arg: PatternsArg<'_>) -> napi::Result<Vec<String>> {
    let doc = host::document_as(env, arg, ErrorCode::InvalidArgument, Some("patterns"))?;
    ojs_retry::matching::patterns_from_value(&doc).or_throw(env)
}

/// Whether `errorType` matches any of `patterns` (exact, or a `prefix.*`
/// wildcard, or `*`).
#[napi(ts_args_type = "errorType: string, patterns: string[]")]
pub fn matches(
    env: Env,
    error_type: StringArg<'_>,
    patterns: PatternsArg<'_>,
) -> napi::Result<bool> {
    let t = string(&env, "error_type", error_type)?;
    let p = self::patterns(&env, patterns)?;
    Ok(ojs_retry::matches(&t, &p))
}

/// The first of `patterns` that `errorType` matches, or null.
#[napi(ts_args_type = "errorType: string, patterns: string[]")]
pub fn first_match(
    env: Env,
    error_type: StringArg<'_>,
    patterns: PatternsArg<'_>,
) -> napi::Result<Option<String>> {
    let t = string(&env, "error_type", error_type)?;
    let p = self::patterns(&env, patterns)?;
    Ok(ojs_retry::first_match(&t, &p).map(str::to_owned))
}

/// An ISO 8601 duration (`"PT1.5S"`) in milliseconds.
#[napi(ts_args_type = "text: string")]
pub fn parse_duration(env: Env, text: StringArg<'_>) -> napi::Result<f64> {
    if let napi::Either::A(units) = &text {
        ojs_retry::duration::check_duration_len(units.len()).or_throw(&env)?;
    }
    let text = string(&env, "duration", text)?;
    ojs_retry::parse_duration(&text).map(num).or_throw(&env)
}

/// The canonical ISO 8601 text of a duration in milliseconds.
#[napi(ts_args_type = "ms: number")]
pub fn format_duration(env: Env, ms: NumberArg<'_>) -> napi::Result<String> {
    let ms = uint(&env, "duration", ms)?;
    ojs_retry::format_duration(ms).or_throw(&env)
}

/// An RFC 3339 timestamp as epoch milliseconds.
#[napi(ts_args_type = "text: string")]
pub fn parse_timestamp(env: Env, text: StringArg<'_>) -> napi::Result<f64> {
    let text = string(&env, "timestamp", text)?;
    ojs_retry::parse_timestamp(&text).map(num).or_throw(&env)
}

/// Epoch milliseconds as RFC 3339 UTC text (`2026-02-12T10:31:05.250Z`).
#[napi(ts_args_type = "ms: number")]
pub fn format_timestamp(env: Env, ms: NumberArg<'_>) -> napi::Result<String> {
    let ms = uint(&env, "timestamp", ms)?;
    ojs_retry::format_timestamp(ms).or_throw(&env)
}

/// The 53-bit sample `k` (`u = k / 2^53`) a jitter source gives for retry
/// `retryNumber`; OS entropy without one.
#[napi(ts_args_type = "retryNumber: number, options?: Jitter")]
pub fn jitter_sample(
    env: Env,
    retry_number: NumberArg<'_>,
    options: Option<Unknown<'_>>,
) -> napi::Result<f64> {
    let n = uint(&env, "retry_number", retry_number)?;
    let opts = self::options(&env, options)?;
    let sample = opts.jitter_or_entropy().sample(n).or_throw(&env)?;
    Ok(num(sample.bits()))
}

/// The systems `RetryPolicy.preset` knows (`"sidekiq"`, `"bullmq"`, ...).
#[napi(ts_return_type = "PresetSystem[]")]
pub fn preset_systems() -> Vec<&'static str> {
    ojs_retry::PRESET_SYSTEMS.to_vec()
}
