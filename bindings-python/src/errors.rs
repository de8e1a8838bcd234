//! `PolicyError`: the one exception every failure becomes, carrying the
//! core's stable `code`, the first fault's `field` and every fault.

use ojs_retry::{Error, ErrorCode};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

pyo3::create_exception!(
    ojs_retry,
    PolicyError,
    PyValueError,
    "Every error of the engine: a bad policy, a bad argument, a malformed state.\n\n\
     Attributes: ``code`` (e.g. ``\"validation.retry_policy_invalid\"``), ``field``\n\
     (the first fault's field, ``\"\"`` for the document itself) and ``faults``\n\
     (every fault as a ``(field, message)`` tuple, first one first)."
);

/// The stable code of a boundary (argument) error.
pub(crate) const INVALID_ARGUMENT: &str = "validation.invalid_argument";
/// The stable code of a policy document error.
pub(crate) const POLICY_INVALID: &str = "validation.retry_policy_invalid";
/// The stable code of a state document error.
pub(crate) const STATE_INVALID: &str = "validation.state_invalid";

/// Every code the engine can raise, in a stable order.
pub(crate) const ERROR_CODES: [ErrorCode; 4] = [
    ErrorCode::RetryPolicyInvalid,
    ErrorCode::DurationInvalid,
    ErrorCode::InvalidArgument,
    ErrorCode::StateInvalid,
];

/// Builds a `PolicyError` with `code` and `faults` (never empty by
/// construction at every call site; an empty list gets a placeholder).
pub(crate) fn raise(py: Python<'_>, code: &str, faults: &[(String, String)]) -> PyErr {
    let message = ojs_retry::error::render_message(
        code,
        faults.iter().map(|(f, m)| (f.as_str(), m.as_str())),
    );
    let err = PolicyError::new_err(message);
    if let Err(e) = decorate(py, &err, code, faults) {
        return e;
    }
    err
}

fn decorate(py: Python<'_>, err: &PyErr, code: &str, faults: &[(String, String)]) -> PyResult<()> {
    let value = err.value(py);
    let first = faults.first().map_or("", |(f, _)| f.as_str());
    value.setattr("code", code)?;
    value.setattr("field", first)?;
    let list = PyList::empty(py);
    for (field, msg) in faults {
        list.append(PyTuple::new(py, [field.as_str(), msg.as_str()])?)?;
    }
    value.setattr("faults", list)?;
    Ok(())
}

/// A core error as a `PolicyError`.
pub(crate) fn from_core(py: Python<'_>, e: &Error) -> PyErr {
    let faults: Vec<(String, String)> = e
        .iter_faults()
        .map(|f| (f.field.clone(), f.message.clone()))
        .collect();
    raise(py, e.code().as_str(), &faults)
}

/// A `validation.invalid_argument` error on one field.
pub(crate) fn arg(py: Python<'_>, field: &str, message: impl Into<String>) -> PyErr {
    raise(py, INVALID_ARGUMENT, &[(field.to_owned(), message.into())])
}

/// Maps a core result into a Python result.
pub(crate) trait CoreResult<T> {
    /// Converts the core error into a `PolicyError`.
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> CoreResult<T> for Result<T, Error> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| from_core(py, &e))
    }
}
