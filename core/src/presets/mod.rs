//! Presets: the retry behaviour of existing queues, reproduced exactly.
//!
//! A preset is a [`RetryPolicy`] built from another system's own retry
//! configuration. The engine then evaluates it the way that system does:
//! the counter its formula sees (0 or 1 at the first failure), whether its
//! limit counts retries or attempts, its formula and rounding, its caps,
//! its jitter as a function of the one uniform sample `u = k / 2^53`, and
//! its terminal outcome (dead set, discard, failed set) and special values.
//! `docs/presets.md` has the table, with the source file and version each
//! preset was read from, and the translation to a plain OJS policy.
//!
//! A preset policy serialises as `{"preset": {"system": "...", ...}}`: the
//! system's configuration with every default filled in. That document
//! builds the same policy again in every binding; a document without
//! `preset` is a plain OJS policy and is validated as strictly as ever.
//!
//! ```
//! use ojs_retry::{RetryPolicy, Failure, JitterSource, Action};
//! // Sidekiq 8: `sidekiq_options retry: 5`.
//! let p = RetryPolicy::preset_json("sidekiq", r#"{"retry": 5}"#)?;
//! // retry_count 0: 0**4 + 15 s, plus rand(10 * 1) s of jitter (u = 0.5 → 5).
//! assert_eq!(p.delay(1, JitterSource::Uniform(0.5))?, 20_000);
//! // The sixth failure exhausts five retries: the dead set.
//! let d = p.decide(&Failure::new(6), 0, JitterSource::Uniform(0.5))?;
//! assert_eq!(d.action, Action::DeadLetter);
//! assert!(p.to_json().starts_with(r#"{"preset":{"#) && p.to_json().contains(r#""system":"sidekiq""#));
//! # Ok::<(), ojs_retry::Error>(())
//! ```

mod config;
pub(crate) mod formula;

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use crate::value::{Map, Value};

use crate::backoff::{Backoff, Curve, Rounding, Spread};
use crate::decision::Action;
use crate::duration::MAX_MS;
use crate::error::{Error, ErrorCode, quote};
use crate::jitter::JitterSource;
use crate::matching::first_match;
use crate::policy::{OnExhaustion, RetryPolicy};
use crate::{ScheduleRow, Strategy};

use alloc::format;
use config::{Reader, cat, found, in_range};
use formula::{BullKind, Formula, RatchetPolicy, SidekiqJitter, ZzzStrategy};

/// Every system name a preset accepts, in the order of the docs' table.
pub const SYSTEMS: [&str; 13] = [
    "sidekiq",
    "faktory",
    "celery",
    "bullmq",
    "temporal",
    "oban",
    "rq",
    "dramatiq",
    "aws",
    "aws_jitter",
    "ratchet",
    "zzz_jobs",
    "chasquimq",
];

/// [`SYSTEMS`] joined with `", "`, for messages (a literal: cheaper in
/// wasm than joining at run time).
const SYSTEM_LIST: &str = "sidekiq, faktory, celery, bullmq, temporal, oban, rq, dramatiq, aws, aws_jitter, ratchet, zzz_jobs, chasquimq";

/// The longest decorrelated-jitter chain `delay` walks (it is linear in the
/// retry number).
pub const MAX_CHAIN: u64 = 100_000;

/// A resolved preset: the canonical configuration, the formula, and the
/// system's terminal semantics.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Preset {
    /// `{"system": ..., every option}`.
    pub(crate) config: Map,
    pub(crate) formula: Formula,
    /// The last failed attempt that is still retried; `None`: no limit.
    pub(crate) last_retried: Option<u64>,
    /// Outcome when the limit is reached.
    pub(crate) exhausted: Action,
    /// Error-type patterns with their outcome, checked in order.
    pub(crate) rules: Vec<(String, Action)>,
    /// Sidekiq checks the limit before its `sidekiq_retry_in` outcomes.
    pub(crate) limit_first: bool,
}

/// The nearest plain OJS policy, for the accessors and the docs' table.
struct Ojs {
    max_attempts: u64,
    initial_ms: u64,
    coefficient: f64,
    max_ms: u64,
    jitter: bool,
    strategy: Strategy,
}

impl Preset {
    /// The outcome for a failure of `attempt` with `error_type`, or `None`
    /// to retry. Returns the matched pattern for the reason.
    pub(crate) fn terminal(
        &self,
        attempt: u64,
        error_type: Option<&str>,
    ) -> Option<(Action, Option<String>)> {
        let exhausted = match self.last_retried {
            Some(last) => attempt > last,
            None => false,
        };
        let rule = error_type.and_then(|t| {
            self.rules
                .iter()
                .find(|(p, _)| first_match(t, core::slice::from_ref(p)).is_some())
        });
        match (rule, exhausted, self.limit_first) {
            (_, true, true) | (None, true, _) => Some((self.exhausted, None)),
            (Some((p, a)), ..) => Some((*a, Some(p.clone()))),
            (None, false, _) => None,
        }
    }

