//! The size limits every document is held to, in every host.
//!
//! They are far above any real policy, state or failure (a policy is a few
//! hundred bytes; a state with the default history of 10 errors a few
//! kilobytes) and far below what takes a second to read, so a hostile or
//! broken caller (a job's metadata read back from Redis, say) gets a typed
//! error naming the limit before the engine does work in proportion to it.
//!
//! ```
//! use ojs_retry::{RetryPolicy, limits};
//! let patterns = vec!["x"; limits::MAX_ARRAY_LEN + 1];
//! let doc = serde_json::json!({ "non_retryable_errors": patterns });
//! let err = RetryPolicy::from_json(&doc.to_string()).unwrap_err();
//! assert!(err.message().contains("at most 10000 elements"));
//! // A host value is refused at the field that is too long.
//! let err = RetryPolicy::from_deserializer(&doc).unwrap_err();
//! assert_eq!(err.path(), Some("non_retryable_errors"));
//! ```

use core::cell::Cell;

/// The largest document: its JSON text in bytes or, for a value a host
/// passes, one per value plus the UTF-8 bytes of its strings and keys.
pub const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// The longest string (a key, an error type, a message, a job id used as
/// a jitter key), in UTF-8 bytes.
pub const MAX_STRING_BYTES: usize = 1 << 16;

/// The most elements of an array (patterns, a batch of retry numbers, a
/// history).
pub const MAX_ARRAY_LEN: usize = 10_000;

/// The most ancestors a failure's error type may name (a Python class's
/// MRO is rarely a tenth of it): each is matched against every rule of a
/// preset, so this bounds that work.
pub const MAX_ANCESTORS: usize = 64;

/// The most members of an object.
pub const MAX_OBJECT_LEN: usize = 10_000;

pub use crate::error::MAX_FAULTS;

/// The most layers one policy merges (defaults ← queue ← job is two). All
/// the layers of one merge together are held to [`MAX_DOCUMENT_BYTES`]
/// too, so a merge reads at most one document's worth, however many times
/// a caller passes the same object.
pub const MAX_LAYERS: usize = 16;

/// What is left of [`MAX_DOCUMENT_BYTES`] while one document is read.
pub(crate) struct Budget(Cell<usize>);

impl Budget {
    pub(crate) fn new() -> Self {
        Self(Cell::new(MAX_DOCUMENT_BYTES))
    }

    /// Takes `n` bytes from the budget, or says the document is too large.
    pub(crate) fn take(&self, n: usize) -> Result<(), alloc::string::String> {
        match self.0.get().checked_sub(n) {
            Some(left) => {
                self.0.set(left);
                Ok(())
            }
            None => Err(too_large()),
        }
    }
}

pub(crate) fn too_large() -> alloc::string::String {
    alloc::format!("expected a document of at most {MAX_DOCUMENT_BYTES} bytes, found a larger one")
}

/// The fault of a string longer than [`MAX_STRING_BYTES`]; `len` is what
/// the host could measure (UTF-8 bytes, or UTF-16 units, which are never
/// more than the UTF-8 bytes of the same text). Public so that a host
/// deserializer (the Ruby binding's) can refuse a long string before it
/// copies it, with the message the core's reader gives after the copy.
///
/// # Errors
///
/// The fault's message.
///
/// ```
/// use ojs_retry::limits::{MAX_STRING_BYTES, check_string};
/// assert!(check_string(MAX_STRING_BYTES).is_ok());
/// assert!(check_string(MAX_STRING_BYTES + 1).unwrap_err().contains("at most 65536 bytes"));
/// ```
pub fn check_string(len: usize) -> Result<(), alloc::string::String> {
    if len > MAX_STRING_BYTES {
        return Err(alloc::format!(
            "expected a string of at most {MAX_STRING_BYTES} bytes, found one of {len}"
        ));
    }
    Ok(())
}

/// The fault of an array longer than [`MAX_ARRAY_LEN`].
pub(crate) fn check_array(len: usize) -> Result<(), alloc::string::String> {
    if len > MAX_ARRAY_LEN {
        return Err(alloc::format!(
            "expected an array of at most {MAX_ARRAY_LEN} elements, found {len}"
        ));
    }
    Ok(())
}

/// The fault of an object with more than [`MAX_OBJECT_LEN`] members.
pub(crate) fn check_object(len: usize) -> Result<(), alloc::string::String> {
    if len > MAX_OBJECT_LEN {
        return Err(alloc::format!(
            "expected an object of at most {MAX_OBJECT_LEN} members, found {len}"
        ));
    }
    Ok(())
}

