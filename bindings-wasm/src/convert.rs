//! The boundary: JS values in (an inert copy read by the core's host walk
//! into its readers), JS values out (the core's `Serialize` types through
//! serde-wasm-bindgen), and the one function that turns a core error into
//! the JS `Error` the API throws ([`Thrown`]'s `Into<JsValue>`).

use js_sys::{JsString, Reflect};
use ojs_retry::{CallOptions, Case, ErrorCode, Value};
use serde::Serialize;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// What every exported function throws: a core error, turned into a JS
/// `Error` by the one mapping below. (A newtype: neither the core's
/// `Error` nor `JsValue` is this crate's, so the conversion needs a type
/// that is.)
pub struct Thrown(ojs_retry::Error);

/// `Result` of every exported function.
pub type JsResult<T> = Result<T, Thrown>;

impl From<ojs_retry::Error> for Thrown {
    fn from(e: ojs_retry::Error) -> Self {
        Self(e)
    }
}

/// A `validation.invalid_argument` error on the argument `field`.
pub fn arg_error(field: &str, message: &str) -> Thrown {
    Thrown(ojs_retry::Error::invalid_argument(field, message))
}

/// The one error mapping: an `Error` whose message is the core's one-line
/// form, with `code`, `field` and `path` (strings, or `null` for the whole
/// document) and `faults: [{ field, path, message }]`.
impl From<Thrown> for JsValue {
    fn from(Thrown(e): Thrown) -> Self {
        let error = js_sys::Error::new(&e.to_string());
        let text = |s: Option<&str>| s.map_or(JsValue::NULL, JsValue::from_str);
        // Setting a property of a fresh Error cannot fail.
        let _ = Reflect::set(&error, &"code".into(), &e.code().as_str().into());
        let _ = Reflect::set(&error, &"field".into(), &text(e.field()));
        let _ = Reflect::set(&error, &"path".into(), &text(e.path()));
        let _ = Reflect::set(
            &error,
            &"faults".into(),
            &to_js(e.faults()).unwrap_or(JsValue::NULL),
        );
        error.into()
    }
}

/// `value` as a plain JS value: objects (never `Map`s), `null` for `None`.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, serde_wasm_bindgen::Error> {
    let out = serde_wasm_bindgen::Serializer::new()
        .serialize_maps_as_objects(true)
        .serialize_missing_as_null(true);
    value.serialize(&out)
}

/// An output document: a serialisation failure is the engine's value
/// being out of what JS numbers hold, reported as a fault of `what`.
pub fn out<T: Serialize + ?Sized>(value: &T, what: &str) -> JsResult<JsValue> {
    to_js(value).map_err(|e| arg_error(what, &e.to_string()))
}

#[wasm_bindgen]
extern "C" {
    /// The host's `structuredClone` (Node ≥ 17, browsers, workerd), under
    /// `catch`: whatever it throws comes back as an `Err`.
    #[wasm_bindgen(catch, js_name = structuredClone)]
    fn structured_clone(value: &JsValue) -> Result<JsValue, JsValue>;

    /// `String(x)`, under `catch` (a thrown value may be anything).
    #[wasm_bindgen(catch, js_name = String)]
    fn describe_thrown(value: &JsValue) -> Result<JsString, JsValue>;
}

/// A copy of a caller's value that is plain data: own enumerable data
/// properties, arrays, strings, numbers, BigInts, `Map`s — made by the
/// host's `structuredClone` before the module reads it.
///
/// Why: reading a live JS object runs the caller's code (getters, `Proxy`
/// traps, a revoked proxy), and an exception thrown by it would unwind
/// through the module's frames without running their cleanup (borrows,
/// externref slots, the shadow stack): after a few hundred such exceptions
/// the instance no longer works. The clone runs that code under `catch`,
/// so anything it throws (a getter's error, `DataCloneError` for a
/// function, symbol or proxy, `RangeError` for a value nested some
/// thousands of levels deep) is a fault of the whole document with `code`.
pub fn inert(v: &JsValue, code: ErrorCode) -> JsResult<JsValue> {
    structured_clone(v)
        .map_err(|thrown| Thrown(ojs_retry::Error::from_fault(code, uncloneable(&thrown))))
}

/// A JS value as a document value tree: an inert copy of it (see
/// [`inert`]) read by the core's host walk ([`crate::host`]); a value that
/// cannot be read is a fault at its path with the code of the document
/// kind.
pub fn value(v: &JsValue, code: ErrorCode) -> JsResult<Value> {
    value_as(v, code, None)
}

