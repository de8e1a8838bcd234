//! The failure transaction: the one step where a queue's job fails.
//!
//! A queue knows, when a handler fails: its own defaults, the policy layer
//! the job carries (absent, stale or invalid), the §10 state the job
//! carries (absent, behind or ahead of the queue's counter, unreadable),
//! the queue's attempt counter, the failure, the job id and the time.
//! [`Transaction::run`] turns that into an [`Outcome`] — what to do, when,
//! why, the state to store and, for a dead letter, the record to write —
//! and is **total**: it never returns an error for runtime data.
//!
//! Strictness is for configuration (a queue validates its defaults when it
//! starts and a job's layer when it is enqueued); at failure time a fault
//! becomes a defined outcome and a [`Note`]:
//!
//! | what the queue passes | what happens | note |
//! |---|---|---|
//! | a layer the defaults refuse (or defaults that are themselves invalid) | `dead_letter`, reason `policy_invalid` naming the fault's code and field | `policy_refused` |
//! | a message or error type over [`MAX_STRING_BYTES`](crate::limits::MAX_STRING_BYTES) | truncated: its first `MAX_STRING_BYTES − 43` bytes (fewer, to end on a character boundary) then ` ... [N bytes truncated]`, N the bytes cut | `message_truncated`, `type_truncated` |
//! | more than [`MAX_ANCESTORS`](crate::limits::MAX_ANCESTORS) ancestors, or an empty or over-long one | the nearest `MAX_ANCESTORS`, without the empty or over-long ones | `ancestors_trimmed` |
//! | an empty error type | recorded as [`UNKNOWN_ERROR_TYPE`](crate::state::UNKNOWN_ERROR_TYPE) | `type_empty` |
//! | details that cannot be read, are not finite, or are larger than [`MAX_DETAILS_BYTES`] | dropped | `details_dropped` |
//! | an unknown handler code, or a code on a timed-out reservation | ignored: the policy decides | `code_ignored` |
//! | a state that cannot be read | a new state | `state_unreadable` |
//! | a state whose next attempt is not the queue's counter (a job re-enqueued by hand, a killed worker, a redelivered failure), or one already terminal | rebased: records of later attempts dropped, the rest kept | `state_rebased` |
//! | attempt 0, or beyond 2^53 − 1 | attempt 1, or 2^53 − 1 | `attempt_out_of_range` |
//! | a jitter key over the string limit | its first [`MAX_STRING_BYTES`](crate::limits::MAX_STRING_BYTES) bytes | `key_truncated` |
//! | `now` past [`MAX_INSTANT_MS`](crate::MAX_INSTANT_MS) | that instant | `now_out_of_range` |
//! | a [`history_limit`](Transaction::history_limit) set outside 10 ..= 10 000 (not through [`Transaction::with_history_limit`], which refuses it) | the nearest of the two | `history_limit_out_of_range` |
//! | a job payload (for the dead-letter record) that cannot be read | left out (`null`) | `job_dropped` |
//! | a state whose JSON would exceed [`MAX_STATE_BYTES`] | oldest record first, until it fits: details dropped; then messages shortened to 1 024 bytes the same way; then the oldest records dropped (the newest is kept); then types shortened | `state_budget` |
//!
//! Everything the transaction writes reads back: the state text is always
//! accepted by [`RetryState::from_json`](crate::RetryState::from_json) with
//! the same history limit and gives the same state.
//!
//! ```
//! use ojs_retry::transaction::{FailureReport, Transaction};
//! use ojs_retry::{Action, Layer};
//!
//! let defaults = [Layer::Json(r#"{"max_attempts": 3, "jitter": false}"#.into())];
//! let mut t = Transaction::new(&defaults, 1, "job-1", 1_770_892_265_000);
//! t.failure = FailureReport { error_type: Some("net.reset".into()), ..FailureReport::default() };
//! let out = t.run();
//! assert_eq!((out.decision.action, out.decision.delay_ms), (Action::Retry, Some(1_000)));
//! assert!(out.state_json.starts_with(r#"{"attempt":1,"errors":[{"attempt":1,"type":"net.reset""#));
//!
//! // The job's layer is refused by the defaults: dead-lettered, with the reason.
//! let layer = Layer::Json(r#"{"initial_interval": "PT10M"}"#.into());
//! let mut t = Transaction::new(&defaults, 1, "job-2", 1_770_892_265_000);
//! t.layer = Some(layer);
//! let out = t.run();
//! assert_eq!((out.decision.action, out.decision.reason.as_str()), (Action::DeadLetter, "policy_invalid"));
//! assert!(out.dead_letter.unwrap().contains(r#""job_id":"job-2""#));
//! ```

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::decision::{Action, Decision, Reason};
use crate::error::Error;
use crate::failure::Failure;
use crate::jitter::JitterSource;
use crate::policy::{Layer, RetryPolicy};
use crate::state::{MIN_HISTORY, RetryState};
use crate::value::Value;

mod budget;
mod record;
mod sanitize;
#[cfg(test)]
mod tests;

pub use record::{Job, dead_letter_record};

