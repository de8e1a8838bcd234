//! The boundary: JS values in, checked Rust values out; core errors and
//! argument errors out as JS `Error`s carrying `code`, `field` and `faults`.
//!
//! Nothing here decides anything about retries: it only checks that a value
//! has the JS type and range the API promises, and converts it.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use js_sys::{Array, JsString, Object, Reflect, Uint8Array};
use ojs_retry::ErrorCode;
use serde_json::{Map, Number, Value};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

/// `Number.MAX_SAFE_INTEGER` (2^53 − 1): the largest integer accepted.
pub(crate) const MAX_SAFE: u64 = (1 << 53) - 1;
#[allow(clippy::cast_precision_loss)] // 2^53 − 1 is exact in f64
const MAX_SAFE_F64: f64 = MAX_SAFE as f64;

// How deep a JS object given as a JSON document may nest: cycles and
// absurd nesting become an error instead of exhausting the wasm stack.
pub(crate) use ojs_retry::args::{Document, MAX_DEPTH};

/// A JS `Error` with `code`, `field` and `faults`.
pub(crate) fn js_error<'a>(
    code: &str,
    message: &str,
    faults: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> JsValue {
    let err = js_sys::Error::new(message);
    let list = Array::new();
    let mut first: Option<String> = None;
    for (field, msg) in faults {
        if first.is_none() {
            first = Some(field.to_string());
        }
        let f = Object::new();
        set(&f, "field", &JsValue::from_str(field));
        set(&f, "message", &JsValue::from_str(msg));
        list.push(&f);
    }
    set(&err, "code", &JsValue::from_str(code));
    set(
        &err,
        "field",
        &JsValue::from_str(first.as_deref().unwrap_or("")),
    );
    set(&err, "faults", &list);
    err.into()
}

/// A core [`ojs_retry::Error`] as a JS `Error`.
pub(crate) fn core_error(e: &ojs_retry::Error) -> JsValue {
    js_error(
        e.code().as_str(),
        &e.to_string(),
        e.iter_faults()
            .map(|f| (f.field.as_str(), f.message.as_str())),
    )
}

/// A `validation.invalid_argument` error for one field.
pub(crate) fn arg_error(field: &str, message: &str) -> JsValue {
    let code = ErrorCode::InvalidArgument.as_str();
    let text = ojs_retry::error::render_message(code, [(field, message)]);
    js_error(code, &text, [(field, message)])
}

