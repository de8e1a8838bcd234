//! The reader and the writer held to `serde_json` (a dev-dependency): what
//! it accepts and rejects, the values and the exact bits of numbers it
//! reads, and the bytes it writes.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;

use super::write::Writer;
use super::{N, Value, parse};

use super::reference::strict_serde_json as reference;

/// Equal values, numbers equal in kind and bits (`-0.0` is not `0.0`).
pub(crate) fn same(ours: &Value, theirs: &serde_json::Value) -> bool {
    match (ours, theirs) {
        (Value::Null, serde_json::Value::Null) => true,
        (Value::Bool(a), serde_json::Value::Bool(b)) => a == b,
        (Value::String(a), serde_json::Value::String(b)) => a == b,
        (Value::Number(a), serde_json::Value::Number(b)) => match a.0 {
            N::PosInt(u) => b.is_u64() && b.as_u64() == Some(u),
            N::NegInt(i) => !b.is_u64() && b.is_i64() && b.as_i64() == Some(i),
            N::Float(x) => b.is_f64() && b.as_f64().map(f64::to_bits) == Some(x.to_bits()),
        },
        (Value::Array(a), serde_json::Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), serde_json::Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|((k, x), (l, y))| k == l && same(x, y))
        }
        _ => false,
    }
}

/// The reader agrees with the reference on `text`.
pub(crate) fn agrees(text: &str) -> Result<(), String> {
    match (parse(text), reference(text)) {
        (Ok(a), Ok(b)) if same(&a, &b) => Ok(()),
        (Err(_), Err(_)) => Ok(()),
        (a, b) => Err(format!("{text:?}: ours {a:?}, serde_json {b:?}")),
    }
}

#[test]
fn edge_cases_agree() {
    let cases = [
        "",
        " ",
        "null",
        "nul",
        "nulll",
        "true",
        "tru",
        "false",
        "fals",
        "0",
        "-0",
        "00",
        "01",
        "-",
        "-a",
        "1.",
        "1.e5",
        ".5",
        "1e",
        "1e+",
        "1e-",
        "1E5",
        "1e05",
        "-0.0",
        "0.0e-0",
        "+1",
        "1.5",
        "0.1",
        "1e300",
        "1e309",
        "-1e309",
        "1e-400",
        "4.9e-324",
        "2.4e-324",
        "2.5e-324",
        "2.2250738585072011e-308",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.9999999999999999999",
        "9007199254740993",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "-18446744073709551616",
        "0e999999999999999999",
        "1e999999999999999999",
        "1e-999999999999999999",
        "123456789012345678901234567890",
        "0.30000000000000004",
        "0.1000000000000000055511151231257827",
        "\"\"",
        "\"a\"",
        "\"\\\"\"",
        "\"\\u0041\"",
        "\"\\u00e9\"",
        "\"\\ud83d\\ude00\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\ud800x\"",
        "\"\\ud800\\\"",
        "\"\\uD834\\uDD1E\"",
        "\"\\u12\"",
        "\"\\u12g4\"",
        "\"\\x\"",
        "\"\\/\"",
        "\"\\b\\f\\n\\r\\t\"",
        "\"\u{1}\"",
        "\"\u{1f}\"",
        "\"\u{7f}\"",
        "\"\t\"",
        "\"abc",
        "\"\\",
        "\"\\u",
        "\"é\"",
        "[]",
        "[",
        "[1",
        "[1,",
        "[1,]",
        "[,1]",
        "[1 2]",
        "[1,2]",
        " [ 1 , 2 ] ",
        "{}",
        "{",
        "{\"a\"",
        "{\"a\":",
        "{\"a\":1",
        "{\"a\":1,",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{a:1}",
        "{1:1}",
        "{\"a\":1 \"b\":2}",
        "{\"a\":1,\"a\":2}",
        "{\"a\":1,\"b\":{\"a\":2}}",
        "{\"a\":[{\"b\":1,\"b\":1}]}",
        "{\"\\u0061\":1,\"a\":2}",
        "{} {}",
        "{} x",
        "1 2",
        "\u{b}1",
        "\u{a0}1",
        "\u{feff}1",
        "1\u{c}",
        "\r\n\t 1 \r\n\t",
        "[\"a\",]",
        "[true,false,null]",
        "[-]",
        "[--1]",
        "[1e1.5]",
        "[0x10]",
        "[Infinity]",
        "[NaN]",
        "{\"z\":1,\"a\":2,\"m\":3}",
    ];
    for text in cases {
        agrees(text).unwrap();
    }
}

