//! `run_transaction`: the core's failure transaction (`ojs_retry::transaction`)
//! for a queue integration. Total on runtime data: what the queue carried
//! (layer, state, details, text with lone surrogates) is handed to the core
//! as it is, and the core turns every fault into an outcome and a note.

use ojs_retry::Layer;
use ojs_retry::transaction::{FailureReport, Transaction};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use pythonize::Depythonizer;

use crate::args;
use crate::errors::CoreResult;
use crate::policy::{PyDecision, PyRetryPolicy};
use crate::state::PyRetryState;

/// Text from a Python `str`, each lone surrogate replaced by one U+FFFD
/// (as a JavaScript string's are): a message decoded with
/// `surrogateescape` is recorded, not refused.
fn lossy(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<String>> {
    let Some(obj) = args::given(obj) else {
        return Ok(None);
    };
    let Ok(s) = obj.cast::<PyString>() else {
        return args::text(obj, field).map(Some);
    };
    if let Ok(text) = s.to_str() {
        return Ok(Some(text.to_owned()));
    }
    let units = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let bytes = units.cast::<PyBytes>()?.as_bytes();
    let units = bytes
        .chunks_exact(2)
        .filter_map(|p| <[u8; 2]>::try_from(p).ok())
        .map(u16::from_le_bytes);
    Ok(Some(
        char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect(),
    ))
}

/// A carried document: JSON text or bytes, a mapping, or an engine object.
fn carried(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Layer<'static>>> {
    let Some(obj) = args::given(obj) else {
        return Ok(None);
    };
    if let Ok(p) = obj.cast::<PyRetryPolicy>() {
        return Ok(Some(Layer::Json(p.get().inner.to_json().into())));
    }
    if let Ok(s) = obj.cast::<PyRetryState>() {
        return Ok(Some(Layer::Json(s.get().to_json().into())));
    }
    args::layer(obj).map(Some)
}

/// The queue's defaults: one layer or a list of them.
fn defaults(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Layer<'static>>> {
    match args::given(obj) {
        None => Ok(Vec::new()),
        Some(list) if list.is_instance_of::<PyList>() => {
            let mut out = Vec::new();
            for item in list.try_iter()? {
                out.extend(carried(Some(&item?))?);
            }
            Ok(out)
        }
        Some(one) => Ok(carried(Some(one))?.into_iter().collect()),
    }
}

/// A value the core reads as it is (details, a job payload): a fault in it
/// is the core's to note.
fn details(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Layer<'static>>> {
    let Some(obj) = args::given(obj) else {
        return Ok(None);
    };
    Ok(Some(match args::value(obj)? {
        Ok(v) => Layer::Value(v),
        Err(_) => Layer::read(&mut Depythonizer::from_object(obj)),
    }))
}

/// The attempt from the queue's counter, as the core takes it: a negative
/// or huge count is the core's to note, not an error here.
fn counter(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let n: i128 = obj
        .extract()
        .or_else(|_| args::uint(obj, "attempt").map(i128::from))?;
    Ok(u64::try_from(n.max(0)).unwrap_or(u64::MAX))
}

/// What the queue does with a failed job: the outcome of
/// [`run_transaction`].
#[pyclass(frozen, module = "ojs_retry", name = "Outcome")]
pub(crate) struct PyOutcome {
    #[pyo3(get)]
    decision: Py<PyDecision>,
    #[pyo3(get)]
    state: Py<PyRetryState>,
    #[pyo3(get)]
    state_json: String,
    #[pyo3(get)]
    policy: Py<PyRetryPolicy>,
    /// `(kind, message)` pairs.
    #[pyo3(get)]
    notes: Vec<(&'static str, String)>,
    #[pyo3(get)]
    dead_letter: Option<String>,
}

#[pymethods]
impl PyOutcome {
    /// `"retry"`, `"discard"` or `"dead_letter"`.
    #[getter]
    fn action(&self) -> &'static str {
        self.decision.get().inner.action.as_str()
    }

    fn __repr__(&self) -> String {
        let d = &self.decision.get().inner;
        let kinds: Vec<&str> = self.notes.iter().map(|(k, _)| *k).collect();
        format!(
            "Outcome(action={:?}, reason={:?}, delay_ms={:?}, notes={kinds:?})",
            d.action.as_str(),
            d.reason.as_str(),
            d.delay_ms
        )
    }
}

/// The failure transaction: what a queue knows when a job fails, to what it
/// does next.
///
/// ``attempt`` is the queue's own counter (the attempt that failed, 1-based),
/// ``key`` the job id (keyed jitter), ``defaults`` the queue's policy layers,
/// ``layer`` the policy layer the job carries, ``state`` the §10 state it
/// carries (text, dict or ``RetryState``), then the failure's fields.
///
/// Never raises for what the job carried or the failure holds: a layer the
/// defaults refuse is dead-lettered (reason ``policy_invalid``), an
/// over-long message truncated, a lone surrogate replaced, unusable details
/// dropped, a state that cannot be read or disagrees with the counter
/// rebased — each listed in ``notes``. ``state_json`` always reads back.
#[pyfunction]
#[pyo3(
    signature = (attempt, *, key, defaults=None, layer=None, state=None, r#type=None, ancestors=None, code=None, timed_out=None, message=None, details=None, now=None, history_limit=None, queue=None, job=None),
    text_signature = "(attempt, *, key, defaults=None, layer=None, state=None, type=None, ancestors=None, code=None, timed_out=False, message=None, details=None, now=None, history_limit=10, queue='', job=None)"
)]
#[allow(clippy::too_many_arguments)] // the Python keyword signature
pub(crate) fn run_transaction(
    py: Python<'_>,
    attempt: &Bound<'_, PyAny>,
    key: &Bound<'_, PyAny>,
    defaults: Option<&Bound<'_, PyAny>>,
    layer: Option<&Bound<'_, PyAny>>,
    state: Option<&Bound<'_, PyAny>>,
    r#type: Option<&Bound<'_, PyAny>>,
    ancestors: Option<&Bound<'_, PyAny>>,
    code: Option<&Bound<'_, PyAny>>,
    timed_out: Option<&Bound<'_, PyAny>>,
    message: Option<&Bound<'_, PyAny>>,
    details: Option<&Bound<'_, PyAny>>,
    now: Option<&Bound<'_, PyAny>>,
    history_limit: Option<&Bound<'_, PyAny>>,
    queue: Option<&Bound<'_, PyAny>>,
    job: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyOutcome> {
    // One built policy is taken as it is (no document read per failure).
    let built = args::given(defaults).and_then(|d| d.cast::<PyRetryPolicy>().ok());
    let defaults = match built {
        Some(_) => Vec::new(),
        None => self::defaults(defaults)?,
    };
    // What the queue's own code passes (its key, queue name, flags and
    // history limit) is checked; what the job carried is the core's.
    let key = lossy(Some(key), "key")?.unwrap_or_default();
    let queue = lossy(queue, "queue")?.unwrap_or_default();
    let timed_out = args::given(timed_out)
        .map(|b| args::boolean(b, "timed_out"))
        .transpose()?;
    let mut t = Transaction::new(&defaults, counter(attempt)?, &key, args::now(py, now)?);
    if let Some(limit) = args::given(history_limit) {
        let n = args::uint(limit, "history_limit")?;
        t = t
            .with_history_limit(usize::try_from(n).unwrap_or(usize::MAX))
            .py(py)?;
    }
    t.built = built.map(|p| &p.get().inner);
    t.layer = carried(layer)?;
    t.state = carried(state)?;
    t.queue = &queue;
    t.job = self::details(job)?;
    t.failure = FailureReport {
        error_type: lossy(r#type, "type")?,
        ancestors: self::details(ancestors)?,
        code: lossy(code, "code")?,
        timed_out: timed_out.unwrap_or(false),
        message: lossy(message, "message")?,
        details: self::details(details)?,
    };
    let out = t.run();
    Ok(PyOutcome {
        decision: Py::new(
            py,
            PyDecision {
                inner: out.decision,
            },
        )?,
        state: Py::new(py, PyRetryState::wrap(out.state))?,
        state_json: out.state_json,
        policy: Py::new(py, PyRetryPolicy::wrap(out.policy.into_owned()))?,
        notes: out.notes.into_iter().map(|n| (n.kind, n.message)).collect(),
        dead_letter: out.dead_letter,
    })
}