/// Sets a property; setting on a fresh object or `Error` cannot fail.
pub(crate) fn set(target: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

pub(crate) type JsResult<T> = Result<T, JsValue>;

/// Maps a core result to a JS one.
pub(crate) fn core<T>(r: Result<T, ojs_retry::Error>) -> JsResult<T> {
    r.map_err(|e| core_error(&e))
}

/// What a JS value is, for messages.
pub(crate) fn describe(v: &JsValue) -> String {
    if v.is_null() {
        return "null".into();
    }
    if v.is_undefined() {
        return "undefined".into();
    }
    if let Some(s) = v.as_string() {
        let mut out: String = s.chars().take(40).collect();
        if out.len() < s.len() {
            out.push_str("...");
        }
        return format!("the string {out:?}");
    }
    if let Some(x) = v.as_f64() {
        return format!("the number {}", fmt_num(x));
    }
    if let Some(b) = v.as_bool() {
        return format!("the boolean {b}");
    }
    if Array::is_array(v) {
        return "an array".into();
    }
    match v.js_typeof().as_string() {
        Some(t) if t == "object" => "an object".into(),
        Some(t) => format!("a {t}"),
        None => "a value of unknown type".into(),
    }
}

/// A number as JS prints it (NaN, Infinity, integers without `.0`).
fn fmt_num(x: f64) -> String {
    js_sys::Number::from(x)
        .to_string_with_radix(10)
        // Radix 10 cannot fail; no Rust float formatting is linked for it.
        .map_or_else(|_| String::from("a number"), String::from)
}

/// `undefined` and `null` both mean "omitted" for optional arguments.
pub(crate) fn given(v: &JsValue) -> Option<&JsValue> {
    if v.is_undefined() || v.is_null() {
        None
    } else {
        Some(v)
    }
}

/// An integer in `0 ..= 2^53 − 1` given as a JS number (the range check is
/// the core's, shared with the native binding).
pub(crate) fn uint(v: &JsValue, field: &str) -> JsResult<u64> {
    let Some(x) = v.as_f64() else {
        return Err(arg_error(
            field,
            &format!(
                "expected an integer number between 0 and {MAX_SAFE}, found {}",
                describe(v)
            ),
        ));
    };
    core(ojs_retry::args::uint_from_f64(field, x))
}

/// An optional integer: `undefined`/`null` give `None`.
pub(crate) fn opt_uint(v: &JsValue, field: &str) -> JsResult<Option<u64>> {
    given(v).map(|v| uint(v, field)).transpose()
}

/// `now`: the given epoch milliseconds, or `Date.now()`.
pub(crate) fn now(v: &JsValue) -> JsResult<u64> {
    match given(v) {
        Some(v) => uint(v, "now"),
        None => {
            let t = js_sys::Date::now();
            if (0.0..=MAX_SAFE_F64).contains(&t) {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Ok(t.floor() as u64)
            } else {
                Err(arg_error(
                    "now",
                    &format!("the system clock gave {}", fmt_num(t)),
                ))
            }
        }
    }
}

/// A well-formed JS string (lone surrogates are refused rather than
/// silently replaced by U+FFFD).
pub(crate) fn string(v: &JsValue, field: &str) -> JsResult<String> {
    doc_string(v, field, Document::Argument)
}

const LONE_SURROGATE: &str =
    "expected well-formed Unicode text, found a string with a lone surrogate";

/// [`string`] for a part of a document: the fault has the document's code.
pub(crate) fn doc_string(v: &JsValue, field: &str, doc: Document) -> JsResult<String> {
    text(v, field, doc).unwrap_or_else(|| {
        Err(core_error(&doc.fault(
            field,
            format!("expected a string, found {}", describe(v)),
        )))
    })
}

/// `Some` when `v` is a string: its text, or the fault for a lone
/// surrogate; `None` for any other value. One boundary call for a string
/// (`as_string` is the type check and the copy).
pub(crate) fn text(v: &JsValue, field: &str, doc: Document) -> Option<JsResult<String>> {
    let text = utf8(v.dyn_ref::<JsString>()?);
    // The UTF-8 copy (TextEncoder) has U+FFFD for each lone surrogate; only
    // then is the UTF-16 text checked, which is slow (js-sys reads it one
    // `charCodeAt` call per code unit) and tells a real U+FFFD apart.
    if has_replacement_char(&text) && !v.unchecked_ref::<JsString>().is_valid_utf16() {
        return Some(Err(core_error(&doc.fault(field, LONE_SURROGATE))));
    }
    Some(Ok(text))
}

#[wasm_bindgen]
extern "C" {
    /// The host's `TextEncoder` (every runtime the package supports has
    /// one).
    type TextEncoder;
    #[wasm_bindgen(constructor)]
    fn new() -> TextEncoder;
    /// `encodeInto(text, bytes)`: UTF-8 into `bytes`, lone surrogates as
    /// U+FFFD; returns `{ read, written }`.
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &TextEncoder, text: &JsString, bytes: &Uint8Array) -> EncodeResult;
    type EncodeResult;
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodeResult) -> u32;
}

thread_local! {
    static ENCODER: TextEncoder = TextEncoder::new();
}

