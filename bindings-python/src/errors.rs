//! `PolicyError`, the one exception the engine's errors become, and the one
//! function that makes it from a core [`Error`].

use ojs_retry::{Error, ErrorCode};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

pyo3::create_exception!(
    ojs_retry,
    PolicyError,
    PyValueError,
    "Every error of the engine: a bad policy, a bad argument, a malformed state.\n\n\
     Attributes: ``code`` (e.g. ``\"validation.retry_policy_invalid\"``), ``field``\n\
     (the policy or argument field of the first fault, ``None`` for the whole\n\
     document), ``path`` (where inside that field, e.g.\n\
     ``\"non_retryable_errors[0]\"``; ``None`` for the whole document) and\n\
     ``faults`` (every fault as a dict ``{\"field\", \"path\", \"message\"}``)."
);

/// Every code the engine can raise, in a stable order (`ERROR_CODES`).
pub(crate) const ERROR_CODES: [ErrorCode; 4] = [
    ErrorCode::RetryPolicyInvalid,
    ErrorCode::DurationInvalid,
    ErrorCode::InvalidArgument,
    ErrorCode::StateInvalid,
];

/// A core error as a `PolicyError`: the only place one is made.
pub(crate) fn to_py(py: Python<'_>, e: &Error) -> PyErr {
    let err = PolicyError::new_err(e.to_string());
    match decorate(py, &err, e) {
        Ok(()) => err,
        // Setting an attribute failed (MemoryError): raise that instead.
        Err(other) => other,
    }
}

fn decorate(py: Python<'_>, err: &PyErr, e: &Error) -> PyResult<()> {
    let value = err.value(py);
    value.setattr("code", e.code().as_str())?;
    value.setattr("field", e.field())?;
    value.setattr("path", e.path())?;
    let faults = pythonize::pythonize(py, e.faults())?;
    value.setattr("faults", faults.cast_into::<PyList>()?)?;
    Ok(())
}

/// A Python argument the core cannot receive at all (a `str` where an
/// integer is expected, a string with a lone surrogate): the core's
/// `validation.invalid_argument` error at `field`.
pub(crate) fn bad_argument(field: &str, message: String) -> Error {
    Error::invalid_argument(field, message)
}

/// Maps a core result into a Python result.
pub(crate) trait CoreResult<T> {
    /// The core error as a `PolicyError`.
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> CoreResult<T> for Result<T, Error> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}
