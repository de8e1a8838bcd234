//! The `Floor().delay` no-op of `bench/pyfloor`, in a class with three more
//! methods built the same way (pyo3 abi3-py310, maturin `--release`).
//!
//! pyo3 instantiates its keyword-argument parser once per crate. With a
//! single method (`bench/pyfloor`), LLVM inlines that parser into its only
//! caller and specialises it for the one signature (~150 machine
//! instructions fewer per call under callgrind); a real binding, with many
//! methods sharing the parser, never gets that. This floor shows the cost
//! of the same call in that situation:
//!
//! * `Floor4().delay(n, *, u=None)` — as `Floor().delay`;
//! * `other1`, `other2`, `other3` — never called by the benchmark; there so
//!   that the parser has several callers.

use pyo3::prelude::*;

/// A class whose `delay` has the shape of `RetryPolicy.delay`.
#[pyclass(frozen)]
struct Floor4 {
    base: u64,
}

#[pymethods]
impl Floor4 {
    #[new]
    fn new() -> Self {
        // As in bench/pyfloor: results are not CPython's cached small ints.
        Self { base: 3_600_000 }
    }

    /// Returns `base + n` (reads both arguments).
    #[pyo3(signature = (n, *, u=None, seed=None, key=None))]
    fn delay(&self, n: u64, u: Option<f64>, seed: Option<u64>, key: Option<&str>) -> u64 {
        let _ = (u, seed, key);
        self.base + n
    }

    /// Returns `base * n`.
    #[pyo3(signature = (n, *, u=None, seed=None, key=None))]
    fn other1(&self, n: u64, u: Option<f64>, seed: Option<u64>, key: Option<&str>) -> u64 {
        let _ = (u, seed, key);
        self.base.wrapping_mul(n)
    }

    /// Returns `base - n` (wrapping).
    #[pyo3(signature = (n, *, a=None, b=None))]
    fn other2(&self, n: u64, a: Option<f64>, b: Option<u64>) -> u64 {
        let _ = (a, b);
        self.base.wrapping_sub(n)
    }

    /// Returns `base ^ n ^ m`.
    #[pyo3(signature = (n, m, *, a=None, b=None, c=None))]
    fn other3(&self, n: u64, m: u64, a: Option<f64>, b: Option<u64>, c: Option<u64>) -> u64 {
        let _ = (a, b, c);
        self.base ^ n ^ m
    }
}

#[pymodule]
fn ojs_retry_bench_floor4(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Floor4>()?;
    Ok(())
}
