//! `RetryPolicy.delay` through a hand-written vectorcall entry.
//!
//! `delay(n, u=…)` is the call a worker makes on every failure, and the
//! benchmark target is "≤ 1.3× a no-op pyo3 method of the same signature".
//! pyo3 parses keyword arguments with one shared routine for all ~30
//! methods of this module (`extract_arguments_fastcall`): in a one-method
//! module LLVM inlines and specialises it, here it cannot, and that alone
//! was ~130 of the ~510 machine instructions per call (callgrind, see
//! bench/RESULTS.md). This entry reads the common shapes itself —
//! one positional exact `int` and either no keyword (the sample then
//! comes from the core's entropy generator) or exactly one, `u` (exact
//! `float`), `seed` (exact `int`) or `key` (exact `str`) — and calls the
//! core. Anything else (other types, subclasses, several keywords, values
//! out of range, any error from the core) goes to the
//! pyo3-generated method, unchanged, which checks everything and reports
//! the error: errors are exactly the full method's, and whenever this entry
//! answers, the answer is the full method's (tests/python/test_api.py
//! checks both).
//!
//! The `unsafe` here is FFI only: reading CPython's argument vector and
//! building the method descriptor.

use std::ffi::CString;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use ojs_retry as core_;
use pyo3::Borrowed;
use pyo3::exceptions::PySystemError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyInt, PyString, PyTuple, PyType};

use crate::PyRetryPolicy;

/// The pyo3-generated `delay` method descriptor: the full path.
static FULL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// CPython keeps a pointer to the method definition for the descriptor's
/// lifetime (the type's): it lives in a static, written once.
struct MethodDef(ffi::PyMethodDef);
// SAFETY: written once under `OnceLock` before CPython sees it, then only
// read; its pointers are to `'static` data (`DOC`, a C string literal, a
// function).
unsafe impl Sync for MethodDef {}
// SAFETY: as above: immutable after initialisation.
unsafe impl Send for MethodDef {}

static DEF: OnceLock<MethodDef> = OnceLock::new();
static DOC: OnceLock<CString> = OnceLock::new();

/// Replaces `RetryPolicy.delay` on the type by the fast entry, keeping the
/// pyo3 method as its fallback. Same name, docstring and text signature
/// (`inspect.signature`, stubtest).
pub(crate) fn install(ty: &Bound<'_, PyType>) -> PyResult<()> {
    let py = ty.py();
    let full = ty.getattr(intern!(py, "delay"))?;
    let sig: String = full.getattr(intern!(py, "__text_signature__"))?.extract()?;
    let doc: String = full.getattr(intern!(py, "__doc__"))?.extract()?;
    // CPython reads the text signature from the head of `ml_doc`:
    // "name(sig)\n--\n\n" followed by the docstring.
    let doc =
        DOC.get_or_init(|| CString::new(format!("delay{sig}\n--\n\n{doc}")).unwrap_or_default());
    let def = DEF.get_or_init(|| {
        MethodDef(ffi::PyMethodDef {
            ml_name: c"delay".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: delay,
            },
            ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
            ml_doc: doc.as_ptr(),
        })
    });
    let _ = FULL.set(py, full.unbind());
    // SAFETY: `def` is 'static and never written again (CPython only reads
    // it, whatever the `*mut` in the signature says); the type is a live
    // type object.
    let descr = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyDescr_NewMethod(ty.as_type_ptr(), std::ptr::from_ref(&def.0).cast_mut()),
        )?
    };
    ty.setattr(intern!(py, "delay"), descr)
}

/// The `METH_FASTCALL | METH_KEYWORDS` entry: `args` holds `nargs`
/// positional arguments followed by one value per name in `kwnames`.
unsafe extern "C" fn delay(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls a method with the thread attached.
    let py = unsafe { Python::assume_attached() };
    // Nothing below panics on any input; the guard keeps a bug from
    // unwinding into CPython (it becomes a SystemError instead).
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the vectorcall protocol: `slf` is live, `kwnames` is NULL
        // or a tuple of str, and `args` holds nargs + len(kwnames) live
        // references (NULL only when there are none).
        let call = unsafe { Call::read(py, slf, args, nargs, kwnames) }?;
        if let Some(d) = call.fast() {
            return Ok(d.into_pyobject(py)?.into_any().unbind());
        }
        call.full()
    }));
    match result {
        Ok(Ok(obj)) => obj.into_ptr(),
        Ok(Err(e)) => {
            e.restore(py);
            std::ptr::null_mut()
        }
        Err(_) => {
            PySystemError::new_err("ojs_retry: internal error in RetryPolicy.delay").restore(py);
            std::ptr::null_mut()
        }
    }
}

