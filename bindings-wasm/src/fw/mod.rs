//! The two frameworks behind one set of exports: what differs between the
//! napi-rs build and the wasm-bindgen build, and nothing else.
//!
//! Both give the same names: [`Val`] (a JS value an export takes as it is),
//! [`Result`] (what an export returns: its error throws), [`ret`] (a core
//! result as that), [`host`] (the reader of live values, [`crate::read::Host`])
//! and the handle of each class, which the JS layer holds in a private field:
//! an `External` natively (napi-rs type-checks it on every call), a
//! `#[wasm_bindgen]` struct in wasm.

#[cfg(not(target_arch = "wasm32"))]
mod napi;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use self::napi::*;

#[cfg(target_arch = "wasm32")]
mod wasm;
#[cfg(target_arch = "wasm32")]
pub(crate) use self::wasm::*;

/// What every export throws: a core error, as the JSON text
/// `{"code", "field", "path", "faults", "message"}`, which the JS layer turns
/// into an `OjsRetryError`. The one error mapping of the binding.
#[derive(Debug)]
pub(crate) struct Thrown(pub(crate) ojs_retry::Error);

impl From<ojs_retry::Error> for Thrown {
    fn from(e: ojs_retry::Error) -> Self {
        Self(e)
    }
}

impl Thrown {
    /// The error as the JSON text thrown.
    pub(crate) fn json(&self) -> String {
        let e = &self.0;
        serde_json::json!({
            "code": e.code().as_str(),
            "field": e.field(),
            "path": e.path(),
            "faults": e.faults(),
            "message": e.to_string(),
        })
        .to_string()
    }
}

/// `Result` of a core call inside the binding.
pub(crate) type Core<T> = std::result::Result<T, Thrown>;
