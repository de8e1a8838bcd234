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
//! let p = RetryPolicy::preset("sidekiq", r#"{"retry": 5}"#)?;
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
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::json::{AsValue, Map, Value};

use crate::backoff::{Backoff, Curve, Rounding, Spread};
use crate::decision::Action;
use crate::duration::MAX_MS;
use crate::error::{Error, ErrorCode, Faults, quote};
use crate::jitter::JitterSource;
use crate::matching::first_match;
use crate::policy::{OnExhaustion, RetryPolicy, kind};
use crate::{ScheduleRow, Strategy};

use config::Reader;
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

/// The longest decorrelated-jitter chain `delay` walks (it is linear in the
/// retry number).
pub const MAX_CHAIN: u64 = 100_000;

/// A resolved preset: the canonical configuration, the formula, and the
/// system's terminal semantics.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Preset {
    /// `{"system": ..., every option}`.
    pub(crate) config: Map<String, Value>,
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
                        "decorrelated jitter walks the chain of every earlier retry; expected a retry number at most {MAX_CHAIN}, found {n}"
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
    let mut faults = Faults::default();
    let Value::Object(map) = value else {
        faults.push(
            "preset",
            format!(
                "expected an object such as {{\"system\": \"sidekiq\", \"retry\": 5}}, found {}",
                kind(value)
            ),
        );
        return Err(into_err(faults));
    };
    let (system, index) = match map.get("system") {
        Some(Value::String(s)) if let Some(i) = SYSTEMS.iter().position(|n| n == s) => {
            (s.clone(), i)
        }
        Some(v) => {
            faults.push(
                "preset.system",
                format!("expected one of {}, found {}", SYSTEMS.join(", "), kind(v)),
            );
            return Err(into_err(faults));
        }
        None => {
            faults.push(
                "preset.system",
                format!("expected the system's name, one of {}", SYSTEMS.join(", ")),
            );
            return Err(into_err(faults));
        }
    };
    let mut r = Reader::new(map);
    let (preset, ojs) = read_system(index, &mut r);
    let (mut out, mut found) = r.finish(&system);
    let mut canonical = Map::new();
    canonical.insert("system".to_owned(), Value::String(system));
    canonical.append(&mut out);
    faults.0.append(&mut found.0);
    if !faults.0.is_empty() {
        return Err(into_err(faults));
    }
    let non_retryable = preset.rules.iter().map(|(p, _)| p.clone()).collect();
    let on_exh = on_exhaustion(preset.exhausted);
    Ok(RetryPolicy::assemble(
        ojs.max_attempts,
        ojs.initial_ms,
        ojs.coefficient,
        ojs.max_ms,
        ojs.jitter,
        non_retryable,
        on_exh,
        ojs.strategy,
    )
    .into_preset(Box::new(Preset {
        config: canonical,
        ..preset
    })))
}

fn into_err(faults: Faults) -> Error {
    match faults.into_error(ErrorCode::RetryPolicyInvalid) {
        Err(e) => e,
        Ok(()) => Error::new(ErrorCode::RetryPolicyInvalid, "preset", "invalid preset"),
    }
}

fn preset(formula: Formula, last_retried: Option<u64>, exhausted: Action) -> Preset {
    Preset {
        config: Map::new(),
        formula,
        last_retried,
        exhausted,
        rules: Vec::new(),
        limit_first: false,
    }
}

fn ojs(max_attempts: u64, initial_ms: u64, coefficient: f64, max_ms: u64, jitter: bool) -> Ojs {
    Ojs {
        max_attempts,
        initial_ms,
        coefficient,
        max_ms,
        jitter,
        strategy: Strategy::Exponential,
    }
}

/// `n` retries: attempts `1..=n` retry.
fn retries(n: Option<u64>) -> Option<u64> {
    n
}

/// `n` total attempts: attempts `1..n` retry.
fn attempts(n: u64) -> Option<u64> {
    Some(n.saturating_sub(1))
}

