use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;

use super::{FailureReport, MAX_STATE_BYTES, Outcome, Transaction};
use crate::limits::MAX_STRING_BYTES;
use crate::{Action, Layer, RetryPolicy, RetryState, Value};

const NOW: u64 = 1_770_892_265_000;

fn kinds(out: &Outcome) -> Vec<&'static str> {
    out.notes.iter().map(|n| n.kind).collect()
}

/// The invariant: what the transaction writes, it reads back.
fn assert_reads_back(out: &Outcome, limit: usize) {
    assert!(
        out.state_json.len() <= MAX_STATE_BYTES,
        "{} bytes",
        out.state_json.len()
    );
    let back = RetryState::from_json(&out.state_json, limit).unwrap();
    assert_eq!(back, out.state);
    assert_eq!(back.to_json(), out.state_json);
    let policy = RetryPolicy::from_json(&out.policy.to_json()).unwrap();
    assert_eq!(policy, *out.policy);
}

fn fail<'a>(
    defaults: &'a [Layer<'a>],
    attempt: u64,
    report: FailureReport,
    state: Option<String>,
) -> Outcome<'a> {
    let mut t = Transaction::new(defaults, attempt, "job-1", NOW);
    t.failure = report;
    t.state = state.map(|s| Layer::Json(s.into()));
    let out = t.run();
    assert_reads_back(&out, 10);
    out
}

fn message(m: String) -> FailureReport {
    FailureReport {
        message: Some(m),
        error_type: Some("net.reset".into()),
        ..FailureReport::default()
    }
}

