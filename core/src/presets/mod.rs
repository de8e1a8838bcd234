//! Presets: the retry behaviour of existing queues, reproduced exactly.
//!
//! A preset is a [`RetryPolicy`](crate::RetryPolicy) built from another
//! system's own retry configuration. The engine then evaluates it the way
//! that system does: the counter its formula sees (0 or 1 at the first
//! failure), whether its limit counts retries or attempts, its formula and
//! rounding, its caps, its jitter as a function of the one uniform sample
//! `u = k / 2^53`, and its terminal outcome (dead set, discard, failed set)
//! and special values. `docs/presets.md` has the table, with the source
//! file and version each preset was read from, and the translation to a
//! plain OJS policy.
//!
//! A preset policy serialises as `{"preset": {"system": "...", ...}}`: the
//! system's configuration with every default filled in. That document
//! builds the same policy again in every binding; a document without
//! `preset` is a plain OJS policy and is validated as strictly as ever.
//!
//! Each system is a module of its own with a typed options struct: it
//! reads its options (every fault at `preset.<option>`), serialises them
//! as the canonical configuration, and gives its formula, its limit and
//! rules, and the nearest plain OJS policy. This module dispatches on the
//! system's name and evaluates what the system gives; it knows nothing of
//! [`RetryPolicy`](crate::RetryPolicy), which wraps the result.
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

mod aws;
mod bullmq;
mod celery;
mod chasquimq;
mod dramatiq;
mod faktory;
mod math;
mod oban;
mod ratchet;
mod read;
mod rq;
mod sidekiq;
mod system;
mod temporal;
mod zzz_jobs;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Serialize, Serializer};

use crate::backoff::{ScheduleRow, Strategy};
use crate::duration::MAX_MS;
use crate::error::{Error, ErrorCode, Faults, quote};
use crate::exhaustion::OnExhaustion;
use crate::jitter::{JitterSource, Sample};
use crate::matching::first_match;
use crate::value::{Map, Value};

use math::Stages;
use read::{Reader, found};
use system::{System, Terms};

/// Every system name a preset accepts, in the order of the docs' table
/// (also [`PRESET_SYSTEMS`](crate::PRESET_SYSTEMS)).
///
/// ```
/// use ojs_retry::{RetryPolicy, presets::SYSTEMS};
/// for system in SYSTEMS {
///     assert_eq!(RetryPolicy::preset_json(system, "{}")?.preset_system(), Some(system));
/// }
/// # Ok::<(), ojs_retry::Error>(())
/// ```
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
///
/// ```
/// use ojs_retry::{JitterSource, RetryPolicy, presets::MAX_CHAIN};
/// let p = RetryPolicy::preset_json("aws_jitter", r#"{"jitter": "decorrelated"}"#)?;
/// assert!(p.delay(MAX_CHAIN, JitterSource::Seed(7)).is_ok());
/// assert_eq!(p.delay(MAX_CHAIN + 1, JitterSource::Seed(7)).unwrap_err().field(), Some("retry_number"));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
pub const MAX_CHAIN: u64 = 100_000;

/// One system's options: the preset's whole configuration.
#[derive(Debug, Clone, PartialEq)]
enum Config {
    Sidekiq(sidekiq::Options),
    Faktory(faktory::Options),
    Celery(celery::Options),
    Bullmq(bullmq::Options),
    Temporal(temporal::Options),
    Oban(oban::Options),
    Rq(rq::Options),
    Dramatiq(dramatiq::Options),
    Aws(aws::Aws),
    AwsJitter(aws::AwsJitter),
    Ratchet(ratchet::Options),
    ZzzJobs(zzz_jobs::Options),
    Chasquimq(chasquimq::Options),
}

/// `$body` with `$o` bound to the system's options, whichever it is.
macro_rules! each {
    ($config:expr, $o:ident => $body:expr) => {
        match $config {
            Config::Sidekiq($o) => $body,
            Config::Faktory($o) => $body,
            Config::Celery($o) => $body,
            Config::Bullmq($o) => $body,
            Config::Temporal($o) => $body,
            Config::Oban($o) => $body,
            Config::Rq($o) => $body,
            Config::Dramatiq($o) => $body,
            Config::Aws($o) => $body,
            Config::AwsJitter($o) => $body,
            Config::Ratchet($o) => $body,
            Config::ZzzJobs($o) => $body,
            Config::Chasquimq($o) => $body,
        }
    };
}

/// Reads `S`'s options from `map`; every fault, unknown options included.
fn read<S: System>(map: &Map, wrap: fn(S) -> Config) -> Result<Config, Error> {
    let mut r = Reader::new(map);
    let options = S::read(&mut r);
    let Faults(faults) = r.finish(S::NAME, S::OPTIONS);
    match Error::from_faults(ErrorCode::RetryPolicyInvalid, faults) {
        Some(e) => Err(e),
        None => Ok(wrap(options)),
    }
}

/// `S::NAME`, for [`each!`].
fn name_of<S: System>(_: &S) -> &'static str {
    S::NAME
}