fn total(last: Option<u64>) -> u64 {
    last.map_or(MAX_MS, |l| l.saturating_add(1).min(MAX_MS))
}

const INT_MAX: u64 = i32::MAX as u64;

#[allow(clippy::too_many_lines)]
/// `system` is the index of the system's name in [`SYSTEMS`] (integer
/// arms: matching the names again costs a string comparison per arm), and
/// `choice` answers the index of the option among its choices, for the
/// same reason.
fn read_system(system: usize, r: &mut Reader<'_>) -> (Preset, Ojs) {
    match system {
        0 => {
            // sidekiq
            let version = r.choice("version", &["8", "7"]);
            let max_retries = r.uint("max_retries", 25, 0, MAX_MS);
            let retry = match r.raw("retry") {
                None | Some(Value::Bool(true)) => Some(max_retries),
                Some(Value::Bool(false)) => None,
                Some(v) => match crate::policy::read_uint(v) {
                    Ok(n) => Some(n),
                    Err(m) => {
                        r.fault("retry", format!("{m}, or true / false"));
                        Some(max_retries)
                    }
                },
            };
            let given = r.has("retry");
            let canonical_retry = match (given, r.raw_peek("retry")) {
                (true, Some(v)) if v.is_number() => Value::from(retry.unwrap_or(0)),
                (true, Some(Value::Bool(false))) => Value::Bool(false),
                _ => Value::Bool(true),
            };
            r.put("retry", canonical_retry);
            let dead = r.boolean("dead", true);
            let to_morgue = if dead { DEAD } else { GONE };
            let mut rules = r.rules("kill", &[], to_morgue);
            rules.append(&mut r.rules("discard", &[], GONE));
            let jitter = if version == 0 {
                SidekiqJitter::V8
            } else {
                SidekiqJitter::V7
            };
            // retry: false → no retry and no morgue (death handlers only).
            let (last, exhausted) = match retry {
                None => (Some(0), GONE),
                Some(n) => (retries(Some(n)), to_morgue),
            };
            let mut p = preset(Formula::Quartic { jitter, steps: 10 }, last, exhausted);
            p.rules = rules;
            p.limit_first = true;
            let mut o = ojs(total(last), 1_000, 4.0, MAX_MS, true);
            o.strategy = Strategy::Polynomial;
            (p, o)
        }
        1 => {
            // faktory
            let retry = r.int("retry", 25, -1);
            let (last, exhausted) = match retry {
                0 => (Some(0), GONE),
                n if n < 0 => (Some(0), DEAD),
                n => (Some(n.unsigned_abs()), DEAD),
            };
            let p = preset(
                Formula::Quartic {
                    jitter: SidekiqJitter::V7,
                    steps: 30,
                },
                last,
                exhausted,
            );
            let mut o = ojs(total(last), 1_000, 4.0, MAX_MS, true);
            o.strategy = Strategy::Polynomial;
            (p, o)
        }
        2 => {
            // celery
            let max_retries = r.opt_uint("max_retries", Some(3));
            let factor = match r.raw("retry_backoff") {
                None | Some(Value::Bool(false)) => {
                    r.put("retry_backoff", Value::Bool(false));
                    None
                }
                Some(Value::Bool(true)) => {
                    r.put("retry_backoff", Value::Bool(true));
                    Some(1)
                }
                Some(v) => match v.as_f64() {
                    Some(x) if v.is_number() && x.is_finite() && x >= 0.0 => {
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
                        r.fault(
                            "retry_backoff",
                            format!(
                                "expected true, false or a non-negative number of seconds, found {}",
                                kind(v)
                            ),
                        );
                        None
                    }
                },
            };
            let maximum = r.uint("retry_backoff_max", 600, 0, MAX_MS);
            let jitter = r.boolean("retry_jitter", true);
            let delay_s = r.number("default_retry_delay", 180.0, 0.0, 9.0e12);
            let rules = r.rules("dont_autoretry_for", &[], GONE);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let fixed_ms = (libm::trunc(delay_s * 1000.0) as u64).min(MAX_MS);
            let last = retries(max_retries);
            let mut p = preset(
                Formula::Celery {
                    backoff: factor.map(|f| (f, maximum, jitter)),
                    fixed_ms,
                },
                last,
                GONE,
            );
            p.rules = rules;
            let o = match factor {
                Some(f) => ojs(
                    total(last),
                    f.saturating_mul(1000).max(1),
                    2.0,
                    maximum.saturating_mul(1000).max(1),
                    jitter,
                ),
                None => {
                    let mut o = ojs(total(last), fixed_ms.max(1), 1.0, fixed_ms.max(1), false);
                    o.strategy = Strategy::None;
                    o
                }
            };
            (p, o)
        }
        3 => {
            // bullmq
            let attempts_n = r.uint("attempts", 1, 0, MAX_MS);
            let (kind_, delay, jitter) = read_bull_backoff(r);
            let unrecoverable = r.rules("unrecoverable", &["UnrecoverableError"], DEAD);
            let last = attempts(attempts_n);
            let mut p = preset(
                Formula::Bullmq {
                    kind: kind_,
                    delay,
                    jitter,
                },
                last,
                DEAD,
            );
            p.rules = unrecoverable;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let d = (delay as u64).max(1);
            let mut o = ojs(attempts_n.max(1), d, 2.0, MAX_MS, jitter > 0.0);
            if kind_ != BullKind::Exponential {
                o.strategy = Strategy::None;
                o.max_ms = d;
            }
            (p, o)
        }
        4 => {
            // temporal
            let initial = r.uint("initialInterval", 1_000, 1, MAX_MS / 100);
            let coefficient = r.number("backoffCoefficient", 2.0, 1.0, f64::MAX);
            let max = r.uint("maximumInterval", initial.saturating_mul(100), 1, MAX_MS);
            if max < initial {
                r.fault(
                    "maximumInterval",
                    format!(
                        "expected maximumInterval >= initialInterval, found {max} ms < {initial} ms"
                    ),
                );
            }
            let max_attempts = r.uint("maximumAttempts", 0, 0, INT_MAX);
            let types = r.rules("nonRetryableErrorTypes", &[], GONE);
            let last = if max_attempts == 0 {
                None
            } else {
                attempts(max_attempts)
            };
            let mut p = preset(
                Formula::Temporal {
                    initial_ms: initial,
                    coefficient,
                    max_ms: max,
                },
                last,
                GONE,
            );
            p.rules = types;
            (p, ojs(total(last), initial, coefficient, max, false))
        }
        5 => {
            // oban
            let max_attempts = r.uint("max_attempts", 20, 1, INT_MAX);
            let p = preset(Formula::Oban { max_attempts }, attempts(max_attempts), GONE);
            (p, ojs(max_attempts, 17_000, 2.0, MAX_MS, true))
        }
        6 => {
            // rq
            let max = r.uint("max", 1, 1, MAX_MS);
            let intervals = read_rq_interval(r);
            let rule = r.choice("rule", &["raised", "returned"]);
            let first = intervals.first().copied().unwrap_or(0);
            let p = preset(
                Formula::Rq {
                    intervals,
                    max,
                    returned: rule == 1,
                },
                retries(Some(max)),
                DEAD,
            );
            let ms = first.saturating_mul(1000).clamp(1, MAX_MS);
            let mut o = ojs(total(Some(max)), ms, 1.0, ms, false);
            o.strategy = Strategy::None;
            (p, o)
        }
        7 => {
            // dramatiq
            let max_retries = r.opt_uint("max_retries", Some(20));
            let min_backoff = r.uint("min_backoff", 15_000, 0, MAX_MS);
            let max_backoff = r.uint("max_backoff", 604_800_000, 0, MAX_MS);
            let throws = r.rules("throws", &[], DEAD);
            let last = retries(max_retries);
            let mut p = preset(
                Formula::Dramatiq {
                    min_backoff,
                    // `max_backoff = min(max_backoff, DEFAULT_MAX_BACKOFF)`.
                    max_backoff: max_backoff.min(604_800_000),
                },
                last,
                DEAD,
            );
            p.rules = throws;
            let o = ojs(
                total(last),
                min_backoff.max(1),
                2.0,
                max_backoff.max(min_backoff).max(1),
                true,
            );
            (p, o)
        }
        8 => {
            // aws
            let max_attempts = r.uint("max_attempts", 3, 1, MAX_MS);
            let throttling = r.boolean("throttling", false);
            let rules = r.rules("non_retryable", &[], GONE);
            let base = if throttling { 1_000 } else { 50 };
            let b = Backoff {
                initial_ms: base,
                curve: Curve::Exponential(2.0),
                offset_ms: 0,
                cap_ms: 20_000,
                spread: Spread::Full,
                rounding: Rounding::Nearest,
            };
            let mut p = preset(Formula::Engine(b), attempts(max_attempts), GONE);
            p.rules = rules;
            (p, ojs(max_attempts, base, 2.0, 20_000, true))
        }
        9 => {
            // aws_jitter
            let jitter = r.choice("jitter", &["full", "equal", "decorrelated"]);
            let base = r.uint("base_ms", 100, 1, MAX_MS);
            let cap = r.uint("cap_ms", 20_000, 1, MAX_MS);
            if cap < base {
                r.fault(
                    "cap_ms",
                    format!("expected cap_ms >= base_ms, found {cap} < {base}"),
                );
            }
            let max_attempts = r.uint("max_attempts", 3, 1, MAX_MS);
            let rules = r.rules("non_retryable", &[], GONE);
            let spread = match jitter {
                1 => Spread::Equal,
                2 => Spread::Decorrelated,
                _ => Spread::Full,
            };
            let b = Backoff {
                initial_ms: base,
                curve: Curve::Exponential(2.0),
                offset_ms: 0,
                cap_ms: cap,
                spread,
                rounding: Rounding::Nearest,
            };
            let formula = if spread == Spread::Decorrelated {
                Formula::Decorrelated(b)
            } else {
                Formula::Engine(b)
            };
            let mut p = preset(formula, attempts(max_attempts), GONE);
            p.rules = rules;
            (p, ojs(max_attempts, base, 2.0, cap.max(base), true))
        }
        10 => {
            // ratchet
            let max_retries = r.uint("maxRetries", 0, 0, INT_MAX);
            let policy = match r.choice("backoffPolicy", &["NONE", "FIXED", "EXPONENTIAL"]) {
                1 => RatchetPolicy::Fixed,
                2 => RatchetPolicy::Exponential,
                _ => RatchetPolicy::None,
            };
            let base = r.uint("backoffDelayMs", 0, 0, INT_MAX);
            let rules = r.rules("doNotRetry", &[], DEAD);
            let mut p = preset(
                Formula::Ratchet {
                    policy,
                    base_ms: base,
                },
                retries(Some(max_retries)),
                DEAD,
            );
            p.rules = rules;
            let mut o = ojs(
                total(Some(max_retries)),
                base.max(1),
                2.0,
                86_400_000,
                false,
            );
            if policy != RatchetPolicy::Exponential {
                o.strategy = Strategy::None;
                o.max_ms = base.max(1);
            }
            (p, o)
        }
        11 => {
            // zzz_jobs
            let max_attempts = r.uint("max_attempts", 20, 0, INT_MAX);
            let strategy = match r.choice("strategy", &["exponential", "linear", "constant"]) {
                1 => ZzzStrategy::Linear,
                2 => ZzzStrategy::Constant,
                _ => ZzzStrategy::Exponential,
            };
            let base_s = r.uint("base_seconds", 15, 0, MAX_MS);
            let max_s = r.uint("max_seconds", 3_600, 0, MAX_MS);
            let jitter = r.boolean("jitter", true);
            let delay_s = r.uint("delay_seconds", 10, 0, MAX_MS);
            let p = preset(
                Formula::Zzz {
                    strategy,
                    base_s,
                    max_s,
                    jitter,
                    delay_s,
                },
                attempts(max_attempts),
                GONE,
            );
            let ms = |s: u64| s.saturating_mul(1000).clamp(1, MAX_MS);
            let mut o = ojs(max_attempts, ms(base_s), 2.0, ms(max_s.max(base_s)), jitter);
            match strategy {
                ZzzStrategy::Linear => o.strategy = Strategy::Linear,
                ZzzStrategy::Constant => {
                    o.strategy = Strategy::None;
                    o.initial_ms = ms(delay_s);
                    o.max_ms = ms(delay_s);
                }
                ZzzStrategy::Exponential => {}
            }
            (p, o)
        }
        _ => {
            // chasquimq
            let max_attempts = r.uint("max_attempts", 3, 0, u64::from(u32::MAX));
            let exponential = r.choice("kind", &["exponential", "fixed"]) == 0;
            let delay_ms = r.uint("delay_ms", 100, 0, MAX_MS);
            let max_ms = r.uint("max_delay_ms", 30_000, 0, MAX_MS);
            let multiplier = r.number("multiplier", 2.0, 0.0, f64::MAX);
            let jitter_ms = r.uint("jitter_ms", 100, 0, MAX_MS / 2);
            let rules = r.rules("unrecoverable", &["UnrecoverableError", "panic"], DEAD);
            let mut p = preset(
                Formula::Chasqui {
                    exponential,
                    delay_ms,
                    max_ms,
                    multiplier,
                    jitter_ms,
                },
                attempts(max_attempts),
                DEAD,
            );
            p.rules = rules;
            let mut o = ojs(
                max_attempts,
                delay_ms.max(1),
                multiplier.max(1.0),
                max_ms.max(delay_ms).max(1),
                jitter_ms > 0,
            );
            if !exponential {
                o.strategy = Strategy::None;
            }
            (p, o)
        }
    }
}

