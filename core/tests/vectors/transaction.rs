//! The `transaction` op: the failure transaction run once, its outcome as
//! the vector compares it.

use ojs_retry::Layer;
use ojs_retry::transaction::{FailureReport, Transaction};
use serde_json::{Value, json};

/// A carried document: `{name}` as a value, `{name}_json` as text.
fn carried(input: &Value, name: &str) -> Option<Layer<'static>> {
    if let Some(text) = input.get(format!("{name}_json")) {
        return Some(Layer::Json(text.as_str().unwrap().to_owned().into()));
    }
    input.get(name).map(Layer::read)
}

fn text(f: &Value, key: &str) -> Option<String> {
    f.get(key).map(|v| v.as_str().unwrap().to_owned())
}

pub fn run(input: &Value) -> Result<Value, ojs_retry::Error> {
    let defaults: Vec<Layer<'_>> = input["defaults"]
        .as_array()
        .unwrap()
        .iter()
        .map(Layer::read)
        .collect();
    let f = &input["failure"];
    let report = FailureReport {
        error_type: text(f, "type"),
        ancestors: f.get("ancestors").map(Layer::read),
        code: text(f, "code"),
        timed_out: f.get("timed_out").is_some_and(|t| t.as_bool().unwrap()),
        message: text(f, "message"),
        details: f.get("details").map(Layer::read),
    };
    let mut t = Transaction::new(
        &defaults,
        super::u(&input["attempt"]),
        input["key"].as_str().unwrap(),
        super::u(&input["now"]),
    );
    t.layer = carried(input, "layer");
    t.state = carried(input, "state");
    t.failure = report;
    t.queue = input.get("queue").and_then(Value::as_str).unwrap_or("");
    t.job = input.get("job").map(Layer::read);
    if let Some(l) = input.get("history_limit") {
        t = t.with_history_limit(usize::try_from(super::u(l)).unwrap())?;
    }
    let out = t.run();
    let kinds: Vec<&str> = out.notes.iter().map(|n| n.kind).collect();
    let dead_letter: Value = out
        .dead_letter
        .as_deref()
        .map_or(Value::Null, |t| serde_json::from_str(t).unwrap());
    Ok(json!({
        "decision": super::decision_json(&out.decision),
        "state": serde_json::from_str::<Value>(&out.state_json).unwrap(),
        "notes": kinds,
        "dead_letter": dead_letter,
    }))
}
