//! Converting JS values at the boundary: strict numbers, jitter sources,
//! JSON-like documents in both directions, and the errors the engine throws.
//!
//! Nothing here decides anything about retries: it only checks that a JS
//! value has the shape the core's argument needs, and turns the core's
//! answers back into plain JS objects.

use std::cell::RefCell;

use napi::JsString;
use napi::bindgen_prelude::{Env, JsObjectValue, JsValue, Null, Object, ToNapiValue, Unknown};
use napi::{Status, ValueType};
use ojs_retry::args::{Document, Jitter, MAX_DEPTH, uint_from_f64 as core_uint};
use ojs_retry::json::{Map, Number, Value};
use ojs_retry::{Error as CoreError, MAX_MS};

/// `validation.invalid_argument`: what the boundary reports for a value of
/// the wrong type or out of range.
pub const INVALID_ARGUMENT: &str = "validation.invalid_argument";

/// An error on its way to becoming a JS `Error` with `code`, `field` and
/// `faults`.
pub enum Fail {
    /// A core error, mapped fault for fault.
    Core(CoreError),
    /// A boundary error: one fault.
    Arg {
        /// The error code.
        code: &'static str,
        /// The offending argument.
        field: String,
        /// What was expected and what was found.
        message: String,
    },
    /// A Node-API failure (or a pending JS exception, e.g. from a getter on
    /// the caller's object), passed through.
    Napi(napi::Error),
}

impl From<CoreError> for Fail {
    fn from(e: CoreError) -> Self {
        Self::Core(e)
    }
}

impl From<napi::Error> for Fail {
    fn from(e: napi::Error) -> Self {
        Self::Napi(e)
    }
}

/// The result type of every conversion.
pub type Res<T> = Result<T, Fail>;

/// The same failure reported for another field (e.g. `retry_numbers[3]`
/// for an element of a batch argument).
pub fn refield(fail: Fail, field: impl FnOnce() -> String) -> Fail {
    match fail {
        Fail::Core(e) => Fail::Arg {
            code: e.code().as_str(),
            field: field(),
            message: e.message().to_owned(),
        },
        Fail::Arg { code, message, .. } => Fail::Arg {
            code,
            field: field(),
            message,
        },
        other @ Fail::Napi(_) => other,
    }
}

/// A boundary error for `field`.
pub fn arg(field: impl Into<String>, message: impl Into<String>) -> Fail {
    Fail::Arg {
        code: INVALID_ARGUMENT,
        field: field.into(),
        message: message.into(),
    }
}

/// Builds the JS `Error` (message, `code`, `field`, `faults`) for a failure
/// and wraps it so that napi throws exactly that object.
pub fn throw(env: &Env, fail: Fail) -> napi::Error {
    let (code, faults): (&str, Vec<(String, String)>) = match fail {
        Fail::Napi(e) => return e,
        Fail::Core(e) => (
            e.code().as_str(),
            e.iter_faults()
                .map(|f| (f.field.clone(), f.message.clone()))
                .collect(),
        ),
        Fail::Arg {
            code,
            field,
            message,
        } => (code, vec![(field, message)]),
    };
    match build_error(env, code, &faults) {
        Ok(obj) => napi::Error::from(obj.to_unknown()),
        Err(e) => e,
    }
}

fn build_error<'e>(
    env: &'e Env,
    code: &str,
    faults: &[(String, String)],
) -> napi::Result<Object<'e>> {
    let message = ojs_retry::error::render_message(
        code,
        faults.iter().map(|(f, m)| (f.as_str(), m.as_str())),
    );
    let mut err = env.create_error(napi::Error::new(Status::GenericFailure, message))?;
    err.set_named_property("code", code)?;
    let first = faults.first().map_or("", |(f, _)| f.as_str());
    err.set_named_property("field", first)?;
    let mut list = env.create_array(u32::try_from(faults.len()).unwrap_or(u32::MAX))?;
    for (i, (field, msg)) in faults.iter().enumerate() {
        let mut f = Object::new(env)?;
        f.set("field", field.as_str())?;
        f.set("message", msg.as_str())?;
        list.set(u32::try_from(i).unwrap_or(u32::MAX), f)?;
    }
    err.set_named_property("faults", list)?;
    Ok(err)
}

