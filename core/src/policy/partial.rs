//! Partial policy layers: what one document sets, read and checked
//! field by field (§2.1, §11), before the layers merge.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{OnExhaustion, RetryPolicy};
use crate::backoff::Strategy;
use crate::duration::{self, MAX_MS};
use crate::error::{Error, ErrorCode, Faults, quote, show_f64};
use crate::value::{Value, read_uint};

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
    ///
    /// ```
    /// use ojs_retry::{PartialPolicy, RetryPolicy};
    /// let layer = PartialPolicy::new();
    /// assert_eq!(layer.max_attempts, None);
    /// assert_eq!(layer.build()?, RetryPolicy::default()); // all §8 defaults
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
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
        let value =
            Value::from_json(text).map_err(|m| Error::new(ErrorCode::RetryPolicyInvalid, "", m))?;
        Self::from_value(&value)
    }

    /// Reads a partial policy document from a [`Value`].
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` listing every fault.
    ///
    /// ```
    /// use ojs_retry::{PartialPolicy, Value};
    /// let v = Value::from_json(r#"{"max_attempts": 5, "jitter": false}"#).unwrap();
    /// let layer = PartialPolicy::from_value(&v)?;
    /// assert_eq!((layer.max_attempts, layer.jitter, layer.initial_interval_ms), (Some(5), Some(false), None));
    /// let bad = Value::from_json(r#"{"max_attempts": "5"}"#).unwrap();
    /// assert_eq!(PartialPolicy::from_value(&bad).unwrap_err().field(), Some("max_attempts"));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        let mut found = Faults::default();
        let partial = read_layer(value, &mut found, "");
        let mut faults = Faults::default();
        partial.check_into(found, "", &mut faults);
        faults.into_error(ErrorCode::RetryPolicyInvalid)?;
        Ok(partial)
    }

    /// Merges `other` over `self`: fields `other` sets win.
    ///
    /// ```
    /// use ojs_retry::PartialPolicy;
    /// let queue = PartialPolicy::new().max_attempts(10).jitter(false);
    /// let merged = queue.merge(&PartialPolicy::new().max_attempts(4));
    /// assert_eq!((merged.max_attempts, merged.jitter), (Some(4), Some(false)));
    /// ```
    #[must_use]
    pub fn merge(self, other: &Self) -> Self {
        self.merge_owned(other.clone())
    }

    /// [`PartialPolicy::merge`] taking `other` by value.
    pub(super) fn merge_owned(mut self, other: Self) -> Self {
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
    ///
    /// ```
    /// use ojs_retry::PartialPolicy;
    /// assert_eq!(PartialPolicy::new().max_attempts(5).build()?.max_attempts(), 5);
    /// // PT10M alone exceeds the default max_interval (PT5M).
    /// let err = PartialPolicy::new().initial_interval_ms(600_000).build().unwrap_err();
    /// assert_eq!(err.field(), Some("max_interval"));
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn build(&self) -> Result<RetryPolicy, Error> {
        RetryPolicy::from_partials(core::slice::from_ref(self))
    }

    /// Adds this layer's range faults to `found` (its type faults), sorts
    /// them into the spec's field order and appends them to `out`.
    pub(super) fn check_into(&self, mut found: Faults, ctx: &str, out: &mut Faults) {
        self.check(&mut found, ctx);
        let mut faults = found.0;
        faults.sort_by_key(|f| field_rank(f.field.as_deref()));
        out.0.extend(faults);
    }

    /// Range checks shared by documents and the setters.
    pub(crate) fn check(&self, faults: &mut Faults, ctx: &str) {
        if let Some(n) = self.max_attempts
            && n > MAX_MS
        {
            faults.push(
                "max_attempts",
                format!(
                    "{}expected a non-negative integer at most {}, found {}",
                    ctx, MAX_MS, n
                ),
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
                format!(
                    "{}expected a finite number >= 1.0, found {}",
                    ctx,
                    show_f64(c)
                ),
            );
        }
        if let Some(list) = &self.non_retryable_errors {
            for (i, s) in list.iter().enumerate() {
                if s.is_empty() {
                    faults.push(
                        format!("non_retryable_errors[{}]", i),
                        format!(
                            "{}expected a non-empty error type, found an empty string",
                            ctx
                        ),
                    );
                }
            }
        }
    }
}

