//! The `ojs-retry` binary end to end, on the §12 example policies.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Runs the binary with a wide `COLUMNS`, so that no line is wrapped
/// (tests/width.rs checks the output at 80 columns).
fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ojs-retry"))
        .args(args)
        .env("COLUMNS", "1000")
        .output()
        .unwrap()
}

fn json_out(args: &[&str]) -> Value {
    let out = run(args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn validate_prints_the_effective_policy() {
    // §12.6 partial document merged with the §8 defaults.
    let out = run(&["validate", &example("12.6-no-retry-dead-letter.json")]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["max_attempts"], 1);
    assert_eq!(v["initial_interval"], "PT1S");
    assert_eq!(v["max_interval"], "PT5M");
    assert_eq!(v["on_exhaustion"], "dead_letter");
}

#[test]
fn validate_reports_every_fault_and_fails() {
    let out = run(&["validate", &example("invalid.json")]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    for field in [
        "max_attempts",
        "jitter",
        "on_exhaustion",
        "retries",
        "max_interval",
    ] {
        assert!(
            err.contains(&format!("] {field}: ")),
            "{field} missing in:\n{err}"
        );
    }
    let v = json_out(&["validate", "--json", &example("invalid.json")]);
    assert_eq!(v["valid"], false);
    assert_eq!(v["code"], "validation.retry_policy_invalid");
    assert_eq!(v["faults"].as_array().unwrap().len(), 5);
}

#[test]
fn validate_merges_layers_in_order() {
    let v = json_out(&[
        "validate",
        "--json",
        &example("12.4-custom-non-retryable.json"),
        &example("12.1-no-retry.json"),
    ]);
    assert_eq!(v["policy"]["max_attempts"], 1);
    assert_eq!(v["policy"]["initial_interval"], "PT30S");
}

#[test]
fn schedule_reproduces_the_12_3_table() {
    // §12.3 table: 15 s · n^4 capped at 1 h.
    let v = json_out(&[
        "schedule",
        "--json",
        "--retries",
        "5",
        "--u",
        "0.5",
        &example("12.3-aggressive-dead-letter-polynomial.json"),
    ]);
    let raw: Vec<u64> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["raw_ms"].as_u64().unwrap())
        .collect();
    let capped: Vec<u64> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["capped_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(raw, [15_000, 240_000, 1_215_000, 3_840_000, 9_375_000]);
    assert_eq!(capped, [15_000, 240_000, 1_215_000, 3_600_000, 3_600_000]);
}

#[test]
fn schedule_with_a_key_is_the_keyed_jitter() {
    // Values from tests/vectors/reference.py (independent implementation).
    let v = json_out(&[
        "schedule",
        "--json",
        "--key",
        "order_789",
        "--retries",
        "5",
        &example("12.3-aggressive-dead-letter-polynomial.json"),
    ]);
    let delays: Vec<u64> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["delay_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(delays, [8_555, 292_343, 1_306_305, 3_600_000, 3_094_215]);
}

#[test]
fn schedule_defaults_to_the_policy_retries_and_prints_a_table() {
    let out = run(&["schedule", "--seed", "7", &example("12.2-default.json")]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // Default policy: 2 retries → header line, column line, two rows.
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.contains("exponential strategy, 2 retries allowed"));
}

#[test]
fn explain_non_retryable_and_retry() {
    let v = json_out(&[
        "explain",
        "--json",
        &example("12.4-custom-non-retryable.json"),
        "--attempt",
        "1",
        "--error-type",
        "auth.invalid_credentials",
    ]);
    assert_eq!(v["decision"]["action"], "dead_letter");
    assert_eq!(v["decision"]["matched_pattern"], "auth.invalid_credentials");

    let out = run(&[
        "explain",
        &example("12.4-custom-non-retryable.json"),
        "--attempt",
        "1",
        "--error-type",
        "external.crm.service_unavailable",
        "--now",
        "2026-02-12T10:31:05Z",
        "--u",
        "0.5",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // §12.4: a 503 retries; retry 1 after 30 s (u = 0.5 is the identity).
    assert!(
        text.contains(
            "Retry 1 (attempt 2) is scheduled after PT30S (30000 ms), at 2026-02-12T10:31:35.000Z"
        ),
        "{text}"
    );
}

#[test]
fn explain_rejects_bad_arguments_with_a_code() {
    let v = json_out(&[
        "explain",
        "--json",
        &example("12.2-default.json"),
        "--attempt",
        "0",
    ]);
    assert_eq!(v["code"], "validation.invalid_argument");
    assert_eq!(v["field"], "attempt");
    let out = run(&[
        "explain",
        &example("12.2-default.json"),
        "--attempt",
        "1",
        "--code",
        "NOPE",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn reads_stdin_and_reports_missing_files() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ojs-retry"))
        .args(["validate", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"max_attempts": 9}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"max_attempts\": 9"));
    assert_eq!(
        run(&["validate", "/nonexistent/policy.json"]).status.code(),
        Some(2)
    );
}

#[test]
fn a_file_that_is_not_utf8_is_a_policy_fault() {
    let path = std::env::temp_dir().join(format!("ojs-retry-latin1-{}.json", std::process::id()));
    // Latin-1 "é" (0xE9) inside a string: not UTF-8.
    std::fs::write(&path, b"{\"non_retryable_errors\": [\"caf\xe9\"]}").unwrap();
    let v = json_out(&["validate", "--json", path.to_str().unwrap()]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(v["code"], "validation.retry_policy_invalid");
    assert_eq!(v["field"], serde_json::Value::Null);
    assert!(
        v["faults"][0]["message"]
            .as_str()
            .unwrap()
            .contains("invalid UTF-8 at byte 30"),
        "{v}"
    );
}