/// A short description of a JS value's type for messages.
pub fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "a boolean",
        ValueType::Number => "a number",
        ValueType::String => "a string",
        ValueType::Symbol => "a symbol",
        ValueType::Object => "an object",
        ValueType::Function => "a function",
        ValueType::External => "an external",
        ValueType::BigInt => "a bigint",
        _ => "an unknown value",
    }
}

/// Reads a JS number (no coercion).
fn number(v: Unknown<'_>, t: ValueType, field: &str, expected: &str) -> Res<f64> {
    if t != ValueType::Number {
        return Err(arg(field, format!("{expected}, found {}", type_name(t))));
    }
    Ok(v.coerce_to_number()?.get_double()?)
}

/// What an integer argument must be (`MAX_MS` spelled out, so that the
/// success path formats nothing).
const EXPECTED_INT: &str = "expected an integer between 0 and 9007199254740991";
const _: () = assert!(MAX_MS == 9_007_199_254_740_991);

/// An integer argument: a JS number that is an integer in `0 ..= 2^53 − 1`.
/// NaN, infinities, fractions, negatives, larger numbers and non-numbers are
/// `validation.invalid_argument` errors naming `field`; nothing is truncated
/// or clamped.
pub fn uint(v: Unknown<'_>, field: &str) -> Res<u64> {
    let t = v.get_type()?;
    let x = number(v, t, field, EXPECTED_INT)?;
    uint_from_f64(x, field)
}

/// The check of [`uint`] on a number already read (the core's shared
/// conversion, so every JS binding rejects the same values the same way).
pub fn uint_from_f64(x: f64, field: &str) -> Res<u64> {
    Ok(core_uint(field, x)?)
}

/// `f64` as JS would print it (`NaN`, `Infinity`, `1.5`, `-3`).
pub fn show_f64(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{x}")
    }
}

/// An optional integer argument (`undefined` → `None`).
pub fn opt_uint(v: Option<Unknown<'_>>, field: &str) -> Res<Option<u64>> {
    match v {
        None => Ok(None),
        Some(v) if v.get_type()? == ValueType::Undefined => Ok(None),
        Some(v) => uint(v, field).map(Some),
    }
}

/// An optional instant: `undefined` means the system clock.
pub fn now_or_clock(v: Option<Unknown<'_>>) -> Res<u64> {
    match opt_uint(v, "now")? {
        Some(n) => Ok(n),
        None => Ok(clock_ms()),
    }
}

/// The system clock in epoch milliseconds.
pub fn clock_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A JS string argument.
pub fn string(v: Unknown<'_>, field: &str) -> Res<String> {
    doc_string(v, field, Document::Argument)
}

/// A JS string that is part of `doc`: a fault has the document's code. A
/// lone surrogate is refused, not silently replaced by U+FFFD as Node-API's
/// UTF-8 conversion does.
pub fn doc_string(v: Unknown<'_>, field: &str, doc: Document) -> Res<String> {
    with_doc_str(v, field, doc, |s| Ok(s.to_owned()))
}

/// [`doc_string`] lent to `f` instead of returned: the text is read into
/// one buffer and parsed from there (a policy document's text is not
/// copied again).
pub fn with_doc_str<T>(
    v: Unknown<'_>,
    field: &str,
    doc: Document,
    f: impl FnOnce(&str) -> Res<T>,
) -> Res<T> {
    let t = v.get_type()?;
    if t != ValueType::String {
        return Err(doc
            .fault(field, format!("expected a string, found {}", type_name(t)))
            .into());
    }
    with_js_str(v.coerce_to_string()?, field, doc, f)
}

/// [`with_doc_str`] for a value known to be a string.
pub fn with_js_str<T>(
    js: JsString<'_>,
    field: &str,
    doc: Document,
    f: impl FnOnce(&str) -> Res<T>,
) -> Res<T> {
    // One UTF-8 copy for almost every string (a policy document: 0.2 µs
    // against 0.5 µs through UTF-16), into a buffer this thread reuses. The
    // conversion turns a lone surrogate into U+FFFD, so only a string with a
    // U+FFFD in it (a real one, or a lone surrogate) is read again as
    // UTF-16, where the two differ.
    let parsed = UTF8.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => utf8_with(js, &mut buf, field, doc, f),
        // Only if `f` read another string through this path (it does not).
        Err(_) => utf8_with(js, &mut Vec::new(), field, doc, f),
    });
    match parsed {
        Ok(out) => out,
        Err(f) => {
            let len = js.utf16_len()?;
            let units = js.into_utf16()?;
            // The buffer carries a trailing NUL terminator: take the
            // string's own length.
            let text = units.as_slice().get(..len).unwrap_or_default();
            let text = String::from_utf16(text).map_err(|_| {
                Fail::from(doc.fault(
                    field,
                    "expected well-formed Unicode text, found a string with a lone surrogate",
                ))
            })?;
            f(&text)
        }
    }
}

