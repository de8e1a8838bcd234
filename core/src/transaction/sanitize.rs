//! What a queue passes at failure time, made recordable: each change is a
//! [`Note`] (see the table in the [module docs](super)).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{FailureReport, MAX_DETAILS_BYTES, Note, read_carried};
use crate::duration::MAX_MS;
use crate::error::{Error, quote};
use crate::failure::{Failure, HandlerCode};
use crate::limits::{MAX_ANCESTORS, MAX_ARRAY_LEN, MAX_STRING_BYTES};
use crate::policy::Layer;
use crate::state::{MIN_HISTORY, RetryState};
use crate::time::MAX_INSTANT_MS;
use crate::value::Value;

fn note(notes: &mut Vec<Note>, kind: &'static str, message: String) {
    notes.push(Note { kind, message });
}

/// The note for a refusal of `what`, naming the fault's code and field.
pub(super) fn refused_note(e: &Error, what: &str) -> Note {
    let field = e
        .path()
        .map_or_else(|| "the document".to_string(), |p| format!("field {p}"));
    Note {
        kind: "policy_refused",
        message: format!(
            "{what} was refused ({}, {field}): {}; the job is dead-lettered",
            e.code(),
            e.message()
        ),
    }
}

pub(super) fn attempt(n: u64, notes: &mut Vec<Note>) -> u64 {
    let fixed = n.clamp(1, MAX_MS);
    if fixed != n {
        note(
            notes,
            "attempt_out_of_range",
            format!(
                "the queue's attempt counter was {n}, outside 1 ..= {MAX_MS}; recorded as attempt {fixed}"
            ),
        );
    }
    fixed
}

pub(super) fn history_limit(limit: usize, notes: &mut Vec<Note>) -> usize {
    let fixed = limit.clamp(MIN_HISTORY, MAX_ARRAY_LEN);
    if fixed != limit {
        note(
            notes,
            "history_limit_out_of_range",
            format!(
                "the history limit was {limit}, outside {MIN_HISTORY} ..= {MAX_ARRAY_LEN}; {fixed} is used"
            ),
        );
    }
    fixed
}

pub(super) fn now(ms: u64, notes: &mut Vec<Note>) -> u64 {
    if ms > MAX_INSTANT_MS {
        note(
            notes,
            "now_out_of_range",
            format!(
                "now was {ms} ms, past {MAX_INSTANT_MS} (9999-12-31T23:59:59.999Z); that instant is used"
            ),
        );
        return MAX_INSTANT_MS;
    }
    ms
}

pub(super) fn key<'k>(key: &'k str, notes: &mut Vec<Note>) -> &'k str {
    if key.len() <= MAX_STRING_BYTES {
        return key;
    }
    let cut = floor_boundary(key, MAX_STRING_BYTES);
    note(
        notes,
        "key_truncated",
        format!(
            "the jitter key was {} bytes; its first {cut} bytes are used",
            key.len()
        ),
    );
    key.get(..cut).unwrap_or_default()
}

