//! One call at every documented limit (README "Limits on input"), timed:
//! `cargo run --release -p ojs-retry-bench --example limits`. Each row is
//! the best of three runs; the limits are chosen so that every row stays
//! well under a second (`bench/RESULTS.md`).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Instant;

use ojs_retry::limits::{MAX_ARRAY_LEN, MAX_DOCUMENT_BYTES, MAX_LAYERS, MAX_STRING_BYTES};
use ojs_retry::{Failure, JitterSource, Layer, RetryPolicy, RetryState, Value};
use serde_json::json;

fn time<T>(name: &str, mut f: impl FnMut() -> T) {
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        std::hint::black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("| {name} | {:.1} ms |", best * 1e3);
}

fn main() {
    let big = "x".repeat(MAX_STRING_BYTES);
    // A document at the 1 MiB budget: 15 strings of 64 KiB and the rest.
    let last = MAX_DOCUMENT_BYTES - (1 + 20 + 1 + 16 + 15 * MAX_STRING_BYTES);
    let mut pats = vec![json!(big.clone()); 15];
    pats.push(json!("y".repeat(last)));
    let doc = json!({ "non_retryable_errors": pats });
    // JSON text of exactly 1 MiB: the value's text, its last pattern cut.
    let mut text = doc.to_string();
    let over = text.len() - MAX_DOCUMENT_BYTES;
    text.replace_range(text.len() - 3 - over..text.len() - 3, "");
    let many = json!({ "non_retryable_errors": vec!["a.*"; MAX_ARRAY_LEN] });
    println!("| call at the limit | time |\n|---|---|");
    time("policy from a 1 MiB value (16 × 64 KiB patterns)", || {
        RetryPolicy::from_layers(vec![Layer::read(&doc)]).unwrap()
    });
    assert_eq!(text.len(), MAX_DOCUMENT_BYTES);
    time("policy from 1 MiB of JSON text", || {
        RetryPolicy::from_json(&text).unwrap()
    });
    time("policy with 10 000 patterns", || {
        RetryPolicy::from_layers(vec![Layer::read(&many)]).unwrap()
    });
    let layers: Vec<Value> = (0..MAX_LAYERS)
        .map(|_| Value::read(&many).unwrap())
        .collect();
    time("merge of 16 layers sharing one 10 000-pattern list", || {
        RetryPolicy::from_values(&layers).is_ok()
    });
    let at_limit: Vec<Value> = (0..MAX_LAYERS)
        .map(|_| Value::read(&doc).unwrap())
        .collect();
    time(
        "merge of 16 references to one 1 MiB value (refused: over 1 MiB together)",
        || RetryPolicy::from_values(&at_limit).is_err(),
    );
    let thousand: Vec<&str> = vec![text.as_str(); MAX_LAYERS];
    time(
        "merge of 16 references to a 1 MiB text (refused before parsing)",
        || RetryPolicy::from_json_layers(&thousand).is_err(),
    );
    let p = RetryPolicy::from_layers(vec![Layer::read(&many)]).unwrap();
    time("decide against 10 000 patterns, 64 KiB error type", || {
        p.decide(
            &Failure::new(1).with_type(big.clone()),
            0,
            JitterSource::Uniform(0.5),
        )
        .unwrap()
    });
    // The patterns' 1 MiB budget, each one differing from the type only in
    // its last byte: every byte is compared.
    let mut near = big.clone();
    near.pop();
    near.push('y');
    let mut patterns: Vec<String> = vec![near; 15];
    patterns.push("x".repeat(MAX_DOCUMENT_BYTES - 1 - 15 * (MAX_STRING_BYTES + 1) - 1));
    time("matches: 64 KiB type against 1 MiB of patterns", || {
        ojs_retry::matching::try_first_match(&big, &patterns).unwrap()
    });
    let tiny: Vec<String> = (0..MAX_ARRAY_LEN).map(|i| format!("p{i}.*")).collect();
    time("matches: 64 KiB type against 10 000 patterns", || {
        ojs_retry::matching::try_first_match(&big, &tiny).unwrap()
    });
    let q = RetryPolicy::default();
    time("schedule(10 000) keyed by a 64 KiB key", || {
        q.schedule(ojs_retry::MAX_SCHEDULE_ROWS, Some(JitterSource::Key(&big)))
            .unwrap()
    });
    let details = json!({ "attempt": 1, "details": vec![json!(big.clone()); 15] });
    time("failure of ~1 MiB (details 15 × 64 KiB)", || {
        Failure::from_deserializer(&details, None).unwrap()
    });
    let errors: Vec<_> = (1..=MAX_ARRAY_LEN as u64)
        .map(|n| json!({"attempt": n, "type": "a.b", "message": "m", "code": "RETRY", "timestamp": "2026-02-12T10:00:00Z"}))
        .collect();
    let state = json!({ "attempt": MAX_ARRAY_LEN, "errors": errors });
    time(
        "state with a 10 000-record history (read, trimmed to 10)",
        || RetryState::from_deserializer(&state, 10).unwrap(),
    );
    let h = RetryPolicy::from_json(r#"{"max_attempts": 11}"#).unwrap();
    time(
        "herd(100 000 jobs, 10 retries): 1 000 000 decisions",
        || h.herd(100_000, 10, 1_000).unwrap(),
    );
    let long = RetryPolicy::from_json(r#"{"max_attempts": 2000, "jitter": false}"#).unwrap();
    time("herd(1 job, 1 000 rounds)", || {
        long.herd(1, 1_000, 1_000).unwrap()
    });
    let wide =
        RetryPolicy::from_json(r#"{"initial_interval": "PT10M", "max_interval": "PT1H"}"#).unwrap();
    time(
        "herd with ~1 000 000 buckets (1 000 jobs, 2 rounds, 4 ms)",
        || wide.herd(1_000, 2, 4).unwrap(),
    );
}