impl Config {
    /// Reads the options of `system`; `None` for a name that is not one
    /// of [`SYSTEMS`].
    fn read(system: &str, map: &Map) -> Option<Result<Self, Error>> {
        Some(match system {
            "sidekiq" => read(map, Self::Sidekiq),
            "faktory" => read(map, Self::Faktory),
            "celery" => read(map, Self::Celery),
            "bullmq" => read(map, Self::Bullmq),
            "temporal" => read(map, Self::Temporal),
            "oban" => read(map, Self::Oban),
            "rq" => read(map, Self::Rq),
            "dramatiq" => read(map, Self::Dramatiq),
            "aws" => read(map, Self::Aws),
            "aws_jitter" => read(map, Self::AwsJitter),
            "ratchet" => read(map, Self::Ratchet),
            "zzz_jobs" => read(map, Self::ZzzJobs),
            "chasquimq" => read(map, Self::Chasquimq),
            _ => return None,
        })
    }

    fn name(&self) -> &'static str {
        each!(self, o => name_of(o))
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        each!(self, o => o.stages(n, k))
    }

    fn uses_sample(&self) -> bool {
        each!(self, o => o.uses_sample())
    }

    fn bounds(&self, n: u64) -> (u64, u64) {
        each!(self, o => o.bounds(n))
    }

    fn chain(&self) -> Option<system::Chain> {
        each!(self, o => o.chain())
    }

    fn terms(&self) -> Terms {
        each!(self, o => o.terms())
    }

    fn nearest(&self) -> system::Nearest {
        each!(self, o => o.nearest())
    }
}

/// The canonical configuration: the system's options, every default
/// filled in, keys sorted, `system` among them.
impl Serialize for Config {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        each!(self, o => o.serialize(s))
    }
}

/// A resolved preset: the system's options and its terminal semantics.
/// Serialises as its canonical configuration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Preset {
    config: Config,
    terms: Terms,
}

impl Serialize for Preset {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.config.serialize(s)
    }
}

/// The nearest plain OJS policy's fields (what the accessors of a preset
/// policy return).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plain {
    pub(crate) max_attempts: u64,
    pub(crate) initial_interval_ms: u64,
    pub(crate) backoff_coefficient: f64,
    pub(crate) max_interval_ms: u64,
    pub(crate) jitter: bool,
    pub(crate) non_retryable_errors: Vec<String>,
    pub(crate) on_exhaustion: OnExhaustion,
    pub(crate) strategy: Strategy,
}

/// Why a preset ends a job's retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Why {
    /// The system's limit.
    Exhausted,
    /// A rule's pattern matched (`None`: the type is none of those the
    /// system retries).
    Rule(Option<String>),
}

impl Preset {
    fn new(config: Config) -> (Self, Plain) {
        let terms = config.terms();
        let nearest = config.nearest();
        // The limit's attempts, unless the system keeps its own count.
        let max_attempts = nearest.max_attempts.unwrap_or_else(|| {
            terms
                .last_retried
                .map_or(MAX_MS, |l| l.saturating_add(1).min(MAX_MS))
        });
        let plain = Plain {
            max_attempts,
            // A plain policy's intervals are at least 1 ms.
            initial_interval_ms: nearest.initial_ms.max(1),
            backoff_coefficient: nearest.coefficient,
            max_interval_ms: nearest.max_ms.max(1),
            jitter: nearest.jitter,
            non_retryable_errors: terms.rules.iter().map(|r| r.pattern.clone()).collect(),
            on_exhaustion: terms.exhausted,
            strategy: nearest.strategy,
        };
        (Self { config, terms }, plain)
    }