#[test]
fn depth_limit_is_serde_jsons() {
    for depth in [126_usize, 127, 128, 129, 100_000] {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            let text = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            agrees(&text).unwrap();
        }
    }
}

#[test]
fn messages_keep_their_form() {
    let e = parse("{\"a\": 1,\n \"a\": 2}").unwrap_err();
    assert!(
        e.starts_with(
            "expected a JSON document, found invalid JSON: duplicate key \"a\" at line 2 column"
        ),
        "{e}"
    );
    let e = parse("{} x").unwrap_err();
    assert_eq!(
        e,
        "expected a single JSON document, found trailing characters: trailing characters at line 1 column 4"
    );
    let e = parse("[1e400]").unwrap_err();
    assert!(e.contains("number out of range"), "{e}");
    // serde_json's own message and position for the common faults.
    for text in [
        "",
        "[1,]",
        "{\"a\" 1}",
        "tru",
        "\"\\x\"",
        "01",
        "[1 2]",
        "{\"a\":1,}",
        "\"\u{1}\"",
    ] {
        let ours = parse(text).unwrap_err();
        let theirs = serde_json::from_str::<serde_json::Value>(text)
            .unwrap_err()
            .to_string();
        assert_eq!(
            ours,
            format!("expected a JSON document, found invalid JSON: {theirs}"),
            "{text:?}"
        );
    }
}

#[test]
fn writes_serde_jsons_bytes() {
    let texts = [
        "[2.0,-0.0,1e300,1e-7,0.1,123456789.125,5e-324,1.7976931348623157e308,-1,18446744073709551615,-9223372036854775808]",
        "{\"b\":[],\"a\":{},\"c\":[[]],\"d\":{\"x\":[1,{\"y\":null}]}}",
        "\"\\u0000\\u001f\\u007f\\b\\f\\n\\r\\t\\\"\\\\/é😀\\u2028\"",
    ];
    for text in texts {
        let ours = parse(text).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours.to_text(), serde_json::to_string(&theirs).unwrap());
        let mut w = Writer::new(true);
        w.value(&ours);
        assert_eq!(w.finish(), serde_json::to_string_pretty(&theirs).unwrap());
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let number = prop_oneof![
        any::<u64>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        (-400_i32..400, any::<u32>()).prop_map(|(e, m)| {
            serde_json::Value::from(format!("{m}e{e}").parse::<f64>().unwrap_or(0.0))
        }),
    ];
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        number,
        "[ -~\u{0}-\u{1f}\u{7f}é😀\u{2028}]{0,8}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            proptest::collection::vec(("[a-e]{0,3}", inner), 0..6)
                .prop_map(|kv| { serde_json::Value::Object(kv.into_iter().collect()) }),
        ]
    })
}

/// JSON text with its whitespace varied, duplicate keys injected, or cut
/// and spliced (mostly invalid), from a generated value.
fn json_text() -> impl Strategy<Value = String> {
    (
        json_value(),
        any::<bool>(),
        0..400_usize,
        0..3_usize,
        prop::sample::select(vec![
            "",
            " ",
            "\n",
            ",",
            "]",
            "}",
            "\"",
            "\\",
            "-",
            "0",
            "e",
            ".",
            "\u{1}",
            "{\"a\":1,\"a\":1}",
        ]),
    )
        .prop_map(|(v, pretty, cut, drop, insert)| {
            let text = if pretty {
                serde_json::to_string_pretty(&v).unwrap_or_default()
            } else {
                serde_json::to_string(&v).unwrap_or_default()
            };
            let at = (0..=cut.min(text.len()))
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            let end = (at..=(at + drop).min(text.len()))
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(at);
            format!("{}{insert}{}", &text[..at], &text[end..])
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    #[test]
    fn reader_agrees_on_generated_text(text in json_text()) {
        prop_assert!(agrees(&text).is_ok(), "{}", agrees(&text).unwrap_err());
    }

    #[test]
    fn reader_agrees_on_token_soup(text in "[\\[\\]{}\",:0-9.eE+\\- tfnrulas\\\\u]{0,24}") {
        prop_assert!(agrees(&text).is_ok(), "{}", agrees(&text).unwrap_err());
    }

    #[test]
    fn numbers_agree(number in "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,25})?([eE][-+]?[0-9]{1,4})?") {
        prop_assert!(agrees(&number).is_ok(), "{}", agrees(&number).unwrap_err());
    }

    #[test]
    fn writer_agrees(v in json_value()) {
        let ours = Value::from(&v);
        prop_assert!(same(&ours, &v));
        prop_assert_eq!(ours.to_text(), serde_json::to_string(&v).unwrap());
        let mut w = Writer::new(true);
        w.value(&ours);
        prop_assert_eq!(w.finish(), serde_json::to_string_pretty(&v).unwrap());
        // And `Serialize` on the engine's value is the same.
        prop_assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&v).unwrap());
        // Round trip back to serde_json.
        prop_assert_eq!(serde_json::Value::from(ours), v);
    }
}

