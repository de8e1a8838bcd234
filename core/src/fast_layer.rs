//! A single-pass reader for policy documents that are valid, used before
//! the complete one.
//!
//! The complete reader ([`crate::json::parse`] into a `serde_json::Value`,
//! then `read_layer`) finds and reports every fault, but builds a map of
//! owned keys and values first; on a valid document that was most of the
//! cost of [`RetryPolicy::from_json`](crate::RetryPolicy::from_json). This
//! reader goes straight from the text to a [`PartialPolicy`], borrowing
//! keys and durations from the text, and gives up (`None`) at the first
//! thing it does not expect: an unknown or repeated key, a wrong type, a
//! value out of range, trailing text. The caller then runs the complete
//! reader, so every error and its message come from one place, and
//! whenever this reader returns a layer it is the one the complete reader
//! returns (the `fast_layer_agrees` property test checks that).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::{Number, Value};

use crate::backoff::Strategy;
use crate::duration;
use crate::error::Faults;
use crate::policy::{OnExhaustion, PartialPolicy, read_uint};

/// The layer in `text`, or `None` when the complete reader must look at it.
pub(crate) fn layer(text: &str) -> Option<PartialPolicy> {
    let mut de = serde_json::Deserializer::from_str(text);
    let layer = de.deserialize_map(LayerVisitor).ok()?;
    de.end().ok()?;
    // The range checks are the complete reader's own.
    let mut faults = Faults::default();
    layer.check(&mut faults, "");
    faults.0.is_empty().then_some(layer)
}

/// Any failure: the complete reader will say what it is.
struct GiveUp;

impl fmt::Display for GiveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a plain valid layer")
    }
}

fn give_up<E: de::Error>() -> E {
    E::custom(GiveUp)
}

struct LayerVisitor;

impl<'de> Visitor<'de> for LayerVisitor {
    type Value = PartialPolicy;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a policy document")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PartialPolicy, A::Error> {
        let mut p = PartialPolicy::default();
        while let Some(key) = map.next_key_seed(Name(Field::parse))? {
            // `Option::replace` returns the old value: a repeated key.
            let repeated = match key {
                Field::MaxAttempts => {
                    let n = map.next_value::<Number>()?;
                    let n = read_uint(&Value::Number(n)).map_err(|_| give_up::<A::Error>())?;
                    p.max_attempts.replace(n).is_some()
                }
                Field::InitialInterval => {
                    let ms = map.next_value_seed(Name(duration_ms))?;
                    p.initial_interval_ms.replace(ms).is_some()
                }
                Field::MaxInterval => {
                    let ms = map.next_value_seed(Name(duration_ms))?;
                    p.max_interval_ms.replace(ms).is_some()
                }
                Field::BackoffCoefficient => {
                    let c = map.next_value::<Number>()?.as_f64().ok_or_else(give_up)?;
                    p.backoff_coefficient.replace(c).is_some()
                }
                Field::Jitter => {
                    let b = map.next_value::<bool>()?;
                    p.jitter.replace(b).is_some()
                }
                Field::NonRetryableErrors => {
                    let list = map.next_value::<Vec<String>>()?;
                    p.non_retryable_errors.replace(list).is_some()
                }
                Field::OnExhaustion => {
                    let o = map.next_value_seed(Name(OnExhaustion::parse))?;
                    p.on_exhaustion.replace(o).is_some()
                }
                Field::BackoffStrategy => {
                    let s = map.next_value_seed(Name(Strategy::parse))?;
                    p.backoff_strategy.replace(s).is_some()
                }
            };
            if repeated {
                return Err(give_up());
            }
        }
        Ok(p)
    }
}

/// The document's fields; any other key gives up.
enum Field {
    MaxAttempts,
    InitialInterval,
    BackoffCoefficient,
    MaxInterval,
    Jitter,
    NonRetryableErrors,
    OnExhaustion,
    BackoffStrategy,
}

impl Field {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "max_attempts" => Self::MaxAttempts,
            "initial_interval" => Self::InitialInterval,
            "backoff_coefficient" => Self::BackoffCoefficient,
            "max_interval" => Self::MaxInterval,
            "jitter" => Self::Jitter,
            "non_retryable_errors" => Self::NonRetryableErrors,
            "on_exhaustion" => Self::OnExhaustion,
            "backoff_strategy" => Self::BackoffStrategy,
            _ => return None,
        })
    }
}

/// A duration string, parsed where it lies in the text.
fn duration_ms(s: &str) -> Option<u64> {
    duration::parse_ms(s).ok()
}

