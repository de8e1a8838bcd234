//! Ruby arguments to the core's types. Documents (a policy `Hash`, preset
//! options, a state, a failure's `details`) and keyword arguments go
//! through the reader ([`crate::read`]) into the core's readers; a
//! positional scalar is read here, and anything the core cannot receive
//! (a `String` where an integer is expected, text that is not UTF-8) is the
//! core's `invalid_argument` error naming the argument — never a silent
//! coercion (`"3"` is not 3, `true` is not 1, `3.5` is not 3).

use magnus::prelude::*;
use magnus::{Error, Fixnum, Float, RBignum, RString, Ruby, TryConvert, Value};
use ojs_retry::{CallOptions, ErrorCode, Failure, Fault, Layer, limits};

use crate::errors::{CoreResult, bad_argument};
use crate::read::{self, with_reader};

/// A short description of a Ruby value for messages: its class and
/// `inspect` (a long `String` by its size only: it is not copied).
pub(crate) fn describe(v: Value) -> String {
    if let Some(s) = RString::from_value(v)
        && s.len() > 64
    {
        return format!("a String of {} bytes", s.len());
    }
    let class = v.class().inspect();
    let inspect: String = v.inspect().chars().take(64).collect();
    format!("{class} {inspect}")
}

/// A non-negative integer argument (an `Integer`, or a `Float` with an
/// integral value, as in JSON); the core's `uint_from_f64` decides the
/// range, 0 ..= 2^53 − 1.
pub(crate) fn uint(ruby: &Ruby, v: Value, field: &str) -> Result<u64, Error> {
    #[allow(clippy::cast_precision_loss)] // exact below 2^53, > 2^53 − 1 above
    let x = if let Some(i) = Fixnum::from_value(v) {
        i.to_i64() as f64
    } else if RBignum::from_value(v).is_some() {
        // Beyond 62 bits: never in range; Ruby's nearest double says how far.
        f64::try_convert(v)?
    } else if let Some(f) = Float::from_value(v) {
        f.to_f64()
    } else {
        return Err(bad_argument(
            field,
            format!("expected an Integer, found {}", describe(v)),
        ))
        .rb(ruby);
    };
    ojs_retry::uint_from_f64(field, x).rb(ruby)
}

/// A `String` argument holding UTF-8 text, measured before it is copied.
pub(crate) fn text(ruby: &Ruby, v: Value, field: &str) -> Result<String, Error> {
    text_as(ruby, v, field, ErrorCode::InvalidArgument)
}

/// [`text`] whose length fault has `code` (a duration is refused as a
/// duration).
pub(crate) fn text_as(
    ruby: &Ruby,
    v: Value,
    field: &str,
    code: ErrorCode,
) -> Result<String, Error> {
    let Some(s) = RString::from_value(v) else {
        return Err(bad_argument(
            field,
            format!("expected a String, found {}", describe(v)),
        ))
        .rb(ruby);
    };
    limits::check_text_bytes(code, field, s.len()).rb(ruby)?;
    read::utf8(s).map_err(|m| bad_argument(field, m)).rb(ruby)
}

/// A policy layer: JSON text (a `String`; one whose bytes are not UTF-8 is
/// handed to the core as bytes, which reports it) or a `Hash`.
pub(crate) fn layer(ruby: &Ruby, v: Value) -> Result<Layer<'static>, Error> {
    if let Some(s) = RString::from_value(v) {
        if let Err(e) = limits::check_text_bytes(ErrorCode::RetryPolicyInvalid, "", s.len()) {
            return Ok(unreadable(&e));
        }
        return Ok(match read::utf8(s) {
            Ok(text) => Layer::Json(text.into()),
            Err(_) => Layer::JsonBytes(s.to_bytes().to_vec().into()),
        });
    }
    with_reader(ruby, |r| Ok(Layer::read(r.value(v))))
}

/// A layer the core reports as one fault of that document.
fn unreadable(e: &ojs_retry::Error) -> Layer<'static> {
    Layer::Unreadable(e.faults().first().cloned().unwrap_or(Fault {
        field: None,
        path: None,
        message: e.message().to_owned(),
    }))
}

/// The jitter source, `now` and `history_limit` keywords, read by the core
/// as one option object (its rules for `u`, `seed` — an `Integer` up to
/// 2^64 − 1 — and `key`; at most one source).
pub(crate) fn options(
    ruby: &Ruby,
    given: &[(&'static str, Option<Value>)],
) -> Result<CallOptions, Error> {
    // The common call gives none: nothing to read (the core's options of an
    // empty object are its defaults).
    if given.iter().all(|(_, v)| v.is_none()) {
        return Ok(CallOptions::default());
    }
    with_reader(ruby, |r| CallOptions::from_deserializer(r.pairs(given)))
}

/// The failure keywords (`type`, `code`, `timed_out`, `message`,
/// `details`) as one failure document, which the core checks; its attempt
/// is `attempt`. A positional attempt the caller gave (`decide`'s) is part
/// of the document, and the keys are read in name order, as every runtime
/// reads a failure, so the one 1 MiB budget runs out at the same keyword.
pub(crate) fn failure(
    ruby: &Ruby,
    given: &[(&'static str, Option<Value>)],
    attempt: u64,
    attempt_given: Option<Value>,
) -> Result<Failure, Error> {
    if given.iter().all(|(_, v)| v.is_none()) {
        let empty = ojs_retry::Value::Object(ojs_retry::Map::new());
        return Failure::from_value(&empty, Some(attempt)).rb(ruby);
    }
    let mut sorted = given.to_vec();
    sorted.push(("attempt", attempt_given));
    sorted.sort_by_key(|(name, _)| *name);
    with_reader(ruby, |r| {
        Failure::from_deserializer(r.pairs(&sorted), Some(attempt))
    })
}
