//! Python bindings for the `ojs-retry` engine (PyPI `ojs-retry`,
//! `import ojs_retry`). Thin: arguments are converted, the core is called,
//! its errors become `ojs_retry.PolicyError`. Every class is immutable or
//! guards its state with a mutex, so instances may be shared between
//! threads (including on free-threaded CPython).

mod convert;
mod errors;
// The one module with `unsafe`: CPython's vectorcall protocol (FFI).
#[allow(unsafe_code)]
mod fastcall;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, MutexGuard, OnceLock};

use ojs_retry as core_;
use ojs_retry::{Failure, HandlerCode, Heartbeat, JobError, Layer};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString, PyTuple};

use ojs_retry::args::Jitter;

use crate::convert::{Doc, JitterArgs};
use crate::errors::{CoreResult, PolicyError, arg};

/// Locks a mutex; the core never panics while holding one, and a poisoned
/// guard still holds a consistent value (every mutation is one assignment).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn hash_str(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// `repr()` of a Rust string, as Python writes it.
fn py_repr(py: Python<'_>, s: &str) -> PyResult<String> {
    Ok(PyString::new(py, s).repr()?.to_string())
}

// ---------------------------------------------------------------- policy

/// An immutable, validated, effective retry policy (spec §2).
///
/// ``RetryPolicy(policy=None, /, **fields)``: ``policy`` is a JSON text, a
/// mapping or ``None``; keyword arguments are document fields layered over
/// it (defaults ← policy ← fields), then the result is validated.
#[pyclass(frozen, module = "ojs_retry", name = "RetryPolicy")]
struct PyRetryPolicy {
    inner: core_::RetryPolicy,
    /// The canonical JSON, made on first use (equality, hashing, pickling,
    /// `to_json`): building a policy does not pay for serialising it.
    json: OnceLock<String>,
}

fn layer(obj: &Bound<'_, PyAny>) -> PyResult<Layer<'static>> {
    if let Ok(s) = obj.cast::<PyString>() {
        let text = s.to_str().map_err(|_| {
            errors::raise(
                obj.py(),
                errors::POLICY_INVALID,
                &[(
                    String::new(),
                    "expected a valid Unicode string, found one with a lone surrogate".to_owned(),
                )],
            )
        })?;
        return Ok(Layer::Json(text.to_owned().into()));
    }
    // JSON text as bytes: the core checks that it is UTF-8.
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Layer::JsonBytes(b.as_bytes().to_vec().into()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Layer::JsonBytes(b.to_vec().into()));
    }
    convert::to_value(obj, "", Doc::Policy).map(Layer::Value)
}

fn build(py: Python<'_>, layers: Vec<Layer<'_>>) -> PyResult<PyRetryPolicy> {
    // The core merges every mix of texts, bytes and values.
    let result = core_::RetryPolicy::from_layers(layers);
    let inner = result.py(py)?;
    Ok(PyRetryPolicy::wrap(inner))
}

impl PyRetryPolicy {
    fn wrap(inner: core_::RetryPolicy) -> Self {
        Self {
            inner,
            json: OnceLock::new(),
        }
    }

    fn json(&self) -> &str {
        self.json.get_or_init(|| self.inner.to_json())
    }
}

#[pymethods]
impl PyRetryPolicy {
    #[new]
    #[pyo3(signature = (policy=None, /, **fields))]
    fn new(
        py: Python<'_>,
        policy: Option<&Bound<'_, PyAny>>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut layers = Vec::with_capacity(2);
        if let Some(p) = policy.filter(|p| !p.is_none()) {
            layers.push(layer(p)?);
        }
        if let Some(f) = fields.filter(|f| !f.is_empty()) {
            layers.push(Layer::Value(convert::to_value(
                f.as_any(),
                "",
                Doc::Policy,
            )?));
        }
        build(py, layers)
    }

    /// Layers merged in order over the defaults (defaults ← first ← … ←
    /// last), then validated. Each layer is a JSON text or a mapping.
    #[staticmethod]
    #[pyo3(signature = (*layers))]
    fn merge(py: Python<'_>, layers: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let layers = layers
            .iter()
            .map(|l| layer(&l))
            .collect::<PyResult<Vec<_>>>()?;
        build(py, layers)
    }