    /// The stages of retry `n`, walking the chain for decorrelated jitter.
    pub(crate) fn delay(&self, n: u64, jitter: &JitterSource<'_>) -> Result<u64, Error> {
        if let Formula::Decorrelated(b) = &self.formula {
            if n > MAX_CHAIN {
                return Err(Error::arg(
                    "retry_number",
                    format!(
                        "decorrelated jitter walks the chain of every earlier retry; expected a retry number at most {}, found {}",
                        MAX_CHAIN, n
                    ),
                ));
            }
            let mut prev = b.initial_ms;
            for i in 1..=n {
                prev = b.decorrelated_from(prev, jitter.sample(i)?);
            }
            return Ok(prev);
        }
        let k = self.sample(n, jitter)?;
        Ok(self.formula.eval(n, k).delay)
    }

    fn sample(&self, n: u64, jitter: &JitterSource<'_>) -> Result<u64, Error> {
        if self.formula.uses_sample() {
            Ok(jitter.sample(n)?.bits())
        } else {
            jitter.check().map(|()| 0)
        }
    }

    /// The schedule rows `1..=count`.
    pub(crate) fn schedule(
        &self,
        count: u64,
        jitter: Option<&JitterSource<'_>>,
    ) -> Result<Vec<ScheduleRow>, Error> {
        let mut rows = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut total: u64 = 0;
        // Decorrelated chains: drawn, smallest and largest.
        let (mut prev, mut lo, mut hi) = match &self.formula {
            Formula::Decorrelated(b) => (b.initial_ms, b.initial_ms, b.initial_ms),
            _ => (0, 0, 0),
        };
        for n in 1..=count {
            let mut row = if let Formula::Decorrelated(b) = &self.formula {
                lo = b.decorrelated_from(lo, crate::Sample::MIN);
                hi = b.decorrelated_from(hi, crate::Sample::MAX);
                let delay = match jitter {
                    Some(j) => {
                        prev = b.decorrelated_from(prev, j.sample(n)?);
                        Some(prev)
                    }
                    None => None,
                };
                ScheduleRow {
                    retry_number: n,
                    attempt: n.saturating_add(1),
                    raw_ms: b.initial_ms,
                    capped_ms: b.initial_ms,
                    min_ms: lo,
                    max_ms: hi,
                    delay_ms: delay,
                    cumulative_ms: 0,
                }
            } else {
                let s = self.formula.eval(n, 0);
                let (min_ms, max_ms) = self.formula.bounds(n);
                let delay = match jitter {
                    Some(j) => Some(self.formula.eval(n, self.sample(n, j)?).delay),
                    None => None,
                };
                ScheduleRow {
                    retry_number: n,
                    attempt: n.saturating_add(1),
                    raw_ms: s.raw,
                    capped_ms: s.capped,
                    min_ms,
                    max_ms,
                    delay_ms: delay,
                    cumulative_ms: 0,
                }
            };
            row.accumulate(&mut total);
            rows.push(row);
        }
        Ok(rows)
    }
}

/// `Action` for "kept in a dead / failed set" vs "dropped".
const DEAD: Action = Action::DeadLetter;
const GONE: Action = Action::Discard;

fn on_exhaustion(a: Action) -> OnExhaustion {
    if a == DEAD {
        OnExhaustion::DeadLetter
    } else {
        OnExhaustion::Discard
    }
}

/// Reads `{"system": "...", ...}` (or a bare config with `system` given
/// separately) into a preset policy.
pub(crate) fn from_value(value: &Value) -> Result<RetryPolicy, Error> {
    // One fault site for the three shapes of a bad document or system.
    let found = match value {
        Value::Object(map) => match map.get("system") {
            Some(Value::String(s)) if let Some(i) = SYSTEMS.iter().position(|n| n == s) => {
                Ok((map, s.clone(), i))
            }
            Some(v) => Err((
                "preset.system",
                cat(&["expected one of ", SYSTEM_LIST, ", found ", &v.describe()]),
            )),
            None => Err((
                "preset.system",
                cat(&["expected the system's name, one of ", SYSTEM_LIST]),
            )),
        },
        _ => Err((
            "preset",
            found(
                "expected an object such as {\"system\": \"sidekiq\", \"retry\": 5}",
                value,
            ),
        )),
    };
    let (map, system, index) = match found {
        Ok(ok) => ok,
        Err((field, message)) => {
            return Err(Error::new(ErrorCode::RetryPolicyInvalid, field, message));
        }
    };
    let mut r = Reader::new(map);
    let options = OPTIONS.get(index).copied().unwrap_or(&[]);
    let mut read = Read::default();
    read_options(options, &mut r, &mut read);
    let (mut canonical, faults) = r.finish(&system, options);
    if let Some(e) = Error::from_faults(ErrorCode::RetryPolicyInvalid, faults.0) {
        return Err(e);
    }
    config::put(&mut canonical, "system", Value::String(system));
    let (formula, last_retried, exhausted, ojs) = build(index, &mut read);
    let non_retryable = read.rules.iter().map(|(p, _)| p.clone()).collect();
    let max_attempts = if ojs.max_attempts == FROM_LIMIT {
        total(last_retried)
    } else {
        ojs.max_attempts
    };
    // The plain policy's intervals are at least 1 ms (one `max` here
    // rather than one per system).
    Ok(RetryPolicy::assemble(
        max_attempts,
        ojs.initial_ms.max(1),
        ojs.coefficient,
        ojs.max_ms.max(1),
        ojs.jitter,
        non_retryable,
        on_exhaustion(exhausted),
        ojs.strategy,
    )
    .into_preset(Box::new(Preset {
        config: canonical,
        formula,
        last_retried,
        exhausted,
        rules: read.rules,
        // Sidekiq checks the limit before its `sidekiq_retry_in` outcomes.
        limit_first: index == 0,
    })))
}

