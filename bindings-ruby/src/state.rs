//! `RetryState` and `Reservation`: the two mutable classes. Each guards its
//! core value with a mutex, so one instance may be shared between threads
//! (Ruby's threads, and any future caller that releases the GVL); no Ruby
//! code runs while it is held.

use std::sync::{Mutex, MutexGuard};

use magnus::prelude::*;
use magnus::scan_args::{get_kwargs, scan_args};
use magnus::{Error, RHash, RString, Ruby, TryConvert, Value};
use ojs_retry::{ErrorCode, Heartbeat, limits};

use crate::args;
use crate::convert::{Keys, serialize};
use crate::errors::CoreResult;
use crate::policy::{Decision, RetryPolicy, failure_kw, split_failure};
use crate::read::{self, with_reader};

/// Locks a mutex; the core never panics while one is held, and a poisoned
/// guard still holds a consistent value (every mutation is one assignment).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The `history_limit:` keyword, read by the core's option reader (`nil`
/// or absent: the default, 10).
fn history_limit(ruby: &Ruby, kw: RHash) -> Result<Option<usize>, Error> {
    let kw = get_kwargs::<_, (), (Option<Value>,), ()>(kw, &[], &["history_limit"])?;
    let (limit,) = kw.optional;
    Ok(args::options(ruby, &[("history_limit", limit)])?.history_limit)
}

/// `now`: epoch milliseconds; `nil` (or absent) reads the system clock.
fn now(ruby: &Ruby, v: Option<Value>) -> Result<u64, Error> {
    match v.filter(|v| !v.is_nil()) {
        Some(v) => args::uint(ruby, v, "now"),
        None => crate::clock_ms(ruby),
    }
}

/// Per-job retry state (spec §10): the attempt that last ran, the bounded
/// error history, `next_retry_at`. Each call is atomic across threads.
#[magnus::wrap(class = "OjsRetry::RetryState", free_immediately, size)]
pub(crate) struct RetryState {
    inner: Mutex<ojs_retry::RetryState>,
}

impl RetryState {
    pub(crate) fn wrap(inner: ojs_retry::RetryState) -> Self {
        Self {
            inner: Mutex::new(inner),
        }
    }

    /// `RetryState.new(history_limit: 10)`.
    pub(crate) fn new(ruby: &Ruby, args: &[Value]) -> Result<Self, Error> {
        let args = scan_args::<(), (), (), (), RHash, ()>(args)?;
        let state = ojs_retry::RetryState::new();
        let state = match history_limit(ruby, args.keywords)? {
            Some(limit) => state.with_history_limit(limit).rb(ruby)?,
            None => state,
        };
        Ok(Self::wrap(state))
    }

    /// `RetryState.from_json(state, history_limit: 10)`: the §10 document
    /// as JSON text or a `Hash`.
    pub(crate) fn from_json(ruby: &Ruby, args: &[Value]) -> Result<Self, Error> {
        let args = scan_args::<(Value,), (), (), (), RHash, ()>(args)?;
        let (state,) = args.required;
        let limit = history_limit(ruby, args.keywords)?
            .unwrap_or(ojs_retry::RetryState::new().history_limit());
        let inner = if let Some(s) = RString::from_value(state) {
            limits::check_text_bytes(ErrorCode::StateInvalid, "", s.len()).rb(ruby)?;
            let text = read::utf8(s)
                .map_err(|m| ojs_retry::Error::new(ErrorCode::StateInvalid, "", m))
                .rb(ruby)?;
            ojs_retry::RetryState::from_json(&text, limit).rb(ruby)?
        } else {
            with_reader(ruby, |r| {
                ojs_retry::RetryState::from_deserializer(r.value(state), limit)
            })?
        };
        Ok(Self::wrap(inner))
    }