/// A JS string as UTF-8 (lone surrogates as U+FFFD). Long strings are
/// encoded by the host's `TextEncoder.encodeInto` straight into the new
/// `String`'s bytes through a view on wasm memory: wasm-bindgen's own
/// conversion (`String::from`) copies ASCII one `charCodeAt` at a time in
/// JS, ~0.9 µs for a 270-character policy against ~0.3 µs this way. Below
/// ~50 characters the view's half-dozen boundary calls cost more than that
/// loop (measured: 4 characters 0.11 µs against 0.24 µs).
fn utf8(js: &JsString) -> String {
    const SHORT: u32 = 48;
    let units = js.length();
    if units < SHORT {
        return String::from(js);
    }
    // 3 bytes per UTF-16 code unit at most.
    let cap = usize::try_from(units)
        .unwrap_or(usize::MAX)
        .saturating_mul(3);
    let mut bytes = alloc::vec![0_u8; cap];
    let written = match (
        u32::try_from(bytes.as_mut_ptr().expose_provenance()),
        u32::try_from(cap),
    ) {
        (Ok(at), Ok(len)) => {
            let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
            // Nothing allocates between the view and the copy, so the
            // memory cannot grow (and detach the view) in between.
            let view = Uint8Array::new_with_byte_offset_and_length(&memory.buffer(), at, len);
            ENCODER.with(|e| e.encode_into(js, &view).written())
        }
        _ => u32::MAX,
    };
    match usize::try_from(written) {
        Ok(n) if n <= cap => {
            bytes.truncate(n);
            // Always UTF-8 (TextEncoder's output); the fallback is never taken.
            String::from_utf8(bytes).unwrap_or_else(|_| String::from(js))
        }
        _ => String::from(js),
    }
}

/// Whether `text` contains U+FFFD. `is_ascii` first (a word at a time) for
/// the usual ASCII text, then a scan for its first byte: at opt-level "z",
/// `windows(3)` compares by calling `memcmp` at every byte (~1 µs for a
/// 270-byte policy), and `str::contains` with a multi-byte char links the
/// two-way string searcher (~1.9 KB of wasm).
fn has_replacement_char(text: &str) -> bool {
    if text.is_ascii() {
        return false;
    }
    let b = text.as_bytes();
    b.iter()
        .enumerate()
        .any(|(i, &x)| x == 0xEF && b.get(i + 1) == Some(&0xBF) && b.get(i + 2) == Some(&0xBD))
}

/// A boolean.
pub(crate) fn boolean(v: &JsValue, field: &str) -> JsResult<bool> {
    v.as_bool()
        .ok_or_else(|| arg_error(field, &format!("expected a boolean, found {}", describe(v))))
}

/// An array of strings.
pub(crate) fn strings(v: &JsValue, field: &str) -> JsResult<Vec<String>> {
    if !Array::is_array(v) {
        return Err(arg_error(
            field,
            &format!("expected an array of strings, found {}", describe(v)),
        ));
    }
    let arr: &Array = v.unchecked_ref();
    let mut out = Vec::with_capacity(arr.length() as usize);
    for (i, item) in arr.iter().enumerate() {
        out.push(string(&item, &format!("{field}[{i}]"))?);
    }
    Ok(out)
}

/// An options object: `undefined`/`null` give `None`; anything but a plain
/// object is an error, and so is a key outside `allowed` (a misspelt option
/// must not be silently ignored).
pub(crate) fn options(v: &JsValue, field: &str, allowed: &[&str]) -> JsResult<Option<Object>> {
    let Some(v) = given(v) else {
        return Ok(None);
    };
    let obj = plain_object(v, field)?;
    for key in Object::keys(&obj).iter() {
        let name = key.as_string().unwrap_or_default();
        if !allowed.contains(&name.as_str()) {
            return Err(arg_error(
                &name,
                &format!(
                    "unknown option {name:?} in {field}; expected one of: {}",
                    allowed.join(", ")
                ),
            ));
        }
    }
    Ok(Some(obj))
}

