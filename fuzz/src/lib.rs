//! Invariant checks shared by the fuzz targets. Each `check_*` panics (so
//! libFuzzer records a crash) when the engine breaks a documented promise;
//! an `Err` from the engine is fine as long as it is a well-formed typed
//! error.

use arbitrary::{Arbitrary, Unstructured};
use std::sync::OnceLock;

use ojs_retry::{
    Action, Decision, ErrorCode, Failure, JitterSource, MAX_INSTANT_MS, MAX_MS, PRESET_SYSTEMS,
    PartialPolicy, RetryPolicy, RetryState, Strategy,
};
use serde_json::{Map, Number, Value};

/// The planted failure of the harness check (scripts/test-fuzz): with
/// `OJS_FUZZ_PLANTED=1` in the environment, an input starting with the bytes
/// `PLANTED` panics, so that the suite can prove that `scripts/fuzz` fails
/// when a target crashes. Unset (every normal run), this does nothing.
pub fn planted(data: &[u8]) {
    static ON: OnceLock<bool> = OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("OJS_FUZZ_PLANTED").is_some_and(|v| v == "1"))
        && data.starts_with(b"PLANTED")
    {
        panic!("the planted failure of the harness check (OJS_FUZZ_PLANTED=1)");
    }
}

/// Every error carries a stable code and at least one fault; every fault a
/// non-empty message; a fault's field is the first segment of its path
/// (`non_retryable_errors` for `non_retryable_errors[0]`), and a fault of
/// the whole document has neither (never `""`).
pub fn check_error(e: &ojs_retry::Error) {
    assert!(!e.code().as_str().is_empty());
    assert!(!e.faults().is_empty(), "an error without a fault: {e:?}");
    for f in e.faults() {
        assert!(!f.message.is_empty(), "empty message in {e:?}");
        // A field is the path (an unknown key, whatever it holds) or its
        // first segment; a whole-document fault has neither.
        match (&f.field, &f.path) {
            (Some(field), Some(path)) => assert!(
                path.starts_with(field.as_str())
                    && matches!(path.as_bytes().get(field.len()), None | Some(b'[' | b'.')),
                "field {field:?} is not the first segment of path {path:?}"
            ),
            (None, None) => {}
            _ => panic!("field and path disagree in {e:?}"),
        }
    }
    assert_eq!(e.field(), e.faults()[0].field.as_deref());
    assert_eq!(e.path(), e.faults()[0].path.as_deref());
    assert_eq!(e.message(), e.faults()[0].message);
    // Display never panics and names the code.
    assert!(e.to_string().starts_with(e.code().as_str()));
}

/// The invalid-input contract of a policy constructor.
pub fn check_policy_error(e: &ojs_retry::Error) {
    check_error(e);
    assert_eq!(e.code(), ErrorCode::RetryPolicyInvalid, "{e}");
}

