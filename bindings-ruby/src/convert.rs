//! Results out: a core type's `Serialize` output (through a
//! `serde_json::Value`, keys in the core's canonical order) as plain Ruby
//! data.

use magnus::{Error, IntoValue, RArray, RHash, Ruby, Value};
use serde::Serialize;

/// How the keys of Hashes made from a document are written.
#[derive(Clone, Copy)]
pub(crate) enum Keys {
    /// `"max_attempts"`: a document (`to_h`), equal to `JSON.parse(to_json)`.
    Strings,
    /// `:field`: a Ruby record (`PolicyError#faults`, `RetryState#errors`,
    /// `Reservation#expiry`).
    Symbols,
}

/// Any core result type as Ruby data.
pub(crate) fn serialize<T: Serialize + ?Sized>(
    ruby: &Ruby,
    x: &T,
    keys: Keys,
) -> Result<Value, Error> {
    let v = serde_json::to_value(x)
        .map_err(|e| Error::new(ruby.exception_runtime_error(), e.to_string()))?;
    to_ruby(ruby, &v, keys)
}

/// A JSON value as Ruby data: `nil`, `true`/`false`, `Integer` (every
/// integer the engine returns is exact), `Float`, `String` (UTF-8),
/// `Array`, `Hash`.
pub(crate) fn to_ruby(ruby: &Ruby, v: &serde_json::Value, keys: Keys) -> Result<Value, Error> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => ruby.qnil().into_value_with(ruby),
        J::Bool(b) => b.into_value_with(ruby),
        J::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_value_with(ruby)
            } else if let Some(i) = n.as_i64() {
                i.into_value_with(ruby)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_value_with(ruby)
            }
        }
        J::String(s) => ruby.str_new(s).into_value_with(ruby),
        J::Array(items) => {
            let a: RArray = ruby.ary_new_capa(items.len());
            for item in items {
                a.push(to_ruby(ruby, item, keys)?)?;
            }
            a.into_value_with(ruby)
        }
        J::Object(m) => {
            let h: RHash = ruby.hash_new();
            for (k, item) in m {
                let value = to_ruby(ruby, item, keys)?;
                match keys {
                    Keys::Strings => h.aset(ruby.str_new(k), value)?,
                    Keys::Symbols => h.aset(ruby.to_symbol(k), value)?,
                }
            }
            h.into_value_with(ruby)
        }
    })
}
