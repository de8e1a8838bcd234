//! The core's single-pass policy reader against the complete one
//! (differential). Whenever the fast reader returns a layer, the complete
//! reader (`PartialPolicy::from_json`: strict JSON, then every check) must
//! return the same layer, and the policy `from_json` builds must be the one
//! the complete route builds from the same document as a JSON value.
//!
//! Each input is read twice: as the document text itself (arbitrary bytes,
//! and the corpus's valid documents mutated by libFuzzer), and spliced into
//! one of the spec's valid example documents (the input picks the example,
//! the place and how much to cut; the rest is inserted), so that most
//! inputs stay close to a valid policy whatever the corpus has drifted to.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ojs_retry::{Layer, PartialPolicy, RetryPolicy};

/// Valid documents to splice into: the spec's examples, as the core's own
/// tests of the reader read them.
const EXAMPLES: [&str; 7] = ojs_retry::fuzzing::EXAMPLES;

fn check(text: &str) {
    let Some(fast) = ojs_retry::fuzzing::fast_layer(text) else {
        return;
    };
    let complete = PartialPolicy::from_json(text);
    assert_eq!(
        Ok(&fast),
        complete.as_ref(),
        "the fast reader disagrees on {text:?}"
    );
    // The whole of `from_json` (fast route) against the complete route.
    // The fast reader accepts no repeated key and nothing nested but an
    // array of strings, so serde_json's own (non-strict) value is the
    // document's.
    let value: serde_json::Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("the fast reader took invalid JSON {text:?}: {e}"));
    assert_eq!(
        RetryPolicy::from_json(text),
        RetryPolicy::from_layers(vec![Layer::Value(value.into())]),
        "from_json and the complete route disagree on {text:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    check(&String::from_utf8_lossy(data));

    // [example, place (2 bytes), cut, insertion...]
    if let [which, hi, lo, cut, insertion @ ..] = data {
        let base = EXAMPLES[usize::from(*which) % EXAMPLES.len()].as_bytes();
        let at = usize::from(u16::from_be_bytes([*hi, *lo])) % (base.len() + 1);
        let end = (at + usize::from(*cut % 16)).min(base.len());
        let mut doc = Vec::with_capacity(base.len() + insertion.len());
        doc.extend_from_slice(&base[..at]);
        doc.extend_from_slice(insertion);
        doc.extend_from_slice(&base[end..]);
        check(&String::from_utf8_lossy(&doc));
    }
});
