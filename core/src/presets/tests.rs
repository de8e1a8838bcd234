//! The dispatch and the canonical documents of every system.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use super::*;

/// The canonical configuration of `system` with its defaults.
fn defaults(system: &str) -> String {
    let (preset, _) =
        from_options(system, &Value::Null).unwrap_or_else(|e| panic!("{system}: {e}"));
    serde_json::to_string(&preset).unwrap_or_default()
}

/// `S`'s option names with `system`, sorted.
fn keys<S: System>() -> Vec<&'static str> {
    let mut keys: BTreeSet<&str> = S::OPTIONS.iter().copied().collect();
    keys.insert("system");
    keys.into_iter().collect()
}

/// The keys of a canonical configuration, in the order written.
fn written_keys(json: &str) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    // serde_json's map is sorted: compare the text's order instead.
    let mut keys: Vec<(usize, String)> = value
        .as_object()
        .map(|m| {
            m.keys()
                .map(|k| {
                    (
                        json.find(&alloc::format!("\"{k}\":")).unwrap_or(usize::MAX),
                        k.clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    keys.sort();
    keys.into_iter().map(|(_, k)| k).collect()
}

#[test]
fn every_name_dispatches_to_its_own_system() {
    for system in SYSTEMS {
        let (preset, _) =
            from_options(system, &Value::Null).unwrap_or_else(|e| panic!("{system}: {e}"));
        assert_eq!(preset.system(), system);
    }
    assert!(Config::read("nope", &Map::new()).is_none());
}

#[test]
fn canonical_keys_are_the_options_sorted_with_system() {
    let expected: [(&str, Vec<&str>); 13] = [
        ("sidekiq", keys::<sidekiq::Options>()),
        ("faktory", keys::<faktory::Options>()),
        ("celery", keys::<celery::Options>()),
        ("bullmq", keys::<bullmq::Options>()),
        ("temporal", keys::<temporal::Options>()),
        ("oban", keys::<oban::Options>()),
        ("rq", keys::<rq::Options>()),
        ("dramatiq", keys::<dramatiq::Options>()),
        ("aws", keys::<aws::Aws>()),
        ("aws_jitter", keys::<aws::AwsJitter>()),
        ("ratchet", keys::<ratchet::Options>()),
        ("zzz_jobs", keys::<zzz_jobs::Options>()),
        ("chasquimq", keys::<chasquimq::Options>()),
    ];
    for (system, keys) in expected {
        assert_eq!(written_keys(&defaults(system)), keys, "{system}");
    }
}

#[test]
fn the_canonical_document_reads_back_the_same() {
    for system in SYSTEMS {
        let json = defaults(system);
        let value = Value::from_json(&json).unwrap_or_default();
        let again = from_value(&value).unwrap_or_else(|e| panic!("{system}: {e}"));
        assert_eq!(
            again,
            from_options(system, &Value::Null).unwrap_or_else(|e| panic!("{e}"))
        );
    }
}

#[test]
fn faults_are_in_option_order_then_unknown_options() {
    let config =
        Value::from_json(r#"{"zz": 1, "kill": 3, "version": "9", "aa": 2}"#).unwrap_or_default();
    let e = from_options("sidekiq", &config)
        .err()
        .unwrap_or_else(|| panic!("accepted"));
    let paths: Vec<_> = e
        .faults()
        .iter()
        .filter_map(|f| f.path.as_deref())
        .collect();
    assert_eq!(
        paths,
        ["preset.version", "preset.kill", "preset.aa", "preset.zz"]
    );
    assert_eq!(
        e.faults()[0].message,
        r#"expected one of "8", "7", found the string "9""#
    );
    assert_eq!(
        e.faults()[2].message,
        "unknown field \"aa\" for the sidekiq preset; expected one of system, dead, discard, kill, max_retries, retry, version"
    );
}
