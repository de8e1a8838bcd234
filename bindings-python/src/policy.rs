//! `RetryPolicy`, `Decision` and `ScheduleRow`: frozen classes wrapping the
//! core's types.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use ojs_retry::{ErrorCode, Failure, HandlerCode, Layer, Reason, Value};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::args::{self, given};
use crate::errors::CoreResult;

fn hash_of(x: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    x.hash(&mut h);
    h.finish()
}

/// `repr()` of a Rust string, as Python writes it.
pub(crate) fn py_repr(py: Python<'_>, s: &str) -> PyResult<String> {
    Ok(PyString::new(py, s).repr()?.to_string())
}

/// An immutable, validated, effective retry policy (spec §2).
///
/// ``RetryPolicy(policy=None, /, **fields)``: ``policy`` is JSON text
/// (``str``, UTF-8 ``bytes``), a mapping or ``None``; keyword arguments are
/// document fields layered over it (defaults ← policy ← fields), then the
/// result is validated.
#[pyclass(frozen, module = "ojs_retry", name = "RetryPolicy")]
pub(crate) struct PyRetryPolicy {
    pub(crate) inner: ojs_retry::RetryPolicy,
    /// The canonical JSON, made on first use (equality, hashing, pickling,
    /// `to_json`): building a policy does not pay for serialising it.
    json: OnceLock<String>,
}

impl PyRetryPolicy {
    pub(crate) fn wrap(inner: ojs_retry::RetryPolicy) -> Self {
        Self {
            inner,
            json: OnceLock::new(),
        }
    }

    fn json(&self) -> &str {
        self.json.get_or_init(|| self.inner.to_json())
    }

    fn build(py: Python<'_>, layers: Vec<Layer<'_>>) -> PyResult<Self> {
        ojs_retry::RetryPolicy::from_layers(layers)
            .py(py)
            .map(Self::wrap)
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
        if let Some(p) = given(policy) {
            layers.push(args::layer(p)?);
        }
        if let Some(f) = fields.filter(|f| !f.is_empty()) {
            layers.push(args::keyword_layer(f)?);
        }
        Self::build(py, layers)
    }

    /// Layers merged in order over the defaults (defaults ← first ← … ←
    /// last), then validated. Each layer is JSON text or a mapping.
    #[staticmethod]
    #[pyo3(signature = (*layers))]
    fn merge(py: Python<'_>, layers: &Bound<'_, PyTuple>) -> PyResult<Self> {
        ojs_retry::limits::check_layers(layers.len()).py(py)?;
        Self::build(py, args::layers_within_budget(layers)?)
    }

    /// A policy from one JSON text.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        if !text.is_instance_of::<PyString>() {
            // Only text here (the constructor takes mappings): the core's
            // message for a non-string argument.
            args::text(text, "text")?;
        }
        // As the constructor reads a `str` layer, lone surrogates included.
        Self::build(py, vec![args::layer(text)?])
    }

    /// A preset: `system`'s own retry configuration (a mapping and/or
    /// keyword options, in that system's vocabulary), evaluated exactly as
    /// that system does. See docs/presets.md.
    #[staticmethod]
    #[pyo3(signature = (system, options=None, **kw))]
    fn preset(
        system: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyAny>>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let py = system.py();
        let name = args::text(system, "system")?;
        let kw = kw.filter(|k| !k.is_empty());
        // The options of both forms in one object (keywords win), each read
        // as the document {"preset": options} so that a fault has its path
        // (`preset.backoff`).
        let read = |o: &Bound<'_, PyAny>| args::keywords(&[("preset", o)]);
        let opts = match (given(options), kw) {
            (Some(o), None) => read(o)?,
            (None, Some(k)) => read(k.as_any())?,
            (None, None) => Ok(Value::Object(ojs_retry::Map::new())),
            (Some(o), Some(k)) => match (read(o)?, read(k.as_any())?) {
                (Ok(Value::Object(mut a)), Ok(Value::Object(b))) => {
                    if let (Some(Value::Object(a)), Some(Value::Object(b))) =
                        (a.get_mut("preset"), b.get("preset"))
                    {
                        a.extend(b.clone());
                    }
                    Ok(Value::Object(a))
                }
                (Ok(_), Err(fault)) | (Err(fault), _) => Err(fault),
                (Ok(a), Ok(_)) => Ok(a),
            },
        };
        let found = opts.map(|v| match v {
            Value::Object(mut m) => m.remove("preset").unwrap_or_default(),
            other => other,
        });
        match found {
            Ok(v) => ojs_retry::RetryPolicy::preset(&name, &v),
            Err(fault) => Err(ojs_retry::Error::from_fault(
                ErrorCode::RetryPolicyInvalid,
                fault,
            )),
        }
        .py(py)
        .map(Self::wrap)
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

    /// The canonical effective policy (or preset document) as compact JSON.
    fn to_json(&self) -> &str {
        self.json()
    }

    /// The canonical effective policy as a dict (keys in canonical order).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(pythonize::pythonize(py, &self.inner)?)
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
        let n = args::uint(retry_number, "retry_number")?;
        let j = args::jitter_or_entropy(u, seed, key)?;
        self.inner.delay(n, j.source()).py(retry_number.py())
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
        let n = args::uint(count, "count")?;
        let j = args::jitter(u, seed, key)?;
        let rows = self
            .inner
            .schedule(n, j.as_ref().map(ojs_retry::Jitter::source))
            .py(count.py())?;
        Ok(rows
            .into_iter()
            .map(|inner| PyScheduleRow { inner })
            .collect())
    }

    /// Retry, discard or dead-letter after attempt ``attempt`` (1-based)
    /// failed, with the failure's fields as keywords. ``now``: epoch ms
    /// (default: the system clock).
    #[pyo3(signature = (attempt, *, r#type=None, ancestors=None, code=None, timed_out=None, message=None, details=None, now=None, u=None, seed=None, key=None))]
    #[allow(clippy::too_many_arguments)] // the Python keyword signature
    fn decide(
        &self,
        attempt: &Bound<'_, PyAny>,
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
        let py = attempt.py();
        let fields = FailureArgs {
            attempt: Some(attempt),
            r#type,
            ancestors,
            code,
            timed_out,
            message,
            details,
        };
        let failure = failure(&fields.read()?, None).py(py)?;
        let now = args::now(py, now)?;
        let j = args::jitter_or_entropy(u, seed, key)?;
        let inner = self.inner.decide(&failure, now, j.source()).py(py)?;
        Ok(PyDecision { inner })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .is_ok_and(|o| o.get().json() == self.json())
    }

    fn __hash__(&self) -> u64 {
        hash_of(&self.json())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("RetryPolicy({})", py_repr(py, self.json())?))
    }

    /// Pickles as the canonical JSON, which the constructor reads back.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let args = PyTuple::new(py, [slf.get().json()])?;
        PyTuple::new(py, [slf.get_type().into_any(), args.into_any()])
    }
}

