//! Policy documents as structured input: arbitrary JSON values (biased
//! towards the policy's field names and near-valid values), one to three
//! layers, through `from_values`, `PartialPolicy::from_value` and the state
//! reader. Same invariants as `policy_bytes`; additionally, the value and
//! its JSON text must give the same answer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ojs_retry::{ErrorCode, RetryPolicy, RetryState};
use ojs_retry_fuzz::{Doc, check_error, check_policy, check_policy_error, check_state_round_trip};

fuzz_target!(|docs: (Doc, Option<Doc>, Option<Doc>)| {
    let (a, b, c) = docs;
    let values: Vec<serde_json::Value> =
        [Some(a), b, c].into_iter().flatten().map(|d| d.0).collect();
    let from_values = RetryPolicy::from_values(&values);
    match &from_values {
        Ok(p) => check_policy(p),
        Err(e) => check_policy_error(e),
    }
    // The same documents as text give the same policy or the same faults.
    let texts: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let from_text = RetryPolicy::from_json_layers(&refs);
    assert_eq!(
        from_values, from_text,
        "value and text disagree on {texts:?}"
    );

    if let Some(v) = values.first() {
        match RetryState::from_value(v, 10) {
            Ok(s) => check_state_round_trip(&s),
            Err(e) => {
                check_error(&e);
                assert!(matches!(e.code(), ErrorCode::StateInvalid), "{e}");
            }
        }
    }
});