/// Sort key of a fault: the document itself, then the spec's field order,
/// then unknown fields (already in name order).
pub(super) fn field_rank(field: Option<&str>) -> usize {
    let Some(name) = field else {
        return 0;
    };
    FIELDS
        .iter()
        .position(|f| *f == name)
        .map_or(FIELDS.len().saturating_add(1), |i| i.saturating_add(1))
}

pub(super) fn read_layer(value: &Value, faults: &mut Faults, ctx: &str) -> PartialPolicy {
    let Value::Object(map) = value else {
        let found = Value::describe(value);
        faults.push("", format!("{ctx}expected a JSON object, found {found}"));
        return PartialPolicy::default();
    };
    let mut f = Fields { map, faults, ctx };
    let p = PartialPolicy {
        max_attempts: f.read("max_attempts", read_uint),
        initial_interval_ms: f.read("initial_interval", read_duration),
        backoff_coefficient: f.read("backoff_coefficient", |v| {
            v.as_f64().ok_or_else(|| expected("a number >= 1.0", v))
        }),
        max_interval_ms: f.read("max_interval", read_duration),
        jitter: f.read("jitter", |v| {
            v.as_bool().ok_or_else(|| expected("true or false", v))
        }),
        non_retryable_errors: None,
        on_exhaustion: f.read("on_exhaustion", |v| {
            let what = "\"discard\" or \"dead_letter\"";
            v.as_str()
                .and_then(OnExhaustion::parse)
                .ok_or_else(|| expected(what, v))
        }),
        backoff_strategy: f.read("backoff_strategy", |v| {
            let what =
                "\"exponential\", \"polynomial\", \"linear\" or \"none\" (alias \"constant\")";
            v.as_str()
                .and_then(Strategy::parse)
                .ok_or_else(|| expected(what, v))
        }),
    };
    let p = PartialPolicy {
        non_retryable_errors: map
            .get("non_retryable_errors")
            .and_then(|v| read_patterns(v, faults, ctx)),
        ..p
    };
    // The map is ordered by key, so unknown fields come out sorted.
    for key in map.keys().filter(|k| !FIELDS.contains(&k.as_str())) {
        let expected = FIELDS.join(", ");
        let message = format!(
            "{ctx}unknown field {}{}; expected one of {expected}",
            quote(key),
            crate::describe::did_you_mean(key, &FIELDS)
        );
        faults.push_key(key, message);
    }
    p
}

/// The fields of one layer, each read on its own: a fault goes to
/// `faults` at the field's name, prefixed with the layer's context.
struct Fields<'a> {
    map: &'a crate::value::Map,
    faults: &'a mut Faults,
    ctx: &'a str,
}

impl Fields<'_> {
    fn read<T>(&mut self, name: &str, read: impl Fn(&Value) -> Result<T, String>) -> Option<T> {
        match read(self.map.get(name)?) {
            Ok(t) => Some(t),
            Err(m) => {
                self.faults.push(name, format!("{}{m}", self.ctx));
                None
            }
        }
    }
}

fn expected(what: &str, v: &Value) -> String {
    format!("expected {what}, found {}", v.describe())
}

fn read_duration(v: &Value) -> Result<u64, String> {
    let text = v
        .as_str()
        .ok_or_else(|| expected("an ISO 8601 duration string such as \"PT1S\"", v))?;
    duration::parse_ms(text)
}

/// `non_retryable_errors`: every entry that is not a string is a fault of
/// its own; the strings read are kept.
fn read_patterns(v: &Value, faults: &mut Faults, ctx: &str) -> Option<Vec<String>> {
    let Some(items) = v.as_array() else {
        let found = v.describe();
        let message = format!("{ctx}expected an array of error type strings, found {found}");
        faults.push("non_retryable_errors", message);
        return None;
    };
    let mut list = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(s) => list.push(s.into()),
            None => faults.push(
                format!("non_retryable_errors[{i}]"),
                format!(
                    "{ctx}expected an error type string, found {}",
                    item.describe()
                ),
            ),
        }
    }
    Some(list)
}
