//! `RetryState` and `Reservation`: the two mutable classes. Each guards its
//! core value with a mutex, so one instance may be shared between threads
//! (also on free-threaded CPython); no Python code runs while it is held.

use std::sync::{Mutex, MutexGuard};

use ojs_retry::{ErrorCode, Heartbeat};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::args::{self, given};
use crate::errors::CoreResult;
use crate::policy::{FailureArgs, PyDecision, PyRetryPolicy, failure, py_repr};

/// Locks a mutex; the core never panics while one is held, and a poisoned
/// guard still holds a consistent value (every mutation is one assignment).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The history limit argument (`None`: the default, 10).
fn history_limit(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(obj) = given(obj) else {
        return Ok(None);
    };
    let n = args::uint(obj, "history_limit")?;
    // Within 2^53 − 1: fits a 64-bit usize; a 32-bit one saturates, and
    // the core caps the history by what it keeps anyway.
    Ok(Some(usize::try_from(n).unwrap_or(usize::MAX)))
}

/// Per-job retry state (spec §10): the attempt that last ran, the bounded
/// error history, ``next_retry_at``. Each call is atomic across threads.
#[pyclass(frozen, module = "ojs_retry", name = "RetryState")]
pub(crate) struct PyRetryState {
    inner: Mutex<ojs_retry::RetryState>,
}

impl PyRetryState {
    pub(crate) fn wrap(inner: ojs_retry::RetryState) -> Self {
        Self {
            inner: Mutex::new(inner),
        }
    }
}

#[pymethods]
impl PyRetryState {
    #[new]
    #[pyo3(signature = (history_limit=None), text_signature = "(history_limit=10)")]
    fn new(py: Python<'_>, history_limit: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let state = ojs_retry::RetryState::new();
        let state = match self::history_limit(history_limit)? {
            Some(limit) => state.with_history_limit(limit).py(py)?,
            None => state,
        };
        Ok(Self::wrap(state))
    }

    /// A state from its §10 JSON text or dict.
    #[staticmethod]
    #[pyo3(signature = (state, history_limit=None), text_signature = "(state, history_limit=10)")]
    fn from_json(
        state: &Bound<'_, PyAny>,
        history_limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = state.py();
        let limit = self::history_limit(history_limit)?
            .unwrap_or(ojs_retry::RetryState::new().history_limit());
        let inner = if state.is_instance_of::<PyString>() {
            let text = args::text(state, "state")?;
            ojs_retry::RetryState::from_json(&text, limit).py(py)?
        } else {
            args::read(state, ErrorCode::StateInvalid, |v| {
                ojs_retry::RetryState::from_value(v, limit)
            })?
        };
        Ok(Self::wrap(inner))
    }

    /// The attempt that last ran (0 before any; after three failures with a
    /// retry pending it is 3).
    #[getter]
    fn attempt(&self) -> u64 {
        lock(&self.inner).attempt()
    }
    /// The number of the attempt that runs next (``attempt + 1``).
    #[getter]
    fn next_attempt(&self) -> u64 {
        lock(&self.inner).next_attempt()
    }
    /// When the next attempt is due (epoch ms), or ``None``.
    #[getter]
    fn next_retry_at(&self) -> Option<u64> {
        lock(&self.inner).next_retry_at()
    }
    /// ``"discard"`` / ``"dead_letter"`` once terminal, else ``None``.
    #[getter]
    fn terminal(&self) -> Option<&'static str> {
        lock(&self.inner).terminal().map(ojs_retry::Action::as_str)
    }
    /// The most error records kept.
    #[getter]
    fn history_limit(&self) -> usize {
        lock(&self.inner).history_limit()
    }
    /// The error history, oldest first: dicts with ``timestamp_ms`` (epoch ms).
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let state = lock(&self.inner);
        let records: Vec<_> = state.errors().map(ojs_retry::RecordMs).collect();
        Ok(pythonize::pythonize(py, &records)?.cast_into::<PyList>()?)
    }

    /// Records that an attempt failed — by default the next one — and
    /// returns the decision (the state advances or becomes terminal). The
    /// failure's fields are those of ``RetryPolicy.decide``.
    #[pyo3(signature = (policy, attempt=None, *, r#type=None, ancestors=None, code=None, timed_out=None, message=None, details=None, now=None, u=None, seed=None, key=None))]
    #[allow(clippy::too_many_arguments)] // the Python keyword signature
    fn record_failure(
        &self,
        policy: PyRef<'_, PyRetryPolicy>,
        attempt: Option<&Bound<'_, PyAny>>,
        r#type: Option<&Bound<'_, PyAny>>,
        ancestors: Option<&Bound<'_, PyAny>>,
        code: Option<&Bound<'_, PyAny>>,
        timed_out: Option<&Bound<'_, PyAny>>,
        message: Option<&Bound<'_, PyAny>>,
        details: Option<&Bound<'_, PyAny>>,
        now: Option<&Bound<'_, PyAny>>,
        u: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDecision> {
        let py = policy.py();
        // Every Python value is read before the lock is taken.
        let doc = FailureArgs {
            attempt,
            r#type,
            ancestors,
            code,
            timed_out,
            message,
            details,
        }
        .read()?;
        let now = args::now(py, now)?;
        let j = args::jitter_or_entropy(u, seed, key)?;
        let result = {
            let mut state = lock(&self.inner);
            // The next attempt read under the lock: concurrent callers each
            // record their own.
            let next = state.next_attempt();
            failure(&doc, Some(next))
                .and_then(|f| state.record_failure(&policy.inner, &f, now, j.source()))
        };
        Ok(PyDecision {
            inner: result.py(py)?,
        })
    }

    /// The §10 state document as compact JSON (RFC 3339 timestamps).
    pub(crate) fn to_json(&self) -> String {
        lock(&self.inner).to_json()
    }
    /// The §10 state document as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let state = lock(&self.inner).clone();
        Ok(pythonize::pythonize(py, &state)?)
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "RetryState.from_json({})",
            py_repr(py, &self.to_json())?
        ))
    }
    /// Pickles as the §10 JSON and the history limit.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let (json, limit) = {
            let st = lock(&slf.get().inner);
            (st.to_json(), st.history_limit())
        };
        let from_json = slf.get_type().getattr("from_json")?;
        let args = (json, limit).into_pyobject(py)?;
        PyTuple::new(py, [from_json, args.into_any()])
    }
}

