//! Retry policies: documents, defaults, merging and validation (spec §2, §8,
//! §8.1, §11, §14; RET-03, RET-09, RET-10, RET-16, RET-20).
//!
//! A policy is built from one or more *partial* layers merged in order over
//! the §8 defaults (defaults ← queue ← job), then validated as a whole: a
//! layer may set `initial_interval` alone only if it stays within the
//! effective `max_interval`.
//!
//! ```
//! use ojs_retry::RetryPolicy;
//! // §8.1: a partial document merges with the defaults.
//! let p = RetryPolicy::from_json(r#"{"max_attempts": 10, "on_exhaustion": "dead_letter"}"#).unwrap();
//! assert_eq!(
//!     p.to_json(),
//!     r#"{"max_attempts":10,"initial_interval":"PT1S","backoff_coefficient":2.0,"max_interval":"PT5M","jitter":true,"non_retryable_errors":[],"on_exhaustion":"dead_letter"}"#
//! );
//! ```

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use alloc::format;
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::backoff::{Backoff, CappedDelays, Curve, Rounding, ScheduleRow, Spread, Strategy};
use crate::duration::{self, MAX_MS};
use crate::error::{Error, ErrorCode, Fault, Faults, quote, show_f64};
use crate::jitter::{JitterSource, Sample};
use crate::options::uint_from_f64;
use crate::value::{Map, Value, read_uint};

/// The largest number of rows [`RetryPolicy::schedule`] builds in one call.
pub const MAX_SCHEDULE_ROWS: u64 = 100_000;

/// One policy layer in the form the caller holds it (see
/// [`RetryPolicy::from_layers`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Layer<'a> {
    /// JSON text.
    Json(Cow<'a, str>),
    /// The raw bytes of JSON text (checked to be UTF-8).
    JsonBytes(Cow<'a, [u8]>),
    /// A document value (a JS object or a Python dict, read through serde).
    Value(Value),
    /// A host value that could not be read, with its fault (see
    /// [`Layer::read`]): reported with the other layers' faults.
    Unreadable(Fault),
}

impl Layer<'_> {
    /// One layer read from any serde `Deserializer` (a host value): its
    /// [`Value`], or the fault at the top-level field whose value could not
    /// be read (nested too deep, a type JSON has not).
    ///
    /// ```
    /// use ojs_retry::{Layer, RetryPolicy};
    /// let layer = Layer::read(&serde_json::json!({"max_attempts": 7}));
    /// assert_eq!(RetryPolicy::from_layers(vec![layer])?.max_attempts(), 7);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn read<'de, D: serde::Deserializer<'de>>(d: D) -> Self {
        match crate::value::read_document(d) {
            Ok(v) => Layer::Value(v),
            Err(fault) => Layer::Unreadable(fault),
        }
    }
}

pub use crate::exhaustion::OnExhaustion;

/// The document field names, in the spec's order.
const FIELDS: [&str; 8] = [
    "max_attempts",
    "initial_interval",
    "backoff_coefficient",
    "max_interval",
    "jitter",
    "non_retryable_errors",
    "on_exhaustion",
    "backoff_strategy",
];

/// One layer of a policy: every field optional. Build it from a document
/// ([`PartialPolicy::from_json`], [`PartialPolicy::from_value`]) or with the
/// setters, then resolve it with [`RetryPolicy::from_partials`] or
/// [`PartialPolicy::build`].
///
/// ```
/// use ojs_retry::{PartialPolicy, Strategy};
/// let p = PartialPolicy::new()
///     .max_attempts(25)
///     .initial_interval_ms(15_000)
///     .backoff_coefficient(4.0)
///     .backoff_strategy(Strategy::Polynomial)
///     .max_interval_ms(3_600_000)
///     .build()
///     .unwrap();
/// assert_eq!(p.delay(3, ojs_retry::JitterSource::Uniform(0.5)).unwrap(), 1_215_000);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartialPolicy {
    /// `max_attempts`.
    pub max_attempts: Option<u64>,
    /// `initial_interval` in ms.
    pub initial_interval_ms: Option<u64>,
    /// `backoff_coefficient`.
    pub backoff_coefficient: Option<f64>,
    /// `max_interval` in ms.
    pub max_interval_ms: Option<u64>,
    /// `jitter`.
    pub jitter: Option<bool>,
    /// `non_retryable_errors`.
    pub non_retryable_errors: Option<Vec<String>>,
    /// `on_exhaustion`.
    pub on_exhaustion: Option<OnExhaustion>,
    /// `backoff_strategy` (extension; absent means exponential).
    pub backoff_strategy: Option<Strategy>,
}

