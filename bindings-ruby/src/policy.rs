//! `RetryPolicy`, `Decision` and `ScheduleRow`: immutable objects wrapping
//! the core's types.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use magnus::prelude::*;
use magnus::scan_args::{get_kwargs, scan_args};
use magnus::value::{Id, LazyId};
use magnus::{Error, RArray, RHash, RString, Ruby, Symbol, TryConvert, Value, r_hash::ForEach};
use ojs_retry::{HandlerCode, Jitter, Layer, Reason, Value as Doc};

use crate::args;
use crate::convert::{Keys, serialize};
use crate::errors::{CoreResult, bad_argument};
use crate::read::with_reader;

pub(crate) fn hash_of(x: &impl Hash) -> i64 {
    let mut h = DefaultHasher::new();
    x.hash(&mut h);
    // Ruby's `hash` is an Integer; the bits are what matter.
    i64::from_ne_bytes(h.finish().to_ne_bytes())
}

/// An immutable, validated, effective retry policy (spec §2).
///
/// `RetryPolicy.new(policy = nil, **fields)`: `policy` is JSON text (a
/// `String`), a `Hash` or `nil`; keyword arguments are document fields
/// layered over it (defaults ← policy ← fields), then the result is
/// validated.
#[magnus::wrap(class = "OjsRetry::RetryPolicy", free_immediately, size)]
pub(crate) struct RetryPolicy {
    pub(crate) inner: ojs_retry::RetryPolicy,
    /// The canonical JSON, made on first use (`==`, `hash`, `to_json`):
    /// building a policy does not pay for serialising it.
    json: OnceLock<String>,
}

impl RetryPolicy {
    pub(crate) fn wrap(inner: ojs_retry::RetryPolicy) -> Self {
        Self {
            inner,
            json: OnceLock::new(),
        }
    }

    fn json(&self) -> &str {
        self.json.get_or_init(|| self.inner.to_json())
    }

    fn build(ruby: &Ruby, layers: Vec<Layer<'_>>) -> Result<Self, Error> {
        ojs_retry::RetryPolicy::from_layers(layers)
            .rb(ruby)
            .map(Self::wrap)
    }

    /// `RetryPolicy.new(policy = nil, **fields)`.
    pub(crate) fn new(ruby: &Ruby, args: &[Value]) -> Result<Self, Error> {
        let args = scan_args::<(), (Option<Value>,), (), (), RHash, ()>(args)?;
        let (policy,) = args.optional;
        let mut layers = Vec::with_capacity(2);
        if let Some(p) = policy.filter(|p| !p.is_nil()) {
            layers.push(args::layer(ruby, p)?);
        }
        if let Some(fields) = Some(args.keywords).filter(|k| !k.is_empty()) {
            layers.push(with_reader(ruby, |r| {
                Ok(Layer::read(r.value(fields.as_value())))
            })?);
        }
        Self::build(ruby, layers)
    }

    /// `RetryPolicy.merge(*layers)`: defaults ← first ← … ← last.
    pub(crate) fn merge(ruby: &Ruby, layers: &[Value]) -> Result<Self, Error> {
        ojs_retry::limits::check_argument_len("layers", layers.len()).rb(ruby)?;
        let layers = layers
            .iter()
            .map(|&l| args::layer(ruby, l))
            .collect::<Result<Vec<_>, _>>()?;
        Self::build(ruby, layers)
    }

    /// `RetryPolicy.from_json(text)`: one JSON text.
    pub(crate) fn from_json(ruby: &Ruby, text: Value) -> Result<Self, Error> {
        if RString::from_value(text).is_none() {
            return Err(bad_argument(
                "text",
                format!("expected a String, found {}", args::describe(text)),
            ))
            .rb(ruby);
        }
        Self::build(ruby, vec![args::layer(ruby, text)?])
    }

    /// `RetryPolicy.preset(system, options = nil, **options)`: `system`'s
    /// own retry configuration, evaluated exactly as that system does.
    pub(crate) fn preset(ruby: &Ruby, args: &[Value]) -> Result<Self, Error> {
        let args = scan_args::<(Value,), (Option<Value>,), (), (), RHash, ()>(args)?;
        let (system,) = args.required;
        let (options,) = args.optional;
        let name = args::text(ruby, system, "system")?;
        let kw = Some(args.keywords).filter(|k| !k.is_empty());
        let opts = match (options.filter(|o| !o.is_nil()), kw) {
            (Some(o), None) => o,
            (None, Some(k)) => k.as_value(),
            (None, None) => ruby.hash_new().as_value(),
            (Some(o), Some(k)) => merged_options(ruby, o, k)?,
        };
        with_reader(ruby, |r| match Doc::read(r.value(opts)) {
            Ok(v) => ojs_retry::RetryPolicy::preset(&name, &v),
            // The options as a preset document, for the core's reader: the
            // fault it finds there has its path (`preset.backoff`).
            Err(_) => {
                let doc = ruby.hash_new();
                doc.aset("preset", opts)
                    .map_err(|e| ojs_retry::Error::invalid_argument("options", e.to_string()))?;
                ojs_retry::RetryPolicy::from_deserializer(r.value(doc.as_value()))
            }
        })
        .map(Self::wrap)
    }