    /// The system's name.
    pub(crate) fn system(&self) -> &'static str {
        self.config.name()
    }

    /// The outcome for a failure of `attempt` with `error_type` (`None` for
    /// a timeout or an untyped failure, which no rule matches) and the
    /// type's `ancestors`, or `None` to retry. The systems match by class
    /// (Celery's and Dramatiq's `isinstance`), so a rule naming an
    /// ancestor matches.
    pub(crate) fn terminal(
        &self,
        attempt: u64,
        error_type: Option<&str>,
        ancestors: &[String],
    ) -> Option<(OnExhaustion, Why)> {
        let t = &self.terms;
        let exhausted = t.last_retried.is_some_and(|last| attempt > last);
        let matches = |pattern: &str| {
            error_type.is_some_and(|e| {
                core::iter::once(e)
                    .chain(ancestors.iter().map(String::as_str))
                    .any(|e| first_match(e, core::slice::from_ref(&pattern)).is_some())
            })
        };
        if exhausted && t.limit_first {
            return Some((t.exhausted, Why::Exhausted));
        }
        if let Some(r) = t.rules.iter().find(|r| matches(&r.pattern)) {
            return Some((r.outcome, Why::Rule(Some(r.pattern.clone()))));
        }
        if let Some((listed, outcome)) = &t.only
            && error_type.is_some()
            && !listed.iter().any(|p| matches(p))
        {
            return Some((*outcome, Why::Rule(None)));
        }
        exhausted.then_some((t.exhausted, Why::Exhausted))
    }

    /// The delay of retry `n`, walking the chain for decorrelated jitter.
    pub(crate) fn delay(&self, n: u64, jitter: &JitterSource<'_>) -> Result<u64, Error> {
        if let Some(c) = self.config.chain() {
            if n > MAX_CHAIN {
                return Err(Error::arg(
                    "retry_number",
                    format!(
                        "decorrelated jitter walks the chain of every earlier retry; expected a retry number at most {MAX_CHAIN}, found {n}"
                    ),
                ));
            }
            let mut prev = c.start();
            for i in 1..=n {
                prev = c.step(prev, jitter.sample(i)?.bits());
            }
            return Ok(system::Chain::ms(prev));
        }
        let k = self.sample(n, jitter)?;
        Ok(self.config.stages(n, k).delay)
    }

    /// The sample bits for retry `n`, drawing only when the formula uses
    /// them (a source is still checked).
    fn sample(&self, n: u64, jitter: &JitterSource<'_>) -> Result<u64, Error> {
        if self.config.uses_sample() {
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
        let chain = self.config.chain();
        // Decorrelated chains: drawn, smallest and largest so far.
        let start = chain.map_or(0.0, system::Chain::start);
        let (mut prev, mut lo, mut hi) = (start, start, start);
        for n in 1..=count {
            let mut row = if let Some(c) = chain {
                lo = c.step(lo, Sample::MIN.bits());
                hi = c.step(hi, Sample::MAX.bits());
                let delay = match jitter {
                    Some(j) => {
                        prev = c.step(prev, j.sample(n)?.bits());
                        Some(system::Chain::ms(prev))
                    }
                    None => None,
                };
                let s = self.config.stages(n, 0);
                let s = Stages::fixed(s.raw);
                row(n, s, (system::Chain::ms(lo), system::Chain::ms(hi)), delay)
            } else {
                let delay = match jitter {
                    Some(j) => Some(self.config.stages(n, self.sample(n, j)?).delay),
                    None => None,
                };
                row(n, self.config.stages(n, 0), self.config.bounds(n), delay)
            };
            row.accumulate(&mut total);
            rows.push(row);
        }
        Ok(rows)
    }
}

/// A schedule row for retry `n` (its running total not yet added).
fn row(n: u64, s: Stages, (min_ms, max_ms): (u64, u64), delay_ms: Option<u64>) -> ScheduleRow {
    ScheduleRow {
        retry_number: n,
        attempt: n.saturating_add(1),
        raw_ms: s.raw,
        capped_ms: s.capped,
        min_ms,
        max_ms,
        delay_ms,
        cumulative_ms: 0,
    }
}

/// Reads a preset document's value, `{"system": "...", ...}`, into the
/// preset and the nearest plain policy.
pub(crate) fn from_value(value: &Value) -> Result<(Preset, Plain), Error> {
    let invalid =
        |path: &str, message: String| Error::new(ErrorCode::RetryPolicyInvalid, path, message);
    let Value::Object(map) = value else {
        return Err(invalid(
            "preset",
            found(
                "expected an object such as {\"system\": \"sidekiq\", \"retry\": 5}",
                value,
            ),
        ));
    };
    let system = map.get("system");
    if let Some(Value::String(s)) = system
        && let Some(config) = Config::read(s, map)
    {
        return config.map(Preset::new);
    }
    let list = SYSTEMS.join(", ");
    Err(invalid(
        "preset.system",
        match system {
            Some(v) => format!("expected one of {list}, found {}", v.describe()),
            None => format!("expected the system's name, one of {list}"),
        },
    ))
}

/// Reads `system`'s options (`null` for its defaults); a `system` key
/// inside them must agree.
pub(crate) fn from_options(system: &str, options: &Value) -> Result<(Preset, Plain), Error> {
    let invalid =
        |path: &str, message: String| Error::new(ErrorCode::RetryPolicyInvalid, path, message);
    let mut map = match options {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        other => {
            return Err(invalid(
                "preset",
                found("expected the system's options as an object", other),
            ));
        }
    };
    if let Some(s) = map.get("system")
        && s.as_str() != Some(system)
    {
        return Err(invalid(
            "preset.system",
            format!(
                "expected the options' system to agree with {}, found {}",
                quote(system),
                s.describe()
            ),
        ));
    }
    map.insert("system".into(), Value::from(system));
    from_value(&Value::Object(map))
}

/// [`from_options`] with the options as JSON text.
pub(crate) fn from_json(system: &str, options_json: &str) -> Result<(Preset, Plain), Error> {
    let value = Value::from_json(options_json)
        .map_err(|m| Error::new(ErrorCode::RetryPolicyInvalid, "preset", m))?;
    from_options(system, &value)
}

#[cfg(test)]
mod tests;
