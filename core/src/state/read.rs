//! Reading a §10 state document: checked, not trusted. Every fault is
//! collected with its path; what a fault leaves unread keeps its default.

use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;

use super::{ErrorRecord, MIN_HISTORY, RetryState};
use crate::decision::Action;
use crate::describe::quote;
use crate::error::Faults;
use crate::failure::HandlerCode;
use crate::time;
use crate::value::{Map, Value, read_uint};

const STATE_FIELDS: [&str; 4] = ["attempt", "errors", "next_retry_at", "terminal"];
const RECORD_FIELDS: [&str; 6] = ["attempt", "type", "message", "code", "timestamp", "details"];

/// The state `v` describes; its faults go to `faults`.
pub(crate) fn read_state(v: &Value, faults: &mut Faults) -> RetryState {
    let mut state = RetryState::new();
    let Some(map) = v.as_object() else {
        faults.push(
            "",
            format!("expected a JSON object, found {}", v.describe()),
        );
        return state;
    };
    unknown_fields(map, &STATE_FIELDS, "", faults);
    match map.get("attempt") {
        Some(a) => match read_uint(a) {
            Ok(n) => state.attempt = n,
            Err(m) => faults.push("attempt", m),
        },
        None => faults.push(
            "attempt",
            "expected the attempt that last ran, found nothing",
        ),
    }
    state.next_retry_at = match map.get("next_retry_at") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => time::parse_ms(s)
            .map_err(|m| faults.push("next_retry_at", m))
            .ok(),
        Some(other) => {
            faults.push(
                "next_retry_at",
                format!(
                    "expected an RFC 3339 string or null, found {}",
                    other.describe()
                ),
            );
            None
        }
    };
    state.terminal = match map.get("terminal") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "discard" => Some(Action::Discard),
        Some(Value::String(s)) if s == "dead_letter" => Some(Action::DeadLetter),
        Some(other) => {
            faults.push(
                "terminal",
                format!(
                    "expected null, \"discard\" or \"dead_letter\", found {}",
                    other.describe()
                ),
            );
            None
        }
    };
    if state.terminal.is_some() && state.next_retry_at.is_some() {
        faults.push(
            "next_retry_at",
            "expected null for a terminal job (nothing is retried after it is discarded or dead-lettered)",
        );
    }
    state.errors = read_records(map.get("errors"), &state, faults);
    state.limit = state.errors.len().max(MIN_HISTORY);
    state
}

/// The history: each record read on its own, then checked against its
/// neighbours and the state (attempt order, where a terminal code may
/// stand). Timestamps come from workers' clocks, which may be skewed, so
/// they are not compared with each other or with `next_retry_at`.
fn read_records(
    v: Option<&Value>,
    state: &RetryState,
    faults: &mut Faults,
) -> VecDeque<ErrorRecord> {
    let mut records = VecDeque::new();
    match v {
        None => {}
        Some(Value::Array(items)) => {
            let mut previous: Option<u64> = None;
            let count = items.len();
            for (i, item) in items.iter().enumerate() {
                let at = format!("errors[{i}]");
                let Some(r) = read_record(item, &at, state.attempt, faults) else {
                    continue;
                };
                if let Some(p) = previous.filter(|p| r.attempt <= *p) {
                    let message = format!(
                        "expected records in attempt order, one per attempt: an attempt after {p}, found {}",
                        r.attempt
                    );
                    faults.push(format!("{at}.attempt"), message);
                }
                previous = Some(r.attempt);
                check_terminal_record(&r, &at, i.saturating_add(1) == count, state, faults);
                records.push_back(r);
            }
        }
        Some(other) => faults.push(
            "errors",
            format!("expected an array, found {}", other.describe()),
        ),
    }
    records
}

/// A record whose handler code ends the job (`DISCARD`, `FAIL`,
/// `DEAD_LETTER`) is the last one, of the state's last attempt, and the
/// state is terminal the same way.
fn check_terminal_record(
    r: &ErrorRecord,
    at: &str,
    is_last: bool,
    state: &RetryState,
    faults: &mut Faults,
) {
    let ends = match r.code {
        HandlerCode::DeadLetter => Action::DeadLetter,
        HandlerCode::Discard | HandlerCode::Fail => Action::Discard,
        HandlerCode::Retry => return,
    };
    let code = r.code.as_str();
    if !is_last || r.attempt != state.attempt {
        let message = format!(
            "expected a {code} record only as the last record, of the state's attempt {}",
            state.attempt
        );
        faults.push(format!("{at}.code"), message);
    } else if state.terminal != Some(ends) {
        let message = format!(
            "expected terminal \"{}\" after a {code} record, found {}",
            ends.as_str(),
            state.terminal.map_or("null", Action::as_str)
        );
        faults.push("terminal", message);
    }
}

fn read_record(v: &Value, at: &str, last: u64, faults: &mut Faults) -> Option<ErrorRecord> {
    let Some(map) = v.as_object() else {
        faults.push(at, format!("expected an object, found {}", v.describe()));
        return None;
    };
    let before = faults.0.len();
    unknown_fields(map, &RECORD_FIELDS, at, faults);
    let path = |field: &str| format!("{at}.{field}");
    let text = |field: &str, faults: &mut Faults| match map.get(field) {
        Some(Value::String(s)) => s.clone(),
        other => {
            let found = other.map_or_else(|| "nothing".into(), Value::describe);
            faults.push(path(field), format!("expected a string, found {found}"));
            String::new()
        }
    };
    let error_type = text("type", faults);
    if matches!(map.get("type"), Some(Value::String(t)) if t.is_empty()) {
        faults.push(path("type"), "expected a non-empty error type, found \"\"");
    }
    let message = text("message", faults);
    let timestamp = text("timestamp", faults);
    let attempt = match map.get("attempt").map(read_uint) {
        Some(Ok(n)) if (1..=last).contains(&n) => n,
        Some(Ok(n)) => {
            faults.push(
                path("attempt"),
                format!("expected an attempt between 1 and the state's attempt {last}, found {n}"),
            );
            0
        }
        Some(Err(m)) => {
            faults.push(path("attempt"), m);
            0
        }
        None => {
            faults.push(path("attempt"), "expected an attempt number, found nothing");
            0
        }
    };
    let code = match map.get("code") {
        None | Some(Value::Null) => HandlerCode::Retry,
        Some(Value::String(s)) => HandlerCode::parse(s)
            .map_err(|e| faults.push(path("code"), e.message()))
            .unwrap_or(HandlerCode::Retry),
        Some(other) => {
            faults.push(
                path("code"),
                format!("expected a handler code string, found {}", other.describe()),
            );
            HandlerCode::Retry
        }
    };
    let timestamp_ms = time::parse_ms(&timestamp)
        .map_err(|m| faults.push(path("timestamp"), m))
        .unwrap_or(0);
    let details = map.get("details").filter(|d| !d.is_null()).cloned();
    if details.as_ref().is_some_and(|d| !d.is_finite()) {
        faults.push(
            path("details"),
            "expected JSON data, found a non-finite number",
        );
    }
    (faults.0.len() == before).then_some(ErrorRecord {
        attempt,
        error_type,
        message,
        code,
        timestamp_ms,
        details,
    })
}

fn unknown_fields(map: &Map, known: &[&str], at: &str, faults: &mut Faults) {
    for key in map.keys().filter(|k| !known.contains(&k.as_str())) {
        let message = format!(
            "unknown field {}; expected {}",
            quote(key),
            known.join(", ")
        );
        if at.is_empty() {
            faults.push_key(key, message);
        } else {
            faults.push(format!("{at}.{key}"), message);
        }
    }
}