#[test]
fn eleven_failures_with_maximal_control_character_messages_stay_readable() {
    let defaults = [Layer::Json(r#"{"max_attempts": 100}"#.into())];
    let mut state = None;
    for attempt in 1..=11 {
        let out = fail(
            &defaults,
            attempt,
            message("\u{1}".repeat(70_000)),
            state.take(),
        );
        assert_eq!(out.decision.action, Action::Retry);
        assert!(kinds(&out).contains(&"message_truncated"));
        state = Some(out.state_json);
    }
    let s = RetryState::from_json(state.as_deref().unwrap(), 10).unwrap();
    assert_eq!((s.attempt(), s.errors().len()), (11, 10));
}

#[test]
fn a_layer_the_defaults_refuse_is_dead_lettered_with_the_fault() {
    let defaults = [Layer::Json(r#"{"max_interval": "PT3S"}"#.into())];
    let mut t = Transaction::new(&defaults, 1, "job-1", NOW);
    t.layer = Some(Layer::Json(r#"{"initial_interval": "PT5S"}"#.into()));
    let out = t.run();
    assert_eq!(out.decision.action, Action::DeadLetter);
    assert_eq!(out.decision.reason.as_str(), "policy_invalid");
    assert_eq!(kinds(&out), ["policy_refused"]);
    assert!(
        out.notes[0]
            .message
            .contains("validation.retry_policy_invalid"),
        "{}",
        out.notes[0].message
    );
    assert_eq!(out.state.terminal(), Some(Action::DeadLetter));
    let record: serde_json::Value =
        serde_json::from_str(out.dead_letter.as_deref().unwrap()).unwrap();
    assert_eq!(record["policy"]["max_interval"], "PT3S");
    assert_eq!(record["retry_state"]["terminal"], "dead_letter");
    assert_reads_back(&out, 10);
}

#[test]
fn a_state_behind_or_ahead_of_the_counter_is_rebased() {
    let defaults = [Layer::Json(
        r#"{"max_attempts": 10, "jitter": false}"#.into(),
    )];
    let two = fail(
        &defaults,
        2,
        message("b".into()),
        Some(fail(&defaults, 1, message("a".into()), None).state_json),
    );
    // Behind: the queue ran attempt 5 (re-enqueued by hand).
    let out = fail(
        &defaults,
        5,
        message("e".into()),
        Some(two.state_json.clone()),
    );
    assert_eq!(kinds(&out), ["state_rebased"]);
    assert_eq!(
        out.state.errors().map(|e| e.attempt).collect::<Vec<_>>(),
        [1, 2, 5]
    );
    // Ahead: attempt 2 is redelivered; its record is replaced, same delay.
    let again = fail(
        &defaults,
        2,
        message("b".into()),
        Some(two.state_json.clone()),
    );
    assert_eq!(again.decision, two.decision);
    assert_eq!(again.state.errors().len(), 2);
}

#[test]
fn an_unreadable_state_starts_over_with_a_note() {
    let out = fail(&[], 2, FailureReport::default(), Some("{not json".into()));
    assert_eq!(kinds(&out), ["state_unreadable"]);
    assert_eq!(out.state.attempt(), 2);
}

#[test]
fn a_built_policy_decides_as_its_document_does() {
    let p = RetryPolicy::from_json(r#"{"max_attempts": 2, "jitter": false}"#).unwrap();
    let text = [Layer::Json(p.to_json().into())];
    let job = || Some(Layer::Json(r#"{"max_attempts": 4}"#.into()));
    for attempt in [1, 2] {
        for layer in [None, job()] {
            let mut built = Transaction::new(&[], attempt, "k", 0);
            built.built = Some(&p);
            built.layer = layer.clone();
            let mut read = Transaction::new(&text, attempt, "k", 0);
            read.layer = layer;
            let (b, r) = (built.run(), read.run());
            assert_eq!(
                (b.decision, b.state_json, b.policy),
                (r.decision, r.state_json, r.policy)
            );
        }
    }
}

#[test]
fn unusable_ancestors_are_noted_never_refused() {
    for (doc, kept) in [
        (r#""OSError""#, 0),
        (r#"["OSError", 1, "", "Exception"]"#, 2),
        ("[1e999", 0),
    ] {
        let report = FailureReport {
            error_type: Some("ConnectionError".into()),
            ancestors: Some(Layer::Json(doc.into())),
            ..FailureReport::default()
        };
        let out = fail(&[], 1, report, None);
        assert_eq!(kinds(&out), ["ancestors_trimmed"], "{doc}");
        assert_eq!(out.decision.action, Action::Retry, "{doc}");
        let note = &out.notes[0].message;
        assert!(
            note.contains(if kept == 0 { "none" } else { "the 2 nearest" }),
            "{note}"
        );
    }
}

#[test]
fn raw_failure_fields_are_made_recordable() {
    let report = FailureReport {
        error_type: Some(String::new()),
        code: Some("RETYR".into()),
        details: Some(Layer::Json("[1, {\"a\": 1e999}]".into())),
        ..FailureReport::default()
    };
    let out = fail(&[], 1, report, None);
    assert_eq!(
        kinds(&out),
        ["type_empty", "code_ignored", "details_dropped"]
    );
    let report = FailureReport {
        code: Some("DISCARD".into()),
        timed_out: true,
        ..FailureReport::default()
    };
    let out = fail(&[], 1, report, None);
    assert_eq!(
        (out.decision.action, kinds(&out)),
        (Action::Retry, vec!["code_ignored"])
    );
}

#[test]
fn out_of_range_counters_keys_and_instants_are_noted() {
    let long_key = "k".repeat(MAX_STRING_BYTES + 1);
    let mut t = Transaction::new(&[], 0, &long_key, u64::MAX);
    t.history_limit = 3;
    let out = t.run();
    assert_eq!(
        kinds(&out),
        [
            "attempt_out_of_range",
            "now_out_of_range",
            "key_truncated",
            "history_limit_out_of_range"
        ]
    );
    assert_eq!(out.state.history_limit(), 10);
    assert_reads_back(&out, 10);
    let mut t = Transaction::new(&[], 1, "k", 0);
    t.history_limit = usize::MAX;
    let out = t.run();
    assert_eq!(kinds(&out), ["history_limit_out_of_range"]);
    assert_eq!(out.state.history_limit(), 10_000);
    assert_reads_back(&out, 10_000);
}

#[test]
fn deep_details_that_a_state_could_not_hold_are_dropped() {
    let deep = format!("{}{}", "[".repeat(63), "]".repeat(63));
    assert!(Value::from_json(&deep).is_ok());
    let report = FailureReport {
        details: Some(Layer::Json(deep.into())),
        ..FailureReport::default()
    };
    assert_eq!(kinds(&fail(&[], 1, report, None)), ["details_dropped"]);
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z.]{1,20}",
        (any::<char>(), 0usize..80_000).prop_map(|(c, n)| c.to_string().repeat(n)),
        (
            prop::sample::select(vec!['\u{1}', '"', '\\', 'é', '\u{10FFFF}']),
            60_000usize..70_000
        )
            .prop_map(|(c, n)| c.to_string().repeat(n)),
    ]
}

fn details() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some("{\"status\": 503}".to_string())),
        (1usize..70).prop_map(|d| Some(format!("{}{}", "[".repeat(d), "]".repeat(d)))),
        (60_000usize..70_000).prop_map(|n| Some(format!("[\"{}\"]", "\\u0001".repeat(n / 6)))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn whatever_fails_the_state_reads_back(
        failures in prop::collection::vec((text(), text(), details(), any::<bool>()), 1..14),
        limit in prop::sample::select(vec![10usize, 11, 40]),
        behind in 0u64..3,
    ) {
        let defaults = [Layer::Json(r#"{"max_attempts": 12, "on_exhaustion": "dead_letter"}"#.into())];
        let mut state: Option<String> = None;
        for (i, (ty, msg, det, timed_out)) in failures.into_iter().enumerate() {
            let attempt = (i as u64).saturating_add(1).saturating_sub(behind).max(1);
            let mut t = Transaction::new(&defaults, attempt, "job-7", NOW);
            t.history_limit = limit;
            t.state = state.take().map(|s| Layer::Json(s.into()));
            t.failure = FailureReport {
                error_type: Some(ty),
                message: Some(msg),
                details: det.map(|d| Layer::Json(d.into())),
                timed_out,
                ..FailureReport::default()
            };
            let out = t.run();
            assert_reads_back(&out, limit);
            prop_assert_eq!(out.dead_letter.is_some(), out.decision.action == Action::DeadLetter);
            state = Some(out.state_json);
        }
    }
}
