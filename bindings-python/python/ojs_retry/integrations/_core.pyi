from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, TypeVar

from .. import Decision, HandlerCode, Outcome, PolicyLayer, RetryPolicy

__all__ = [
    "HISTORY_LIMIT",
    "POLICY_KEY",
    "POLICY_KEYWORD",
    "STATE_KEY",
    "DecisionEvent",
    "Failure",
    "JobError",
    "Listener",
    "ancestors_of",
    "class_of",
    "dead_letter_properties",
    "error_type_of",
    "failure_from_exception",
    "import_optional",
    "layer_text",
    "notify",
    "now_ms",
    "renamed_keywords",
    "require",
    "resolve_policy",
    "tell",
    "transact",
    "validate_enqueued_layer",
    "validate_job_policy",
    "WORKERS_UNSTATED",
]

POLICY_KEY: Final[str]
POLICY_KEYWORD: Final[str]
_F = TypeVar("_F", bound=Callable[..., Any])

def import_optional(module: str) -> ModuleType | None: ...
def class_of(module: ModuleType | None, name: str) -> Any: ...
def require(module: ModuleType | None, extra: str) -> ModuleType: ...
def renamed_keywords(**old_to_new: str) -> Callable[[_F], _F]: ...
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
    ancestors: tuple[str, ...] = ()
    def as_kwargs(self) -> dict[str, Any]: ...

def error_type_of(exc_class: type[BaseException]) -> str: ...
def ancestors_of(exc_class: type[BaseException]) -> tuple[str, ...]: ...
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
WORKERS_UNSTATED: Any

def validate_enqueued_layer(job: PolicyLayer | RetryPolicy | None, defaults: Any) -> str | None: ...
def dead_letter_properties(job_id: str, queue: str) -> dict[str, Any]: ...
def now_ms() -> int: ...
def transact(
    defaults: PolicyLayer | RetryPolicy | None,
    layer: str | None,
    state: str | None,
    attempt: int,
    failure: Failure,
    *,
    key: str,
    queue: str,
    job: Any = None,
    now: int | None = None,
) -> Outcome: ...
@dataclass(frozen=True)
class DecisionEvent:
    queue: str
    job_id: str
    attempt: int
    failure: Failure
    decision: Decision
    at_ms: int
    extra: Mapping[str, Any] = ...
    notes: tuple[tuple[str, str], ...] = ...

Listener = Callable[[DecisionEvent], None]

def tell(
    listeners: Iterable[Listener],
    system: str,
    job_id: str,
    attempt: int,
    failure: Failure,
    outcome: Outcome,
    now: int,
    **extra: Any,
) -> None: ...
def notify(listeners: Iterable[Listener], event: DecisionEvent) -> None: ...
