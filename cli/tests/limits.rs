//! The command line holds its input to the engine's limits: files are
//! counted before any is opened and read only as far as the merge's
//! budget, so an endless stream is refused rather than read to its end.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ojs-retry"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The error's code and field, from `--json` output.
fn error_of(args: &[&str]) -> (String, String) {
    let out = run(args);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let text = v.to_string();
    let code = v["code"].as_str().unwrap_or_default().to_owned();
    (code, text)
}

fn temp_file(name: &str, contents: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("ojs-retry-cli-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(contents)
        .unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn an_endless_stream_is_refused_after_one_document() {
    // /dev/zero never ends: read to its end, the command would not return.
    let (code, text) = error_of(&["validate", "--json", "/dev/zero"]);
    assert_eq!(code, "validation.retry_policy_invalid", "{text}");
}

#[test]
fn layers_over_the_budget_together_are_refused() {
    let mut doc = b"{\"max_attempts\":3".to_vec();
    doc.resize(600_000 - 1, b' ');
    doc.push(b'}');
    let a = temp_file("a.json", &doc);
    let (code, text) = error_of(&["validate", "--json", &a, &a]);
    assert_eq!(code, "validation.retry_policy_invalid", "{text}");
    assert!(text.contains("together"), "{text}");
    // One of them alone is a valid policy.
    assert_eq!(run(&["validate", &a]).status.code(), Some(0));
}

#[test]
fn files_are_counted_before_any_is_opened() {
    // 17 names of files that do not exist: the count is refused first.
    let names: Vec<String> = (0..17).map(|i| format!("/nonexistent/{i}.json")).collect();
    let mut args = vec!["validate", "--json"];
    args.extend(names.iter().map(String::as_str));
    let (code, text) = error_of(&args);
    assert_eq!(code, "validation.invalid_argument", "{text}");
    assert!(text.contains("layers"), "{text}");
}

#[test]
fn an_error_type_over_64_kib_is_refused() {
    let policy = temp_file("p.json", b"{}");
    let long = "x".repeat(65_537);
    let (code, text) = error_of(&[
        "explain",
        "--json",
        &policy,
        "--attempt",
        "1",
        "--error-type",
        &long,
        "--u",
        "0.5",
    ]);
    assert_eq!(code, "validation.invalid_argument", "{text}");
    let ok = "x".repeat(65_536);
    let out = run(&[
        "explain",
        "--json",
        &policy,
        "--attempt",
        "1",
        "--error-type",
        &ok,
        "--u",
        "0.5",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