/// A property of an options object (`undefined` when absent).
pub(crate) fn prop(obj: &Object, key: &'static str) -> JsValue {
    prop_at(obj, &interned(key))
}

/// A property by its key as a JS value (one read from `Object.keys`).
pub(crate) fn prop_at(obj: &Object, key: &JsValue) -> JsValue {
    Reflect::get(obj, key).unwrap_or(JsValue::UNDEFINED)
}

thread_local! {
    static KEYS: core::cell::RefCell<Vec<(&'static str, JsValue)>> =
        const { core::cell::RefCell::new(Vec::new()) };
}

/// The JS string of an option name, made once: creating it from Rust each
/// time (UTF-8 decoded in JS) cost more than the property read itself.
fn interned(key: &'static str) -> JsValue {
    KEYS.with(|keys| {
        let Ok(mut keys) = keys.try_borrow_mut() else {
            return JsValue::from_str(key);
        };
        if let Some((_, v)) = keys.iter().find(|(k, _)| *k == key) {
            return v.clone();
        }
        let v = JsValue::from_str(key);
        keys.push((key, v.clone()));
        v
    })
}

/// A plain object: its prototype is `null` or a root prototype
/// (`Object.prototype` of any realm). Maps, dates and class instances are
/// refused instead of being read as `{}`.
fn plain_object(v: &JsValue, field: &str) -> JsResult<Object> {
    let bad = || {
        arg_error(
            field,
            &format!("expected a plain object, found {}", describe(v)),
        )
    };
    if !v.is_object() || Array::is_array(v) {
        return Err(bad());
    }
    let obj: Object = v.clone().unchecked_into();
    let proto = Object::get_prototype_of(&obj);
    if proto.is_null() || Object::get_prototype_of(&proto).is_null() {
        Ok(obj)
    } else {
        Err(bad())
    }
}

/// A JS value read as a JSON value (what `JSON.stringify` would keep):
/// object keys whose value is `undefined` are omitted; `NaN`, infinities,
/// functions, symbols, non-plain objects and lone surrogates are faults of
/// `doc` naming the offending path; BigInts become integers.
pub(crate) fn json_value(v: &JsValue, path: &str, doc: Document) -> JsResult<Value> {
    to_json(v, path, 0, doc)
}

fn to_json(v: &JsValue, path: &str, depth: usize, doc: Document) -> JsResult<Value> {
    let fault = |message: &str| core_error(&doc.fault(path, message));
    if depth > MAX_DEPTH {
        return Err(core_error(&doc.too_deep(path)));
    }
    if v.is_null() {
        return Ok(Value::Null);
    }
    if let Some(b) = v.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(x) = v.as_f64() {
        return number(x)
            .ok_or_else(|| fault(&format!("expected a finite number, found {}", fmt_num(x))));
    }
    if let Some(t) = text(v, path, doc) {
        return t.map(Value::String);
    }
    if v.is_bigint() {
        if let Ok(n) = u64::try_from(v.clone()) {
            return Ok(Value::Number(n.into()));
        }
        if let Ok(n) = i64::try_from(v.clone()) {
            return Ok(Value::Number(n.into()));
        }
        return Err(fault("expected a BigInt between -2^63 and 2^64 - 1"));
    }
    if Array::is_array(v) {
        let arr: &Array = v.unchecked_ref();
        let mut out = Vec::with_capacity(arr.length() as usize);
        for (i, item) in arr.iter().enumerate() {
            let p = format!("{path}[{i}]");
            out.push(if item.is_undefined() {
                Value::Null
            } else {
                to_json(&item, &p, depth + 1, doc)?
            });
        }
        return Ok(Value::Array(out));
    }
    if v.is_object() {
        let obj = plain_object(v, path)
            .map_err(|_| fault(&format!("expected a plain object, found {}", describe(v))))?;
        let mut map = Map::new();
        for key in Object::keys(&obj).iter() {
            let name = doc_string(&key, path, doc)?;
            let item = prop_at(&obj, &key);
            if item.is_undefined() {
                continue;
            }
            let p = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            let value = to_json(&item, &p, depth + 1, doc)?;
            map.insert(name, value);
        }
        return Ok(Value::Object(map));
    }
    Err(fault(&format!(
        "expected a JSON value, found {}",
        describe(v)
    )))
}

/// A finite JS number as a JSON number: integral values within ±(2^53 − 1)
/// as integers (so `3` and `3.0` are the same integer), others as floats.
fn number(x: f64) -> Option<Value> {
    if !x.is_finite() {
        return None;
    }
    if x.trunc() == x && x.abs() <= MAX_SAFE_F64 {
        // Integral and within ±2^53: exact.
        #[allow(clippy::cast_possible_truncation)]
        let n = x as i64;
        return Some(Value::Number(n.into()));
    }
    Number::from_f64(x).map(Value::Number)
}

/// A policy layer: JSON text, or anything else read as a JSON value and
/// judged by the core (`null`, arrays and numbers are documents that are not
/// objects).
pub(crate) fn layer(v: &JsValue) -> JsResult<ojs_retry::Layer<'static>> {
    match text(v, "", Document::Policy) {
        Some(t) => t.map(|t| ojs_retry::Layer::Json(t.into())),
        None => json_value(v, "", Document::Policy).map(|v| ojs_retry::Layer::Value(v.into())),
    }
}

