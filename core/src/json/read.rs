//! The strict reader: RFC 8259 JSON text exactly as `serde_json` accepts
//! it, duplicate keys rejected, nesting bounded as `serde_json` bounds it
//! (an error, never a stack overflow), and numbers kept as `serde_json`
//! keeps them.
//!
//! The byte-scanning steps (whitespace, the eight-bytes-at-a-time string
//! scan) are shared with the fast policy reader ([`crate::fast_layer`]).

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Map, N, Number, Value};
use crate::text::msg;

/// `serde_json`'s recursion limit: the 128th open bracket is an error.
pub(crate) const MAX_DEPTH: u32 = 128;

/// Parses JSON text into a `Value`, rejecting duplicate keys. The error is
/// a human message with the line and column, worded as `serde_json`'s.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let mut r = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let value = r.value().map_err(|e| {
        msg!(
            "expected a JSON document, found invalid JSON: ",
            r.describe(&e)
        )
    })?;
    r.pos = r.bytes.len().saturating_sub(skip_ws(r.rest()).len());
    if r.pos < r.bytes.len() {
        let e = Fault::at("trailing characters", r.pos);
        return Err(msg!(
            "expected a single JSON document, found trailing characters: ",
            r.describe(&e)
        ));
    }
    Ok(value)
}

/// What went wrong and where (a byte offset).
struct Fault {
    what: Cow<'static, str>,
    at: usize,
}

impl Fault {
    fn at(what: &'static str, at: usize) -> Self {
        Self {
            what: Cow::Borrowed(what),
            at,
        }
    }
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: u32,
}

