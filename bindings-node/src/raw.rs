//! The hot calls of `RetryPolicy#delay` (`__delayU`, `__delayS`,
//! `__delayE`) and `RetryPolicy#delays` (`__delaysInPlace`), registered with Node-API directly ([`crate::napi_raw`])
//! rather than through `#[napi]`: each reads its arguments as numbers,
//! calls a plain Rust function in `lib.rs` and returns a number, `-1` for
//! anything invalid (the loader then calls the full `policyDelay`, which
//! reports the error).
//!
//! Why: napi-rs's generated callback builds a `CallbackInfo`, converts
//! each argument through a function returning a `Result` with a formatted
//! error, and routes the answer through `Result` too. For these calls
//! that cost ~7 ns of the ~53 ns `delay(n)` took (measured in one process
//! against the same body registered with `#[napi]`: 53.4 → 45.4 ns), for
//! the same four Node-API calls: `napi_get_cb_info`, one
//! `napi_get_value_double` per argument and `napi_create_double`.

use napi::bindgen_prelude::{Env, Object};
use napi::{Result, sys};
use napi_derive::napi;

use crate::napi_raw::{number, numbers};

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

#[allow(unsafe_code)]
unsafe extern "C" fn delays_in_place(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let d = crate::napi_raw::with_f64s(env, info, crate::delays_in_place);
    number(env, d.unwrap_or(-1.0))
}

/// Adds the four calls to the module's exports (napi-rs calls this once
/// per environment, beside its own `#[napi]` registrations).
///
/// # Errors
///
/// Node-API's, if a function cannot be added.
#[napi(module_exports)]
pub fn register(exports: Object<'_>, env: Env) -> Result<()> {
    crate::napi_raw::register(
        &env,
        &exports,
        &[
            (c"__delayU", delay_u),
            (c"__delayS", delay_s),
            (c"__delayE", delay_e),
            (c"__delaysInPlace", delays_in_place),
        ],
    )
}
