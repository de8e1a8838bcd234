//! A single-pass reader for policy documents that are valid, used before
//! the complete one.
//!
//! The complete reader ([`crate::json::parse`] into a [`crate::json::Value`],
//! then `read_layer`) finds and reports every fault, but builds a map of
//! owned keys and values first; on a valid document that was most of the
//! cost of [`RetryPolicy::from_json`](crate::RetryPolicy::from_json). This
//! reader goes straight from the bytes of the text to a [`PartialPolicy`],
//! and gives up (`None`) at the first thing it does not expect: an unknown
//! or repeated key, a wrong type, a value out of range, trailing text, and
//! also anything valid but rare that it does not bother to read (an escape
//! in a string, a negative number, a number that is not exactly a double
//! by one multiplication or division). The caller then runs the complete
//! reader, so every error and its message come from one place, and
//! whenever this reader returns a layer it is the one the complete reader
//! returns (the `fast_layer_agrees` property test and the `fast_layer`
//! fuzz target check that).
//!
//! It is written by hand over bytes rather than with serde (as it first
//! was) for two reasons. Size: a second serde visitor monomorphises
//! serde_json's deserializer again, ~30 KB of WebAssembly, so that reader
//! was left out of the wasm build; this one adds about 5 KB (3 KB
//! gzipped) and runs on every target. Speed: a policy document is eight
//! known keys and four kinds of values, so a scanner that knows them does
//! less than a general JSON reader: keys are recognised in place by their
//! first bytes, strings are scanned eight bytes at a time, nothing is
//! buffered but the error-type strings the policy keeps.
//!
//! The grammar it accepts is a subset of RFC 8259 JSON text, so anything it
//! accepts the complete reader ([`crate::json`], serde_json's grammar) accepts with the same values:
//!
//! * whitespace is exactly space, tab, line feed and carriage return;
//! * strings are read in place: `"` … `"` with no backslash (any escape
//!   gives up) and no control character (invalid JSON);
//! * numbers follow the JSON grammar without a minus sign (every negative
//!   value is out of range here); the value is `m · 10^e` with at most
//!   2^53 as `m` and `|e| ≤ 22`, computed by one correctly rounded
//!   multiplication or division of two exact doubles, which is the
//!   correctly rounded value serde_json (`float_roundtrip`) gives too;
//!   anything else gives up.

use alloc::string::String;
use alloc::vec::Vec;

use crate::backoff::Strategy;
use crate::duration::{self, MAX_MS};
use crate::error::Faults;
use crate::json::read::{skip_ws, stop_at};
use crate::policy::{OnExhaustion, PartialPolicy};

/// The layer in `text`, or `None` when the complete reader must look at it.
pub(crate) fn layer(text: &str) -> Option<PartialPolicy> {
    let mut s = Scanner::new(text);
    let layer = s.document()?;
    // The range checks are the complete reader's own.
    let mut faults = Faults::default();
    layer.check(&mut faults, "");
    faults.0.is_empty().then_some(layer)
}

/// 2^53: every integer up to it is a double exactly.
const EXACT: u64 = 1 << 53;

/// A number as written: an integer (no fraction, no exponent), which
/// serde_json keeps as a `u64`, or anything else, which it reads as a
/// double.
#[derive(Clone, Copy)]
enum Num {
    Int(u64),
    Float(f64),
}

/// The document's fields.
#[derive(Clone, Copy)]
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

