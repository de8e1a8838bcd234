//! No-op napi-rs calls, built exactly like the real addon (same crates,
//! profile and CLI), so that the Node benchmarks can show what crossing the
//! boundary costs by itself:
//!
//! * `noop()` — a free function, no arguments, no result;
//! * `new Floor().delay(n, u)` — a method with the shape of
//!   `RetryPolicy#delay(retryNumber, u)`: unwraps `this`, reads two numbers,
//!   returns a number;
//! * `new Floor()` — what creating (and collecting) any napi-rs class
//!   instance costs, the floor under `new RetryPolicy(text)`.

use napi_derive::napi;

/// Does nothing.
#[napi]
pub fn noop() {}

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
