//! The options a JS caller passes beside a call, as one object (moved
//! here from the core, which takes its own typed arguments): the jitter
//! source (`u`, `seed` or `key`), `now` (epoch ms) and `historyLimit`.
//!
//! Each call takes only the options that mean something for it
//! ([`Call`]): an unknown one — a typo, or an option of another call
//! (`delay(1, { now })`) — is an error naming it, as Python refuses an
//! unexpected keyword. `null` or `undefined` is an absent option.

use ojs_retry::{Error, ErrorCode, Fault, Jitter, JitterSource, Number, Value};

use crate::fw::{Core, Thrown};
use crate::read::{self, Host};

/// Which options a call takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Call {
    /// `u`, `seed`, `key`: `delay`, `delays`, `schedule`, `jitterSample`.
    Jitter,
    /// A jitter source and `now`: `decide`, `recordFailure`.
    Decide,
    /// `historyLimit`: `new RetryState`, `RetryState.fromJSON`.
    History,
}

impl Call {
    fn takes(self, name: &str) -> bool {
        match self {
            Self::Jitter => matches!(name, "u" | "seed" | "key"),
            Self::Decide => matches!(name, "u" | "seed" | "key" | "now"),
            Self::History => name == "historyLimit",
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Self::Jitter => "u, seed or key",
            Self::Decide => "u, seed, key or now",
            Self::History => "historyLimit",
        }
    }
}

/// The options of one call.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct CallOptions {
    /// `now`, epoch ms.
    pub(crate) now: Option<u64>,
    /// The jitter source, when one was given.
    pub(crate) jitter: Option<Jitter>,
    /// `historyLimit`.
    pub(crate) history_limit: Option<usize>,
}

impl CallOptions {
    /// An option bag as the caller passed it (`undefined`: none), read as
    /// plain data and then checked.
    pub(crate) fn read<H: Host>(h: &H, v: H::V, call: Call) -> Core<Self> {
        if read::is_undefined(h, &v) {
            return Ok(Self::default());
        }
        let doc = read::document(h, v, ErrorCode::InvalidArgument)?;
        Self::from_value(&doc, call)
    }

    /// Reads an option object (`null` is no options), listing every fault.
    pub(crate) fn from_value(value: &Value, call: Call) -> Core<Self> {
        let mut faults = Vec::new();
        let mut out = Self::default();
        let map = match value {
            Value::Null => return Ok(out),
            Value::Object(m) => m,
            other => {
                return Err(Thrown::from(Error::invalid_argument(
                    "",
                    format!("expected an options object, found {}", other.describe()),
                )));
            }
        };
        let (mut u, mut seed, mut key) = (None, None, None);
        let at = |name: &str, message: String| Fault {
            field: Some(name.into()),
            path: Some(name.into()),
            message,
        };
        for (k, v) in map {
            let name = k.as_str();
            if !call.takes(name) {
                faults.push(at(
                    name,
                    format!(
                        "unknown option {}; expected {}",
                        quote(name),
                        call.expected()
                    ),
                ));
                continue;
            }
            match name {
                _ if v.is_null() => {} // an absent option, as `undefined` is
                "u" => match v.as_number() {
                    Some(n) => u = Some(n.as_f64()),
                    None => faults.push(at(name, expected("a number", v))),
                },
                "seed" => match read_seed(v) {
                    Some(s) => seed = Some(s),
                    None => faults.push(at(
                        name,
                        expected(
                            "an integer in 0..2^64 (a number, BigInt or decimal string)",
                            v,
                        ),
                    )),
                },
                "key" => match v.as_str() {
                    Some(s) => key = Some(s.to_owned()),
                    None => faults.push(at(name, expected("a string", v))),
                },
                "now" => match ojs_retry::uint_from_value(name, v) {
                    Ok(n) => out.now = Some(n),
                    Err(e) => faults.extend(e.faults().iter().cloned()),
                },
                // Beyond a 32-bit usize (wasm) it is still refused, by the
                // core's upper bound, as it is natively.
                _ => match ojs_retry::uint_from_value(name, v) {
                    Ok(n) => out.history_limit = Some(usize::try_from(n).unwrap_or(usize::MAX)),
                    Err(e) => faults.extend(e.faults().iter().cloned()),
                },
            }
        }
        if let Some(e) = Error::from_faults(ErrorCode::InvalidArgument, faults) {
            return Err(Thrown::from(e));
        }
        if u.is_some() || seed.is_some() || key.is_some() {
            out.jitter = Some(Jitter::from_parts(u, seed, key)?);
        }
        Ok(out)
    }

    /// The options a typed call gives field by field (the JS layer read
    /// them by own-property lookups): checked by [`CallOptions::from_value`]
    /// as the same object would be.
    pub(crate) fn typed(
        call: Call,
        u: Option<f64>,
        seed: Option<f64>,
        key: Option<String>,
        now: Option<f64>,
    ) -> Core<Self> {
        // The common shapes need no object: one source or none, a `now`
        // that is an integer in range.
        let jitter = match (u, seed, key) {
            (None, None, None) => None,
            (Some(u), None, None) => Some(Jitter::Uniform(u)),
            (None, None, Some(k)) => Some(Jitter::Key(k)),
            (u, seed, key) => {
                let mut r = read::Record::default();
                r.num("u", u)
                    .num("seed", seed)
                    .text("key", key)
                    .num("now", now);
                return Self::from_value(&r.into_value(), call);
            }
        };
        let now = match now {
            None => None,
            Some(x) => match read::number(x) {
                Value::Number(Number::PosInt(n)) if n <= ojs_retry::MAX_MS => Some(n),
                other => Some(ojs_retry::uint_from_value("now", &other)?),
            },
        };
        Ok(Self {
            now,
            jitter,
            history_limit: None,
        })
    }

    /// The jitter source to use: the one given, else OS entropy.
    pub(crate) fn jitter_or_entropy(&self) -> JitterSource<'_> {
        self.jitter
            .as_ref()
            .map_or(JitterSource::Entropy, Jitter::source)
    }
}

fn read_seed(v: &Value) -> Option<u64> {
    match v {
        Value::Number(Number::PosInt(u)) => Some(*u),
        Value::Number(n) => ojs_retry::uint_from_f64("seed", n.as_f64()).ok(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn expected(what: &str, found: &Value) -> String {
    format!("expected {what}, found {}", found.describe())
}

/// A name as JSON quotes it, shortened past 64 characters (as the core's
/// messages quote keys).
pub(crate) fn quote(s: &str) -> String {
    const MAX: usize = 64;
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => {
            let head = serde_json::to_string(s.get(..cut).unwrap_or("")).unwrap_or_default();
            let head = head.strip_suffix('"').unwrap_or(&head);
            format!("{head}...\" ({} bytes)", s.len())
        }
        None => serde_json::to_string(s).unwrap_or_default(),
    }
}
