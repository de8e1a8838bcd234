//! `ojs-retry`: validate Open Job Spec retry policies, print their retry
//! schedule (as a table or a chart), explain the decision for a failure,
//! and simulate a herd of jobs failing at once.

#![forbid(unsafe_code)]

mod chart;
mod help;
mod input;
mod output;
mod report;
mod simulate;
mod table;
mod units;

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::{Args, Parser, Subcommand};
use input::load;
use ojs_retry::{Failure, HandlerCode, JitterSource, parse_timestamp};
use report::{Failed, flag};
use serde_json::json;

#[derive(Parser)]
#[command(
    name = "ojs-retry",
    version,
    about = "Open Job Spec retry policies: validate, schedule, explain, simulate",
    after_help = help::TOP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the effective policy, or every fault (exit 1).
    #[command(after_help = help::VALIDATE)]
    Validate {
        /// Policy files (JSON: a policy, or {"preset": {...}}), merged in order over the defaults; `-` reads stdin.
        #[arg(required = true)]
        files: Vec<String>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Print the retry schedule: raw, capped, jitter range, drawn delay, cumulative time.
    #[command(after_help = help::SCHEDULE)]
    Schedule {
        /// Policy files (JSON: a policy, or {"preset": {...}}), merged in order over the defaults; `-` reads stdin.
        #[arg(required = true)]
        files: Vec<String>,
        /// Number of retries to show (default: the policy's max_attempts − 1, at most 100).
        #[arg(long)]
        retries: Option<u64>,
        #[command(flatten)]
        jitter: JitterArgs,
        /// Draw the delays as a chart (jitter band, drawn delay, cap) instead of a table.
        #[arg(long)]
        chart: bool,
        /// Every column of the table in full, however wide the terminal.
        #[arg(long, conflicts_with = "chart")]
        wide: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Explain what happens when an attempt fails.
    #[command(after_help = help::EXPLAIN)]
    Explain {
        /// Policy files (JSON: a policy, or {"preset": {...}}), merged in order over the defaults; `-` reads stdin.
        #[arg(required = true)]
        files: Vec<String>,
        /// The attempt that failed (1-based).
        #[arg(long)]
        attempt: u64,
        /// The error type, e.g. `auth.token_expired`.
        #[arg(long)]
        error_type: Option<String>,
        /// The handler's response code: RETRY, DISCARD, DEAD_LETTER or FAIL.
        #[arg(long)]
        code: Option<String>,
        /// The reservation timed out instead of the handler failing.
        #[arg(long)]
        timeout: bool,
        /// The failure instant: RFC 3339 or epoch milliseconds (default: now).
        #[arg(long)]
        now: Option<String>,
        #[command(flatten)]
        jitter: JitterArgs,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Simulate a herd: N jobs fail at the same instant and every retry fails
    /// again; print each round's arrivals over time and the peak per second.
    #[command(after_help = help::SIMULATE)]
    Simulate {
        /// Policy files (JSON: a policy, or {"preset": {...}}), merged in order over the defaults; `-` reads stdin.
        #[arg(required = true)]
        files: Vec<String>,
        /// Number of jobs (jitter keys "1" … "N").
        #[arg(long, default_value_t = 10_000)]
        jobs: u64,
        /// Retry rounds to simulate (default: the policy's max_attempts − 1, at most 100).
        #[arg(long)]
        retries: Option<u64>,
        /// Histogram bucket width in milliseconds.
        #[arg(long, default_value_t = 1_000)]
        bucket_ms: u64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
#[group(multiple = false)]
struct JitterArgs {
    /// Reproducible jitter from a 64-bit seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Deterministic jitter from a key such as the job id.
    #[arg(long)]
    key: Option<String>,
    /// An explicit jitter sample in [0, 1).
    #[arg(long)]
    u: Option<f64>,
}

impl JitterArgs {
    fn source(&self) -> JitterSource<'_> {
        match (self.seed, &self.key, self.u) {
            (Some(s), ..) => JitterSource::Seed(s),
            (_, Some(k), _) => JitterSource::Key(k),
            (.., Some(u)) => JitterSource::Uniform(u),
            _ => JitterSource::Entropy,
        }
    }

    fn describe(&self) -> String {
        match (self.seed, &self.key, self.u) {
            (Some(s), ..) => format!("seed {s}"),
            (_, Some(k), _) => format!("key {k:?}"),
            (.., Some(u)) => format!("u = {u}"),
            _ => "OS entropy".to_owned(),
        }
    }
}

/// `println!` whose write error is returned (as [`Failed::Output`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        output::line(format_args!($($arg)*))?
    };
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn run(cli: Cli) -> Result<(), (Failed, bool)> {
    match cli.command {
        Command::Validate { files, json } => validate(&files, json).map_err(|e| (e, json)),
        Command::Schedule {
            files,
            retries,
            jitter,
            chart,
            wide,
            json,
        } => {
            let how = Show { chart, wide, json };
            schedule(&files, retries, &jitter, how).map_err(|e| (e, json))
        }
        Command::Simulate {
            files,
            jobs,
            retries,
            bucket_ms,
            json,
        } => herd(&files, jobs, retries, bucket_ms, json).map_err(|e| (e, json)),
        Command::Explain {
            files,
            attempt,
            error_type,
            code,
            timeout,
            now,
            jitter,
            json,
        } => {
            let mut failure = if timeout {
                Failure::timeout(attempt)
            } else {
                Failure::new(attempt)
            };
            failure.error_type = error_type;
            explain(&files, failure, code, now, &jitter, json).map_err(|e| (e, json))
        }
    }
}

/// Prose: broken at spaces to fit the terminal.
fn say(text: &str) -> Result<(), Failed> {
    for l in units::wrap(text, units::width(), "  ") {
        outln!("{l}");
    }
    Ok(())
}

/// `validate`: the effective policy, or its JSON.
fn validate(files: &[String], json: bool) -> Result<(), Failed> {
    let p = load(files)?;
    if json {
        outln!("{}", json!({"valid": true, "policy": p}));
    } else {
        outln!("{}", p.to_json_pretty());
    }
    Ok(())
}

/// How `schedule` shows the rows.
struct Show {
    chart: bool,
    wide: bool,
    json: bool,
}

/// `schedule`: the table of retries (or the chart), or its JSON.
fn schedule(
    files: &[String],
    retries: Option<u64>,
    jitter: &JitterArgs,
    how: Show,
) -> Result<(), Failed> {
    let p = load(files)?;
    if p.max_retries() == 0 && retries.is_none() {
        if how.json {
            outln!("{}", json!({"policy": p, "rows": []}));
            return Ok(());
        }
        return say(&format!(
            "This policy never retries (max_attempts {}): the first failure is final, and the job is {}.",
            p.max_attempts(),
            match p.on_exhaustion() {
                ojs_retry::OnExhaustion::Discard => "discarded",
                ojs_retry::OnExhaustion::DeadLetter => "dead-lettered",
            }
        ));
    }
    let count = retries.unwrap_or_else(|| p.max_retries().min(100));
    let rows = p.schedule(count, Some(jitter.source())).map_err(flag)?;
    if how.chart {
        // A plain policy's cap is max_interval; a preset's, where its rows were capped.
        let cap = match p.preset_system() {
            None => Some(p.max_interval_ms()).filter(|&ms| ms < ojs_retry::MAX_MS),
            Some(_) => rows
                .iter()
                .filter(|r| r.capped_ms < r.raw_ms)
                .map(|r| r.capped_ms)
                .max(),
        };
        let (scale, lines) = chart::render(&rows, cap, &jitter.describe());
        if how.json {
            outln!(
                "{}",
                json!({"policy": p, "rows": rows, "chart": {"scale": scale.name(), "lines": lines}})
            );
        } else {
            for l in &lines {
                outln!("{l}");
            }
        }
        return Ok(());
    }
    if how.json {
        outln!("{}", json!({"policy": p, "rows": rows}));
        return Ok(());
    }
    let cap = match p.max_interval_ms() {
        ms if ms >= ojs_retry::MAX_MS => "no cap".to_owned(),
        ms => format!("cap {}", units::cap(ms)),
    };
    say(&format!(
        "{} strategy, {}, jitter {}, {cap}; delays drawn from {}.",
        p.strategy().as_str(),
        units::retries_allowed(p.max_attempts()),
        if p.jitter() { "[0.5, 1.5)" } else { "off" },
        jitter.describe()
    ))?;
    let (lines, left_out) = table::render(&rows, units::width(), how.wide);
    for l in &lines {
        outln!("{l}");
    }
    if !left_out.is_empty() {
        say(&format!(
            "(Left out to fit {} columns: {}; --wide shows every column.)",
            units::width(),
            left_out.join(", ")
        ))?;
    }
    if count < p.max_retries() {
        let more = match p.max_attempts() {
            n if n >= ojs_retry::MAX_MS => "the policy retries without limit".to_owned(),
            _ => format!("{} more retries not shown", p.max_retries() - count),
        };
        say(&format!("({more}; use --retries to see more.)"))?;
    }
    Ok(())
}

/// `simulate`: the herd report, or its JSON.
fn herd(
    files: &[String],
    jobs: u64,
    retries: Option<u64>,
    bucket_ms: u64,
    json: bool,
) -> Result<(), Failed> {
    let p = load(files)?;
    let retries = retries.unwrap_or_else(|| p.max_retries().clamp(1, 100));
    let h = p.herd(jobs, retries, bucket_ms).map_err(flag)?;
    if json {
        outln!("{}", json!({"policy": p, "herd": h}));
    } else {
        for l in simulate::render(&h) {
            outln!("{l}");
        }
    }
    Ok(())
}

/// `explain`: the decision for one failure, in words or as JSON.
fn explain(
    files: &[String],
    mut failure: Failure,
    code: Option<String>,
    now: Option<String>,
    jitter: &JitterArgs,
    json: bool,
) -> Result<(), Failed> {
    let p = load(files)?;
    let now = match now {
        None => now_ms(),
        Some(t) => match t.parse::<u64>() {
            Ok(ms) => ms,
            Err(_) => parse_timestamp(&t).map_err(flag)?,
        },
    };
    failure.code = code
        .as_deref()
        .map(HandlerCode::parse)
        .transpose()
        .map_err(flag)?;
    let d = p.decide(&failure, now, jitter.source()).map_err(flag)?;
    if json {
        outln!("{}", json!({"decision": d, "explanation": d.explain()}));
    } else {
        say(&d.explain())?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let ran = run(Cli::parse()).and_then(|()| output::flush().map_err(|e| (e.into(), false)));
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err((failed, json)) => report::print(failed, json),
    }
}