/// [`value`] for an argument named `field`, its faults located there.
pub fn value_as(v: &JsValue, code: ErrorCode, field: Option<&str>) -> JsResult<Value> {
    Ok(located(v, field)?.map_err(|f| ojs_retry::Error::from_fault(code, f))?)
}

/// [`value`], with a fault left for the caller to report (a policy layer
/// is reported with the other layers' faults).
pub fn located(v: &JsValue, field: Option<&str>) -> JsResult<Result<Value, ojs_retry::Fault>> {
    let copy = match structured_clone(v) {
        Ok(copy) => copy,
        Err(thrown) => {
            let mut fault = uncloneable(&thrown);
            fault.field = field.map(String::from);
            fault.path = field.map(String::from);
            return Ok(Err(fault));
        }
    };
    ojs_retry::value::host::read_as(&crate::host::Js::new(copy), field).map_err(|e| {
        Thrown(ojs_retry::Error::new(
            ErrorCode::InvalidArgument,
            "",
            format!("the value could not be read ({})", describe(&e)),
        ))
    })
}

fn describe(thrown: &JsValue) -> String {
    describe_thrown(thrown)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}

fn uncloneable(thrown: &JsValue) -> ojs_retry::Fault {
    ojs_retry::Fault {
        field: None,
        path: None,
        message: format!(
            "the value cannot be read as plain data ({})",
            describe(thrown)
        ),
    }
}

/// A string argument. A JS string holding a lone surrogate has no UTF-8
/// form (the host's encoder would silently put U+FFFD in its place), so
/// it is refused, with `code` at `path` (`""`: the whole document).
pub fn string(v: &JsValue, code: ErrorCode, path: &str) -> JsResult<String> {
    let fault = |m: &str| Thrown(ojs_retry::Error::new(code, path, m));
    let s: &JsString = v
        .dyn_ref()
        .ok_or_else(|| fault(&format!("expected a string, found {}", kind(v))))?;
    // Measured before it is copied into the module's memory.
    ojs_retry::limits::check_text_arg(code, path, s.length() as usize)?;
    // `String.prototype.isWellFormed` (ES2024: Node 20, Chromium, workerd).
    if !s.is_well_formed() {
        return Err(fault(
            "the string holds a lone UTF-16 surrogate (it is not Unicode text)",
        ));
    }
    Ok(s.into())
}

/// An unsigned integer argument: a JS number (not a numeric string, not a
/// BigInt) that is an integer in 0 ..= 2^53 − 1.
pub fn uint(v: &JsValue, field: &str) -> JsResult<u64> {
    let x = v.as_f64().ok_or_else(|| {
        arg_error(
            field,
            &format!("expected an integer number, found {}", kind(v)),
        )
    })?;
    Ok(ojs_retry::uint_from_f64(field, x)?)
}

/// An optional instant: `undefined` is the system clock.
pub fn now_or_clock(v: &JsValue) -> JsResult<u64> {
    if v.is_undefined() {
        clock()
    } else {
        uint(v, "now")
    }
}

/// The system clock (`Date.now()`), epoch milliseconds.
pub fn clock() -> JsResult<u64> {
    Ok(ojs_retry::uint_from_f64("now", js_sys::Date::now())?)
}

/// The option bag `{ now?, u?, seed?, key?, historyLimit? }` (`undefined`:
/// none of them), read by the core.
pub fn options(v: &JsValue) -> JsResult<CallOptions> {
    if v.is_undefined() {
        return Ok(CallOptions::default());
    }
    Ok(CallOptions::from_value(
        &value(v, ErrorCode::InvalidArgument)?,
        Case::Camel,
    )?)
}

/// The `now` of an option bag, else the system clock.
pub fn now(o: &CallOptions) -> JsResult<u64> {
    o.now.map_or_else(clock, Ok)
}

/// A short description of a JS value's type for messages: `typeof` only,
/// which runs none of the caller's code (`Array.isArray` throws for a
/// revoked proxy).
fn kind(v: &JsValue) -> String {
    if v.is_null() {
        "null".into()
    } else {
        v.js_typeof().as_string().unwrap_or_default()
    }
}

/// `Some(x)` as a JS value, `None` as `null` (wasm-bindgen's `Option`
/// return would be `undefined`; the surface says `null`).
pub fn or_null<T: Into<JsValue>>(x: Option<T>) -> JsValue {
    x.map_or(JsValue::NULL, Into::into)
}

/// `n` (an engine count, time or delay: all below 2^53) as a JS number.
#[allow(clippy::cast_precision_loss)]
pub fn num(n: u64) -> f64 {
    n as f64
}
