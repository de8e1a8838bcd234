//! Policy, preset, state and failure documents as raw bytes: one or several
//! layers of JSON text split at 0x1E (the seeds are the conformance
//! vectors' documents). Every route must give a typed error or a policy
//! that satisfies `check_policy`, and the routes must agree:
//!
//! * `from_layers` of the raw bytes (`Layer::JsonBytes`) and, when every
//!   layer is UTF-8, `from_json_layers` of the text give the same answer;
//! * when every layer reads as a `PartialPolicy`, `from_partials` of them
//!   gives that answer too;
//! * each layer read through serde (`Value::read` over a
//!   `serde_json::Deserializer`, no trailing data) is readable exactly when
//!   the text reader reads it, as the same value (it never hangs: a
//!   streaming deserializer that fails inside an array stays there);
//! * the first layer as a §10 state reads back from its own JSON, never
//!   holding more records than its limit; as a failure it decides under
//!   the policy; as a preset configuration it builds a valid policy or a
//!   typed error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ojs_retry::{
    ErrorCode, Failure, Layer, PRESET_SYSTEMS, PartialPolicy, RetryPolicy, RetryState, Value,
};
use ojs_retry_fuzz::{
    check_decide, check_error, check_policy, check_policy_error, check_state, check_state_error,
};

fn check_result(r: &Result<RetryPolicy, ojs_retry::Error>) {
    match r {
        Ok(p) => check_policy(p),
        Err(e) => check_policy_error(e),
    }
}

fuzz_target!(|data: &[u8]| {
    let layers: Vec<&[u8]> = data.split(|b| *b == 0x1e).take(4).collect();

    let policy = RetryPolicy::from_layers(
        layers
            .iter()
            .map(|b| Layer::JsonBytes((*b).into()))
            .collect(),
    );
    check_result(&policy);

    let texts: Option<Vec<&str>> = layers.iter().map(|b| std::str::from_utf8(b).ok()).collect();
    if let Some(texts) = &texts {
        assert_eq!(
            RetryPolicy::from_json_layers(texts),
            policy,
            "bytes and text disagree on {texts:?}"
        );
        let partials: Result<Vec<PartialPolicy>, _> =
            texts.iter().map(|t| PartialPolicy::from_json(t)).collect();
        match partials {
            Ok(partials) => assert_eq!(
                RetryPolicy::from_partials(&partials),
                policy,
                "from_partials disagrees on {texts:?}"
            ),
            Err(e) => {
                check_policy_error(&e);
                assert!(
                    policy
                        .as_ref()
                        .map_or(true, |p| p.preset_system().is_some()),
                    "PartialPolicy refuses what from_json_layers accepts: {e}"
                );
            }
        }
    }

    // Each layer through serde: the same value, or unreadable by both.
    let mut values = Vec::new();
    for b in &layers {
        let text = Value::from_json_bytes(b);
        let mut de = serde_json::Deserializer::from_slice(b);
        let serde = Value::read(&mut de);
        if de.end().is_ok() {
            match (&text, &serde) {
                (Ok(t), Ok(s)) => assert_eq!(t, s, "serde and text read {b:?} differently"),
                (Err(_), Err(f)) => assert!(!f.message.is_empty()),
                _ => panic!("serde and text disagree on {b:?}: {text:?} / {serde:?}"),
            }
        }
        if let Ok(v) = text {
            values.push(v);
        }
    }
    if values.len() == layers.len() {
        assert_eq!(
            RetryPolicy::from_values(&values),
            policy,
            "from_values disagrees"
        );
    }

    let Some(first) = layers.first() else { return };
    if let Ok(text) = std::str::from_utf8(first) {
        match RetryState::from_json(text, 10) {
            Ok(s) => check_state(&s),
            Err(e) => check_state_error(&e),
        }
    }
    let Ok(doc) = Value::from_json_bytes(first) else {
        return;
    };
    match RetryState::from_value(&doc, 20) {
        Ok(s) => check_state(&s),
        Err(e) => check_state_error(&e),
    }
    match Failure::from_value(&doc, Some(1)) {
        Ok(f) => {
            for p in [Some(RetryPolicy::default()), policy.as_ref().ok().cloned()]
                .iter()
                .flatten()
            {
                check_decide(p, &f);
            }
        }
        Err(e) => {
            check_error(&e);
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
        }
    }
    // As a preset configuration: of the system it names, or one picked by
    // the input's length.
    let system = match doc.get("system").and_then(Value::as_str) {
        Some(s) => s.to_owned(),
        None => PRESET_SYSTEMS[data.len() % PRESET_SYSTEMS.len()].to_owned(),
    };
    let preset = RetryPolicy::preset(&system, &doc);
    check_result(&preset);
    if let Ok(text) = std::str::from_utf8(first) {
        assert_eq!(RetryPolicy::preset_json(&system, text), preset);
    }
});