    /// A policy from one JSON text.
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = text.py();
        let t = convert::text(text, "text")?;
        build(py, vec![Layer::Json(t.into())])
    }

    /// A preset: `system`'s own retry configuration (a mapping and/or
    /// keyword options, in that system's vocabulary), evaluated exactly as
    /// that system does. See docs/presets.md.
    #[staticmethod]
    #[pyo3(signature = (system, config=None, /, **options))]
    fn preset(
        py: Python<'_>,
        system: &Bound<'_, PyAny>,
        config: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let system = convert::text(system, "system")?;
        let mut value = match config.filter(|c| !c.is_none()) {
            Some(c) => convert::to_value(c, "preset", Doc::Policy)?,
            None => ojs_retry::json::Value::Object(ojs_retry::json::Map::new()),
        };
        if let Some(o) = options.filter(|o| !o.is_empty())
            && let ojs_retry::json::Value::Object(extra) =
                convert::to_value(o.as_any(), "preset", Doc::Policy)?
            && let ojs_retry::json::Value::Object(map) = &mut value
        {
            map.extend(extra);
        }
        let inner = core_::RetryPolicy::preset_value(&system, &value).py(py)?;
        Ok(Self::wrap(inner))
    }

    /// The preset's system name, or `None` for a plain OJS policy.
    #[getter]
    fn preset_system(&self) -> Option<&str> {
        self.inner.preset_system()
    }

    /// `max_attempts`: total attempts including the first (0 behaves as 1).
    #[getter]
    fn max_attempts(&self) -> u64 {
        self.inner.max_attempts()
    }
    /// `initial_interval` in milliseconds.
    #[getter]
    fn initial_interval_ms(&self) -> u64 {
        self.inner.initial_interval_ms()
    }
    /// `backoff_coefficient`.
    #[getter]
    fn backoff_coefficient(&self) -> f64 {
        self.inner.backoff_coefficient()
    }
    /// `max_interval` in milliseconds.
    #[getter]
    fn max_interval_ms(&self) -> u64 {
        self.inner.max_interval_ms()
    }
    /// `jitter`.
    #[getter]
    fn jitter(&self) -> bool {
        self.inner.jitter()
    }
    /// `non_retryable_errors`, as a tuple.
    #[getter]
    fn non_retryable_errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.non_retryable_errors())
    }
    /// `on_exhaustion`: ``"discard"`` or ``"dead_letter"``.
    #[getter]
    fn on_exhaustion(&self) -> &'static str {
        self.inner.on_exhaustion().as_str()
    }
    /// The backoff strategy (``"exponential"`` when the document names none).
    #[getter]
    fn backoff_strategy(&self) -> &'static str {
        self.inner.strategy().as_str()
    }
    /// ``max(max_attempts, 1) - 1``.
    #[getter]
    fn max_retries(&self) -> u64 {
        self.inner.max_retries()
    }

    /// The canonical effective policy as compact JSON.
    fn to_json(&self) -> &str {
        self.json()
    }

    /// The canonical effective policy as a dict (keys in canonical order).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::from_json(py, self.json())
    }

    /// The delay in ms before retry ``retry_number`` (1-based); ignores
    /// ``max_attempts``. At most one of ``u``, ``seed``, ``key``; none
    /// draws from OS entropy.
    #[pyo3(signature = (retry_number, *, u=None, seed=None, key=None))]
    fn delay(
        &self,
        retry_number: &Bound<'_, PyAny>,
        u: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        // The common calls (`delay(n, u=0.5)`, `seed=`, `key=`) do not get
        // here: `fastcall` answers them before pyo3's argument parser.
        let py = retry_number.py();
        let n = convert::uint(retry_number, "retry_number")?;
        let j = Jitter::from_args(py, u, seed, key)?;
        self.inner.delay(n, j.source()).py(py)
    }

    /// Rows for retries ``1..=count``. Without a jitter source the rows
    /// carry the bounds only (``delay_ms`` is ``None``).
    #[pyo3(signature = (count, *, u=None, seed=None, key=None))]
    fn schedule(
        &self,
        count: &Bound<'_, PyAny>,
        u: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<PyScheduleRow>> {
        let py = count.py();
        let n = convert::uint(count, "count")?;
        let j = Jitter::opt_from_args(py, u, seed, key)?;
        let rows = self
            .inner
            .schedule(n, j.as_ref().map(Jitter::source))
            .py(py)?;
        Ok(rows
            .into_iter()
            .map(|inner| PyScheduleRow { inner })
            .collect())
    }

    /// Retry, discard or dead-letter after attempt ``attempt`` (1-based)
    /// failed. ``now``: epoch ms or an aware datetime (default: the
    /// system clock).
    #[pyo3(
        signature = (attempt, *, error_type=None, code=None, timed_out=None, now=None, u=None, seed=None, key=None),
        text_signature = "(self, attempt, *, error_type=None, code=None, timed_out=False, now=None, u=None, seed=None, key=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &self,
        attempt: &Bound<'_, PyAny>,
        error_type: Option<&Bound<'_, PyAny>>,
        code: Option<&Bound<'_, PyAny>>,
        timed_out: Option<&Bound<'_, PyAny>>,
        now: Option<&Bound<'_, PyAny>>,
        u: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDecision> {
        let py = attempt.py();
        let mut failure = Failure::new(convert::uint(attempt, "attempt")?);
        failure.error_type = convert::opt_text(error_type, "error_type")?;
        failure.code = handler_code(py, code)?;
        failure.timed_out = match timed_out {
            Some(t) if !t.is_none() => convert::boolean(t, "timed_out")?,
            _ => false,
        };
        let now = convert::now(py, now)?;
        let j = Jitter::from_args(py, u, seed, key)?;
        let inner = self.inner.decide(&failure, now, j.source()).py(py)?;
        Ok(PyDecision { inner })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .is_ok_and(|o| o.get().json() == self.json())
    }

    fn __hash__(&self) -> u64 {
        hash_str(self.json())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("RetryPolicy({})", py_repr(py, self.json())?))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let args = PyTuple::new(py, [slf.get().json()])?;
        PyTuple::new(py, [slf.get_type().into_any(), args.into_any()])
    }
}

