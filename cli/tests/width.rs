//! What a person reads in an 80-column terminal: every command's output
//! and errors fit it, `--help` wraps between words and its examples run,
//! the README's commands run, unbounded values read as what they mean, and
//! faults name the flag or file they came from.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs the binary from the repository's root (where the examples' paths
/// start) with `COLUMNS` set and no terminal.
fn run_at(columns: usize, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ojs-retry"))
        .args(args)
        .current_dir(root())
        .env("COLUMNS", columns.to_string())
        .output()
        .unwrap()
}

fn run(args: &[&str]) -> Output {
    run_at(80, args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// `text` with each wrapped line joined back to the line it continues
/// (continuations start with spaces; table rows start with a digit).
fn joined(b: &[u8]) -> String {
    text(b).replace("\n    ", " ").replace("\n  ", " ")
}

/// A policy file under the test's own temporary folder.
fn file(name: &str, json: &str) -> String {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, json).unwrap();
    path.to_string_lossy().into_owned()
}

/// Every line of standard output and standard error is at most 80
/// characters (what a terminal shows, not bytes); `--json` is for
/// machines, one line per document.
fn assert_fits(args: &[&str], out: &Output) {
    if args.contains(&"--json") {
        return;
    }
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        for line in text(bytes).lines() {
            let n = line.chars().count();
            assert!(n <= 80, "{args:?}: a {n}-column line on {stream}:\n{line}");
        }
    }
}

