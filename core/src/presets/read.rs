//! A typed reader over a preset's configuration object.
//!
//! Each system's `Options::read` asks it for one typed field at a time, in
//! the system's documented option order. A bad value is recorded as a
//! fault at `preset.<option>` with a message saying what was expected and
//! what was found, and the reader hands back the default so that reading
//! goes on: every fault of a document is reported at once, in option
//! order, then the unknown options in name order.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::error::{Faults, quote, show_f64};
use crate::value::{Map, Value, read_uint};

/// Declares a closed choice of words (`"exponential" | "fixed"`): the
/// enum, its table of names (the first is the default) and its canonical
/// form (the name, as a string).
macro_rules! choice {
    (
        $(#[$meta:meta])* $name:ident {
            $(#[$fmeta:meta])* $first:ident = $fword:literal
            $(, $(#[$vmeta:meta])* $variant:ident = $word:literal)* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum $name {
            $(#[$fmeta])* $first,
            $($(#[$vmeta])* $variant),*
        }

        impl $crate::presets::read::Choice for $name {
            const DEFAULT: Self = Self::$first;
            const ALL: &'static [(&'static str, Self)] =
                &[($fword, Self::$first) $(, ($word, Self::$variant))*];
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(match self {
                    Self::$first => $fword,
                    $(Self::$variant => $word),*
                })
            }
        }
    };
}
pub(crate) use choice;

/// A closed set of words read by [`Reader::choice`].
pub(crate) trait Choice: Copy + 'static {
    /// The choice taken when the option is absent (the first).
    const DEFAULT: Self;
    /// Every choice with its word, the default first.
    const ALL: &'static [(&'static str, Self)];
}

/// Reads the options of one configuration object, collecting faults.
pub(crate) struct Reader<'a> {
    map: &'a Map,
    faults: Faults,
}

impl<'a> Reader<'a> {
    /// A reader over `map` (which may hold `system` besides the options).
    pub(crate) fn new(map: &'a Map) -> Self {
        Self {
            map,
            faults: Faults::default(),
        }
    }

    /// The value given for `key`, if any (for options with their own shapes).
    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// A fault at `preset.<key>`.
    pub(crate) fn fault(&mut self, key: &str, message: impl Into<String>) {
        self.faults.push(format!("preset.{key}"), message);
    }

    /// The fault "`expected`, found <what `v` is>" at `preset.<key>`.
    pub(crate) fn bad(&mut self, key: &str, expected: &str, v: &Value) {
        self.fault(key, found(expected, v));
    }

    /// A fault at `preset.<key>[<i>]`.
    pub(crate) fn item_fault(&mut self, key: &str, i: usize, message: impl Into<String>) {
        self.faults.push(format!("preset.{key}[{i}]"), message);
    }

    /// An integer in `min..=max`.
    pub(crate) fn uint(&mut self, key: &str, default: u64, min: u64, max: u64) -> u64 {
        let Some(v) = self.get(key) else {
            return default;
        };
        match read_uint(v) {
            Ok(n) if (min..=max).contains(&n) => n,
            Ok(n) => {
                self.fault(
                    key,
                    format!("expected an integer between {min} and {max}, found {n}"),
                );
                default
            }
            Err(m) => {
                self.fault(key, m);
                default
            }
        }
    }

    /// An integer, or `null` for "unlimited" (`None`).
    pub(crate) fn uint_or_null(&mut self, key: &str, default: u64) -> Option<u64> {
        match self.get(key) {
            None => Some(default),
            Some(Value::Null) => None,
            Some(v) => match read_uint(v) {
                Ok(n) => Some(n),
                Err(m) => {
                    self.fault(key, format!("{m} (or null for unlimited)"));
                    Some(default)
                }
            },
        }
    }

    /// A finite number in `[min, max]`.
    pub(crate) fn number(&mut self, key: &str, default: f64, min: f64, max: f64) -> f64 {
        let Some(v) = self.get(key) else {
            return default;
        };
        in_range(v, min, max).unwrap_or_else(|| {
            let expected = format!(
                "expected a number between {} and {}",
                show_f64(min),
                show_f64(max)
            );
            self.bad(key, &expected, v);
            default
        })
    }

    /// `true` or `false`.
    pub(crate) fn boolean(&mut self, key: &str, default: bool) -> bool {
        match self.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                self.bad(key, "expected true or false", v);
                default
            }
        }
    }

    /// One of the words of `C` (the first is the default).
    pub(crate) fn choice<C: Choice>(&mut self, key: &str) -> C {
        let Some(v) = self.get(key) else {
            return C::DEFAULT;
        };
        if let Some(&(_, c)) = v
            .as_str()
            .and_then(|s| C::ALL.iter().find(|(w, _)| *w == s))
        {
            return c;
        }
        let words: Vec<String> = C::ALL.iter().map(|(w, _)| quote(w)).collect();
        self.bad(key, &format!("expected one of {}", words.join(", ")), v);
        C::DEFAULT
    }

    /// A list of error-type patterns (the engine's `matches` syntax); `default`
    /// when the option is absent.
    pub(crate) fn patterns(&mut self, key: &str, default: &[&str]) -> Vec<String> {
        match self.get(key) {
            None => default.iter().map(|s| (*s).to_string()).collect(),
            Some(Value::Array(items)) => {
                let mut list = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) if !s.is_empty() => list.push(s.clone()),
                        other => {
                            self.item_fault(
                                key,
                                i,
                                found("expected a non-empty error type", other),
                            );
                        }
                    }
                }
                list
            }
            Some(v) => {
                self.bad(key, "expected an array of error types", v);
                Vec::new()
            }
        }
    }

    /// [`Reader::patterns`], or `None` for an absent key or `null`.
    pub(crate) fn patterns_or_null(&mut self, key: &str) -> Option<Vec<String>> {
        match self.get(key) {
            None | Some(Value::Null) => None,
            Some(_) => Some(self.patterns(key, &[])),
        }
    }

    /// The faults found, with one for each key that is neither `system`
    /// nor one of `options` (the system's option names).
    pub(crate) fn finish(mut self, system: &str, options: &[&str]) -> Faults {
        if self
            .map
            .keys()
            .all(|key| key == "system" || options.contains(&key.as_str()))
        {
            return self.faults;
        }
        let mut known: Vec<&str> = options.to_vec();
        known.sort_unstable();
        known.dedup();
        let known = known.join(", ");
        for key in self.map.keys() {
            if key != "system" && !options.contains(&key.as_str()) {
                let message = format!(
                    "unknown field {} for the {system} preset{}; expected one of system, {known}",
                    quote(key),
                    crate::describe::did_you_mean(key, options)
                );
                self.fault(key, message);
            }
        }
        self.faults
    }
}

/// A JSON number in `[min, max]` (so finite).
pub(crate) fn in_range(v: &Value, min: f64, max: f64) -> Option<f64> {
    v.as_f64()
        .filter(|x| v.is_number() && *x >= min && *x <= max)
}

/// "`expected`, found <what `v` is>".
pub(crate) fn found(expected: &str, v: &Value) -> String {
    format!("{expected}, found {}", v.describe())
}