/// The largest §10 state text the transaction writes, in bytes: the
/// document limit, so the state always reads back.
pub const MAX_STATE_BYTES: usize = crate::limits::MAX_DOCUMENT_BYTES;

/// The largest failure details kept, as compact JSON text in bytes; larger
/// details are dropped with a note (a history holds ten of them).
pub const MAX_DETAILS_BYTES: usize = 64 * 1024;

/// A failure as the queue reports it: raw, possibly malformed; the
/// transaction makes it recordable.
///
/// ```
/// let f = ojs_retry::transaction::FailureReport { code: Some("RETRY".into()), ..Default::default() };
/// assert_eq!(f.error_type, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FailureReport {
    /// The error type (`None`: [`UNKNOWN_ERROR_TYPE`](crate::state::UNKNOWN_ERROR_TYPE)).
    pub error_type: Option<String>,
    /// The error type's base types, nearest first (see
    /// [`Failure::ancestors`](crate::Failure::ancestors)): an array of
    /// strings in the form the queue holds it.
    pub ancestors: Option<Layer<'static>>,
    /// The handler code as the handler spelled it (`RETRY`, `DISCARD`,
    /// `DEAD_LETTER`, `FAIL`).
    pub code: Option<String>,
    /// The reservation's visibility timeout expired (§9.2).
    pub timed_out: bool,
    /// The message, of any length.
    pub message: Option<String>,
    /// Structured details, in the form the queue holds them.
    pub details: Option<Layer<'static>>,
}

/// What a queue knows when a job fails (see the [module docs](self)).
///
/// ```
/// use ojs_retry::transaction::Transaction;
/// let t = Transaction::new(&[], 2, "job-9", 0);
/// assert_eq!((t.attempt, t.key, t.history_limit), (2, "job-9", 10));
/// ```
#[derive(Debug, Clone)]
pub struct Transaction<'a> {
    /// The queue's defaults already built (a policy the queue made once):
    /// taken as it is when nothing is layered over it — no `defaults`, no
    /// job layer — so a failure reads no document; otherwise its canonical
    /// document is the first layer.
    pub built: Option<&'a RetryPolicy>,
    /// The queue's default layers, merged in order (its configuration).
    pub defaults: &'a [Layer<'a>],
    /// The policy layer the job carries, merged over the defaults.
    pub layer: Option<Layer<'a>>,
    /// The §10 state the job carries.
    pub state: Option<Layer<'a>>,
    /// The attempt that failed, from the queue's own counter (1-based).
    pub attempt: u64,
    /// The failure.
    pub failure: FailureReport,
    /// The jitter key: the job id.
    pub key: &'a str,
    /// The instant of the failure, epoch ms.
    pub now_ms: u64,
    /// The newest errors the state keeps: [`MIN_HISTORY`] to
    /// [`MAX_ARRAY_LEN`](crate::limits::MAX_ARRAY_LEN) (checked by
    /// [`Transaction::with_history_limit`]).
    pub history_limit: usize,
    /// The queue's name, for the dead-letter record.
    pub queue: &'a str,
    /// What the queue needs to re-enqueue the job by hand (a task name,
    /// arguments), kept in the dead-letter record as it is; `None` there
    /// when it cannot be read (with a note).
    pub job: Option<Layer<'a>>,
}

impl<'a> Transaction<'a> {
    /// A transaction with no layer, no state, a failure with nothing in it,
    /// the default history limit and an empty queue name.
    #[must_use]
    pub fn new(defaults: &'a [Layer<'a>], attempt: u64, key: &'a str, now_ms: u64) -> Self {
        Self {
            built: None,
            defaults,
            layer: None,
            state: None,
            attempt,
            failure: FailureReport::default(),
            key,
            now_ms,
            history_limit: MIN_HISTORY,
            queue: "",
            job: None,
        }
    }

    /// The transaction keeping the newest `limit` errors: the queue's own
    /// configuration, so a limit no state can have
    /// ([`check_history_limit`](crate::state::check_history_limit)) is an
    /// error here (a limit set on the field directly is noted and brought
    /// into range by [`run`](Transaction::run)).
    ///
    /// ```
    /// use ojs_retry::transaction::Transaction;
    /// assert_eq!(Transaction::new(&[], 1, "job", 0).with_history_limit(50)?.history_limit, 50);
    /// assert!(Transaction::new(&[], 1, "job", 0).with_history_limit(9).is_err());
    /// # Ok::<(), ojs_retry::Error>(())
    /// ```
    pub fn with_history_limit(mut self, limit: usize) -> Result<Self, Error> {
        self.history_limit = crate::state::check_history_limit(limit)?;
        Ok(self)
    }
}

/// Something the transaction changed or could not use, for logs and the
/// dead-letter record.
///
/// ```
/// use ojs_retry::transaction::Transaction;
/// let out = Transaction::new(&[], 0, "job", 0).run();
/// assert_eq!(out.notes[0].kind, "attempt_out_of_range");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Note {
    /// A stable name (see the table in the [module docs](self)).
    pub kind: &'static str,
    /// What was found and what was done.
    pub message: String,
}