macro_rules! setter {
    ($(#[$doc:meta] $name:ident: $ty:ty),* $(,)?) => {
        $(#[$doc] #[must_use] pub fn $name(mut self, value: $ty) -> Self {
            self.$name = Some(value.into());
            self
        })*
    };
}

impl PartialPolicy {
    /// An empty layer (every field inherited).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    setter! {
        /// Sets `max_attempts`.
        max_attempts: u64,
        /// Sets `initial_interval` in ms.
        initial_interval_ms: u64,
        /// Sets `backoff_coefficient`.
        backoff_coefficient: f64,
        /// Sets `max_interval` in ms.
        max_interval_ms: u64,
        /// Sets `jitter`.
        jitter: bool,
        /// Sets `non_retryable_errors`.
        non_retryable_errors: Vec<String>,
        /// Sets `on_exhaustion`.
        on_exhaustion: OnExhaustion,
        /// Sets `backoff_strategy`.
        backoff_strategy: Strategy,
    }

    /// Parses a partial policy document from JSON text.
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` listing every fault.
    ///
    /// ```
    /// let layer = ojs_retry::PartialPolicy::from_json(r#"{"jitter": false}"#).unwrap();
    /// assert_eq!(layer.jitter, Some(false));
    /// ```
    pub fn from_json(text: &str) -> Result<Self, Error> {
        let value = Value::from_json(text)
            .map_err(|m| Error::new(ErrorCode::RetryPolicyInvalid, "", m))?;
        Self::from_value(&value)
    }

    /// Reads a partial policy document from a [`Value`].
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` listing every fault.
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        let mut found = Faults::default();
        let partial = read_layer(value, &mut found, "");
        let mut faults = Faults::default();
        partial.check_into(found, "", &mut faults);
        faults.into_error(ErrorCode::RetryPolicyInvalid)?;
        Ok(partial)
    }

    /// Merges `other` over `self`: fields `other` sets win.
    #[must_use]
    pub fn merge(self, other: &Self) -> Self {
        self.merge_owned(other.clone())
    }

    /// [`PartialPolicy::merge`] taking `other` by value.
    fn merge_owned(mut self, other: Self) -> Self {
        macro_rules! over {
            ($($f:ident),*) => { $(if other.$f.is_some() { self.$f = other.$f; })* };
        }
        over!(
            max_attempts,
            initial_interval_ms,
            backoff_coefficient,
            max_interval_ms,
            jitter,
            non_retryable_errors,
            on_exhaustion,
            backoff_strategy
        );
        self
    }

    /// Resolves this layer over the defaults and validates the result.
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` listing every fault.
    pub fn build(&self) -> Result<RetryPolicy, Error> {
        RetryPolicy::from_partials(core::slice::from_ref(self))
    }

    /// Adds this layer's range faults to `found` (its type faults), sorts
    /// them into the spec's field order and appends them to `out`.
    fn check_into(&self, mut found: Faults, ctx: &str, out: &mut Faults) {
        self.check(&mut found, ctx);
        // A stable bucket pass over the few ranks instead of `sort_by_key`:
        // same order, and the wasm build links no generic stable sort
        // (~3.5 KB of drift sort and small-sort code for this one call).
        let ranks: Vec<usize> = found.0.iter().map(|f| field_rank(f.field.as_deref().unwrap_or(""))).collect();
        let mut slots: Vec<Option<Fault>> = found.0.into_iter().map(Some).collect();
        out.0.reserve(slots.len());
        for rank in 0..=MAX_RANK {
            for (r, slot) in ranks.iter().zip(slots.iter_mut()) {
                if *r == rank
                    && let Some(fault) = slot.take()
                {
                    out.0.push(fault);
                }
            }
        }
    }

    /// Range checks shared by documents and the setters.
    pub(crate) fn check(&self, faults: &mut Faults, ctx: &str) {
        if let Some(n) = self.max_attempts
            && n > MAX_MS
        {
            faults.push(
                "max_attempts",
                format!("{}expected a non-negative integer at most {}, found {}", ctx, MAX_MS, n),
            );
        }
        for (field, v) in [
            ("initial_interval", self.initial_interval_ms),
            ("max_interval", self.max_interval_ms),
        ] {
            if let Some(ms) = v
                && ms > MAX_MS
            {
                faults.push(
                    field,
                    format!("{}expected at most {} ms, found {} ms", ctx, MAX_MS, ms),
                );
            }
        }
        if self.initial_interval_ms == Some(0) {
            faults.push(
                "initial_interval",
                format!("{}expected a duration greater than zero, found PT0S", ctx),
            );
        }
        if let Some(c) = self.backoff_coefficient
            && !(c.is_finite() && c >= 1.0)
        {
            faults.push(
                "backoff_coefficient",
                format!("{}expected a finite number >= 1.0, found {}", ctx, show_f64(c)),
            );
        }
        if let Some(list) = &self.non_retryable_errors {
            for (i, s) in list.iter().enumerate() {
                if s.is_empty() {
                    faults.push(
                        format!("non_retryable_errors[{}]", i),
                        format!("{}expected a non-empty error type, found an empty string", ctx),
                    );
                }
            }
        }
    }
}

