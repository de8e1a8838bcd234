//! The hot calls of `RetryPolicy#delay` (`__delayU`, `__delayS`,
//! `__delayE`), registered with Node-API directly rather than through
//! `#[napi]`: each reads its arguments as numbers, calls a plain Rust
//! function in `lib.rs` and returns a number, `-1` for anything invalid
//! (the loader then calls the full `policyDelay`, which reports the error).
//!
//! Why: napi-rs's generated callback builds a `CallbackInfo`, converts
//! each argument through a function returning a `Result` with a formatted
//! error, and routes the answer through `Result` too. For these calls
//! that cost ~7 ns of the ~53 ns `delay(n)` took (measured in one process
//! against the same body registered with `#[napi]`: 53.4 → 45.4 ns), for
//! the same four Node-API calls: `napi_get_cb_info`, one
//! `napi_get_value_double` per argument and `napi_create_double`.

use core::ffi::CStr;
use core::ptr;

use napi::bindgen_prelude::{Env, JsValue, Object};
use napi::sys;
use napi::{Error, Result, Status};
use napi_derive::napi;

/// The call's first `N` arguments as numbers: `NaN` for any argument that
/// is not a number or is missing (Node-API then gives `undefined`).
#[allow(unsafe_code)]
fn numbers<const N: usize>(env: sys::napi_env, info: sys::napi_callback_info) -> [f64; N] {
    let mut argc = N;
    let mut argv = [ptr::null_mut(); N];
    let mut out = [f64::NAN; N];
    // SAFETY: Node calls the callback with a valid `env` and `info` for
    // the duration of the call. `argv` has room for `argc` values, the
    // most Node writes (it fills missing arguments with `undefined`).
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &raw mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok {
        return out;
    }
    for (x, v) in out.iter_mut().zip(argv) {
        let mut read = f64::NAN;
        // SAFETY: `v` is one of this call's arguments; on a non-number
        // Node returns `napi_number_expected` without writing `read`.
        let status = unsafe { sys::napi_get_value_double(env, v, &raw mut read) };
        if status == sys::Status::napi_ok {
            *x = read;
        }
    }
    out
}

/// `x` as a JS number; a null value (`undefined` in JS, which the loader
/// treats as invalid) if Node cannot make one.
#[allow(unsafe_code)]
fn number(env: sys::napi_env, x: f64) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is the running call's; Node writes one value to `out`.
    let _ = unsafe { sys::napi_create_double(env, x, &raw mut out) };
    out
}

#[allow(unsafe_code)]
unsafe extern "C" fn delay_u(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let [h, n, u] = numbers(env, info);
    number(env, crate::delay_u(h, n, u))
}

#[allow(unsafe_code)]
unsafe extern "C" fn delay_s(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let [h, n, seed] = numbers(env, info);
    number(env, crate::delay_s(h, n, seed))
}

#[allow(unsafe_code)]
unsafe extern "C" fn delay_e(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let [h, n] = numbers(env, info);
    number(env, crate::delay_e(h, n))
}

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// The exports, with their names.
const EXPORTS: [(&CStr, Callback); 3] = [
    (c"__delayU", delay_u),
    (c"__delayS", delay_s),
    (c"__delayE", delay_e),
];

/// Adds [`EXPORTS`] to the module's exports (napi-rs calls this once per
/// environment, beside its own `#[napi]` registrations).
#[allow(unsafe_code)]
#[napi(module_exports)]
pub fn register(exports: Object<'_>, env: Env) -> Result<()> {
    for (name, callback) in EXPORTS {
        let mut f = ptr::null_mut();
        // SAFETY: `env` and `exports` are the module's, valid while it
        // loads; `name` is NUL-terminated (length -1, `NAPI_AUTO_LENGTH`:
        // Node reads up to the NUL); the callbacks need no data.
        let status = unsafe {
            sys::napi_create_function(
                env.raw(),
                name.as_ptr(),
                -1,
                Some(callback),
                ptr::null_mut(),
                &raw mut f,
            )
        };
        check(status, name)?;
        // SAFETY: as above; `f` is the function just made.
        let status =
            unsafe { sys::napi_set_named_property(env.raw(), exports.raw(), name.as_ptr(), f) };
        check(status, name)?;
    }
    Ok(())
}

fn check(status: sys::napi_status, name: &CStr) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(
            Status::from(status),
            format!("registering {} failed", name.to_string_lossy()),
        ))
    }
}
