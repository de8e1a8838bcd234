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

// Every integer through one `u64` or `i64` formatter: one copy of itoa's
// code per width would each be ~300 B of wasm.
macro_rules! integer_piece {
    ($wide:ty: $($t:ty),*) => {$(
        impl Piece for $t {
            fn push_to(&self, out: &mut String) {
                out.push_str(itoa::Buffer::new().format(<$wide>::from(*self)));
            }
        }
    )*};
}
integer_piece!(u64: u8, u16, u32, u64);
integer_piece!(i64: i32, i64);

impl Piece for usize {
    fn push_to(&self, out: &mut String) {
        // usize is at most 64 bits on every target the engine builds for.
        u64::try_from(*self).unwrap_or(u64::MAX).push_to(out);
    }
}

/// `n` in decimal with at least `width` digits, zero-padded on the left
/// (`format!("{n:0width$}")`).
pub(crate) fn push_padded(out: &mut String, n: u64, width: usize) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(n);
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(digits);
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
        for n in [i64::MIN, -1, 0, 1, i64::MAX] {
            assert_eq!(super::msg!(n), format!("{n}"));
        }
        let owned = String::from("o");
        let cow: Cow<'_, str> = Cow::Borrowed("c");
        assert_eq!(
            super::msg!("a", 'b', owned, &owned, cow, true, false, 3usize, 4u32),
            "abooctruefalse34"
        );
    }
}