/// `bytes` past any JSON whitespace (exactly space, tab, line feed and
/// carriage return).
#[cfg_attr(target_family = "wasm", inline(always))]
pub(crate) fn skip_ws(bytes: &[u8]) -> &[u8] {
    let mut rest = bytes;
    while let [b' ' | b'\t' | b'\n' | b'\r', tail @ ..] = rest {
        rest = tail;
    }
    rest
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &[u8] {
        self.bytes.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn ws(&mut self) {
        let left = skip_ws(self.rest()).len();
        self.pos = self.bytes.len().saturating_sub(left);
    }

    fn bump(&mut self) {
        self.pos = self.pos.saturating_add(1);
    }

    fn fault(&self, what: &'static str) -> Fault {
        Fault::at(what, self.pos)
    }

    /// The message with `serde_json`'s position: the line, and the column
    /// of the byte at fault counted from 1 (the last column at the end).
    fn describe(&self, e: &Fault) -> String {
        let at = e.at.saturating_add(1).min(self.bytes.len());
        let before = self.bytes.get(..at).unwrap_or_default();
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i.saturating_add(1));
        let line = before
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            .saturating_add(1);
        msg!(
            e.what,
            " at line ",
            line,
            " column ",
            at.saturating_sub(line_start)
        )
    }

    fn value(&mut self) -> Result<Value, Fault> {
        self.ws();
        match self.peek() {
            None => Err(self.fault("EOF while parsing a value")),
            Some(b'n') => self.ident(b"null", Value::Null),
            Some(b't') => self.ident(b"true", Value::Bool(true)),
            Some(b'f') => self.ident(b"false", Value::Bool(false)),
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::Number),
            Some(b'"') => self.string().map(|s| Value::String(s.into_owned())),
            Some(b'[') => self.nested(Self::array),
            Some(b'{') => self.nested(Self::object),
            Some(_) => Err(self.fault("expected value")),
        }
    }

    fn nested(&mut self, read: fn(&mut Self) -> Result<Value, Fault>) -> Result<Value, Fault> {
        self.depth = self.depth.saturating_add(1);
        if self.depth >= MAX_DEPTH {
            return Err(self.fault("recursion limit exceeded"));
        }
        self.bump();
        let v = read(self)?;
        self.depth = self.depth.saturating_sub(1);
        Ok(v)
    }

    fn ident(&mut self, word: &[u8], v: Value) -> Result<Value, Fault> {
        for &want in word {
            match self.peek() {
                None => return Err(self.fault("EOF while parsing a value")),
                Some(b) if b == want => self.bump(),
                Some(_) => return Err(self.fault("expected ident")),
            }
        }
        Ok(v)
    }

    /// Digits, at least one (else `invalid number`, or EOF).
    fn digits(&mut self) -> Result<(), Fault> {
        match self.peek() {
            Some(b'0'..=b'9') => {}
            None => return Err(self.fault("EOF while parsing a value")),
            Some(_) => return Err(self.fault("invalid number")),
        }
        while let Some(b'0'..=b'9') = self.peek() {
            self.bump();
        }
        Ok(())
    }

    /// A number: the JSON grammar, then `serde_json`'s classification.
    fn number(&mut self) -> Result<Number, Fault> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.bump();
        }
        let int_start = self.pos;
        match self.peek() {
            Some(b'0') => {
                self.bump();
                // A leading zero stands alone.
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.fault("invalid number"));
                }
            }
            _ => self.digits()?,
        }
        let int_end = self.pos;
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.bump();
            self.digits()?;
            float = true;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.bump();
            if let Some(b'+' | b'-') = self.peek() {
                self.bump();
            }
            self.digits()?;
            float = true;
        }
        if !float
            && let Some(n) = self
                .bytes
                .get(int_start..int_end)
                // Digits only (the grammar above): not `str::parse`, whose
                // sign and error handling the wasm module would carry.
                .and_then(|d| {
                    d.iter().try_fold(0_u64, |n, &c| {
                        n.checked_mul(10)?
                            .checked_add(u64::from(c.wrapping_sub(b'0')))
                    })
                })
        {
            return Ok(Number(if !negative {
                N::PosInt(n)
            } else {
                // serde_json: `-0` is the double -0.0, and a magnitude
                // beyond i64 is a double.
                #[allow(clippy::cast_possible_wrap)]
                let neg = (n as i64).wrapping_neg();
                if neg < 0 {
                    N::NegInt(neg)
                } else {
                    #[allow(clippy::cast_precision_loss)]
                    N::Float(-(n as f64))
                }
            }));
        }
        // Correctly rounded, as serde_json's with `float_roundtrip`.
        match self
            .bytes
            .get(start..self.pos)
            .and_then(super::float::parse)
        {
            Some(x) => Ok(Number(N::Float(x))),
            None => Err(Fault::at("number out of range", start)),
        }
    }

    /// A string, at its opening quote: borrowed from the text when it has
    /// no escape.
    fn string(&mut self) -> Result<Cow<'a, str>, Fault> {
        self.bump();
        let start = self.pos;
        let mut owned: Option<String> = None;
        let mut run = start;
        loop {
            let rest = self.rest();
            let Some(n) = stop_at(rest) else {
                self.pos = self.bytes.len();
                return Err(self.fault("EOF while parsing a string"));
            };
            self.pos = self.pos.saturating_add(n);
            match self.peek() {
                Some(b'"') => {
                    let tail = self.text.get(run..self.pos).unwrap_or_default();
                    self.bump();
                    return Ok(match owned {
                        None => Cow::Borrowed(tail),
                        Some(mut s) => {
                            s.push_str(tail);
                            Cow::Owned(s)
                        }
                    });
                }
                Some(b'\\') => {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(self.text.get(run..self.pos).unwrap_or_default());
                    self.bump();
                    s.push(self.escape()?);
                    run = self.pos;
                }
                _ => {
                    return Err(self.fault(
                        "control character (\\u0000-\\u001F) found while parsing a string",
                    ));
                }
            }
        }
    }

    /// The character of an escape, after its backslash.
    fn escape(&mut self) -> Result<char, Fault> {
        let Some(b) = self.peek() else {
            return Err(self.fault("EOF while parsing a string"));
        };
        self.bump();
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode(),
            _ => return Err(Fault::at("invalid escape", self.pos.saturating_sub(1))),
        })
    }

    /// `\uXXXX`, after the `u`: a scalar value, or a surrogate pair
    /// written as two escapes; a lone surrogate is an error.
    fn unicode(&mut self) -> Result<char, Fault> {
        let first = self.hex4()?;
        let code = match first {
            0xDC00..=0xDFFF => return Err(self.fault("lone leading surrogate in hex escape")),
            0xD800..=0xDBFF => {
                if self.peek() != Some(b'\\') {
                    return Err(self.fault("unexpected end of hex escape"));
                }
                self.bump();
                if self.peek() != Some(b'u') {
                    return Err(self.fault("unexpected end of hex escape"));
                }
                self.bump();
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.fault("lone leading surrogate in hex escape"));
                }
                // Both ranges checked: no overflow.
                0x1_0000_u32
                    .saturating_add((first.saturating_sub(0xD800)) << 10)
                    .saturating_add(second.saturating_sub(0xDC00))
            }
            _ => first,
        };
        char::from_u32(code).ok_or_else(|| self.fault("invalid unicode code point"))
    }

    fn hex4(&mut self) -> Result<u32, Fault> {
        let mut n: u32 = 0;
        for _ in 0..4 {
            let Some(b) = self.peek() else {
                return Err(self.fault("EOF while parsing a string"));
            };
            let d = match b {
                b'0'..=b'9' => b.wrapping_sub(b'0'),
                b'a'..=b'f' => b.wrapping_sub(b'a').wrapping_add(10),
                b'A'..=b'F' => b.wrapping_sub(b'A').wrapping_add(10),
                _ => return Err(self.fault("invalid escape")),
            };
            self.bump();
            n = (n << 4) | u32::from(d);
        }
        Ok(n)
    }

    fn array(&mut self) -> Result<Value, Fault> {
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.bump();
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.bump();
                    self.ws();
                    if self.peek() == Some(b']') {
                        return Err(self.fault("trailing comma"));
                    }
                }
                Some(b']') => {
                    self.bump();
                    return Ok(Value::Array(items));
                }
                None => return Err(self.fault("EOF while parsing a list")),
                Some(_) => return Err(self.fault("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, Fault> {
        self.ws();
        match self.peek() {
            Some(b'}') => {
                self.bump();
                return Ok(Value::Object(Map::new()));
            }
            Some(b'"') => {}
            None => return Err(self.fault("EOF while parsing an object")),
            Some(_) => return Err(self.fault("key must be a string")),
        }
        // Room for a policy document's eight fields: growing the vector
        // on the way (to 4, then 8) was a fifth of reading one.
        let mut map = Map::with_capacity(8);
        loop {
            let key = self.string()?.into_owned();
            let key_end = self.pos;
            self.ws();
            match self.peek() {
                Some(b':') => self.bump(),
                None => return Err(self.fault("EOF while parsing an object")),
                Some(_) => return Err(self.fault("expected `:`")),
            }
            let value = self.value()?;
            if let Err((key, _)) = map.insert_new(key, value) {
                return Err(Fault {
                    what: Cow::Owned(msg!("duplicate key ", crate::error::quote(&key))),
                    at: key_end,
                });
            }
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.bump();
                    self.ws();
                    match self.peek() {
                        Some(b'"') => {}
                        Some(b'}') => return Err(self.fault("trailing comma")),
                        None => return Err(self.fault("EOF while parsing a value")),
                        Some(_) => return Err(self.fault("key must be a string")),
                    }
                }
                Some(b'}') => {
                    self.bump();
                    return Ok(Value::Object(map));
                }
                None => return Err(self.fault("EOF while parsing an object")),
                Some(_) => return Err(self.fault("expected `,` or `}`")),
            }
        }
    }
}

