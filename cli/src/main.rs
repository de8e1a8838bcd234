//! `ojs-retry`: validate Open Job Spec retry policies, print their retry
//! schedule (as a table or a chart), explain the decision for a failure,
//! and simulate a herd of jobs failing at once.

#![forbid(unsafe_code)]

mod chart;
mod input;
mod output;
mod simulate;
mod units;

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::{Args, Parser, Subcommand};
use input::load;
use ojs_retry::{Error, Failure, HandlerCode, JitterSource, parse_timestamp};
use serde_json::json;
use units::human;

#[derive(Parser)]
#[command(
    name = "ojs-retry",
    version,
    about = "Open Job Spec retry policies: validate, schedule, explain, simulate"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the effective policy, or every fault (exit 1).
    Validate {
        /// Policy documents (JSON), merged in order over the defaults; `-` reads stdin.
        #[arg(required = true)]
        files: Vec<String>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Print the retry schedule: raw, capped, jitter range, drawn delay, cumulative time.
    Schedule {
        /// Policy documents (JSON), merged in order over the defaults; `-` reads stdin.
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
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Explain what happens when an attempt fails.
    Explain {
        /// Policy documents (JSON), merged in order over the defaults; `-` reads stdin.
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
    Simulate {
        /// Policy documents (JSON), merged in order over the defaults; `-` reads stdin.
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

/// A failure of the command: a policy/argument error or an I/O problem.
enum Failed {
    Engine(Error),
    Other(String),
    Output(std::io::Error),
}

impl From<std::io::Error> for Failed {
    fn from(e: std::io::Error) -> Self {
        Self::Output(e)
    }
}

/// `println!` whose write error is returned (as [`Failed::Output`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        output::line(format_args!($($arg)*))?
    };
}

impl From<Error> for Failed {
    fn from(e: Error) -> Self {
        Self::Engine(e)
    }
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
            json,
        } => schedule(&files, retries, &jitter, chart, json).map_err(|e| (e, json)),
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

/// `schedule`: the table of retries, or its JSON.
fn schedule(
    files: &[String],
    retries: Option<u64>,
    jitter: &JitterArgs,
    chart: bool,
    json: bool,
) -> Result<(), Failed> {
    let p = load(files)?;
    let count = retries.unwrap_or_else(|| p.max_retries().min(100));
    let rows = p.schedule(count, Some(jitter.source()))?;
    if chart {
        // A plain policy's cap is max_interval; a preset's, where its rows were capped.
        let cap = match p.preset_system() {
            None => Some(p.max_interval_ms()),
            Some(_) => rows
                .iter()
                .filter(|r| r.capped_ms < r.raw_ms)
                .map(|r| r.capped_ms)
                .max(),
        };
        let (scale, lines) = chart::render(&rows, cap, &jitter.describe());
        if json {
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
    if json {
        outln!("{}", json!({"policy": p, "rows": rows}));
        return Ok(());
    }
    outln!(
        "{} strategy, {} retries allowed (max_attempts {}), jitter {}, cap {}; delays drawn from {}",
        p.strategy().as_str(),
        p.max_retries(),
        p.max_attempts(),
        if p.jitter() { "[0.5, 1.5)" } else { "off" },
        human(p.max_interval_ms()),
        jitter.describe()
    );
    outln!(
        "{:>7}  {:>5}  {:>12}  {:>12}  {:>25}  {:>12}  {:>14}",
        "attempt",
        "retry",
        "raw",
        "capped",
        "jitter range",
        "delay",
        "cumulative"
    );
    for r in &rows {
        let range = format!("{} .. {}", human(r.min_ms), human(r.max_ms));
        let capped = if r.capped_ms < r.raw_ms {
            format!("{} (cap)", human(r.capped_ms))
        } else {
            human(r.capped_ms)
        };
        outln!(
            "{:>7}  {:>5}  {:>12}  {:>12}  {:>25}  {:>12}  {:>14}",
            r.attempt,
            r.retry_number,
            human(r.raw_ms),
            capped,
            range,
            human(r.delay_ms.unwrap_or(r.capped_ms)),
            human(r.cumulative_ms)
        );
    }
    if count < p.max_retries() {
        outln!(
            "({} more retries not shown; use --retries)",
            p.max_retries() - count
        );
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
    let h = p.herd(jobs, retries, bucket_ms)?;
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
            Err(_) => parse_timestamp(&t)?,
        },
    };
    failure.code = code.as_deref().map(HandlerCode::parse).transpose()?;
    let d = p.decide(&failure, now, jitter.source())?;
    if json {
        outln!("{}", json!({"decision": d, "explanation": d.explain()}));
    } else {
        outln!("{}", d.explain());
    }
    Ok(())
}

fn main() -> ExitCode {
    let json_out = |v: serde_json::Value| output::line(format_args!("{v}"));
    let ran = run(Cli::parse()).and_then(|()| output::flush().map_err(|e| (e.into(), false)));
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err((Failed::Output(e), _)) if output::is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err((Failed::Output(e), _)) => {
            output::error_line(format_args!("error: cannot write the output: {e}"));
            ExitCode::from(2)
        }
        Err((Failed::Engine(e), json)) => {
            if json {
                // The exit code already says it failed; a closed pipe
                // leaves nothing more to say.
                let _ = json_out(
                    json!({"valid": false, "code": e.code().as_str(), "field": e.field(), "path": e.path(), "faults": e.faults()}),
                );
            } else {
                for f in e.faults() {
                    let path = f.path.as_deref().unwrap_or("(document)");
                    output::error_line(format_args!("error[{}] {path}: {}", e.code(), f.message));
                }
            }
            ExitCode::from(1)
        }
        Err((Failed::Other(msg), _)) => {
            output::error_line(format_args!("error: {msg}"));
            ExitCode::from(2)
        }
    }
}