/// Merges the layers in the core (which handles every mix of forms).
pub(crate) fn policy_from_layers(
    layers: Vec<ojs_retry::Layer<'_>>,
) -> JsResult<ojs_retry::RetryPolicy> {
    core(ojs_retry::RetryPolicy::from_layers(layers))
}

/// The caller's jitter choice, owning its key (the core's type).
pub(crate) use ojs_retry::args::Jitter;

/// `{u}`, `{seed}` or `{key}`; `None` when omitted.
pub(crate) fn jitter(v: &JsValue) -> JsResult<Option<Jitter>> {
    let Some(obj) = options(v, "jitter", &["u", "seed", "key"])? else {
        return Ok(None);
    };
    let keys = Object::keys(&obj);
    if keys.length() != 1 {
        return Err(arg_error(
            "jitter",
            &format!(
                "expected exactly one of {{u}}, {{seed}} or {{key}}, found {} keys",
                keys.length()
            ),
        ));
    }
    let key = keys.get(0);
    let name = key.as_string().unwrap_or_default();
    let value = prop_at(&obj, &key);
    match name.as_str() {
        "u" => {
            // Range checks ([0, 1), NaN) belong to the core; only the type here.
            let u = value.as_f64().ok_or_else(|| {
                arg_error(
                    "u",
                    &format!("expected a number in [0, 1), found {}", describe(&value)),
                )
            })?;
            Ok(Some(Jitter::Uniform(u)))
        }
        "seed" => seed(&value).map(|s| Some(Jitter::Seed(s))),
        _ => string(&value, "key").map(|k| Some(Jitter::Key(k))),
    }
}

/// A 64-bit seed: an integer number up to 2^53 − 1 or a BigInt below 2^64.
fn seed(v: &JsValue) -> JsResult<u64> {
    if v.is_bigint() {
        return u64::try_from(v.clone()).map_err(|_| {
            arg_error(
                "seed",
                "expected a BigInt between 0 and 2^64 - 1 (18446744073709551615)",
            )
        });
    }
    if v.as_f64().is_some() {
        return uint(v, "seed");
    }
    Err(arg_error(
        "seed",
        &format!(
            "expected an integer number up to 2^53 - 1 or a BigInt below 2^64, found {}",
            describe(v)
        ),
    ))
}

/// A jitter source, defaulting to OS entropy.
pub(crate) fn jitter_or_entropy(v: &JsValue) -> JsResult<Jitter> {
    Ok(jitter(v)?.unwrap_or(Jitter::Entropy))
}
