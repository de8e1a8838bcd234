//! Instants: Unix epoch milliseconds, rendered as RFC 3339 UTC.
//!
//! Hand-written (Howard Hinnant's days-from-civil algorithm) rather than a
//! date crate because the core is `no_std`, needs only UTC at millisecond
//! precision, and must give the same text in every runtime; tests check it
//! against `chrono`.

use alloc::string::String;

use crate::error::{Error, quote};
use alloc::format;

/// The largest instant accepted: 9999-12-31T23:59:59.999Z, the last one RFC
/// 3339 can write. `now` must lie in `[0, MAX_INSTANT_MS]`; a
/// `next_retry_at` that would pass it saturates to it.
///
/// ```
/// use ojs_retry::{MAX_INSTANT_MS, format_timestamp};
/// assert_eq!(format_timestamp(MAX_INSTANT_MS)?, "9999-12-31T23:59:59.999Z");
/// assert!(format_timestamp(MAX_INSTANT_MS + 1).is_err());
/// # Ok::<(), ojs_retry::Error>(())
/// ```
pub const MAX_INSTANT_MS: u64 = 253_402_300_799_999;

/// Checks that `now` is a representable instant.
pub(crate) fn check_instant(field: &str, ms: u64) -> Result<u64, Error> {
    if ms > MAX_INSTANT_MS {
        return Err(Error::arg(
            field,
            format!(
                "expected epoch milliseconds between 0 and {} (9999-12-31T23:59:59.999Z), found {}",
                MAX_INSTANT_MS, ms
            ),
        ));
    }
    Ok(ms)
}

/// Formats epoch milliseconds as RFC 3339 UTC with milliseconds, e.g.
/// `2026-02-12T10:31:05.250Z` (the form JavaScript's `toISOString` gives).
///
/// # Errors
///
/// `validation.invalid_argument` past [`MAX_INSTANT_MS`].
///
/// ```
/// assert_eq!(ojs_retry::format_timestamp(1_770_892_265_250).unwrap(), "2026-02-12T10:31:05.250Z");
/// ```
pub fn format_timestamp(ms: u64) -> Result<String, Error> {
    check_instant("timestamp", ms)?;
    Ok(format_ms(ms))
}

// Calendar arithmetic on bounded values: ms ≤ MAX_INSTANT_MS keeps every
// intermediate below 2^48, far from overflow.
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn format_ms(ms: u64) -> String {
    let days = ms / 86_400_000;
    let rem = ms % 86_400_000;
    let (y, m, d) = civil_from_days(days);
    // Digits pushed one by one (no `format!` per field: a failed job's
    // state writes two of these).
    let mut out = String::with_capacity(24);
    for (n, width, after) in [
        (y, 4, '-'),
        (m, 2, '-'),
        (d, 2, 'T'),
        (rem / 3_600_000, 2, ':'),
        ((rem / 60_000) % 60, 2, ':'),
        ((rem / 1_000) % 60, 2, '.'),
        (rem % 1_000, 3, 'Z'),
    ] {
        push_padded(&mut out, n, width);
        out.push(after);
    }
    out
}

/// Pushes `n` in decimal, zero-padded to `width` digits (wider when `n`
/// needs more, as `{n:0width$}`).
#[allow(clippy::arithmetic_side_effects)] // at most 20 digits: 10^19 < 2^64; div ≥ 1
fn push_padded(out: &mut String, n: u64, width: u32) {
    let mut digits = 1;
    let mut p = 10u64;
    while digits < 20 && p <= n {
        digits += 1;
        p = p.saturating_mul(10);
    }
    for _ in digits..width {
        out.push('0');
    }
    let mut div = 10u64.pow(digits - 1);
    while div > 0 {
        let digit = u8::try_from((n / div) % 10).unwrap_or(0);
        out.push(char::from(b'0' + digit));
        div /= 10;
    }
}

/// Parses an RFC 3339 timestamp (`2026-02-12T10:31:05Z`,
/// `2026-02-12T11:31:05.250+01:00`) into epoch milliseconds. Instants are
/// exact to the millisecond, as durations are: digits past the third of
/// the fraction must be zero (`.2500` is fine, `.2501` is an error), since
/// a sub-millisecond remainder would otherwise be rounded silently.
///
/// # Errors
///
/// `validation.invalid_argument` for text that is not RFC 3339, has a
/// sub-millisecond remainder, or is an instant outside 1970-01-01 …
/// 9999-12-31.
///
/// ```
/// assert_eq!(ojs_retry::parse_timestamp("2026-02-12T10:31:05.250Z").unwrap(), 1_770_892_265_250);
/// assert_eq!(ojs_retry::parse_timestamp("2026-02-12T11:31:05.25+01:00").unwrap(), 1_770_892_265_250);
/// assert_eq!(ojs_retry::parse_timestamp("2026-02-12T10:31:05.2500Z").unwrap(), 1_770_892_265_250);
/// assert!(ojs_retry::parse_timestamp("2026-02-12T10:31:05.2501Z").is_err());
/// ```
pub fn parse_timestamp(text: &str) -> Result<u64, Error> {
    parse_ms(text).map_err(|why| Error::arg("timestamp", why))
}

