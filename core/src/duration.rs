//! ISO 8601 durations (spec §4, RET-02, RET-19), exact to the millisecond.
//!
//! # Grammar
//!
//! The §14 schema pattern, `P[nY][nM][nD][T[nH][nM][n[.f]S]]`:
//!
//! * at least one component; a `T` must be followed by at least one time
//!   component (`P`, `PT`, `P1`, `P1DT` are rejected);
//! * components appear in that order, each at most once, upper case only,
//!   digits are ASCII `0-9`, no sign, no spaces;
//! * a decimal fraction is allowed on seconds only, written with a point and
//!   at least one digit on each side (`PT0.5S`; `PT.5S`, `PT1.S` and
//!   `PT0,5S` are rejected); weeks (`W`) are not part of the pattern.
//!
//! # Lengths
//!
//! `S` = 1 000 ms, `M` after `T` = 60 s, `H` = 3 600 s, `D` = 24 h. Retry
//! intervals need fixed lengths, so the calendar units get fixed nominal
//! lengths too: `M` before `T` (months) = 30 days and `Y` = 365 days. The
//! spec calls date components "NOT RECOMMENDED" for retry intervals; they are
//! accepted because the schema accepts them.
//!
//! # Precision and range
//!
//! Durations are integer milliseconds. A fraction finer than a millisecond
//! must be zero (`PT0.5000S` is fine, `PT0.0005S` is an error): a sub-
//! millisecond remainder would otherwise be rounded silently. The total must
//! not exceed [`MAX_MS`] (2^53 − 1 ms, about 285 616 years, the largest
//! integer every runtime represents exactly); `P9999Y` is fine, `P9999999Y`
//! is an error.
//!
//! ```
//! use ojs_retry::{parse_duration, format_duration};
//! assert_eq!(parse_duration("PT1H30M").unwrap(), 5_400_000);
//! assert_eq!(parse_duration("PT0.5S").unwrap(), 500);
//! assert_eq!(format_duration(5_400_000).unwrap(), "PT1H30M");
//! assert!(parse_duration("PT").is_err());
//! ```

use alloc::string::String;

use crate::error::{Error, ErrorCode, quote};
use alloc::format;

/// The largest duration, delay or instant the engine accepts, in
/// milliseconds: 2^53 − 1, the largest integer that JavaScript and JSON
/// parsers everywhere represent exactly.
///
/// ```
/// use ojs_retry::{MAX_MS, format_duration};
/// assert_eq!(MAX_MS, 9_007_199_254_740_991);
/// assert!(format_duration(MAX_MS).is_ok());
/// assert!(format_duration(MAX_MS + 1).is_err());
/// ```
pub const MAX_MS: u64 = (1 << 53) - 1;

const SECOND: u128 = 1_000;
const MINUTE: u128 = 60 * SECOND;
const HOUR: u128 = 60 * MINUTE;
const DAY: u128 = 24 * HOUR;
const MONTH: u128 = 30 * DAY;
const YEAR: u128 = 365 * DAY;

/// Parses an ISO 8601 duration (see the [module docs](self)) into
/// milliseconds.
///
/// # Errors
///
/// `validation.duration_invalid` with field `"duration"` when the string is
/// not in the grammar, has a sub-millisecond remainder, or exceeds
/// [`MAX_MS`].
///
/// ```
/// assert_eq!(ojs_retry::parse_duration("P1DT12H").unwrap(), 129_600_000);
/// let err = ojs_retry::parse_duration("-PT1S").unwrap_err();
/// assert_eq!(err.code().as_str(), "validation.duration_invalid");
/// ```
pub fn parse_duration(text: &str) -> Result<u64, Error> {
    check_duration_len(text.len())?;
    parse_ms(text).map_err(|why| Error::new(ErrorCode::DurationInvalid, "duration", why))
}

/// Refuses a duration text longer than
/// [`MAX_STRING_BYTES`](crate::limits::MAX_STRING_BYTES) as
/// [`parse_duration`] does, for hosts that can measure a string before
/// copying it (`len` in UTF-8 bytes, or UTF-16 units, which are never
/// more).
///
/// # Errors
///
/// `validation.duration_invalid` at `duration`.
///
/// ```
/// use ojs_retry::duration::check_duration_len;
/// assert!(check_duration_len(6).is_ok());
/// assert_eq!(check_duration_len(1 << 20).unwrap_err().field(), Some("duration"));
/// ```
pub fn check_duration_len(len: usize) -> Result<(), Error> {
    crate::limits::check_string(len)
        .map_err(|why| Error::new(ErrorCode::DurationInvalid, "duration", why))
}

