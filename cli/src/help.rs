//! The help's examples, one set per command (`--help` prints them after
//! the options, wrapped at the terminal's width; each example line is
//! shorter than 80 columns so that it is never broken, and the CLI tests
//! run every one of them).

/// After the top-level help.
pub const TOP: &str = r#"A policy file holds an OJS retry policy, e.g. {"max_attempts": 5, "initial_interval": "PT2S"}, or another queue's retry options as a preset: {"preset": {"system": "sidekiq", "max_retries": 10}}. Several files merge in order over the defaults (defaults <- queue <- job); `-` reads standard input.

Examples:
  ojs-retry validate examples/12.2-default.json
  ojs-retry schedule examples/12.2-default.json --key job-42
  ojs-retry explain examples/12.2-default.json --attempt 3 --key job-42
  ojs-retry simulate examples/12.2-default.json --jobs 10000

`ojs-retry <COMMAND> --help` shows each command's options and examples."#;

/// After `validate --help`.
pub const VALIDATE: &str = r#"Examples:
  ojs-retry validate examples/12.6-no-retry-dead-letter.json
  ojs-retry validate examples/12.2-default.json examples/12.1-no-retry.json
  ojs-retry validate --json examples/invalid.json"#;

/// After `schedule --help`.
pub const SCHEDULE: &str = r#"The table fits the terminal (or COLUMNS, or 80 columns): when it is too narrow, durations are shortened to two units and the raw, attempt, capped and jitter range columns are left out in that order; --wide shows them all.

Examples:
  ojs-retry schedule examples/12.2-default.json --key job-42
  ojs-retry schedule examples/12.2-default.json --retries 12 --seed 7 --wide
  ojs-retry schedule examples/12.2-default.json --key job-42 --chart"#;

/// After `explain --help`.
pub const EXPLAIN: &str = r#"Examples:
  ojs-retry explain examples/12.2-default.json --attempt 3 --key job-42
  ojs-retry explain examples/12.4-custom-non-retryable.json --attempt 1 \
      --error-type resource.not_found
  ojs-retry explain examples/12.2-default.json --attempt 2 --timeout \
      --now 2026-02-12T10:31:05Z --u 0.5"#;

/// After `simulate --help`.
pub const SIMULATE: &str = r#"Examples:
  ojs-retry simulate examples/12.2-default.json --jobs 10000
  ojs-retry simulate examples/12.3-aggressive-dead-letter.json --jobs 50000 \
      --retries 10 --bucket-ms 500"#;
