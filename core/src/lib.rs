//! # ojs-retry
//!
//! The Open Job Spec retry policy (RET-01 … RET-20) as one engine that
//! gives the same answer in Rust, Python, Node, browsers and edge workers.
//! A queue asks it three things:
//!
//! 1. *Which policy applies?* — [`RetryPolicy::from_json_layers`] merges
//!    defaults ← queue ← job and validates the result (§8, §11, §14).
//! 2. *The handler failed: retry, discard or dead-letter?* —
//!    [`RetryPolicy::decide`] (§6, §7, §9.2), or [`RetryState`] to keep the
//!    attempt count and error history too (§10).
//! 3. *If retry, after how long?* — the exact delay and `next_retry_at`
//!    ([`backoff`], §3, §5).
//!
//! ```
//! use ojs_retry::{RetryPolicy, Failure, JitterSource, Action};
//!
//! let queue = r#"{"max_attempts": 5, "non_retryable_errors": ["validation.*"]}"#;
//! let job = r#"{"initial_interval": "PT30S", "on_exhaustion": "dead_letter"}"#;
//! let policy = RetryPolicy::from_json_layers(&[queue, job])?;
//!
//! let now = 1_770_892_265_000; // epoch ms: 2026-02-12T10:31:05Z
//! let failure = Failure::new(2).with_type("external.timeout");
//! // Keyed jitter: every worker computes the same delay for this job.
//! let d = policy.decide(&failure, now, JitterSource::Key("job-8f3a"))?;
//! assert_eq!(d.action, Action::Retry);
//! let delay = d.delay_ms.unwrap();
//! assert!((30_000..90_000).contains(&delay)); // 60 s, jittered by [0.5, 1.5)
//! assert_eq!(d.next_retry_at, Some(now + delay));
//!
//! let d = policy.decide(&Failure::new(1).with_type("validation.bad_email"), now, JitterSource::Key("job-8f3a"))?;
//! assert_eq!(d.action, Action::DeadLetter);
//! # Ok::<(), ojs_retry::Error>(())
//! ```
//!
//! ## Units
//!
//! Durations and delays are integer milliseconds; instants are Unix epoch
//! milliseconds. The engine never reads a clock or an entropy source by
//! itself: `now` and the jitter source are arguments ([`JitterSource`]),
//! except [`JitterSource::Entropy`] under the `std` feature.
//!
//! ## Saturation
//!
//! Valid but huge inputs saturate, documented where they occur: a raw delay
//! past 2^53 − 1 ms is reported as 2^53 − 1 ([`backoff`]); `next_retry_at`
//! and reservation deadlines stop at [`MAX_INSTANT_MS`]. Nothing produces
//! NaN, infinity, wrap-around or a panic; bad input is an [`Error`].
//!
//! ## Documents
//!
//! Every document (policy layers, preset options, §10 state documents,
//! failures) is read through serde into a [`Value`] by whatever
//! `Deserializer` the host has — `serde_json` for text, `serde-wasm-bindgen`,
//! napi-rs or `pythonize` for host objects — and checked by one reader that
//! collects every fault with its field. Canonical JSON is written by
//! `Serialize` through `serde_json`.
//!
//! ## Features
//!
//! * `std` (default): [`JitterSource::Entropy`] (a word from the OS at
//!   each draw, rand's `OsRng`) and `std::error::Error`.
//!
//! Without `std` the crate is `#![no_std]` + `alloc`.

#![no_std]
#![forbid(unsafe_code)]
// No panics by construction: on top of the workspace's unwrap / expect /
// indexing / panic denials, no arithmetic that can overflow or divide by
// zero (checked, saturating or wrapping operations say what happens).
#![deny(clippy::arithmetic_side_effects)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod backoff;
pub mod decision;
mod describe;
pub mod duration;
pub mod error;
mod exhaustion;
pub mod failure;
pub mod herd;
pub mod jitter;
pub mod limits;
pub mod matching;
mod nearest;
pub mod options;
pub mod policy;
pub mod presets;
pub mod reservation;
pub mod state;
pub mod time;
pub mod transaction;
pub mod value;

/// The README's Rust example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeExample;

pub use backoff::{ScheduleRow, Strategy};
pub use decision::{Action, Decision, Reason};
pub use duration::{MAX_MS, format_duration, parse_duration};
pub use error::{Error, ErrorCode, Fault};
pub use failure::{Failure, HandlerCode};
pub use herd::{Herd, HerdRound};
#[cfg(feature = "std")]
pub use jitter::reseed_after_fork;
pub use jitter::{JitterSource, Sample};
pub use matching::{first_match, matches};
pub use options::{CallOptions, Jitter, uint_from_f64, uint_from_value};
pub use policy::{Delays, Layer, MAX_SCHEDULE_ROWS, OnExhaustion, PartialPolicy, RetryPolicy};
pub use presets::SYSTEMS as PRESET_SYSTEMS;
pub use reservation::{Heartbeat, Reservation};
pub use state::{ErrorRecord, RecordMs, RetryState};
pub use time::{MAX_INSTANT_MS, format_timestamp, parse_timestamp};
pub use value::{Map, Number, Value};
