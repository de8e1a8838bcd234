//! Arguments in, results out: numbers as `f64` and strings as UTF-16
//! (napi-rs argument types), objects through the core's host-value walk
//! ([`crate::host`]), results from the core's `Serialize` types into a
//! `serde_json::Value`.

use std::time::{SystemTime, UNIX_EPOCH};

use napi::ValueType;
use napi::bindgen_prelude::{Either, Env, Unknown, Utf16String};
use ojs_retry::{CallOptions, Case, ErrorCode};
use serde::Serialize;

use crate::error::{OrThrow, argument_error, document_error, js_error};

/// A number argument: a JS number (napi-rs converts it), or any other value,
/// which is reported as the wrong type (a BigInt or a numeric string is not
/// a number here: nothing is coerced).
pub type NumberArg<'a> = Either<f64, Unknown<'a>>;

/// A string argument, read as UTF-16 so that a lone surrogate is an error
/// (a UTF-8 read would replace it with U+FFFD silently), or any other value,
/// which is reported as the wrong type.
pub type StringArg<'a> = Either<Utf16String, Unknown<'a>>;

/// The JS `typeof` of a value (`null` for null), for "found ..." messages.
pub(crate) fn type_name(v: &Unknown<'_>) -> &'static str {
    match v.get_type() {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Object) => "an object",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::BigInt) => "a BigInt",
        _ => "a value of an unknown type",
    }
}

/// The error for an argument of the wrong JS type.
pub(crate) fn wrong_type(
    env: &Env,
    field: &str,
    expected: &str,
    found: &Unknown<'_>,
) -> napi::Error {
    js_error(
        env,
        &argument_error(
            field,
            format!("expected {expected}, found {}", type_name(found)),
        ),
    )
}

/// An integer argument (0 ..= 2^53 − 1), checked by the core.
pub(crate) fn uint(env: &Env, field: &str, arg: NumberArg<'_>) -> napi::Result<u64> {
    match arg {
        Either::A(x) => ojs_retry::uint_from_f64(field, x).or_throw(env),
        Either::B(other) => Err(wrong_type(env, field, "a number", &other)),
    }
}

/// An optional instant argument (epoch ms); the system clock when omitted.
pub(crate) fn now_or_clock(env: &Env, arg: Option<NumberArg<'_>>) -> napi::Result<u64> {
    match arg {
        Some(a) => uint(env, "now", a),
        None => Ok(clock_ms()),
    }
}

const LONE_SURROGATE: &str = "expected well-formed text, found a lone UTF-16 surrogate";

/// A string argument; a lone surrogate is an error at `field`.
pub(crate) fn string(env: &Env, field: &str, arg: StringArg<'_>) -> napi::Result<String> {
    match arg {
        Either::A(units) => {
            ojs_retry::limits::check_text_arg(ErrorCode::InvalidArgument, field, units.len())
                .or_throw(env)?;
            String::from_utf16(&units)
                .map_err(|_| js_error(env, &argument_error(field, LONE_SURROGATE.to_owned())))
        }
        Either::B(other) => Err(wrong_type(env, field, "a string", &other)),
    }
}

/// The JSON text of a document; a lone surrogate in it is an error of the
/// whole document with `code` (as invalid UTF-8 is for bytes).
pub(crate) fn json_text(env: &Env, code: ErrorCode, units: &Utf16String) -> napi::Result<String> {
    ojs_retry::limits::check_text_arg(code, "", units.len()).or_throw(env)?;
    String::from_utf16(units)
        .map_err(|_| js_error(env, &document_error(code, LONE_SURROGATE.to_owned())))
}

pub(crate) use crate::host::document;

/// An option bag `{ u?, seed?, key?, now?, historyLimit? }` (absent: none),
/// read by the core.
pub(crate) fn options(env: &Env, v: Option<Unknown<'_>>) -> napi::Result<CallOptions> {
    match v {
        None => Ok(CallOptions::default()),
        Some(v) => {
            let doc = document(env, v, ErrorCode::InvalidArgument)?;
            CallOptions::from_value(&doc, Case::Camel).or_throw(env)
        }
    }
}

/// A core result type as a JS value (napi-rs writes a `serde_json::Value`'s
/// integers up to 2^53 − 1 as numbers; its serde serializer would write a
/// `u64` above 2^32 — an epoch instant — as a BigInt).
pub(crate) fn to_js<T: Serialize + ?Sized>(x: &T) -> napi::Result<serde_json::Value> {
    Ok(serde_json::to_value(x)?)
}

/// An engine integer as a JS number: exact, every one is at most 2^53 − 1.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn num(x: u64) -> f64 {
    x as f64
}

/// Epoch milliseconds of the system clock (0 before 1970).
pub(crate) fn clock_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