/// Formats milliseconds as the canonical duration string: time components
/// only (`H`, `M`, `S`), zero components omitted, the fraction of seconds
/// without trailing zeros, `PT0S` for zero. `P1D` therefore formats as
/// `PT24H`; parse and format round-trip every value up to [`MAX_MS`].
///
/// # Errors
///
/// `validation.invalid_argument` (field `"duration"`) above [`MAX_MS`].
///
/// ```
/// assert_eq!(ojs_retry::format_duration(1_500).unwrap(), "PT1.5S");
/// assert_eq!(ojs_retry::format_duration(86_400_000).unwrap(), "PT24H");
/// assert_eq!(ojs_retry::format_duration(0).unwrap(), "PT0S");
/// ```
pub fn format_duration(ms: u64) -> Result<String, Error> {
    if ms > MAX_MS {
        return Err(Error::arg(
            "duration",
            format!("expected at most {} ms, found {}", MAX_MS, ms),
        ));
    }
    Ok(format_ms(ms))
}

/// Infallible formatting for values already known to be in range.
pub(crate) fn format_ms(ms: u64) -> String {
    let hours = ms / 3_600_000;
    let minutes = (ms / 60_000) % 60;
    let seconds = (ms / 1_000) % 60;
    let millis = ms % 1_000;
    let mut out = String::from("PT");
    if hours > 0 {
        out.push_str(&format!("{}", hours));
        out.push('H');
    }
    if minutes > 0 {
        out.push_str(&format!("{minutes}"));
        out.push('M');
    }
    if seconds > 0 || millis > 0 || ms == 0 {
        out.push_str(&format!("{seconds}"));
        if millis > 0 {
            let frac = format!("{millis:03}");
            out.push('.');
            out.push_str(frac.trim_end_matches('0'));
        }
        out.push('S');
    }
    out
}

/// Parses a duration, returning the reason as text on failure so the caller
/// can attach the right code and field.
pub(crate) fn parse_ms(text: &str) -> Result<u64, String> {
    match single_time_component(text.as_bytes()) {
        Some(ms) => Ok(ms),
        None => parse_any(text),
    }
}

/// The usual spelling of a policy's intervals, one whole time component
/// (`PT15S`, `PT5M`, `PT1H`), read without the general parser's
/// bookkeeping (policy parsing reads two per document); `None` for
/// anything else, which [`parse_any`] reads (or rejects) instead. At most
/// nine digits, so the value (< 10^9 h) is far below [`MAX_MS`].
fn single_time_component(bytes: &[u8]) -> Option<u64> {
    let [b'P', b'T', digits @ .., designator] = bytes else {
        return None;
    };
    let unit = match designator {
        b'H' => 3_600_000,
        b'M' => 60_000,
        b'S' => 1_000,
        _ => return None,
    };
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    // With at most nine digits, `n < 10^9` and `n · unit < 3.6 · 10^15`:
    // nothing can overflow.
    let n = digits.iter().try_fold(0_u64, |n, &d| {
        d.is_ascii_digit().then(|| {
            n.wrapping_mul(10)
                .wrapping_add(u64::from(d.wrapping_sub(b'0')))
        })
    })?;
    Some(n.wrapping_mul(unit))
}

