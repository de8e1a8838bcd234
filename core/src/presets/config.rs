//! Reading a preset's configuration object: typed fields with defaults,
//! every fault collected under the field `preset.<key>`, unknown keys
//! rejected, and the canonical (fully defaulted) object written back.

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

use crate::value::{Map, Number, Value};

use crate::decision::Action;
use crate::error::{Faults, quote, show_f64};
use crate::value::read_uint;
use alloc::format;

pub(crate) struct Reader<'a> {
    map: &'a Map,
    pub(crate) faults: Faults,
    pub(crate) out: Map,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(map: &'a Map) -> Self {
        Self {
            map,
            faults: Faults::default(),
            out: Map::new(),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    pub(crate) fn fault(&mut self, key: &str, msg: impl Into<String>) {
        self.faults.push(cat(&["preset.", key]), msg);
    }

    /// The fault "`expected`, found <what `v` is>" for `key`.
    pub(crate) fn bad(&mut self, key: &str, expected: &str, v: &Value) {
        self.fault(key, found(expected, v));
    }

    /// A non-negative integer in `min..=max`.
    pub(crate) fn uint(&mut self, key: &'static str, default: u64, min: u64, max: u64) -> u64 {
        let v = match self.get(key) {
            None => default,
            Some(v) => match read_uint(v) {
                Ok(n) if (min..=max).contains(&n) => n,
                Ok(n) => {
                    self.fault(
                        key,
                        format!(
                            "expected an integer between {} and {}, found {}",
                            min, max, n
                        ),
                    );
                    default
                }
                Err(m) => {
                    self.fault(key, m);
                    default
                }
            },
        };
        self.put(key, Value::from(v));
        v
    }

    /// An integer, or `null` for "unlimited".
    pub(crate) fn opt_uint(&mut self, key: &'static str, default: Option<u64>) -> Option<u64> {
        let v = match self.get(key) {
            None => default,
            Some(Value::Null) => None,
            Some(v) => match read_uint(v) {
                Ok(n) => Some(n),
                Err(m) => {
                    self.fault(key, cat(&[&m, " (or null for unlimited)"]));
                    default
                }
            },
        };
        self.put(key, v.map_or(Value::Null, Value::from));
        v
    }

    /// A finite number in `[min, max]`.
    pub(crate) fn number(&mut self, key: &'static str, default: f64, min: f64, max: f64) -> f64 {
        let v = match self.get(key) {
            None => default,
            Some(v) => match in_range(v, min, max) {
                Some(x) => x,
                None => {
                    // show_f64, not `{}`: float Display costs ~15 KB of wasm.
                    let expected = cat(&[
                        "expected a number between ",
                        &show_f64(min),
                        " and ",
                        &show_f64(max),
                    ]);
                    self.bad(key, &expected, v);
                    default
                }
            },
        };
        self.put(key, float(v));
        v
    }

    pub(crate) fn boolean(&mut self, key: &'static str, default: bool) -> bool {
        let v = match self.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                self.bad(key, "expected true or false", v);
                default
            }
        };
        self.put(key, Value::Bool(v));
        v
    }

    /// One of `choices` (the first is the default), as its index.
    pub(crate) fn choice(&mut self, key: &'static str, choices: &[&'static str]) -> usize {
        let v = match self.get(key) {
            None => 0,
            Some(v) => match v
                .as_str()
                .and_then(|s| choices.iter().position(|c| *c == s))
            {
                Some(i) => i,
                None => {
                    // The choices are plain words: quoted without escapes.
                    let mut expected = String::from("expected one of \"");
                    for (i, c) in choices.iter().enumerate() {
                        if i > 0 {
                            expected.push_str("\", \"");
                        }
                        expected.push_str(c);
                    }
                    expected.push('"');
                    self.bad(key, &expected, v);
                    0
                }
            },
        };
        self.put(key, Value::from(choices.get(v).copied().unwrap_or("")));
        v
    }

    /// A list of error-type patterns (the engine's `matches` syntax), each
    /// paired with the outcome `action` it leads to, appended to `list`:
    /// the preset's rules (built here, once, rather than mapped at each of
    /// the dozen call sites, which cost ~150 B of wasm apiece).
    pub(crate) fn rules(
        &mut self,
        key: &'static str,
        default: &[&str],
        action: Action,
        list: &mut Vec<(String, Action)>,
    ) {
        let given = self.get(key);
        let canonical = match given {
            None => {
                for s in default {
                    list.push(((*s).to_owned(), action));
                }
                Value::Array(default.iter().map(|s| Value::from(*s)).collect())
            }
            Some(v @ Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) if !s.is_empty() => list.push((s.clone(), action)),
                        other => self.faults.push(
                            item_field(key, i),
                            found("expected a non-empty error type", other),
                        ),
                    }
                }
                // Without a fault (else it is not used), the given list is
                // the canonical one.
                v.clone()
            }
            Some(v) => {
                self.bad(key, "expected an array of error types", v);
                Value::Null
            }
        };
        self.put(key, canonical);
    }

    /// A raw value for fields with their own shapes (`retry: true | 5`).
    pub(crate) fn raw(&mut self, key: &'static str) -> Option<&'a Value> {
        self.get(key)
    }

    pub(crate) fn put(&mut self, key: &str, v: Value) {
        put(&mut self.out, key, v);
    }

    /// Faults for keys the system does not have (its options: the names
    /// in `options`, every one of which the system reads); returns the
    /// canonical map.
    pub(crate) fn finish<T>(
        mut self,
        system: &str,
        options: &[(&'static str, T)],
    ) -> (Map, Faults) {
        for key in self.map.keys() {
            if key != "system" && !options.iter().any(|o| o.0 == key) {
                let known = known_list(options);
                let message = cat(&[
                    "unknown field ",
                    &quote(key),
                    " for the ",
                    system,
                    " preset; expected one of system, ",
                    &known,
                ]);
                self.fault(key, message);
            }
        }
        (self.out, self.faults)
    }
}

/// `parts` concatenated: the faults' messages are built with this rather
/// than `format!`, each of whose call sites costs ~100 B of wasm.
pub(crate) fn cat(parts: &[&str]) -> String {
    let mut out = String::new();
    for p in parts {
        out.push_str(p);
    }
    out
}

/// `map[key] = v`: one out-of-line copy of the insertion (with its key
/// allocation and the drop of the value replaced) for every canonical
/// value.
pub(crate) fn put(map: &mut Map, key: &str, v: Value) {
    map.insert(String::from(key), v);
}

/// A JSON number in `[min, max]` (so finite).
pub(crate) fn in_range(v: &Value, min: f64, max: f64) -> Option<f64> {
    v.as_f64()
        .filter(|x| v.is_number() && *x >= min && *x <= max)
}

/// The field `preset.<key>[<i>]`.
pub(crate) fn item_field(key: &str, i: usize) -> String {
    format!("preset.{}[{}]", key, i)
}

/// "`expected`, found <what `v` is>".
pub(crate) fn found(expected: &str, v: &Value) -> String {
    cat(&[expected, ", found ", &v.describe()])
}

/// The option names of a system, sorted, without repeats and joined with
/// `", "`, for the unknown-field message. A selection over a short static
/// list (each step takes the least name above the last one), written
/// straight into the text: the generic `sort_unstable` costs ~3 KB of wasm
/// for this one call, `Vec::insert` a panic path, and a list then joined
/// ~300 B more.
fn known_list<T>(names: &[(&'static str, T)]) -> String {
    let mut out = String::new();
    let mut last = "";
    loop {
        let mut next: Option<&str> = None;
        for (name, _) in names {
            if *name > last && next.is_none_or(|n| *name < n) {
                next = Some(name);
            }
        }
        let Some(name) = next else {
            return out;
        };
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(name);
        last = name;
    }
}

/// A float written canonically: integral values keep a `.0`-free integer
/// form only when they are integers in the document too.
pub(crate) fn float(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_list_is_sort_dedup_join() {
        let names = [
            "retry", "dead", "kill", "dead", "version", "retry", "discard", "a",
        ];
        let mut expected = names.to_vec();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(known_list(&names.map(|n| (n, ()))), expected.join(", "));
        assert_eq!(known_list::<()>(&[]), "");
    }
}
