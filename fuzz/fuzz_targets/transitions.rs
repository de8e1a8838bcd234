//! `decide`, `RetryState` and `Reservation` over arbitrary sequences of
//! failures (with or without a type, a handler code, a message and
//! details; at the state's next attempt or a wrong one), timeouts,
//! reservation expiries, heartbeats, clock moves (forwards and backwards),
//! history-limit changes and direct `decide` calls. Invariants:
//!
//! * a retry's delay is in `[0, max_interval]`, `next_retry_at =
//!   min(now + delay, 9999-12-31T23:59:59.999Z) ≥ now`, never a retry at or
//!   after `max(max_attempts, 1)`; a timeout before exhaustion always
//!   retries (§9.2);
//! * `record_failure` takes the failure `decide` takes and gives the same
//!   decision; afterwards `attempt()` is the attempt that failed and
//!   `next_attempt()` the one after it;
//! * the error history never holds (or writes) more records than its limit,
//!   keeps the newest, and the state's JSON reads back equal
//!   (`RetryState::from_json(&s.to_json(), limit) == s`; issue 20);
//! * a terminal state refuses failures, and a refused call leaves the state
//!   unchanged; a heartbeat never shortens a deadline or revives an expired
//!   reservation;
//! * bad arguments (attempt 0 or not the next one, `now` past 9999, `u`
//!   outside `[0, 1)`, a handler code on a timeout) are typed errors.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use ojs_retry::{
    Action, Failure, HandlerCode, Heartbeat, JitterSource, MAX_INSTANT_MS, MAX_MS, OnExhaustion,
    PartialPolicy, Reservation, RetryState, Strategy, Value,
};
use ojs_retry_fuzz::{check_decision, check_error, check_policy, check_state};

#[derive(Arbitrary, Debug)]
enum Jitter {
    U(f64),
    Seed(u64),
    Key(String),
}