fn ojs(
    max_attempts: u64,
    initial_ms: u64,
    coefficient: f64,
    max_ms: u64,
    jitter: bool,
    strategy: Strategy,
) -> Ojs {
    Ojs {
        max_attempts,
        initial_ms,
        coefficient,
        max_ms,
        jitter,
        strategy,
    }
}

/// Seconds to ms for the plain policy (saturating: Celery's factor may
/// reach 9e15 s). Out of line: each inlined copy costs a 128-bit multiply.
fn times_1000(s: u64) -> u64 {
    formula::mul(s, 1000)
}

/// `n` total attempts: attempts `1..n` retry.
fn attempts(n: u64) -> Option<u64> {
    Some(n.saturating_sub(1))
}

/// [`Ojs::max_attempts`] for "the limit's attempts" ([`total`]): every
/// system but two, whose zero attempts are not the limit's one.
const FROM_LIMIT: u64 = u64::MAX;

fn total(last: Option<u64>) -> u64 {
    last.map_or(MAX_MS, |l| l.saturating_add(1).min(MAX_MS))
}

const INT_MAX: u64 = i32::MAX as u64;

/// A slot's "no value" (`null`, `retry: false`, a zero `retry_backoff`):
/// no option read reaches it (integers stop at [`MAX_MS`]).
const NONE: u64 = u64::MAX;

/// An integer option's upper bound (a code: the table stays small).
#[derive(Clone, Copy)]
enum Max {
    Ms,
    MsOver100,
    MsHalf,
    I32,
    U32,
}

impl Max {
    fn value(self) -> u64 {
        match self {
            Self::Ms => MAX_MS,
            Self::MsOver100 => MAX_MS / 100,
            Self::MsHalf => MAX_MS / 2,
            Self::I32 => INT_MAX,
            Self::U32 => u64::from(u32::MAX),
        }
    }
}

/// How one option is read. Every system's options are a table of these,
/// read in order by one loop ([`read_options`]): the faults come out in
/// the table's order, the unknown-field check knows the options without
/// recording them, and the per-system code ([`build`]) only turns the
/// values into the formula.
#[derive(Clone, Copy)]
enum Opt {
    // The fields are narrow: the tables are data in the module (~20 B a
    // row rather than 40).
    /// An integer: default, min, max.
    Uint(u32, u8, Max),
    /// An integer whose default is an earlier slot times a factor: slot,
    /// factor, min, max (Temporal's `maximumInterval`).
    UintTimes(u8, u8, u8, Max),
    /// An integer (default given) or `null` (unlimited, [`NONE`]).
    UintOrNull(u32),
    /// A finite number (its bits): default, min (both integers), and
    /// whether the maximum is 9e12 (else `f64::MAX`).
    Number(u8, u8, bool),
    Bool(bool),
    /// One of the choices `CHOICES[.0]` (first: the default), as its index.
    Choice(u8),
    /// Error-type patterns with their outcome, appended to the rules; by
    /// default the first `.0` of [`RULE_DEFAULTS`].
    Rules(u8, Action),
    /// A check, not an option: the previous slot is at least slot `.0`;
    /// the fault is the key's; `.1`: the message says "ms".
    AtLeast(u8, bool),
    SidekiqRetry,
    FaktoryRetry,
    CeleryBackoff,
    BullBackoff,
    RqInterval,
}

type Options = &'static [(&'static str, Opt)];

/// The choices of the options read with [`Opt::Choice`].
static CHOICES: [&[&str]; 6] = [
    &["8", "7"],
    &["raised", "returned"],
    &["full", "equal", "decorrelated"],
    &["NONE", "FIXED", "EXPONENTIAL"],
    &["exponential", "linear", "constant"],
    &["exponential", "fixed"],
];

/// BullMQ's default rule is the first; ChasquiMQ's, both.
static RULE_DEFAULTS: [&str; 2] = ["UnrecoverableError", "panic"];