/// [`parse_ms`] for every spelling of the grammar, and every error.
fn parse_any(text: &str) -> Result<u64, String> {
    let expected =
        "expected an ISO 8601 duration such as \"PT1S\", \"PT0.5S\", \"PT1H30M\" or \"P1D\"";
    let fail = |why: &str| format!("{}, found {}: {}", expected, quote(text), why);
    let bytes = text.as_bytes();
    let mut rest = match bytes.split_first() {
        None => return Err(format!("{}, found an empty string", expected)),
        Some((b'P', rest)) => rest,
        Some(_) => return Err(fail("it must start with an upper-case 'P'")),
    };
    if rest.is_empty() {
        return Err(fail("'P' must be followed by at least one component"));
    }

    // (designator, length in ms): statics, not rebuilt on every call.
    static DATE_UNITS: [(u8, u128); 3] = [(b'Y', YEAR), (b'M', MONTH), (b'D', DAY)];
    static TIME_UNITS: [(u8, u128); 3] = [(b'H', HOUR), (b'M', MINUTE), (b'S', SECOND)];

    let mut total: u128 = 0;
    let mut in_time = false;
    let mut next_unit = 0usize; // index into the current unit table: enforces order
    let mut components = 0usize;
    let mut time_components = 0usize;

    while let Some((&first, _)) = rest.split_first() {
        if first == b'T' {
            if in_time {
                return Err(fail("'T' appears twice"));
            }
            in_time = true;
            next_unit = 0;
            rest = rest.get(1..).unwrap_or_default();
            if !rest.first().is_some_and(u8::is_ascii_digit) {
                return Err(fail(
                    "'T' must be followed by a time component such as 1H, 1M or 1S",
                ));
            }
            continue;
        }
        let (value, frac, after) = number(rest).map_err(fail)?;
        let mut value = value;
        let Some((&designator, tail)) = after.split_first() else {
            return Err(fail(
                "a number must be followed by a designator (Y, M, D, H, M or S)",
            ));
        };
        let units: &[(u8, u128)] = if in_time { &TIME_UNITS } else { &DATE_UNITS };
        let Some(pos) = units
            .iter()
            .skip(next_unit)
            .position(|(d, _)| *d == designator)
            .map(|p| p.saturating_add(next_unit))
        else {
            return Err(fail(designator_error(designator, in_time, units)));
        };
        let unit = units.get(pos).map_or(SECOND, |(_, len)| *len);
        if frac.is_some() && !(in_time && designator == b'S') {
            return Err(fail("only seconds may have a decimal fraction"));
        }
        value = value
            .checked_mul(unit)
            .ok_or_else(|| fail("the duration is too large"))?;
        if let Some(f) = frac {
            value = value.saturating_add(fraction_ms(f).map_err(fail)?);
        }
        total = total
            .checked_add(value)
            .filter(|t| *t <= u128::from(MAX_MS))
            .ok_or_else(|| {
                fail(&format!(
                    "the duration exceeds the largest accepted ({} ms)",
                    MAX_MS
                ))
            })?;
        if total > u128::from(MAX_MS) {
            return Err(fail("the duration is too large"));
        }
        components = components.saturating_add(1);
        if in_time {
            time_components = time_components.saturating_add(1);
        }
        next_unit = pos.saturating_add(1);
        rest = tail;
    }
    if components == 0 || (in_time && time_components == 0) {
        return Err(fail("expected at least one component"));
    }
    u64::try_from(total).map_err(|_| fail("the duration is too large"))
}

/// A component's number: its integer value, the digits of its fraction if
/// it has one, and the text that follows.
type Number<'a> = (u128, Option<&'a [u8]>, &'a [u8]);

/// The number at the start of `rest`, or why there is none.
fn number(rest: &[u8]) -> Result<Number<'_>, &'static str> {
    let first = rest.first().copied().unwrap_or_default();
    let int_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if int_len == 0 {
        return Err(match first {
            b'.' | b',' => "a fraction needs a digit before the decimal point",
            b'-' | b'+' => "durations have no sign",
            b'W' => "weeks are not supported; use days (7D) instead",
            _ if first.is_ascii_lowercase() => "designators must be upper case",
            _ => "expected a number before each designator",
        });
    }
    let (int_digits, after) = rest.split_at(int_len);
    let value = digits_value(int_digits).ok_or("a number is too large")?;
    match after.split_first() {
        Some((b',', _)) => Err("use a decimal point, not a comma"),
        Some((b'.', tail)) => {
            let frac_len = tail.iter().take_while(|b| b.is_ascii_digit()).count();
            if frac_len == 0 {
                return Err("a decimal point must be followed by at least one digit");
            }
            let (f, t) = tail.split_at(frac_len);
            Ok((value, Some(f), t))
        }
        _ => Ok((value, None, after)),
    }
}

/// Why `designator` cannot come next.
fn designator_error(designator: u8, in_time: bool, units: &[(u8, u128)]) -> &'static str {
    if designator.is_ascii_lowercase() {
        "designators must be upper case"
    } else if designator == b'W' {
        "weeks are not supported; use days (7D) instead"
    } else if units.iter().any(|(d, _)| *d == designator) {
        "components must appear once each, in the order Y M D T H M S"
    } else if !in_time && [b'H', b'S'].contains(&designator) {
        "hours and seconds must come after 'T'"
    } else {
        "unexpected character"
    }
}

