from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .. import Decision, HandlerCode, PolicyLayer, RetryPolicy, RetryState

__all__ = [
    "HISTORY_LIMIT",
    "POLICY_KEY",
    "STATE_KEY",
    "DecisionEvent",
    "Failure",
    "JobError",
    "Listener",
    "dead_letter_record",
    "error_type_of",
    "failure_from_exception",
    "layer_text",
    "notify",
    "now_ms",
    "record_failure",
    "resolve_policy",
    "validate_job_policy",
]

POLICY_KEY: Final[str]
STATE_KEY: Final[str]
HISTORY_LIMIT: Final[int]

class JobError(Exception):
    type: str
    code: HandlerCode | None
    message: str | None
    details: Any
    def __init__(
        self,
        type: str,
        code: HandlerCode | None = None,
        message: str | None = None,
        details: Any = None,
    ) -> None: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@dataclass(frozen=True)
class Failure:
    type: str | None = None
    code: HandlerCode | None = None
    timed_out: bool = False
    message: str | None = None
    details: Any = None
    def as_kwargs(self) -> dict[str, Any]: ...

def error_type_of(exc_class: type[BaseException]) -> str: ...
def failure_from_exception(
    exc: BaseException, *, timeout_types: Iterable[type[BaseException]] = ()
) -> Failure: ...
def layer_text(layer: PolicyLayer | RetryPolicy) -> str: ...
def resolve_policy(
    defaults: PolicyLayer | RetryPolicy | None, job: PolicyLayer | RetryPolicy | None = None
) -> RetryPolicy: ...
def validate_job_policy(
    job: PolicyLayer | RetryPolicy | None, defaults: PolicyLayer | RetryPolicy | None = None
) -> str | None: ...
def now_ms() -> int: ...
def record_failure(
    policy: RetryPolicy,
    state: str | Mapping[str, Any] | RetryState | None,
    attempt: int,
    failure: Failure,
    *,
    key: str,
    now: int | None = None,
) -> tuple[Decision, RetryState]: ...
def dead_letter_record(
    *,
    queue: str,
    job_id: str,
    state: RetryState,
    decision: Decision,
    policy: RetryPolicy,
    job: Mapping[str, Any] | None = None,
    now: int | None = None,
) -> dict[str, Any]: ...
@dataclass(frozen=True)
class DecisionEvent:
    queue: str
    job_id: str
    attempt: int
    failure: Failure
    decision: Decision
    at_ms: int
    extra: Mapping[str, Any] = ...

Listener = Callable[[DecisionEvent], None]

def notify(listeners: Iterable[Listener], event: DecisionEvent) -> None: ...