/// The largest char boundary of `s` at or below `at`.
fn floor_boundary(s: &str, at: usize) -> usize {
    (0..=at.min(s.len()))
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

/// `text` cut to at most `limit` bytes, ending in a marker that says how
/// many bytes were cut, or `None` when it fits.
pub(super) fn truncated(text: &str, limit: usize) -> Option<String> {
    if text.len() <= limit {
        return None;
    }
    // The marker is at most 40 bytes: " ... [" + 20 digits + " bytes truncated]".
    let keep = floor_boundary(text, limit.saturating_sub(43));
    let cut = text.len().saturating_sub(keep);
    Some(format!(
        "{} ... [{cut} bytes truncated]",
        text.get(..keep).unwrap_or_default()
    ))
}

fn text_field(
    value: Option<String>,
    kind: &'static str,
    what: &str,
    notes: &mut Vec<Note>,
) -> Option<String> {
    let value = value?;
    match truncated(&value, MAX_STRING_BYTES) {
        Some(short) => {
            note(
                notes,
                kind,
                format!(
                    "the {what} was {} bytes; it is kept truncated to {} bytes",
                    value.len(),
                    short.len()
                ),
            );
            Some(short)
        }
        None => Some(value),
    }
}

/// The failure of `attempt` as the engine records it.
pub(super) fn failure(report: FailureReport, attempt: u64, notes: &mut Vec<Note>) -> Failure {
    let mut f = Failure::new(attempt);
    f.timed_out = report.timed_out;
    f.error_type = text_field(report.error_type, "type_truncated", "error type", notes);
    if f.error_type.as_deref() == Some("") {
        note(
            notes,
            "type_empty",
            "the error type was empty; it is recorded as \"unknown\"".into(),
        );
        f.error_type = None;
    }
    f.ancestors = ancestors(report.ancestors, notes);
    f.message = text_field(report.message, "message_truncated", "message", notes);
    f.code = code(report.code, report.timed_out, notes);
    f.details = report.details.and_then(|d| details(d, notes));
    f
}

/// The ancestors a failure can carry: the nearest [`MAX_ANCESTORS`], each
/// a non-empty error type within the string limit; anything else given is
/// left out, with a note.
fn ancestors(doc: Option<Layer<'_>>, notes: &mut Vec<Note>) -> Vec<String> {
    let Some(doc) = doc else {
        return Vec::new();
    };
    let items = match read_carried(doc) {
        Ok(Value::Null) => return Vec::new(),
        Ok(Value::Array(items)) => items,
        Ok(other) => {
            note(
                notes,
                "ancestors_trimmed",
                format!(
                    "the ancestors were {}, not an array of error types; none are matched",
                    other.describe()
                ),
            );
            return Vec::new();
        }
        Err(m) => {
            note(
                notes,
                "ancestors_trimmed",
                format!("the ancestors could not be read ({m}); none are matched"),
            );
            return Vec::new();
        }
    };
    let given = items.len();
    let list: Vec<String> = items
        .into_iter()
        .take(MAX_ANCESTORS)
        .filter_map(|v| match v {
            Value::String(s) if !s.is_empty() && s.len() <= MAX_STRING_BYTES => Some(s),
            _ => None,
        })
        .collect();
    if list.len() != given {
        note(
            notes,
            "ancestors_trimmed",
            format!(
                "{given} ancestors were given; the {} nearest that are non-empty strings of at most {MAX_STRING_BYTES} bytes are matched",
                list.len()
            ),
        );
    }
    list
}

fn code(code: Option<String>, timed_out: bool, notes: &mut Vec<Note>) -> Option<HandlerCode> {
    let text = code?;
    let parsed = HandlerCode::parse(&text).ok();
    let why = match (parsed, timed_out) {
        (Some(c), false) => return Some(c),
        (Some(_), true) => {
            "a timed-out reservation carries no handler code (the handler never answered)"
        }
        (None, _) => "it is not one of RETRY, DISCARD, DEAD_LETTER, FAIL",
    };
    note(
        notes,
        "code_ignored",
        format!(
            "the handler code {} was ignored: {why}; the policy decides",
            quote(&text)
        ),
    );
    None
}

/// The details, if they can be kept: readable, finite, at most
/// [`MAX_DETAILS_BYTES`] and readable again where a state holds them
/// (three levels down: `{"errors": [{"details": …}]}`).
fn details(doc: Layer<'_>, notes: &mut Vec<Note>) -> Option<Value> {
    let why = match read_carried(doc) {
        Ok(Value::Null) => return None,
        Ok(v) if !v.is_finite() => "they hold a non-finite number".to_string(),
        Ok(v) => {
            let text = v.to_string();
            if text.len() > MAX_DETAILS_BYTES {
                format!(
                    "they are {} bytes as JSON, over {MAX_DETAILS_BYTES}",
                    text.len()
                )
            } else if let Err(m) = Value::from_json(&format!(r#"{{"e":[{{"d":{text}}}]}}"#)) {
                format!("a state could not hold them: {m}")
            } else {
                return Some(v);
            }
        }
        Err(m) => format!("they could not be read: {m}"),
    };
    note(
        notes,
        "details_dropped",
        format!("the failure's details were dropped: {why}"),
    );
    None
}

/// The job's state for recording `attempt`: the carried one, read and
/// rebased onto the queue's counter, or a new one.
pub(super) fn state(
    carried: Option<Layer<'_>>,
    attempt: u64,
    limit: usize,
    notes: &mut Vec<Note>,
) -> RetryState {
    let fresh = || {
        RetryState::new()
            .with_history_limit(limit)
            .unwrap_or_default()
    };
    let read = carried.map(|doc| {
        read_carried(doc).and_then(|v| {
            RetryState::from_value(&v, limit).map_err(|e| {
                let at = e.path().unwrap_or("the document");
                format!("{} at {at}: {}", e.code(), e.message())
            })
        })
    });
    let mut state = match read {
        None => fresh(),
        Some(Ok(s)) => s,
        Some(Err(m)) => {
            note(
                notes,
                "state_unreadable",
                format!(
                    "the job's state could not be read ({m}); a new state records this failure"
                ),
            );
            fresh()
        }
    };
    let carried_ok = state.attempt > 0 || !state.errors.is_empty() || state.terminal.is_some();
    if state.next_attempt() != attempt || state.terminal.is_some() {
        if carried_ok {
            let was = match state.terminal {
                Some(t) => format!("terminal ({}) after attempt {}", t.as_str(), state.attempt),
                None => format!("at attempt {}", state.attempt),
            };
            state.errors.retain(|r| r.attempt < attempt);
            note(
                notes,
                "state_rebased",
                format!(
                    "the job's state was {was}, the queue's counter says attempt {attempt} failed; rebased onto it, keeping {} earlier error(s)",
                    state.errors.len()
                ),
            );
        }
        state.attempt = attempt.saturating_sub(1);
        state.next_retry_at = None;
        state.terminal = None;
    }
    state
}

/// The job's payload for the dead-letter record, if it can be read and is
/// JSON (finite).
pub(super) fn payload(doc: Layer<'_>, notes: &mut Vec<Note>) -> Option<Value> {
    let why = match read_carried(doc) {
        Ok(v) if v.is_finite() => return Some(v),
        Ok(_) => "it holds a non-finite number".to_string(),
        Err(m) => format!("it could not be read: {m}"),
    };
    note(
        notes,
        "job_dropped",
        format!("the job's payload was left out of the dead-letter record: {why}"),
    );
    None
}
