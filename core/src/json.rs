//! Strict JSON text parsing: `serde_json` plus a rejection of duplicate
//! object keys at any depth (a plain `serde_json::Value` keeps the last one
//! silently, so `{"max_attempts": 1, "max_attempts": 99}` would pass).
//!
//! Nesting depth is bounded by `serde_json`'s recursion limit (128), so
//! hostile input cannot exhaust the stack.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

/// Parses JSON text into a `Value`, rejecting duplicate keys. The error is
/// a human message (line and column included by `serde_json`).
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = StrictValue
        .deserialize(&mut de)
        .map_err(|e| format!("expected a JSON document, found invalid JSON: {e}"))?;
    de.end()
        .map_err(|e| format!("expected a single JSON document, found trailing characters: {e}"))?;
    Ok(value)
}

struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(String::from(v)))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut v = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            v.push(item);
        }
        Ok(Value::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // One lookup per key: the entry both detects the duplicate and
            // receives the value.
            match m.entry(key) {
                Entry::Occupied(e) => {
                    return Err(de::Error::custom(format!("duplicate key {:?}", e.key())));
                }
                Entry::Vacant(slot) => {
                    slot.insert(map.next_value_seed(StrictValue)?);
                }
            }
        }
        Ok(Value::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_duplicates_at_depth() {
        assert!(parse(r#"{"a":1,"a":2}"#).is_err());
        assert!(parse(r#"{"x":[{"b":1,"b":1}]}"#).is_err());
        assert!(parse(r#"{"a":1,"b":{"a":2}}"#).is_ok());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn trailing_text() {
        assert!(parse("{} {}").is_err());
        assert!(parse(" {} ").is_ok());
    }
}