/// The index in `body` of the first quote, backslash or control character
/// (the bytes that end a plain run of a JSON string), if any.
#[cfg_attr(target_family = "wasm", inline(always))]
pub(crate) fn stop_at(body: &[u8]) -> Option<usize> {
    // Eight bytes at a time: error types and keys are mostly longer.
    // Slice patterns, not `chunks_exact`: its iterator is calls in the
    // wasm build.
    let mut rest = body;
    let mut done: usize = 0;
    while let [a, b, c, d, e, f, g, h, tail @ ..] = rest {
        let stops = stops(u64::from_le_bytes([*a, *b, *c, *d, *e, *f, *g, *h]));
        if stops != 0 {
            // Little-endian: the lowest flagged byte comes first.
            let at = usize::try_from(stops.trailing_zeros().checked_div(8)?).ok()?;
            return done.checked_add(at);
        }
        done = done.checked_add(8)?;
        rest = tail;
    }
    for &b in rest {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return Some(done);
        }
        done = done.checked_add(1)?;
    }
    None
}

/// The high bit of each byte of `w` that is a quote, a backslash or below
/// 0x20, exact up to the first such byte (the usual word-at-a-time tests:
/// bytes above a flagged one may be flagged wrongly, by its borrow).
#[cfg_attr(target_family = "wasm", inline(always))]
fn stops(w: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    const SPACES: u64 = u64::from_ne_bytes([0x20; 8]);
    // A byte below `c` (c ≤ 0x80) has its high bit clear and sets it when
    // `c` is subtracted from it; a byte equal to `c` is zero after the XOR,
    // that is below 1.
    let below = |x: u64, n: u64| x.wrapping_sub(n) & !x & HIGH;
    below(w ^ QUOTES, ONES) | below(w ^ BACKSLASHES, ONES) | below(w, SPACES)
}