/// Each system's options in reading order, indexed like [`SYSTEMS`].
static OPTIONS: [Options; 13] = [
    &[
        ("version", Opt::Choice(0)),
        ("max_retries", Opt::Uint(25, 0, Max::Ms)),
        ("retry", Opt::SidekiqRetry),
        ("dead", Opt::Bool(true)),
        // DEAD: the morgue, or dropped with `dead: false` (see `build`).
        ("kill", Opt::Rules(0, DEAD)),
        ("discard", Opt::Rules(0, GONE)),
    ],
    &[("retry", Opt::FaktoryRetry)],
    &[
        ("max_retries", Opt::UintOrNull(3)),
        ("retry_backoff", Opt::CeleryBackoff),
        ("retry_backoff_max", Opt::Uint(600, 0, Max::Ms)),
        ("retry_jitter", Opt::Bool(true)),
        ("default_retry_delay", Opt::Number(180, 0, true)),
        ("dont_autoretry_for", Opt::Rules(0, GONE)),
    ],
    &[
        ("attempts", Opt::Uint(1, 0, Max::Ms)),
        ("backoff", Opt::BullBackoff),
        ("unrecoverable", Opt::Rules(1, DEAD)),
    ],
    &[
        ("initialInterval", Opt::Uint(1_000, 1, Max::MsOver100)),
        ("backoffCoefficient", Opt::Number(2, 1, false)),
        ("maximumInterval", Opt::UintTimes(0, 100, 1, Max::Ms)),
        ("maximumInterval", Opt::AtLeast(0, true)),
        ("maximumAttempts", Opt::Uint(0, 0, Max::I32)),
        ("nonRetryableErrorTypes", Opt::Rules(0, GONE)),
    ],
    &[("max_attempts", Opt::Uint(20, 1, Max::I32))],
    &[
        ("max", Opt::Uint(1, 1, Max::Ms)),
        ("interval", Opt::RqInterval),
        ("rule", Opt::Choice(1)),
    ],
    &[
        ("max_retries", Opt::UintOrNull(20)),
        ("min_backoff", Opt::Uint(15_000, 0, Max::Ms)),
        ("max_backoff", Opt::Uint(604_800_000, 0, Max::Ms)),
        ("throws", Opt::Rules(0, DEAD)),
    ],
    &[
        ("max_attempts", Opt::Uint(3, 1, Max::Ms)),
        ("throttling", Opt::Bool(false)),
        ("non_retryable", Opt::Rules(0, GONE)),
    ],
    &[
        ("jitter", Opt::Choice(2)),
        ("base_ms", Opt::Uint(100, 1, Max::Ms)),
        ("cap_ms", Opt::Uint(20_000, 1, Max::Ms)),
        ("cap_ms", Opt::AtLeast(1, false)),
        ("max_attempts", Opt::Uint(3, 1, Max::Ms)),
        ("non_retryable", Opt::Rules(0, GONE)),
    ],
    &[
        ("maxRetries", Opt::Uint(0, 0, Max::I32)),
        ("backoffPolicy", Opt::Choice(3)),
        ("backoffDelayMs", Opt::Uint(0, 0, Max::I32)),
        ("doNotRetry", Opt::Rules(0, DEAD)),
    ],
    &[
        ("max_attempts", Opt::Uint(20, 0, Max::I32)),
        ("strategy", Opt::Choice(4)),
        ("base_seconds", Opt::Uint(15, 0, Max::Ms)),
        ("max_seconds", Opt::Uint(3_600, 0, Max::Ms)),
        ("jitter", Opt::Bool(true)),
        ("delay_seconds", Opt::Uint(10, 0, Max::Ms)),
    ],
    &[
        ("max_attempts", Opt::Uint(3, 0, Max::U32)),
        ("kind", Opt::Choice(5)),
        ("delay_ms", Opt::Uint(100, 0, Max::Ms)),
        ("max_delay_ms", Opt::Uint(30_000, 0, Max::Ms)),
        ("multiplier", Opt::Number(2, 0, false)),
        ("jitter_ms", Opt::Uint(100, 0, Max::MsHalf)),
        ("unrecoverable", Opt::Rules(2, DEAD)),
    ],
];

/// What [`read_options`] read: a value per table row, the rules, and
/// RQ's interval list.
#[derive(Default)]
struct Read {
    /// Row `i`'s value; BullMQ's delay and jitter (f64 bits) in 6 and 7.
    slots: [u64; 8],
    rules: Vec<(String, Action)>,
    intervals: Vec<u64>,
}

impl Read {
    fn get(&self, i: usize) -> u64 {
        self.slots.get(i).copied().unwrap_or(0)
    }

    fn f(&self, i: usize) -> f64 {
        f64::from_bits(self.get(i))
    }

    fn opt(&self, i: usize) -> Option<u64> {
        Some(self.get(i)).filter(|v| *v != NONE)
    }

    fn set(&mut self, i: usize, v: u64) {
        if let Some(s) = self.slots.get_mut(i) {
            *s = v;
        }
    }
}

fn index_u64(i: usize) -> u64 {
    u64::try_from(i).unwrap_or(0)
}