/// One call's arguments, borrowed from CPython's vector (nothing is
/// allocated or reference-counted on the fast path).
struct Call<'a, 'py> {
    slf: Borrowed<'a, 'py, PyAny>,
    /// Positional arguments, then keyword values.
    values: &'a [*mut ffi::PyObject],
    nargs: usize,
    names: Option<Borrowed<'a, 'py, PyTuple>>,
}

impl<'a, 'py> Call<'a, 'py> {
    /// # Safety
    ///
    /// `slf` is live; `kwnames` is NULL or a tuple; `args` points to
    /// `nargs + len(kwnames)` live references that outlive `'a`.
    unsafe fn read(
        py: Python<'py>,
        slf: *mut ffi::PyObject,
        args: *const *mut ffi::PyObject,
        nargs: ffi::Py_ssize_t,
        kwnames: *mut ffi::PyObject,
    ) -> PyResult<Self> {
        // SAFETY: the caller's contract.
        let slf = unsafe { Borrowed::from_ptr_or_err(py, slf) }?;
        // SAFETY: the caller's contract.
        let names = unsafe { Borrowed::from_ptr_or_opt(py, kwnames) }
            .map(|n| n.cast::<PyTuple>())
            .transpose()?;
        let nargs = usize::try_from(nargs).unwrap_or(0);
        let total = nargs.saturating_add(names.as_ref().map_or(0, |n| n.len()));
        let values = if total == 0 || args.is_null() {
            &[]
        } else {
            // SAFETY: the caller's contract: `total` live entries.
            unsafe { std::slice::from_raw_parts(args, total) }
        };
        Ok(Self {
            slf,
            values,
            nargs: nargs.min(values.len()),
            names,
        })
    }

    fn value(&self, i: usize) -> Option<Borrowed<'a, 'py, PyAny>> {
        let p = *self.values.get(i)?;
        // SAFETY: every entry of `values` is a live reference (`read`).
        unsafe { Borrowed::from_ptr_or_opt(self.slf.py(), p) }
    }

    /// The common shapes, answered by the core; `None` for anything else.
    fn fast(&self) -> Option<u64> {
        let py = self.slf.py();
        let keywords = self.names.as_ref().map_or(0, |n| n.len());
        if self.nargs != 1 || keywords > 1 {
            return None;
        }
        let policy = self.slf.cast::<PyRetryPolicy>().ok()?.get();
        let n = self.value(0)?;
        if !n.is_exact_instance_of::<PyInt>() {
            return None;
        }
        let n = n.extract::<u64>().ok().filter(|n| *n <= core_::MAX_MS)?;
        let Some(names) = self.names.as_ref().filter(|_| keywords == 1) else {
            // `delay(n)`: the next word of this thread's entropy generator,
            // handed to the engine as the sample (an OS failure takes the
            // full route, which reports it).
            let word = core_::entropy::word().ok()?;
            return policy.inner.delay_sampled(n, core_::Sample::from_u64(word));
        };
        let name = names.get_borrowed_item(0).ok()?;
        let value = self.value(1)?;
        // Keyword names are interned by the compiler: one pointer
        // comparison in the common case.
        let is = |s: &Bound<'_, PyString>| {
            name.is(s)
                || name
                    .cast::<PyString>()
                    .is_ok_and(|n| n.to_str().ok() == s.to_str().ok())
        };
        let source = if is(intern!(py, "u")) {
            core_::JitterSource::Uniform(value.cast_exact::<PyFloat>().ok()?.value())
        } else if is(intern!(py, "seed")) {
            if !value.is_exact_instance_of::<PyInt>() {
                return None;
            }
            core_::JitterSource::Seed(value.extract::<u64>().ok()?)
        } else if is(intern!(py, "key")) {
            let key = value.cast_exact::<PyString>().ok()?;
            return policy
                .inner
                .delay_ok(n, core_::JitterSource::Key(key.to_str().ok()?));
        } else {
            return None;
        };
        policy.inner.delay_ok(n, source)
    }

    /// The pyo3 method, called with the same arguments.
    fn full(&self) -> PyResult<Py<PyAny>> {
        let py = self.slf.py();
        let Some(full) = FULL.get(py) else {
            return Err(PySystemError::new_err(
                "ojs_retry: RetryPolicy.delay is not initialised",
            ));
        };
        let args: Vec<_> = std::iter::once(self.slf)
            .chain((0..self.nargs).filter_map(|i| self.value(i)))
            .collect();
        let args = PyTuple::new(py, args)?;
        let kwargs = PyDict::new(py);
        if let Some(names) = &self.names {
            for (i, name) in names.iter().enumerate() {
                if let Some(v) = self.value(self.nargs.saturating_add(i)) {
                    kwargs.set_item(name, v)?;
                }
            }
        }
        Ok(full.bind(py).call(args, Some(&kwargs))?.unbind())
    }
}
