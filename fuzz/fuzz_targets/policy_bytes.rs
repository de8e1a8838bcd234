//! Policy (and state) documents as raw bytes: one or several layers of JSON
//! text. Never a panic; an accepted policy satisfies every invariant
//! (`check_policy`); a rejected one is a `validation.retry_policy_invalid`
//! error with its faults.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ojs_retry::{ErrorCode, PartialPolicy, RetryPolicy, RetryState};
use ojs_retry_fuzz::{check_error, check_policy, check_policy_error, check_state_round_trip};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // A 0x1E (record separator) splits the input into layers.
    let layers: Vec<&str> = text.split('\u{1e}').collect();
    match RetryPolicy::from_json_layers(&layers) {
        Ok(p) => check_policy(&p),
        Err(e) => check_policy_error(&e),
    }
    if let Some(first) = layers.first() {
        match PartialPolicy::from_json(first) {
            Ok(partial) => {
                if let Ok(p) = partial.build() {
                    check_policy(&p);
                }
            }
            Err(e) => check_policy_error(&e),
        }
        match RetryState::from_json(first, 10) {
            Ok(s) => check_state_round_trip(&s),
            Err(e) => {
                check_error(&e);
                assert_eq!(e.code(), ErrorCode::StateInvalid, "{e}");
            }
        }
    }
});