/// Milliseconds from a fraction's first three digits; the rest must be zero.
fn fraction_ms(f: &[u8]) -> Result<u128, &'static str> {
    let mut ms: u128 = 0;
    for (i, d) in f.iter().enumerate() {
        let digit = u128::from(digit_value(*d));
        if i < 3 {
            ms = ms.saturating_mul(10).saturating_add(digit);
        } else if digit != 0 {
            return Err(
                "durations are exact to the millisecond; this one has a sub-millisecond remainder",
            );
        }
    }
    for _ in f.len()..3 {
        ms = ms.saturating_mul(10);
    }
    Ok(ms)
}

/// The value of an ASCII digit (0 for anything else; callers pass digits).
fn digit_value(d: u8) -> u32 {
    char::from(d).to_digit(10).unwrap_or(0)
}

/// The value of a run of ASCII digits, `None` past `MAX_MS` (any larger
/// number makes the duration too large anyway, whatever its unit).
fn digits_value(digits: &[u8]) -> Option<u128> {
    let mut v: u128 = 0;
    for d in digits {
        v = v
            .saturating_mul(10)
            .saturating_add(u128::from(digit_value(*d)));
        if v > u128::from(MAX_MS) {
            return None;
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The shortcut reads what the general parser reads.
        #[test]
        fn single_time_component_agrees(text in "P?T?[0-9]{0,11}[HMSD.]?[0-9]?[HMS]?") {
            if let Some(ms) = single_time_component(text.as_bytes()) {
                prop_assert_eq!(Ok(ms), parse_any(&text), "{}", text);
            }
        }
    }

    #[test]
    fn single_time_component_takes_the_usual_spellings() {
        for (text, ms) in [
            ("PT15S", 15_000),
            ("PT5M", 300_000),
            ("PT1H", 3_600_000),
            ("PT0S", 0),
            ("PT007M", 420_000),
            ("PT999999999H", 3_599_999_996_400_000),
        ] {
            assert_eq!(single_time_component(text.as_bytes()), Some(ms), "{text}");
            assert_eq!(parse_any(text), Ok(ms), "{text}");
        }
        for text in [
            "PT1000000000H",
            "PT1.5S",
            "PT1H30M",
            "P1D",
            "PTS",
            "PT1s",
            "pt1S",
        ] {
            assert_eq!(single_time_component(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn accepts_the_spec_table() {
        // §4.1 table.
        for (s, ms) in [
            ("PT0.5S", 500),
            ("PT1S", 1_000),
            ("PT5S", 5_000),
            ("PT30S", 30_000),
            ("PT1M", 60_000),
            ("PT5M", 300_000),
            ("PT15M", 900_000),
            ("PT1H", 3_600_000),
            ("PT24H", 86_400_000),
        ] {
            assert_eq!(parse_duration(s).unwrap(), ms, "{s}");
            assert_eq!(format_duration(ms).unwrap(), s);
        }
    }

    #[test]
    fn rejects_malformed() {
        for s in [
            "", "P", "PT", "P1", "PT1.S", "PT.5S", "-PT1S", "pt1s", "PT1s", " PT1S", "PT1S ",
            "PT0,5S", "P1W", "PT1H1H", "PT1M1H", "P1DT", "P1H", "PT1D", "PT1.5M", "P1.5D", "T1S",
            "P1S", "PT1", "PTS", "P1Y1Y", "PT1S1", "PT١S",
        ] {
            assert!(parse_duration(s).is_err(), "{s:?} should be rejected");
        }
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(parse_duration("PT99999999999999999999S").is_err());
        assert!(parse_duration("P9999999Y").is_err());
        assert_eq!(parse_duration("P9999Y").unwrap(), 9999 * 365 * 86_400_000);
        assert_eq!(parse_duration("PT9007199254740.991S").unwrap(), MAX_MS);
        assert!(parse_duration("PT9007199254740.992S").is_err());
    }

    #[test]
    fn sub_millisecond() {
        assert_eq!(parse_duration("PT0.5000000S").unwrap(), 500);
        assert!(parse_duration("PT0.0005S").is_err());
        assert_eq!(parse_duration("PT0.001S").unwrap(), 1);
    }
}
