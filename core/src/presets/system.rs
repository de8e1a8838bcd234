//! What every system's module provides, and the terms it is decided by.
//!
//! A system module reads its options ([`System::read`]), and from them
//! gives its formula ([`System::stages`]), its rules and limit
//! ([`System::terms`]) and the nearest plain OJS policy
//! ([`System::nearest`]). The options struct serialises as the canonical
//! configuration (every default filled in, keys sorted, `system` among
//! them).

use alloc::string::String;
use alloc::vec::Vec;

use crate::backoff::Strategy;
use crate::exhaustion::OnExhaustion;

use super::math::{K_MAX, Stages, trunc_ms, unit};
use super::read::Reader;

/// The job is kept in a dead / failed set from which it can be retried by
/// hand.
pub(crate) const DEAD: OnExhaustion = OnExhaustion::DeadLetter;
/// The job is gone, or only a record of its failure remains.
pub(crate) const GONE: OnExhaustion = OnExhaustion::Discard;

/// One system's options and what follows from them.
pub(crate) trait System: Sized {
    /// The system's name in documents (`"sidekiq"`).
    const NAME: &'static str;
    /// Its option names, in reading order.
    const OPTIONS: &'static [&'static str];

    /// Reads the options in [`System::OPTIONS`] order, recording a fault
    /// for each bad one (and using its default instead).
    fn read(r: &mut Reader<'_>) -> Self;

    /// The stages of retry `n ≥ 1` (the attempt that failed) with sample
    /// bits `k`.
    fn stages(&self, n: u64, k: u64) -> Stages;

    /// Whether the delay depends on the sample at all.
    fn uses_sample(&self) -> bool;

    /// The limit, the terminal outcome and the error rules.
    fn terms(&self) -> Terms;

    /// The nearest plain OJS policy.
    fn nearest(&self) -> Nearest;

    /// The smallest and largest delay jitter can produce for retry `n`:
    /// at the ends of `u` for formulas increasing in `u`.
    fn bounds(&self, n: u64) -> (u64, u64) {
        (self.stages(n, 0).delay, self.stages(n, K_MAX).delay)
    }

    /// For a delay that depends on every earlier retry's sample (AWS's
    /// decorrelated jitter): the chain that is walked.
    fn chain(&self) -> Option<Chain> {
        None
    }
}

/// Decorrelated jitter as the AWS simulator computes it: the sleep is a
/// float carried from retry to retry, `sleep = min(cap, uniform(base,
/// sleep · 3))` from `sleep = base`; only the delay returned is truncated
/// to whole ms ([`Chain::ms`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Chain {
    pub(crate) base: f64,
    pub(crate) cap: f64,
}

impl Chain {
    /// The sleep before retry 1.
    pub(crate) fn start(self) -> f64 {
        self.base
    }

    /// The next sleep after `prev` with sample bits `k`: CPython's
    /// `min(cap, base + (prev · 3 − base) · u)` (`min` keeps `cap` unless
    /// the draw is below it).
    pub(crate) fn step(self, prev: f64, k: u64) -> f64 {
        let draw = self.base + (prev * 3.0 - self.base) * unit(k);
        if draw < self.cap { draw } else { self.cap }
    }

    /// A sleep in whole ms, truncated.
    pub(crate) fn ms(sleep: f64) -> u64 {
        trunc_ms(sleep)
    }
}

/// An error-type pattern and the outcome of a failure it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    /// In the engine's `matches` syntax.
    pub(crate) pattern: String,
    pub(crate) outcome: OnExhaustion,
}

/// `patterns`, each leading to `outcome`.
pub(crate) fn rules(patterns: &[String], outcome: OnExhaustion) -> impl Iterator<Item = Rule> + '_ {
    patterns.iter().map(move |p| Rule {
        pattern: p.clone(),
        outcome,
    })
}

/// How a system ends a job's retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Terms {
    /// The last failed attempt that is still retried; `None`: no limit.
    pub(crate) last_retried: Option<u64>,
    /// The outcome when the limit is reached.
    pub(crate) exhausted: OnExhaustion,
    /// Error-type rules, checked in order.
    pub(crate) rules: Vec<Rule>,
    /// Whether the limit is checked before the rules (Sidekiq checks it
    /// before its `sidekiq_retry_in` outcomes); otherwise a rule wins.
    pub(crate) limit_first: bool,
    /// For a system that retries only the error types it lists (Celery's
    /// `autoretry_for`): the list, and the outcome of a typed failure that
    /// matches none of it (after the rules, before the limit).
    pub(crate) only: Option<(Vec<String>, OnExhaustion)>,
}

impl Terms {
    /// A limit and outcome with no rules, rules after the limit.
    pub(crate) fn new(last_retried: Option<u64>, exhausted: OnExhaustion) -> Self {
        Self {
            last_retried,
            exhausted,
            rules: Vec::new(),
            limit_first: false,
            only: None,
        }
    }

    /// These terms retrying only a failure whose type matches one of
    /// `patterns` (`None`: any type), any other typed failure leading to
    /// `outcome`.
    pub(crate) fn retrying_only(
        mut self,
        patterns: Option<&[String]>,
        outcome: OnExhaustion,
    ) -> Self {
        self.only = patterns.map(|p| (p.to_vec(), outcome));
        self
    }

    /// These terms with `patterns` leading to `outcome` appended.
    pub(crate) fn with_rules(mut self, patterns: &[String], outcome: OnExhaustion) -> Self {
        self.rules.extend(rules(patterns, outcome));
        self
    }
}

/// `n` total attempts: attempts `1..n` are retried.
pub(crate) fn attempts(n: u64) -> Option<u64> {
    Some(n.saturating_sub(1))
}

/// The nearest plain OJS policy's parameters (the accessors of a preset
/// policy return these; `docs/presets.md` has the table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Nearest {
    /// `None`: the attempts the system's limit allows.
    pub(crate) max_attempts: Option<u64>,
    pub(crate) initial_ms: u64,
    pub(crate) coefficient: f64,
    pub(crate) max_ms: u64,
    pub(crate) jitter: bool,
    pub(crate) strategy: Strategy,
}

impl Nearest {
    /// The usual case: the limit's attempts.
    pub(crate) fn new(
        initial_ms: u64,
        coefficient: f64,
        max_ms: u64,
        jitter: bool,
        strategy: Strategy,
    ) -> Self {
        Self {
            max_attempts: None,
            initial_ms,
            coefficient,
            max_ms,
            jitter,
            strategy,
        }
    }

    /// With `max_attempts` of its own (zzz_jobs, ChasquiMQ: zero attempts
    /// there are not the limit's one).
    pub(crate) fn attempts(mut self, max_attempts: u64) -> Self {
        self.max_attempts = Some(max_attempts);
        self
    }
}
