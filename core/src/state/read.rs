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
    state.errors = read_records(map.get("errors"), state.attempt, faults);
    state.limit = state.errors.len().max(MIN_HISTORY);
    state
}

fn read_records(v: Option<&Value>, last: u64, faults: &mut Faults) -> VecDeque<ErrorRecord> {
    let mut records = VecDeque::new();
    match v {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                if let Some(r) = read_record(item, &format!("errors[{i}]"), last, faults) {
                    records.push_back(r);
                }
            }
        }
        Some(other) => faults.push(
            "errors",
            format!("expected an array, found {}", other.describe()),
        ),
    }
    records
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
