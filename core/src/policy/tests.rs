//! Unit tests of policy reading and merging.

use super::partial::*;
use crate::RetryPolicy;
use crate::error::Faults;
use alloc::vec::Vec;

/// `check_into`'s bucket pass orders faults exactly as a stable sort by
/// field rank would: spec fields in spec order, indexed fields
/// (`non_retryable_errors[2]`) with their field, the document's own
/// faults first, unknown fields last, ties in their original order.
#[test]
fn check_into_orders_like_a_stable_sort() {
    let fields = [
        "zzz",
        "jitter",
        "",
        "non_retryable_errors[1]",
        "max_attempts",
        "aaa",
        "non_retryable_errors[0]",
        "backoff_strategy",
        "",
        "initial_interval",
        "max_attempts",
        "on_exhaustion",
        "max_interval",
        "backoff_coefficient",
        "zzz",
    ];
    let mut found = Faults::default();
    for (i, field) in fields.iter().enumerate() {
        found.push(*field, alloc::format!("fault {i}"));
    }
    let mut expected = found.0.clone();
    expected.sort_by_key(|f| field_rank(f.field.as_deref()));
    let mut out = Faults::default();
    out.push("earlier", "kept in front");
    PartialPolicy::default().check_into(found, "", &mut out);
    let (first, rest) = out.0.split_first().unwrap();
    assert_eq!(first.field.as_deref(), Some("earlier"));
    assert_eq!(rest, expected.as_slice());
}

#[test]
fn an_unknown_key_is_its_own_field_whatever_it_holds() {
    let e = RetryPolicy::from_json(r#"{"jitter.x": 1, "": 2, "a[0]": 3}"#).unwrap_err();
    let fields: Vec<_> = e
        .faults()
        .iter()
        .map(|f| (f.field.as_deref(), f.path.as_deref()))
        .collect();
    assert_eq!(
        fields,
        [
            (Some(""), Some("")),
            (Some("a[0]"), Some("a[0]")),
            (Some("jitter.x"), Some("jitter.x"))
        ]
    );
}

#[test]
fn an_unknown_field_names_the_field_it_may_be() {
    let e = RetryPolicy::from_json(r#"{"max_attempt": 3, "bogus": 1}"#).unwrap_err();
    let messages: Vec<_> = e.faults().iter().map(|f| f.message.as_str()).collect();
    assert!(
        messages[1].starts_with(r#"unknown field "max_attempt" (did you mean "max_attempts"?); expected one of max_attempts, "#),
        "{messages:?}"
    );
    assert!(messages[0].starts_with(r#"unknown field "bogus"; expected"#));
    let e = RetryPolicy::preset_json("sidekiq", r#"{"max_retry": 3}"#).unwrap_err();
    assert!(
        e.faults()[0].message.starts_with(
            r#"unknown field "max_retry" for the sidekiq preset (did you mean "max_retries"?);"#
        ),
        "{}",
        e.faults()[0].message
    );
}