/// An immutable, validated, effective retry policy (spec §2).
///
/// ```
/// use ojs_retry::{RetryPolicy, JitterSource};
/// let p = RetryPolicy::default(); // §8
/// assert_eq!(p.max_attempts(), 3);
/// assert_eq!(p.delay(2, JitterSource::Uniform(0.5)).unwrap(), 2_000);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    max_attempts: u64,
    initial_interval_ms: u64,
    backoff_coefficient: f64,
    max_interval_ms: u64,
    jitter: bool,
    non_retryable_errors: Vec<String>,
    on_exhaustion: OnExhaustion,
    strategy: Strategy,
    backoff: Backoff,
    /// [`Backoff::capped_delays`], computed once.
    capped: CappedDelays,
    /// Set for a policy built from another system's configuration.
    preset: Option<alloc::boxed::Box<crate::presets::Preset>>,
}

/// The §8 defaults (RET-09): the default policy, and what fills the fields
/// no layer sets (without building a whole default policy each time).
struct Defaults {
    max_attempts: u64,
    initial_interval_ms: u64,
    backoff_coefficient: f64,
    max_interval_ms: u64,
    jitter: bool,
    on_exhaustion: OnExhaustion,
    strategy: Strategy,
}

impl Defaults {
    const OJS: Self = Self {
        max_attempts: 3,
        initial_interval_ms: 1_000,
        backoff_coefficient: 2.0,
        max_interval_ms: 300_000,
        jitter: true,
        on_exhaustion: OnExhaustion::Discard,
        strategy: Strategy::Exponential,
    };
}

impl Default for RetryPolicy {
    /// The §8 default policy (RET-09).
    fn default() -> Self {
        let d = Defaults::OJS;
        Self::assemble(
            d.max_attempts,
            d.initial_interval_ms,
            d.backoff_coefficient,
            d.max_interval_ms,
            d.jitter,
            Vec::new(),
            d.on_exhaustion,
            d.strategy,
        )
    }
}