fn read_bull_backoff(r: &mut Reader<'_>) -> (BullKind, f64, f64) {
    let expected = "expected a number of ms or {\"type\": \"fixed\" | \"exponential\", \"delay\": ms, \"jitter\": 0..1}";
    let canonical = |k: &str, d: f64, j: f64| {
        let mut m = Map::new();
        m.insert("type".to_owned(), Value::from(k));
        m.insert("delay".to_owned(), config::float(d));
        m.insert("jitter".to_owned(), config::float(j));
        Value::Object(m)
    };
    let valid_ms = |v: &Value| {
        v.as_f64()
            .filter(|x| v.is_number() && x.is_finite() && *x >= 0.0 && *x <= 9.0e15)
    };
    match r.raw("backoff") {
        None | Some(Value::Null) => {
            r.put("backoff", Value::Null);
            (BullKind::None, 0.0, 0.0)
        }
        // `Backoffs.normalize`: a number is a fixed delay.
        Some(v) if v.is_number() => match valid_ms(v) {
            Some(d) => {
                r.put("backoff", canonical("fixed", d, 0.0));
                (BullKind::Fixed, d, 0.0)
            }
            None => {
                r.fault("backoff", format!("{expected}, found {}", kind(v)));
                (BullKind::None, 0.0, 0.0)
            }
        },
        Some(Value::Object(m)) => {
            let bad = |r: &mut Reader<'_>, k: &str, why: String| {
                r.faults.push(format!("preset.backoff.{k}"), why);
            };
            let kind_ = match m.get("type").and_then(Value::as_str) {
                Some("fixed") => BullKind::Fixed,
                Some("exponential") => BullKind::Exponential,
                _ => {
                    bad(
                        r,
                        "type",
                        format!(
                            "expected \"fixed\" or \"exponential\" (custom strategies are code), found {}",
                            m.get("type").map_or_else(|| "nothing".to_owned(), kind)
                        ),
                    );
                    BullKind::None
                }
            };
            let delay = match m.get("delay") {
                None => 0.0,
                Some(v) => valid_ms(v).unwrap_or_else(|| {
                    bad(
                        r,
                        "delay",
                        format!("expected a number of ms, found {}", kind(v)),
                    );
                    0.0
                }),
            };
            let jitter = match m.get("jitter") {
                None => 0.0,
                Some(v) => v
                    .as_f64()
                    .filter(|j| v.is_number() && (0.0..=1.0).contains(j))
                    .unwrap_or_else(|| {
                        bad(
                            r,
                            "jitter",
                            format!("expected a number between 0 and 1, found {}", kind(v)),
                        );
                        0.0
                    }),
            };
            for k in m.keys() {
                if !["type", "delay", "jitter"].contains(&k.as_str()) {
                    bad(
                        r,
                        k,
                        format!("unknown field {}; expected type, delay, jitter", quote(k)),
                    );
                }
            }
            let name = if kind_ == BullKind::Exponential {
                "exponential"
            } else {
                "fixed"
            };
            r.put("backoff", canonical(name, delay, jitter));
            (kind_, delay, jitter)
        }
        Some(v) => {
            r.fault("backoff", format!("{expected}, found {}", kind(v)));
            (BullKind::None, 0.0, 0.0)
        }
    }
}

