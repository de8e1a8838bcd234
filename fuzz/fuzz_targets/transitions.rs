//! `decide`, `RetryState` and `Reservation` over arbitrary sequences of
//! failures, timeouts, heartbeats and clock moves. Invariants:
//!
//! * a retry's delay is in `[0, max_interval]` and `next_retry_at ≥ now`;
//! * never a retry at or after `max(max_attempts, 1)`;
//! * the error history never exceeds its bound, and the state reads back
//!   from its own JSON;
//! * a terminal state refuses further failures; a heartbeat never shortens
//!   the deadline and never revives an expired reservation;
//! * bad arguments (attempt 0, `now` past 9999) are typed errors.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use ojs_retry::{
    Action, Failure, HandlerCode, Heartbeat, JitterSource, JobError, MAX_INSTANT_MS, MAX_MS,
    OnExhaustion, PartialPolicy, Reservation, RetryState, Strategy,
};
use ojs_retry_fuzz::{check_decision, check_error, check_policy, check_state_round_trip};

#[derive(Arbitrary, Debug)]
enum Jitter {
    U(f64),
    Seed(u64),
    Key(String),
}

#[derive(Arbitrary, Debug)]
enum Event {
    Fail {
        error_type: u8,
        code: Option<u8>,
        dt: u32,
    },
    Timeout {
        dt: u32,
    },
    Heartbeat {
        dt: u32,
    },
    HeartbeatBack {
        back: u32,
    },
    Expired {
        dt: u32,
    },
    Jump {
        to: u64,
    },
    Decide {
        attempt: u64,
        timed_out: bool,
        code: Option<u8>,
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

const TYPES: [&str; 4] = [
    "auth.forbidden",
    "net.reset",
    "validation.x",
    "reservation.timeout",
];

fn code(c: u8) -> HandlerCode {
    match c % 4 {
        0 => HandlerCode::Retry,
        1 => HandlerCode::Discard,
        2 => HandlerCode::DeadLetter,
        _ => HandlerCode::Fail,
    }
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
    let mut reservation = match Reservation::new(state.attempt(), now, visibility) {
        Ok(r) => Some(r),
        Err(e) => {
            check_error(&e);
            assert!(visibility == 0 || now > MAX_INSTANT_MS);
            None
        }
    };
    let mut failures = 0usize;

    for ev in input.events.iter().take(64) {
        let before = state.clone();
        let result = match ev {
            Event::Fail {
                error_type,
                code: c,
                dt,
            } => {
                now = now.saturating_add(u64::from(*dt));
                let mut e = JobError::new(TYPES[usize::from(*error_type) % TYPES.len()], "m");
                e.code = c.map(code);
                Some((state.record_failure(&policy, &e, now, jitter), false))
            }
            Event::Timeout { dt } => {
                now = now.saturating_add(u64::from(*dt));
                Some((state.record_timeout(&policy, now, jitter), true))
            }
            Event::Heartbeat { dt } => {
                now = now.saturating_add(u64::from(*dt));
                None
            }
            Event::HeartbeatBack { back } => {
                now = now.saturating_sub(u64::from(*back));
                None
            }
            Event::Expired { dt } => {
                now = now.saturating_add(u64::from(*dt));
                if let Some(r) = &reservation {
                    match r.is_expired(now) {
                        Ok(x) => assert_eq!(x, now >= r.deadline()),
                        Err(e) => {
                            check_error(&e);
                            assert!(now > MAX_INSTANT_MS);
                        }
                    }
                }
                None
            }
            Event::Jump { to } => {
                now = *to;
                None
            }
            Event::Decide {
                attempt,
                timed_out,
                code: c,
            } => {
                let mut f = if *timed_out {
                    Failure::timeout(*attempt)
                } else {
                    Failure::new(*attempt)
                };
                f.code = c.map(code);
                match policy.decide(&f, now, jitter) {
                    Ok(d) => {
                        assert!(
                            *attempt >= 1
                                && *attempt <= MAX_MS
                                && now <= MAX_INSTANT_MS
                                && jitter_ok
                        );
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
        let Some((result, timed_out)) = result else {
            continue;
        };
        match result {
            Ok(d) => {
                assert!(
                    before.terminal().is_none(),
                    "a terminal state recorded a failure"
                );
                assert!(now <= MAX_INSTANT_MS && jitter_ok);
                assert_eq!(d.attempt, before.attempt());
                assert_eq!(d.timed_out, timed_out);
                check_decision(&policy, &d, now);
                failures += 1;
                if d.action == Action::Retry {
                    assert_eq!(state.attempt(), before.attempt() + 1);
                    assert_eq!(state.next_retry_at(), d.next_retry_at);
                    assert!(state.terminal().is_none());
                    // A new attempt gets a new reservation.
                    reservation = Reservation::new(state.attempt(), now, visibility).ok();
                } else {
                    assert_eq!(state.terminal(), Some(d.action));
                    assert_eq!(state.next_retry_at(), None);
                }
                assert_eq!(state.errors().len(), failures.min(state.history_limit()));
            }
            Err(e) => {
                check_error(&e);
                assert!(
                    before.terminal().is_some() || now > MAX_INSTANT_MS || !jitter_ok,
                    "{e}"
                );
                assert_eq!(state, before, "a failed call changed the state");
            }
        }
        check_state_round_trip(&state);
    }
});
