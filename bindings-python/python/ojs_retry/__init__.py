"""Open Job Spec retry policies, one engine for every runtime.

The engine is written once in Rust (crate ``ojs-retry``); this package is a
thin binding. See ``help(RetryPolicy)`` and the README for a quick start.
"""

from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal, TypeAlias, TypedDict

from ._ojs_retry import (
    ERROR_CODES,
    MAX_INSTANT_MS,
    MAX_MS,
    MAX_SCHEDULE_ROWS,
    PRESET_SYSTEMS,
    Decision,
    Outcome,
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
    run_transaction,
)

ErrorCode: TypeAlias = (
    Literal["validation.retry_policy_invalid"]
    | Literal["validation.duration_invalid"]
    | Literal["validation.invalid_argument"]
    | Literal["validation.state_invalid"]
)
HandlerCode: TypeAlias = (
    Literal["RETRY"]
    | Literal["DISCARD"]
    | Literal["DEAD_LETTER"]
    | Literal["FAIL"]
)
Action: TypeAlias = Literal["retry"] | Literal["discard"] | Literal["dead_letter"]
Reason: TypeAlias = (
    Literal["handler_code"]
    | Literal["non_retryable"]
    | Literal["exhausted"]
    | Literal["retryable"]
    | Literal["policy_invalid"]
)
OnExhaustion: TypeAlias = Literal["discard"] | Literal["dead_letter"]
Strategy: TypeAlias = (
    Literal["none"]
    | Literal["linear"]
    | Literal["exponential"]
    | Literal["polynomial"]
)
PresetSystem: TypeAlias = (
    Literal["sidekiq"]
    | Literal["faktory"]
    | Literal["celery"]
    | Literal["bullmq"]
    | Literal["temporal"]
    | Literal["oban"]
    | Literal["rq"]
    | Literal["dramatiq"]
    | Literal["aws"]
    | Literal["aws_jitter"]
    | Literal["ratchet"]
    | Literal["zzz_jobs"]
    | Literal["chasquimq"]
)
try:
    __version__: str = version("ojs-retry")
except PackageNotFoundError:  # pragma: no cover - not installed
    __version__ = "0+unknown"



class Fault(TypedDict):
    """One fault of a ``PolicyError``: the field, the path inside it, what is wrong."""

    field: str | None
    path: str | None
    message: str


#: A policy layer: JSON text, or a mapping of document fields.
PolicyLayer: TypeAlias = str | bytes | bytearray | Mapping[str, Any]
#: Epoch milliseconds.
Instant: TypeAlias = int

__all__ = [
    "Action",
    "ErrorCode",
    "Fault",
    "HandlerCode",
    "Instant",
    "OnExhaustion",
    "PolicyLayer",
    "PresetSystem",
    "Reason",
    "Strategy",
    "ERROR_CODES",
    "MAX_INSTANT_MS",
    "MAX_MS",
    "MAX_SCHEDULE_ROWS",
    "PRESET_SYSTEMS",
    "Decision",
    "Outcome",
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
    "run_transaction",
]