/// What every valid policy must satisfy, whatever document produced it.
pub fn check_policy(p: &RetryPolicy) {
    // The canonical JSON reads back as the same policy, by every route.
    let text = p.to_json();
    let back = RetryPolicy::from_json(&text)
        .unwrap_or_else(|e| panic!("canonical JSON {text} does not read back: {e}"));
    assert_eq!(&back, p, "round trip of {text}");
    assert_eq!(back.to_json(), text);
    let pretty = RetryPolicy::from_json(&p.to_json_pretty())
        .unwrap_or_else(|e| panic!("pretty JSON of {text} does not read back: {e}"));
    assert_eq!(&pretty, p, "pretty round trip of {text}");
    let value: Value = serde_json::from_str(&text).expect("canonical JSON is JSON");
    assert_eq!(
        RetryPolicy::from_deserializer(&value).as_ref(),
        Ok(p),
        "{text} as a serde value"
    );

    let preset = p.preset_system().is_some();
    if !preset {
        assert!(p.initial_interval_ms() >= 1 && p.initial_interval_ms() <= p.max_interval_ms());
        assert!(p.max_interval_ms() <= MAX_MS);
        assert!(p.backoff_coefficient().is_finite() && p.backoff_coefficient() >= 1.0);
    }

    // Delays: never a panic, never above the cap (a preset has its
    // system's own caps: only the engine's bound holds there).
    let cap = if preset { MAX_MS } else { p.max_interval_ms() };
    for n in [1, 2, 3, 10, 64, 1_000, u64::from(u32::MAX), MAX_MS] {
        for j in [
            JitterSource::Uniform(0.0),
            JitterSource::Uniform(0.999_999_999_999_999_9),
            JitterSource::Seed(n),
            JitterSource::Key("job"),
        ] {
            match p.delay(n, j) {
                Ok(d) => assert!(d <= cap, "delay({n}) = {d} above {cap} for {text}"),
                // A preset may refuse a retry number its formula cannot
                // reach (a decorrelated chain past its bound).
                Err(e) if preset => check_error(&e),
                Err(e) => panic!("delay({n}) failed for {text}: {e}"),
            }
        }
    }
    // A batch gives what single calls give.
    if let Ok(batch) = p.delays_with(JitterSource::Key("job")) {
        for n in [1, 2, 5, 17] {
            assert_eq!(
                batch.delay(n).ok(),
                p.delay(n, JitterSource::Key("job")).ok(),
                "batch delay({n}) for {text}"
            );
        }
    }
    let rows = p
        .schedule(20, Some(JitterSource::Seed(7)))
        .unwrap_or_else(|e| panic!("schedule failed for {text}: {e}"));
    assert_eq!(rows.len(), 20);
    let mut total: u64 = 0;
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.retry_number, i as u64 + 1);
        let d = r.delay_ms.unwrap_or(u64::MAX);
        assert!(r.min_ms <= d && d <= r.max_ms, "{r:?} for {text}");
        assert!(r.max_ms <= cap, "{r:?} for {text}");
        total = total.saturating_add(d).min(MAX_MS);
        assert_eq!(r.cumulative_ms, total, "{rows:?}");
    }
    if !preset {
        let mut prev_capped = 0;
        for r in &rows {
            assert!(r.capped_ms == r.raw_ms.min(cap), "{r:?}");
            // Every strategy is non-decreasing before jitter.
            assert!(r.capped_ms >= prev_capped, "{rows:?}");
            prev_capped = r.capped_ms;
        }
        // Never a retry once attempts are exhausted.
        let last = p.max_attempts().max(1);
        for a in [last, last.saturating_add(1).min(MAX_MS)] {
            let d = p
                .decide(&Failure::new(a), 0, JitterSource::Uniform(0.5))
                .unwrap_or_else(|e| panic!("decide({a}) failed: {e}"));
            assert_ne!(d.action, Action::Retry, "retry at attempt {a} of {text}");
        }
    }
    for a in [1, 2, 7, MAX_MS] {
        match p.decide(
            &Failure::new(a).with_type("net.reset"),
            0,
            JitterSource::Uniform(0.5),
        ) {
            Ok(d) => check_decision(p, &d, 0),
            Err(e) => {
                check_error(&e);
                assert!(preset, "decide({a}) failed for {text}: {e}");
            }
        }
    }
}

/// A decision obeys the delay and `next_retry_at` bounds.
pub fn check_decision(p: &RetryPolicy, d: &Decision, now: u64) {
    let preset = p.preset_system().is_some();
    match d.action {
        Action::Retry => {
            if !preset {
                let last = p.max_attempts().max(1);
                assert!(d.attempt < last, "retry at attempt {} of {last}", d.attempt);
                let delay = d.delay_ms.unwrap_or(u64::MAX);
                assert!(delay <= p.max_interval_ms(), "delay {delay} above the cap");
            }
            let delay = d.delay_ms.expect("a retry has a delay");
            let at = d.next_retry_at.expect("a retry has next_retry_at");
            assert!(at >= now, "next_retry_at {at} before now {now}");
            assert_eq!(at, now.saturating_add(delay).min(MAX_INSTANT_MS));
            assert_eq!(d.retry_number, Some(d.attempt));
        }
        Action::Discard | Action::DeadLetter => {
            assert!(d.delay_ms.is_none() && d.next_retry_at.is_none() && d.retry_number.is_none());
        }
    }
    assert!(!d.explain().is_empty());
    assert!(serde_json::to_string(d).is_ok_and(|t| t.starts_with('{')));
}