fn handler_code(py: Python<'_>, code: Option<&Bound<'_, PyAny>>) -> PyResult<Option<HandlerCode>> {
    match convert::opt_text(code, "code")? {
        Some(c) => HandlerCode::parse(&c).py(py).map(Some),
        None => Ok(None),
    }
}

// ---------------------------------------------------------------- decision

/// What to do after a failure (frozen). ``action`` is ``"retry"``,
/// ``"discard"`` or ``"dead_letter"``; ``reason`` says why.
#[pyclass(frozen, module = "ojs_retry", name = "Decision")]
struct PyDecision {
    inner: core_::Decision,
}

impl PyDecision {
    fn json(&self) -> String {
        serde_json::to_string(&self.inner).unwrap_or_default()
    }
}

#[pymethods]
impl PyDecision {
    /// ``"retry"``, ``"discard"`` or ``"dead_letter"``.
    #[getter]
    fn action(&self) -> &'static str {
        self.inner.action.as_str()
    }
    /// ``"handler_code"``, ``"non_retryable"``, ``"exhausted"`` or ``"retryable"``.
    #[getter]
    fn reason(&self) -> &'static str {
        self.inner.reason.as_str()
    }
    /// The handler's code, if it gave one.
    #[getter]
    fn handler_code(&self) -> Option<&'static str> {
        self.inner.handler_code.map(HandlerCode::as_str)
    }
    /// The non-retryable entry that matched, when ``reason`` is ``"non_retryable"``.
    #[getter]
    fn matched_pattern(&self) -> Option<String> {
        match &self.inner.reason {
            core_::Reason::NonRetryable { pattern } => Some(pattern.clone()),
            _ => None,
        }
    }
    /// The attempt that failed.
    #[getter]
    fn attempt(&self) -> u64 {
        self.inner.attempt
    }
    /// Whether the failure was a reservation timeout.
    #[getter]
    fn timed_out(&self) -> bool {
        self.inner.timed_out
    }
    /// The retry number when retrying.
    #[getter]
    fn retry_number(&self) -> Option<u64> {
        self.inner.retry_number
    }
    /// The delay in ms when retrying.
    #[getter]
    fn delay_ms(&self) -> Option<u64> {
        self.inner.delay_ms
    }
    /// When to retry, epoch ms.
    #[getter]
    fn next_retry_at(&self) -> Option<u64> {
        self.inner.next_retry_at
    }
    /// A human sentence explaining the decision.
    fn explain(&self) -> String {
        self.inner.explain()
    }
    /// The decision as a dict with the vector keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::from_json(py, &self.json())
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }
    fn __hash__(&self) -> u64 {
        hash_str(&self.json())
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let d = &self.inner;
        let opt_s = |s: Option<&str>| -> PyResult<String> {
            s.map_or_else(|| Ok("None".to_owned()), |s| py_repr(py, s))
        };
        let opt_n = |n: Option<u64>| n.map_or_else(|| "None".to_owned(), |n| n.to_string());
        Ok(format!(
            "Decision(action={}, reason={}, handler_code={}, matched_pattern={}, attempt={}, timed_out={}, retry_number={}, delay_ms={}, next_retry_at={})",
            py_repr(py, d.action.as_str())?,
            py_repr(py, d.reason.as_str())?,
            opt_s(d.handler_code.map(HandlerCode::as_str))?,
            opt_s(self.matched_pattern().as_deref())?,
            d.attempt,
            if d.timed_out { "True" } else { "False" },
            opt_n(d.retry_number),
            opt_n(d.delay_ms),
            opt_n(d.next_retry_at),
        ))
    }
}

