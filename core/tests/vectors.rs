//! Runs every conformance vector in `tests/vectors/*.json` through the public
//! Rust API. An unknown op, a missing file or a failing case fails the test;
//! nothing is skipped.

// A test harness: a malformed vector file should stop the run loudly.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::result_large_err
)]
use std::fs;
use std::path::PathBuf;

use ojs_retry::{
    Error, Failure, Heartbeat, JitterSource, Layer, Reservation, RetryPolicy, RetryState,
    first_match, format_duration, format_timestamp, parse_duration, parse_timestamp,
};
use serde::Deserialize;
use serde_json::{Value, json};

#[path = "vectors/transaction.rs"]
mod transaction;

/// A vector's JSON value as the engine's document value, read through
/// serde as every host reads its own values.
fn ov(v: &Value) -> ojs_retry::Value {
    ojs_retry::Value::deserialize(v).unwrap()
}

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

/// Every key of `expected` must be in `actual` with an equal value
/// (recursively for objects; arrays compare element-wise and by length).
fn subset(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let av = a
                    .get(k)
                    .ok_or_else(|| format!("{path}.{k}: missing in {actual}"))?;
                subset(ev, av, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{path}: expected {} items, found {}: {actual}",
                    e.len(),
                    a.len()
                ));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                subset(ev, av, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Number(e), Value::Number(a)) => {
            let same = match (e.as_u64(), a.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => e.as_f64() == a.as_f64(),
            };
            if same {
                Ok(())
            } else {
                Err(format!("{path}: expected {e}, found {a}"))
            }
        }
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!("{path}: expected {e}, found {a}")),
    }
}

/// Expands the hostile-input encodings (README "Hostile-input encodings")
/// into the `serde_json::Value` a Rust caller would hold. `$special`
/// The bytes of a hex string (`$bytes`).
fn hex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

/// NaN / ±Infinity have no `Value` form and stay encoded: only `jitter.u`
/// reads them (as the `f64` the Rust API takes); cases that put them
/// elsewhere are restricted to other runtimes.
fn expand(v: &Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(expand).collect()),
        Value::Object(m) => {
            // Raw bytes stay encoded: only the `policy` op's `json` list reads them.
            if m.contains_key("$bytes") {
                return v.clone();
            }
            if let Some(s) = m.get("$special") {
                return match s.as_str() {
                    Some("-0") => json!(-0.0),
                    _ => v.clone(),
                };
            }
            if let Some(s) = m.get("$repeat") {
                return Value::String(
                    s.as_str()
                        .unwrap()
                        .repeat(usize::try_from(u(&m["times"])).unwrap()),
                );
            }
            if let Some(item) = m.get("$array") {
                let n = usize::try_from(u(&m["times"])).unwrap();
                return Value::Array(vec![expand(item); n]);
            }
            if let Some(n) = m.get("$keys") {
                // Inserted from the last key down (serde_json's map sorts
                // them anyway; JS and Python keep the insertion order).
                let value = expand(&m["value"]);
                return Value::Object(
                    (0..u(n))
                        .rev()
                        .map(|i| (format!("k{i:07}"), value.clone()))
                        .collect(),
                );
            }
            if let Some(parts) = m.get("$concat") {
                let mut out = String::new();
                for p in parts.as_array().unwrap() {
                    out.push_str(expand(p).as_str().expect("$concat parts are strings"));
                }
                return Value::String(out);
            }
            if let Some(n) = m.get("$nest") {
                // Built iteratively: the case's input is leaked afterwards,
                // since dropping a Value this deep recurses.
                let object = m.get("kind").and_then(Value::as_str) == Some("object");
                let mut x = json!([]);
                for _ in 0..u(n) {
                    x = if object {
                        json!({ "a": x })
                    } else {
                        Value::Array(vec![x])
                    };
                }
                return x;
            }
            if let Some(k) = m.keys().find(|k| k.starts_with('$')) {
                panic!("the Rust runner cannot express {k}; restrict the case with `runtimes`");
            }
            Value::Object(m.iter().map(|(k, x)| (k.clone(), expand(x))).collect())
        }
        other => other.clone(),
    }
}

/// An explicit sample, `$special` included.
fn unit(v: &Value) -> f64 {
    match v.get("$special").and_then(Value::as_str) {
        Some("NaN") => f64::NAN,
        Some("Infinity") => f64::INFINITY,
        Some("-Infinity") => f64::NEG_INFINITY,
        Some(other) => panic!("unknown $special {other}"),
        None => v.as_f64().expect("u is a number"),
    }
}

