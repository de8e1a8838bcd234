//! Python bindings for the `ojs-retry` engine (PyPI `ojs-retry`,
//! `import ojs_retry`): pyo3 classes wrapping the core's types, pyo3's own
//! argument parsing, pythonize for mappings in and out. Arguments are
//! converted, the core is called, and its errors become
//! `ojs_retry.PolicyError` in one function (`errors::to_py`).
#![forbid(unsafe_code)]

mod args;
mod errors;
mod policy;
mod read;
mod state;
mod transaction;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::errors::{CoreResult, PolicyError};

/// The patterns argument of `matches` / `first_match`: a list or tuple of
/// strings (a lone `str` is refused rather than split into characters),
/// counted before any is read.
fn patterns<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
    let count = |n: usize| ojs_retry::limits::check_argument_len("patterns", n).py(obj.py());
    let items: Vec<Bound<'py, PyAny>> = if let Ok(l) = obj.cast::<PyList>() {
        count(l.len())?;
        l.iter().collect()
    } else if let Ok(t) = obj.cast::<PyTuple>() {
        count(t.len())?;
        t.iter().collect()
    } else {
        let found = args::describe(obj)?;
        return Err(errors::bad_argument(
            "patterns",
            format!("expected a list of strings, found {found}"),
        ))
        .py(obj.py());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, p)| args::short_str(p, &format!("patterns[{i}]")))
        .collect()
}

/// The first pattern that matches, the arguments borrowed, not copied (the
/// core holds them to the limits before comparing any).
fn first_of(
    error_type: &Bound<'_, PyAny>,
    patterns: &Bound<'_, PyAny>,
) -> PyResult<Option<String>> {
    let py = error_type.py();
    let t = args::short_str(error_type, "error_type")?;
    let t = args::borrow_str(&t, "error_type")?;
    let list = self::patterns(patterns)?;
    let strs = list
        .iter()
        .enumerate()
        .map(|(i, p)| args::borrow_str(p, &format!("patterns[{i}]")))
        .collect::<PyResult<Vec<&str>>>()?;
    ojs_retry::matching::try_first_match(t, &strs)
        .map(|m| m.map(str::to_owned))
        .py(py)
}

/// Whether ``error_type`` matches any pattern (§6.2: exact, or ``prefix.*``).
#[pyfunction]
fn matches(error_type: &Bound<'_, PyAny>, patterns: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(first_of(error_type, patterns)?.is_some())
}

/// The first pattern ``error_type`` matches, or ``None``.
#[pyfunction]
fn first_match(
    error_type: &Bound<'_, PyAny>,
    patterns: &Bound<'_, PyAny>,
) -> PyResult<Option<String>> {
    first_of(error_type, patterns)
}

/// An ISO 8601 duration (``"PT1.5S"``) in milliseconds.
#[pyfunction]
fn parse_duration(text: &Bound<'_, PyAny>) -> PyResult<u64> {
    let t = args::text(text, "duration")?;
    ojs_retry::parse_duration(&t).py(text.py())
}

/// Milliseconds as the canonical duration string.
#[pyfunction]
fn format_duration(ms: &Bound<'_, PyAny>) -> PyResult<String> {
    let n = args::uint(ms, "duration")?;
    ojs_retry::format_duration(n).py(ms.py())
}

/// An RFC 3339 timestamp in epoch milliseconds.
#[pyfunction]
fn parse_timestamp(text: &Bound<'_, PyAny>) -> PyResult<u64> {
    let t = args::text(text, "timestamp")?;
    ojs_retry::parse_timestamp(&t).py(text.py())
}

/// Epoch milliseconds as RFC 3339 UTC (``2026-02-12T10:31:05.250Z``).
#[pyfunction]
fn format_timestamp(ms: &Bound<'_, PyAny>) -> PyResult<String> {
    let n = args::uint(ms, "timestamp")?;
    ojs_retry::format_timestamp(n).py(ms.py())
}

/// The 53-bit sample ``k`` (``u = k / 2**53``) a jitter source gives for a
/// retry. None of ``u`` / ``seed`` / ``key`` draws from OS entropy.
#[pyfunction]
#[pyo3(signature = (retry_number, *, u=None, seed=None, key=None))]
fn jitter_sample(
    retry_number: &Bound<'_, PyAny>,
    u: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    key: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let n = args::uint(retry_number, "retry_number")?;
    let j = args::jitter_or_entropy(u, seed, key)?;
    j.source()
        .sample(n)
        .map(ojs_retry::Sample::bits)
        .py(retry_number.py())
}

/// Reseeds this process's entropy generator: `os.register_at_fork` calls
/// it in a forked child, whose copy would otherwise repeat the parent's
/// next samples (RQ forks a work horse per job).
#[pyfunction]
fn _after_fork() {
    ojs_retry::reseed_after_fork();
}

/// The native module; `ojs_retry/__init__.py` re-exports it.
#[pymodule]
fn _ojs_retry(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // Absent on Windows, which has no fork.
    if let Ok(register) = py.import("os")?.getattr("register_at_fork") {
        let kwargs = PyDict::new(py);
        kwargs.set_item("after_in_child", wrap_pyfunction!(_after_fork, m)?)?;
        register.call((), Some(&kwargs))?;
    }
    m.add_class::<policy::PyRetryPolicy>()?;
    m.add_class::<policy::PyDecision>()?;
    m.add_class::<policy::PyScheduleRow>()?;
    m.add_class::<state::PyRetryState>()?;
    m.add_class::<state::PyReservation>()?;
    m.add_class::<transaction::PyOutcome>()?;
    m.add_function(wrap_pyfunction!(transaction::run_transaction, m)?)?;
    let err_type = py.get_type::<PolicyError>();
    // Class-level defaults, so the attributes exist on the class too.
    err_type.setattr("code", "")?;
    err_type.setattr("field", py.None())?;
    err_type.setattr("path", py.None())?;
    err_type.setattr("faults", PyList::empty(py))?;
    m.add("PolicyError", err_type)?;
    let codes: Vec<&str> = errors::ERROR_CODES.iter().map(|c| c.as_str()).collect();
    m.add("ERROR_CODES", PyTuple::new(py, codes)?)?;
    m.add("MAX_MS", ojs_retry::MAX_MS)?;
    m.add(
        "PRESET_SYSTEMS",
        PyTuple::new(py, ojs_retry::PRESET_SYSTEMS)?,
    )?;
    m.add("MAX_INSTANT_MS", ojs_retry::MAX_INSTANT_MS)?;
    m.add("MAX_SCHEDULE_ROWS", ojs_retry::MAX_SCHEDULE_ROWS)?;
    m.add_function(wrap_pyfunction!(matches, m)?)?;
    m.add_function(wrap_pyfunction!(first_match, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(format_duration, m)?)?;
    m.add_function(wrap_pyfunction!(parse_timestamp, m)?)?;
    m.add_function(wrap_pyfunction!(format_timestamp, m)?)?;
    m.add_function(wrap_pyfunction!(jitter_sample, m)?)?;
    Ok(())
}
