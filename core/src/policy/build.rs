//! Building a policy: documents in whatever form the caller holds them,
//! read, merged in order over the §8 defaults, and validated as a whole.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::partial::read_layer;
use super::{Defaults, Layer, PartialPolicy, RetryPolicy};
use crate::duration;
use crate::error::{Error, ErrorCode, Fault, Faults, quote};
use crate::limits;
use crate::value::{Map, Value};

impl RetryPolicy {
    /// Parses, merges over the defaults and validates a policy document.
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` listing every fault: invalid JSON,
    /// duplicate keys, unknown fields, wrong types, out-of-range values and
    /// the rules across fields (`max_interval ≥ initial_interval`).
    ///
    /// ```
    /// let err = ojs_retry::RetryPolicy::from_json(r#"{"initial_interval": "PT10M"}"#).unwrap_err();
    /// assert_eq!(err.field(), Some("max_interval")); // the default PT5M is shorter
    /// ```
    pub fn from_json(text: &str) -> Result<Self, Error> {
        Self::from_json_layers(&[text])
    }

    /// Like [`RetryPolicy::from_json`] for several layers, merged in order
    /// (defaults ← first ← … ← last). Faults in a layer other than the only
    /// one name the layer (1-based) in the message.
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` listing every fault of every layer.
    ///
    /// ```
    /// let queue = r#"{"max_attempts": 10, "initial_interval": "PT5S"}"#;
    /// let job = r#"{"max_attempts": 2}"#;
    /// let p = ojs_retry::RetryPolicy::from_json_layers(&[queue, job]).unwrap();
    /// assert_eq!((p.max_attempts(), p.initial_interval_ms()), (2, 5_000));
    /// ```
    pub fn from_json_layers(texts: &[&str]) -> Result<Self, Error> {
        Self::from_layers(
            texts
                .iter()
                .map(|t| Layer::Json(Cow::Borrowed(*t)))
                .collect(),
        )
    }