struct Scanner<'a> {
    text: &'a str,
    /// The bytes of `text` not read yet.
    rest: &'a [u8],
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            rest: text.as_bytes(),
        }
    }

    // The wasm build is optimised for size (opt-level "z"), which keeps
    // even these few-instruction steps out of line: a call per byte or
    // token. Inlined there, reading a document takes far less time (see
    // bindings-wasm); the native build inlines them anyway.
    #[cfg_attr(target_family = "wasm", inline(always))]
    fn peek(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    fn skip(&mut self, n: usize) {
        self.rest = self.rest.get(n..).unwrap_or_default();
    }

    /// Past the byte just peeked.
    #[cfg_attr(target_family = "wasm", inline(always))]
    fn bump(&mut self) {
        if let [_, tail @ ..] = self.rest {
            self.rest = tail;
        }
    }

    #[cfg_attr(target_family = "wasm", inline(always))]
    fn ws(&mut self) {
        self.rest = skip_ws(self.rest);
    }

    /// The byte `b`, after any whitespace.
    #[cfg_attr(target_family = "wasm", inline(always))]
    fn eat(&mut self, b: u8) -> Option<()> {
        self.ws();
        match self.rest {
            [first, tail @ ..] if *first == b => {
                self.rest = tail;
                Some(())
            }
            _ => None,
        }
    }

    /// `{ "key": value, … }` and nothing after it but whitespace.
    fn document(&mut self) -> Option<PartialPolicy> {
        let mut p = PartialPolicy::default();
        self.eat(b'{')?;
        self.ws();
        if self.peek()? == b'}' {
            self.bump();
        } else {
            loop {
                self.ws();
                let key = self.key()?;
                self.eat(b':')?;
                self.ws();
                // `Option::replace` returns the old value: a repeated key.
                let repeated = match key {
                    Field::MaxAttempts => {
                        let n = self.uint()?;
                        p.max_attempts.replace(n).is_some()
                    }
                    Field::InitialInterval => {
                        let ms = self.duration()?;
                        p.initial_interval_ms.replace(ms).is_some()
                    }
                    Field::BackoffCoefficient => {
                        let c = match self.number()? {
                            // Within 2^53: exact, as serde_json's `as_f64`.
                            #[allow(clippy::cast_precision_loss)]
                            Num::Int(n) => n as f64,
                            Num::Float(f) => f,
                        };
                        p.backoff_coefficient.replace(c).is_some()
                    }
                    Field::MaxInterval => {
                        let ms = self.duration()?;
                        p.max_interval_ms.replace(ms).is_some()
                    }
                    Field::Jitter => {
                        let b = self.boolean()?;
                        p.jitter.replace(b).is_some()
                    }
                    Field::NonRetryableErrors => {
                        let list = self.strings()?;
                        p.non_retryable_errors.replace(list).is_some()
                    }
                    Field::OnExhaustion => {
                        let o = OnExhaustion::parse(self.string()?)?;
                        p.on_exhaustion.replace(o).is_some()
                    }
                    Field::BackoffStrategy => {
                        let s = Strategy::parse(self.string()?)?;
                        p.backoff_strategy.replace(s).is_some()
                    }
                };
                if repeated {
                    return None;
                }
                self.ws();
                match self.peek()? {
                    b',' => self.bump(),
                    b'}' => {
                        self.bump();
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.ws();
        self.rest.is_empty().then_some(p)
    }

    /// A key: one of the document's field names, quoted, with no escape
    /// (anything else gives up). Told apart by their first byte, and
    /// `max_…` and `backoff_…` by one more, then compared whole.
    fn key(&mut self) -> Option<Field> {
        let [b'"', body @ ..] = self.rest else {
            return None;
        };
        // `matches!` rather than `==` on options: `Option`'s `PartialEq`
        // is a call in the wasm build.
        let (field, name): (_, &[u8]) = match body.first()? {
            b'm' if matches!(body.get(4), Some(b'a')) => (Field::MaxAttempts, b"max_attempts\""),
            b'm' => (Field::MaxInterval, b"max_interval\""),
            b'i' => (Field::InitialInterval, b"initial_interval\""),
            b'b' if matches!(body.get(8), Some(b'c')) => {
                (Field::BackoffCoefficient, b"backoff_coefficient\"")
            }
            b'b' => (Field::BackoffStrategy, b"backoff_strategy\""),
            b'j' => (Field::Jitter, b"jitter\""),
            b'n' => (Field::NonRetryableErrors, b"non_retryable_errors\""),
            b'o' => (Field::OnExhaustion, b"on_exhaustion\""),
            _ => return None,
        };
        self.rest = strip(body, name)?;
        Some(field)
    }

    /// A string without escapes, borrowed from the text.
    fn string(&mut self) -> Option<&'a str> {
        let [b'"', body @ ..] = self.rest else {
            return None;
        };
        let len = string_len(body)?;
        let start = self.text.len().checked_sub(body.len())?;
        // Both ends are next to an ASCII quote, so on character boundaries.
        let s = self.text.get(start..start.checked_add(len)?)?;
        self.skip(len.checked_add(2)?);
        Some(s)
    }

    /// `[ "…", … ]`.
    fn strings(&mut self) -> Option<Vec<String>> {
        self.eat(b'[')?;
        self.ws();
        if self.peek()? == b']' {
            self.bump();
            return Some(Vec::new());
        }
        // The usual list is short: one allocation up front.
        let mut list = Vec::with_capacity(4);
        loop {
            self.ws();
            list.push(String::from(self.string()?));
            self.ws();
            match self.peek()? {
                b',' => self.bump(),
                b']' => {
                    self.bump();
                    return Some(list);
                }
                _ => return None,
            }
        }
    }

    fn duration(&mut self) -> Option<u64> {
        duration::parse_ms(self.string()?).ok()
    }

    fn boolean(&mut self) -> Option<bool> {
        // Slice patterns: `starts_with` is a call to `memcmp` in the wasm
        // build.
        let (value, rest) = match self.rest {
            [b't', b'r', b'u', b'e', rest @ ..] => (true, rest),
            [b'f', b'a', b'l', b's', b'e', rest @ ..] => (false, rest),
            _ => return None,
        };
        self.rest = rest;
        Some(value)
    }

    /// A JSON Schema integer as the complete reader's `read_uint` takes it:
    /// `3`, and also `3.0` or `1e2` (a double that is a whole number).
    fn uint(&mut self) -> Option<u64> {
        match self.number()? {
            Num::Int(n) => (n <= MAX_MS).then_some(n),
            // Within [0, 2^53 − 1] the cast back is exact, so it tells
            // whether `f` is a whole number.
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss
            )]
            Num::Float(f) => {
                let n = f as u64;
                ((0.0..=MAX_MS as f64).contains(&f) && n as f64 == f).then_some(n)
            }
        }
    }

    /// Digits, as many as there are, appended to `m`: the value and how
    /// many digits there were; `None` when there are none or the value
    /// exceeds 2^53 (see [`push_digit`]).
    #[cfg_attr(target_family = "wasm", inline(always))]
    fn digits(&mut self, m: u64) -> Option<(u64, usize)> {
        let mut m = m;
        let mut n: usize = 0;
        while let [d @ b'0'..=b'9', tail @ ..] = self.rest {
            m = push_digit(m, *d)?;
            n = n.checked_add(1)?;
            self.rest = tail;
        }
        (n > 0).then_some((m, n))
    }

    /// `int [frac] [exp]` of the JSON grammar (no minus sign), when its
    /// value is certain to be the one serde_json reads.
    fn number(&mut self) -> Option<Num> {
        let zero = matches!(self.rest, [b'0', ..]);
        let (mut m, len) = self.digits(0)?;
        // A leading zero stands alone: `01` is not JSON.
        if zero && len > 1 {
            return None;
        }
        // The decimal exponent of the last digit in `m`.
        let mut e: i32 = 0;
        let mut float = false;
        if let [b'.', rest @ ..] = self.rest {
            self.rest = rest;
            let (with_frac, frac) = self.digits(m)?;
            m = with_frac;
            e = i32::try_from(frac).ok()?.checked_neg()?;
            float = true;
        }
        if let [b'e' | b'E', rest @ ..] = self.rest {
            let (negative, rest) = match rest {
                [b'-', tail @ ..] => (true, tail),
                [b'+', tail @ ..] => (false, tail),
                _ => (false, rest),
            };
            self.rest = rest;
            let (x, len) = self.digits(0)?;
            // A long exponent gives up (what it does to the value is not
            // worth reading here).
            if len > 3 {
                return None;
            }
            let x = i32::try_from(x).ok()?;
            e = if negative {
                e.checked_sub(x)?
            } else {
                e.checked_add(x)?
            };
            float = true;
        }
        if !float {
            return Some(Num::Int(m));
        }
        // Trailing zeros of a fraction (`4.0`, `2.50`) move into the
        // exponent, so that a whole number needs no division.
        while e < 0 && m % 10 == 0 && m != 0 {
            m /= 10;
            e = e.checked_add(1)?;
        }
        // `m` and `10^|e|` (|e| ≤ 22) are doubles exactly, so one operation
        // gives the correctly rounded value of `m · 10^e`.
        #[allow(clippy::cast_precision_loss)]
        let m = m as f64;
        let f = match e {
            0 => m,
            1.. => m * pow10(e.unsigned_abs())?,
            _ => m / pow10(e.unsigned_abs())?,
        };
        Some(Num::Float(f))
    }
}

/// 10^k for k ≤ 22, the powers of ten that are doubles exactly. Each
/// product on the way is exact too (10^k = 2^k · 5^k with 5^k < 2^53), so
/// a loop gives the same double as a table, without the table's bytes.
fn pow10(k: u32) -> Option<f64> {
    (k <= 22).then(|| (0..k).fold(1.0, |p, _| p * 10.0))
}

/// `m` followed by the digit `d`, when that is at most 2^53. Appending
/// digits never makes a number smaller, so checking each step is checking
/// the whole. `m` is at most 2^53, so `10 m + 9` fits in 64 bits: the
/// plain product, not `checked_mul`, which on wasm32 is a call to a
/// 128-bit multiplication.
#[cfg_attr(target_family = "wasm", inline(always))]
fn push_digit(m: u64, d: u8) -> Option<u64> {
    if m > EXACT {
        return None;
    }
    let m = m
        .wrapping_mul(10)
        .wrapping_add(u64::from(d.wrapping_sub(b'0')));
    (m <= EXACT).then_some(m)
}

/// `body` after `name`, compared eight bytes at a time, then a byte at a
/// time: slice equality and `strip_prefix` are calls to `memcmp` in the
/// wasm build, and a byte-at-a-time loop over every key was a large part
/// of reading a document there.
#[cfg_attr(target_family = "wasm", inline(always))]
fn strip<'b>(body: &'b [u8], name: &[u8]) -> Option<&'b [u8]> {
    let mut rest = body;
    let mut want = name;
    while let ([a, b, c, d, e, f, g, h, tail @ ..], [i, j, k, l, m, n, o, p, more @ ..]) =
        (rest, want)
    {
        if u64::from_le_bytes([*a, *b, *c, *d, *e, *f, *g, *h])
            != u64::from_le_bytes([*i, *j, *k, *l, *m, *n, *o, *p])
        {
            return None;
        }
        rest = tail;
        want = more;
    }
    for &c in want {
        match rest {
            [b, tail @ ..] if *b == c => rest = tail,
            _ => return None,
        }
    }
    Some(rest)
}

