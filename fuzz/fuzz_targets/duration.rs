//! The ISO 8601 duration parser (and the RFC 3339 instant parser of the §10
//! state documents): never a panic, and parse → format → parse is stable
//! (the formatted text parses back to the same milliseconds, and formatting
//! that gives the same text again).
//!
//! This is also the target of the harness check: with
//! `OJS_FUZZ_PLANTED=1`, an input starting with `PLANTED` panics (see
//! `ojs_retry_fuzz::planted` and scripts/test-fuzz).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ojs_retry::{
    ErrorCode, MAX_INSTANT_MS, MAX_MS, format_duration, format_timestamp, parse_duration,
    parse_timestamp,
};
use ojs_retry_fuzz::{check_error, planted};

fuzz_target!(|data: &[u8]| {
    planted(data);
    // Raw bytes: the parsers only ever see valid UTF-8 (they take &str).
    let text = String::from_utf8_lossy(data);
    match parse_duration(&text) {
        Ok(ms) => {
            assert!(ms <= MAX_MS);
            let canonical = format_duration(ms).expect("an accepted duration formats");
            assert_eq!(
                parse_duration(&canonical).ok(),
                Some(ms),
                "{text:?} -> {canonical}"
            );
            assert_eq!(
                format_duration(ms).ok().as_deref(),
                Some(canonical.as_str())
            );
        }
        Err(e) => {
            check_error(&e);
            assert_eq!(e.code(), ErrorCode::DurationInvalid);
            assert_eq!(e.field(), Some("duration"));
        }
    }
    match parse_timestamp(&text) {
        Ok(ms) => {
            assert!(ms <= MAX_INSTANT_MS);
            let canonical = format_timestamp(ms).expect("an accepted instant formats");
            assert_eq!(
                parse_timestamp(&canonical).ok(),
                Some(ms),
                "{text:?} -> {canonical}"
            );
        }
        Err(e) => {
            check_error(&e);
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            assert_eq!(e.field(), Some("timestamp"));
        }
    }
    // The other direction: any u64 formats (or is refused above the bound)
    // and reads back.
    if let Some(bytes) = data.get(..8) {
        let ms = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        for ms in [ms, ms % (MAX_MS + 1), ms % (MAX_INSTANT_MS + 1)] {
            match format_duration(ms) {
                Ok(t) => assert_eq!(parse_duration(&t).ok(), Some(ms), "{ms} -> {t}"),
                Err(e) => {
                    check_error(&e);
                    assert!(ms > MAX_MS);
                }
            }
            match format_timestamp(ms) {
                Ok(t) => assert_eq!(parse_timestamp(&t).ok(), Some(ms), "{ms} -> {t}"),
                Err(e) => {
                    check_error(&e);
                    assert!(ms > MAX_INSTANT_MS);
                }
            }
        }
    }
});