/// Reads every option of the table in order into `read`, the faults and
/// canonical values into `r`.
// Out of line: inlined into `from_value` it costs ~180 B more.
fn read_options(options: Options, r: &mut Reader<'_>, read: &mut Read) {
    for (i, &(key, opt)) in options.iter().enumerate() {
        let v = match opt {
            Opt::Uint(d, min, max) => r.uint(key, d.into(), min.into(), max.value()),
            Opt::UintTimes(of, factor, min, max) => {
                let d = formula::mul(read.get(of.into()), factor.into());
                r.uint(key, d, min.into(), max.value())
            }
            #[allow(clippy::cast_sign_loss)] // read back with `as i64`
            Opt::FaktoryRetry => read_faktory_retry(r) as u64,
            Opt::UintOrNull(d) => r.opt_uint(key, Some(d.into())).unwrap_or(NONE),
            Opt::Number(d, min, days) => {
                let max = if days { 9.0e12 } else { f64::MAX };
                r.number(key, d.into(), min.into(), max).to_bits()
            }
            Opt::Bool(d) => u64::from(r.boolean(key, d)),
            Opt::Choice(c) => {
                let choices = CHOICES.get(usize::from(c)).copied().unwrap_or(&[]);
                index_u64(r.choice(key, choices))
            }
            Opt::Rules(d, action) => {
                let d = RULE_DEFAULTS.get(..usize::from(d)).unwrap_or(&[]);
                r.rules(key, d, action, &mut read.rules);
                0
            }
            Opt::AtLeast(of, ms) => {
                let of = usize::from(of);
                let (v, min) = (read.get(i.saturating_sub(1)), read.get(of));
                if v < min {
                    let other = options.get(of).map_or("", |o| o.0);
                    let unit = if ms { " ms" } else { "" };
                    r.fault(
                        key,
                        format!(
                            "expected {} >= {}, found {}{} < {}{}",
                            key, other, v, unit, min, unit
                        ),
                    );
                }
                0
            }
            Opt::SidekiqRetry => read_sidekiq_retry(r, read.get(1)).unwrap_or(NONE),
            Opt::CeleryBackoff => read_celery_backoff(r).unwrap_or(NONE),
            Opt::BullBackoff => {
                let (kind_, delay, jitter) = read_bull_backoff(r);
                read.set(6, delay.to_bits());
                read.set(7, jitter.to_bits());
                index_u64(kind_ as usize)
            }
            Opt::RqInterval => {
                read.intervals = read_rq_interval(r);
                0
            }
        };
        read.set(i, v);
    }
}

/// Sidekiq's `retry: true | false | n`; `None` for `false`.
fn read_sidekiq_retry(r: &mut Reader<'_>, max_retries: u64) -> Option<u64> {
    let raw = r.raw("retry");
    let retry = match raw {
        None | Some(Value::Bool(true)) => Some(max_retries),
        Some(Value::Bool(false)) => None,
        Some(v) => match crate::value::read_uint(v) {
            Ok(n) => Some(n),
            Err(m) => {
                r.fault("retry", cat(&[&m, ", or true / false"]));
                Some(max_retries)
            }
        },
    };
    let canonical_retry = match raw {
        Some(v) if v.is_number() => Value::from(retry.unwrap_or(0)),
        Some(Value::Bool(false)) => Value::Bool(false),
        _ => Value::Bool(true),
    };
    r.put("retry", canonical_retry);
    retry
}

/// Faktory's `retry`: an integer, `-1` included (the dead set at once).
fn read_faktory_retry(r: &mut Reader<'_>) -> i64 {
    let v = match r.raw("retry") {
        None => 25,
        Some(v) => match crate::value::read_uint(v) {
            // At most 2^53 - 1: exact.
            #[allow(clippy::cast_possible_wrap)]
            Ok(n) => n as i64,
            // `-1`, `-1.0`, `-1e0`: the one negative integer allowed.
            Err(_) if v.as_f64() == Some(-1.0) => -1,
            Err(_) => {
                r.bad(
                    "retry",
                    "expected an integer between -1 and 9007199254740991",
                    v,
                );
                25
            }
        },
    };
    r.put("retry", Value::from(v));
    v
}

/// Celery's `retry_backoff: bool | seconds` as the factor; `None`: off.
fn read_celery_backoff(r: &mut Reader<'_>) -> Option<u64> {
    match r.raw("retry_backoff") {
        None | Some(Value::Bool(false)) => {
            r.put("retry_backoff", Value::Bool(false));
            None
        }
        Some(Value::Bool(true)) => {
            r.put("retry_backoff", Value::Bool(true));
            Some(1)
        }
        Some(v) => match in_range(v, 0.0, f64::MAX) {
            Some(x) => {
                r.put("retry_backoff", v.clone());
                // `float(retry_backoff)`; 0 is falsy;
                // `factor=int(max(1.0, retry_backoff))`.
                if x == 0.0 {
                    None
                } else {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    Some(libm::trunc(x.max(1.0)).min(9.0e15) as u64)
                }
            }
            _ => {
                r.bad(
                    "retry_backoff",
                    "expected true, false or a non-negative number of seconds",
                    v,
                );
                None
            }
        },
    }
}