    pub(crate) fn attempt(&self) -> u64 {
        lock(&self.inner).attempt()
    }
    pub(crate) fn next_attempt(&self) -> u64 {
        lock(&self.inner).next_attempt()
    }
    pub(crate) fn next_retry_at(&self) -> Option<u64> {
        lock(&self.inner).next_retry_at()
    }
    pub(crate) fn terminal(&self) -> Option<&'static str> {
        lock(&self.inner).terminal().map(ojs_retry::Action::as_str)
    }
    pub(crate) fn history_limit(&self) -> usize {
        lock(&self.inner).history_limit()
    }
    /// The error history, oldest first: `Hash`es with `Symbol` keys and
    /// `timestamp_ms` (epoch ms).
    pub(crate) fn errors(ruby: &Ruby, rb_self: &Self) -> Result<Value, Error> {
        let records: Vec<ojs_retry::ErrorRecord> = lock(&rb_self.inner).errors().cloned().collect();
        let cased: Vec<_> = records.iter().map(ojs_retry::RecordMs).collect();
        serialize(ruby, &cased, Keys::Symbols)
    }

    /// `record_failure(policy, attempt = nil, **failure)`: records that an
    /// attempt failed — by default the next one — and returns the decision;
    /// the failure's keywords are those of `RetryPolicy#decide`.
    pub(crate) fn record_failure(
        ruby: &Ruby,
        rb_self: &Self,
        args: &[Value],
    ) -> Result<Decision, Error> {
        let args = scan_args::<(Value,), (Option<Value>,), (), (), RHash, ()>(args)?;
        let (policy,) = args.required;
        let policy = <&RetryPolicy>::try_convert(policy)?;
        let (attempt,) = args.optional;
        // Every Ruby value is read before the lock is taken.
        let attempt = attempt
            .filter(|a| !a.is_nil())
            .map(|a| args::uint(ruby, a, "attempt"))
            .transpose()?;
        let kw = args.keywords;
        let (failure, options) = split_failure(&failure_kw(ruby, kw)?);
        // The attempt is filled in under the lock (0: a placeholder).
        let mut failure = args::failure(ruby, &failure, 0, None)?;
        let opts = args::options(ruby, &options)?;
        let now = opts.now.map_or_else(|| crate::clock_ms(ruby), Ok)?;
        let result = {
            let mut state = lock(&rb_self.inner);
            // The next attempt read under the lock: concurrent callers each
            // record their own.
            failure.attempt = attempt.unwrap_or(state.next_attempt());
            state.record_failure(&policy.inner, &failure, now, opts.jitter_or_entropy())
        };
        Ok(Decision {
            inner: result.rb(ruby)?,
        })
    }

    /// `to_json(*)`: as `RetryPolicy#to_json`.
    pub(crate) fn to_json(&self, _state: &[Value]) -> String {
        lock(&self.inner).to_json()
    }
    pub(crate) fn to_h(ruby: &Ruby, rb_self: &Self) -> Result<Value, Error> {
        let state = lock(&rb_self.inner).clone();
        serialize(ruby, &state, Keys::Strings)
    }
    pub(crate) fn inspect(&self) -> String {
        format!("#<OjsRetry::RetryState {}>", lock(&self.inner).to_json())
    }
}

/// A visibility-timeout reservation (spec §9.2, §9.3); heartbeats extend it.
#[magnus::wrap(class = "OjsRetry::Reservation", free_immediately, size)]
pub(crate) struct Reservation {
    inner: Mutex<ojs_retry::Reservation>,
}

impl Reservation {
    /// `Reservation.new(attempt, visibility_timeout_ms, now = nil)`.
    pub(crate) fn new(ruby: &Ruby, args: &[Value]) -> Result<Self, Error> {
        let args = scan_args::<(Value, Value), (Option<Value>,), (), (), (), ()>(args)?;
        let (attempt, timeout) = args.required;
        let attempt = args::uint(ruby, attempt, "attempt")?;
        let timeout = args::uint(ruby, timeout, "visibility_timeout_ms")?;
        let now = now(ruby, args.optional.0)?;
        let inner = ojs_retry::Reservation::new(attempt, now, timeout).rb(ruby)?;
        Ok(Self {
            inner: Mutex::new(inner),
        })
    }
    pub(crate) fn attempt(&self) -> u64 {
        lock(&self.inner).attempt()
    }
    pub(crate) fn visibility_timeout_ms(&self) -> u64 {
        lock(&self.inner).visibility_timeout_ms()
    }
    pub(crate) fn deadline(&self) -> u64 {
        lock(&self.inner).deadline()
    }

    /// `heartbeat(now = nil)`: `["extended", deadline]`, or
    /// `["expired", nil]` once `now` reached the deadline.
    pub(crate) fn heartbeat(
        ruby: &Ruby,
        rb_self: &Self,
        args: &[Value],
    ) -> Result<(&'static str, Option<u64>), Error> {
        let now = now(ruby, optional_now(args)?)?;
        let result = lock(&rb_self.inner).heartbeat(now);
        Ok(match result.rb(ruby)? {
            Heartbeat::Extended { deadline } => ("extended", Some(deadline)),
            Heartbeat::Expired => ("expired", None),
        })
    }

    /// `expired?(now = nil)`: whether `now` reached the deadline.
    pub(crate) fn is_expired(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<bool, Error> {
        let now = now(ruby, optional_now(args)?)?;
        let result = lock(&rb_self.inner).is_expired(now);
        result.rb(ruby)
    }

    /// `expiry(now = nil)`: `{attempt: n, timed_out: true}` once expired —
    /// the failure to `decide` — else `nil`.
    pub(crate) fn expiry(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<Value, Error> {
        let now = now(ruby, optional_now(args)?)?;
        let result = lock(&rb_self.inner).expiry(now);
        let Some(failure) = result.rb(ruby)? else {
            return Ok(ruby.qnil().as_value());
        };
        let h = ruby.hash_new();
        h.aset(ruby.to_symbol("attempt"), failure.attempt)?;
        h.aset(ruby.to_symbol("timed_out"), failure.timed_out)?;
        Ok(h.as_value())
    }

    pub(crate) fn inspect(&self) -> String {
        let r = lock(&self.inner);
        format!(
            "#<OjsRetry::Reservation attempt={} visibility_timeout_ms={} deadline={}>",
            r.attempt(),
            r.visibility_timeout_ms(),
            r.deadline()
        )
    }
}

fn optional_now(args: &[Value]) -> Result<Option<Value>, Error> {
    let args = scan_args::<(), (Option<Value>,), (), (), (), ()>(args)?;
    Ok(args.optional.0)
}