fn read_rq_interval(r: &mut Reader<'_>) -> Vec<u64> {
    let expected = "expected a non-negative integer of seconds or a non-empty list of them";
    let list = match r.raw("interval") {
        None => alloc::vec![0],
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match crate::policy::read_uint(item) {
                    Ok(s) => out.push(s),
                    Err(m) => r.faults.push(format!("preset.interval[{i}]"), m),
                }
            }
            out
        }
        Some(v) => match crate::policy::read_uint(v) {
            Ok(s) => alloc::vec![s],
            Err(_) => {
                r.fault("interval", format!("{expected}, found {}", kind(v)));
                alloc::vec![0]
            }
        },
    };
    let canonical = match r.raw_peek("interval") {
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
    /// let p = RetryPolicy::preset("celery", r#"{"retry_backoff": true, "retry_jitter": false}"#)?;
    /// assert_eq!(p.delay(3, JitterSource::Uniform(0.0))?, 4_000);
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn preset(system: &str, config_json: &str) -> Result<Self, Error> {
        let value = crate::json::parse(config_json)
            .map_err(|m| Error::new(ErrorCode::RetryPolicyInvalid, "preset", m))?;
        Self::preset_value(system, &value)
    }

    /// [`RetryPolicy::preset`] with the configuration as a JSON value (what
    /// the bindings pass for a JS object or a Python dict).
    ///
    /// # Errors
    ///
    /// As [`RetryPolicy::preset`]; a `system` key inside the configuration
    /// must agree with `system`.
    pub fn preset_value<V: AsValue + ?Sized>(system: &str, config: &V) -> Result<Self, Error> {
        let mut map = match &*config.as_value() {
            Value::Object(m) => m.clone(),
            Value::Null => Map::new(),
            other => {
                return Err(Error::new(
                    ErrorCode::RetryPolicyInvalid,
                    "preset",
                    format!(
                        "expected the system's options as an object, found {}",
                        kind(other)
                    ),
                ));
            }
        };
        if let Some(s) = map.get("system")
            && s.as_str() != Some(system)
        {
            return Err(Error::new(
                ErrorCode::RetryPolicyInvalid,
                "preset.system",
                format!(
                    "expected the options' system to agree with {}, found {}",
                    quote(system),
                    kind(s)
                ),
            ));
        }
        map.insert("system".to_owned(), Value::from(system));
        from_value(&Value::Object(map))
    }

    /// The preset's system name, when this policy is a preset.
    ///
    /// ```
    /// let p = ojs_retry::RetryPolicy::preset("oban", "{}").unwrap();
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

impl Reader<'_> {
    /// The caller's raw value without marking the key (for canonical forms
    /// of fields read with [`Reader::raw`]).
    fn raw_peek(&self, key: &str) -> Option<&Value> {
        self.map_ref().get(key)
    }
}