fn jitter(v: Option<&Value>) -> JitterSource<'_> {
    match v {
        None => JitterSource::Uniform(0.0),
        Some(j) => {
            if let Some(u) = j.get("u") {
                JitterSource::Uniform(unit(u))
            } else if let Some(s) = j.get("seed") {
                JitterSource::Seed(
                    s.as_str()
                        .expect("seed is a string")
                        .parse()
                        .expect("seed is a u64"),
                )
            } else if let Some(k) = j.get("key") {
                JitterSource::Key(k.as_str().expect("key is a string"))
            } else if j.get("none").is_some() {
                JitterSource::Uniform(0.0)
            } else {
                panic!("unknown jitter source {j}")
            }
        }
    }
}

fn policy(input: &Value) -> Result<RetryPolicy, Error> {
    RetryPolicy::from_deserializer(&input["policy"])
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected an unsigned integer, found {v}"))
}

fn decision_json(d: &ojs_retry::Decision) -> Value {
    serde_json::to_value(d).unwrap()
}

/// A failure read as one document, as a host reads it (its limits and
/// depth counted from the failure object).
fn failure(f: &Value) -> Result<Failure, Error> {
    Failure::from_deserializer(f, None)
}

/// Runs one case; `Ok(value)` is compared with `expect`, `Err` with `error`.
/// For `state`, partial results before an error go in the error tuple.
fn run(op: &str, input: &Value) -> Result<Value, (Error, Option<usize>, Value)> {
    let plain = |r: Result<Value, Error>| r.map_err(|e| (e, None, Value::Null));
    match op {
        "parse_duration" => {
            plain(parse_duration(input["text"].as_str().unwrap()).map(|ms| json!({"ms": ms})))
        }
        "format_duration" => plain(format_duration(u(&input["ms"])).map(|t| json!({"text": t}))),
        "format_timestamp" => plain(format_timestamp(u(&input["ms"])).map(|t| json!({"text": t}))),
        "parse_timestamp" => {
            plain(parse_timestamp(input["text"].as_str().unwrap()).map(|ms| json!({"ms": ms})))
        }
        "policy" => plain((|| {
            let p = if let Some(layers) = input.get("layers") {
                RetryPolicy::from_layers(
                    layers.as_array().unwrap().iter().map(Layer::read).collect(),
                )?
            } else {
                let items = input["json"].as_array().unwrap();
                if items.iter().all(Value::is_string) {
                    let texts: Vec<&str> = items.iter().map(|t| t.as_str().unwrap()).collect();
                    RetryPolicy::from_json_layers(&texts)?
                } else {
                    // Text that is not valid UTF-8 exists only as bytes.
                    let layers = items
                        .iter()
                        .map(|t| match t.as_str() {
                            Some(text) => Layer::Json(text.into()),
                            None => Layer::JsonBytes(hex(t["$bytes"].as_str().unwrap()).into()),
                        })
                        .collect();
                    RetryPolicy::from_layers(layers)?
                }
            };
            Ok(json!({"policy": serde_json::to_value(&p).unwrap(), "canonical_json": p.to_json()}))
        })()),
        "delay" => plain((|| {
            let p = policy(input)?;
            let d = p.delay(u(&input["retry_number"]), jitter(input.get("jitter")))?;
            Ok(json!({"delay_ms": d}))
        })()),
        "schedule" => plain((|| {
            let p = policy(input)?;
            let rows = p.schedule(
                u(&input["count"]),
                input.get("jitter").map(|j| jitter(Some(j))),
            )?;
            let rows: Vec<Value> = rows
                .iter()
                .map(|r| {
                    json!({"retry_number": r.retry_number, "attempt": r.attempt, "raw_ms": r.raw_ms,
                    "capped_ms": r.capped_ms, "min_ms": r.min_ms, "max_ms": r.max_ms, "delay_ms": r.delay_ms,
                    "cumulative_ms": r.cumulative_ms})
                })
                .collect();
            Ok(json!({"rows": rows}))
        })()),
        "decide" => plain((|| {
            let p = policy(input)?;
            let d = p.decide(
                &failure(&input["failure"])?,
                u(&input["now"]),
                jitter(input.get("jitter")),
            )?;
            Ok(json!({"decision": decision_json(&d)}))
        })()),
        "matches" => {
            let patterns: Vec<String> = input["patterns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
                .collect();
            let t = input["error_type"].as_str().unwrap();
            let m = ojs_retry::matching::try_first_match(t, &patterns);
            if let Ok(found) = m {
                assert_eq!(first_match(t, &patterns), found);
            }
            plain(m.map(|m| json!({"matches": m.is_some(), "pattern": m})))
        }
        "jitter_sample" => plain(
            jitter(input.get("jitter"))
                .sample(u(&input["retry_number"]))
                .map(|s| json!({"bits": s.bits()})),
        ),
        "state" => {
            let setup = (|| {
                let p = policy(input)?;
                let limit = input
                    .get("history_limit")
                    .map_or(10, |l| usize::try_from(u(l)).unwrap());
                let s = match input.get("initial") {
                    Some(init) => RetryState::from_deserializer(init, limit)?,
                    None => RetryState::new().with_history_limit(limit)?,
                };
                Ok((p, s))
            })();
            let (p, mut s) = setup.map_err(|e| (e, None, Value::Null))?;
            let mut decisions = Vec::new();
            for (i, ev) in input["events"].as_array().unwrap().iter().enumerate() {
                let now = u(&ev["now"]);
                let j = jitter(ev.get("jitter"));
                let f = if let Some(f) = ev.get("fail") {
                    Failure::from_deserializer(f, Some(s.next_attempt()))
                } else {
                    assert!(ev.get("timeout").is_some(), "unknown state event {ev}");
                    Ok(Failure::timeout(s.next_attempt()))
                };
                let r = f.and_then(|f| s.record_failure(&p, &f, now, j));
                match r {
                    Ok(d) => decisions.push(decision_json(&d)),
                    Err(e) => return Err((e, Some(i), json!({"decisions": decisions}))),
                }
            }
            let state: Value = serde_json::from_str(&s.to_json()).unwrap();
            Ok(json!({"decisions": decisions, "state": state}))
        }
        "reservation" => {
            let mut r = Reservation::new(
                u(&input["attempt"]),
                u(&input["now"]),
                u(&input["visibility_timeout_ms"]),
            )
            .map_err(|e| (e, None, Value::Null))?;
            let mut results = Vec::new();
            for ev in input["events"].as_array().unwrap() {
                let out = if let Some(n) = ev.get("heartbeat") {
                    match r.heartbeat(u(n)) {
                        Ok(Heartbeat::Extended { deadline }) => json!({"extended": deadline}),
                        Ok(Heartbeat::Expired) => json!("expired"),
                        Err(e) => return Err((e, None, Value::Null)),
                    }
                } else if let Some(n) = ev.get("is_expired") {
                    json!(r.is_expired(u(n)).map_err(|e| (e, None, Value::Null))?)
                } else if let Some(n) = ev.get("expiry") {
                    match r.expiry(u(n)).map_err(|e| (e, None, Value::Null))? {
                        Some(f) => json!({"attempt": f.attempt, "timed_out": f.timed_out}),
                        None => Value::Null,
                    }
                } else {
                    panic!("unknown reservation event {ev}")
                };
                results.push(out);
            }
            Ok(json!({"results": results, "deadline": r.deadline()}))
        }
        "preset" => plain(preset_case(input)),
        "transaction" => plain(transaction::run(input)),
        other => panic!("unknown op {other:?}"),
    }
}

/// The `preset` op: build, round-trip through the JSON document, then the
/// delays, decisions and schedule of the round-tripped policy.
fn preset_case(input: &Value) -> Result<Value, Error> {
    let p = RetryPolicy::preset(input["system"].as_str().unwrap(), &ov(&input["config"]))?;
    let doc = serde_json::to_value(&p).unwrap();
    let q = RetryPolicy::from_deserializer(&doc)?;
    let mut out = json!({"policy": doc, "round_trip": q == p && q.to_json() == p.to_json()});
    let j = JitterSource::Uniform(input.get("u").and_then(Value::as_f64).unwrap_or(0.0));
    if let Some(ns) = input.get("retry_numbers") {
        let d: Result<Vec<u64>, Error> = ns
            .as_array()
            .unwrap()
            .iter()
            .map(|n| q.delay(u(n), j))
            .collect();
        out["delays"] = json!(d?);
    }
    if let Some(fs) = input.get("failures") {
        let mut ds = Vec::new();
        for f in fs.as_array().unwrap() {
            ds.push(decision_json(&q.decide(&failure(f)?, 0, j)?));
        }
        out["decisions"] = json!(ds);
    }
    Ok(out)
}

/// Cases restricted (`runtimes`) to other runtimes, by id, with the reason.
const NOT_APPLICABLE: &[(&str, &str)] = &[
    // hostile.json: values a Rust caller cannot hand the engine.
    ("hostile-policy-max-attempts-nan", NO_NAN),
    ("hostile-policy-coefficient-nan", NO_NAN),
    ("hostile-policy-max-attempts-inf", NO_NAN),
    ("hostile-policy-coefficient-inf", NO_NAN),
    ("hostile-policy-max-attempts-neg-inf", NO_NAN),
    ("hostile-policy-coefficient-neg-inf", NO_NAN),
    ("hostile-policy-nan-in-list", NO_NAN),
    ("hostile-policy-nan-unknown-field", NO_NAN),
    ("hostile-state-initial-attempt-inf", NO_NAN),
    ("hostile-decide-attempt-2pow64", U64_ARG),
    ("hostile-decide-attempt-nan", U64_ARG),
    ("hostile-decide-attempt-inf", U64_ARG),
    ("hostile-decide-attempt-neg-zero", U64_ARG),
    ("hostile-decide-attempt-fraction", U64_ARG),
    ("hostile-decide-attempt-negative", U64_ARG),
    ("hostile-decide-attempt-string", U64_ARG),
    ("hostile-decide-attempt-bool", U64_ARG),
    ("hostile-decide-attempt-null", U64_ARG),
    ("hostile-decide-attempt-array", U64_ARG),
    ("hostile-decide-attempt-object", U64_ARG),
    ("hostile-delay-retry-number-nan", U64_ARG),
    ("hostile-delay-retry-number-inf", U64_ARG),
    ("hostile-delay-retry-number-neg-zero", U64_ARG),
    ("hostile-delay-retry-number-fraction", U64_ARG),
    ("hostile-delay-retry-number-negative", U64_ARG),
    ("hostile-delay-retry-number-string", U64_ARG),
    ("hostile-delay-retry-number-bool", U64_ARG),
    ("hostile-delay-retry-number-null", U64_ARG),
    ("hostile-delay-retry-number-array", U64_ARG),
    ("hostile-delay-retry-number-object", U64_ARG),
    ("hostile-decide-now-nan", U64_ARG),
    ("hostile-decide-now-inf", U64_ARG),
    ("hostile-decide-now-negative", U64_ARG),
    ("hostile-decide-now-fraction", U64_ARG),
    ("hostile-decide-now-string", U64_ARG),
    ("hostile-decide-now-bool", U64_ARG),
    ("hostile-schedule-count-nan", U64_ARG),
    (
        "hostile-delay-u-string",
        "JitterSource::Uniform takes an f64: a string does not compile",
    ),
    (
        "hostile-delay-u-bool",
        "JitterSource::Uniform takes an f64: a bool does not compile",
    ),
    ("hostile-value-nest-100000-in-field", NESTED),
    ("hostile-value-nest-100000-objects-in-field", NESTED),
    ("hostile-policy-lone-surrogate-pattern", NO_SURROGATE),
    ("hostile-policy-lone-surrogate-key", NO_SURROGATE),
    ("hostile-matches-lone-surrogate", NO_SURROGATE),
    ("hostile-duration-lone-surrogate", NO_SURROGATE),
    ("hostile-policy-json-text-lone-surrogate", NO_SURROGATE),
    ("transaction-lone-surrogate-replaced", NO_SURROGATE),
    ("hostile-bigint-retry-number", NO_BIGINT),
    ("hostile-bigint-attempt", NO_BIGINT),
    ("hostile-bigint-now", NO_BIGINT),
    ("hostile-bigint-in-policy", NO_BIGINT),
    ("hostile-bigint-in-policy-2pow53", NO_BIGINT),
    ("hostile-bigint-in-policy-2pow64", NO_BIGINT),
    ("hostile-bigint-coefficient", NO_BIGINT),
];
const NO_NAN: &str = "a serde_json::Value cannot hold NaN or an infinity";
const U64_ARG: &str = "the Rust API takes a u64 here: the value does not compile";
const NESTED: &str = "a serde_json::Value 100 000 deep cannot be walked by this harness's test thread (the engine reads host values through Layer::read, depth-limited, tested in core/src/value.rs; JSON text: hostile-json-nest-*)";
const NO_SURROGATE: &str = "a Rust &str cannot hold a lone surrogate";
const NO_BIGINT: &str = "BigInt is a JavaScript type";

/// A good call after every case: the engine still answers correctly.
fn still_answers() -> Result<(), String> {
    let p = RetryPolicy::from_json(r#"{"jitter": false}"#).map_err(|e| e.to_string())?;
    match (
        p.delay(3, JitterSource::Uniform(0.0)),
        parse_duration("PT1.5S"),
    ) {
        (Ok(4_000), Ok(1_500)) => Ok(()),
        other => Err(format!("a good call after this case answered {other:?}")),
    }
}

fn check_case(case: &Value) -> Result<(), String> {
    let op = case["op"].as_str().ok_or("case without op")?;
    let input = expand(&case["input"]);
    let out = std::panic::catch_unwind(|| run(op, &input)).map_err(|_| "panicked".to_owned());
    if case["input"].to_string().contains("\"$nest\"") {
        // Dropping a 100 000-deep Value would overflow the test's stack.
        std::mem::forget(input);
    }
    still_answers()?;
    match (out?, case.get("expect"), case.get("error")) {
        (Ok(actual), Some(expect), None) => subset(&expand(expect), &actual, "expect"),
        (Err((e, event, partial)), None, Some(want)) => {
            if e.code().as_str() != want["code"] {
                return Err(format!(
                    "expected code {}, found {} ({e})",
                    want["code"],
                    e.code()
                ));
            }
            if json!(e.field()) != want["field"] {
                return Err(format!(
                    "expected field {}, found {:?} ({e})",
                    want["field"],
                    e.field()
                ));
            }
            let want_path = want.get("path").unwrap_or(&want["field"]);
            if json!(e.path()) != *want_path {
                return Err(format!(
                    "expected path {want_path}, found {:?} ({e})",
                    e.path()
                ));
            }
            if let Some(paths) = want.get("paths") {
                let got: Vec<Value> = e.faults().iter().map(|f| json!(f.path)).collect();
                if paths.as_array() != Some(&got) {
                    return Err(format!("expected paths {paths}, found {got:?} ({e})"));
                }
            }
            if let Some(want_event) = want.get("event") {
                if event.map(|i| json!(i)) != Some(want_event.clone()) {
                    return Err(format!(
                        "expected the error at event {want_event}, found {event:?}"
                    ));
                }
            }
            if let Some(before) = case.get("expect_before_error") {
                subset(before, &partial, "expect_before_error")?;
            }
            // Every error has a non-empty message.
            if e.message().is_empty() {
                return Err("empty error message".into());
            }
            Ok(())
        }
        (Ok(actual), None, Some(want)) => Err(format!("expected error {want}, got {actual}")),
        (Err((e, ..)), Some(_), None) => Err(format!("unexpected error: {e}")),
        _ => Err("a case needs exactly one of expect / error".into()),
    }
}

#[test]
fn every_vector_passes() {
    let mut files: Vec<PathBuf> = fs::read_dir(vectors_dir())
        .expect("tests/vectors exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 9,
        "expected the vector files, found {files:?}"
    );
    let mut ids = std::collections::HashSet::new();
    let (mut passed, mut failed, mut not_applicable) = (0, Vec::new(), Vec::new());
    for file in &files {
        let doc: Value = serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap();
        for case in doc["cases"].as_array().expect("cases array") {
            let id = case["id"].as_str().expect("id").to_owned();
            assert!(ids.insert(id.clone()), "duplicate id {id}");
            assert!(
                case.get("spec").is_some_and(Value::is_string),
                "{id}: no spec reference"
            );
            if let Some(rts) = case.get("runtimes").and_then(Value::as_array) {
                if !rts.iter().any(|r| r == "rust") {
                    match NOT_APPLICABLE.iter().find(|(na, _)| *na == id) {
                        Some((_, why)) => {
                            not_applicable.push(format!("{id}: {why}"));
                            continue;
                        }
                        None => {
                            failed.push(format!("{id}: restricted to {rts:?}; list it in NOT_APPLICABLE with a reason"));
                            continue;
                        }
                    }
                }
            }
            match check_case(case) {
                Ok(()) => passed += 1,
                Err(why) => failed.push(format!("{id}: {why}")),
            }
        }
    }
    for (na, _) in NOT_APPLICABLE {
        if !ids.contains(*na) {
            failed.push(format!("{na}: listed in NOT_APPLICABLE but no such case"));
        }
    }
    println!(
        "vectors [rust]: {passed} passed, {} failed, {} not applicable:",
        failed.len(),
        not_applicable.len()
    );
    for na in &not_applicable {
        println!("  NOT APPLICABLE {na}");
    }
    assert!(
        failed.is_empty(),
        "{} vector(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(passed > 300, "suspiciously few vectors: {passed}");
}
