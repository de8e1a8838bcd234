//! Documents as arbitrary serde values: 1–3 `serde_json::Value`s built by
//! `arbitrary` (biased towards the policy's, the state's, the failure's and
//! the presets' field names and near-valid values), fed to the engine
//! through serde — `serde_json::Value` is itself a `Deserializer`, as a
//! JS object or a Python dict is through its binding's bridge — and as
//! their JSON text. Invariants:
//!
//! * `from_layers` of `Layer::read(&value)`s, `from_deserializer(&value)`
//!   (one layer), `from_values` and `from_json_layers` of the text all
//!   give the same policy or the same faults; a policy satisfies
//!   `check_policy` and reads back from its own JSON, an error is
//!   `validation.retry_policy_invalid`;
//! * the first value as a §10 state (`RetryState::from_deserializer`)
//!   agrees with its text and reads back from its own JSON; as a failure
//!   (`Failure::from_deserializer`) it agrees with its text and decides;
//!   as a preset configuration (`RetryPolicy::preset`) it agrees with
//!   `preset_json` of its text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ojs_retry::{ErrorCode, Failure, Layer, PRESET_SYSTEMS, RetryPolicy, RetryState, Value};
use ojs_retry_fuzz::{
    Doc, check_decide, check_error, check_policy, check_policy_error, check_state,
    check_state_error,
};

fuzz_target!(|input: (Doc, Option<Doc>, Option<Doc>, u8)| {
    let (a, b, c, pick) = input;
    let docs: Vec<serde_json::Value> = [Some(a), b, c].into_iter().flatten().map(|d| d.0).collect();

    let from_serde = RetryPolicy::from_layers(docs.iter().map(Layer::read).collect());
    match &from_serde {
        Ok(p) => check_policy(p),
        Err(e) => check_policy_error(e),
    }
    if let [one] = docs.as_slice() {
        assert_eq!(
            RetryPolicy::from_deserializer(one),
            from_serde,
            "from_deserializer and from_layers disagree on {one}"
        );
    }
    // The same documents as the engine's values and as text give the same
    // policy or the same faults.
    let values: Vec<Value> = docs
        .iter()
        .map(|d| Value::read(d).unwrap_or_else(|f| panic!("{d} unreadable: {f:?}")))
        .collect();
    assert_eq!(
        RetryPolicy::from_values(&values),
        from_serde,
        "from_values disagrees"
    );
    // Everything the engine writes reads back: a policy from its own JSON.
    if let Ok(p) = &from_serde {
        assert_eq!(
            RetryPolicy::from_json(&p.to_json()).as_ref(),
            Ok(p),
            "the policy does not read back"
        );
    }
    let texts: Vec<String> = docs.iter().map(|v| v.to_string()).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    assert_eq!(
        RetryPolicy::from_json_layers(&refs),
        from_serde,
        "value and text disagree on {texts:?}"
    );
    for (v, t) in values.iter().zip(&texts) {
        assert_eq!(
            Value::from_json(t).as_ref(),
            Ok(v),
            "{t} reads back different"
        );
        assert_eq!(
            &v.to_string(),
            t,
            "the engine's value writes {t} differently"
        );
    }

    let (doc, value, text) = (&docs[0], &values[0], texts[0].as_str());
    let state = RetryState::from_deserializer(doc, 10);
    assert_eq!(
        state,
        RetryState::from_json(text, 10),
        "state: value and text disagree on {text}"
    );
    match state {
        Ok(s) => check_state(&s),
        Err(e) => check_state_error(&e),
    }

    let default_attempt = (pick & 2 == 0).then_some(u64::from(pick >> 2));
    let failure = Failure::from_deserializer(doc, default_attempt);
    assert_eq!(
        failure,
        Failure::from_value(value, default_attempt),
        "failure: value and text disagree"
    );
    match failure {
        Ok(f) => {
            check_decide(&from_serde.unwrap_or_default(), &f);
        }
        Err(e) => {
            check_error(&e);
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
        }
    }

    let system = match value.get("system").and_then(Value::as_str) {
        Some(s) => s.to_owned(),
        None => PRESET_SYSTEMS[usize::from(pick) % PRESET_SYSTEMS.len()].to_owned(),
    };
    let preset = RetryPolicy::preset(&system, value);
    match &preset {
        Ok(p) => check_policy(p),
        Err(e) => check_policy_error(e),
    }
    assert_eq!(
        RetryPolicy::preset_json(&system, text),
        preset,
        "preset: value and text disagree"
    );
});
