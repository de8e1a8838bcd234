//! Sidekiq: `lib/sidekiq/job_retry.rb`, v8.1.7 (8.x) and v7.3.9 (jitter
//! since v6.2.2).
//!
//! `(count**4 + 15)` s after the `count`-th retry (0 first), plus
//! `rand(10 * (count + 1))` s of jitter in 8.x or `rand(10) * (count + 1)`
//! s in 6.2.2 – 7.x. The limit is checked before the `sidekiq_retry_in`
//! outcomes (`kill`, `discard`).

use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;
use crate::value::{Value, read_uint};

use super::math::{Stages, mul, secs, times_u};
use super::read::{Reader, choice};
use super::system::{DEAD, GONE, Nearest, System, Terms};

choice! {
    /// Which Sidekiq's jitter (the rest is the same).
    Version {
        /// 8.x: `rand(10 * (count + 1))`.
        V8 = "8",
        /// 6.2.2 – 7.x: `rand(10) * (count + 1)`.
        V7 = "7",
    }
}

/// `retry: true | false | n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum Retry {
    /// `true`: `max_retries` retries; `false`: none, and no morgue.
    Flag(bool),
    /// That many retries.
    Count(u64),
}

/// `sidekiq_options` (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Options {
    /// Whether an exhausted job goes to the dead set (else it is dropped).
    dead: bool,
    /// Error types `sidekiq_retry_in` answers `:discard` for.
    discard: Vec<String>,
    /// Error types `sidekiq_retry_in` answers `:kill` for.
    kill: Vec<String>,
    /// The global default `retry: true` uses.
    max_retries: u64,
    retry: Retry,
    system: &'static str,
    version: Version,
}

impl Options {
    /// The number of retries; `None` for `retry: false`.
    fn retries(&self) -> Option<u64> {
        match self.retry {
            Retry::Flag(true) => Some(self.max_retries),
            Retry::Flag(false) => None,
            Retry::Count(n) => Some(n),
        }
    }
}

/// `retry`, read after `max_retries` (what `true` means).
fn read_retry(r: &mut Reader<'_>) -> Retry {
    match r.get("retry") {
        None => Retry::Flag(true),
        Some(Value::Bool(b)) => Retry::Flag(*b),
        Some(v) => match read_uint(v) {
            Ok(n) => Retry::Count(n),
            Err(m) => {
                r.fault("retry", alloc::format!("{m}, or true / false"));
                Retry::Flag(true)
            }
        },
    }
}

/// Sidekiq's and Faktory's quartic formula: `c⁴ + 15` s plus jitter drawn
/// over `steps` seconds per retry, the 8.x or the 7.x way.
pub(crate) fn quartic(version: Version, steps: u64, n: u64, k: u64) -> Stages {
    let c = n.saturating_sub(1);
    // `c⁴` saturating, as `saturating_pow(4)`: a square of a saturated
    // square stays saturated.
    let c2 = mul(c, c);
    let base = mul(c2, c2).saturating_add(15);
    let jitter = match version {
        Version::V7 => mul(times_u(steps, k), n),
        Version::V8 => times_u(mul(steps, n), k),
    };
    let raw = secs(base);
    Stages {
        raw,
        capped: raw,
        delay: secs(base.saturating_add(jitter)),
    }
}

/// The nearest plain policy of Sidekiq and Faktory: OJS `polynomial` is
/// `I·n^C`, without the constant 15 s.
pub(crate) fn nearest_quartic() -> Nearest {
    Nearest::new(1_000, 4.0, MAX_MS, true, Strategy::Polynomial)
}

impl System for Options {
    const NAME: &'static str = "sidekiq";
    const OPTIONS: &'static [&'static str] =
        &["version", "max_retries", "retry", "dead", "kill", "discard"];

    fn read(r: &mut Reader<'_>) -> Self {
        let version = r.choice("version");
        let max_retries = r.uint("max_retries", 25, 0, MAX_MS);
        let retry = read_retry(r);
        Self {
            version,
            max_retries,
            retry,
            dead: r.boolean("dead", true),
            kill: r.patterns("kill", &[]),
            discard: r.patterns("discard", &[]),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        quartic(self.version, 10, n, k)
    }

    fn uses_sample(&self) -> bool {
        true
    }

    fn terms(&self) -> Terms {
        let to_morgue = if self.dead { DEAD } else { GONE };
        let terms = match self.retries() {
            // `retry: false`: no retry and no morgue (death handlers only).
            None => Terms::new(Some(0), GONE),
            Some(n) => Terms::new(Some(n), to_morgue),
        };
        let mut terms = terms
            .with_rules(&self.kill, to_morgue)
            .with_rules(&self.discard, GONE);
        terms.limit_first = true;
        terms
    }

    fn nearest(&self) -> Nearest {
        nearest_quartic()
    }
}
