//! The engine's keys as JavaScript spells them.
//!
//! The core reads and writes every document in one spelling (`timed_out`,
//! as JSON, Python and Ruby do); the JS API spells multi-word keys in
//! camelCase (`timedOut`). The failure object is the one caller object this
//! binding hands to a core reader with such a key (the option bags are read
//! by [`crate::options`], results are written by [`crate::out`], both in
//! the JS spelling directly), so its renaming lives here: known keys go to
//! the core in its spelling, anything else (the core's own `timed_out`
//! among them) is an unknown key, and every fault names the key as the
//! caller spelled it.

use ojs_retry::{Error, ErrorCode, Failure, Fault, Map, Value};

use crate::fw::Core;

/// The keys of a failure object: as JavaScript spells them, and as the
/// engine does.
const FAILURE_KEYS: [(&str, &str); 7] = [
    ("attempt", "attempt"),
    ("type", "type"),
    ("ancestors", "ancestors"),
    ("code", "code"),
    ("timedOut", "timed_out"),
    ("message", "message"),
    ("details", "details"),
];

/// What an unknown key's fault lists.
const FAILURE_EXPECTED: &str = "attempt, type, ancestors, code, timedOut, message or details";

/// Reads a failure object the caller passed (JS spelling) with the core's
/// reader of failures, its faults in the caller's key order as the core
/// orders its own (`attempt` may be left out where `default_attempt` is
/// given).
pub(crate) fn failure(doc: Value, default_attempt: Option<u64>) -> Core<Failure> {
    let map = match doc {
        Value::Object(map) => map,
        other => return Ok(Failure::from_value(&other, default_attempt)?),
    };
    let order: Vec<String> = map.keys().cloned().collect();
    let at = |f: &Fault| {
        f.field
            .as_ref()
            .and_then(|k| order.iter().position(|o| o == k))
    };
    let mut engine = Map::new();
    let mut faults = Vec::new();
    for (k, v) in map {
        match FAILURE_KEYS.iter().find(|(js, _)| *js == k) {
            Some((_, name)) => {
                engine.insert((*name).to_owned(), v);
            }
            None => faults.push(Fault::unknown_field(&k, FAILURE_EXPECTED)),
        }
    }
    let mut ranked: Vec<(usize, Fault)> = faults
        .into_iter()
        .map(|f| (at(&f).unwrap_or(usize::MAX), f))
        .collect();
    let read = Failure::from_value(&Value::Object(engine), default_attempt);
    let code = match &read {
        Ok(_) if ranked.is_empty() => return Ok(read?),
        Ok(_) => ErrorCode::InvalidArgument,
        Err(e) => {
            // The core lists its faults in key order, then those about no
            // key the caller gave (a missing `attempt`): their rank never
            // decreases, so the sort keeps them in the core's order.
            let mut rank = 0;
            for f in e.faults().iter().cloned().map(js_spelling) {
                rank = at(&f).map_or(usize::MAX, |p| p.max(rank));
                ranked.push((rank, f));
            }
            e.code()
        }
    };
    ranked.sort_by_key(|(rank, _)| *rank);
    let faults = ranked.into_iter().map(|(_, f)| f).collect();
    Err(Error::from_faults(code, faults)
        .unwrap_or_else(|| Error::invalid_argument("", "expected a failure object"))
        .into())
}

/// A core fault about a failure key, naming the key as JavaScript spells
/// it (the path starts with the field).
fn js_spelling(mut f: Fault) -> Fault {
    let Some(field) = f.field.as_deref() else {
        return f;
    };
    let Some((js, engine)) = FAILURE_KEYS.iter().find(|(_, e)| *e == field) else {
        return f;
    };
    if js != engine {
        f.path = f
            .path
            .as_deref()
            .map(|p| format!("{js}{}", p.strip_prefix(engine).unwrap_or("")));
        f.field = Some((*js).to_owned());
    }
    f
}
