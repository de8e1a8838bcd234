//! # ojs-retry-wasm
//!
//! The [`ojs_retry`] engine for JavaScript hosts through WebAssembly:
//! browsers, bundlers, Cloudflare Workers (workerd), Deno, Bun and Node.
//! Published on npm as `ojs-retry-wasm`.
//!
//! wasm-bindgen used as documented: `#[wasm_bindgen]` classes wrapping the
//! core types ([`RetryPolicy`], [`RetryState`], [`Reservation`]), JS objects
//! read with serde-wasm-bindgen into the core's readers and written from
//! the core's `Serialize` types, wasm-bindgen's generated `.d.ts` (the
//! document shapes are in the custom section below), OS entropy from
//! `crypto.getRandomValues` through getrandom's JS backend, the default
//! allocator. A core error becomes a JS `Error` in one place
//! (`convert::Thrown` into `JsValue`). This crate holds no policy logic: it converts,
//! calls the core, and maps errors.

// No hand-written `unsafe` (the expansions of wasm-bindgen's macros are
// not held to this lint, so it can be forbidden).
#![forbid(unsafe_code)]

mod convert;
mod herd;
mod host;
mod policy;
mod state;

use ojs_retry::ErrorCode;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use convert::{JsResult, num};
pub use policy::RetryPolicy;
pub use state::{Reservation, RetryState};

/// The arguments of `matches` / `firstMatch`: a string and an array of strings.
fn match_args(error_type: &JsValue, patterns: &JsValue) -> JsResult<(String, Vec<String>)> {
    let error_type = convert::string(error_type, ErrorCode::InvalidArgument, "error_type")?;
    let list = convert::value_as(patterns, ErrorCode::InvalidArgument, Some("patterns"))?;
    let patterns = ojs_retry::matching::patterns_from_value(&list)?;
    Ok((error_type, patterns))
}

/// Whether `errorType` matches one of `patterns` (exact, or a `prefix.*`
/// wildcard).
#[wasm_bindgen]
pub fn matches(
    #[wasm_bindgen(js_name = errorType, unchecked_param_type = "string")] error_type: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "string[]")] patterns: &JsValue,
) -> JsResult<bool> {
    let (error_type, patterns) = match_args(error_type, patterns)?;
    Ok(ojs_retry::matches(&error_type, &patterns))
}

/// The first of `patterns` that `errorType` matches, or `null`.
#[wasm_bindgen(js_name = firstMatch, unchecked_return_type = "string | null")]
pub fn first_match(
    #[wasm_bindgen(js_name = errorType, unchecked_param_type = "string")] error_type: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "string[]")] patterns: &JsValue,
) -> JsResult<JsValue> {
    let (error_type, patterns) = match_args(error_type, patterns)?;
    Ok(convert::or_null(ojs_retry::first_match(
        &error_type,
        &patterns,
    )))
}

/// An ISO 8601 duration (`"PT1.5S"`) in milliseconds.
#[wasm_bindgen(js_name = parseDuration)]
pub fn parse_duration(
    #[wasm_bindgen(unchecked_param_type = "string")] text: &JsValue,
) -> JsResult<f64> {
    if let Some(s) = text.dyn_ref::<js_sys::JsString>() {
        ojs_retry::duration::check_duration_len(s.length() as usize)?;
    }
    let text = convert::string(text, ErrorCode::InvalidArgument, "duration")?;
    Ok(num(ojs_retry::parse_duration(&text)?))
}

/// Milliseconds as the shortest ISO 8601 duration.
#[wasm_bindgen(js_name = formatDuration)]
pub fn format_duration(
    #[wasm_bindgen(unchecked_param_type = "number")] ms: &JsValue,
) -> JsResult<String> {
    Ok(ojs_retry::format_duration(convert::uint(ms, "duration")?)?)
}

/// An RFC 3339 timestamp as epoch milliseconds.
#[wasm_bindgen(js_name = parseTimestamp)]
pub fn parse_timestamp(
    #[wasm_bindgen(unchecked_param_type = "string")] text: &JsValue,
) -> JsResult<f64> {
    let text = convert::string(text, ErrorCode::InvalidArgument, "timestamp")?;
    Ok(num(ojs_retry::parse_timestamp(&text)?))
}

/// Epoch milliseconds as RFC 3339 UTC (`2026-02-12T10:31:05.250Z`).
#[wasm_bindgen(js_name = formatTimestamp)]
pub fn format_timestamp(
    #[wasm_bindgen(unchecked_param_type = "number")] ms: &JsValue,
) -> JsResult<String> {
    Ok(ojs_retry::format_timestamp(convert::uint(
        ms,
        "timestamp",
    )?)?)
}

/// The 53-bit jitter sample `k` (`u = k / 2^53`) a source gives for
/// `retryNumber`.
#[wasm_bindgen(js_name = jitterSample)]
pub fn jitter_sample(
    #[wasm_bindgen(js_name = retryNumber, unchecked_param_type = "number")] retry_number: &JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Jitter")] options: &JsValue,
) -> JsResult<f64> {
    let n = convert::uint(retry_number, "retry_number")?;
    let o = convert::options(options)?;
    Ok(num(o.jitter_or_entropy().sample(n)?.bits()))
}

/// The systems `RetryPolicy.preset` knows.
#[wasm_bindgen(js_name = presetSystems, unchecked_return_type = "PresetSystem[]")]
pub fn preset_systems() -> Vec<String> {
    ojs_retry::PRESET_SYSTEMS
        .iter()
        .map(|s| (*s).into())
        .collect()
}

// The shapes of the documents and results that cross as plain objects
// (wasm-bindgen types the classes and functions; these it cannot see).
#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = include_str!("types.d.ts");