// ---------------------------------------------------------------- schedule

/// One row of ``RetryPolicy.schedule`` (frozen).
#[pyclass(frozen, module = "ojs_retry", name = "ScheduleRow")]
struct PyScheduleRow {
    inner: core_::ScheduleRow,
}

impl PyScheduleRow {
    fn fields(&self) -> [(&'static str, Option<u64>); 8] {
        let r = &self.inner;
        [
            ("retry_number", Some(r.retry_number)),
            ("attempt", Some(r.attempt)),
            ("raw_ms", Some(r.raw_ms)),
            ("capped_ms", Some(r.capped_ms)),
            ("min_ms", Some(r.min_ms)),
            ("max_ms", Some(r.max_ms)),
            ("delay_ms", r.delay_ms),
            ("cumulative_ms", Some(r.cumulative_ms)),
        ]
    }
}

#[pymethods]
impl PyScheduleRow {
    /// The retry number (1-based).
    #[getter]
    fn retry_number(&self) -> u64 {
        self.inner.retry_number
    }
    /// The attempt this retry is (``retry_number + 1``).
    #[getter]
    fn attempt(&self) -> u64 {
        self.inner.attempt
    }
    /// The un-capped delay in ms.
    #[getter]
    fn raw_ms(&self) -> u64 {
        self.inner.raw_ms
    }
    /// The delay capped at ``max_interval``.
    #[getter]
    fn capped_ms(&self) -> u64 {
        self.inner.capped_ms
    }
    /// The smallest jittered delay.
    #[getter]
    fn min_ms(&self) -> u64 {
        self.inner.min_ms
    }
    /// The largest delay jitter can produce (inclusive, after the cap).
    #[getter]
    fn max_ms(&self) -> u64 {
        self.inner.max_ms
    }
    /// The drawn delay, ``None`` without a jitter source.
    #[getter]
    fn delay_ms(&self) -> Option<u64> {
        self.inner.delay_ms
    }
    /// The running total of delays.
    #[getter]
    fn cumulative_ms(&self) -> u64 {
        self.inner.cumulative_ms
    }
    /// The row as a dict with the vector keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.fields() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }
    fn __hash__(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.fields().hash(&mut h);
        h.finish()
    }
    fn __repr__(&self) -> String {
        let parts: Vec<String> = self
            .fields()
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k}={}",
                    v.map_or_else(|| "None".to_owned(), |n| n.to_string())
                )
            })
            .collect();
        format!("ScheduleRow({})", parts.join(", "))
    }
}

// ---------------------------------------------------------------- state

/// Per-job retry state (spec §10): attempt, bounded error history,
/// ``next_retry_at``. Mutable; a mutex makes each call atomic, so one
/// instance may be shared between threads.
#[pyclass(frozen, module = "ojs_retry", name = "RetryState")]
struct PyRetryState {
    inner: Mutex<core_::RetryState>,
}

