//! # ojs-retry-js
//!
//! The JavaScript binding of the [`ojs_retry`] engine: one crate, built two
//! ways by `cfg`, as `css-inline`'s JavaScript binding is —
//!
//! * natively, a Node-API addon through napi-rs (`#[napi]`), shipped in the
//!   npm package `ojs-retry`;
//! * for `wasm32`, a WebAssembly module through wasm-bindgen
//!   (`#[wasm_bindgen]`), shipped in the npm package `ojs-retry-wasm`
//!   (browsers, bundlers, workerd, Deno, Bun, and Node's fallback).
//!
//! Every export is one Rust function carrying both frameworks' attribute
//! (`cfg_attr`), over the same argument types (numbers, strings,
//! `Option`s, `&mut [f64]`, opaque handles, and [`fw::Val`] — a JS value
//! read by [`read`]), so the two builds have the same exports, checked by
//! the same tests. The packages' public API is one small JS layer over
//! these exports (`js/api.ts`, shipped by both packages): the classes
//! `RetryPolicy`, `RetryState` and `Reservation` holding handles in
//! private fields, `OjsRetryError`, and the reading of option bags and
//! failures by own-property lookups.
//!
//! What lives here: converting arguments ([`read`]: live JS values read by
//! the core's one reader through a serde `Deserializer`, sizes checked
//! before anything is copied, own properties only, holes as holes; the
//! call options, [`options`]; the JS spelling of a failure's keys, [`keys`]),
//! calling the core, and writing results
//! ([`out`]). A core error becomes the JSON text every export throws, in
//! one place ([`fw::Thrown`]); the JS layer makes it an `OjsRetryError`.
//! No policy logic lives here, and no `unsafe`.

mod fw;
mod keys;
mod options;
mod out;
mod policy;
mod read;
mod state;
mod transaction;

use ojs_retry::ErrorCode;

use crate::fw::{Core, Result, Thrown, Val, ret};
use crate::read::Host;

/// The error a caller's argument of the wrong kind is, as JSON text (what
/// every export throws): the JS layer's own checks (a value that is not a
/// `RetryPolicy`, an object that was freed) report through the engine's
/// one error shape.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "argumentError")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "argumentError")
)]
pub fn argument_error(field: String, message: String) -> String {
    Thrown::from(ojs_retry::Error::invalid_argument(&field, message)).json()
}

/// The error of a document whose reading threw, as JSON text, with the
/// document's `code`.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "unreadableError")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "unreadableError")
)]
pub fn unreadable_error(code: String, message: String) -> String {
    let code = match code.as_str() {
        "validation.retry_policy_invalid" => ErrorCode::RetryPolicyInvalid,
        "validation.state_invalid" => ErrorCode::StateInvalid,
        _ => ErrorCode::InvalidArgument,
    };
    Thrown::from(ojs_retry::Error::new(
        code,
        "",
        format!("the value cannot be read as plain data ({message})"),
    ))
    .json()
}

/// The names the decision codes of [`out::decision`] stand for, and the
/// preset systems: `{"actions": [...], "reasons": [...], "codes": [...],
/// "presetSystems": [...]}`, read once by the JS layer.
#[cfg_attr(not(target_arch = "wasm32"), napi_derive::napi(js_name = "names"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "names")
)]
pub fn names() -> String {
    out::names()
}

/// Which build this is: `"native"` (napi-rs) or `"wasm"` (wasm-bindgen).
#[cfg_attr(not(target_arch = "wasm32"), napi_derive::napi(js_name = "flavor"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "flavor")
)]
pub fn flavor() -> String {
    if cfg!(target_arch = "wasm32") {
        "wasm"
    } else {
        "native"
    }
    .into()
}

/// Whether `errorType` matches any of `patterns` (exact, or a `prefix.*`
/// wildcard; a bare `*` matches nothing).
#[cfg_attr(not(target_arch = "wasm32"), napi_derive::napi(js_name = "matches"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "matches")
)]
pub fn matches(error_type: Val, patterns: Val, ctx: Val) -> Result<bool> {
    let h = fw::host(&ctx);
    ret(match_args(&h, &error_type, patterns)
        .and_then(|(t, p)| Ok(ojs_retry::matching::try_first_match(&t, &p)?.is_some())))
}

/// The first of `patterns` that `errorType` matches.
#[cfg_attr(not(target_arch = "wasm32"), napi_derive::napi(js_name = "firstMatch"))]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "firstMatch")
)]
pub fn first_match(error_type: Val, patterns: Val, ctx: Val) -> Result<Option<String>> {
    let h = fw::host(&ctx);
    ret(match_args(&h, &error_type, patterns)
        .and_then(|(t, p)| Ok(ojs_retry::matching::try_first_match(&t, &p)?.map(str::to_owned))))
}

fn match_args<H: Host>(h: &H, error_type: &H::V, patterns: H::V) -> Core<(String, Vec<String>)> {
    let error_type = read::string_arg(h, error_type, ErrorCode::InvalidArgument, "error_type")?;
    let list = read::named(h, patterns, ErrorCode::InvalidArgument, "patterns")?;
    Ok((error_type, ojs_retry::matching::patterns_from_value(&list)?))
}

/// An ISO 8601 duration (`"PT1.5S"`) in milliseconds.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "parseDuration")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "parseDuration")
)]
pub fn parse_duration(text: Val, ctx: Val) -> Result<f64> {
    let h = fw::host(&ctx);
    ret((|| {
        if let Some(units) = read::string_len(&h, &text) {
            ojs_retry::duration::check_duration_len(units)?;
        }
        let text = read::string_arg(&h, &text, ErrorCode::InvalidArgument, "duration")?;
        Ok(out::num(ojs_retry::parse_duration(&text)?))
    })())
}

/// The canonical ISO 8601 text of a duration in milliseconds.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "formatDuration")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "formatDuration")
)]
pub fn format_duration(ms: Val, ctx: Val) -> Result<String> {
    let h = fw::host(&ctx);
    ret((|| {
        Ok(ojs_retry::format_duration(read::uint_arg(
            &h, &ms, "duration",
        )?)?)
    })())
}

/// An RFC 3339 timestamp as epoch milliseconds.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "parseTimestamp")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "parseTimestamp")
)]
pub fn parse_timestamp(text: Val, ctx: Val) -> Result<f64> {
    let h = fw::host(&ctx);
    ret((|| {
        let text = read::string_arg(&h, &text, ErrorCode::InvalidArgument, "timestamp")?;
        Ok(out::num(ojs_retry::parse_timestamp(&text)?))
    })())
}

/// Epoch milliseconds as RFC 3339 UTC (`2026-02-12T10:31:05.250Z`).
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "formatTimestamp")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "formatTimestamp")
)]
pub fn format_timestamp(ms: Val, ctx: Val) -> Result<String> {
    let h = fw::host(&ctx);
    ret((|| {
        Ok(ojs_retry::format_timestamp(read::uint_arg(
            &h,
            &ms,
            "timestamp",
        )?)?)
    })())
}

/// The 53-bit sample `k` (`u = k / 2^53`) a jitter source gives for retry
/// `retryNumber` (OS entropy without one); the options an object.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "jitterSample")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "jitterSample")
)]
pub fn jitter_sample(retry_number: Val, options: Val, ctx: Val) -> Result<f64> {
    let h = fw::host(&ctx);
    ret((|| {
        let n = read::uint_arg(&h, &retry_number, "retry_number")?;
        let o = options::CallOptions::read(&h, options, options::Call::Jitter)?;
        Ok(out::num(o.jitter_or_entropy().sample(n)?.bits()))
    })())
}