fn policy_doc() -> impl Strategy<Value = String> {
    (
        1..50_u64,
        1..100_000_u64,
        1.0..10.0_f64,
        prop::sample::select(vec!["", "\"max_interval\": \"PT30M\","]),
        any::<bool>(),
        proptest::collection::vec("[a-z][ -~é\u{1}\u{2028}]{0,6}", 0..4),
        prop::sample::select(vec!["discard", "dead_letter"]),
        prop::sample::select(vec!["", ",\"backoff_strategy\": \"linear\"", ",\"backoff_strategy\": \"exponential\"", ",\"backoff_strategy\": \"none\""]),
    )
        .prop_map(|(max, ms, coef, max_interval, jitter, errors, exh, strategy)| {
            let errors: Vec<String> = errors
                .iter()
                .map(|e| serde_json::to_string(e).unwrap_or_default())
                .collect();
            format!(
                "{{\"max_attempts\": {max}, \"initial_interval\": \"PT{}.{:03}S\", \"backoff_coefficient\": {coef:?}, {max_interval} \"jitter\": {jitter}, \"non_retryable_errors\": [{}], \"on_exhaustion\": \"{exh}\"{strategy}}}",
                ms / 1000,
                ms % 1000,
                errors.join(",")
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// `to_json` / `to_json_pretty` are the `Serialize` impl through
    /// `serde_json`, byte for byte.
    #[test]
    fn policy_writer_is_serde_jsons(doc in policy_doc()) {
        let p = crate::RetryPolicy::from_json(&doc);
        prop_assert!(p.is_ok(), "{}: {:?}", doc, p);
        if let Ok(p) = p {
            prop_assert_eq!(p.to_json(), serde_json::to_string(&p).unwrap());
            prop_assert_eq!(p.to_json_pretty(), serde_json::to_string_pretty(&p).unwrap());
        }
    }

    #[test]
    fn state_writer_is_serde_jsons(
        failures in proptest::collection::vec(("[a-z.]{1,8}", "[ -~é\u{1}]{0,8}", proptest::option::of(json_value())), 0..14),
        now in 0..4_000_000_000_000_u64,
    ) {
        let policy = crate::RetryPolicy::from_json(r#"{"max_attempts": 8}"#).unwrap();
        let mut s = crate::RetryState::new();
        prop_assert_eq!(s.to_json(), serde_json::to_string(&s).unwrap());
        for (t, m, details) in failures {
            let mut e = crate::JobError::new(t, m);
            // A `null` detail is no detail (the reader drops it).
            e.details = details.as_ref().map(Value::from).filter(|d| !d.is_null());
            if s.record_failure(&policy, &e, now, crate::JitterSource::Uniform(0.5)).is_err() {
                break;
            }
            prop_assert_eq!(s.to_json(), serde_json::to_string(&s).unwrap());
            let back = crate::RetryState::from_json(&s.to_json(), 10);
            prop_assert_eq!(back.map(|b| b.to_json()), Ok(s.to_json()));
        }
    }
}

#[test]
fn preset_writer_is_serde_jsons() {
    let configs = [
        "{}",
        r#"{"retry": 3}"#,
        r#"{"retry_backoff": true, "retry_jitter": false, "max_retries": 4}"#,
        r#"{"max_attempts": 5, "backoff": {"type": "exponential", "delay": 1000}}"#,
    ];
    let mut seen = 0;
    for system in crate::PRESET_SYSTEMS {
        for config in configs {
            if let Ok(p) = crate::RetryPolicy::preset(system, config) {
                seen += 1;
                assert_eq!(p.to_json(), serde_json::to_string(&p).unwrap());
                assert_eq!(
                    p.to_json_pretty(),
                    serde_json::to_string_pretty(&p).unwrap()
                );
            }
        }
    }
    assert!(seen >= crate::PRESET_SYSTEMS.len());
}