fn history_limit(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(obj) = obj else { return Ok(None) };
    let n = convert::uint(obj, "history_limit")?;
    usize::try_from(n).map(Some).map_err(|_| {
        arg(
            obj.py(),
            "history_limit",
            format!("expected a smaller limit, found {n}"),
        )
    })
}

impl PyRetryState {
    fn json(&self) -> String {
        lock(&self.inner).to_json()
    }
}

#[pymethods]
impl PyRetryState {
    #[new]
    #[pyo3(signature = (history_limit=None), text_signature = "(history_limit=10)")]
    fn new(py: Python<'_>, history_limit: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let mut state = core_::RetryState::new();
        if let Some(limit) = self::history_limit(history_limit)? {
            state = state.with_history_limit(limit).py(py)?;
        }
        Ok(Self {
            inner: Mutex::new(state),
        })
    }

    /// A state from its §10 JSON text or dict.
    #[staticmethod]
    #[pyo3(signature = (state, history_limit=None), text_signature = "(state, history_limit=10)")]
    fn from_json(
        state: &Bound<'_, PyAny>,
        history_limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = state.py();
        let limit = self::history_limit(history_limit)?.unwrap_or(core_::state::MIN_HISTORY);
        let inner = if let Ok(s) = state.cast::<PyString>() {
            let text = s.to_str().map_err(|_| {
                errors::raise(
                    py,
                    errors::STATE_INVALID,
                    &[(
                        String::new(),
                        "expected a valid Unicode string, found one with a lone surrogate"
                            .to_owned(),
                    )],
                )
            })?;
            core_::RetryState::from_json(text, limit)
        } else {
            let v = convert::to_value(state, "", Doc::State)?;
            core_::RetryState::from_value(&v, limit)
        }
        .py(py)?;
        Ok(Self {
            inner: Mutex::new(inner),
        })
    }

    /// The attempt that runs next (1-based).
    #[getter]
    fn attempt(&self) -> u64 {
        lock(&self.inner).attempt()
    }
    /// When the next attempt is due (epoch ms), or ``None``.
    #[getter]
    fn next_retry_at(&self) -> Option<u64> {
        lock(&self.inner).next_retry_at()
    }
    /// ``"discard"`` / ``"dead_letter"`` once terminal, else ``None``.
    #[getter]
    fn terminal(&self) -> Option<&'static str> {
        lock(&self.inner).terminal().map(core_::Action::as_str)
    }
    /// The number of error records kept.
    #[getter]
    fn history_limit(&self) -> usize {
        lock(&self.inner).history_limit()
    }
    /// The error history, oldest first, as §10 dicts.
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = {
            let st = lock(&self.inner);
            let records: Vec<&core_::ErrorRecord> = st.errors().collect();
            serde_json::to_string(&records).unwrap_or_default()
        };
        convert::from_json(py, &text)
    }

    /// Records a handler failure of the current attempt and returns the
    /// decision (the state advances or becomes terminal).
    #[pyo3(signature = (policy, error_type, message, *, code=None, details=None, now=None, u=None, seed=None, key=None))]
    #[allow(clippy::too_many_arguments)]
    fn record_failure(
        &self,
        policy: &Bound<'_, PyAny>,
        error_type: &Bound<'_, PyAny>,
        message: &Bound<'_, PyAny>,
        code: Option<&Bound<'_, PyAny>>,
        details: Option<&Bound<'_, PyAny>>,
        now: Option<&Bound<'_, PyAny>>,
        u: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDecision> {
        let py = policy.py();
        let policy = policy_arg(policy)?;
        let mut error = JobError::new(
            convert::text(error_type, "error_type")?,
            convert::text(message, "message")?,
        );
        error.code = handler_code(py, code)?;
        error.details = match details {
            Some(d) if !d.is_none() => Some(convert::to_value(d, "details", Doc::Argument)?),
            _ => None,
        };
        let now = convert::now(py, now)?;
        let j = Jitter::from_args(py, u, seed, key)?;
        // The guard is dropped before any Python call (no lock is held
        // while the interpreter could switch threads).
        let result = lock(&self.inner).record_failure(&policy.get().inner, &error, now, j.source());
        let inner = result.py(py)?;
        Ok(PyDecision { inner })
    }

    /// Records that the current attempt's reservation timed out.
    #[pyo3(signature = (policy, *, now=None, u=None, seed=None, key=None))]
    fn record_timeout(
        &self,
        policy: &Bound<'_, PyAny>,
        now: Option<&Bound<'_, PyAny>>,
        u: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDecision> {
        let py = policy.py();
        let policy = policy_arg(policy)?;
        let now = convert::now(py, now)?;
        let j = Jitter::from_args(py, u, seed, key)?;
        let result = lock(&self.inner).record_timeout(&policy.get().inner, now, j.source());
        let inner = result.py(py)?;
        Ok(PyDecision { inner })
    }

    /// The §10 state document as compact JSON.
    fn to_json(&self) -> String {
        self.json()
    }
    /// The §10 state document as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::from_json(py, &self.json())
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "RetryState.from_json({})",
            py_repr(py, &self.json())?
        ))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let (json, limit) = {
            let st = lock(&slf.get().inner);
            (st.to_json(), st.history_limit())
        };
        let from_json = slf.get_type().getattr("from_json")?;
        let args = PyTuple::new(
            py,
            [
                json.into_pyobject(py)?.into_any(),
                limit.into_pyobject(py)?.into_any(),
            ],
        )?;
        PyTuple::new(py, [from_json, args.into_any()])
    }
}