fn presets() -> [String; 3] {
    [
        file(
            "bullmq.json",
            r#"{"preset": {"system": "bullmq", "attempts": 6, "backoff": {"type": "exponential", "delay": 1000}}}"#,
        ),
        file("sidekiq.json", r#"{"preset": {"system": "sidekiq"}}"#),
        file(
            "celery.json",
            r#"{"preset": {"system": "celery", "max_retries": null, "retry_backoff": true}}"#,
        ),
    ]
}

#[test]
fn every_command_fits_80_columns() {
    let [bullmq, sidekiq, celery] = presets();
    let bad = file("bad-layer.json", r#"{"max_attempt": 3, "jitter": "often"}"#);
    let p = "examples/12.3-aggressive-dead-letter-polynomial.json";
    let d = "examples/12.2-default.json";
    let commands: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["validate", "--help"],
        vec!["schedule", "--help"],
        vec!["explain", "--help"],
        vec!["simulate", "--help"],
        vec!["validate", p],
        vec!["validate", "examples/invalid.json"],
        vec!["validate", d, &bad],
        vec!["schedule", p, "--key", "order_789"],
        vec!["schedule", p, "--key", "order_789", "--retries", "100"],
        vec!["schedule", &bullmq],
        vec!["schedule", &sidekiq, "--seed", "7"],
        vec!["schedule", &celery, "--u", "0.5"],
        vec!["schedule", d, "--chart", "--key", "a"],
        vec!["schedule", &sidekiq, "--chart", "--key", "a"],
        vec!["explain", p, "--attempt", "3", "--key", "a", "--now", "0"],
        vec!["explain", p, "--attempt", "3", "--now", "yesterday"],
        vec!["explain", p, "--attempt", "0", "--now", "0"],
        vec!["simulate", d, "--jobs", "2000"],
        vec!["simulate", &sidekiq, "--jobs", "500", "--retries", "12"],
        vec!["simulate", d, "--jobs", "0"],
    ];
    for args in &commands {
        assert_fits(args, &run(args));
    }
}

#[test]
fn the_default_table_fits_and_wide_shows_every_column() {
    let p = "examples/12.3-aggressive-dead-letter-polynomial.json";
    let narrow = text(&run(&["schedule", p, "--key", "order_789"]).stdout);
    let wide_out = run(&["schedule", p, "--key", "order_789", "--wide"]);
    assert_fits(&["schedule"], &run(&["schedule", p, "--key", "order_789"]));
    let wide = text(&wide_out.stdout);
    let head = |t: &str| t.lines().find(|l| l.contains("retry")).unwrap().to_owned();
    for column in [
        "attempt",
        "raw",
        "capped",
        "jitter range",
        "delay",
        "cumulative",
    ] {
        assert!(head(&wide).contains(column), "{column} in --wide:\n{wide}");
    }
    assert!(
        wide.lines().any(|l| l.chars().count() > 80),
        "--wide is the full table"
    );
    // A wider terminal gets the full table without the flag.
    let rows = |t: &str| {
        t.lines()
            .skip_while(|l| !l.starts_with("attempt"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let at_200 = text(&run_at(200, &["schedule", p, "--key", "order_789"]).stdout);
    assert_eq!(rows(&at_200), rows(&wide));
    // At 60 columns, columns are left out, and the output says which.
    let at_60 = run_at(60, &["schedule", p, "--key", "order_789"]);
    let t = text(&at_60.stdout);
    assert!(t.lines().all(|l| l.chars().count() <= 60), "{t}");
    assert!(t.contains("Left out to fit 60 columns: raw"), "{t}");
    assert_ne!(narrow, t);
}

#[test]
fn unbounded_values_read_as_what_they_mean() {
    let [bullmq, sidekiq, celery] = presets();
    let b = joined(&run(&["schedule", &bullmq]).stdout);
    assert!(b.contains("no cap"), "{b}");
    assert!(!b.contains("104249991d"), "{b}");
    let s = joined(&run(&["schedule", &sidekiq, "--seed", "1"]).stdout);
    assert!(
        s.contains("25 retries allowed (max_attempts 26)") && s.contains("no cap"),
        "{s}"
    );
    let c = joined(&run(&["schedule", &celery, "--u", "0.5"]).stdout);
    assert!(c.contains("unlimited retries"), "{c}");
    assert!(
        c.contains("the policy retries without limit; use --retries"),
        "{c}"
    );
    // BullMQ's own default is one attempt: nothing to draw, and it says so.
    let never = file("bullmq-default.json", r#"{"preset": {"system": "bullmq"}}"#);
    for args in [
        vec!["schedule", &never],
        vec!["schedule", &never, "--chart"],
    ] {
        let out = run(&args);
        assert!(out.status.success());
        let t = joined(&out.stdout);
        assert!(
            t.starts_with("This policy never retries (max_attempts 1)"),
            "{t}"
        );
    }
}

#[test]
fn a_flag_fault_names_the_flag_beside_the_field() {
    let p = "examples/12.2-default.json";
    let out = run(&["explain", p, "--attempt", "1", "--now", "yesterday"]);
    assert_eq!(out.status.code(), Some(1));
    let err = joined(&out.stderr);
    assert!(
        err.starts_with("error[validation.invalid_argument] --now (field timestamp): "),
        "{err}"
    );
    let out = run(&[
        "explain",
        p,
        "--attempt",
        "1",
        "--now",
        "yesterday",
        "--json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["flag"].as_str(), v["field"].as_str()),
        (Some("--now"), Some("timestamp"))
    );
    let err = joined(&run(&["schedule", p, "--retries", "100001"]).stderr);
    assert!(
        err.starts_with("error[validation.invalid_argument] --retries (field count): "),
        "{err}"
    );
    let err = text(&run(&["simulate", p, "--jobs", "0"]).stderr);
    assert!(
        err.starts_with("error[validation.invalid_argument] --jobs (field jobs): "),
        "{err}"
    );
    let err = text(
        &run(&[
            "explain",
            p,
            "--attempt",
            "1",
            "--code",
            "MAYBE",
            "--now",
            "0",
        ])
        .stderr,
    );
    assert!(
        err.starts_with("error[validation.invalid_argument] --code (field code): ")
            || err.contains("--code (field code)"),
        "{err}"
    );
}

#[test]
fn a_fault_names_its_file_and_an_unknown_field_its_likely_name() {
    let queue = "examples/12.2-default.json";
    let job = file("job-typo.json", r#"{"max_attempt": 3}"#);
    let out = run(&["validate", queue, &job]);
    assert_eq!(out.status.code(), Some(1));
    let err = joined(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "{job}: error[validation.retry_policy_invalid] max_attempt: unknown field"
        )),
        "{err}"
    );
    assert!(err.contains(r#"(did you mean "max_attempts"?)"#), "{err}");
    assert!(
        !err.contains("layer 2"),
        "the file, not the layer number: {err}"
    );
    let out = run(&["validate", "--json", queue, &job]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["faults"][0]["file"].as_str(), Some(job.as_str()));
    assert_eq!(v["faults"][0]["path"].as_str(), Some("max_attempt"));
    // A rule across layers belongs to no one file.
    let a = file("initial.json", r#"{"initial_interval": "PT10M"}"#);
    let err = text(&run(&["validate", &a, queue]).stderr);
    assert!(
        err.starts_with("the merged policy: error[") || err.starts_with(&format!("{a}: error[")),
        "{err}"
    );
}

/// The example lines of a help text (`  ojs-retry …`, `\` continuations
/// joined).
fn examples(help: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut continued = false;
    for line in help.lines() {
        let l = line.trim();
        if continued {
            if let Some(last) = out.last_mut() {
                last.push(' ');
                last.push_str(l.trim_end_matches('\\').trim());
            }
        } else if l.starts_with("ojs-retry ") && !l.starts_with("ojs-retry <") {
            out.push(l.trim_end_matches('\\').trim().to_owned());
        }
        continued = l.ends_with('\\') && (continued || l.starts_with("ojs-retry "));
    }
    out
}

/// Runs a documented command line: `ojs-retry` is this binary; the
/// expected exit code is 1 where the line says it fails.
fn run_documented(line: &str, failing: bool) {
    let words: Vec<&str> = line
        .split('#')
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .collect();
    let out = run(&words);
    let want = if failing { 1 } else { 0 };
    assert_eq!(
        out.status.code(),
        Some(want),
        "{line}\n{}",
        text(&out.stderr)
    );
    assert_fits(&words, &out);
}

#[test]
fn help_wraps_between_words_and_shows_an_example_per_command() {
    for cmd in [
        vec![],
        vec!["validate"],
        vec!["schedule"],
        vec!["explain"],
        vec!["simulate"],
    ] {
        let mut args = cmd.clone();
        args.push("--help");
        let at_80 = text(&run(&args).stdout);
        let unwrapped = text(&run_at(1000, &args).stdout);
        let words = |t: &str| t.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            words(&at_80),
            words(&unwrapped),
            "{args:?}: a word was broken"
        );
        let ex = examples(&at_80);
        assert!(!ex.is_empty(), "{args:?} shows no example");
        for name in &cmd {
            assert!(
                ex.iter()
                    .all(|e| e.starts_with(&format!("ojs-retry {name} "))),
                "{ex:?}"
            );
        }
        for e in &ex {
            run_documented(e, e.contains("invalid.json"));
        }
    }
    assert!(text(&run(&["--help"]).stdout).contains(r#"{"preset": {"system": "sidekiq""#));
}

#[test]
fn the_readme_cli_commands_run() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("ojs-retry "))
        .collect();
    assert!(lines.len() >= 6, "{lines:?}");
    for l in lines {
        run_documented(l, l.contains("exit 1"));
    }
}