/// Decides `f` under `p` at a fixed instant with a keyed jitter: the
/// decision obeys [`check_decision`], and the only error is the typed
/// invalid argument of an attempt out of range or of a timed-out failure
/// that also names a handler code.
pub fn check_decide(p: &RetryPolicy, f: &Failure) {
    const NOW: u64 = 1_770_892_265_000;
    match p.decide(f, NOW, JitterSource::Key("job")) {
        Ok(d) => check_decision(p, &d, NOW),
        Err(e) => {
            check_error(&e);
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            assert!(
                f.attempt == 0 || f.attempt > MAX_MS || (f.timed_out && f.code.is_some()),
                "{e}"
            );
        }
    }
}

/// A state never holds or writes more records than its limit, and its JSON
/// reads back as the same state (issue 20).
pub fn check_state(s: &RetryState) {
    let limit = s.history_limit();
    assert!(
        s.errors().len() <= limit,
        "{} records, limit {limit}",
        s.errors().len()
    );
    assert_eq!(s.next_attempt(), s.attempt() + 1);
    assert!(!(s.terminal().is_some() && s.next_retry_at().is_some()));
    let text = s.to_json();
    let doc: Value = serde_json::from_str(&text).expect("a state's JSON is JSON");
    let written = doc["errors"].as_array().map_or(0, Vec::len);
    assert_eq!(written, s.errors().len(), "{text}");
    assert!(
        written <= limit,
        "{written} records written, limit {limit}: {text}"
    );
    let back = RetryState::from_json(&text, limit)
        .unwrap_or_else(|e| panic!("state JSON {text} does not read back: {e}"));
    assert_eq!(&back, s, "state JSON {text} reads back different");
    assert_eq!(back.to_json(), text);
    let from_value = RetryState::from_deserializer(&doc, limit)
        .unwrap_or_else(|e| panic!("state value {text} does not read back: {e}"));
    assert_eq!(&from_value, s, "state value {text} reads back different");
    for r in s.errors() {
        assert!(
            r.attempt >= 1 && r.attempt <= s.attempt(),
            "{r:?} in {text}"
        );
    }
}

/// The error of a state reader.
pub fn check_state_error(e: &ojs_retry::Error) {
    check_error(e);
    assert_eq!(e.code(), ErrorCode::StateInvalid, "{e}");
}

/// Field names the structured generator prefers, so that arbitrary values
/// land on the fields the engine reads: the keys of a canonical policy
/// (with a non-default strategy, so `backoff_strategy` is written), of a §10
/// state and its error records, of a failure, and of every preset's
/// canonical configuration.
pub fn keys() -> &'static [String] {
    static KEYS: OnceLock<Vec<String>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut docs = vec![
            PartialPolicy::new()
                .backoff_strategy(Strategy::Polynomial)
                .build()
                .map(|p| p.to_json())
                .unwrap_or_default(),
        ];
        let mut state = RetryState::new();
        let f = Failure::new(1).with_details(ojs_retry::Value::Null);
        let _ = state.record_failure(&RetryPolicy::default(), &f, 0, JitterSource::Seed(1));
        docs.push(state.to_json());
        let mut keys: Vec<String> = [
            "preset",
            "system",
            "type",
            "timed_out",
            "details",
            "timedOut",
        ]
        .map(String::from)
        .to_vec();
        for system in PRESET_SYSTEMS {
            if let Ok(p) = RetryPolicy::preset_json(system, "{}") {
                docs.push(p.to_json());
            }
        }
        let add = |m: &Map<String, Value>, keys: &mut Vec<String>| {
            keys.extend(m.keys().cloned());
        };
        for t in &docs {
            let Ok(v) = serde_json::from_str::<Value>(t) else {
                continue;
            };
            if let Some(m) = v.as_object() {
                add(m, &mut keys);
            }
            for nested in [&v["preset"], &v["errors"][0]] {
                if let Some(m) = nested.as_object() {
                    add(m, &mut keys);
                }
            }
        }
        keys.sort();
        keys.dedup();
        keys
    })
}

