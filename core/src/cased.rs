//! The objects hosts receive (decisions, schedule rows, error records),
//! serialised straight into the host's spelling of keys.

use crate::value::Case;

/// `value` serialised with its keys in `case`: what a binding hands its
/// host's serializer (serde-wasm-bindgen, napi-rs, pythonize), so that a
/// JavaScript caller reads `delayMs` where JSON and Python say `delay_ms`.
///
/// ```
/// use ojs_retry::{Case, Cased, Failure, JitterSource, RetryPolicy};
/// let d = RetryPolicy::default().decide(&Failure::new(1), 0, JitterSource::Uniform(0.5))?;
/// let js = serde_json::to_string(&Cased(&d, Case::Camel)).unwrap();
/// assert!(js.contains(r#""delayMs":1000,"nextRetryAt":1000"#));
/// assert_eq!(serde_json::to_string(&Cased(&d, Case::Snake)).unwrap(), serde_json::to_string(&d).unwrap());
/// # Ok::<(), ojs_retry::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Cased<'a, T: ?Sized>(pub &'a T, pub Case);

/// The key spelled for `case`.
pub(crate) fn key(case: Case, snake: &'static str, camel: &'static str) -> &'static str {
    match case {
        Case::Snake => snake,
        Case::Camel => camel,
    }
}