thread_local! {
    /// The UTF-8 text of the string being read (kept: no allocation per
    /// call). Strings above `KEEP_MAX` bytes do not stay.
    static UTF8: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}
const KEEP_MAX: usize = 64 * 1024;

/// Runs `f` on the UTF-8 text of `js` read into `buf`; gives `f` back
/// (`Err`) when the text holds a U+FFFD, which needs the UTF-16 reading.
fn utf8_with<T, F: FnOnce(&str) -> Res<T>>(
    js: JsString<'_>,
    buf: &mut Vec<u8>,
    field: &str,
    doc: Document,
    f: F,
) -> Result<Res<T>, F> {
    let text = match read_utf8(js, buf) {
        Ok(ascii) => std::str::from_utf8(buf).map(|t| (t, ascii)).map_err(|_| {
            Fail::from(doc.fault(
                field,
                "expected UTF-8 text from Node-API, found invalid bytes",
            ))
        }),
        Err(e) => Err(e),
    };
    let out = match text {
        // ASCII text (as many bytes as UTF-16 units) has no U+FFFD; in any
        // other, the byte search first: 0xEF (the lead byte of U+FFFD) is
        // rare, and the slice search is word-at-a-time where
        // `contains(char)` is not.
        Ok((t, false)) if t.as_bytes().contains(&0xEF) && t.contains('\u{FFFD}') => {
            return Err(f);
        }
        Ok((t, _)) => f(t),
        Err(e) => Err(e),
    };
    if buf.capacity() > KEEP_MAX {
        *buf = Vec::new();
    }
    Ok(out)
}

/// The text of a JS string as UTF-8 in `buf`, in one pass; whether it is
/// ASCII (one byte per UTF-16 unit).
// napi-rs's `JsString::into_utf8` asks Node for the UTF-8 length first (a
// pass over the string, `String::Utf8Length`) and then allocates a zeroed
// buffer of that size for the copy: ~0.7k instructions of the ~2k that
// reading a policy document took. No UTF-16 code unit takes more than 3
// UTF-8 bytes, so 3 × the UTF-16 length (known without a pass) always
// holds the text; Node writes it in one pass.
#[allow(unsafe_code)]
fn read_utf8(js: JsString<'_>, buf: &mut Vec<u8>) -> Res<bool> {
    let units = js.utf16_len()?;
    let Some(cap) = units.checked_mul(3).and_then(|n| n.checked_add(1)) else {
        return Err(Fail::Napi(napi::Error::from_reason("string too long")));
    };
    buf.clear();
    buf.resize(cap, 0);
    let raw = js.value();
    let mut written: usize = 0;
    // SAFETY: `raw` is the string argument of the running call, so `env`
    // and `value` are valid for its duration; `buf` is initialised and
    // `cap` bytes long, and Node writes at most `cap` bytes into it (the
    // text, at most `cap - 1` bytes, then a NUL) and the text's length
    // into `written`. Nothing else holds `buf`.
    let status = unsafe {
        napi::sys::napi_get_value_string_utf8(
            raw.env,
            raw.value,
            buf.as_mut_ptr().cast(),
            cap,
            &raw mut written,
        )
    };
    if status != napi::sys::Status::napi_ok {
        return Err(Fail::Napi(napi::Error::new(
            napi::Status::from(status),
            "reading a string as UTF-8 failed",
        )));
    }
    buf.truncate(written);
    Ok(written == units)
}

/// An array of strings (`field[i]` names a bad element).
pub fn strings(v: Unknown<'_>, field: &str) -> Res<Vec<String>> {
    let t = v.get_type()?;
    if t != ValueType::Object || !v.is_array()? {
        return Err(arg(
            field,
            format!("expected an array of strings, found {}", type_name(t)),
        ));
    }
    let arr = v.coerce_to_object()?;
    let len = arr.get_array_length()?;
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    for i in 0..len {
        let item: Unknown<'_> = arr.get_element(i)?;
        out.push(string(item, &format!("{field}[{i}]"))?);
    }
    Ok(out)
}

