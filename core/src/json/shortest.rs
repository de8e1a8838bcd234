//! A double as the shortest decimal that reads back as it, spelled as
//! serde_json spells doubles (with its formatter, `zmij`): `2.0`, `0.1`,
//! `1234.5`, `0.00012`, `1e+16`, `1.5e-7`, `-0.0`.
//!
//! Hand-written rather than `zmij` for size: `zmij` (Schubfach over a
//! table of 128-bit powers of ten) was 2.8 KB of the WebAssembly module,
//! 1.7 KB gzipped. This is the free-format algorithm of Steele & White
//! and Burger & Dybvig on the reader's big integers ([`super::big`]),
//! exact by construction and a few hundred bytes: slower (a microsecond
//! rather than tens of nanoseconds), where doubles are written only in
//! canonical JSON and messages, and whole numbers below 2^53 (every
//! coefficient a policy is likely to hold) take a shortcut. The tests
//! below and the `json` fuzz target hold it to `zmij`, byte for byte.

use super::big::Big;
use crate::text::Piece;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;

/// 2^53: every whole number below it is a double exactly.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// Appends finite `x` to `out`.
pub(crate) fn push(out: &mut String, x: f64) {
    if x.is_sign_negative() {
        out.push('-');
    }
    let x = x.abs();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = x as u64;
    #[allow(clippy::cast_precision_loss)]
    if x < EXACT && n as f64 == x {
        // Its digits are the shortest: any other decimal of as many
        // significant digits or fewer lies a whole unit away, and the
        // neighbouring doubles at most one.
        n.push_to(out);
        out.push_str(".0");
        return;
    }
    let (digits, k) = shortest(x);
    // serde_json's layout: plain from 1e-5 to below 1e16, else exponential.
    let last = i64::try_from(digits.len()).unwrap_or(0).saturating_sub(1);
    let plain = (-5..=15).contains(&k);
    if plain && k < 0 {
        out.push_str("0.");
        zeros(out, k.saturating_neg().saturating_sub(1));
    }
    // The point goes after digit `k` when plain, after the first when not.
    let point = if plain { k } else { 0 };
    for (i, &d) in (0_i64..).zip(&digits) {
        out.push(char::from(d));
        if i == point && i < last {
            out.push('.');
        }
    }
    if plain {
        if last <= k {
            zeros(out, k.saturating_sub(last));
            out.push_str(".0");
        }
    } else {
        out.push_str(if k < 0 { "e-" } else { "e+" });
        k.unsigned_abs().push_to(out);
    }
}

fn zeros(out: &mut String, count: i64) {
    for _ in 0..count {
        out.push('0');
    }
}

/// The shortest digits of positive, finite `x` that read back as it (the
/// closest to `x` of those, ties to an even last digit), in ASCII, and the
/// decimal exponent of the first.
fn shortest(x: f64) -> (Vec<u8>, i64) {
    let bits = x.to_bits();
    let biased = (bits >> 52) & 0x7ff;
    let frac = bits & ((1 << 52) - 1);
    let (f, e) = if biased == 0 {
        (frac, -1074_i64)
    } else {
        (
            frac | (1 << 52),
            i64::try_from(biased).unwrap_or(0).saturating_sub(1075),
        )
    };
    // x = f · 2^e, and the doubles around it are as far as its last bit,
    // except below a power of two, where the one below is half as far.
    // Scaled so that every quantity is whole: x = r / s, and the midpoints
    // to the neighbours are x + up / s and x − down / s. A decimal that
    // reads back as x lies between them (on them too when f is even: the
    // reader rounds ties to even).
    let narrow = frac == 0 && biased > 1;
    let even = f & 1 == 0;
    let reaches = |o: Ordering| o.is_gt() || (even && o.is_eq());
    let pos = usize::try_from(e).unwrap_or(0);
    let neg = usize::try_from(e.saturating_neg()).unwrap_or(0);
    let wide = usize::from(narrow);
    let mut r = Big::from_u64(f);
    r.shl(pos.saturating_add(wide).saturating_add(1));
    let mut s = Big::from_u64(1);
    s.shl(neg.saturating_add(wide).saturating_add(1));
    let mut up = Big::from_u64(1);
    up.shl(pos.saturating_add(wide));
    let mut down = Big::from_u64(1);
    down.shl(pos);
    // The first digit's exponent, from the leading bit's: never above it
    // (78913 / 2^18 is just under log10 2), and raised below while x + up
    // reaches 10^(k + 1).
    let lead = e.saturating_add(i64::from(63_u32.saturating_sub(f.leading_zeros())));
    let mut k = (lead.saturating_mul(78913) >> 18).saturating_sub(i64::from(lead < 0));
    let scale = u32::try_from(k.unsigned_abs()).unwrap_or(0);
    if k >= 0 {
        s.mul_pow10(scale);
    } else {
        r.mul_pow10(scale);
        up.mul_pow10(scale);
        down.mul_pow10(scale);
    }
    s.mul_add(10, 0);
    while reaches(r.sum_cmp(&up, &s)) {
        s.mul_add(10, 0);
        k = k.saturating_add(1);
    }
    // Digits, one by one, until the rest lies within the interval (17 at
    // most; the bound only keeps the loop finite by construction).
    let mut digits = Vec::new();
    for _ in 0..20 {
        r.mul_add(10, 0);
        up.mul_add(10, 0);
        down.mul_add(10, 0);
        let mut d = b'0';
        while r.ge(&s) {
            r.sub(&s);
            d = d.saturating_add(1);
        }
        let low = if even { down.ge(&r) } else { !r.ge(&down) };
        let high = reaches(r.sum_cmp(&up, &s));
        if low || high {
            let round_up = match (low, high) {
                (true, false) => false,
                (false, true) => true,
                // Both d and d + 1 read back as x: the closer, or the even
                // one at the midpoint.
                _ => match r.sum_cmp(&r, &s) {
                    Ordering::Less => false,
                    Ordering::Greater => true,
                    Ordering::Equal => d & 1 == 1,
                },
            };
            digits.push(d.saturating_add(u8::from(round_up)));
            break;
        }
        digits.push(d);
    }
    (digits, k)
}