/// The formula, limit and terminal outcome of `system` (its index in
/// [`SYSTEMS`]) from the values [`read_options`] read without a fault,
/// and the nearest plain OJS policy.
#[allow(clippy::too_many_lines)]
fn build(system: usize, read: &mut Read) -> (Formula, Option<u64>, Action, Ojs) {
    use Strategy::{Exponential as Exp, None as Flat, Polynomial};
    let s = |i: usize| read.get(i);
    match system {
        0 => {
            // sidekiq
            let jitter = if s(0) == 0 {
                SidekiqJitter::V8
            } else {
                SidekiqJitter::V7
            };
            let to_morgue = if s(3) == 1 { DEAD } else { GONE };
            // retry: false → no retry and no morgue (death handlers only).
            let (last, exhausted) = match read.opt(2) {
                None => (Some(0), GONE),
                Some(n) => (Some(n), to_morgue),
            };
            // `kill` read as DEAD; `discard` is GONE either way.
            for rule in &mut read.rules {
                if rule.1 == DEAD {
                    rule.1 = to_morgue;
                }
            }
            let o = ojs(FROM_LIMIT, 1_000, 4.0, MAX_MS, true, Polynomial);
            (Formula::Quartic { jitter, steps: 10 }, last, exhausted, o)
        }
        1 => {
            // faktory
            #[allow(clippy::cast_possible_wrap)] // written from an i64
            let (last, exhausted) = match s(0) as i64 {
                0 => (Some(0), GONE),
                n if n < 0 => (Some(0), DEAD),
                n => (Some(n.unsigned_abs()), DEAD),
            };
            let f = Formula::Quartic {
                jitter: SidekiqJitter::V7,
                steps: 30,
            };
            (
                f,
                last,
                exhausted,
                ojs(FROM_LIMIT, 1_000, 4.0, MAX_MS, true, Polynomial),
            )
        }
        2 => {
            // celery
            let (factor, maximum, jitter) = (read.opt(1), s(2), s(3) == 1);
            let delay_s = read.f(4);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let fixed_ms = (libm::trunc(delay_s * 1000.0) as u64).min(MAX_MS);
            let last = read.opt(0);
            let o = match factor {
                Some(f) => ojs(
                    FROM_LIMIT,
                    times_1000(f),
                    2.0,
                    times_1000(maximum),
                    jitter,
                    Exp,
                ),
                None => ojs(FROM_LIMIT, fixed_ms, 1.0, fixed_ms, false, Flat),
            };
            let f = Formula::Celery {
                backoff: factor.map(|f| (f, maximum, jitter)),
                fixed_ms,
            };
            (f, last, GONE, o)
        }
        3 => {
            // bullmq
            let attempts_n = s(0);
            let kind_ = match s(1) {
                1 => BullKind::Fixed,
                2 => BullKind::Exponential,
                _ => BullKind::None,
            };
            let (delay, jitter) = (read.f(6), read.f(7));
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let d = delay as u64;
            let o = if kind_ == BullKind::Exponential {
                ojs(FROM_LIMIT, d, 2.0, MAX_MS, jitter > 0.0, Exp)
            } else {
                ojs(FROM_LIMIT, d, 2.0, d, jitter > 0.0, Flat)
            };
            let f = Formula::Bullmq {
                kind: kind_,
                delay,
                jitter,
            };
            (f, attempts(attempts_n), DEAD, o)
        }
        4 => {
            // temporal
            let (initial, coefficient, max, max_attempts) = (s(0), read.f(1), s(2), s(4));
            let last = if max_attempts == 0 {
                None
            } else {
                attempts(max_attempts)
            };
            let f = Formula::Temporal {
                initial_ms: initial,
                coefficient,
                max_ms: max,
            };
            let o = ojs(FROM_LIMIT, initial, coefficient, max, false, Exp);
            (f, last, GONE, o)
        }
        5 => {
            // oban
            let max_attempts = s(0);
            let o = ojs(FROM_LIMIT, 17_000, 2.0, MAX_MS, true, Exp);
            (
                Formula::Oban { max_attempts },
                attempts(max_attempts),
                GONE,
                o,
            )
        }
        6 => {
            // rq
            let (max, returned) = (s(0), s(2) == 1);
            let intervals = core::mem::take(&mut read.intervals);
            let first = intervals.first().copied().unwrap_or(0);
            let ms = times_1000(first).min(MAX_MS);
            let f = Formula::Rq {
                intervals,
                max,
                returned,
            };
            (
                f,
                Some(max),
                DEAD,
                ojs(FROM_LIMIT, ms, 1.0, ms, false, Flat),
            )
        }
        7 => {
            // dramatiq
            let (min_backoff, max_backoff) = (s(1), s(2));
            let last = read.opt(0);
            let f = Formula::Dramatiq {
                min_backoff,
                // `max_backoff = min(max_backoff, DEFAULT_MAX_BACKOFF)`.
                max_backoff: max_backoff.min(604_800_000),
            };
            let o = ojs(
                FROM_LIMIT,
                min_backoff,
                2.0,
                max_backoff.max(min_backoff),
                true,
                Exp,
            );
            (f, last, DEAD, o)
        }
        8 | 9 => {
            // aws: max_attempts, throttling; aws_jitter: jitter, base_ms,
            // cap_ms, (check), max_attempts.
            let (spread, base, cap, max_attempts) = if system == 8 {
                let base = if s(1) == 1 { 1_000 } else { 50 };
                (Spread::Full, base, 20_000, s(0))
            } else {
                let spread = match s(0) {
                    1 => Spread::Equal,
                    2 => Spread::Decorrelated,
                    _ => Spread::Full,
                };
                (spread, s(1), s(2), s(4))
            };
            let b = Backoff {
                initial_ms: base,
                curve: Curve::Exponential(2.0),
                offset_ms: 0,
                cap_ms: cap,
                spread,
                rounding: Rounding::Nearest,
            };
            let f = if spread == Spread::Decorrelated {
                Formula::Decorrelated(b)
            } else {
                Formula::Engine(b)
            };
            let o = ojs(FROM_LIMIT, base, 2.0, cap.max(base), true, Exp);
            (f, attempts(max_attempts), GONE, o)
        }
        10 => {
            // ratchet
            let (max_retries, base) = (s(0), s(2));
            let policy = match s(1) {
                1 => RatchetPolicy::Fixed,
                2 => RatchetPolicy::Exponential,
                _ => RatchetPolicy::None,
            };
            let o = if policy == RatchetPolicy::Exponential {
                ojs(FROM_LIMIT, base, 2.0, 86_400_000, false, Exp)
            } else {
                ojs(FROM_LIMIT, base, 2.0, base, false, Flat)
            };
            let f = Formula::Ratchet {
                policy,
                base_ms: base,
            };
            (f, Some(max_retries), DEAD, o)
        }
        11 => {
            // zzz_jobs
            let (max_attempts, base_s, max_s, jitter, delay_s) =
                (s(0), s(2), s(3), s(4) == 1, s(5));
            let strategy = match s(1) {
                1 => ZzzStrategy::Linear,
                2 => ZzzStrategy::Constant,
                _ => ZzzStrategy::Exponential,
            };
            let ms = |s: u64| times_1000(s).min(MAX_MS);
            let o = match strategy {
                ZzzStrategy::Constant => {
                    ojs(max_attempts, ms(delay_s), 2.0, ms(delay_s), jitter, Flat)
                }
                _ => {
                    let st = if strategy == ZzzStrategy::Linear {
                        Strategy::Linear
                    } else {
                        Exp
                    };
                    ojs(
                        max_attempts,
                        ms(base_s),
                        2.0,
                        ms(max_s.max(base_s)),
                        jitter,
                        st,
                    )
                }
            };
            let f = Formula::Zzz {
                strategy,
                base_s,
                max_s,
                jitter,
                delay_s,
            };
            (f, attempts(max_attempts), GONE, o)
        }
        _ => {
            // chasquimq
            let (max_attempts, exponential, delay_ms, max_ms) = (s(0), s(1) == 0, s(2), s(3));
            let (multiplier, jitter_ms) = (read.f(4), s(5));
            let o = ojs(
                max_attempts,
                delay_ms,
                multiplier.max(1.0),
                max_ms.max(delay_ms),
                jitter_ms > 0,
                if exponential { Exp } else { Flat },
            );
            let f = Formula::Chasqui {
                exponential,
                delay_ms,
                max_ms,
                multiplier,
                jitter_ms,
            };
            (f, attempts(max_attempts), DEAD, o)
        }
    }
}
fn read_bull_backoff(r: &mut Reader<'_>) -> (BullKind, f64, f64) {
    let read = match r.raw("backoff") {
        None | Some(Value::Null) => {
            r.put("backoff", Value::Null);
            return (BullKind::None, 0.0, 0.0);
        }
        // `Backoffs.normalize`: a number is a fixed delay.
        Some(v) if v.is_number() => in_range(v, 0.0, 9.0e15)
            .map(|d| (BullKind::Fixed, d, 0.0))
            .ok_or(v),
        Some(Value::Object(m)) => {
            let kind_ = match m.get("type").and_then(Value::as_str) {
                Some("fixed") => BullKind::Fixed,
                Some("exponential") => BullKind::Exponential,
                _ => {
                    let found = m
                        .get("type")
                        .map_or_else(|| "nothing".to_owned(), Value::describe);
                    r.fault(
                        "backoff.type",
                        cat(&[
                            "expected \"fixed\" or \"exponential\" (custom strategies are code), found ",
                            &found,
                        ]),
                    );
                    BullKind::None
                }
            };
            let mut number = |key: &str, max: f64, expected: &str| match m.get(key) {
                None => 0.0,
                Some(v) => in_range(v, 0.0, max).unwrap_or_else(|| {
                    r.bad(&cat(&["backoff.", key]), expected, v);
                    0.0
                }),
            };
            let delay = number("delay", 9.0e15, "expected a number of ms");
            let jitter = number("jitter", 1.0, "expected a number between 0 and 1");
            for k in m.keys() {
                if !["type", "delay", "jitter"].contains(&k.as_str()) {
                    r.fault(
                        &cat(&["backoff.", k]),
                        cat(&[
                            "unknown field ",
                            &quote(k),
                            "; expected type, delay, jitter",
                        ]),
                    );
                }
            }
            Ok((kind_, delay, jitter))
        }
        Some(v) => Err(v),
    };
    match read {
        Ok((kind_, delay, jitter)) => {
            let name = if kind_ == BullKind::Exponential {
                "exponential"
            } else {
                "fixed"
            };
            let mut m = Map::new();
            config::put(&mut m, "type", Value::from(name));
            config::put(&mut m, "delay", config::float(delay));
            config::put(&mut m, "jitter", config::float(jitter));
            r.put("backoff", Value::Object(m));
            (kind_, delay, jitter)
        }
        Err(v) => {
            r.bad(
                "backoff",
                "expected a number of ms or {\"type\": \"fixed\" | \"exponential\", \"delay\": ms, \"jitter\": 0..1}",
                v,
            );
            (BullKind::None, 0.0, 0.0)
        }
    }
}