/// The failure's fields, as `decide` and `record_failure` take them.
pub(crate) struct FailureArgs<'a, 'py> {
    pub(crate) attempt: Option<&'a Bound<'py, PyAny>>,
    pub(crate) r#type: Option<&'a Bound<'py, PyAny>>,
    pub(crate) ancestors: Option<&'a Bound<'py, PyAny>>,
    pub(crate) code: Option<&'a Bound<'py, PyAny>>,
    pub(crate) timed_out: Option<&'a Bound<'py, PyAny>>,
    pub(crate) message: Option<&'a Bound<'py, PyAny>>,
    pub(crate) details: Option<&'a Bound<'py, PyAny>>,
}

/// A failure read from Python: its document value, or (when a value in it
/// cannot be read) the core's error locating that value.
pub(crate) type FailureDoc = Result<Value, ojs_retry::Error>;

impl FailureArgs<'_, '_> {
    /// The given keywords as one failure document (one budget for all of
    /// them, as a JavaScript failure object has), which the core's
    /// `Failure::from_value` checks. They are read in name order, the
    /// order the core keeps an object's keys in.
    pub(crate) fn read(&self) -> PyResult<FailureDoc> {
        let fields = [
            ("ancestors", self.ancestors),
            ("attempt", self.attempt),
            ("code", self.code),
            ("details", self.details),
            ("message", self.message),
            ("timed_out", self.timed_out),
            ("type", self.r#type),
        ];
        let given: Vec<(&str, &Bound<'_, PyAny>)> = fields
            .iter()
            .filter_map(|&(name, v)| given(v).map(|v| (name, v)))
            .collect();
        Ok(args::keywords(&given)?
            .map_err(|fault| ojs_retry::Error::from_fault(ErrorCode::InvalidArgument, fault)))
    }
}

/// The failure of `doc`, its attempt `default_attempt` when not given.
pub(crate) fn failure(
    doc: &FailureDoc,
    default_attempt: Option<u64>,
) -> Result<Failure, ojs_retry::Error> {
    match doc {
        Ok(v) => Failure::from_value(v, default_attempt),
        Err(e) => Err(e.clone()),
    }
}

/// What to do after a failure (frozen). ``action`` is ``"retry"``,
/// ``"discard"`` or ``"dead_letter"``; ``reason`` says why.
#[pyclass(frozen, module = "ojs_retry", name = "Decision")]
pub(crate) struct PyDecision {
    pub(crate) inner: ojs_retry::Decision,
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
    /// The non-retryable entry that matched, when ``reason`` is
    /// ``"non_retryable"`` (``None`` there for a type outside a preset's list
    /// of retried types, Celery's ``autoretry_for``).
    #[getter]
    fn matched_pattern(&self) -> Option<&str> {
        match &self.inner.reason {
            Reason::NonRetryable { pattern } => pattern.as_deref(),
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
        Ok(pythonize::pythonize(py, &self.inner)?)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }
    fn __hash__(&self) -> u64 {
        hash_of(&format!("{:?}", self.inner))
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let d = self.to_dict(py)?;
        let parts: Vec<String> = d
            .cast::<PyDict>()?
            .iter()
            .map(|(k, v)| Ok(format!("{k}={}", v.repr()?)))
            .collect::<PyResult<_>>()?;
        Ok(format!("Decision({})", parts.join(", ")))
    }
}

/// One row of ``RetryPolicy.schedule`` (frozen).
#[pyclass(frozen, module = "ojs_retry", name = "ScheduleRow")]
pub(crate) struct PyScheduleRow {
    inner: ojs_retry::ScheduleRow,
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
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(pythonize::pythonize(py, &self.inner)?)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }
    fn __hash__(&self) -> u64 {
        hash_of(&format!("{:?}", self.inner))
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let d = self.to_dict(py)?;
        let parts: Vec<String> = d
            .cast::<PyDict>()?
            .iter()
            .map(|(k, v)| Ok(format!("{k}={}", v.repr()?)))
            .collect::<PyResult<_>>()?;
        Ok(format!("ScheduleRow({})", parts.join(", ")))
    }
}
