//! BullMQ: taskforcesh/bullmq `src/classes/backoffs.ts`,
//! `Job.shouldRetryJob` in `src/classes/job.ts`, 6.7.0.
//!
//! `attempts` counts every attempt; `backoff` is a fixed delay in ms or
//! `{type: "fixed" | "exponential", delay, jitter}`: exponential
//! `Math.round(2^(attemptsMade − 1) · delay)`, jitter
//! `floor(random · d · jitter + d · (1 − jitter))`. An exhausted job or an
//! `UnrecoverableError` goes to the failed set (dead_letter).
//!
//! `runtime: "python"` is BullMQ for Python (PyPI `bullmq`) 3.4.4,
//! `bullmq/backoffs.py` and `Job.moveToFailed` in `bullmq/job.py`: the same
//! limit and strategies, but no jitter (the key is ignored) and the
//! exponential delay rounded by Python's `round`, ties to even (2.5 → 2,
//! 0.5 → 0: an immediate retry).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::backoff::Strategy;
use crate::duration::MAX_MS;
use crate::error::quote;
use crate::value::{Map, Value};

use super::math::{Stages, f, trunc_ms, unit};
use super::read::{Reader, choice, in_range};
use super::system::{DEAD, Nearest, System, Terms, attempts};

choice! {
    /// Which BullMQ runs the job.
    Runtime {
        /// BullMQ for Node (`Math.round`, jitter).
        Node = "node",
        /// BullMQ for Python (`round`, ties to even; no jitter).
        Python = "python",
    }
}

choice! {
    /// A built-in backoff strategy (custom strategies are code).
    Kind {
        /// The same delay every time.
        Fixed = "fixed",
        /// `2^(attemptsMade − 1) · delay`.
        Exponential = "exponential",
    }
}

/// `{type, delay, jitter}` (keys in canonical order).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Backoff {
    /// In ms.
    delay: f64,
    /// The fraction of the delay that is random, 0 to 1.
    jitter: f64,
    #[serde(rename = "type")]
    kind: Kind,
}

/// A job's retry options (keys in canonical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Options {
    /// Every attempt, the first included.
    attempts: u64,
    /// `None` (`null`): retry at once.
    backoff: Option<Backoff>,
    runtime: Runtime,
    system: &'static str,
    /// Error types that go to the failed set at once.
    unrecoverable: Vec<String>,
}

/// The shape `backoff` may take, for its faults.
const EXPECTED: &str = "expected a number of ms or {\"type\": \"fixed\" | \"exponential\", \"delay\": ms, \"jitter\": 0..1}";

/// `backoff`: `null`, a number (`Backoffs.normalize`: a fixed delay) or an
/// object.
fn read_backoff(r: &mut Reader<'_>) -> Option<Backoff> {
    match r.get("backoff") {
        None | Some(Value::Null) => None,
        Some(v) if v.is_number() => match in_range(v, 0.0, 9.0e15) {
            Some(delay) => Some(Backoff {
                delay,
                jitter: 0.0,
                kind: Kind::Fixed,
            }),
            None => {
                r.bad("backoff", EXPECTED, v);
                None
            }
        },
        Some(Value::Object(m)) => Some(read_object(r, m)),
        Some(v) => {
            r.bad("backoff", EXPECTED, v);
            None
        }
    }
}

/// `{type, delay, jitter}`, every fault at `preset.backoff.<key>`.
fn read_object(r: &mut Reader<'_>, m: &Map) -> Backoff {
    let kind = match m.get("type").and_then(Value::as_str) {
        Some("fixed") => Kind::Fixed,
        Some("exponential") => Kind::Exponential,
        _ => {
            let found = m
                .get("type")
                .map_or_else(|| "nothing".into(), Value::describe);
            r.fault(
                "backoff.type",
                format!("expected \"fixed\" or \"exponential\" (custom strategies are code), found {found}"),
            );
            Kind::Fixed
        }
    };
    let mut number = |key: &str, max: f64, expected: &str| match m.get(key) {
        None => 0.0,
        Some(v) => in_range(v, 0.0, max).unwrap_or_else(|| {
            r.bad(&format!("backoff.{key}"), expected, v);
            0.0
        }),
    };
    let delay = number("delay", 9.0e15, "expected a number of ms");
    let jitter = number("jitter", 1.0, "expected a number between 0 and 1");
    for k in m.keys() {
        if !["type", "delay", "jitter"].contains(&k.as_str()) {
            r.fault(
                &format!("backoff.{k}"),
                format!("unknown field {}; expected type, delay, jitter", quote(k)),
            );
        }
    }
    Backoff {
        delay,
        jitter,
        kind,
    }
}

/// JavaScript's `Math.round` for non-negative finite values (ties up).
fn js_round(x: f64) -> f64 {
    if x >= 4_503_599_627_370_496.0 {
        x // 2^52 and above are integers already
    } else {
        libm::floor(x + 0.5)
    }
}

impl System for Options {
    const NAME: &'static str = "bullmq";
    const OPTIONS: &'static [&'static str] = &["runtime", "attempts", "backoff", "unrecoverable"];

    fn read(r: &mut Reader<'_>) -> Self {
        Self {
            runtime: r.choice("runtime"),
            attempts: r.uint("attempts", 1, 0, MAX_MS),
            backoff: read_backoff(r),
            unrecoverable: r.patterns("unrecoverable", &["UnrecoverableError"]),
            system: Self::NAME,
        }
    }

    fn stages(&self, n: u64, k: u64) -> Stages {
        // `Backoffs.calculate`: no backoff retries at once.
        let Some(b) = self.backoff else {
            return Stages::fixed(0);
        };
        let power = libm::pow(2.0, f(n.saturating_sub(1)));
        let top = match (b.kind, self.runtime) {
            (Kind::Fixed, _) => b.delay,
            (Kind::Exponential, Runtime::Node) => js_round(power * b.delay),
            // Python's `round`: to nearest, ties to even.
            (Kind::Exponential, Runtime::Python) => libm::rint(power * b.delay),
        };
        let d = if self.jittered() {
            let min_delay = top * (1.0 - b.jitter);
            libm::floor(unit(k) * top * b.jitter + min_delay)
        } else {
            top
        };
        let raw = trunc_ms(top);
        Stages {
            raw,
            capped: raw,
            delay: trunc_ms(d),
        }
    }

    fn uses_sample(&self) -> bool {
        self.jittered()
    }

    fn terms(&self) -> Terms {
        Terms::new(attempts(self.attempts), DEAD).with_rules(&self.unrecoverable, DEAD)
    }

    fn nearest(&self) -> Nearest {
        let (kind, delay) = self
            .backoff
            .map_or((None, 0.0), |b| (Some(b.kind), b.delay));
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let d = delay as u64;
        if kind == Some(Kind::Exponential) {
            Nearest::new(d, 2.0, MAX_MS, self.jittered(), Strategy::Exponential)
        } else {
            Nearest::new(d, 2.0, d, self.jittered(), Strategy::None)
        }
    }
}

impl Options {
    /// Whether the delay is jittered: BullMQ for Python has no jitter.
    fn jittered(&self) -> bool {
        self.runtime == Runtime::Node && self.backoff.is_some_and(|b| b.jitter > 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::js_round;

    #[test]
    fn js_round_ties_up() {
        assert_eq!(js_round(2.5), 3.0);
        assert_eq!(js_round(2.4999), 2.0);
        assert_eq!(js_round(9_007_199_254_740_991.0), 9_007_199_254_740_991.0);
    }
}