/// A host's own array argument (a list of layers) held to
/// [`MAX_ARRAY_LEN`] before its elements are read.
///
/// # Errors
///
/// `validation.invalid_argument` at `field`.
///
/// ```
/// use ojs_retry::limits::{MAX_ARRAY_LEN, check_argument_len};
/// assert!(check_argument_len("layers", MAX_ARRAY_LEN).is_ok());
/// assert_eq!(check_argument_len("layers", 1 << 32).unwrap_err().field(), Some("layers"));
/// ```
pub fn check_argument_len(field: &str, len: usize) -> Result<(), crate::Error> {
    check_array(len).map_err(|m| crate::Error::invalid_argument(field, m))
}

/// A list of policy layers held to [`MAX_LAYERS`] before any is read.
///
/// # Errors
///
/// `validation.invalid_argument` at `layers`.
///
/// ```
/// use ojs_retry::limits::{MAX_LAYERS, check_layers};
/// assert!(check_layers(MAX_LAYERS).is_ok());
/// assert_eq!(check_layers(MAX_LAYERS + 1).unwrap_err().field(), Some("layers"));
/// ```
pub fn check_layers(len: usize) -> Result<(), crate::Error> {
    if len > MAX_LAYERS {
        return Err(crate::Error::invalid_argument(
            "layers",
            alloc::format!("expected at most {MAX_LAYERS} policy layers, found {len}"),
        ));
    }
    Ok(())
}

/// What a value counts against [`MAX_DOCUMENT_BYTES`], as the readers
/// count it: one per value plus the UTF-8 bytes of its strings and keys.
/// Counting stops once it passes `cap` (the answer is then some number
/// above `cap`), so the work is bounded by `cap`, not by the value.
///
/// ```
/// use ojs_retry::{Value, limits::document_size};
/// let v = Value::from_json(r#"{"ab": ["xyz", 1]}"#).unwrap();
/// assert_eq!(document_size(&v, usize::MAX), 1 + 2 + 1 + 1 + 3 + 1);
/// assert!(document_size(&v, 3) > 3);
/// ```
#[must_use]
pub fn document_size(value: &crate::Value, cap: usize) -> usize {
    use crate::Value;
    // An explicit stack: a value built in Rust may nest deeper than the
    // readers allow.
    let mut stack = alloc::vec![value];
    let mut size: usize = 0;
    while let Some(v) = stack.pop() {
        size = size.saturating_add(1);
        match v {
            Value::String(s) => size = size.saturating_add(s.len()),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => {
                for (k, item) in map {
                    size = size.saturating_add(k.len());
                    stack.push(item);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
        if size > cap {
            break;
        }
    }
    size
}

/// The layers of one merge, given each one's size, held to
/// [`MAX_DOCUMENT_BYTES`] together: the first layer past the budget is a
/// fault of that layer's whole document (1-based in the message).
pub(crate) fn check_layers_total(
    sizes: impl Iterator<Item = usize>,
    n: usize,
) -> Result<(), crate::Error> {
    let mut total: usize = 0;
    for (i, size) in sizes.enumerate() {
        total = total.saturating_add(size);
        if total > MAX_DOCUMENT_BYTES {
            let which = if n > 1 {
                alloc::format!("layer {}: ", i.saturating_add(1))
            } else {
                alloc::string::String::new()
            };
            return Err(crate::Error::new(
                crate::ErrorCode::RetryPolicyInvalid,
                "",
                alloc::format!(
                    "{which}expected layers of at most {MAX_DOCUMENT_BYTES} bytes together, found more by this layer"
                ),
            ));
        }
    }
    Ok(())
}

/// A host's string argument (an error type, a document's JSON text)
/// measured in UTF-8 bytes before it is copied: nothing the engine reads is
/// longer than [`MAX_DOCUMENT_BYTES`], so a longer one is refused as it is.
/// (A host that measures its strings otherwise checks its own measure
/// against the same limit.)
///
/// # Errors
///
/// `code` at `path` (`""`: the whole document).
///
/// ```
/// use ojs_retry::{ErrorCode, limits::check_text_bytes};
/// assert!(check_text_bytes(ErrorCode::InvalidArgument, "key", 12).is_ok());
/// let e = check_text_bytes(ErrorCode::InvalidArgument, "key", 1 << 21).unwrap_err();
/// assert_eq!(e.field(), Some("key"));
/// ```
pub fn check_text_bytes(
    code: crate::ErrorCode,
    path: &str,
    bytes: usize,
) -> Result<(), crate::Error> {
    if bytes > MAX_DOCUMENT_BYTES {
        return Err(crate::Error::new(
            code,
            path,
            alloc::format!(
                "expected a string of at most {MAX_DOCUMENT_BYTES} bytes, found one of {bytes}"
            ),
        ));
    }
    Ok(())
}