fn read_rq_interval(r: &mut Reader<'_>) -> Vec<u64> {
    let expected = "expected a non-negative integer of seconds or a non-empty list of them";
    let raw = r.raw("interval");
    let list = match raw {
        None => alloc::vec![0],
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match crate::value::read_uint(item) {
                    Ok(s) => out.push(s),
                    Err(m) => r.faults.push(config::item_field("interval", i), m),
                }
            }
            out
        }
        Some(v) => match crate::value::read_uint(v) {
            Ok(s) => alloc::vec![s],
            Err(_) => {
                r.bad("interval", expected, v);
                alloc::vec![0]
            }
        },
    };
    let canonical = match raw {
        Some(Value::Array(_)) => Value::Array(list.iter().map(|s| Value::from(*s)).collect()),
        _ => Value::from(list.first().copied().unwrap_or(0)),
    };
    r.put("interval", canonical);
    list
}

impl RetryPolicy {
    /// A preset policy: `system` (one of [`SYSTEMS`]) configured with that
    /// system's own options as a JSON object (`"{}"` for its defaults).
    ///
    /// # Errors
    ///
    /// `validation.retry_policy_invalid` with field `preset.<option>` for
    /// every bad or unknown option, or `preset.system` for an unknown
    /// system.
    ///
    /// ```
    /// use ojs_retry::{RetryPolicy, JitterSource};
    /// // Celery: `retry_backoff=True, retry_jitter=False`: 1, 2, 4 ... s.
    /// let p = RetryPolicy::preset_json("celery", r#"{"retry_backoff": true, "retry_jitter": false}"#)?;
    /// assert_eq!(p.delay(3, JitterSource::Uniform(0.0))?, 4_000);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn preset_json(system: &str, config_json: &str) -> Result<Self, Error> {
        let value = Value::from_json(config_json)
            .map_err(|m| Error::new(ErrorCode::RetryPolicyInvalid, "preset", m))?;
        Self::preset(system, &value)
    }

    /// [`RetryPolicy::preset_json`] with the configuration as a [`Value`] (what
    /// the bindings pass for a JS object or a Python dict).
    ///
    /// # Errors
    ///
    /// As [`RetryPolicy::preset_json`]; a `system` key inside the configuration
    /// must agree with `system`.
    pub fn preset(system: &str, config: &Value) -> Result<Self, Error> {
        let mut map = match config {
            Value::Object(m) => m.clone(),
            Value::Null => Map::new(),
            other => {
                return Err(Error::new(
                    ErrorCode::RetryPolicyInvalid,
                    "preset",
                    found("expected the system's options as an object", other),
                ));
            }
        };
        if let Some(s) = map.get("system")
            && s.as_str() != Some(system)
        {
            return Err(Error::new(
                ErrorCode::RetryPolicyInvalid,
                "preset.system",
                cat(&[
                    "expected the options' system to agree with ",
                    &quote(system),
                    ", found ",
                    &s.describe(),
                ]),
            ));
        }
        map.insert("system".to_owned(), Value::from(system));
        from_value(&Value::Object(map))
    }

    /// The preset's system name, when this policy is a preset.
    ///
    /// ```
    /// let p = ojs_retry::RetryPolicy::preset_json("oban", "{}").unwrap();
    /// assert_eq!(p.preset_system(), Some("oban"));
    /// assert_eq!(ojs_retry::RetryPolicy::default().preset_system(), None);
    /// ```
    #[must_use]
    pub fn preset_system(&self) -> Option<&str> {
        self.preset_ref()
            .and_then(|p| p.config.get("system"))
            .and_then(Value::as_str)
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;

    #[test]
    fn system_list_is_the_systems_joined() {
        assert_eq!(SYSTEM_LIST, SYSTEMS.join(", "));
    }

    #[test]
    fn choices_need_no_escapes() {
        // `Reader::choice` quotes them by hand, as `quote` would.
        for options in OPTIONS {
            for (_, opt) in options {
                if let Opt::Choice(i) = opt {
                    for c in CHOICES[usize::from(*i)] {
                        assert_eq!(quote(c), alloc::format!("\"{c}\""));
                    }
                }
            }
        }
    }
}