fn policy_arg<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyRetryPolicy>> {
    obj.cast::<PyRetryPolicy>().map_err(|_| {
        arg(
            obj.py(),
            "policy",
            format!("expected a RetryPolicy, found {}", convert::describe(obj)),
        )
    })
}

// ---------------------------------------------------------------- reservation

/// A visibility-timeout reservation (spec §9.2, §9.3). Mutable (heartbeats
/// extend it); safe to share between threads.
#[pyclass(frozen, module = "ojs_retry", name = "Reservation")]
struct PyReservation {
    inner: Mutex<core_::Reservation>,
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
        let attempt = convert::uint(attempt, "attempt")?;
        let timeout = convert::uint(visibility_timeout_ms, "visibility_timeout_ms")?;
        let now = convert::now(py, now)?;
        let inner = core_::Reservation::new(attempt, now, timeout).py(py)?;
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
        let now = convert::now(py, now)?;
        let result = lock(&self.inner).heartbeat(now);
        let hb = result.py(py)?;
        match hb {
            Heartbeat::Extended { deadline } => PyTuple::new(
                py,
                [
                    "extended".into_pyobject(py)?.into_any(),
                    deadline.into_pyobject(py)?.into_any(),
                ],
            ),
            Heartbeat::Expired => PyTuple::new(
                py,
                [
                    "expired".into_pyobject(py)?.into_any(),
                    py.None().into_bound(py),
                ],
            ),
        }
    }
    /// Whether ``now`` reached the deadline.
    #[pyo3(signature = (now=None))]
    fn is_expired(&self, py: Python<'_>, now: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        let now = convert::now(py, now)?;
        let result = lock(&self.inner).is_expired(now);
        result.py(py)
    }
    /// ``{"attempt": n, "timed_out": True}`` once expired (the failure to
    /// pass to ``decide``), else ``None``.
    #[pyo3(signature = (now=None))]
    fn expiry<'py>(
        &self,
        py: Python<'py>,
        now: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let now = convert::now(py, now)?;
        let result = lock(&self.inner).expiry(now);
        let failure = result.py(py)?;
        failure
            .map(|f| {
                let d = PyDict::new(py);
                d.set_item("attempt", f.attempt)?;
                d.set_item("timed_out", f.timed_out)?;
                Ok(d)
            })
            .transpose()
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

// ---------------------------------------------------------------- functions

/// Whether ``error_type`` matches any pattern (§6.2: exact, or ``prefix.*``).
#[pyfunction]
fn matches(error_type: &Bound<'_, PyAny>, patterns: &Bound<'_, PyAny>) -> PyResult<bool> {
    let t = convert::text(error_type, "error_type")?;
    let p = convert::text_list(patterns, "patterns")?;
    Ok(core_::matches(&t, &p))
}