/// Strings the structured generator prefers (valid and nearly valid values).
const STRINGS: [&str; 22] = [
    "PT1S",
    "PT0.5S",
    "PT5M",
    "P9999Y",
    "PT99999999999999999999S",
    "P1DT1H",
    "PT0.0001S",
    "dead_letter",
    "discard",
    "exponential",
    "polynomial",
    "linear",
    "none",
    "constant",
    "auth.*",
    "RETRY",
    "DEAD_LETTER",
    "2026-02-12T10:31:05Z",
    "2026-02-12T10:31:05.0001+01:00",
    "9999-12-31T23:59:59.999Z",
    "sidekiq",
    "",
];

/// An arbitrary JSON value, biased towards policy-, state- and
/// preset-shaped documents.
pub fn arbitrary_value(u: &mut Unstructured<'_>, depth: u32) -> arbitrary::Result<Value> {
    let choice = if depth >= 6 {
        u.int_in_range(0..=6)?
    } else {
        u.int_in_range(0..=9)?
    };
    Ok(match choice {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => {
            let n = match u.int_in_range(0..=3)? {
                0 => Number::from(u.arbitrary::<u64>()?),
                1 => Number::from(u.arbitrary::<i64>()?),
                2 => Number::from(u.int_in_range(0..=12u64)?),
                _ => Number::from_f64(u.arbitrary::<f64>()?).unwrap_or_else(|| Number::from(0)),
            };
            Value::Number(n)
        }
        3 | 4 => {
            if u.arbitrary()? {
                let s = *u.choose(&STRINGS)?;
                Value::String(if u.ratio(1, 8)? {
                    PRESET_SYSTEMS[u.choose_index(PRESET_SYSTEMS.len())?].to_owned()
                } else {
                    s.to_owned()
                })
            } else {
                Value::String(u.arbitrary()?)
            }
        }
        5 => Value::Number(Number::from(u.int_in_range(0..=MAX_MS.saturating_add(2))?)),
        6 => Value::Number(
            Number::from_f64(match u.int_in_range(0..=3)? {
                0 => u.int_in_range(0..=20u32)? as f64 + 0.5,
                1 => u.int_in_range(0..=20u32)? as f64,
                2 => MAX_MS as f64 + 1.0,
                _ => -0.0,
            })
            .unwrap_or_else(|| Number::from(0)),
        ),
        7 => {
            let len = u.int_in_range(0..=4)?;
            let mut v = Vec::with_capacity(len);
            for _ in 0..len {
                v.push(arbitrary_value(u, depth + 1)?);
            }
            Value::Array(v)
        }
        _ => {
            let len = u.int_in_range(0..=8)?;
            let mut m = Map::new();
            for _ in 0..len {
                let k = if u.ratio(7, 8)? {
                    u.choose(keys())?.clone()
                } else {
                    u.arbitrary()?
                };
                m.insert(k, arbitrary_value(u, depth + 1)?);
            }
            Value::Object(m)
        }
    })
}

/// A document value (an object most of the time).
#[derive(Debug)]
pub struct Doc(pub Value);

impl<'a> Arbitrary<'a> for Doc {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        if u.ratio(3, 4)? {
            // An object at the top, as documents are.
            let len = u.int_in_range(0..=8)?;
            let mut m = Map::new();
            for _ in 0..len {
                let k = if u.ratio(15, 16)? {
                    u.choose(keys())?.clone()
                } else {
                    u.arbitrary()?
                };
                m.insert(k, arbitrary_value(u, 1)?);
            }
            Ok(Doc(Value::Object(m)))
        } else {
            arbitrary_value(u, 0).map(Doc)
        }
    }
}
