//! Non-retryable error matching (spec §6.2, RET-07, RET-18).
//!
//! An error type matches an entry when it is identical to it, or when the
//! entry ends in `.*` and the error type starts with the entry minus its
//! `*` (so `auth.*` matches `auth.token_expired` but neither `auth` nor
//! `external.auth.failure`). Comparison is byte-exact: case-sensitive, no
//! Unicode normalisation. Any other `*` is an ordinary character.

/// The first pattern in `patterns` that `error_type` matches, if any.
///
/// ```
/// use ojs_retry::first_match;
/// let patterns = ["validation.payload_invalid", "auth.*"];
/// assert_eq!(first_match("auth.forbidden", &patterns), Some("auth.*"));
/// assert_eq!(first_match("auth", &patterns), None);
/// ```
#[must_use]
pub fn first_match<'p, S: AsRef<str>>(error_type: &str, patterns: &'p [S]) -> Option<&'p str> {
    patterns
        .iter()
        .map(AsRef::as_ref)
        .find(|p| pattern_matches(error_type, p))
}

/// Whether `error_type` matches any of `patterns`.
///
/// ```
/// assert!(ojs_retry::matches("resource.not_found", &["resource.not_found"]));
/// assert!(!ojs_retry::matches("external.auth.failure", &["auth.*"]));
/// ```
#[must_use]
pub fn matches<S: AsRef<str>>(error_type: &str, patterns: &[S]) -> bool {
    first_match(error_type, patterns).is_some()
}

/// [`first_match`] with its arguments held to the
/// [limits](crate::limits) first, as every host calls it: an error type
/// and each pattern at most [`MAX_STRING_BYTES`](crate::limits::MAX_STRING_BYTES),
/// at most [`MAX_ARRAY_LEN`](crate::limits::MAX_ARRAY_LEN) patterns, and
/// the patterns together a document of at most
/// [`MAX_DOCUMENT_BYTES`](crate::limits::MAX_DOCUMENT_BYTES) (one for the
/// list, one per pattern plus its bytes), as a host reads them.
///
/// # Errors
///
/// `validation.invalid_argument` at `error_type`, `patterns` or
/// `patterns[i]`.
///
/// ```
/// use ojs_retry::matching::try_first_match;
/// assert_eq!(try_first_match("auth.x", &["auth.*"])?, Some("auth.*"));
/// let long = "x".repeat(ojs_retry::limits::MAX_STRING_BYTES + 1);
/// assert_eq!(try_first_match(&long, &["auth.*"]).unwrap_err().field(), Some("error_type"));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
pub fn try_first_match<'p, S: AsRef<str>>(
    error_type: &str,
    patterns: &'p [S],
) -> Result<Option<&'p str>, crate::Error> {
    use crate::limits::{check_array, check_string};
    let arg = |path: &str, m| crate::Error::invalid_argument(path, m);
    check_string(error_type.len()).map_err(|m| arg("error_type", m))?;
    check_array(patterns.len()).map_err(|m| arg("patterns", m))?;
    let budget = crate::limits::Budget::new();
    let _ = budget.take(1);
    for (i, p) in patterns.iter().enumerate() {
        let len = p.as_ref().len();
        check_string(len)
            .and_then(|()| budget.take(len.saturating_add(1)))
            .map_err(|m| arg(&alloc::format!("patterns[{i}]"), m))?;
    }
    Ok(first_match(error_type, patterns))
}

fn pattern_matches(error_type: &str, pattern: &str) -> bool {
    match pattern.strip_suffix('*') {
        // "auth.*" -> prefix "auth."
        Some(prefix) if prefix.ends_with('.') => error_type.starts_with(prefix),
        _ => error_type == pattern,
    }
}

/// The `patterns` argument of a host's `matches` / `firstMatch`, read from
/// a document value: an array of strings (the host's walk has already held
/// it to the [limits](crate::limits)).
///
/// # Errors
///
/// `validation.invalid_argument` at `patterns`, or at `patterns[i]` for an
/// element that is not a string.
///
/// ```
/// use ojs_retry::{Value, matching::patterns_from_value};
/// let v = Value::from_json(r#"["auth.*", "x"]"#).unwrap();
/// assert_eq!(patterns_from_value(&v)?, ["auth.*", "x"]);
/// let e = patterns_from_value(&Value::from_json(r#"["a", 1]"#).unwrap()).unwrap_err();
/// assert_eq!(e.path(), Some("patterns[1]"));
/// # Ok::<(), ojs_retry::Error>(())
/// ```
pub fn patterns_from_value(
    value: &crate::Value,
) -> Result<alloc::vec::Vec<alloc::string::String>, crate::Error> {
    let arg = |path: &str, found: &crate::Value| {
        crate::Error::invalid_argument(
            path,
            alloc::format!("expected a string, found {}", found.describe()),
        )
    };
    let Some(items) = value.as_array() else {
        return Err(crate::Error::invalid_argument(
            "patterns",
            alloc::format!("expected an array of strings, found {}", value.describe()),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.as_str()
                .map(alloc::string::String::from)
                .ok_or_else(|| arg(&alloc::format!("patterns[{i}]"), p))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_table() {
        // §6.2 table.
        let p = ["validation.payload_invalid", "auth.*"];
        assert!(matches("validation.payload_invalid", &p));
        assert!(!matches("validation.schema_error", &p));
        assert!(matches("auth.token_expired", &p));
        assert!(matches("auth.forbidden", &p));
        assert!(!matches("auth", &p));
        assert!(!matches("external.auth.failure", &p));
    }

    #[test]
    fn star_elsewhere_is_literal() {
        assert!(matches("a*", &["a*"]));
        assert!(!matches("ab", &["a*"]));
        assert!(matches("*", &["*"]));
        assert!(!matches("x", &["*"]));
    }
}
