//! Decimal text to the nearest double (ties to even), for the JSON reader.
//!
//! Hand-written rather than `str::parse::<f64>` for size: core's
//! conversion (Eisel–Lemire over a table of 128-bit powers of five, with a
//! big-decimal fallback) is 18.4 KB of WebAssembly, 15.4 KB gzipped, on
//! its own (a cdylib exporting only it, opt-level "z", fat LTO, wasm-opt
//! -Oz) — more than the rest of the JSON reader. This one is plain big-
//! integer arithmetic, exact by construction, a few KB: slower on the
//! numbers that need it (long or far from 1), which policy documents do
//! not hold; the common ones take Clinger's one-operation path. The tests
//! below and the `json` fuzz target hold it to `str::parse` and to
//! serde_json (`float_roundtrip`), bit for bit.

use super::big::Big;

/// Significant digits kept; later ones only say whether the rest is zero.
/// The midpoint between two adjacent doubles has at most 767 significant
/// digits, so a number cut after 800 with a sticky `1` digit appended when
/// anything non-zero was cut lies on the same side of every midpoint as
/// the number itself.
const MAX_DIGITS: usize = 800;

/// 2^53: every integer up to it is a double exactly.
const EXACT: u64 = 1 << 53;

/// `text`, a JSON number (its grammar already checked: `-?`, digits, an
/// optional fraction and exponent), as the nearest double; `None` when it
/// rounds to an infinity (out of range, as serde_json says).
pub(crate) fn parse(text: &[u8]) -> Option<f64> {
    let (negative, body) = match text {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, text),
    };
    let (mantissa, exp) = match body.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => (body.get(..i)?, exponent(body.get(i.checked_add(1)?..)?)),
        None => (body, 0),
    };
    let x = match fast(mantissa, exp) {
        Some(x) => x,
        None => slow(mantissa, exp)?,
    };
    Some(if negative { -x } else { x })
}

/// The exponent's value, saturated far beyond any that matters (a number
/// then is zero or out of range whatever its digits).
fn exponent(text: &[u8]) -> i64 {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    };
    let mut e: i64 = 0;
    for &d in digits {
        e = e
            .saturating_mul(10)
            .saturating_add(i64::from(d.wrapping_sub(b'0')))
            .min(1 << 40);
    }
    if negative { e.saturating_neg() } else { e }
}

