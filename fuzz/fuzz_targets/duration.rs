//! The ISO 8601 duration parser: never panics, and parse → format → parse
//! is stable (the formatted text parses back to the same milliseconds, and
//! formatting that gives the same text again).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ojs_retry::{ErrorCode, MAX_MS, format_duration, parse_duration};
use ojs_retry_fuzz::check_error;

fuzz_target!(|data: &[u8]| {
    // Raw bytes: the parser only ever sees valid UTF-8 (it takes &str).
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
            assert_eq!(e.field(), "duration");
        }
    }
    // The other direction: any u64 formats (or is rejected above MAX_MS)
    // and reads back.
    if let Some(bytes) = data.get(..8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(bytes);
        let ms = u64::from_le_bytes(b);
        match format_duration(ms) {
            Ok(t) => assert_eq!(parse_duration(&t).ok(), Some(ms), "{ms} -> {t}"),
            Err(e) => {
                check_error(&e);
                assert!(ms > MAX_MS);
            }
        }
    }
});
