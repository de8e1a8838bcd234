//! The Python benchmarks' floor: a plain pyo3 class whose `#[pymethods]`
//! have the signatures of `ojs_retry.RetryPolicy`'s and do nothing. Built
//! exactly like `bindings-python` (same pyo3 version and features,
//! abi3-py310, `maturin build --release`), so that what crossing into Rust
//! costs by itself sits next to what the binding costs in the same run.
//! pyo3 parses the same arguments (positional and keyword-only, the jitter
//! keywords, the failure's fields) into Rust values, and the methods return
//! what the real ones return: an `int` (a fresh one: above CPython's small
//! int cache, as a delay in ms is) or a new frozen object.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A class whose methods have the signatures of `RetryPolicy`'s.
#[pyclass(frozen)]
struct Floor {
    base: u64,
}

#[pymethods]
impl Floor {
    /// `RetryPolicy(policy=None, /, **fields)`: takes a document, reads
    /// nothing.
    #[new]
    #[pyo3(signature = (policy=None, /, **fields))]
    fn new(policy: Option<&Bound<'_, PyAny>>, fields: Option<&Bound<'_, PyDict>>) -> Self {
        let _ = (policy, fields);
        Self { base: 3_600_000 }
    }

    /// `RetryPolicy.from_json(text)`: takes the text as `str`.
    #[staticmethod]
    fn from_json(text: &str) -> Self {
        let _ = text;
        Self { base: 3_600_000 }
    }

    /// `delay(retry_number, *, u=None, seed=None, key=None)`: returns
    /// `base + n`.
    #[pyo3(signature = (retry_number, *, u=None, seed=None, key=None))]
    fn delay(
        &self,
        retry_number: u64,
        u: Option<f64>,
        seed: Option<u64>,
        key: Option<&str>,
    ) -> u64 {
        let _ = (u, seed, key);
        self.base + retry_number
    }

    /// `decide(attempt, *, type=None, code=None, timed_out=None,
    /// message=None, details=None, now=None, u=None, seed=None, key=None)`:
    /// returns a new decision object.
    #[pyo3(signature = (attempt, *, r#type=None, code=None, timed_out=None, message=None, details=None, now=None, u=None, seed=None, key=None))]
    #[allow(clippy::too_many_arguments)] // the Python keyword signature
    fn decide(
        &self,
        attempt: u64,
        r#type: Option<&str>,
        code: Option<&str>,
        timed_out: Option<bool>,
        message: Option<&str>,
        details: Option<&Bound<'_, PyAny>>,
        now: Option<u64>,
        u: Option<f64>,
        seed: Option<u64>,
        key: Option<&str>,
    ) -> FloorDecision {
        let _ = (r#type, code, timed_out, message, details, u, seed, key);
        FloorDecision {
            attempt,
            at: now.unwrap_or(0) + self.base,
        }
    }
}

/// What `decide` returns: a frozen object, as `ojs_retry.Decision` is.
#[pyclass(frozen)]
struct FloorDecision {
    #[pyo3(get)]
    attempt: u64,
    #[pyo3(get)]
    at: u64,
}

#[pymodule]
fn ojs_retry_bench_floor(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Floor>()?;
    m.add_class::<FloorDecision>()?;
    Ok(())
}