/// Clinger's fast path: at most 19 significant digits making an integer
/// `m ≤ 2^53`, and `m · 10^e` with `|e| ≤ 22`: both operands are doubles
/// exactly, so one correctly rounded operation is the answer.
fn fast(mantissa: &[u8], exp: i64) -> Option<f64> {
    let mut m: u64 = 0;
    let mut e = exp;
    let mut in_frac = false;
    for &b in mantissa {
        if b == b'.' {
            in_frac = true;
            continue;
        }
        m = m
            .checked_mul(10)?
            .checked_add(u64::from(b.wrapping_sub(b'0')))?;
        if in_frac {
            e = e.checked_sub(1)?;
        }
    }
    if m > EXACT {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    let x = m as f64;
    match e {
        0 => Some(x),
        1..=22 => Some(x * pow10(e)),
        -22..=-1 => Some(x / pow10(e.checked_neg()?)),
        _ => None,
    }
}

/// 10^k for k ≤ 22, the powers of ten that are doubles exactly (each
/// product on the way is exact too).
fn pow10(k: i64) -> f64 {
    (0..k).fold(1.0, |p, _| p * 10.0)
}

/// Exact: the digits as a big integer `D` with `value = D · 10^e`, then
/// the top 64 bits of that value as an integer `q` with a binary exponent
/// and whether anything below them is non-zero, then rounding.
fn slow(mantissa: &[u8], exp: i64) -> Option<f64> {
    let mut d = Big::default();
    let mut count: usize = 0;
    let mut e = exp;
    let mut sticky = false;
    let mut in_frac = false;
    for &b in mantissa {
        if b == b'.' {
            in_frac = true;
            continue;
        }
        let digit = b.wrapping_sub(b'0');
        if in_frac {
            e = e.saturating_sub(1);
        }
        if count == 0 && digit == 0 {
            continue;
        }
        if count < MAX_DIGITS {
            d.mul_add(10, u32::from(digit));
            count = count.saturating_add(1);
        } else {
            sticky |= digit != 0;
            e = e.saturating_add(1);
        }
    }
    if count == 0 {
        return Some(0.0);
    }
    if sticky {
        d.mul_add(10, 1);
        count = count.saturating_add(1);
        e = e.saturating_sub(1);
    }
    // The value lies in [10^(mag − 1), 10^mag).
    let mag = e.saturating_add(i64::try_from(count).ok()?);
    if mag > 310 {
        return None;
    }
    // Below 10^-325, under half the smallest subnormal (2^-1074 ≈ 4.9e-324).
    if mag < -324 {
        return Some(0.0);
    }
    let (q, p, inexact) = if e >= 0 {
        d.mul_pow10(u32::try_from(e).ok()?);
        let t = d.bits().saturating_sub(64);
        let inexact = d.low_bits_nonzero(t);
        d.shr(t);
        (d.low_u64(), i64::try_from(t).ok()?, inexact)
    } else {
        // value = D / 10^k: a quotient of 63–64 bits by shift and subtract.
        let mut b = Big::from_u32(1);
        b.mul_pow10(u32::try_from(e.checked_neg()?).ok()?);
        let s = 63_i64
            .checked_add(i64::try_from(b.bits()).ok()?)?
            .checked_sub(i64::try_from(d.bits()).ok()?)?;
        if s >= 0 {
            d.shl(usize::try_from(s).ok()?);
        } else {
            b.shl(usize::try_from(s.checked_neg()?).ok()?);
        }
        // d / b is in (2^62, 2^64).
        b.shl(63);
        let mut q: u64 = 0;
        for i in (0..64).rev() {
            if d.ge(&b) {
                d.sub(&b);
                q |= 1 << i;
            }
            b.shr(1);
        }
        (q, s.checked_neg()?, !d.is_zero())
    };
    round(q, p, inexact)
}

/// The double nearest to `q · 2^p` (plus a little more when `inexact`: a
/// non-zero remainder below `q`'s last bit), ties to even; `None` past the
/// largest double.
fn round(q: u64, p: i64, inexact: bool) -> Option<f64> {
    if q == 0 {
        return Some(0.0);
    }
    // Normalised: q in [2^63, 2^64), so its leading bit weighs 2^(p + 63).
    let lz = q.leading_zeros();
    let q = u128::from(q << lz);
    let p = p.checked_sub(i64::from(lz))?;
    // The weight of the double's last bit: 52 below the leading one, or
    // the subnormals' 2^-1074.
    let mut u = p.checked_add(63 - 52)?.max(-1074);
    let shift = u.checked_sub(p)?;
    if shift > 64 {
        // Below half the smallest subnormal.
        return Some(0.0);
    }
    let shift = u32::try_from(shift).ok()?;
    let mut m = q.checked_shr(shift).unwrap_or(0);
    let low = q.wrapping_sub(m.checked_shl(shift).unwrap_or(0));
    let half = 1_u128.checked_shl(shift.checked_sub(1)?).unwrap_or(0);
    if low > half || (low == half && (inexact || m & 1 == 1)) {
        m = m.checked_add(1)?;
    }
    let mut m = u64::try_from(m).ok()?;
    if m == EXACT {
        m = EXACT >> 1;
        u = u.checked_add(1)?;
    }
    if m < EXACT >> 1 {
        // Subnormal: the bits are the count of 2^-1074.
        return Some(f64::from_bits(m));
    }
    let biased = u.checked_add(52 + 1023)?;
    if biased >= 2047 {
        return None;
    }
    let biased = u64::try_from(biased).ok()?;
    Some(f64::from_bits((biased << 52) | (m & ((1 << 52) - 1))))
}

#[cfg(test)]
mod tests {
    use super::{fast, parse, slow};
    use alloc::format;
    use alloc::string::String;
    use proptest::prelude::*;

    fn agrees(text: &str) -> Result<(), String> {
        let ours = parse(text.as_bytes());
        let std = text.parse::<f64>().ok().filter(|x| x.is_finite());
        if ours.map(f64::to_bits) == std.map(f64::to_bits) {
            Ok(())
        } else {
            Err(format!("{text}: ours {ours:?}, str::parse {std:?}"))
        }
    }

    #[test]
    fn edges() {
        let long_max = format!("17976931348623157{}", "0".repeat(292));
        let above_max = format!("17976931348623158{}", "0".repeat(292));
        let midpoint = String::from(
            "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125e-324",
        );
        let cases = [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1",
            "0.1",
            "0.2",
            "0.3",
            "1.5",
            "2.5e-3",
            "123.456",
            "1e22",
            "1e23",
            "9007199254740993",
            "9007199254740992.5",
            "18446744073709551616",
            "1e300",
            "1e308",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1e309",
            "2.2250738585072011e-308",
            "2.2250738585072012e-308",
            "2.2250738585072014e-308",
            "4.9e-324",
            "5e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "2.47e-324",
            "3e-324",
            "1e-400",
            "1e-323",
            "0.000001",
            "123456789012345678901234567890",
            "0.1000000000000000055511151231257827021181583404541015625",
            "0.1000000000000000055511151231257827021181583404541015626",
            "0.1000000000000000055511151231257827021181583404541015624",
            "1e-7",
            "7.2057594037927933e16",
            "8.98846567431158e307",
            "0e999999",
            "1e-999999",
            "1e999999",
            "0.00000000000000000000000000000000000001e40",
            "1.00000000000000011102230246251565404236316680908203125",
            "1.00000000000000011102230246251565404236316680908203124",
            "1.00000000000000011102230246251565404236316680908203126",
            "9007199254740993.0000000000000000000000000000000000000000000001",
        ];
        for text in cases {
            agrees(text).unwrap();
        }
        for text in [long_max.as_str(), above_max.as_str(), midpoint.as_str()] {
            agrees(text).unwrap();
        }
        let mut beyond = midpoint.clone();
        beyond.insert_str(midpoint.len() - 5, "0000000000001");
        agrees(&beyond).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn any_decimal(text in "-?(0|[1-9][0-9]{0,30})(\\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?") {
            prop_assert!(agrees(&text).is_ok(), "{}", agrees(&text).unwrap_err());
        }

        /// Clinger's path, whenever it answers, answers as the exact one.
        #[test]
        fn fast_path_is_the_exact_one(mantissa in "(0|[1-9][0-9]{0,17})(\\.[0-9]{1,8})?", exp in -30..30_i64) {
            if let Some(x) = fast(mantissa.as_bytes(), exp) {
                prop_assert_eq!(Some(x.to_bits()), slow(mantissa.as_bytes(), exp).map(f64::to_bits), "{}e{}", mantissa, exp);
            }
        }

        /// Every double's shortest form, its exact expansion (up to 767
        /// significant digits, padded past 800 with zeros) and that
        /// expansion cut short anywhere, with digits appended.
        #[test]
        fn any_double(bits in any::<u64>(), cut in 1..1100_usize, tail in "[0-9]{0,3}") {
            let x = f64::from_bits(bits).abs();
            if x.is_finite() {
                let exact = format!("{x:.1100e}");
                let (digits, exp) = exact.split_once('e').unwrap_or((&exact, "0"));
                let cut = cut.min(digits.len());
                for text in [
                    format!("{x:e}"),
                    exact.clone(),
                    format!("{}{tail}e{exp}", &digits[..cut].trim_end_matches('.')),
                    format!("{x:e}").replace('e', &format!("{tail}e")),
                ] {
                    prop_assert!(agrees(&text).is_ok(), "{}", agrees(&text).unwrap_err());
                }
            }
        }
    }
}
