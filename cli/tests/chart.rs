//! `schedule --chart` and `simulate` end to end.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Runs the binary with `stdin` as the document `-` reads.
fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ojs-retry"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(args: &[&str], stdin: &str) -> String {
    let out = run(args, stdin);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str], stdin: &str) -> Value {
    let out = run(args, stdin);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The rows of a chart or a herd: the lines that start with a retry
/// number right-aligned in five columns.
fn chart_rows(chart: &str) -> Vec<&str> {
    chart
        .lines()
        .filter(|l| {
            l.get(..6).is_some_and(|head| {
                head.starts_with(' ')
                    && head.ends_with(' ')
                    && head.trim().parse::<u64>().is_ok_and(|n| n > 0)
            })
        })
        .collect()
}

#[test]
fn the_chart_fits_80_columns_with_one_row_per_retry() {
    let cases: [(&[&str], &str, usize); 4] = [
        (&["--retries", "12", &example("12.2-default.json")], "", 12),
        (
            &[&example("12.3-aggressive-dead-letter-polynomial.json")],
            "",
            24,
        ),
        (
            &["-"],
            r#"{"preset": {"system": "sidekiq", "retry": 25}}"#,
            25,
        ),
        (
            &["--retries", "40", "-"],
            r#"{"max_attempts": 41, "max_interval": "P30D"}"#,
            40,
        ),
    ];
    for (args, stdin, retries) in cases {
        let mut all = vec!["schedule", "--chart", "--key", "job-42"];
        all.extend_from_slice(args);
        let chart = text(&all, stdin);
        for line in chart.lines() {
            assert!(
                line.chars().count() <= 80,
                "{} columns: {line:?}",
                line.chars().count()
            );
        }
        let rows = chart_rows(&chart);
        assert_eq!(rows.len(), retries, "{chart}");
        for (n, row) in (1..).zip(&rows) {
            assert!(row.starts_with(&format!("{n:>5} ")), "{row}");
            assert_eq!(row.matches('◆').count(), 1, "{row}");
            assert!(row.contains('█') || row.contains('▏'), "{row}");
        }
        assert!(chart.contains("█ least delay  ░ jitter band  ◆ drawn delay"));
    }
}

#[test]
fn the_chart_draws_the_jitter_band_and_the_cap() {
    let chart = text(
        &["schedule", "--chart", "--u", "0.5", "--retries", "4", "-"],
        r#"{"max_attempts": 5, "max_interval": "PT4S"}"#,
    );
    assert!(chart.contains("(linear scale)"), "{chart}");
    assert!(chart.contains("│ cap 4s"), "{chart}");
    let rows = chart_rows(&chart);
    // Retries 1 and 2 stay under the cap: its rule is drawn past their bars.
    assert!(
        rows[0].contains('░') && rows[0].contains('│'),
        "{}",
        rows[0]
    );
    // Without jitter there is no band.
    let flat = text(
        &["schedule", "--chart", "--retries", "4", "-"],
        r#"{"jitter": false}"#,
    );
    assert!(chart_rows(&flat).iter().all(|r| !r.contains('░')), "{flat}");
    // A wide spread is drawn on a log axis.
    let wide = text(
        &["schedule", "--chart", "--u", "0.5", "--retries", "10", "-"],
        r#"{"max_interval": "PT1H"}"#,
    );
    assert!(wide.contains("(log scale)"), "{wide}");
}

#[test]
fn the_chart_as_json_holds_the_rows_and_the_lines() {
    let args = [
        "schedule",
        "--chart",
        "--key",
        "order_789",
        "--retries",
        "5",
        &example("12.3-aggressive-dead-letter-polynomial.json"),
    ];
    let v = json(&[&args[..], &["--json"]].concat(), "");
    let delays: Vec<u64> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["delay_ms"].as_u64().unwrap())
        .collect();
    // As in cli.rs: values from tests/vectors/reference.py.
    assert_eq!(delays, [8_555, 292_343, 1_306_305, 3_600_000, 3_094_215]);
    assert_eq!(v["chart"]["scale"], "log");
    let lines: Vec<&str> = v["chart"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.join("\n") + "\n", text(&args, ""));
}

/// The arrival of retry `n` of job `key`: the cumulative delay `schedule`
/// gives with that key.
fn arrival(doc: &str, key: &str, n: usize) -> u64 {
    let v = json(
        &[
            "schedule",
            "--json",
            "--key",
            key,
            "--retries",
            &n.to_string(),
            "-",
        ],
        doc,
    );
    v["rows"][n - 1]["cumulative_ms"].as_u64().unwrap()
}

#[test]
fn simulate_counts_every_job_in_every_round() {
    let doc = r#"{"max_attempts": 6, "initial_interval": "PT2S"}"#;
    let v = json(
        &[
            "simulate",
            "--json",
            "--jobs",
            "40",
            "--bucket-ms",
            "500",
            "-",
        ],
        doc,
    );
    let herd = &v["herd"];
    assert_eq!(herd["jobs"], 40);
    let rounds = herd["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 5, "max_attempts 6: five retries");
    for (n, r) in (1..).zip(rounds) {
        assert_eq!(r["retry_number"], n);
        let counts: u64 = r["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(counts, 40);
        let times: Vec<u64> = (1..=40)
            .map(|k| arrival(doc, &k.to_string(), n as usize))
            .collect();
        assert_eq!(r["first_ms"], *times.iter().min().unwrap());
        assert_eq!(r["last_ms"], *times.iter().max().unwrap());
        assert_eq!(r["start_ms"].as_u64().unwrap() % 500, 0);
    }
}

#[test]
fn simulate_without_jitter_peaks_at_the_whole_herd() {
    let out = text(
        &["simulate", "--jobs", "5000", "-"],
        r#"{"max_attempts": 4, "jitter": false}"#,
    );
    assert!(
        out.contains(
            "peak: 5000 arrivals in one second (100.0% of the jobs), 1s after the failure"
        ),
        "{out}"
    );
    for line in out.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    assert_eq!(chart_rows(&out).len(), 3, "{out}");
    // With jitter, the tenth round is spread out.
    let v = json(
        &["simulate", "--json", "--jobs", "5000", "-"],
        r#"{"max_attempts": 11}"#,
    );
    let rounds = v["herd"]["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 10);
    assert!(rounds[9]["peak_per_second"].as_u64().unwrap() < 500);
}

#[test]
fn simulate_reports_bad_arguments_and_empty_herds() {
    for (args, field) in [
        (&["--jobs", "0"][..], "jobs"),
        (&["--bucket-ms", "0"][..], "bucket_ms"),
        (&["--jobs", "1000000", "--retries", "11"][..], "retries"),
    ] {
        let v = json(&[&["simulate", "--json"][..], args, &["-"]].concat(), "{}");
        assert_eq!(v["code"], "validation.invalid_argument", "{v}");
        assert_eq!(v["field"], field);
        assert_eq!(
            run(&[&["simulate"][..], args, &["-"]].concat(), "{}")
                .status
                .code(),
            Some(1)
        );
    }
    let out = text(
        &["simulate", "--jobs", "10", &example("12.1-no-retry.json")],
        "",
    );
    assert!(out.contains("no herd comes back"), "{out}");
}