/// The length of the string that starts `body` (the text after an opening
/// quote) up to its closing quote; `None` at an escape (rare: the complete
/// reader decodes it), a control character (invalid JSON) or no closing
/// quote.
#[cfg_attr(target_family = "wasm", inline(always))]
fn string_len(body: &[u8]) -> Option<usize> {
    let at = stop_at(body)?;
    matches!(body.get(at), Some(b'"')).then_some(at)
}

/// The spec's example documents (§12), all of which the fast reader must
/// take: its tests and the differential fuzz target (which splices inputs
/// into them) read this one list.
#[cfg(any(test, fuzzing))]
pub(crate) const EXAMPLES: [&str; 7] = [
    include_str!("../../examples/12.1-no-retry.json"),
    include_str!("../../examples/12.2-default.json"),
    include_str!("../../examples/12.3-aggressive-dead-letter.json"),
    include_str!("../../examples/12.3-aggressive-dead-letter-polynomial.json"),
    include_str!("../../examples/12.4-custom-non-retryable.json"),
    include_str!("../../examples/12.5-constant-polling.json"),
    include_str!("../../examples/12.6-no-retry-dead-letter.json"),
];

#[cfg(test)]
// Test-case generation: indices are taken modulo non-empty pools.
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use alloc::format;
    use proptest::prelude::*;

    /// Candidate values per field as JSON text, valid and not. Values with
    /// a `!` in front are ones the reader may give up on though they are
    /// valid (it is then only held to agree whenever it answers); the `!`
    /// is not part of the text.
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
                "03",
                "2.50e1",
                "25E0",
                "250e-1",
                "!0.0e400",
                "4.",
                "1e",
                "1e+",
                "!-0",
                "0.0000",
                "!9007199254740991.0",
                "!9007199254740990.00",
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
                "!\"PT1\\u0053\"",
                "\"PT0.0005S\"",
                "\"PT1S\t\"",
                "\"PT1S",
            ],
        ),
        (
            "backoff_coefficient",
            &[
                "2",
                "2.0",
                "1",
                "0.5",
                "!1e308",
                "-1",
                "\"2\"",
                "null",
                "4.0",
                "!1.0000000000000002",
                "0.9999999999999999",
                "1.5e0",
                "!1.1e-1000",
                "1.1",
                "3.14159",
                "!123456789012345678",
                "1E1",
                "1.e1",
                "01.5",
                "!-2",
                "+2",
                ".5",
                "2.25E+2",
                "!9007199254740993",
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
        (
            "jitter",
            &[
                "true", "false", "1", "null", "\"true\"", "tru", "falsey", "True",
            ],
        ),
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
                "![\"\\u00e9.*\"]",
                "[ \"é.*\" , \"日本\" ]",
                "[\"a\",]",
                "[,]",
                "[ ]",
                "[\"a\" \"b\"]",
                "[\"\u{7f}\"]",
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
        ("!max\\u005fattempts", &["4", "\"4\""]),
    ];

    /// The text of a pool entry and whether the reader must take it.
    fn entry(s: &str) -> (&str, bool) {
        match s.strip_prefix('!') {
            Some(rare) => (rare, false),
            None => (s, true),
        }
    }

    /// A document and whether the reader must take it when it is valid.
    fn document(fields: &[(usize, usize)], spaced: bool, tail: &str) -> (String, bool) {
        let sep = if spaced { ",\n  " } else { "," };
        let colon = if spaced { ": " } else { ":" };
        let mut plain = true;
        let body: Vec<String> = fields
            .iter()
            .map(|&(f, v)| {
                let (name, pool) = POOLS[f % POOLS.len()];
                let (name, a) = entry(name);
                let (value, b) = entry(pool[v % pool.len()]);
                plain &= a && b;
                format!("\"{name}\"{colon}{value}")
            })
            .collect();
        let text = if spaced {
            format!("\t{{\r\n  {}\n}}{tail}", body.join(sep))
        } else {
            format!("{{{}}}{tail}", body.join(sep))
        };
        (text, plain)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(6_000))]

        /// Whenever the single-pass reader returns a layer, it is the one the
        /// complete reader returns; and it returns one for every document
        /// the complete reader accepts that holds nothing rare (so valid
        /// documents take it).
        #[test]
        fn fast_layer_agrees(
            fields in proptest::collection::vec((0..POOLS.len(), 0..24_usize), 0..10),
            spaced in any::<bool>(),
            tail in prop::sample::select(&["", " ", "\n", " x", "{}", ",", "\u{b}", "\u{a0}"][..]),
        ) {
            let (text, plain) = document(&fields, spaced, tail);
            let complete = PartialPolicy::from_json(&text);
            match layer(&text) {
                Some(fast) => prop_assert_eq!(Ok(fast), complete, "{}", text),
                None => prop_assert!(
                    complete.is_err() || !plain,
                    "gave up on a valid layer: {}",
                    text
                ),
            }
        }

        /// Any number text after `max_attempts` and `backoff_coefficient`:
        /// the reader's number grammar and values are serde_json's.
        #[test]
        fn numbers_agree(number in "[-+]?[0-9]{0,20}(\\.[0-9]{0,20})?([eE][-+]?[0-9]{0,4})?") {
            for field in ["max_attempts", "backoff_coefficient"] {
                let text = format!("{{\"{field}\": {number}}}");
                if let Some(fast) = layer(&text) {
                    prop_assert_eq!(Ok(fast), PartialPolicy::from_json(&text), "{}", text);
                }
            }
        }

        /// Arbitrary bytes around a valid document's pieces never make the
        /// reader disagree.
        #[test]
        fn mutated_documents_agree(
            cut in 0..200_usize,
            insert in "[ -~\t\n\r\u{b}\u{a0}é]{0,3}",
            drop in 0..4_usize,
        ) {
            let text = include_str!("../../examples/12.3-aggressive-dead-letter-polynomial.json");
            let at = (0..=cut.min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            let end = (at..=(at + drop).min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(at);
            let mutated = format!("{}{insert}{}", &text[..at], &text[end..]);
            if let Some(fast) = layer(&mutated) {
                prop_assert_eq!(Ok(fast), PartialPolicy::from_json(&mutated), "{}", mutated);
            }
        }
    }

    #[test]
    fn every_example_takes_the_fast_path() {
        for text in EXAMPLES {
            let fast = layer(text).unwrap();
            assert_eq!(Ok(fast), PartialPolicy::from_json(text), "{text}");
        }
        for bad in [
            "[]",
            "{} {}",
            r#"{"jitter": true, "jitter": false}"#,
            r#"{"x": 1}"#,
            r#"{"preset": {}}"#,
            "",
            "{",
            "{,}",
            r#"{"jitter": true,}"#,
            r#"{"jitter" true}"#,
            "\u{feff}{}",
        ] {
            assert_eq!(layer(bad), None, "{bad}");
        }
        assert_eq!(layer(" {\n}\r\n"), Some(PartialPolicy::default()));
    }

    proptest! {
        /// The word-at-a-time scan finds what a byte-at-a-time one finds.
        #[test]
        fn string_len_is_the_plain_scan(
            body in proptest::collection::vec(
                prop_oneof![
                    Just(b'"'),
                    Just(b'\\'),
                    0..0x20_u8,
                    0x20..0x80_u8,
                    0x20..0x80_u8,
                    0x20..0x80_u8,
                    any::<u8>(),
                ],
                0..40,
            ),
        ) {
            let plain = body
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .filter(|&i| body[i] == b'"');
            prop_assert_eq!(string_len(&body), plain);
        }
    }

    #[test]
    fn numbers() {
        let coefficient =
            |t: &str| layer(&format!("{{\"backoff_coefficient\":{t}}}"))?.backoff_coefficient;
        assert_eq!(coefficient("4.0"), Some(4.0));
        assert_eq!(coefficient("1.1"), Some(1.1));
        assert_eq!(coefficient("12.5e-1"), Some(1.25));
        assert_eq!(coefficient("1e22"), Some(1e22));
        // Rare: left to the complete reader.
        assert_eq!(coefficient("1e23"), None);
        assert_eq!(coefficient("1.00000000000000000001"), None);
        let attempts = |t: &str| layer(&format!("{{\"max_attempts\":{t}}}"))?.max_attempts;
        assert_eq!(attempts("25"), Some(25));
        assert_eq!(attempts("2.5e1"), Some(25));
        assert_eq!(attempts("2.5"), None);
        assert_eq!(attempts("9007199254740991"), Some(MAX_MS));
        assert_eq!(attempts("9007199254740992"), None);
    }
}