impl RetryPolicy {
    // Inlined, the policy is built in the caller's result (parsing returned
    // it through a 224-byte copy otherwise). Not on wasm, where the three
    // copies cost more module bytes (~180) than the copy costs time.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        max_attempts: u64,
        initial_interval_ms: u64,
        backoff_coefficient: f64,
        max_interval_ms: u64,
        jitter: bool,
        non_retryable_errors: Vec<String>,
        on_exhaustion: OnExhaustion,
        strategy: Strategy,
    ) -> Self {
        let curve = match strategy {
            Strategy::None => Curve::Constant,
            Strategy::Linear => Curve::Linear,
            Strategy::Exponential => Curve::Exponential(backoff_coefficient),
            Strategy::Polynomial => Curve::Polynomial(backoff_coefficient),
        };
        let backoff = Backoff {
            initial_ms: initial_interval_ms,
            curve,
            offset_ms: 0,
            cap_ms: max_interval_ms,
            spread: if jitter {
                Spread::Proportional
            } else {
                Spread::None
            },
            rounding: Rounding::Nearest,
        };
        Self {
            max_attempts,
            initial_interval_ms,
            backoff_coefficient,
            max_interval_ms,
            jitter,
            non_retryable_errors,
            on_exhaustion,
            strategy,
            capped: backoff.capped_delays(),
            backoff,
            preset: None,
        }
    }

    /// This policy (the nearest plain translation) carrying a preset.
    pub(crate) fn into_preset(mut self, preset: alloc::boxed::Box<crate::presets::Preset>) -> Self {
        self.preset = Some(preset);
        self
    }

    pub(crate) fn preset_ref(&self) -> Option<&crate::presets::Preset> {
        self.preset.as_deref()
    }

    /// A preset policy: the nearest plain policy carrying the preset.
    fn from_preset((preset, plain): (crate::presets::Preset, crate::presets::Plain)) -> Self {
        Self::assemble(
            plain.max_attempts,
            plain.initial_interval_ms,
            plain.backoff_coefficient,
            plain.max_interval_ms,
            plain.jitter,
            plain.non_retryable_errors,
            plain.on_exhaustion,
            plain.strategy,
        )
        .into_preset(alloc::boxed::Box::new(preset))
    }

    /// A preset policy: `system` (one of
    /// [`PRESET_SYSTEMS`](crate::PRESET_SYSTEMS)) configured with that
    /// system's own options as a JSON object (`"{}"` for its defaults).
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` with field `preset.<option>` for
    /// every bad or unknown option, or `preset.system` for an unknown
    /// system.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// // Celery: `retry_backoff=True, retry_jitter=False`: 1, 2, 4 ... s.
    /// let p = RetryPolicy::preset_json("celery", r#"{"retry_backoff": true, "retry_jitter": false}"#)?;
    /// assert_eq!(p.delay(3, JitterSource::Uniform(0.0))?, 4_000);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn preset_json(system: &str, config_json: &str) -> Result<Self, Error> {
        crate::presets::from_json(system, config_json).map(Self::from_preset)
    }

    /// [`RetryPolicy::preset_json`] with the configuration as a [`Value`]
    /// (what the bindings pass for a JS object or a Python dict; `null`
    /// for the defaults).
    ///
    /// # Errors
    ///
    /// As [`RetryPolicy::preset_json`]; a `system` key inside the
    /// configuration must agree with `system`.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, Value};
    /// let p = RetryPolicy::preset("rq", &Value::from_json(r#"{"max": 3, "interval": [1, 5]}"#).unwrap())?;
    /// assert_eq!(p.to_json(), r#"{"preset":{"interval":[1,5],"max":3,"rule":"raised","system":"rq"}}"#);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn preset(system: &str, config: &Value) -> Result<Self, Error> {
        crate::presets::from_options(system, config).map(Self::from_preset)
    }

    /// The preset's system name, when this policy is a preset.
    ///
    /// ```
    /// let p = ojs_retry::RetryPolicy::preset_json("oban", "{}").unwrap();
    /// assert_eq!(p.preset_system(), Some("oban"));
    /// assert_eq!(ojs_retry::RetryPolicy::default().preset_system(), None);
    /// ```
    #[must_use]
    pub fn preset_system(&self) -> Option<&str> {
        self.preset.as_deref().map(crate::presets::Preset::system)
    }

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
        Self::from_layers(texts.iter().map(|t| Layer::Json(Cow::Borrowed(*t))).collect())
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
        Self::resolve(core::slice::from_ref(value), Faults::default())
    }

    /// Like [`RetryPolicy::from_value`] for several layers merged in order.
    ///
    /// # Errors
    ///
    /// As [`RetryPolicy::from_json_layers`].
    pub fn from_values(values: &[Value]) -> Result<Self, Error> {
        Self::resolve(values, Faults::default())
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

    fn resolve(values: &[Value], mut faults: Faults) -> Result<Self, Error> {
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
        let has = |v: &Value| {
            v.as_object()
                .is_some_and(|m| m.contains_key("preset"))
        };
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
                    faults.push(
                        key.clone(),
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
    pub fn from_partials(layers: &[PartialPolicy]) -> Result<Self, Error> {
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
        let interval_faults = faults
            .0
            .iter()
            .any(|f| matches!(f.field.as_deref(), Some("initial_interval" | "max_interval")));
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

    /// `max_attempts`: total attempts including the first (0 behaves as 1).
    #[must_use]
    pub fn max_attempts(&self) -> u64 {
        self.max_attempts
    }
    /// `initial_interval` in ms.
    #[must_use]
    pub fn initial_interval_ms(&self) -> u64 {
        self.initial_interval_ms
    }
    /// `backoff_coefficient`.
    #[must_use]
    pub fn backoff_coefficient(&self) -> f64 {
        self.backoff_coefficient
    }
    /// `max_interval` in ms.
    #[must_use]
    pub fn max_interval_ms(&self) -> u64 {
        self.max_interval_ms
    }
    /// `jitter`.
    #[must_use]
    pub fn jitter(&self) -> bool {
        self.jitter
    }
    /// `non_retryable_errors`.
    #[must_use]
    pub fn non_retryable_errors(&self) -> &[String] {
        &self.non_retryable_errors
    }
    /// `on_exhaustion`.
    #[must_use]
    pub fn on_exhaustion(&self) -> OnExhaustion {
        self.on_exhaustion
    }
    /// The backoff strategy (`backoff_strategy`, exponential when absent).
    #[must_use]
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }
    /// The number of retries the policy allows: `max(max_attempts, 1) − 1`.
    ///
    /// ```
    /// assert_eq!(ojs_retry::RetryPolicy::default().max_retries(), 2);
    /// ```
    #[must_use]
    pub fn max_retries(&self) -> u64 {
        self.max_attempts.saturating_sub(1)
    }

    /// The canonical effective policy as compact JSON: the §2.1 field order,
    /// canonical durations ([`crate::format_duration`]), and
    /// `backoff_strategy` only when it is not the default exponential (so
    /// that the output stays valid against the §14 schema whenever it can).
    #[must_use]
    pub fn to_json(&self) -> String {
        self.write(false)
    }

    /// [`RetryPolicy::to_json`], indented.
    #[must_use]
    pub fn to_json_pretty(&self) -> String {
        self.write(true)
    }

    fn write(&self, pretty: bool) -> String {
        let text = if pretty {
            serde_json::to_string_pretty(self)
        } else {
            serde_json::to_string(self)
        };
        // Serialising a policy cannot fail: every value is a string, an
        // integer, a finite double or a boolean.
        text.unwrap_or_default()
    }

    /// The delay in ms before retry `retry_number` (1-based; retry 1 follows
    /// the failure of attempt 1). See [`crate::backoff`] for every step.
    /// This is the backoff function alone: it does not look at
    /// `max_attempts` (use [`RetryPolicy::decide`] for that).
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: field `"retry_number"` outside
    /// `1..=2^53−1`, or field `"u"` for an explicit sample outside `[0, 1)`.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let p = RetryPolicy::from_json(r#"{"jitter": false}"#).unwrap();
    /// assert_eq!(p.delay(10, JitterSource::Seed(1)).unwrap(), 300_000); // 512 s capped at PT5M
    /// ```
    #[inline]
    pub fn delay(&self, retry_number: u64, jitter: JitterSource<'_>) -> Result<u64, Error> {
        check_retry_number(retry_number)?;
        self.delay_for(retry_number, &jitter)
    }

    /// Several delays with one jitter source, for batches: the source is
    /// checked, and a key hashed, once; then [`Delays::delay`] gives each
    /// retry's delay, equal to [`RetryPolicy::delay`] with that source.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`, field `"u"`, for an explicit sample
    /// outside `[0, 1)` — here, before any retry number is looked at (a
    /// single [`RetryPolicy::delay`] checks the retry number first).
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let p = RetryPolicy::from_json(r#"{"initial_interval": "PT1S"}"#).unwrap();
    /// let d = p.delays_with(JitterSource::Key("job-8f3a")).unwrap();
    /// for n in 1..=25 {
    ///     assert_eq!(d.delay(n).unwrap(), p.delay(n, JitterSource::Key("job-8f3a")).unwrap());
    /// }
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    #[inline]
    pub fn delays_with<'p>(&'p self, jitter: JitterSource<'p>) -> Result<Delays<'p>, Error> {
        let draw = if self.preset.is_some() {
            Draw::Each(jitter)
        } else if !self.backoff.uses_sample() {
            jitter.check()?;
            Draw::Fixed(Sample::MIN)
        } else {
            match jitter {
                JitterSource::Uniform(u) => Draw::Fixed(Sample::from_unit(u)?),
                JitterSource::Seed(seed) => Draw::Stream(seed),
                JitterSource::Key(key) => Draw::Stream(crate::jitter::fnv1a64(key.as_bytes())),
                #[cfg(feature = "std")]
                JitterSource::Entropy => Draw::Each(jitter),
            }
        };
        Ok(Delays { policy: self, draw })
    }

    /// The delays of a batch in place: each slot holds a retry number (as a
    /// double, as hosts with only doubles hold it) and receives its delay in
    /// ms, as [`Delays::fill`] gives them.
    ///
    /// # Errors
    ///
    /// As [`Delays::fill`].
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let mut slots = [1.0, 2.0, 3.0];
    /// RetryPolicy::default().delays_into(&mut slots, JitterSource::Uniform(0.5))?;
    /// assert_eq!(slots, [1_000.0, 2_000.0, 4_000.0]);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn delays_into(&self, slots: &mut [f64], jitter: JitterSource<'_>) -> Result<(), Error> {
        self.delays_with(jitter)?.fill(slots)
    }

    /// The delay of retry `n` (already checked), from the preset's formula
    /// when there is one.
    #[inline]
    pub(crate) fn delay_for(&self, n: u64, jitter: &JitterSource<'_>) -> Result<u64, Error> {
        if let Some(p) = &self.preset {
            return p.delay(n, jitter);
        }
        let sample = self.sample(n, jitter)?;
        Ok(self.backoff.delay_capped(n, sample, &self.capped))
    }

    /// The schedule of retries `1..=count`: raw, capped, the jitter range
    /// and, when a source is given, the drawn delay and the running total.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: field `"count"` above
    /// [`MAX_SCHEDULE_ROWS`], or a bad explicit sample.
    ///
    /// ```
    /// use ojs_retry::RetryPolicy;
    /// let p = RetryPolicy::from_json(r#"{"initial_interval":"PT10S"}"#).unwrap();
    /// let rows = p.schedule(6, None).unwrap();
    /// // §5.3, retry 6: capped at 300 s, jitter range [150 s, 300 s].
    /// assert_eq!((rows[5].raw_ms, rows[5].capped_ms, rows[5].min_ms, rows[5].max_ms), (320_000, 300_000, 150_000, 300_000));
    /// ```
    pub fn schedule(
        &self,
        count: u64,
        jitter: Option<JitterSource<'_>>,
    ) -> Result<Vec<ScheduleRow>, Error> {
        if count > MAX_SCHEDULE_ROWS {
            return Err(Error::arg(
                "count",
                format!("expected at most {} rows, found {}", MAX_SCHEDULE_ROWS, count),
            ));
        }
        if let Some(j) = &jitter {
            j.check()?;
        }
        if let Some(p) = &self.preset {
            return p.schedule(count, jitter.as_ref());
        }
        let mut rows = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut total: u64 = 0;
        for n in 1..=count {
            let sample = match &jitter {
                Some(j) => Some(self.sample(n, j)?),
                None => None,
            };
            let mut row = self.backoff.row(n, sample);
            row.accumulate(&mut total);
            rows.push(row);
        }
        Ok(rows)
    }

    /// The sample for retry `n`, drawing only when jitter is on.
    #[inline]
    pub(crate) fn sample(&self, n: u64, jitter: &JitterSource<'_>) -> Result<Sample, Error> {
        if self.backoff.uses_sample() {
            jitter.sample(n)
        } else {
            jitter.check().map(|()| Sample::MIN)
        }
    }
}

/// Delays of one policy with one jitter source
/// ([`RetryPolicy::delays_with`]).
#[derive(Debug, Clone, Copy)]
pub struct Delays<'p> {
    policy: &'p RetryPolicy,
    draw: Draw<'p>,
}

/// Where each retry's sample comes from, with the per-source work done.
#[derive(Debug, Clone, Copy)]
enum Draw<'p> {
    /// The same sample for every retry (an explicit `u`, or no jitter).
    Fixed(Sample),
    /// SplitMix64 from this seed (a seed, or a key's hash).
    Stream(u64),
    /// The source itself, drawn per retry (presets, OS entropy).
    Each(JitterSource<'p>),
}

impl Delays<'_> {
    /// The delay in ms before retry `retry_number`, as
    /// [`RetryPolicy::delay`] gives it.
    ///
    /// # Errors
    ///
    /// `validation.invalid_argument`: field `"retry_number"` outside
    /// `1..=2^53−1` (or what the source reports when it is drawn per retry).
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let p = RetryPolicy::from_json(r#"{"jitter": false}"#).unwrap();
    /// let d = p.delays_with(JitterSource::Seed(1)).unwrap();
    /// assert_eq!(d.delay(10).unwrap(), 300_000);
    /// assert!(d.delay(0).is_err());
    /// ```
    #[inline]
    pub fn delay(&self, retry_number: u64) -> Result<u64, Error> {
        check_retry_number(retry_number)?;
        let p = self.policy;
        let sample = match self.draw {
            Draw::Fixed(s) => s,
            Draw::Stream(seed) => Sample::from_u64(crate::jitter::splitmix64(seed, retry_number)),
            Draw::Each(ref j) => return p.delay_for(retry_number, j),
        };
        Ok(p.backoff.delay_capped(retry_number, sample, &p.capped))
    }

    /// The delays of many retries in place: each slot holds a retry number
    /// as a double (as [`crate::uint_from_f64`] takes it) and is overwritten with that retry's delay in ms (exact:
    /// at most 2^53 − 1). Each answer equals [`Delays::delay`]'s.
    ///
    /// # Errors
    ///
    /// The first slot that is not a valid retry number stops the batch with
    /// the error [`crate::uint_from_f64`] or [`Delays::delay`] gives
    /// for it (field `"retry_number"`); the slots before it hold their
    /// delays, it and the later ones are unchanged.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// let p = RetryPolicy::default();
    /// let mut slots = [1.0, 2.0, 10.0];
    /// p.delays_with(JitterSource::Uniform(0.5))?.fill(&mut slots)?;
    /// assert_eq!(slots, [1_000.0, 2_000.0, 300_000.0]);
    /// let mut bad = [1.0, 0.5, 3.0];
    /// let e = p.delays_with(JitterSource::Uniform(0.5))?.fill(&mut bad).unwrap_err();
    /// assert_eq!((e.field(), bad), (Some("retry_number"), [1_000.0, 0.5, 3.0]));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn fill(&self, slots: &mut [f64]) -> Result<(), Error> {
        for slot in slots {
            let n = uint_from_f64("retry_number", *slot)?;
            let d = self.delay(n)?;
            // d ≤ 2^53 − 1: exact as a double.
            #[allow(clippy::cast_precision_loss)]
            let d = d as f64;
            *slot = d;
        }
        Ok(())
    }
}