// Operands come from fixed-width digit fields (at most 4 digits) and indices
// bounded by the text's length, so every intermediate stays below 2^50.
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn parse_ms(text: &str) -> Result<u64, String> {
    let fail = |why: &str| {
        format!(
            "expected an RFC 3339 timestamp such as \"2026-02-12T10:31:05.250Z\", found {}: {}",
            quote(text),
            why
        )
    };
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<u64> {
        let s = b.get(from..from + len)?;
        s.iter().try_fold(0u64, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + u64::from(c - b'0'))
        })
    };
    // `any`, not `contains`: a byte slice's is a `memchr` (0.4 KB of wasm).
    let sep = |at: usize, allowed: &[u8]| b.get(at).is_some_and(|c| allowed.iter().any(|a| a == c));
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        num(0, 4),
        num(5, 2),
        num(8, 2),
        num(11, 2),
        num(14, 2),
        num(17, 2),
    ) else {
        return Err(fail("expected YYYY-MM-DDTHH:MM:SS"));
    };
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return Err(fail("expected YYYY-MM-DDTHH:MM:SS"));
    }
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return Err(fail("no such date"));
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Err(fail("no such time of day (leap seconds are not accepted)"));
    }
    let mut i = 19;
    let mut millis = 0u64;
    if sep(i, b".") {
        i += 1;
        let start = i;
        let mut remainder = false;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            let digit = u64::from(c - b'0');
            if i - start < 3 {
                millis = millis * 10 + digit;
            } else if digit != 0 {
                remainder = true;
            }
            i += 1;
        }
        let digits = i - start;
        if digits == 0 {
            return Err(fail("a decimal point must be followed by digits"));
        }
        if remainder {
            return Err(fail(
                "timestamps are exact to the millisecond; this one has a sub-millisecond remainder",
            ));
        }
        for _ in digits..3 {
            millis *= 10;
        }
    }
    let offset_min: i64 = match b.get(i..) {
        Some(b"Z" | b"z") => 0,
        Some([sign @ (b'+' | b'-'), _, _, b':', _, _]) => {
            let (Some(h), Some(m)) = (num(i + 1, 2), num(i + 4, 2)) else {
                return Err(fail("bad UTC offset"));
            };
            if h > 23 || m > 59 {
                return Err(fail("bad UTC offset"));
            }
            let o = i64::try_from(h * 60 + m).unwrap_or(0);
            if *sign == b'-' { -o } else { o }
        }
        _ => {
            return Err(fail(
                "expected 'Z' or a UTC offset such as +01:00 at the end",
            ));
        }
    };
    let days = days_from_civil(year, month, day);
    let local = i128::from(days) * 86_400_000
        + i128::from(hour * 3_600_000 + minute * 60_000 + second * 1_000 + millis);
    let utc = local - i128::from(offset_min) * 60_000;
    u64::try_from(utc)
        .ok()
        .filter(|ms| *ms <= MAX_INSTANT_MS)
        .ok_or_else(|| fail("the instant is outside 1970-01-01 .. 9999-12-31"))
}

fn is_leap(y: u64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: u64, m: u64) -> u64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (negative before) for a proleptic Gregorian date
/// of a four-digit year.
#[allow(clippy::arithmetic_side_effects)] // 4-digit years: every value < 2^32
fn days_from_civil(y: u64, m: u64, d: u64) -> i64 {
    // Shift so the year starts in March; 0000-03-01 is day 0 of era 0.
    let y = if m <= 2 { y + 400 - 1 } else { y + 400 };
    let era = y / 400;
    let yoe = y % 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    // 719_468 days from 0000-03-01 to 1970-01-01, plus the era we added.
    // Four-digit years keep every value far inside i64.
    i64::try_from(era * 146_097 + doe).unwrap_or(i64::MAX) - (719_468 + 146_097)
}

#[allow(clippy::arithmetic_side_effects)] // days ≤ u64::MAX / 86 400 000 < 2^38: no product overflows
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, SecondsFormat};

    #[test]
    fn matches_chrono() {
        let mut ms = 0u64;
        while ms <= MAX_INSTANT_MS {
            let ours = format_ms(ms);
            let theirs = DateTime::from_timestamp_millis(i64::try_from(ms).unwrap())
                .unwrap()
                .to_rfc3339_opts(SecondsFormat::Millis, true);
            assert_eq!(ours, theirs);
            assert_eq!(parse_ms(&ours).unwrap(), ms);
            ms += 7_777_777_777_u64 + ms / 3;
        }
        assert_eq!(format_ms(MAX_INSTANT_MS), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn parse_forms() {
        assert_eq!(parse_ms("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(parse_ms("2026-02-12T10:31:05Z").unwrap(), 1_770_892_265_000);
        assert_eq!(
            parse_ms("2026-02-12T10:31:05.250000Z").unwrap(),
            1_770_892_265_250
        );
        for sub_ms in [
            "2026-02-12T10:31:05.2501Z",
            "2026-02-12T10:31:05.9999Z",
            "2026-02-12T10:31:05.0000001Z",
        ] {
            let why = parse_ms(sub_ms).unwrap_err();
            assert!(why.contains("sub-millisecond remainder"), "{why}");
        }
        assert!(parse_ms("1969-12-31T23:59:59Z").is_err());
        assert!(parse_ms("2026-02-30T00:00:00Z").is_err());
        assert!(parse_ms("2026-02-12T10:31:60Z").is_err());
        assert!(parse_ms("2026-02-12T10:31:05").is_err());
        assert!(parse_ms("2026-02-12").is_err());
        assert!(parse_ms("").is_err());
    }
}
