//! Results out: numbers as JS numbers, decisions as numbers in the caller's
//! `Float64Array` (the JS layer makes the object; making it here would
//! cost a property set per key through the framework), and the documents
//! and lists as JSON text, which the JS layer parses (`JSON.parse` makes
//! every key an own data property, `"__proto__"` included).

use ojs_retry::{Action, Decision, HandlerCode, Herd, Reason, ScheduleRow};
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

use crate::fw::{self, Core, Thrown};

/// An engine integer as a JS number: exact, every one is at most 2^53 − 1.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn num(x: u64) -> f64 {
    x as f64
}

const ACTIONS: [Action; 3] = [Action::Retry, Action::Discard, Action::DeadLetter];
const CODES: [HandlerCode; 4] = [
    HandlerCode::Retry,
    HandlerCode::Discard,
    HandlerCode::DeadLetter,
    HandlerCode::Fail,
];
const REASONS: [&str; 5] = [
    "handler_code",
    "non_retryable",
    "exhausted",
    "retryable",
    "policy_invalid",
];

/// The names of the codes [`decision`] writes, and the preset systems.
pub(crate) fn names() -> String {
    serde_json::json!({
        "actions": ACTIONS.map(Action::as_str),
        "reasons": REASONS,
        "codes": CODES.map(HandlerCode::as_str),
        "presetSystems": ojs_retry::PRESET_SYSTEMS,
    })
    .to_string()
}

/// How many numbers [`decision`] writes.
pub(crate) const DECISION_LEN: usize = 8;

fn index<T: PartialEq>(all: &[T], x: &T) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    all.iter().position(|a| a == x).map_or(-1.0, |i| i as f64)
}

/// A decision as numbers: `[action, reason, handlerCode, attempt, timedOut,
/// retryNumber, delayMs, nextRetryAt]` (codes index the lists of
/// [`names`]; −1 or NaN for none), and the matched pattern as the
/// return value.
pub(crate) fn decision(d: &Decision, mut out: fw::Slots) -> Core<Option<String>> {
    if fw::slots_len(&out) < DECISION_LEN {
        return Err(Thrown::from(ojs_retry::Error::invalid_argument(
            "out",
            format!("expected {DECISION_LEN} slots for the decision"),
        )));
    }
    let reason = match &d.reason {
        Reason::HandlerCode(_) => 0.0,
        Reason::NonRetryable { .. } => 1.0,
        Reason::Exhausted => 2.0,
        Reason::Retryable => 3.0,
        Reason::PolicyInvalid { .. } => 4.0,
    };
    let opt = |x: Option<u64>| x.map_or(f64::NAN, num);
    let values = [
        index(&ACTIONS, &d.action),
        reason,
        d.handler_code.map_or(-1.0, |c| index(&CODES, &c)),
        num(d.attempt),
        if d.timed_out { 1.0 } else { 0.0 },
        opt(d.retry_number),
        opt(d.delay_ms),
        opt(d.next_retry_at),
    ];
    fw::write_f64s(&mut out, &values);
    Ok(match &d.reason {
        Reason::NonRetryable { pattern } => pattern.clone(),
        _ => None,
    })
}

/// JSON text of a value (what the binding writes cannot fail to serialise:
/// no map has non-string keys, every number is finite).
pub(crate) fn json<T: Serialize + ?Sized>(x: &T) -> String {
    serde_json::to_string(x).unwrap_or_else(|_| "null".into())
}

/// Schedule rows as the JS API spells them.
pub(crate) struct Rows<'a>(pub(crate) &'a [ScheduleRow]);

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(Row))
    }
}

struct Row<'a>(&'a ScheduleRow);

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut st = s.serialize_struct("ScheduleRow", 8)?;
        st.serialize_field("retryNumber", &r.retry_number)?;
        st.serialize_field("attempt", &r.attempt)?;
        st.serialize_field("rawMs", &r.raw_ms)?;
        st.serialize_field("cappedMs", &r.capped_ms)?;
        st.serialize_field("minMs", &r.min_ms)?;
        st.serialize_field("maxMs", &r.max_ms)?;
        st.serialize_field("delayMs", &r.delay_ms)?;
        st.serialize_field("cumulativeMs", &r.cumulative_ms)?;
        st.end()
    }
}

/// The error history as the JS API spells it (instants as epoch ms).
pub(crate) struct Records<'a>(pub(crate) &'a ojs_retry::RetryState);

impl Serialize for Records<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.errors().map(Record))
    }
}

struct Record<'a>(&'a ojs_retry::ErrorRecord);

impl Serialize for Record<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut st = s.serialize_struct("ErrorRecord", 6)?;
        st.serialize_field("attempt", &r.attempt)?;
        st.serialize_field("type", &r.error_type)?;
        st.serialize_field("message", &r.message)?;
        st.serialize_field("code", r.code.as_str())?;
        st.serialize_field("timestampMs", &r.timestamp_ms)?;
        st.serialize_field("details", &r.details)?;
        st.end()
    }
}

/// A herd as the JS API spells it.
pub(crate) struct HerdOut<'a>(pub(crate) &'a Herd);

impl Serialize for HerdOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let h = self.0;
        let mut st = s.serialize_struct("Herd", 5)?;
        st.serialize_field("jobs", &h.jobs)?;
        st.serialize_field("bucketMs", &h.bucket_ms)?;
        st.serialize_field("peakPerSecond", &h.peak_per_second)?;
        st.serialize_field("peakAtMs", &h.peak_at_ms)?;
        st.serialize_field("rounds", &Rounds(&h.rounds))?;
        st.end()
    }
}

struct Rounds<'a>(&'a [ojs_retry::HerdRound]);

impl Serialize for Rounds<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(Round))
    }
}

struct Round<'a>(&'a ojs_retry::HerdRound);

impl Serialize for Round<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut st = s.serialize_struct("HerdRound", 7)?;
        st.serialize_field("retryNumber", &r.retry_number)?;
        st.serialize_field("jobs", &r.jobs)?;
        st.serialize_field("firstMs", &r.first_ms)?;
        st.serialize_field("lastMs", &r.last_ms)?;
        st.serialize_field("startMs", &r.start_ms)?;
        st.serialize_field("counts", &r.counts)?;
        st.serialize_field("peakPerSecond", &r.peak_per_second)?;
        st.end()
    }
}
