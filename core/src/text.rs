//! Message text without `core::fmt`: [`msg!`](crate::msg) appends its
//! pieces (text, integers, booleans) to a new `String`, which is all the
//! engine's messages need. `format!` brings `core::fmt`'s machinery
//! (`Formatter::pad`, the integer `Display` impls, `fmt::write`: ~4 KB of
//! the wasm build) and an argument table at every call site.

use alloc::borrow::Cow;
use alloc::string::String;

/// A piece of a message, appended as `format!("{}")` would show it.
pub(crate) trait Piece {
    /// Appends the piece to `out`.
    fn push_to(&self, out: &mut String);
}

impl Piece for str {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for String {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for Cow<'_, str> {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for char {
    fn push_to(&self, out: &mut String) {
        out.push(*self);
    }
}

impl Piece for bool {
    fn push_to(&self, out: &mut String) {
        out.push_str(if *self { "true" } else { "false" });
    }
}

impl<T: Piece + ?Sized> Piece for &T {
    fn push_to(&self, out: &mut String) {
        (**self).push_to(out);
    }
}

// Every integer through one `u64` or `i64` formatter.
macro_rules! integer_piece {
    ($push:ident: $($t:ty),*) => {$(
        impl Piece for $t {
            fn push_to(&self, out: &mut String) {
                $push(out, (*self).into());
            }
        }
    )*};
}
integer_piece!(push_u64: u8, u16, u32, u64);
integer_piece!(push_i64: i32, i64);

impl Piece for usize {
    fn push_to(&self, out: &mut String) {
        // usize is at most 64 bits on every target the engine builds for.
        push_u64(out, u64::try_from(*self).unwrap_or(u64::MAX));
    }
}

/// The decimal digits of `n`, most significant first, in the tail of a
/// buffer: `(buffer, index of the first digit)`.
///
/// Hand-written rather than `itoa` for the wasm module's size: itoa 1.0's
/// `expect` on a `TryFrom` and its checked table lookups are panics whose
/// messages format a `TryFromIntError` with `Debug`, which alone links
/// `core::fmt`'s padding and debug builders (~3 KB of wasm) into a module
/// that otherwise has none. One division per digit is plenty for messages
/// and JSON text. Tested against `format!` below and fuzzed through the
/// JSON writer (fuzz target `json`, against serde_json's itoa).
fn digits(mut n: u64) -> ([u8; 20], usize) {
    let mut buf = [b'0'; 20];
    let mut at = 0;
    // From the end: u64::MAX has 20 digits, so `n` reaches 0 by the first
    // slot at the latest.
    for (i, slot) in buf.iter_mut().enumerate().rev() {
        // `n % 10 < 10`: the cast cannot truncate, and `b'0' | d` is
        // `b'0' + d` (0x30 has none of the low four bits).
        #[allow(clippy::cast_possible_truncation)]
        let d = (n % 10) as u8;
        *slot = b'0' | d;
        n /= 10;
        if n == 0 {
            at = i;
            break;
        }
    }
    (buf, at)
}

/// Appends `n` in decimal.
pub(crate) fn push_u64(out: &mut String, n: u64) {
    let (buf, at) = digits(n);
    for &b in buf.get(at..).unwrap_or_default() {
        out.push(char::from(b));
    }
}

/// Appends `n` in decimal, with a `-` when negative.
pub(crate) fn push_i64(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_u64(out, n.unsigned_abs());
}

/// `n` in decimal with at least `width` digits, zero-padded on the left
/// (`format!("{n:0width$}")`).
pub(crate) fn push_padded(out: &mut String, n: u64, width: usize) {
    let (buf, at) = digits(n);
    for _ in buf.len().saturating_sub(at)..width {
        out.push('0');
    }
    for &b in buf.get(at..).unwrap_or_default() {
        out.push(char::from(b));
    }
}

/// A message from its pieces: `msg!("expected at most ", max, ", found ",
/// n)` is `format!("expected at most {max}, found {n}")`.
macro_rules! msg {
    ($($piece:expr),* $(,)?) => {{
        let mut out = alloc::string::String::new();
        $( $crate::text::Piece::push_to(&$piece, &mut out); )*
        out
    }};
}
pub(crate) use msg;

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn pieces_show_as_format_shows_them() {
        for n in [0u64, 7, 10, 99, 1_000, u64::MAX] {
            assert_eq!(super::msg!(n), format!("{n}"));
            for w in 0..5 {
                let mut s = String::new();
                push_padded(&mut s, n, w);
                assert_eq!(s, format!("{n:0w$}"));
            }
        }
        for n in [i64::MIN, i64::MIN + 1, -10, -9, -1, 0, 1, i64::MAX] {
            assert_eq!(super::msg!(n), format!("{n}"));
        }
        // Every power of ten and its neighbours, and a spread of others.
        let mut p = 1u64;
        let mut ns = alloc::vec![u64::MAX, u64::MAX - 1];
        while let Some(q) = p.checked_mul(10) {
            ns.extend([p - 1, p, p + 1]);
            p = q;
        }
        ns.extend([p - 1, p, p + 1]);
        for i in 0..100_000 {
            let w = crate::jitter::splitmix64(0xd161, i);
            ns.extend([w, w >> (i % 64)]);
        }
        for n in ns {
            assert_eq!(super::msg!(n), format!("{n}"));
            #[allow(clippy::cast_possible_wrap)]
            let i = n as i64;
            assert_eq!(super::msg!(i), format!("{i}"));
            let w = usize::try_from(n % 24).unwrap_or(0);
            let mut s = String::new();
            push_padded(&mut s, n, w);
            assert_eq!(s, format!("{n:0w$}"));
        }
        let owned = String::from("o");
        let cow: Cow<'_, str> = Cow::Borrowed("c");
        assert_eq!(
            super::msg!("a", 'b', owned, &owned, cow, true, false, 3usize, 4u32),
            "abooctruefalse34"
        );
    }
}