pub(crate) fn check_retry_number(n: u64) -> Result<(), Error> {
    if n == 0 || n > MAX_MS {
        return Err(bad_retry_number(n));
    }
    Ok(())
}

fn bad_retry_number(n: u64) -> Error {
    Error::arg(
        "retry_number",
        format!("expected a retry number between 1 and {}, found {}", MAX_MS, n),
    )
}

/// The largest value [`field_rank`] returns (unknown fields).
const MAX_RANK: usize = FIELDS.len() + 1;

/// Sort key of a fault: the document itself, then the spec's field order,
/// then unknown fields (already in name order).
fn field_rank(field: &str) -> usize {
    if field.is_empty() {
        return 0;
    }
    // A byte loop, not `split('[')`: its searcher is 0.4 KB of wasm.
    let cut = field.bytes().position(|b| b == b'[');
    let name = cut.and_then(|i| field.get(..i)).unwrap_or(field);
    FIELDS
        .iter()
        .position(|f| *f == name)
        .map_or(FIELDS.len().saturating_add(1), |i| i.saturating_add(1))
}

fn layer_ctx(i: usize, n: usize) -> String {
    if n > 1 {
        format!("layer {}: ", i.saturating_add(1))
    } else {
        String::new()
    }
}

impl Serialize for RetryPolicy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(p) = &self.preset {
            let mut st = s.serialize_struct("RetryPolicy", 1)?;
            st.serialize_field("preset", &**p)?;
            return st.end();
        }
        let extra = usize::from(self.strategy != Strategy::Exponential);
        let mut st = s.serialize_struct("RetryPolicy", extra.saturating_add(7))?;
        st.serialize_field("max_attempts", &self.max_attempts)?;
        st.serialize_field(
            "initial_interval",
            &duration::format_ms(self.initial_interval_ms),
        )?;
        st.serialize_field("backoff_coefficient", &self.backoff_coefficient)?;
        st.serialize_field("max_interval", &duration::format_ms(self.max_interval_ms))?;
        st.serialize_field("jitter", &self.jitter)?;
        st.serialize_field("non_retryable_errors", &self.non_retryable_errors)?;
        st.serialize_field("on_exhaustion", self.on_exhaustion.as_str())?;
        if extra == 1 {
            st.serialize_field("backoff_strategy", self.strategy.as_str())?;
        }
        st.end()
    }
}