/// A string read in place by `parse` (a key, a duration, an enum name);
/// `None` gives up.
struct Name<T>(fn(&str) -> Option<T>);

impl<'de, T> DeserializeSeed<'de> for Name<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_str(self)
    }
}

impl<T> Visitor<'_> for Name<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
        (self.0)(s).ok_or_else(give_up)
    }
}

#[cfg(test)]
// Test-case generation: indices are taken modulo non-empty pools.
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use alloc::format;
    use proptest::prelude::*;

    /// Candidate values per field, valid and not, as JSON text.
    const POOLS: [(&str, &[&str]); 10] = [
        (
            "max_attempts",
            &[
                "3",
                "0",
                "3.0",
                "1e2",
                "-1",
                "3.5",
                "9007199254740991",
                "9007199254740992",
                "1e300",
                "\"3\"",
                "null",
                "true",
            ],
        ),
        (
            "initial_interval",
            &[
                "\"PT1S\"",
                "\"PT0.5S\"",
                "\"PT0S\"",
                "\"P1D\"",
                "\"PT\"",
                "\"pt1s\"",
                "1",
                "null",
                "\"PT15S\"",
                "\"P9999999Y\"",
                "\"PT1\\u0053\"",
                "\"PT0.0005S\"",
            ],
        ),
        (
            "backoff_coefficient",
            &[
                "2",
                "2.0",
                "1",
                "0.5",
                "1e308",
                "-1",
                "\"2\"",
                "null",
                "4.0",
                "1.0000000000000002",
                "0.9999999999999999",
            ],
        ),
        (
            "max_interval",
            &[
                "\"PT5M\"",
                "\"PT1H\"",
                "\"PT0.001S\"",
                "\"P1Y2M3DT4H5M6.789S\"",
                "\"PT1M60S\"",
                "\"P1W\"",
                "{}",
                "\"PT10M\"",
            ],
        ),
        ("jitter", &["true", "false", "1", "null", "\"true\""]),
        (
            "non_retryable_errors",
            &[
                "[]",
                "[\"a.*\"]",
                "[\"a\",\"b\"]",
                "[\"\"]",
                "[1]",
                "\"a\"",
                "null",
                "[\"x\", null]",
                "[[\"a\"]]",
                "[\"\\u00e9.*\"]",
            ],
        ),
        (
            "on_exhaustion",
            &["\"discard\"", "\"dead_letter\"", "\"DISCARD\"", "1", "null"],
        ),
        (
            "backoff_strategy",
            &[
                "\"polynomial\"",
                "\"constant\"",
                "\"none\"",
                "\"linear\"",
                "\"exponential\"",
                "\"quadratic\"",
                "null",
            ],
        ),
        ("unknown", &["1", "null"]),
        ("max\\u005fattempts", &["4", "\"4\""]),
    ];

    fn document(fields: &[(usize, usize)], spaced: bool, tail: &str) -> String {
        let sep = if spaced { ",\n  " } else { "," };
        let body: Vec<String> = fields
            .iter()
            .map(|&(f, v)| {
                let (name, pool) = POOLS[f % POOLS.len()];
                format!("\"{name}\": {}", pool[v % pool.len()])
            })
            .collect();
        format!("{{{}}}{tail}", body.join(sep))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4_000))]

        /// Whenever the single-pass reader returns a layer, it is the one the
        /// complete reader returns; and it returns one for every document
        /// the complete reader accepts (so valid documents take it).
        #[test]
        fn fast_layer_agrees(
            fields in proptest::collection::vec((0..POOLS.len(), 0..12_usize), 0..10),
            spaced in any::<bool>(),
            tail in prop::sample::select(&["", " ", "\n", " x", "{}", ","][..]),
        ) {
            let text = document(&fields, spaced, tail);
            let complete = PartialPolicy::from_json(&text);
            match layer(&text) {
                Some(fast) => prop_assert_eq!(Ok(fast), complete, "{}", text),
                None => prop_assert!(complete.is_err(), "gave up on a valid layer: {}", text),
            }
        }
    }

    #[test]
    fn the_12_3_document_takes_the_fast_path() {
        let text = include_str!("../../examples/12.3-aggressive-dead-letter-polynomial.json");
        let fast = layer(text).unwrap();
        assert_eq!(Ok(fast), PartialPolicy::from_json(text));
        for bad in [
            "[]",
            "{} {}",
            r#"{"jitter": true, "jitter": false}"#,
            r#"{"x": 1}"#,
            "",
        ] {
            assert_eq!(layer(bad), None, "{bad}");
        }
    }
}
