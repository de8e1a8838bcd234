//! How user values are shown inside messages.

use alloc::format;
use alloc::string::String;

/// A double for messages, spelled as JavaScript spells it: `NaN`,
/// `Infinity`, `-Infinity`, `2.5`, `-1`, `1e300`.
pub(crate) fn show_f64(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let text = serde_json::to_string(&x).unwrap_or_default();
    match text.strip_suffix(".0") {
        Some(integral) => integral.into(),
        None => text,
    }
}

/// Quotes a user string for a message, escaped as in a JSON document, and
/// shortened so a 10 MB input does not produce a 10 MB message.
pub(crate) fn quote(s: &str) -> String {
    const MAX: usize = 64;
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => {
            let head = serde_json::to_string(s.get(..cut).unwrap_or("")).unwrap_or_default();
            let head = head.strip_suffix('"').unwrap_or(&head);
            format!("{head}...\" ({} bytes)", s.len())
        }
        None => serde_json::to_string(s).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_escapes_as_json_and_shortens() {
        assert_eq!(quote("it's"), "\"it's\"");
        assert_eq!(quote("a\"b\\c\nd\u{1}é"), "\"a\\\"b\\\\c\\nd\\u0001é\"");
        let long = "é".repeat(70);
        let q = quote(&long);
        assert_eq!(q, alloc::format!("\"{}...\" (140 bytes)", "é".repeat(64)));
        assert_eq!(quote(""), "\"\"");
    }

    #[test]
    fn floats_in_messages() {
        let cases = [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (2.5, "2.5"),
            (-1.0, "-1"),
            (3.0, "3"),
            (1e300, "1e+300"),
            (0.1, "0.1"),
            (9_007_199_254_740_992.0, "9007199254740992"),
        ];
        for (x, text) in cases {
            assert_eq!(show_f64(x), text);
        }
    }
}
