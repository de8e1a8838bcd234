from collections.abc import Iterable
from typing import Any, Final

from .. import PolicyLayer, RetryPolicy
from ._core import JobError as JobError
from ._core import Listener

# rq is an optional extra: without it Worker is Any here.
from rq import Worker  # type: ignore[import-not-found, unused-ignore]

__all__ = [
    "ADOPTED_META_KEY",
    "ATTEMPTS_META_KEY",
    "DEAD_LETTER_META_KEY",
    "TERMINAL_META_KEY",
    "JobError",
    "OjsRetry",
    "OjsWorker",
    "adoption_layer",
    "delay_seconds",
]

ADOPTED_META_KEY: Final[str]
ATTEMPTS_META_KEY: Final[str]
TERMINAL_META_KEY: Final[str]
DEAD_LETTER_META_KEY: Final[str]

def delay_seconds(delay_ms: int, now: int) -> int: ...
def adoption_layer(retries_left: int | None, retry_intervals: list[int] | None) -> dict[str, Any]: ...

class OjsRetry:
    policy: PolicyLayer | RetryPolicy | None
    listeners: tuple[Listener, ...]
    timeout_types: tuple[type[BaseException], ...]
    def __init__(
        self,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        *,
        listeners: Iterable[Listener] = (),
        timeout_types: Iterable[type[BaseException]] = (),
    ) -> None: ...
    def enqueue(
        self,
        queue: Any,
        f: Any,
        *args: Any,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        **kwargs: Any,
    ) -> Any: ...
    def worker_kwargs(self) -> dict[str, Any]: ...
    def exception_handler(self, job: Any, exc_type: Any, exc: BaseException | None, tb: Any) -> bool: ...
    def work_horse_killed_handler(self, job: Any, retpid: int, ret_val: int, rusage: Any) -> None: ...

class OjsWorker(Worker):  # type: ignore[misc, unused-ignore]
    """An ``rq.Worker`` at run time."""

    ojs_retry: OjsRetry | None
    def __init__(self, *args: Any, ojs_retry: OjsRetry | None = None, **kwargs: Any) -> None: ...
