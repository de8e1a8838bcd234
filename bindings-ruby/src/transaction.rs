//! `OjsRetry.run_transaction`: the core's failure transaction
//! (`ojs_retry::transaction`) for a queue integration (Sidekiq's,
//! `lib/ojs_retry/sidekiq.rb`). Total on runtime data: what the job carried
//! (layer, state, details, a payload) is handed to the core as it is, and
//! the core turns every fault into an outcome and a note. Only a call the
//! program got wrong (a `key` that is not a `String`, an unknown keyword)
//! raises.

use magnus::prelude::*;
use magnus::scan_args::{get_kwargs, scan_args};
use std::sync::OnceLock;

use magnus::value::{LazyId, Opaque};
use magnus::{
    Error, Fixnum, RArray, RBignum, RClass, RHash, RModule, RString, Ruby, TryConvert, Value,
};
use ojs_retry::Layer;
use ojs_retry::transaction::{FailureReport, Transaction};

use crate::args;
use crate::errors::{CoreResult, bad_argument};
use crate::policy::{Decision, RetryPolicy, ids};
use crate::read::with_reader;
use crate::state::RetryState;

/// Text for the transaction: a `String` as UTF-8, transcoded by Ruby when
/// it is in another encoding; bytes that are not valid text are each
/// replaced by U+FFFD (as `String#scrub` does) — a failure's message is
/// recorded, never refused. `nil` or absent: `None`.
fn lossy(ruby: &Ruby, v: Option<Value>, field: &str) -> Result<Option<String>, Error> {
    let Some(v) = v.filter(|v| !v.is_nil()) else {
        return Ok(None);
    };
    let Some(s) = RString::from_value(v) else {
        return Err(bad_argument(
            field,
            format!("expected a String, found {}", args::describe(v)),
        ))
        .rb(ruby);
    };
    Ok(Some(match s.to_string() {
        Ok(text) => text,
        Err(_) => String::from_utf8_lossy(&s.to_bytes()).into_owned(),
    }))
}

/// A carried document: JSON text, a `Hash`, or an engine object
/// (`RetryPolicy`, `RetryState`). A fault in it is the core's to note.
fn carried(ruby: &Ruby, v: Option<Value>) -> Result<Option<Layer<'static>>, Error> {
    let Some(v) = v.filter(|v| !v.is_nil()) else {
        return Ok(None);
    };
    // Text and a `Hash` first: what a queue carries, and no failed
    // conversion (each builds its error message) on the way.
    if RString::from_value(v).is_some() || RHash::from_value(v).is_some() {
        return args::layer(ruby, v).map(Some);
    }
    if let Ok(p) = <&RetryPolicy>::try_convert(v) {
        return Ok(Some(Layer::Json(p.inner.to_json().into())));
    }
    if let Ok(s) = <&RetryState>::try_convert(v) {
        return Ok(Some(Layer::Json(s.to_json(&[]).into())));
    }
    args::layer(ruby, v).map(Some)
}

/// The queue's defaults: one layer, or an `Array` of them.
fn defaults(ruby: &Ruby, v: Option<Value>) -> Result<Vec<Layer<'static>>, Error> {
    let Some(v) = v.filter(|v| !v.is_nil()) else {
        return Ok(Vec::new());
    };
    let Some(list) = RArray::from_value(v) else {
        return Ok(carried(ruby, Some(v))?.into_iter().collect());
    };
    ojs_retry::limits::check_argument_len("defaults", list.len()).rb(ruby)?;
    let mut out = Vec::with_capacity(list.len());
    for i in 0..list.len() {
        let index = isize::try_from(i)
            .map_err(|e| Error::new(ruby.exception_range_error(), e.to_string()))?;
        out.extend(carried(ruby, Some(list.entry(index)?))?);
    }
    Ok(out)
}

/// Defaults that are one built policy (a `RetryPolicy`, or an `Array`
/// holding only one), which the core takes as it is.
fn built(v: Option<Value>) -> Option<&'static RetryPolicy> {
    let v = v.filter(|v| !v.is_nil())?;
    let one = match RArray::from_value(v) {
        Some(list) if list.len() == 1 => list.entry(0).ok()?,
        Some(_) => return None,
        None => v,
    };
    <&RetryPolicy>::try_convert(one).ok()
}

/// A value the core reads as it is (`details:`, `job:`): any Ruby data,
/// a `String` being a string (not JSON text).
fn value(ruby: &Ruby, v: Option<Value>) -> Result<Option<Layer<'static>>, Error> {
    let Some(v) = v.filter(|v| !v.is_nil()) else {
        return Ok(None);
    };
    with_reader(ruby, |r| Ok(Some(Layer::read(r.value(v)))))
}

/// The attempt from the queue's counter, as the core takes it: a negative
/// or huge `Integer` is the core's to note (attempt 1, or 2^53 − 1).
fn counter(ruby: &Ruby, v: Value) -> Result<u64, Error> {
    if let Some(i) = Fixnum::from_value(v) {
        return Ok(u64::try_from(i.to_i64()).unwrap_or(0));
    }
    if let Some(b) = RBignum::from_value(v) {
        return Ok(if b.is_positive() { u64::MAX } else { 0 });
    }
    args::uint(ruby, v, "attempt")
}

/// `timed_out:`: `true`, `false` or `nil` (a truthy `"no"` is not read as
/// true).
fn flag(ruby: &Ruby, v: Option<Value>) -> Result<bool, Error> {
    match v {
        None => Ok(false),
        Some(v) if v.is_nil() => Ok(false),
        Some(v) if v.as_value().equal(ruby.qtrue())? => Ok(true),
        Some(v) if v.as_value().equal(ruby.qfalse())? => Ok(false),
        Some(v) => Err(bad_argument(
            "timed_out",
            format!("expected true or false, found {}", args::describe(v)),
        ))
        .rb(ruby),
    }
}