    /// Reads, merges over the defaults and validates one layer given by any
    /// serde `Deserializer`: a host value (`serde-wasm-bindgen`, napi-rs,
    /// `pythonize`). A value of a top-level field that cannot be read
    /// (nested too deep, of a type JSON has not) is a fault of that field.
    ///
    /// # Errors
    ///
    /// As [`RetryPolicy::from_json`].
    ///
    /// ```
    /// let mut de = serde_json::Deserializer::from_str(r#"{"max_attempts": 4}"#);
    /// assert_eq!(ojs_retry::RetryPolicy::from_deserializer(&mut de)?.max_attempts(), 4);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_deserializer<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Self, Error> {
        Self::from_layers(alloc::vec![Layer::read(d)])
    }

    /// Reads, merges over the defaults and validates a policy document
    /// given as a [`Value`].
    ///
    /// # Errors
    ///
    /// As [`RetryPolicy::from_json`].
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, Value};
    /// let doc = Value::from_json(r#"{"max_attempts": 4}"#).unwrap();
    /// assert_eq!(RetryPolicy::from_value(&doc).unwrap().max_attempts(), 4);
    /// ```
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        Self::resolve_checked(core::slice::from_ref(value))
    }

    /// Like [`RetryPolicy::from_value`] for several layers merged in order.
    ///
    /// # Errors
    ///
    /// As [`RetryPolicy::from_json_layers`].
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, Value};
    /// let queue = Value::from_json(r#"{"max_attempts": 10, "jitter": false}"#).unwrap();
    /// let job = Value::from_json(r#"{"max_attempts": 4}"#).unwrap();
    /// let p = RetryPolicy::from_values(&[queue, job])?;
    /// assert_eq!((p.max_attempts(), p.jitter()), (4, false));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_values(values: &[Value]) -> Result<Self, Error> {
        Self::resolve_checked(values)
    }

    /// Merges layers given in whatever form the caller holds them — JSON
    /// text, raw bytes of JSON text, or values — in order over the
    /// defaults, and validates the result.
    ///
    /// # Errors
    ///
    /// As [`RetryPolicy::from_json_layers`]; bytes that are not UTF-8 are a
    /// fault of that layer's whole document.
    ///
    /// ```
    /// use ojs_retry::{Layer, RetryPolicy, Value};
    /// let queue = Value::from_json(r#"{"max_attempts": 10}"#).unwrap();
    /// let p = RetryPolicy::from_layers(vec![Layer::Value(queue), Layer::Json(r#"{"jitter": false}"#.into())]).unwrap();
    /// assert_eq!((p.max_attempts(), p.jitter()), (10, false));
    /// let bytes: &[u8] = b"{\"jitter\": \xff}";
    /// let err = RetryPolicy::from_layers(vec![Layer::JsonBytes(bytes.into())]).unwrap_err();
    /// assert_eq!((err.code().as_str(), err.field()), ("validation.retry_policy_invalid", None));
    /// ```
    pub fn from_layers(layers: Vec<Layer<'_>>) -> Result<Self, Error> {
        let n = layers.len();
        limits::check_layers(n)?;
        // Texts are measured before any is parsed.
        limits::check_layers_total(layers.iter().map(layer_size), n)?;
        let mut values = Vec::with_capacity(n);
        let mut faults = Faults::default();
        for (i, layer) in layers.into_iter().enumerate() {
            let read = match layer {
                Layer::Value(v) => Ok(v),
                Layer::Unreadable(mut fault) => {
                    fault.message = format!("{}{}", layer_ctx(i, n), fault.message);
                    faults.0.push(fault);
                    values.push(Value::Object(Map::new()));
                    continue;
                }
                Layer::Json(t) => Value::from_json(&t),
                Layer::JsonBytes(b) => Value::from_json_bytes(&b),
            };
            match read {
                Ok(v) => values.push(v),
                Err(m) => {
                    faults.push("", format!("{}{}", layer_ctx(i, n), m));
                    values.push(Value::Object(Map::new()));
                }
            }
        }
        Self::resolve(&values, faults)
    }

    /// Values held to the limits of one merge, then resolved.
    fn resolve_checked(values: &[Value]) -> Result<Self, Error> {
        limits::check_layers(values.len())?;
        let cap = limits::MAX_DOCUMENT_BYTES;
        let sizes = values.iter().map(|v| limits::document_size(v, cap));
        limits::check_layers_total(sizes, values.len())?;
        Self::resolve(values, Faults::default())
    }

    fn resolve(values: &[Value], faults: Faults) -> Result<Self, Error> {
        let policy = Self::resolve_layers(values, faults)?;
        policy.check_canonical_size()?;
        Ok(policy)
    }

    /// Everything the engine writes, it reads back: a policy whose
    /// canonical JSON would be longer than a document may be is refused
    /// here, not when its own text is read back (a layer at the 1 MiB value
    /// budget is longer as text, with its quotes, commas and defaults).
    fn check_canonical_size(&self) -> Result<(), Error> {
        let max = limits::MAX_DOCUMENT_BYTES;
        // A pattern's text is at most 6 bytes per byte (`\u001f`) plus its
        // quotes and comma; every other field of a policy fits in 4 KiB. A
        // preset's configuration is measured exactly, as presets are rare.
        let bound = self.non_retryable_errors.iter().fold(4096_usize, |n, p| {
            n.saturating_add(p.len().saturating_mul(6))
                .saturating_add(3)
        });
        if bound <= max && self.preset.is_none() {
            return Ok(());
        }
        let len = self.to_json().len();
        if len > max {
            return Err(Error::from_fault(
                ErrorCode::RetryPolicyInvalid,
                Fault::at(
                    "",
                    format!(
                        "expected a policy whose canonical JSON is at most {max} bytes, so that it reads back, found one of {len}"
                    ),
                ),
            ));
        }
        Ok(())
    }

    fn resolve_layers(values: &[Value], mut faults: Faults) -> Result<Self, Error> {
        if let Some(p) = Self::resolve_preset(values, &mut faults) {
            return p;
        }
        let mut layers = Vec::with_capacity(values.len());
        for (i, v) in values.iter().enumerate() {
            let ctx = layer_ctx(i, values.len());
            let mut found = Faults::default();
            let layer = read_layer(v, &mut found, &ctx);
            layer.check_into(found, &ctx, &mut faults);
            layers.push(layer);
        }
        Self::merge_checked(layers, faults)
    }

    /// A document `{"preset": {...}}` is a whole policy in another system's
    /// terms: it must be the only layer and hold nothing else.
    fn resolve_preset(values: &[Value], faults: &mut Faults) -> Option<Result<Self, Error>> {
        let has = |v: &Value| v.as_object().is_some_and(|m| m.contains_key("preset"));
        if !values.iter().any(has) {
            return None;
        }
        if values.len() > 1 {
            faults.push(
                "preset",
                "expected a preset document as the only layer (a preset is a whole policy in its system's terms; it does not merge with OJS layers)",
            );
        }
        let mut found = None;
        for v in values {
            if let Some(map) = v.as_object()
                && let Some(p) = map.get("preset")
            {
                for key in map.keys().filter(|k| *k != "preset") {
                    faults.push_key(
                        key,
                        format!("unknown field {} beside \"preset\"; a preset document holds only \"preset\"", quote(key)),
                    );
                }
                found = Some(p);
            }
        }
        let taken = core::mem::take(&mut faults.0);
        let mut faults = Faults(taken);
        let result = found.map(|v| crate::presets::from_value(v).map(Self::from_preset));
        Some(match result {
            Some(Ok(p)) if faults.0.is_empty() => Ok(p),
            Some(Ok(_)) | None => faults
                .into_error(ErrorCode::RetryPolicyInvalid)
                .map(|()| Self::default()),
            Some(Err(e)) => {
                faults.0.extend(e.faults().iter().cloned());
                faults
                    .into_error(ErrorCode::RetryPolicyInvalid)
                    .map(|()| Self::default())
            }
        })
    }

    /// Merges typed layers over the defaults and validates the result.
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` listing every fault.
    ///
    /// ```
    /// use ojs_retry::{PartialPolicy, RetryPolicy};
    /// let queue = PartialPolicy::new().max_attempts(10).jitter(false);
    /// let job = PartialPolicy::new().max_attempts(4);
    /// let p = RetryPolicy::from_partials(&[queue, job])?;
    /// assert_eq!((p.max_attempts(), p.jitter()), (4, false));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_partials(layers: &[PartialPolicy]) -> Result<Self, Error> {
        limits::check_layers(layers.len())?;
        let mut faults = Faults::default();
        for (i, layer) in layers.iter().enumerate() {
            layer.check_into(Faults::default(), &layer_ctx(i, layers.len()), &mut faults);
        }
        Self::merge_checked(layers.to_vec(), faults)
    }

    /// Merges checked layers and applies the rule across fields.
    fn merge_checked(layers: Vec<PartialPolicy>, faults: Faults) -> Result<Self, Error> {
        // Owned layers move their values (no clone of the error lists).
        let merged = layers
            .into_iter()
            .fold(PartialPolicy::default(), PartialPolicy::merge_owned);
        Self::finish(merged, faults)
    }

    /// Applies the rule across fields to merged, checked layers and fills
    /// what no layer sets with the §8 defaults.
    fn finish(merged: PartialPolicy, mut faults: Faults) -> Result<Self, Error> {
        let d = Defaults::OJS;
        let initial = merged.initial_interval_ms.unwrap_or(d.initial_interval_ms);
        let max = merged.max_interval_ms.unwrap_or(d.max_interval_ms);
        // The rule across fields only makes sense when both are valid.
        let interval_faults = faults.0.iter().any(|f| {
            matches!(
                f.field.as_deref(),
                Some("initial_interval" | "max_interval")
            )
        });
        if !interval_faults && max < initial {
            let whose = |set: bool| {
                if set {
                    ""
                } else {
                    " (the default, since no layer sets it)"
                }
            };
            faults.push(
                "max_interval",
                format!("expected max_interval >= initial_interval, found max_interval {}{} < initial_interval {}{}", duration::format_ms(max), whose(merged.max_interval_ms.is_some()), duration::format_ms(initial), whose(merged.initial_interval_ms.is_some())),
            );
        }
        if !faults.0.is_empty() {
            faults.into_error(ErrorCode::RetryPolicyInvalid)?;
        }
        Ok(Self::assemble(
            merged.max_attempts.unwrap_or(d.max_attempts),
            initial,
            merged.backoff_coefficient.unwrap_or(d.backoff_coefficient),
            max,
            merged.jitter.unwrap_or(d.jitter),
            merged.non_retryable_errors.unwrap_or_default(),
            merged.on_exhaustion.unwrap_or(d.on_exhaustion),
            merged.backoff_strategy.unwrap_or(d.strategy),
        ))
    }
}

/// What a layer counts against the merge's budget: a text's bytes, a
/// value as the readers count it; an unreadable layer was refused already.
fn layer_size(layer: &Layer<'_>) -> usize {
    match layer {
        Layer::Json(t) => t.len(),
        Layer::JsonBytes(b) => b.len(),
        Layer::Value(v) => limits::document_size(v, limits::MAX_DOCUMENT_BYTES),
        Layer::Unreadable(_) => 0,
    }
}

fn layer_ctx(i: usize, n: usize) -> String {
    if n > 1 {
        format!("layer {}: ", i.saturating_add(1))
    } else {
        String::new()
    }
}
