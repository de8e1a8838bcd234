//! Invariant checks shared by the fuzz targets. Each `check_*` panics (so
//! libFuzzer records a crash) when the engine breaks a documented promise;
//! an `Err` from the engine is fine as long as it is a typed error.

use arbitrary::{Arbitrary, Unstructured};
use std::sync::OnceLock;

use ojs_retry::{
    Action, ErrorCode, Failure, JitterSource, MAX_INSTANT_MS, MAX_MS, PartialPolicy, RetryPolicy,
    RetryState, Strategy,
};
use serde_json::{Map, Number, Value};

/// Every error carries a stable code, a field and a non-empty message.
pub fn check_error(e: &ojs_retry::Error) {
    assert!(!e.code().as_str().is_empty());
    assert!(e.iter_faults().count() >= 1);
    for f in e.iter_faults() {
        assert!(
            !f.message.is_empty(),
            "empty message for field {:?}",
            f.field
        );
    }
    // Display never panics and names the code.
    assert!(e.to_string().starts_with(e.code().as_str()));
}

/// What every valid policy must satisfy, whatever document produced it.
pub fn check_policy(p: &RetryPolicy) {
    // The canonical JSON reads back as the same policy.
    let text = p.to_json();
    let back = RetryPolicy::from_json(&text)
        .unwrap_or_else(|e| panic!("canonical JSON {text} does not read back: {e}"));
    assert_eq!(&back, p, "round trip of {text}");
    assert!(p.initial_interval_ms() >= 1 && p.initial_interval_ms() <= p.max_interval_ms());
    assert!(p.max_interval_ms() <= MAX_MS);
    assert!(p.backoff_coefficient().is_finite() && p.backoff_coefficient() >= 1.0);

    let cap = p.max_interval_ms();
    for n in [1, 2, 3, 10, 64, 1_000, u64::from(u32::MAX), MAX_MS] {
        for j in [
            JitterSource::Uniform(0.0),
            JitterSource::Uniform(0.999_999_999_999_999_9),
            JitterSource::Seed(n),
            JitterSource::Key("job"),
        ] {
            let d = p
                .delay(n, j)
                .unwrap_or_else(|e| panic!("delay({n}) failed: {e}"));
            assert!(d <= cap, "delay({n}) = {d} above max_interval {cap}");
        }
    }
    let rows = p
        .schedule(20, Some(JitterSource::Seed(7)))
        .unwrap_or_else(|e| panic!("schedule failed: {e}"));
    let mut prev_capped = 0;
    let mut total: u64 = 0;
    for r in &rows {
        assert!(r.min_ms <= r.max_ms && r.max_ms <= cap);
        assert!(r.capped_ms == r.raw_ms.min(cap));
        let d = r.delay_ms.unwrap_or(u64::MAX);
        assert!(r.min_ms <= d && d <= r.max_ms, "{r:?}");
        // Every strategy is non-decreasing before jitter.
        assert!(r.capped_ms >= prev_capped, "{rows:?}");
        prev_capped = r.capped_ms;
        total = total.saturating_add(d).min(MAX_MS);
        assert_eq!(r.cumulative_ms, total);
    }
    // Never a retry once attempts are exhausted.
    let last = p.max_attempts().max(1);
    for a in [last, last.saturating_add(1).min(MAX_MS)] {
        let d = p
            .decide(&Failure::new(a), 0, JitterSource::Uniform(0.5))
            .unwrap_or_else(|e| panic!("decide({a}) failed: {e}"));
        assert_ne!(
            d.action,
            Action::Retry,
            "retry after max_attempts at attempt {a}"
        );
    }
}

