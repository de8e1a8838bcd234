//! Functions registered with Node-API directly, without napi-rs's
//! generated callback: reading numeric arguments, returning a number, and
//! adding the functions to the module's exports. Used by [`crate::raw`]
//! (the hot `delay` calls) and, as the same file, by the benchmarks'
//! boundary floor (`bench/napifloor`), so that the floor crosses the
//! boundary exactly as the addon does.

use core::ffi::CStr;
use core::ptr;

use napi::bindgen_prelude::{Env, JsValue, Object};
use napi::sys;
use napi::{Error, Result, Status};

/// A Node-API function callback.
pub type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// The call's first `N` arguments (`undefined` for missing ones, as
/// Node-API fills them); `None` if Node cannot give them.
#[allow(unsafe_code)]
fn args<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Option<[sys::napi_value; N]> {
    let mut argc = N;
    let mut argv = [ptr::null_mut(); N];
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
    (status == sys::Status::napi_ok).then_some(argv)
}

/// The call's first `N` arguments as numbers: `NaN` for any argument that
/// is not a number or is missing (Node-API then gives `undefined`). No
/// coercion: `valueOf` is never called.
#[allow(unsafe_code)]
pub fn numbers<const N: usize>(env: sys::napi_env, info: sys::napi_callback_info) -> [f64; N] {
    let mut out = [f64::NAN; N];
    let Some(argv) = args::<N>(env, info) else {
        return out;
    };
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

/// Runs `f` on the call's first argument, a `Uint8Array` over whole,
/// aligned `f64`s (the bytes of a `Float64Array`), as those `f64`s; `None`
/// for anything else, without calling `f`. `f` must not call into JS.
#[allow(unsafe_code)]
pub fn with_f64s<T>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    f: impl FnOnce(&mut [f64]) -> T,
) -> Option<T> {
    let [arg] = args::<1>(env, info)?;
    let mut kind = sys::TypedarrayType::int8_array;
    let mut len = 0;
    let mut data = ptr::null_mut();
    // SAFETY: `arg` is the call's argument; for anything but a typed array
    // Node returns `napi_invalid_arg` and writes nothing. The array buffer
    // and its offset are not wanted (null: Node skips them).
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env,
            arg,
            &raw mut kind,
            &raw mut len,
            &raw mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    let data = data.cast::<f64>();
    if status != sys::Status::napi_ok
        || kind != sys::TypedarrayType::uint8_array
        || len % size_of::<f64>() != 0
        || !data.is_aligned()
    {
        return None;
    }
    if len == 0 {
        return Some(f(&mut []));
    }
    // SAFETY: a `Uint8Array` of `len` bytes starts at `data`, which is
    // non-null (a non-empty array), aligned for `f64` and holds `len / 8`
    // of them, each a valid `f64` (every bit pattern is). It is an
    // argument of the running call, so its buffer stays alive and in place
    // until the call returns, and no JS runs before then (`f` must not
    // call into JS), so nothing detaches or resizes it; no other Rust
    // reference to it exists. (As with napi-rs's `&mut [u8]` argument, a
    // `SharedArrayBuffer` could be written by another thread meanwhile;
    // the loader passes its own private buffer.)
    let f64s = unsafe { core::slice::from_raw_parts_mut(data, len / size_of::<f64>()) };
    Some(f(f64s))
}

/// `x` as a JS number; a null value (`undefined` in JS) if Node cannot
/// make one.
#[allow(unsafe_code)]
pub fn number(env: sys::napi_env, x: f64) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: `env` is the running call's; Node writes one value to `out`.
    let _ = unsafe { sys::napi_create_double(env, x, &raw mut out) };
    out
}

/// Adds `functions` to the module's `exports` under their names.
///
/// # Errors
///
/// Node-API's, naming the function it could not add.
#[allow(unsafe_code)]
pub fn register(env: &Env, exports: &Object<'_>, functions: &[(&CStr, Callback)]) -> Result<()> {
    for &(name, callback) in functions {
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