/// A visibility-timeout reservation (spec §9.2, §9.3); heartbeats extend it.
#[pyclass(frozen, module = "ojs_retry", name = "Reservation")]
pub(crate) struct PyReservation {
    inner: Mutex<ojs_retry::Reservation>,
}

#[pymethods]
impl PyReservation {
    #[new]
    #[pyo3(signature = (attempt, visibility_timeout_ms, now=None))]
    fn new(
        attempt: &Bound<'_, PyAny>,
        visibility_timeout_ms: &Bound<'_, PyAny>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = attempt.py();
        let attempt = args::uint(attempt, "attempt")?;
        let timeout = args::uint(visibility_timeout_ms, "visibility_timeout_ms")?;
        let now = args::now(py, now)?;
        let inner = ojs_retry::Reservation::new(attempt, now, timeout).py(py)?;
        Ok(Self {
            inner: Mutex::new(inner),
        })
    }
    /// The attempt this reservation runs.
    #[getter]
    fn attempt(&self) -> u64 {
        lock(&self.inner).attempt()
    }
    /// The visibility timeout in ms.
    #[getter]
    fn visibility_timeout_ms(&self) -> u64 {
        lock(&self.inner).visibility_timeout_ms()
    }
    /// The current deadline, epoch ms.
    #[getter]
    fn deadline(&self) -> u64 {
        lock(&self.inner).deadline()
    }
    /// Extends the deadline: ``("extended", deadline)``, or
    /// ``("expired", None)`` once ``now`` reached the deadline.
    #[pyo3(signature = (now=None))]
    fn heartbeat<'py>(
        &self,
        py: Python<'py>,
        now: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let now = args::now(py, now)?;
        let result = lock(&self.inner).heartbeat(now);
        match result.py(py)? {
            Heartbeat::Extended { deadline } => ("extended", Some(deadline)).into_pyobject(py),
            Heartbeat::Expired => ("expired", None::<u64>).into_pyobject(py),
        }
    }
    /// Whether ``now`` reached the deadline.
    #[pyo3(signature = (now=None))]
    fn is_expired(&self, py: Python<'_>, now: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        let now = args::now(py, now)?;
        let result = lock(&self.inner).is_expired(now);
        result.py(py)
    }
    /// ``{"attempt": n, "timed_out": True}`` once expired — the failure's
    /// keywords for ``decide`` / ``record_failure`` — else ``None``.
    #[pyo3(signature = (now=None))]
    fn expiry<'py>(
        &self,
        py: Python<'py>,
        now: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let now = args::now(py, now)?;
        let result = lock(&self.inner).expiry(now);
        let Some(failure) = result.py(py)? else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("attempt", failure.attempt)?;
        d.set_item("timed_out", failure.timed_out)?;
        Ok(Some(d))
    }
    fn __repr__(&self) -> String {
        let r = lock(&self.inner);
        format!(
            "Reservation(attempt={}, visibility_timeout_ms={}, deadline={})",
            r.attempt(),
            r.visibility_timeout_ms(),
            r.deadline()
        )
    }
}