/// The keywords, interned once: `key:`, then the optional ones in two
/// groups (magnus reads at most nine optional keywords at a time).
static KEY: LazyId = LazyId::new("key");
static KW: [LazyId; 9] = [
    LazyId::new("defaults"),
    LazyId::new("layer"),
    LazyId::new("state"),
    LazyId::new("type"),
    LazyId::new("code"),
    LazyId::new("timed_out"),
    LazyId::new("message"),
    LazyId::new("details"),
    LazyId::new("now"),
];
static MORE_KW: [LazyId; 4] = [
    LazyId::new("history_limit"),
    LazyId::new("queue"),
    LazyId::new("job"),
    LazyId::new("ancestors"),
];

type Opt = Option<Value>;
type Kw = (Opt, Opt, Opt, Opt, Opt, Opt, Opt, Opt, Opt);

/// `OjsRetry.run_transaction(attempt, key:, defaults: nil, layer: nil,
/// state: nil, type: nil, ancestors: nil, code: nil, timed_out: false, message: nil,
/// details: nil, now: nil, history_limit: 10, queue: "", job: nil)`: what a
/// queue knows when a job fails, to an `OjsRetry::Outcome` (see
/// `lib/ojs_retry.rb`). `attempt` is the queue's own counter (the attempt
/// that failed, 1-based), `key` the job id (keyed jitter), `defaults` the
/// queue's layers, `layer` and `state` what the job carries (text, `Hash`
/// or engine object). Never raises for what the job carried or the failure
/// holds: each fault is a note.
pub(crate) fn run_transaction(ruby: &Ruby, args: &[Value]) -> Result<Value, Error> {
    let args = scan_args::<(Value,), (), (), (), RHash, ()>(args)?;
    let (attempt,) = args.required;
    let key_id = LazyId::get_inner_with(&KEY, ruby);
    let kw = get_kwargs::<_, (Value,), Kw, RHash>(args.keywords, &[key_id], &ids(ruby, &KW))?;
    let (key,) = kw.required;
    let (defaults, layer, state, r#type, code, timed_out, message, details, now) = kw.optional;
    let none: [magnus::value::Id; 0] = [];
    let more =
        get_kwargs::<_, (), (Opt, Opt, Opt, Opt), ()>(kw.splat, &none, &ids(ruby, &MORE_KW))?;
    let (limit, queue, job, ancestors) = more.optional;
    let built = built(defaults);
    let defaults = match built {
        Some(_) => Vec::new(),
        None => self::defaults(ruby, defaults)?,
    };
    let key = lossy(ruby, Some(key), "key")?.unwrap_or_default();
    let queue = lossy(ruby, queue, "queue")?.unwrap_or_default();
    let now = match now.filter(|v| !v.is_nil()) {
        Some(v) => args::uint(ruby, v, "now")?,
        None => crate::clock_ms(ruby)?,
    };
    let mut t = Transaction::new(&defaults, counter(ruby, attempt)?, &key, now);
    t.built = built.map(|p| &p.inner);
    t.layer = carried(ruby, layer)?;
    t.state = carried(ruby, state)?;
    if let Some(limit) = limit.filter(|v| !v.is_nil()) {
        let n = args::uint(ruby, limit, "history_limit")?;
        t = t
            .with_history_limit(usize::try_from(n).unwrap_or(usize::MAX))
            .rb(ruby)?;
    }
    t.queue = &queue;
    t.job = value(ruby, job)?;
    t.failure = FailureReport {
        error_type: lossy(ruby, r#type, "type")?,
        ancestors: value(ruby, ancestors)?,
        code: lossy(ruby, code, "code")?,
        timed_out: flag(ruby, timed_out)?,
        message: lossy(ruby, message, "message")?,
        details: value(ruby, details)?,
    };
    outcome(ruby, t.run())
}

/// The core's outcome as an `OjsRetry::Outcome` (a frozen `Struct` defined
/// in `lib/ojs_retry.rb`): `notes` an `Array` of `[kind, message]` pairs.
fn outcome(ruby: &Ruby, out: ojs_retry::transaction::Outcome) -> Result<Value, Error> {
    let notes = ruby.ary_new_capa(out.notes.len());
    for n in out.notes {
        notes.push((n.kind, n.message))?;
    }
    let o: Value = outcome_class(ruby)?.new_instance((
        Decision {
            inner: out.decision,
        },
        RetryState::wrap(out.state),
        out.state_json,
        RetryPolicy::wrap(out.policy.into_owned()),
        notes,
        out.dead_letter,
    ))?;
    o.freeze();
    Ok(o)
}

/// `OjsRetry::Outcome`, looked up once (a constant of the gem's own Ruby
/// code, defined after the extension is loaded) and kept from the GC.
static OUTCOME: OnceLock<Opaque<RClass>> = OnceLock::new();

fn outcome_class(ruby: &Ruby) -> Result<RClass, Error> {
    if let Some(class) = OUTCOME.get() {
        return Ok(ruby.get_inner(*class));
    }
    let module: RModule = ruby.class_object().const_get("OjsRetry")?;
    let class: RClass = module.const_get("Outcome")?;
    ruby.gc_register_mark_object(class);
    Ok(ruby.get_inner(*OUTCOME.get_or_init(|| Opaque::from(class))))
}
