//! The failure transaction over arbitrary chains of failures: whatever the
//! queue passes (defaults and a carried layer as arbitrary text, the carried
//! state as the previous outcome's text or arbitrary bytes, any attempt
//! counter, raw failure fields of any size, any key, any `now`), `run`
//! returns an outcome, and
//!
//! * everything it writes reads back: the state text is at most 1 MiB and
//!   `RetryState::from_json(&text, limit)` gives the same state, whose JSON
//!   is the same text; the policy's JSON gives the same policy;
//! * a dead-letter record exists exactly when the action is `dead_letter`,
//!   and is JSON;
//! * a retry carries a delay and `next_retry_at`; a terminal outcome none.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use ojs_retry::transaction::{FailureReport, MAX_STATE_BYTES, Transaction};
use ojs_retry::{Action, Layer, RetryPolicy, RetryState};

/// A text, possibly repeated past every string limit.
#[derive(Arbitrary, Debug)]
struct Text {
    piece: String,
    times: u16,
}

impl Text {
    fn make(&self) -> String {
        self.piece.repeat(usize::from(self.times % 2048).max(1))
    }
}

#[derive(Arbitrary, Debug)]
struct Step {
    layer: Option<String>,
    /// Replaces the carried state with these bytes.
    corrupt: Option<Vec<u8>>,
    attempt_skew: i8,
    error_type: Option<Text>,
    code: Option<String>,
    timed_out: bool,
    message: Option<Text>,
    details: Option<String>,
    /// The ancestors as JSON text (often not an array of strings).
    ancestors: Option<String>,
    now: u64,
}

#[derive(Arbitrary, Debug)]
struct Input {
    defaults: Vec<String>,
    key: Text,
    history_limit: u8,
    steps: Vec<Step>,
}

fuzz_target!(|input: Input| {
    let defaults: Vec<Layer<'_>> = input
        .defaults
        .iter()
        .take(3)
        .map(|d| Layer::Json(d.as_str().into()))
        .collect();
    let key = input.key.make();
    let limit = usize::from(input.history_limit);
    let mut carried: Option<Vec<u8>> = None;
    let mut attempt: u64 = 0;
    for step in input.steps.iter().take(16) {
        attempt = attempt
            .saturating_add_signed(i64::from(step.attempt_skew % 3))
            .saturating_add(1);
        let mut t = Transaction::new(&defaults, attempt, &key, step.now);
        t.history_limit = limit;
        t.layer = step.layer.as_deref().map(|l| Layer::Json(l.into()));
        t.state = step
            .corrupt
            .clone()
            .or_else(|| carried.take())
            .map(|b| Layer::JsonBytes(b.into()));
        t.failure = FailureReport {
            error_type: step.error_type.as_ref().map(Text::make),
            ancestors: step
                .ancestors
                .as_deref()
                .map(|a| Layer::Json(a.to_owned().into())),
            code: step.code.clone(),
            timed_out: step.timed_out,
            message: step.message.as_ref().map(Text::make),
            details: step
                .details
                .as_deref()
                .map(|d| Layer::Json(d.to_owned().into())),
        };
        let out = t.run();
        assert!(
            out.state_json.len() <= MAX_STATE_BYTES,
            "{} bytes",
            out.state_json.len()
        );
        let back =
            RetryState::from_json(&out.state_json, limit.max(10)).expect("the state reads back");
        assert_eq!(back, out.state);
        assert_eq!(back.to_json(), out.state_json);
        assert_eq!(
            RetryPolicy::from_json(&out.policy.to_json()).expect("the policy reads back"),
            *out.policy
        );
        let d = &out.decision;
        assert_eq!(out.dead_letter.is_some(), d.action == Action::DeadLetter);
        if let Some(record) = &out.dead_letter {
            serde_json::from_str::<serde_json::Value>(record).expect("the record is JSON");
        }
        assert_eq!(
            d.action == Action::Retry,
            d.delay_ms.is_some() && d.next_retry_at.is_some()
        );
        assert_eq!(out.state.attempt(), d.attempt);
        carried = Some(out.state_json.into_bytes());
    }
});
