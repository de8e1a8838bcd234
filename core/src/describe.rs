//! How user values are shown inside messages.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

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

/// ` (did you mean "max_attempts"?)` when one of `known` is a likely
/// misspelling of `name` (the same in another case, or at most three edits
/// away and no more than a third of its letters), else nothing: a typo's fix
/// is said where the typo is reported.
pub(crate) fn did_you_mean(name: &str, known: &[&str]) -> String {
    let lower = name.to_lowercase();
    let most = (name.chars().count() / 3).min(3);
    let best = known
        .iter()
        .map(|k| (edits(&lower, &k.to_lowercase()), *k))
        .filter(|(d, _)| *d <= most)
        .min_by_key(|(d, _)| *d);
    match best {
        Some((_, k)) => format!(" (did you mean {}?)", quote(k)),
        None => String::new(),
    }
}

/// The Levenshtein distance between `a` and `b`, in characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = i;
        let mut left = i.saturating_add(1);
        let mut next = Vec::with_capacity(row.len());
        next.push(left);
        for (j, cb) in b.iter().enumerate() {
            let up = row.get(j.saturating_add(1)).copied().unwrap_or(usize::MAX);
            let cost = usize::from(ca != *cb);
            let here = diagonal
                .saturating_add(cost)
                .min(up.saturating_add(1))
                .min(left.saturating_add(1));
            next.push(here);
            diagonal = up;
            left = here;
        }
        row = next;
    }
    row.last().copied().unwrap_or(0)
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
    fn a_likely_misspelling_is_named() {
        let known = ["max_attempts", "max_interval", "jitter", "retry", "dead"];
        assert_eq!(
            did_you_mean("max_attempt", &known),
            " (did you mean \"max_attempts\"?)"
        );
        assert_eq!(
            did_you_mean("MAX_ATTEMPTS", &known),
            " (did you mean \"max_attempts\"?)"
        );
        assert_eq!(did_you_mean("jiter", &known), " (did you mean \"jitter\"?)");
        assert_eq!(
            did_you_mean("max_intervals", &known),
            " (did you mean \"max_interval\"?)"
        );
        // Too far, or too short to tell a typo from another word.
        assert_eq!(did_you_mean("bogus", &known), "");
        assert_eq!(did_you_mean("aa", &known), "");
        assert_eq!(did_you_mean("xyz", &known), "");
        assert_eq!(did_you_mean("ded", &known), " (did you mean \"dead\"?)");
        assert_eq!(edits("kitten", "sitting"), 3);
        assert_eq!(edits("", "abc"), 3);
        assert_eq!(edits("é", "e"), 1);
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