#[derive(Arbitrary, Debug)]
enum Details {
    Int(u64),
    Float(f64),
    Text(String),
    List(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum Event {
    Fail {
        error_type: Option<u8>,
        code: Option<u8>,
        message: Option<String>,
        details: Option<Details>,
        timed_out: bool,
        /// Off the state's next attempt by this much (0: the right one).
        skew: Option<i8>,
        dt: u32,
    },
    Timeout {
        with_type: bool,
        dt: u32,
    },
    Expiry {
        dt: u32,
    },
    HeartbeatBack {
        back: u32,
    },
    Jump {
        to: u64,
    },
    Limit {
        limit: u8,
    },
    Decide {
        attempt: u64,
        timed_out: bool,
        code: Option<u8>,
        error_type: Option<u8>,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    max_attempts: u64,
    small_attempts: Option<u8>,
    initial_ms: u64,
    max_ms: u64,
    coefficient: f64,
    strategy: u8,
    jitter_on: bool,
    dead_letter: bool,
    patterns: Vec<String>,
    history_limit: u8,
    start: u64,
    visibility_ms: u32,
    jitter: Jitter,
    events: Vec<Event>,
}

const TYPES: [&str; 5] = [
    "auth.forbidden",
    "net.reset",
    "validation.x",
    "reservation.timeout",
    "worker.stalled",
];

fn code(c: u8) -> HandlerCode {
    match c % 4 {
        0 => HandlerCode::Retry,
        1 => HandlerCode::Discard,
        2 => HandlerCode::DeadLetter,
        _ => HandlerCode::Fail,
    }
}

/// Details of every kind, a non-finite number included (the engine
/// refuses it with a typed error).
fn details(d: &Details) -> Option<Value> {
    Some(match d {
        Details::Int(n) => Value::from(*n),
        Details::Float(x) => Value::from(*x),
        Details::Text(s) => Value::from(s.as_str()),
        Details::List(b) => Value::Array(b.iter().map(|x| Value::from(u64::from(*x))).collect()),
    })
}

fuzz_target!(|input: Input| {
    let strategy = match input.strategy % 4 {
        0 => Strategy::None,
        1 => Strategy::Linear,
        2 => Strategy::Exponential,
        _ => Strategy::Polynomial,
    };
    let max_attempts = input.small_attempts.map_or(input.max_attempts, u64::from);
    let built = PartialPolicy::new()
        .max_attempts(max_attempts)
        .initial_interval_ms(input.initial_ms % (MAX_MS + 2))
        .max_interval_ms(input.max_ms % (MAX_MS + 2))
        .backoff_coefficient(input.coefficient)
        .backoff_strategy(strategy)
        .jitter(input.jitter_on)
        .non_retryable_errors(input.patterns.clone())
        .on_exhaustion(if input.dead_letter {
            OnExhaustion::DeadLetter
        } else {
            OnExhaustion::Discard
        })
        .build();
    let policy = match built {
        Ok(p) => p,
        Err(e) => {
            check_error(&e);
            return;
        }
    };
    check_policy(&policy);
    let key;
    let jitter = match &input.jitter {
        Jitter::U(u) => JitterSource::Uniform(*u),
        Jitter::Seed(s) => JitterSource::Seed(*s),
        Jitter::Key(k) => {
            key = k.clone();
            JitterSource::Key(&key)
        }
    };
    let jitter_ok = !matches!(input.jitter, Jitter::U(u) if !(0.0..1.0).contains(&u));

    let limit = usize::from(input.history_limit);
    let mut state = match RetryState::new().with_history_limit(limit) {
        Ok(s) => s,
        Err(e) => {
            check_error(&e);
            assert!(limit < 10);
            RetryState::new()
        }
    };
    let mut now = input.start % (MAX_INSTANT_MS + 2);
    let visibility = u64::from(input.visibility_ms);
    let mut reservation = match Reservation::new(state.next_attempt(), now, visibility) {
        Ok(r) => Some(r),
        Err(e) => {
            check_error(&e);
            assert!(visibility == 0 || now > MAX_INSTANT_MS);
            None
        }
    };
    // The attempts the history should hold, oldest first.
    let mut recorded: Vec<u64> = Vec::new();

    for ev in input.events.iter().take(64) {
        let before = state.clone();
        let failure = match ev {
            Event::Fail {
                error_type,
                code: c,
                message,
                details: d,
                timed_out,
                skew,
                dt,
            } => {
                now = now.saturating_add(u64::from(*dt));
                let attempt = match skew {
                    Some(k) if *k != 0 => state.next_attempt().saturating_add_signed(i64::from(*k)),
                    _ => state.next_attempt(),
                };
                let mut f = if *timed_out {
                    Failure::timeout(attempt)
                } else {
                    Failure::new(attempt)
                };
                f.error_type = error_type.map(|t| TYPES[usize::from(t) % TYPES.len()].to_owned());
                f.code = c.map(code);
                f.message = message.clone();
                f.details = d.as_ref().and_then(details);
                Some(f)
            }
            Event::Timeout { with_type, dt } => {
                now = now.saturating_add(u64::from(*dt));
                let f = Failure::timeout(state.next_attempt());
                Some(if *with_type {
                    f.with_type("worker.stalled")
                } else {
                    f
                })
            }
            Event::Expiry { dt } => {
                now = now.saturating_add(u64::from(*dt));
                match &reservation {
                    Some(r) => match r.expiry(now) {
                        Ok(Some(f)) => {
                            assert!(now >= r.deadline());
                            assert_eq!(f, Failure::timeout(r.attempt()));
                            Some(f)
                        }
                        Ok(None) => {
                            assert!(now < r.deadline());
                            None
                        }
                        Err(e) => {
                            check_error(&e);
                            assert!(now > MAX_INSTANT_MS);
                            None
                        }
                    },
                    None => None,
                }
            }
            Event::HeartbeatBack { back } => {
                now = now.saturating_sub(u64::from(*back));
                None
            }
            Event::Jump { to } => {
                now = *to;
                None
            }
            Event::Limit { limit } => {
                let limit = usize::from(*limit);
                match state.clone().with_history_limit(limit) {
                    Ok(s) => {
                        assert!(limit >= 10);
                        assert_eq!(s.history_limit(), limit);
                        assert_eq!(s.errors().len(), state.errors().len().min(limit));
                        // The newest records are the ones kept.
                        let kept: Vec<_> = s.errors().cloned().collect();
                        let all: Vec<_> = state.errors().cloned().collect();
                        assert_eq!(kept.as_slice(), &all[all.len() - kept.len()..]);
                        let dropped = recorded.len() - kept.len();
                        recorded.drain(..dropped);
                        state = s;
                    }
                    Err(e) => {
                        check_error(&e);
                        assert!(limit < 10);
                        assert_eq!(e.field(), Some("history_limit"));
                    }
                }
                check_state(&state);
                None
            }
            Event::Decide {
                attempt,
                timed_out,
                code: c,
                error_type,
            } => {
                let mut f = if *timed_out {
                    Failure::timeout(*attempt)
                } else {
                    Failure::new(*attempt)
                };
                f.code = c.map(code);
                f.error_type = error_type.map(|t| TYPES[usize::from(t) % TYPES.len()].to_owned());
                match policy.decide(&f, now, jitter) {
                    Ok(d) => {
                        assert!(
                            *attempt >= 1
                                && *attempt <= MAX_MS
                                && now <= MAX_INSTANT_MS
                                && jitter_ok
                                && !(*timed_out && c.is_some())
                        );
                        assert_eq!(d.attempt, *attempt);
                        check_decision(&policy, &d, now);
                        if *timed_out && *attempt < policy.max_attempts().max(1) {
                            // §9.2: a timeout is always retryable before exhaustion.
                            assert_eq!(d.action, Action::Retry);
                        }
                    }
                    Err(e) => {
                        check_error(&e);
                        assert!(
                            *attempt == 0
                                || *attempt > MAX_MS
                                || now > MAX_INSTANT_MS
                                || !jitter_ok
                                || (*timed_out && c.is_some()),
                            "unexpected error {e}"
                        );
                    }
                }
                None
            }
        };
        // Heartbeats ride along with every event.
        if let Some(r) = reservation.as_mut() {
            let old = r.deadline();
            match r.heartbeat(now) {
                Ok(Heartbeat::Extended { deadline }) => {
                    assert!(now < old, "extended an expired reservation");
                    assert!(deadline >= old, "a heartbeat shortened the deadline");
                    assert_eq!(
                        deadline,
                        old.max(now.saturating_add(visibility).min(MAX_INSTANT_MS))
                    );
                }
                Ok(Heartbeat::Expired) => assert!(now >= old && r.deadline() == old),
                Err(e) => {
                    check_error(&e);
                    assert!(now > MAX_INSTANT_MS);
                }
            }
        }
        let Some(failure) = failure else {
            continue;
        };
        let decided = policy.decide(&failure, now, jitter);
        match state.record_failure(&policy, &failure, now, jitter) {
            Ok(d) => {
                assert!(
                    before.terminal().is_none(),
                    "a terminal state recorded a failure"
                );
                assert!(now <= MAX_INSTANT_MS && jitter_ok);
                assert_eq!(failure.attempt, before.next_attempt());
                assert_eq!(
                    decided.as_ref(),
                    Ok(&d),
                    "record_failure and decide disagree"
                );
                assert_eq!(d.attempt, failure.attempt);
                assert_eq!(d.timed_out, failure.timed_out);
                check_decision(&policy, &d, now);
                recorded.push(failure.attempt);
                assert_eq!(state.attempt(), failure.attempt);
                assert_eq!(state.next_attempt(), failure.attempt + 1);
                if d.action == Action::Retry {
                    assert_eq!(state.next_retry_at(), d.next_retry_at);
                    assert!(state.terminal().is_none());
                    // A new attempt gets a new reservation.
                    reservation = Reservation::new(state.next_attempt(), now, visibility).ok();
                } else {
                    assert_eq!(state.terminal(), Some(d.action));
                    assert_eq!(state.next_retry_at(), None);
                }
                let kept = recorded.len().min(state.history_limit());
                recorded.drain(..recorded.len() - kept);
                let newest: Vec<u64> = state.errors().map(|r| r.attempt).collect();
                assert_eq!(
                    newest, recorded,
                    "the history does not keep the newest records"
                );
                let last = state.errors().last().expect("a record");
                assert_eq!(last.timestamp_ms, now);
                assert_eq!(last.code, failure.code.unwrap_or(HandlerCode::Retry));
                assert_eq!(last.details, failure.details);
            }
            Err(e) => {
                check_error(&e);
                assert!(
                    before.terminal().is_some()
                        || failure.attempt != before.next_attempt()
                        || decided.is_err(),
                    "{e}"
                );
                assert_eq!(state, before, "a refused call changed the state");
            }
        }
        check_state(&state);
    }
});