    pub(crate) fn preset_system(&self) -> Option<&str> {
        self.inner.preset_system()
    }
    pub(crate) fn max_attempts(&self) -> u64 {
        self.inner.max_attempts()
    }
    pub(crate) fn initial_interval_ms(&self) -> u64 {
        self.inner.initial_interval_ms()
    }
    pub(crate) fn backoff_coefficient(&self) -> f64 {
        self.inner.backoff_coefficient()
    }
    pub(crate) fn max_interval_ms(&self) -> u64 {
        self.inner.max_interval_ms()
    }
    pub(crate) fn jitter(&self) -> bool {
        self.inner.jitter()
    }
    /// A frozen `Array` of frozen `String`s.
    pub(crate) fn non_retryable_errors(ruby: &Ruby, rb_self: &Self) -> RArray {
        let a = ruby.ary_from_iter(
            rb_self
                .inner
                .non_retryable_errors()
                .iter()
                .map(|s| RString::new_frozen(ruby.str_new(s))),
        );
        a.freeze();
        a
    }
    pub(crate) fn on_exhaustion(&self) -> &'static str {
        self.inner.on_exhaustion().as_str()
    }
    pub(crate) fn backoff_strategy(&self) -> &'static str {
        self.inner.strategy().as_str()
    }
    pub(crate) fn max_retries(&self) -> u64 {
        self.inner.max_retries()
    }
    /// `to_json(*)`: `JSON.generate` passes its state, which the canonical
    /// text does not need.
    pub(crate) fn to_json(&self, _state: &[Value]) -> &str {
        self.json()
    }
    /// The canonical effective policy as a `Hash` with `String` keys:
    /// `JSON.parse(policy.to_json)`.
    pub(crate) fn to_h(ruby: &Ruby, rb_self: &Self) -> Result<Value, Error> {
        serialize(ruby, &rb_self.inner, Keys::Strings)
    }

    /// `delay(retry_number, u: nil, seed: nil, key: nil)`: the delay in ms
    /// before retry `retry_number`; ignores `max_attempts`. No jitter
    /// keyword draws from OS entropy.
    pub(crate) fn delay(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<u64, Error> {
        let (n, jitter) = counted(ruby, args, "retry_number")?;
        let j = jitter.unwrap_or(Jitter::Entropy);
        rb_self.inner.delay(n, j.source()).rb(ruby)
    }

    /// `schedule(count, u: nil, seed: nil, key: nil)`: rows for retries
    /// `1..count`; without a jitter source `delay_ms` is `nil`.
    pub(crate) fn schedule(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<RArray, Error> {
        let (n, jitter) = counted(ruby, args, "count")?;
        let rows = rb_self
            .inner
            .schedule(n, jitter.as_ref().map(Jitter::source))
            .rb(ruby)?;
        let out = ruby.ary_new_capa(rows.len());
        for inner in rows {
            out.push(ScheduleRow { inner })?;
        }
        Ok(out)
    }

    /// `decide(attempt, type:, code:, timed_out:, message:, details:, now:,
    /// u:, seed:, key:)`: retry, discard or dead-letter after attempt
    /// `attempt` (1-based) failed. `now`: epoch ms (default: the clock).
    pub(crate) fn decide(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<Decision, Error> {
        let args = scan_args::<(Value,), (), (), (), RHash, ()>(args)?;
        let (attempt,) = args.required;
        let given = attempt;
        let attempt = args::uint(ruby, attempt, "attempt")?;
        let kw = args.keywords;
        let (failure, options) = split_failure(&failure_kw(ruby, kw)?);
        let failure = args::failure(ruby, &failure, attempt, Some(given))?;
        let opts = args::options(ruby, &options)?;
        let now = opts.now.map_or_else(|| crate::clock_ms(ruby), Ok)?;
        let inner = rb_self
            .inner
            .decide(&failure, now, opts.jitter_or_entropy())
            .rb(ruby)?;
        Ok(Decision { inner })
    }

    pub(crate) fn eq(&self, other: Value) -> bool {
        <&Self>::try_convert(other).is_ok_and(|o| o.json() == self.json())
    }
    pub(crate) fn hash(&self) -> i64 {
        hash_of(&self.json())
    }
    pub(crate) fn inspect(&self) -> String {
        format!("#<OjsRetry::RetryPolicy {}>", self.json())
    }
}

/// Options and keywords merged, the keywords winning; a `Symbol` keyword
/// replaces the option of the same name in either spelling. Options that
/// are not a readable `Hash` are reported as if they came alone.
fn merged_options(ruby: &Ruby, options: Value, kw: RHash) -> Result<Value, Error> {
    let Some(h) = RHash::from_value(options) else {
        return Ok(options);
    };
    let readable = with_reader(ruby, |r| Ok(Doc::read(r.value(options)).is_ok()))?;
    if !readable {
        return Ok(options);
    }
    let all = ruby.hash_new();
    all.update(h)?;
    kw.foreach(|k: Value, v: Value| {
        // A keyword (a Symbol, or a String from `**{"retry" => 5}`)
        // replaces the option in either spelling.
        let name = match Symbol::from_value(k) {
            Some(sym) => Some(sym.name()?.into_owned()),
            None => RString::from_value(k).map(RString::to_string).transpose()?,
        };
        if let Some(name) = name {
            all.delete::<_, Value>(ruby.to_symbol(&name))?;
            all.delete::<_, Value>(name)?;
        }
        all.aset(k, v)?;
        Ok(ForEach::Continue)
    })?;
    Ok(all.as_value())
}

/// The positional count and the jitter keywords of `delay` / `schedule`.
fn counted(ruby: &Ruby, args: &[Value], field: &str) -> Result<(u64, Option<Jitter>), Error> {
    let args = scan_args::<(Value,), (), (), (), RHash, ()>(args)?;
    let (n,) = args.required;
    let n = args::uint(ruby, n, field)?;
    let kw = args.keywords;
    let (u, seed, key) = jitter_kw(ruby, kw)?;
    let opts = args::options(ruby, &[("u", u), ("seed", seed), ("key", key)])?;
    Ok((n, opts.jitter))
}

pub(crate) type JitterKw = (Option<Value>, Option<Value>, Option<Value>);

/// The failure's keywords, then `now` and the jitter source: interned
/// once (a name looked up on every call costs more than the engine's work).
static FAILURE_KW: [LazyId; 9] = [
    LazyId::new("type"),
    LazyId::new("code"),
    LazyId::new("timed_out"),
    LazyId::new("message"),
    LazyId::new("details"),
    LazyId::new("now"),
    LazyId::new("u"),
    LazyId::new("seed"),
    LazyId::new("key"),
];

/// The failure keyword past the first nine.
static ANCESTORS_KW: [LazyId; 1] = [LazyId::new("ancestors")];

/// The jitter keywords of `delay`, `schedule` and `jitter_sample`.
static JITTER_KW: [LazyId; 3] = [LazyId::new("u"), LazyId::new("seed"), LazyId::new("key")];

/// Names interned once, as `get_kwargs` takes them.
pub(crate) fn ids<const N: usize>(ruby: &Ruby, names: &[LazyId; N]) -> [Id; N] {
    names.each_ref().map(|l| LazyId::get_inner_with(l, ruby))
}

/// The failure keywords of `decide` / `record_failure`, and `now`, `u`,
/// `seed`, `key`.
pub(crate) fn failure_kw(ruby: &Ruby, kw: RHash) -> Result<FailureKw, Error> {
    let none: [Id; 0] = [];
    // magnus reads at most nine optional keywords at a time: `ancestors`
    // is read from the rest.
    let first = get_kwargs::<_, (), FailureKw9, RHash>(kw, &none, &ids(ruby, &FAILURE_KW))?;
    let more =
        get_kwargs::<_, (), (Option<Value>,), ()>(first.splat, &none, &ids(ruby, &ANCESTORS_KW))?;
    Ok((first.optional, more.optional.0))
}

/// The jitter keywords `u`, `seed`, `key`.
pub(crate) fn jitter_kw(ruby: &Ruby, kw: RHash) -> Result<JitterKw, Error> {
    let none: [Id; 0] = [];
    Ok(get_kwargs::<_, (), JitterKw, ()>(kw, &none, &ids(ruby, &JITTER_KW))?.optional)
}

/// [`FAILURE_KW`]'s values, and `ancestors`.
pub(crate) type FailureKw = (FailureKw9, Option<Value>);

pub(crate) type FailureKw9 = (
    Option<Value>,
    Option<Value>,
    Option<Value>,
    Option<Value>,
    Option<Value>,
    Option<Value>,
    Option<Value>,
    Option<Value>,
    Option<Value>,
);

type Named = (&'static str, Option<Value>);

/// [`FAILURE_KW`]'s values as the failure's fields and the call's options.
pub(crate) fn split_failure(kw: &FailureKw) -> ([Named; 6], [Named; 4]) {
    let ((r#type, code, timed_out, message, details, now, u, seed, key), ancestors) = *kw;
    (
        [
            ("type", r#type),
            ("ancestors", ancestors),
            ("code", code),
            ("timed_out", timed_out),
            ("message", message),
            ("details", details),
        ],
        [("now", now), ("u", u), ("seed", seed), ("key", key)],
    )
}

/// What to do after a failure (immutable): `action` is `"retry"`,
/// `"discard"` or `"dead_letter"`; `reason` says why.
#[magnus::wrap(class = "OjsRetry::Decision", free_immediately, size)]
pub(crate) struct Decision {
    pub(crate) inner: ojs_retry::Decision,
}

impl Decision {
    pub(crate) fn action(&self) -> &'static str {
        self.inner.action.as_str()
    }
    pub(crate) fn reason(&self) -> &'static str {
        self.inner.reason.as_str()
    }
    pub(crate) fn handler_code(&self) -> Option<&'static str> {
        self.inner.handler_code.map(HandlerCode::as_str)
    }
    pub(crate) fn matched_pattern(&self) -> Option<&str> {
        match &self.inner.reason {
            Reason::NonRetryable { pattern } => pattern.as_deref(),
            _ => None,
        }
    }
    pub(crate) fn attempt(&self) -> u64 {
        self.inner.attempt
    }
    pub(crate) fn timed_out(&self) -> bool {
        self.inner.timed_out
    }
    pub(crate) fn retry_number(&self) -> Option<u64> {
        self.inner.retry_number
    }
    pub(crate) fn delay_ms(&self) -> Option<u64> {
        self.inner.delay_ms
    }
    pub(crate) fn next_retry_at(&self) -> Option<u64> {
        self.inner.next_retry_at
    }
    pub(crate) fn explain(&self) -> String {
        self.inner.explain()
    }
    pub(crate) fn to_h(ruby: &Ruby, rb_self: &Self) -> Result<Value, Error> {
        serialize(ruby, &rb_self.inner, Keys::Strings)
    }
    pub(crate) fn eq(&self, other: Value) -> bool {
        <&Self>::try_convert(other).is_ok_and(|o| o.inner == self.inner)
    }
    pub(crate) fn hash(&self) -> i64 {
        hash_of(&format!("{:?}", self.inner))
    }
    pub(crate) fn inspect(&self) -> String {
        let json = serde_json::to_string(&self.inner).unwrap_or_default();
        format!("#<OjsRetry::Decision {json}>")
    }
}

/// One row of `RetryPolicy#schedule` (immutable).
#[magnus::wrap(class = "OjsRetry::ScheduleRow", free_immediately, size)]
pub(crate) struct ScheduleRow {
    inner: ojs_retry::ScheduleRow,
}

impl ScheduleRow {
    pub(crate) fn retry_number(&self) -> u64 {
        self.inner.retry_number
    }
    pub(crate) fn attempt(&self) -> u64 {
        self.inner.attempt
    }
    pub(crate) fn raw_ms(&self) -> u64 {
        self.inner.raw_ms
    }
    pub(crate) fn capped_ms(&self) -> u64 {
        self.inner.capped_ms
    }
    pub(crate) fn min_ms(&self) -> u64 {
        self.inner.min_ms
    }
    pub(crate) fn max_ms(&self) -> u64 {
        self.inner.max_ms
    }
    pub(crate) fn delay_ms(&self) -> Option<u64> {
        self.inner.delay_ms
    }
    pub(crate) fn cumulative_ms(&self) -> u64 {
        self.inner.cumulative_ms
    }
    pub(crate) fn to_h(ruby: &Ruby, rb_self: &Self) -> Result<Value, Error> {
        serialize(ruby, &rb_self.inner, Keys::Strings)
    }
    pub(crate) fn eq(&self, other: Value) -> bool {
        <&Self>::try_convert(other).is_ok_and(|o| o.inner == self.inner)
    }
    pub(crate) fn hash(&self) -> i64 {
        hash_of(&format!("{:?}", self.inner))
    }
    pub(crate) fn inspect(&self) -> String {
        let json = serde_json::to_string(&self.inner).unwrap_or_default();
        format!("#<OjsRetry::ScheduleRow {json}>")
    }
}
