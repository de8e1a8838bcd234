//! The core's own JSON reader and writer against serde_json
//! (differential). For any text, `json::Value::from_text` must accept
//! exactly what serde_json (with `float_roundtrip`, as the core used to
//! read JSON) accepts once duplicate keys are refused at any depth, read
//! the same value (every number the same kind, u64 / i64 / f64, with the
//! same bits), and write it back as serde_json writes it. The first eight
//! bytes, as a double's bits, are also written by both (the core's own
//! shortest round-trip writer against serde_json's `zmij`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ojs_retry::json::Value;
use ojs_retry_fuzz::{same_json, strict_serde_json};

fuzz_target!(|data: &[u8]| {
    if let Some(bits) = data.get(..8) {
        let x = f64::from_le_bytes(bits.try_into().unwrap());
        if x.is_finite() {
            assert_eq!(
                Value::from(x).to_text(),
                serde_json::to_string(&x).unwrap(),
                "{x:e} written differently"
            );
        }
    }
    let text = String::from_utf8_lossy(data);
    match (Value::from_text(&text), strict_serde_json(&text)) {
        (Ok(ours), Ok(theirs)) => {
            assert!(
                same_json(&ours, &theirs),
                "values differ on {text:?}: {ours:?} / {theirs:?}"
            );
            let written = ours.to_text();
            assert_eq!(
                written,
                serde_json::to_string(&theirs).unwrap(),
                "written differently: {text:?}"
            );
            assert_eq!(
                Value::from_text(&written).as_ref(),
                Ok(&ours),
                "does not read back: {written:?}"
            );
        }
        (Err(_), Err(_)) => {}
        (ours, theirs) => panic!("disagree on {text:?}: ours {ours:?}, serde_json {theirs:?}"),
    }
});