/// Reads `{u} | {seed} | {key}`; `undefined` (or a missing argument) is
/// `None`.
pub fn jitter(v: Option<Unknown<'_>>) -> Res<Option<Jitter>> {
    let Some(v) = v else { return Ok(None) };
    let t = v.get_type()?;
    if t == ValueType::Undefined {
        return Ok(None);
    }
    let expected = "expected one of { u: number }, { seed: number | bigint }, { key: string }";
    if t != ValueType::Object || v.is_array()? {
        return Err(arg("jitter", format!("{expected}, found {}", type_name(t))));
    }
    let obj = v.coerce_to_object()?;
    jitter_fields(
        obj.get_named_property("u")?,
        obj.get_named_property("seed")?,
        obj.get_named_property("key")?,
    )
    .map(Some)
}

/// A jitter object's source from the values of its fields `u`, `seed` and
/// `key` (`undefined` for an absent one).
pub fn jitter_fields(u: Unknown<'_>, seed: Unknown<'_>, key: Unknown<'_>) -> Res<Jitter> {
    let expected = "expected one of { u: number }, { seed: number | bigint }, { key: string }";
    match (present(u)?, present(seed)?, present(key)?) {
        (Some(u), None, None) => {
            let t = u.get_type()?;
            // The core checks the range [0, 1) (NaN included).
            Ok(Jitter::Uniform(number(
                u,
                t,
                "u",
                "expected a number in [0, 1)",
            )?))
        }
        (None, Some(s), None) => Ok(Jitter::Seed(seed_value(s)?)),
        (None, None, Some(k)) => Ok(Jitter::Key(string(k, "key")?)),
        (None, None, None) => Err(arg(
            "jitter",
            format!("{expected}, found an object with none of u, seed, key"),
        )),
        _ => Err(arg(
            "jitter",
            format!("{expected}, found an object with more than one of u, seed, key"),
        )),
    }
}

