//! The boundary: JS values in (through serde-wasm-bindgen into the core's
//! readers), JS values out (the core's `Serialize` types through
//! serde-wasm-bindgen), and the one function that turns a core error into
//! the JS `Error` the API throws ([`Thrown`]'s `Into<JsValue>`).

use js_sys::{Array, JsString, Reflect};
use ojs_retry::{CallOptions, Case, ErrorCode, Fault, Layer, Value};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// What a binding function throws: a core error, or a fault the host's
/// conversion found before the core could see the value (a JS value of
/// the wrong type, a string that is not Unicode). Both carry a code
/// defined by the core and become the same kind of JS `Error`.
pub enum Thrown {
    /// An error returned by the engine.
    Core(ojs_retry::Error),
    /// A value that could not be converted for the engine.
    Host {
        /// The core's code for this kind of input.
        code: ErrorCode,
        /// The one fault.
        fault: Fault,
    },
}

/// `Result` of every exported function.
pub type JsResult<T> = Result<T, Thrown>;

impl From<ojs_retry::Error> for Thrown {
    fn from(e: ojs_retry::Error) -> Self {
        Self::Core(e)
    }
}

impl Thrown {
    /// A fault at `path` (a field, or `None` for the whole document).
    pub fn host(code: ErrorCode, path: Option<&str>, message: &str) -> Self {
        let field = path.and_then(|p| p.split(['[', '.']).next()).filter(|f| !f.is_empty());
        Self::Host {
            code,
            fault: Fault {
                field: field.map(Into::into),
                path: path.map(Into::into),
                message: message.into(),
            },
        }
    }

    /// A `validation.invalid_argument` fault on the argument `field`.
    pub fn arg(field: &str, message: &str) -> Self {
        Self::host(ErrorCode::InvalidArgument, Some(field), message)
    }
}

/// The one error mapping: an `Error` whose message is the core's one-line
/// form, with `code`, `field` and `path` (strings, or `null` for the whole
/// document) and `faults: [{ field, path, message }]`.
impl From<Thrown> for JsValue {
    fn from(t: Thrown) -> Self {
        let (code, message, faults) = match &t {
            Thrown::Core(e) => (e.code(), e.to_string(), e.faults()),
            Thrown::Host { code, fault } => {
                let at = fault.path.as_deref().map(|p| format!("{p}: ")).unwrap_or_default();
                (*code, format!("{code}: {at}{}", fault.message), core::slice::from_ref(fault))
            }
        };
        let first = faults.first();
        let error = js_sys::Error::new(&message);
        let text = |s: Option<&String>| s.map_or(JsValue::NULL, |s| JsValue::from_str(s));
        // Setting a property of a fresh Error cannot fail.
        let _ = Reflect::set(&error, &"code".into(), &code.as_str().into());
        let _ = Reflect::set(&error, &"field".into(), &text(first.and_then(|f| f.field.as_ref())));
        let _ = Reflect::set(&error, &"path".into(), &text(first.and_then(|f| f.path.as_ref())));
        let _ = Reflect::set(&error, &"faults".into(), &to_js(&faults).unwrap_or(JsValue::NULL));
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
    to_js(value).map_err(|e| Thrown::arg(what, &e.to_string()))
}

/// A JS value as a document value tree, read by the core from
/// serde-wasm-bindgen (`Layer::read`: the core's one reader of host
/// values); a value that cannot be read (nested too deep, a BigInt beyond
/// 64 bits, a symbol) is a fault at its top-level key, or of the whole
/// document, with the code of the document kind.
pub fn value(v: &JsValue, code: ErrorCode) -> JsResult<Value> {
    match Layer::read(serde_wasm_bindgen::Deserializer::from(v.clone())) {
        Layer::Value(doc) => Ok(doc),
        Layer::Unreadable(fault) => Err(Thrown::Host { code, fault }),
        // `Layer::read` yields only the two above.
        Layer::Json(_) | Layer::JsonBytes(_) => Err(Thrown::host(code, None, "the value could not be read")),
    }
}

/// A string argument. A JS string holding a lone surrogate has no UTF-8
/// form (the host's encoder would silently put U+FFFD in its place), so
/// it is refused, with `code` at `path`.
pub fn string(v: &JsValue, code: ErrorCode, path: Option<&str>) -> JsResult<String> {
    let s: &JsString = v
        .dyn_ref()
        .ok_or_else(|| Thrown::host(code, path, &format!("expected a string, found {}", kind(v))))?;
    // `String.prototype.isWellFormed` (ES2024: Node 20, Chromium, workerd).
    if !s.is_well_formed() {
        return Err(Thrown::host(code, path, "the string holds a lone UTF-16 surrogate (it is not Unicode text)"));
    }
    Ok(s.into())
}

/// An unsigned integer argument: a JS number (not a numeric string, not a
/// BigInt) that is an integer in 0 ..= 2^53 − 1.
pub fn uint(v: &JsValue, field: &str) -> JsResult<u64> {
    let x = v
        .as_f64()
        .ok_or_else(|| Thrown::arg(field, &format!("expected an integer number, found {}", kind(v))))?;
    Ok(ojs_retry::uint_from_f64(field, x)?)
}

/// An optional instant: `undefined` is the system clock.
pub fn now_or_clock(v: &JsValue) -> JsResult<u64> {
    if v.is_undefined() { clock() } else { uint(v, "now") }
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
    let doc = value(v, ErrorCode::InvalidArgument)?;
    Ok(CallOptions::from_value(&doc, Case::Camel)?)
}

/// The `now` of an option bag, else the system clock.
pub fn now(o: &CallOptions) -> JsResult<u64> {
    o.now.map_or_else(clock, Ok)
}

/// A short description of a JS value's type for messages.
fn kind(v: &JsValue) -> String {
    if v.is_null() {
        "null".into()
    } else if Array::is_array(v) {
        "an array".into()
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