#[cfg(test)]
mod tests {
    use super::push;
    use alloc::string::String;
    use proptest::prelude::*;

    fn ours(x: f64) -> String {
        let mut out = String::new();
        push(&mut out, x);
        out
    }

    fn zmij(x: f64) -> String {
        String::from(zmij::Buffer::new().format_finite(x))
    }

    #[test]
    fn known_spellings() {
        // serde_json's own spellings (its tests and documentation).
        for (x, text) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (2.0, "2.0"),
            (0.1, "0.1"),
            (0.3, "0.3"),
            (1.5, "1.5"),
            (-2.5, "-2.5"),
            (1234.5, "1234.5"),
            (0.00012, "0.00012"),
            (1e-5, "0.00001"),
            (1e-6, "1e-6"),
            (1.5e-7, "1.5e-7"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.2345e20, "1.2345e+20"),
            (1e300, "1e+300"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (9_007_199_254_740_993.0, "9007199254740992.0"),
            (0.1 + 0.2, "0.30000000000000004"),
        ] {
            assert_eq!(ours(x), text, "{x:e}");
        }
    }

    #[test]
    fn agrees_with_zmij_on_edges() {
        let mut xs = alloc::vec::Vec::new();
        for e in -1074..=1023 {
            let p = libm::ldexp(1.0, e);
            xs.extend([p, next(p), prev(p)]);
        }
        for k in -324..=308 {
            let p: f64 = alloc::format!("1e{k}").parse().unwrap_or(1.0);
            xs.extend([p, next(p), prev(p)]);
            xs.extend([p * 5.0, p * 1.5, p * 9.5, p * 2.5]);
        }
        for bits in 0..2000_u64 {
            xs.push(f64::from_bits(bits));
        }
        xs.extend([
            f64::MAX,
            f64::MIN_POSITIVE,
            EXACT_F64,
            EXACT_F64 * 2.0,
            123_456_789.0,
        ]);
        for x in xs.into_iter().filter(|x| x.is_finite() && *x > 0.0) {
            assert_eq!(ours(x), zmij(x), "{x:e} ({:#x})", x.to_bits());
            assert_eq!(ours(-x), zmij(-x), "{:e}", -x);
        }
    }

    const EXACT_F64: f64 = super::EXACT;

    fn next(x: f64) -> f64 {
        f64::from_bits(x.to_bits().saturating_add(1))
    }

    fn prev(x: f64) -> f64 {
        f64::from_bits(x.to_bits().saturating_sub(1))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(50_000))]

        #[test]
        fn any_double(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            if x.is_finite() {
                prop_assert_eq!(ours(x), zmij(x), "{:#x}", bits);
            }
        }

        #[test]
        fn short_decimals(m in 1..100_000_u32, e in -330..310_i32) {
            let x: f64 = alloc::format!("{m}e{e}").parse().unwrap_or(0.0);
            if x.is_finite() {
                prop_assert_eq!(ours(x), zmij(x), "{}e{}", m, e);
            }
        }
    }
}
