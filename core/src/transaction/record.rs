//! The dead-letter record: what every integration writes for a job it
//! dead-letters, in one JSON shape.
//!
//! ```json
//! {
//!   "queue": "emails",
//!   "job_id": "job-8f3a",
//!   "dead_lettered_at": 1770892265000,
//!   "reason": "exhausted",
//!   "decision": { "action": "dead_letter", "reason": "exhausted", "...": "..." },
//!   "retry_state": { "attempt": 5, "errors": ["..."], "next_retry_at": null, "terminal": "dead_letter" },
//!   "policy": { "max_attempts": 5, "...": "..." },
//!   "notes": [{ "kind": "message_truncated", "message": "..." }],
//!   "job": { "task": "tasks.charge", "args": [42] }
//! }
//! ```
//!
//! `dead_lettered_at` is epoch ms (the failure's `now`); `decision` is the
//! decision as every binding serialises it; `retry_state` the §10 state;
//! `policy` the canonical effective policy that decided; `notes` what the
//! transaction changed or could not use (empty when nothing); `job` what the
//! queue passed to re-enqueue the job by hand, or `null`.

use alloc::string::String;

use serde::Serialize;

use super::Note;
use crate::decision::Decision;
use crate::policy::RetryPolicy;
use crate::state::RetryState;

/// Which job, where, when.
///
/// ```
/// let job = ojs_retry::transaction::Job { queue: "emails", id: "job-1", at_ms: 0, payload: None };
/// assert_eq!(job.id, "job-1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Job<'a> {
    /// The queue's name.
    pub queue: &'a str,
    /// The job's id.
    pub id: &'a str,
    /// When it was dead-lettered, epoch ms.
    pub at_ms: u64,
    /// What the queue needs to re-enqueue it by hand.
    pub payload: Option<&'a crate::Value>,
}

#[derive(Serialize)]
struct Record<'a> {
    queue: &'a str,
    job_id: &'a str,
    dead_lettered_at: u64,
    reason: &'a str,
    decision: &'a Decision,
    retry_state: &'a RetryState,
    policy: &'a RetryPolicy,
    notes: &'a [Note],
    job: Option<&'a crate::Value>,
}

/// The dead-letter record's JSON text, one shape for every integration:
///
/// ```json
/// {
///   "queue": "emails",
///   "job_id": "job-8f3a",
///   "dead_lettered_at": 1770892265000,
///   "reason": "exhausted",
///   "decision": { "action": "dead_letter", "reason": "exhausted", "...": "..." },
///   "retry_state": { "attempt": 5, "errors": ["..."], "next_retry_at": null, "terminal": "dead_letter" },
///   "policy": { "max_attempts": 5, "...": "..." },
///   "notes": [{ "kind": "message_truncated", "message": "..." }],
///   "job": { "task": "tasks.charge", "args": [42] }
/// }
/// ```
///
/// `dead_lettered_at` is epoch ms (the failure's `now`); `decision` the
/// decision as every binding serialises it; `retry_state` the §10 state;
/// `policy` the canonical effective policy that decided; `notes` what the
/// transaction changed or could not use; `job` what the queue passed to
/// re-enqueue the job by hand, or `null`.
///
/// ```
/// use ojs_retry::transaction::{Job, Transaction, dead_letter_record};
/// use ojs_retry::Layer;
/// let defaults = [Layer::Json(r#"{"max_attempts": 1, "on_exhaustion": "dead_letter"}"#.into())];
/// let out = Transaction::new(&defaults, 1, "job-1", 0).run();
/// let job = Job { queue: "", id: "job-1", at_ms: 0, payload: None };
/// let text = dead_letter_record(&job, &out.state, &out.decision, &out.policy, &out.notes);
/// assert_eq!(Some(text), out.dead_letter);
/// ```
#[must_use]
pub fn dead_letter_record(
    job: &Job<'_>,
    state: &RetryState,
    decision: &Decision,
    policy: &RetryPolicy,
    notes: &[Note],
) -> String {
    let record = Record {
        queue: job.queue,
        job_id: job.id,
        dead_lettered_at: job.at_ms,
        reason: decision.reason.as_str(),
        decision,
        retry_state: state,
        policy,
        notes,
        job: job.payload,
    };
    // Strings, integers and finite trees: serialising cannot fail.
    serde_json::to_string(&record).unwrap_or_default()
}
