//! No-op pyo3 calls, built exactly like `bindings-python` (same pyo3
//! version and features, abi3-py310, maturin `--release`), so that the
//! Python benchmarks can show what crossing into Rust costs by itself:
//!
//! * `noop()` — a module function, no arguments, returns `None`;
//! * `Floor().delay(n, *, u=None)` — a method with the signature of
//!   `RetryPolicy.delay(retry_number, *, u=None, seed=None, key=None)`
//!   (reads an int and a float, returns a freshly allocated int, as a
//!   delay in ms is).

use pyo3::prelude::*;

/// A class whose method has the shape of `RetryPolicy.delay`.
#[pyclass(frozen)]
struct Floor {
    base: u64,
}

#[pymethods]
impl Floor {
    #[new]
    fn new() -> Self {
        // Results above 256 are not CPython's cached small ints: like a
        // real delay in ms, each result is a freshly allocated int.
        Self { base: 3_600_000 }
    }

    /// Returns `base + n` (reads both arguments).
    #[pyo3(signature = (n, *, u=None, seed=None, key=None))]
    fn delay(&self, n: u64, u: Option<f64>, seed: Option<u64>, key: Option<&str>) -> u64 {
        let _ = (u, seed, key);
        self.base + n
    }
}

/// Does nothing.
#[pyfunction]
fn noop() {}

#[pymodule]
fn ojs_retry_bench_floor(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(noop, m)?)?;
    m.add_class::<Floor>()?;
    Ok(())
}
