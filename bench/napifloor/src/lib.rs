//! No-op napi-rs calls, built exactly like the real addon (same crates,
//! profile and CLI), so that the Node benchmarks can show what crossing the
//! boundary costs by itself:
//!
//! * `noop()` — a free function, no arguments, no result;
//! * `new Floor().delay(n, u)` — a method with the shape of
//!   `RetryPolicy#delay(retryNumber, u)`: unwraps `this`, reads two numbers,
//!   returns a number;
//! * `new Floor()` — what creating (and collecting) any napi-rs class
//!   instance costs (what `new RetryPolicy(text)` paid before policies
//!   became handles);
//! * `delayH(h, n, u)` — a free function with the shape of the addon's
//!   `__delayU(handle, retryNumber, u)`, which `RetryPolicy#delay(n, u)`
//!   calls since policies are JS objects holding a handle;
//! * `delayH2(h, n)` — the same without the sample: `__delayE(handle,
//!   retryNumber)`, which `RetryPolicy#delay(n)` calls.
//! * `rawH(h, n, u)` and `rawH2(h, n)` — the same two no-ops registered
//!   with Node-API directly, as the addon registers `__delayU`, `__delayS`
//!   and `__delayE` (`bindings-node/src/raw.rs`): what the boundary costs
//!   without napi-rs's generated callback.

use napi::bindgen_prelude::{Env, Object};
use napi_derive::napi;

/// Does nothing.
#[napi]
pub fn noop() {}

/// Returns `n` (napi-rs reads all three arguments). Not `h + n`: a result
/// above 2^31 costs V8 a heap number, which a delay in ms does not.
#[napi(js_name = "delayH")]
pub fn delay_h(h: f64, n: f64, u: f64) -> f64 {
    let _ = (h, u);
    n
}

/// Returns `n`: the shape of the addon's `delay(n)` export (no jitter
/// source, `__delayE(h, n)`).
#[napi(js_name = "delayH2")]
pub fn delay_h2(h: f64, n: f64) -> f64 {
    let _ = h;
    n
}

/// A class whose method has the shape of `RetryPolicy#delay`.
#[napi]
pub struct Floor {
    base: f64,
}

#[napi]
impl Floor {
    /// A floor object.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self { base: 0.0 }
    }

    /// Returns `base + n` (reads both arguments, touches `this`).
    #[napi]
    pub fn delay(&self, n: f64, u: f64) -> f64 {
        let _ = u;
        self.base + n
    }
}

// The addon's own file: the floor reads its arguments and answers exactly
// as the addon's fast calls do. (It has no batch call: `with_f64s` goes
// unused here.)
#[allow(dead_code)]
#[path = "../../../bindings-node/src/napi_raw.rs"]
mod napi_raw;

use napi_raw::{number, numbers};

#[allow(unsafe_code)]
unsafe extern "C" fn raw_h(
    env: napi::sys::napi_env,
    info: napi::sys::napi_callback_info,
) -> napi::sys::napi_value {
    let [_, n, _] = numbers(env, info);
    number(env, n)
}

#[allow(unsafe_code)]
unsafe extern "C" fn raw_h2(
    env: napi::sys::napi_env,
    info: napi::sys::napi_callback_info,
) -> napi::sys::napi_value {
    let [_, n] = numbers(env, info);
    number(env, n)
}

/// Registers `rawH` and `rawH2`.
///
/// # Errors
///
/// Node-API's, if a function cannot be added.
#[napi(module_exports)]
pub fn register(exports: Object<'_>, env: Env) -> napi::Result<()> {
    napi_raw::register(&env, &exports, &[(c"rawH", raw_h), (c"rawH2", raw_h2)])
}