/// A retry decision obeys the delay and `next_retry_at` bounds.
pub fn check_decision(p: &RetryPolicy, d: &ojs_retry::Decision, now: u64) {
    let last = p.max_attempts().max(1);
    match d.action {
        Action::Retry => {
            assert!(d.attempt < last, "retry at attempt {} of {last}", d.attempt);
            let delay = d.delay_ms.unwrap_or(u64::MAX);
            assert!(delay <= p.max_interval_ms(), "delay {delay} above the cap");
            let at = d.next_retry_at.unwrap_or(0);
            assert!(at >= now, "next_retry_at {at} before now {now}");
            assert_eq!(at, now.saturating_add(delay).min(MAX_INSTANT_MS));
            assert_eq!(d.retry_number, Some(d.attempt));
        }
        Action::Discard | Action::DeadLetter => {
            assert!(d.delay_ms.is_none() && d.next_retry_at.is_none() && d.retry_number.is_none());
        }
    }
}

/// A state reads back from its own JSON unchanged.
pub fn check_state_round_trip(s: &RetryState) {
    let text = s.to_json();
    let back = RetryState::from_json(&text, s.history_limit())
        .unwrap_or_else(|e| panic!("state JSON {text} does not read back: {e}"));
    assert_eq!(back.to_json(), text);
    assert!(s.errors().len() <= s.history_limit());
}

/// Field names the structured generator prefers, so that arbitrary values
/// land on the fields the engine reads: the keys of a canonical policy
/// (with a non-default strategy, so `backoff_strategy` is written) and of a
/// §10 state.
fn keys() -> &'static [String] {
    static KEYS: OnceLock<Vec<String>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let policy = PartialPolicy::new()
            .backoff_strategy(Strategy::Polynomial)
            .build()
            .map(|p| p.to_json())
            .unwrap_or_default();
        [policy, RetryState::new().to_json()]
            .iter()
            .filter_map(|t| serde_json::from_str::<Map<String, Value>>(t).ok())
            .flat_map(|m| m.keys().cloned().collect::<Vec<_>>())
            .collect()
    })
}

/// Strings the structured generator prefers (valid and nearly valid values).
const STRINGS: [&str; 16] = [
    "PT1S",
    "PT0.5S",
    "PT5M",
    "P9999Y",
    "PT99999999999999999999S",
    "P1DT1H",
    "dead_letter",
    "discard",
    "exponential",
    "polynomial",
    "linear",
    "none",
    "auth.*",
    "2026-02-12T10:31:05Z",
    "9999-12-31T23:59:59.999Z",
    "",
];

/// An arbitrary JSON value, biased towards policy-shaped documents.
pub fn arbitrary_value(u: &mut Unstructured<'_>, depth: u32) -> arbitrary::Result<Value> {
    let choice = if depth >= 6 {
        u.int_in_range(0..=5)?
    } else {
        u.int_in_range(0..=7)?
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
                Value::String((*u.choose(&STRINGS)?).to_owned())
            } else {
                Value::String(u.arbitrary()?)
            }
        }
        5 => Value::Number(Number::from(u.int_in_range(0..=MAX_MS.saturating_add(2))?)),
        6 => {
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

/// A policy document value (an object most of the time).
#[derive(Debug)]
pub struct Doc(pub Value);

impl<'a> Arbitrary<'a> for Doc {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        arbitrary_value(u, 0).map(Doc)
    }
}

/// The invalid-input contract: the only errors a policy constructor gives.
pub fn check_policy_error(e: &ojs_retry::Error) {
    check_error(e);
    assert_eq!(e.code(), ErrorCode::RetryPolicyInvalid);
}

pub use ojs_retry::fuzzing::strict_serde_json;

/// The same JSON value, every number the same kind (u64, i64, f64) with the
/// same bits (`-0.0` is not `0.0`).
pub fn same_json(ours: &ojs_retry::json::Value, theirs: &Value) -> bool {
    use ojs_retry::json::Value as V;
    match (ours, theirs) {
        (V::Null, Value::Null) => true,
        (V::Bool(a), Value::Bool(b)) => a == b,
        (V::String(a), Value::String(b)) => a == b,
        (V::Number(a), Value::Number(b)) => {
            (a.is_u64(), a.is_f64()) == (b.is_u64(), b.is_f64())
                && a.as_i64() == b.as_i64()
                && a.as_u64() == b.as_u64()
                && a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits)
        }
        (V::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_json(x, y))
        }
        (V::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|((k, x), (l, y))| k == l && same_json(x, y))
        }
        _ => false,
    }
}