/// The first pattern ``error_type`` matches, or ``None``.
#[pyfunction]
fn first_match(
    error_type: &Bound<'_, PyAny>,
    patterns: &Bound<'_, PyAny>,
) -> PyResult<Option<String>> {
    let t = convert::text(error_type, "error_type")?;
    let p = convert::text_list(patterns, "patterns")?;
    Ok(core_::first_match(&t, &p).map(str::to_owned))
}

/// An ISO 8601 duration (``"PT1.5S"``) in milliseconds.
#[pyfunction]
fn parse_duration(text: &Bound<'_, PyAny>) -> PyResult<u64> {
    let t = convert::text(text, "duration")?;
    core_::parse_duration(&t).py(text.py())
}

/// Milliseconds as the canonical duration string.
#[pyfunction]
fn format_duration(ms: &Bound<'_, PyAny>) -> PyResult<String> {
    let n = convert::uint(ms, "duration")?;
    core_::format_duration(n).py(ms.py())
}

/// An RFC 3339 timestamp in epoch milliseconds.
#[pyfunction]
fn parse_timestamp(text: &Bound<'_, PyAny>) -> PyResult<u64> {
    let t = convert::text(text, "timestamp")?;
    core_::parse_timestamp(&t).py(text.py())
}

/// Epoch milliseconds as RFC 3339 UTC (``2026-02-12T10:31:05.250Z``).
#[pyfunction]
fn format_timestamp(ms: &Bound<'_, PyAny>) -> PyResult<String> {
    let n = convert::uint(ms, "timestamp")?;
    core_::format_timestamp(n).py(ms.py())
}

/// The 53-bit sample ``k`` (``u = k / 2**53``) a jitter source gives for a
/// retry. None of ``u``/``seed``/``key`` draws from OS entropy.
#[pyfunction]
#[pyo3(signature = (retry_number, *, u=None, seed=None, key=None))]
fn jitter_sample(
    retry_number: &Bound<'_, PyAny>,
    u: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    key: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let py = retry_number.py();
    let n = convert::uint(retry_number, "retry_number")?;
    let j = Jitter::from_args(py, u, seed, key)?;
    j.source().sample(n).map(core_::Sample::bits).py(py)
}

/// Drops this thread's entropy generator (the core's `entropy`):
/// `os.register_at_fork` calls it in a forked child, whose copy would
/// otherwise repeat the parent's next samples (RQ forks a work horse per
/// job).
#[pyfunction]
fn _after_fork() {
    core_::entropy::after_fork();
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
    m.add_class::<PyRetryPolicy>()?;
    fastcall::install(&py.get_type::<PyRetryPolicy>())?;
    m.add_class::<PyDecision>()?;
    m.add_class::<PyScheduleRow>()?;
    m.add_class::<PyRetryState>()?;
    m.add_class::<PyReservation>()?;
    let err_type = py.get_type::<PolicyError>();
    // Class-level defaults, so the attributes exist on the class too.
    err_type.setattr("code", "")?;
    err_type.setattr("field", "")?;
    err_type.setattr("faults", pyo3::types::PyList::empty(py))?;
    m.add("PolicyError", err_type)?;
    let codes: Vec<&str> = errors::ERROR_CODES.iter().map(|c| c.as_str()).collect();
    m.add("ERROR_CODES", PyTuple::new(py, codes)?)?;
    m.add("MAX_MS", core_::MAX_MS)?;
    m.add("PRESET_SYSTEMS", PyTuple::new(py, core_::PRESET_SYSTEMS)?)?;
    m.add("MAX_INSTANT_MS", core_::MAX_INSTANT_MS)?;
    m.add("MAX_SCHEDULE_ROWS", core_::MAX_SCHEDULE_ROWS)?;
    m.add_function(wrap_pyfunction!(matches, m)?)?;
    m.add_function(wrap_pyfunction!(first_match, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(format_duration, m)?)?;
    m.add_function(wrap_pyfunction!(parse_timestamp, m)?)?;
    m.add_function(wrap_pyfunction!(format_timestamp, m)?)?;
    m.add_function(wrap_pyfunction!(jitter_sample, m)?)?;
    Ok(())
}
