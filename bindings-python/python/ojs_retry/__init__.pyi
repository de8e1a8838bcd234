"""Type stubs for ``ojs_retry`` (checked with ``python -m mypy.stubtest ojs_retry``)."""

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, TypedDict, final

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

ErrorCode: TypeAlias = Literal[
    "validation.retry_policy_invalid",
    "validation.duration_invalid",
    "validation.invalid_argument",
    "validation.state_invalid",
]
HandlerCode: TypeAlias = Literal["RETRY", "DISCARD", "DEAD_LETTER", "FAIL"]
Action: TypeAlias = Literal["retry", "discard", "dead_letter"]
Reason: TypeAlias = Literal["handler_code", "non_retryable", "exhausted", "retryable", "policy_invalid"]
OnExhaustion: TypeAlias = Literal["discard", "dead_letter"]
Strategy: TypeAlias = Literal["none", "linear", "exponential", "polynomial"]
PresetSystem: TypeAlias = Literal[
    "sidekiq", "faktory", "celery", "bullmq", "temporal", "oban", "rq",
    "dramatiq", "aws", "aws_jitter", "ratchet", "zzz_jobs", "chasquimq",
]
#: A policy layer: JSON text, or a mapping of document fields.
PolicyLayer: TypeAlias = str | bytes | bytearray | Mapping[str, Any]
#: Epoch milliseconds.
Instant: TypeAlias = int

__version__: str

#: Every error code, in a stable order.
ERROR_CODES: Final[tuple[str, ...]]
#: 2**53 - 1: the largest duration / count the engine accepts.
MAX_MS: Final[int]
PRESET_SYSTEMS: Final[tuple[PresetSystem, ...]]
#: 9999-12-31T23:59:59.999Z in epoch milliseconds.
MAX_INSTANT_MS: Final[int]
#: The most rows one ``schedule()`` call builds.
MAX_SCHEDULE_ROWS: Final[int]

class Fault(TypedDict):
    """One fault of a ``PolicyError``."""

    field: str | None
    path: str | None
    message: str

class PolicyError(ValueError):
    """Every error of the engine, with a stable ``code``."""

    #: e.g. ``"validation.retry_policy_invalid"`` (one of ``ERROR_CODES``).
    code: str
    #: The policy or argument field of the first fault (``None``: the whole document).
    field: str | None
    #: Where inside that field (``"non_retryable_errors[0]"``; ``None``: the whole document).
    path: str | None
    #: Every fault, first one first.
    faults: list[Fault]

@final
class RetryPolicy:
    """An immutable, validated, effective retry policy."""

    def __new__(
        cls,
        policy: PolicyLayer | None = None,
        /,
        *,
        max_attempts: int = ...,
        initial_interval: str = ...,
        backoff_coefficient: float = ...,
        max_interval: str = ...,
        jitter: bool = ...,
        non_retryable_errors: list[str] | tuple[str, ...] = ...,
        on_exhaustion: OnExhaustion = ...,
        backoff_strategy: Literal["none", "constant", "linear", "exponential", "polynomial"] = ...,
    ) -> RetryPolicy: ...
    @staticmethod
    def merge(*layers: PolicyLayer) -> RetryPolicy: ...
    @staticmethod
    def from_json(text: str) -> RetryPolicy: ...
    @staticmethod
    def preset(system: PresetSystem, options: Mapping[str, Any] | None = None, **kw: Any) -> RetryPolicy: ...
    @property
    def preset_system(self) -> PresetSystem | None: ...
    @property
    def max_attempts(self) -> int: ...
    @property
    def initial_interval_ms(self) -> int: ...
    @property
    def backoff_coefficient(self) -> float: ...
    @property
    def max_interval_ms(self) -> int: ...
    @property
    def jitter(self) -> bool: ...
    @property
    def non_retryable_errors(self) -> tuple[str, ...]: ...
    @property
    def on_exhaustion(self) -> OnExhaustion: ...
    @property
    def backoff_strategy(self) -> Strategy: ...
    @property
    def max_retries(self) -> int: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def delay(
        self,
        retry_number: int,
        *,
        u: float | None = None,
        seed: int | None = None,
        key: str | None = None,
    ) -> int: ...
    def schedule(
        self,
        count: int,
        *,
        u: float | None = None,
        seed: int | None = None,
        key: str | None = None,
    ) -> list[ScheduleRow]: ...
    def decide(
        self,
        attempt: int,
        *,
        type: str | None = None,
        ancestors: list[str] | tuple[str, ...] | None = None,
        code: HandlerCode | None = None,
        timed_out: bool | None = None,
        message: str | None = None,
        details: Any = None,
        now: Instant | None = None,
        u: float | None = None,
        seed: int | None = None,
        key: str | None = None,
    ) -> Decision: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[RetryPolicy], tuple[str]]: ...

