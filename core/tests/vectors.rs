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
    Error, Failure, HandlerCode, Heartbeat, JitterSource, JobError, Reservation, RetryPolicy,
    RetryState, first_match, format_duration, format_timestamp, parse_duration, parse_timestamp,
};
use serde_json::{Value, json};

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

fn jitter(v: Option<&Value>) -> JitterSource<'_> {
    match v {
        None => JitterSource::Uniform(0.0),
        Some(j) => {
            if let Some(u) = j.get("u") {
                JitterSource::Uniform(u.as_f64().expect("u is a number"))
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
    RetryPolicy::from_value(&input["policy"])
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected an unsigned integer, found {v}"))
}

fn decision_json(d: &ojs_retry::Decision) -> Value {
    serde_json::to_value(d).unwrap()
}

fn failure(f: &Value) -> Result<Failure, Error> {
    Ok(Failure {
        attempt: u(&f["attempt"]),
        error_type: f.get("type").and_then(Value::as_str).map(str::to_owned),
        code: f
            .get("code")
            .and_then(Value::as_str)
            .map(HandlerCode::parse)
            .transpose()?,
        timed_out: f.get("timed_out").and_then(Value::as_bool).unwrap_or(false),
    })
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
                RetryPolicy::from_values(layers.as_array().unwrap())?
            } else {
                let texts: Vec<&str> = input["json"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap())
                    .collect();
                RetryPolicy::from_json_layers(&texts)?
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
            let m = first_match(t, &patterns);
            assert_eq!(ojs_retry::matches(t, &patterns), m.is_some());
            Ok(json!({"matches": m.is_some(), "pattern": m}))
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
                    Some(init) => RetryState::from_value(init, limit)?,
                    None => RetryState::new().with_history_limit(limit)?,
                };
                Ok((p, s))
            })();
            let (p, mut s) = setup.map_err(|e| (e, None, Value::Null))?;
            let mut decisions = Vec::new();
            for (i, ev) in input["events"].as_array().unwrap().iter().enumerate() {
                let now = u(&ev["now"]);
                let j = jitter(ev.get("jitter"));
                let r = if let Some(f) = ev.get("fail") {
                    let mut e =
                        JobError::new(f["type"].as_str().unwrap(), f["message"].as_str().unwrap());
                    if let Some(c) = f.get("code") {
                        e.code = Some(HandlerCode::parse(c.as_str().unwrap()).unwrap());
                    }
                    e.details = f.get("details").cloned();
                    s.record_failure(&p, &e, now, j)
                } else {
                    assert!(ev.get("timeout").is_some(), "unknown state event {ev}");
                    s.record_timeout(&p, now, j)
                };
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
        other => panic!("unknown op {other:?}"),
    }
}

/// The `preset` op: build, round-trip through the JSON document, then the
/// delays, decisions and schedule of the round-tripped policy.
fn preset_case(input: &Value) -> Result<Value, Error> {
    let p = RetryPolicy::preset_value(input["system"].as_str().unwrap(), &input["config"])?;
    let doc = serde_json::to_value(&p).unwrap();
    let q = RetryPolicy::from_value(&doc)?;
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

fn check_case(case: &Value) -> Result<(), String> {
    let op = case["op"].as_str().ok_or("case without op")?;
    let out =
        std::panic::catch_unwind(|| run(op, &case["input"])).map_err(|_| "panicked".to_owned())?;
    match (out, case.get("expect"), case.get("error")) {
        (Ok(actual), Some(expect), None) => subset(expect, &actual, "expect"),
        (Err((e, event, partial)), None, Some(want)) => {
            if e.code().as_str() != want["code"] {
                return Err(format!(
                    "expected code {}, found {} ({e})",
                    want["code"],
                    e.code()
                ));
            }
            if e.field() != want["field"] {
                return Err(format!(
                    "expected field {}, found {:?} ({e})",
                    want["field"],
                    e.field()
                ));
            }
            if let Some(fields) = want.get("fields") {
                let got: Vec<Value> = e.iter_faults().map(|f| json!(f.field)).collect();
                if fields.as_array() != Some(&got) {
                    return Err(format!("expected fields {fields}, found {got:?} ({e})"));
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
    let (mut passed, mut failed) = (0, Vec::new());
    for file in &files {
        let doc: Value = serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap();
        for case in doc["cases"].as_array().expect("cases array") {
            let id = case["id"].as_str().expect("id").to_owned();
            assert!(ids.insert(id.clone()), "duplicate id {id}");
            assert!(
                case.get("spec").is_some_and(Value::is_string),
                "{id}: no spec reference"
            );
            match check_case(case) {
                Ok(()) => passed += 1,
                Err(why) => failed.push(format!("{id}: {why}")),
            }
        }
    }
    println!("vectors: {passed} passed, {} failed", failed.len());
    assert!(
        failed.is_empty(),
        "{} vector(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(passed > 300, "suspiciously few vectors: {passed}");
}
