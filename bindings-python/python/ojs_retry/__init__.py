"""Open Job Spec retry policies, one engine for every runtime.

The engine is written once in Rust (crate ``ojs-retry``); this package is a
thin binding. See ``help(RetryPolicy)`` and the README for a quick start.
"""

from ._ojs_retry import (
    ERROR_CODES,
    MAX_INSTANT_MS,
    MAX_MS,
    MAX_SCHEDULE_ROWS,
    Decision,
    PolicyError,
    Reservation,
    RetryPolicy,
    RetryState,
    ScheduleRow,
    first_match,
    format_duration,
    format_timestamp,
    jitter_sample,
    matches,
    parse_duration,
    parse_timestamp,
)

__all__ = [
    "ERROR_CODES",
    "MAX_INSTANT_MS",
    "MAX_MS",
    "MAX_SCHEDULE_ROWS",
    "Decision",
    "PolicyError",
    "Reservation",
    "RetryPolicy",
    "RetryState",
    "ScheduleRow",
    "first_match",
    "format_duration",
    "format_timestamp",
    "jitter_sample",
    "matches",
    "parse_duration",
    "parse_timestamp",
]
