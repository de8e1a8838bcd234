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

use napi::bindgen_prelude::{Env, JsValue, Object};
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

/// The call's first `N` arguments as numbers (`NaN` for any other value),
/// read as `bindings-node/src/raw.rs` reads them.
#[allow(unsafe_code)]
fn numbers<const N: usize>(
    env: napi::sys::napi_env,
    info: napi::sys::napi_callback_info,
) -> [f64; N] {
    use napi::sys;
    let mut argc = N;
    let mut argv = [core::ptr::null_mut(); N];
    let mut out = [f64::NAN; N];
    // SAFETY: as in bindings-node/src/raw.rs: the running call's `env` and
    // `info`, and room for `argc` values.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &raw mut argc,
            argv.as_mut_ptr(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok {
        return out;
    }
    for (x, v) in out.iter_mut().zip(argv) {
        let mut read = f64::NAN;
        // SAFETY: `v` is one of this call's arguments.
        if unsafe { sys::napi_get_value_double(env, v, &raw mut read) } == sys::Status::napi_ok {
            *x = read;
        }
    }
    out
}

/// `x` as a JS number.
#[allow(unsafe_code)]
fn number(env: napi::sys::napi_env, x: f64) -> napi::sys::napi_value {
    let mut out = core::ptr::null_mut();
    // SAFETY: the running call's `env`; Node writes one value to `out`.
    let _ = unsafe { napi::sys::napi_create_double(env, x, &raw mut out) };
    out
}

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
#[allow(unsafe_code)]
#[napi(module_exports)]
pub fn register(exports: Object<'_>, env: Env) -> napi::Result<()> {
    type Callback = unsafe extern "C" fn(
        napi::sys::napi_env,
        napi::sys::napi_callback_info,
    ) -> napi::sys::napi_value;
    let exports_: [(&core::ffi::CStr, Callback); 2] = [(c"rawH", raw_h), (c"rawH2", raw_h2)];
    for (name, callback) in exports_ {
        let mut f = core::ptr::null_mut();
        // SAFETY: the module's `env` and `exports` while it loads; `name`
        // is NUL-terminated (length -1: Node reads up to the NUL).
        let created = unsafe {
            napi::sys::napi_create_function(
                env.raw(),
                name.as_ptr(),
                -1,
                Some(callback),
                core::ptr::null_mut(),
                &raw mut f,
            )
        };
        // SAFETY: as above; `f` is the function just made.
        let set = unsafe {
            napi::sys::napi_set_named_property(env.raw(), exports.raw(), name.as_ptr(), f)
        };
        if created != napi::sys::Status::napi_ok || set != napi::sys::Status::napi_ok {
            return Err(napi::Error::from_reason(
                "registering the raw no-ops failed",
            ));
        }
    }
    Ok(())
}
