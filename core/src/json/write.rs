//! The writer: `serde_json`'s output byte for byte, compact
//! (`to_string`) or pretty (`to_string_pretty`, two-space indent), so the
//! canonical JSON did not change when the engine stopped linking it.

use alloc::string::String;

use super::{Map, N, Value};

/// JSON text being written. Objects and arrays are opened and closed by
/// the caller, which says for each member whether it is the first.
pub(crate) struct Writer {
    out: String,
    pretty: bool,
    depth: usize,
}

impl Writer {
    pub(crate) fn new(pretty: bool) -> Self {
        Self {
            out: String::new(),
            pretty,
            depth: 0,
        }
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }

    fn indent(&mut self) {
        self.out.push('\n');
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
    }

    /// `{` or `[`.
    pub(crate) fn open(&mut self, bracket: char) {
        self.out.push(bracket);
        self.depth = self.depth.saturating_add(1);
    }

    /// `}` or `]`; `empty` when nothing was written inside (serde_json's
    /// pretty form writes `[]`, not a bracket on its own line).
    pub(crate) fn close(&mut self, bracket: char, empty: bool) {
        self.depth = self.depth.saturating_sub(1);
        if self.pretty && !empty {
            self.indent();
        }
        self.out.push(bracket);
    }

    /// Before an array element.
    pub(crate) fn item(&mut self, first: bool) {
        if !first {
            self.out.push(',');
        }
        if self.pretty {
            self.indent();
        }
    }

    /// Before an object member's value: the separator, the key and `:`.
    pub(crate) fn key(&mut self, first: bool, key: &str) {
        self.item(first);
        self.string(key);
        self.out.push_str(if self.pretty { ": " } else { ":" });
    }

    pub(crate) fn null(&mut self) {
        self.out.push_str("null");
    }

    pub(crate) fn bool(&mut self, b: bool) {
        self.out.push_str(if b { "true" } else { "false" });
    }

    pub(crate) fn u64(&mut self, n: u64) {
        crate::text::Piece::push_to(&n, &mut self.out);
    }

    /// A double as serde_json writes one: shortest round trip ([`super::shortest`]),
    /// and `null` for NaN and the infinities.
    pub(crate) fn f64(&mut self, x: f64) {
        if x.is_finite() {
            super::shortest::push(&mut self.out, x);
        } else {
            self.null();
        }
    }

    /// `null` or the string.
    pub(crate) fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.string(s),
            None => self.null(),
        }
    }

    /// A quoted string, escaped as serde_json escapes it ([`escape_into`]).
    pub(crate) fn string(&mut self, s: &str) {
        self.out.push('"');
        escape_into(&mut self.out, s);
        self.out.push('"');
    }

    pub(crate) fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.null(),
            Value::Bool(b) => self.bool(*b),
            Value::Number(n) => match n.0 {
                N::PosInt(u) => self.u64(u),
                N::NegInt(i) => crate::text::Piece::push_to(&i, &mut self.out),
                N::Float(x) => self.f64(x),
            },
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.open('[');
                for (i, item) in items.iter().enumerate() {
                    self.item(i == 0);
                    self.value(item);
                }
                self.close(']', items.is_empty());
            }
            Value::Object(m) => self.map(m),
        }
    }

    pub(crate) fn map(&mut self, m: &Map) {
        self.open('{');
        for (i, (k, item)) in m.iter().enumerate() {
            self.key(i == 0, k);
            self.value(item);
        }
        self.close('}', m.is_empty());
    }
}

/// `s` escaped as serde_json escapes a string's contents: `"`, `\\` and the
/// control characters, by their short form where JSON has one, else
/// `\u00XX` (lowercase hex); everything else as is. Also the quoting of
/// user text in error messages (`error::quote`), so a message shows a
/// string the way the JSON document had it.
pub(crate) fn escape_into(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut rest = s;
    while let Some(at) = super::read::stop_at(rest.as_bytes()) {
        let (plain, tail) = rest.split_at_checked(at).unwrap_or((rest, ""));
        out.push_str(plain);
        let mut chars = tail.chars();
        let Some(c) = chars.next() else {
            rest = "";
            break;
        };
        rest = chars.as_str();
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ => {
                let b = u32::from(c);
                out.push_str("\\u00");
                for shift in [4, 0] {
                    let d = HEX
                        .get(((b >> shift) & 0xF) as usize)
                        .copied()
                        .unwrap_or(b'0');
                    out.push(char::from(d));
                }
            }
        }
    }
    out.push_str(rest);
}
