//! The one place where a core [`ojs_retry::Error`] becomes a JavaScript
//! `Error`, and the one constructor of argument errors the binding raises
//! itself (a JS value of the wrong type, which the core never sees).

use napi::bindgen_prelude::{Env, JsObjectValue, JsValue, Object};
use ojs_retry::{Error as CoreError, ErrorCode};

/// Turns a core result into a napi-rs result whose error throws the JS
/// error of [`js_error`].
pub(crate) trait OrThrow<T> {
    /// The value, or the JS error for the core's error.
    fn or_throw(self, env: &Env) -> napi::Result<T>;
}

impl<T> OrThrow<T> for Result<T, CoreError> {
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| js_error(env, &e))
    }
}

/// The JS error for a core error: an `Error` whose message is the core's
/// one-line message, with `code` (`"validation.retry_policy_invalid"`, ...),
/// `field` and `path` (string, or null for the whole document) and
/// `faults: [{ field, path, message }]`, first fault first. Returned as a
/// napi-rs error holding the object, which napi-rs throws as it is.
pub(crate) fn js_error(env: &Env, e: &CoreError) -> napi::Error {
    match error_object(env, e) {
        Ok(obj) => napi::Error::from(obj.to_unknown()),
        // Creating the object failed (out of memory, a pending exception):
        // napi-rs's own error still carries the message.
        Err(failed) => failed,
    }
}

fn error_object<'e>(env: &'e Env, e: &CoreError) -> napi::Result<Object<'e>> {
    let mut obj = env.create_error(napi::Error::from_reason(e.to_string()))?;
    obj.set_named_property("code", e.code().as_str())?;
    obj.set_named_property("field", e.field())?;
    obj.set_named_property("path", e.path())?;
    obj.set_named_property("faults", serde_json::to_value(e.faults())?)?;
    Ok(obj)
}

/// A `validation.invalid_argument` error at `field`, for what only the
/// binding can see: a JS value of the wrong type for an argument, a lone
/// surrogate in a string argument.
pub(crate) fn argument_error(field: &str, message: String) -> CoreError {
    CoreError::invalid_argument(field, message)
}

/// An error of a whole document (`code`, no field): JSON text holding a
/// lone surrogate, which no JSON reader can be given; a JS value napi-rs
/// cannot represent (a symbol).
pub(crate) fn document_error(code: ErrorCode, message: String) -> CoreError {
    CoreError::new(code, "", message)
}