/// A policy embedded in the caller's own serde data, read and validated as
/// [`RetryPolicy::from_deserializer`] reads it; an error's message is the
/// engine error's one line.
impl<'de> serde::Deserialize<'de> for RetryPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::from_deserializer(d).map_err(serde::de::Error::custom)
    }
}

fn read_layer(value: &Value, faults: &mut Faults, ctx: &str) -> PartialPolicy {
    let mut p = PartialPolicy::default();
    let Value::Object(map) = value else {
        faults.push("", format!("{}expected a JSON object, found {}", ctx, Value::describe(value)));
        return p;
    };
    let get = |name: &str| map.get(name);

    if let Some(v) = get("max_attempts") {
        match read_uint(v) {
            Ok(n) => p.max_attempts = Some(n),
            Err(m) => faults.push("max_attempts", format!("{}{}", ctx, m)),
        }
    }
    for (field, slot) in [
        ("initial_interval", &mut p.initial_interval_ms),
        ("max_interval", &mut p.max_interval_ms),
    ] {
        if let Some(v) = get(field) {
            match v {
                Value::String(s) => match duration::parse_ms(s) {
                    Ok(ms) => *slot = Some(ms),
                    Err(m) => faults.push(field, format!("{}{}", ctx, m)),
                },
                other => faults.push(
                    field,
                    format!("{}expected an ISO 8601 duration string such as \"PT1S\", found {}", ctx, Value::describe(other)),
                ),
            }
        }
    }
    if let Some(v) = get("backoff_coefficient") {
        match v.as_f64() {
            Some(c) if v.is_number() => p.backoff_coefficient = Some(c),
            _ => faults.push(
                "backoff_coefficient",
                format!("{}expected a number >= 1.0, found {}", ctx, Value::describe(v)),
            ),
        }
    }
    if let Some(v) = get("jitter") {
        match v {
            Value::Bool(b) => p.jitter = Some(*b),
            other => faults.push(
                "jitter",
                format!("{}expected true or false, found {}", ctx, Value::describe(other)),
            ),
        }
    }
    if let Some(v) = get("non_retryable_errors") {
        match v {
            Value::Array(items) => {
                let mut list = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => list.push(s.clone()),
                        other => faults.push(
                            format!("non_retryable_errors[{}]", i),
                            format!("{}expected an error type string, found {}", ctx, Value::describe(other)),
                        ),
                    }
                }
                p.non_retryable_errors = Some(list);
            }
            other => faults.push(
                "non_retryable_errors",
                format!("{}expected an array of error type strings, found {}", ctx, Value::describe(other)),
            ),
        }
    }
    if let Some(v) = get("on_exhaustion") {
        match v.as_str().and_then(OnExhaustion::parse) {
            Some(o) => p.on_exhaustion = Some(o),
            None => faults.push(
                "on_exhaustion",
                format!("{}expected \"discard\" or \"dead_letter\", found {}", ctx, Value::describe(v)),
            ),
        }
    }
    if let Some(v) = get("backoff_strategy") {
        match v.as_str().and_then(Strategy::parse) {
            Some(s) => p.backoff_strategy = Some(s),
            None => faults.push(
                "backoff_strategy",
                format!("{}expected \"exponential\", \"polynomial\", \"linear\" or \"none\" (alias \"constant\"), found {}", ctx, Value::describe(v)),
            ),
        }
    }
    // The map is ordered by key, so unknown fields come out sorted.
    for key in map.keys().filter(|k| !FIELDS.contains(&k.as_str())) {
        faults.push(
            key.clone(),
            format!("{}unknown field {}; expected one of {}", ctx, quote(key), FIELDS.join(", ")),
        );
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check_into`'s bucket pass orders faults exactly as a stable sort by
    /// field rank would: spec fields in spec order, indexed fields
    /// (`non_retryable_errors[2]`) with their field, the document's own
    /// faults first, unknown fields last, ties in their original order.
    #[test]
    fn check_into_orders_like_a_stable_sort() {
        let fields = [
            "zzz",
            "jitter",
            "",
            "non_retryable_errors[1]",
            "max_attempts",
            "aaa",
            "non_retryable_errors[0]",
            "backoff_strategy",
            "",
            "initial_interval",
            "max_attempts",
            "on_exhaustion",
            "max_interval",
            "backoff_coefficient",
            "zzz",
        ];
        let mut found = Faults::default();
        for (i, field) in fields.iter().enumerate() {
            found.push(*field, alloc::format!("fault {i}"));
        }
        let mut expected = found.0.clone();
        expected.sort_by_key(|f| field_rank(f.field.as_deref().unwrap_or("")));
        let mut out = Faults::default();
        out.push("earlier", "kept in front");
        PartialPolicy::default().check_into(found, "", &mut out);
        let (first, rest) = out.0.split_first().unwrap();
        assert_eq!(first.field.as_deref(), Some("earlier"));
        assert_eq!(rest, expected.as_slice());
    }
}