@final
class Decision:
    """Retry, discard or dead-letter, and why (frozen)."""

    @property
    def action(self) -> Action: ...
    @property
    def reason(self) -> Reason: ...
    @property
    def handler_code(self) -> HandlerCode | None: ...
    @property
    def matched_pattern(self) -> str | None: ...
    @property
    def attempt(self) -> int: ...
    @property
    def timed_out(self) -> bool: ...
    @property
    def retry_number(self) -> int | None: ...
    @property
    def delay_ms(self) -> int | None: ...
    @property
    def next_retry_at(self) -> int | None: ...
    def explain(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Outcome:
    """What a queue does with a failed job: ``run_transaction``'s result (frozen).

    ``notes`` lists what the transaction changed or could not use, as
    ``(kind, message)`` pairs; ``dead_letter`` is the dead-letter record's
    JSON text for a dead letter, else ``None``.
    """

    @property
    def action(self) -> Action: ...
    @property
    def decision(self) -> Decision: ...
    @property
    def state(self) -> RetryState: ...
    @property
    def state_json(self) -> str: ...
    @property
    def policy(self) -> RetryPolicy: ...
    @property
    def notes(self) -> list[tuple[str, str]]: ...
    @property
    def dead_letter(self) -> str | None: ...

@final
class ScheduleRow:
    """One retry of a schedule (frozen)."""

    @property
    def retry_number(self) -> int: ...
    @property
    def attempt(self) -> int: ...
    @property
    def raw_ms(self) -> int: ...
    @property
    def capped_ms(self) -> int: ...
    @property
    def min_ms(self) -> int: ...
    @property
    def max_ms(self) -> int: ...
    @property
    def delay_ms(self) -> int | None: ...
    @property
    def cumulative_ms(self) -> int: ...
    def to_dict(self) -> dict[str, int | None]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class RetryState:
    """Per-job retry state (spec §10); each call is atomic across threads."""

    def __new__(cls, history_limit: int | None = 10) -> RetryState: ...
    @staticmethod
    def from_json(
        state: str | Mapping[str, Any], history_limit: int | None = 10
    ) -> RetryState: ...
    @property
    def attempt(self) -> int: ...
    @property
    def next_attempt(self) -> int: ...
    @property
    def next_retry_at(self) -> int | None: ...
    @property
    def terminal(self) -> OnExhaustion | None: ...
    @property
    def history_limit(self) -> int: ...
    @property
    def errors(self) -> list[dict[str, Any]]: ...
    def record_failure(
        self,
        policy: RetryPolicy,
        attempt: int | None = None,
        *,
        type: str | None = None,
        ancestors: list[str] | tuple[str, ...] | None = None,
        code: HandlerCode | None = None,
        timed_out: bool | None = None,
        message: str | None = None,
        details: Any = None,
        now: Instant | None = None,
        u: float | None = None,
        seed: int | None = None,
        key: str | None = None,
    ) -> Decision: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __reduce__(self) -> tuple[Any, tuple[str, int]]: ...

@final
class Reservation:
    """A visibility-timeout reservation; heartbeats extend it."""

    def __new__(
        cls, attempt: int, visibility_timeout_ms: int, now: Instant | None = None
    ) -> Reservation: ...
    @property
    def attempt(self) -> int: ...
    @property
    def visibility_timeout_ms(self) -> int: ...
    @property
    def deadline(self) -> int: ...
    def heartbeat(
        self, now: Instant | None = None
    ) -> tuple[Literal["extended"], int] | tuple[Literal["expired"], None]: ...
    def is_expired(self, now: Instant | None = None) -> bool: ...
    def expiry(self, now: Instant | None = None) -> dict[str, Any] | None: ...

def run_transaction(
    attempt: int,
    *,
    key: str,
    defaults: PolicyLayer | RetryPolicy | list[PolicyLayer | RetryPolicy] | None = None,
    layer: PolicyLayer | RetryPolicy | None = None,
    state: str | bytes | Mapping[str, Any] | RetryState | None = None,
    type: str | None = None,
    ancestors: list[str] | tuple[str, ...] | None = None,
    code: str | None = None,
    timed_out: bool = False,
    message: str | None = None,
    details: Any = None,
    now: Instant | None = None,
    history_limit: int = 10,
    queue: str = "",
    job: Any = None,
) -> Outcome: ...
def matches(error_type: str, patterns: list[str] | tuple[str, ...]) -> bool: ...
def first_match(error_type: str, patterns: list[str] | tuple[str, ...]) -> str | None: ...
def parse_duration(text: str) -> int: ...
def format_duration(ms: int) -> str: ...
def parse_timestamp(text: str) -> int: ...
def format_timestamp(ms: int) -> str: ...
def jitter_sample(
    retry_number: int,
    *,
    u: float | None = None,
    seed: int | None = None,
    key: str | None = None,
) -> int: ...