/// `Some(v)` unless `v` is `undefined`.
fn present(v: Unknown<'_>) -> Res<Option<Unknown<'_>>> {
    Ok((v.get_type()? != ValueType::Undefined).then_some(v))
}

/// A seed: a number in `0 ..= 2^53 − 1` or a bigint in `0 .. 2^64`.
fn seed_value(v: Unknown<'_>) -> Res<u64> {
    let t = v.get_type()?;
    if t == ValueType::BigInt {
        let text = v.coerce_to_string()?.into_utf8()?.into_owned()?;
        return text.parse::<u64>().map_err(|_| {
            arg(
                "seed",
                format!("expected a bigint between 0 and 2^64 - 1, found {text}n"),
            )
        });
    }
    let x = number(
        v,
        t,
        "seed",
        "expected an integer between 0 and 9007199254740991, or a bigint below 2^64",
    )?;
    uint_from_f64(x, "seed")
}

/// A JS value as JSON, for documents (policies, state, details): objects,
/// arrays, strings, finite numbers, booleans, null; `undefined` properties
/// are left out (as `JSON.stringify` does). A value with no JSON form is a
/// fault of `doc` at `path` (see [`Document`]).
pub fn to_json(v: Unknown<'_>, path: &str, doc: Document) -> Res<Value> {
    to_json_at(v, path, 0, doc)
}

fn to_json_at(v: Unknown<'_>, path: &str, depth: usize, doc: Document) -> Res<Value> {
    let fault = |message: String| Fail::Core(doc.fault(path, message));
    if depth > MAX_DEPTH {
        return Err(doc.too_deep(path).into());
    }
    let t = v.get_type()?;
    Ok(match t {
        ValueType::Null => Value::Null,
        ValueType::Boolean => Value::Bool(v.coerce_to_bool()?),
        ValueType::String => Value::String(doc_string(v, path, doc)?),
        ValueType::Number => {
            let x = v.coerce_to_number()?.get_double()?;
            Value::Number(
                json_number(x).ok_or_else(|| {
                    fault(format!("expected a finite number, found {}", show_f64(x)))
                })?,
            )
        }
        ValueType::BigInt => {
            let text = v.coerce_to_string()?.into_utf8()?.into_owned()?;
            let n = text
                .parse::<u64>()
                .map(Number::from)
                .or_else(|_| text.parse::<i64>().map(Number::from));
            Value::Number(n.map_err(|_| {
                fault(format!(
                    "expected a number, found the bigint {text}n (beyond 64 bits)"
                ))
            })?)
        }
        ValueType::Object if v.is_array()? => {
            let arr = v.coerce_to_object()?;
            let len = arr.get_array_length()?;
            let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            for i in 0..len {
                let item: Unknown<'_> = arr.get_element(i)?;
                let p = format!("{path}[{i}]");
                if item.get_type()? == ValueType::Undefined {
                    out.push(Value::Null); // as JSON.stringify does in arrays
                } else {
                    out.push(to_json_at(item, &p, depth + 1, doc)?);
                }
            }
            Value::Array(out)
        }
        ValueType::Object => {
            let obj = v.coerce_to_object()?;
            let mut map = Map::new();
            // Keys read as JS strings (not `Object::keys`, which converts to
            // UTF-8 lossily), so a lone surrogate in a key is a fault too.
            let names = obj.get_property_names()?;
            for i in 0..names.get_array_length()? {
                let key = doc_string(names.get_element::<Unknown<'_>>(i)?, path, doc)?;
                let item: Unknown<'_> = obj.get_named_property(&key)?;
                if item.get_type()? == ValueType::Undefined {
                    continue;
                }
                let p = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                let value = to_json_at(item, &p, depth + 1, doc)?;
                map.insert(key, value);
            }
            Value::Object(map)
        }
        other => {
            return Err(fault(format!(
                "expected a JSON value, found {}",
                type_name(other)
            )));
        }
    })
}

/// A finite JS number as a JSON number: integers as integers (so `3` is
/// `3`, not `3.0`), the rest as floats; `None` for NaN and infinities.
fn json_number(x: f64) -> Option<Number> {
    #[allow(clippy::cast_precision_loss)]
    let max = MAX_MS as f64;
    if x.is_finite() && x.fract() == 0.0 && x.abs() <= max {
        #[allow(clippy::cast_possible_truncation)]
        return Some(Number::from(x as i64));
    }
    Number::from_f64(x)
}

/// Keys in the order the documents define them (§2.1 policy fields, then
/// the §10 state fields); other keys follow in name order.
const KEY_ORDER: &[&str] = &[
    "max_attempts",
    "initial_interval",
    "backoff_coefficient",
    "max_interval",
    "jitter",
    "non_retryable_errors",
    "on_exhaustion",
    "backoff_strategy",
    "attempt",
    "errors",
    "type",
    "message",
    "code",
    "timestamp",
    "details",
    "next_retry_at",
    "terminal",
];

/// A JSON value as a plain JS value. Objects at `ordered_depth` levels and
/// above keep the documents' field order ([`KEY_ORDER`]).
pub fn from_json<'e>(env: &'e Env, v: &Value, ordered_depth: usize) -> napi::Result<Unknown<'e>> {
    Ok(match v {
        Value::Null => Null.into_unknown(env)?,
        Value::Bool(b) => (*b).into_unknown(env)?,
        Value::Number(n) => env
            .create_double(n.as_f64().unwrap_or(f64::NAN))?
            .to_unknown(),
        Value::String(s) => env.create_string(s)?.to_unknown(),
        Value::Array(items) => {
            let mut arr = env.create_array(u32::try_from(items.len()).unwrap_or(u32::MAX))?;
            for (i, item) in items.iter().enumerate() {
                // Arrays do not use up a level: `errors[i]` is ordered like
                // its parent.
                arr.set(
                    u32::try_from(i).unwrap_or(u32::MAX),
                    from_json(env, item, ordered_depth)?,
                )?;
            }
            arr.to_unknown()
        }
        Value::Object(map) => {
            let mut obj = Object::new(env)?;
            if ordered_depth > 0 {
                for key in KEY_ORDER {
                    if let Some(item) = map.get(key) {
                        obj.set(key, from_json(env, item, ordered_depth - 1)?)?;
                    }
                }
            }
            for (key, item) in map {
                if ordered_depth > 0 && KEY_ORDER.contains(&key.as_str()) {
                    continue;
                }
                obj.set(key, from_json(env, item, ordered_depth.saturating_sub(1))?)?;
            }
            obj.to_unknown()
        }
    })
}

/// A `u64` the core returned (always ≤ 2^53 − 1, so exact) as a JS number.
// Through `i64` when in range: a signed conversion is one instruction on
// x86-64, an unsigned one six, on every `delay`'s way out.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_wrap)]
#[inline]
pub fn num(n: u64) -> f64 {
    if n <= ojs_retry::MAX_MS {
        n as i64 as f64
    } else {
        n as f64
    }
}