/// What the queue does with the failed job.
///
/// ```
/// use ojs_retry::{Action, transaction::Transaction};
/// let out = Transaction::new(&[], 3, "job", 0).run(); // the default policy: 3 attempts
/// assert_eq!((out.decision.action, out.dead_letter), (Action::Discard, None));
/// assert_eq!(out.state.attempt(), 3);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome<'a> {
    /// Retry (after `delay_ms`, at `next_retry_at`), discard or dead-letter,
    /// and why.
    pub decision: Decision,
    /// The job's new state.
    pub state: RetryState,
    /// The state as the §10 text the queue stores (always readable back).
    pub state_json: String,
    /// The policy that decided (the defaults' or the default policy when
    /// the job's layer was refused): the transaction's
    /// [`built`](Transaction::built) policy itself when it decided alone.
    pub policy: Cow<'a, RetryPolicy>,
    /// What the transaction changed or could not use.
    pub notes: Vec<Note>,
    /// For a dead letter: the record to write (see [`dead_letter_record`]).
    pub dead_letter: Option<String>,
}

impl<'a> Transaction<'a> {
    /// Runs the transaction (see the [module docs](self)). Never fails.
    #[must_use]
    pub fn run(self) -> Outcome<'a> {
        let mut notes = Vec::new();
        let attempt = sanitize::attempt(self.attempt, &mut notes);
        let now = sanitize::now(self.now_ms, &mut notes);
        let key = sanitize::key(self.key, &mut notes);
        let limit = sanitize::history_limit(self.history_limit, &mut notes);
        let (policy, refused) = effective_policy(self.built, self.defaults, self.layer, &mut notes);
        let failure = sanitize::failure(self.failure, attempt, &mut notes);
        let mut state = sanitize::state(self.state, attempt, limit, &mut notes);
        let decision = match refused {
            Some(e) => record_refused(&mut state, &failure, now, &e),
            None => match state.record_failure(&policy, &failure, now, JitterSource::Key(key)) {
                Ok(d) => d,
                Err(e) => {
                    notes.push(sanitize::refused_note(&e, "the failure"));
                    record_refused(&mut state, &failure, now, &e)
                }
            },
        };
        let state_json = budget::fit(&mut state, &mut notes);
        let dead_letter = (decision.action == Action::DeadLetter).then(|| {
            let payload = self.job.and_then(|j| sanitize::payload(j, &mut notes));
            let job = record::Job {
                queue: self.queue,
                id: self.key,
                at_ms: now,
                payload: payload.as_ref(),
            };
            dead_letter_record(&job, &state, &decision, &policy, &notes)
        });
        Outcome {
            decision,
            state,
            state_json,
            policy,
            notes,
            dead_letter,
        }
    }
}

/// The effective policy, or the policy that stands in for a refused one
/// with the refusal.
fn effective_policy<'p>(
    built: Option<&'p RetryPolicy>,
    defaults: &[Layer<'_>],
    layer: Option<Layer<'_>>,
    notes: &mut Vec<Note>,
) -> (Cow<'p, RetryPolicy>, Option<Error>) {
    if let (Some(p), true, None) = (built, defaults.is_empty(), &layer) {
        return (Cow::Borrowed(p), None);
    }
    let what = if layer.is_some() {
        "the job's policy layer over the queue's defaults"
    } else {
        "the queue's defaults"
    };
    let mut queue: Vec<Layer<'_>> = built
        .map(|p| Layer::Json(p.to_json().into()))
        .into_iter()
        .collect();
    queue.extend_from_slice(defaults);
    let mut layers = queue.clone();
    layers.extend(layer);
    let refusal = match RetryPolicy::from_layers(layers) {
        Ok(p) => return (Cow::Owned(p), None),
        Err(e) => e,
    };
    notes.push(sanitize::refused_note(&refusal, what));
    // The job is dead-lettered whatever a stand-in says; the defaults (or
    // the §8 default policy) are what its record shows.
    let stand_in = RetryPolicy::from_layers(queue).unwrap_or_default();
    (Cow::Owned(stand_in), Some(refusal))
}

/// Records `failure` as dead-lettered because `e` refused it: the outcome
/// for what the engine cannot decide.
fn record_refused(state: &mut RetryState, failure: &Failure, now_ms: u64, e: &Error) -> Decision {
    state
        .errors
        .push_back(crate::state::record_of(failure, now_ms));
    state.trim();
    state.attempt = failure.attempt;
    state.next_retry_at = None;
    state.terminal = Some(Action::DeadLetter);
    Decision {
        action: Action::DeadLetter,
        reason: Reason::PolicyInvalid {
            code: e.code(),
            field: e.field().map(String::from),
        },
        handler_code: failure.code,
        attempt: failure.attempt,
        timed_out: failure.timed_out,
        retry_number: None,
        delay_ms: None,
        next_retry_at: None,
    }
}

/// A carried document read into a value (absent: `None`).
fn read_carried(doc: Layer<'_>) -> Result<Value, String> {
    match doc {
        Layer::Json(t) => Value::from_json(&t),
        Layer::JsonBytes(b) => Value::from_json_bytes(&b),
        Layer::Value(v) => Ok(v),
        Layer::Unreadable(f) => Err(f.message),
    }
}
