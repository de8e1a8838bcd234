from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final

from .. import PolicyLayer, RetryPolicy
from ._core import Listener

__all__ = [
    "ATTEMPTS",
    "BACKOFF_TYPE",
    "STALLED_TYPE",
    "Processor",
    "adoption_text",
    "dead_letter_key",
    "dead_letters",
    "enqueue",
    "job_options",
    "worker",
]

BACKOFF_TYPE: Final[str]
ATTEMPTS: Final[int]
STALLED_TYPE: Final[str]

Handler = Callable[..., Awaitable[Any]]

def adoption_text(opts: Mapping[str, Any]) -> str | None: ...
def dead_letter_key(queue_name: str, prefix: str = "bull") -> str: ...
def job_options(
    opts: Mapping[str, Any] | None = None,
    *,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    defaults: PolicyLayer | RetryPolicy | None = ...,
) -> dict[str, Any]: ...
async def enqueue(
    queue: Any,
    name: str,
    data: Any,
    opts: Mapping[str, Any] | None = None,
    *,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    defaults: PolicyLayer | RetryPolicy | None = ...,
) -> Any: ...
async def dead_letters(client: Any, queue_name: str, prefix: str = "bull") -> list[dict[str, Any]]: ...

class Processor:
    handler: Handler
    defaults: PolicyLayer | RetryPolicy | None
    listeners: tuple[Listener, ...]
    timeout_ms: int | None
    def __init__(
        self,
        handler: Handler,
        *,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        listeners: Iterable[Listener] = (),
        timeout_ms: int | None = None,
    ) -> None: ...
    async def __call__(self, job: Any, token: str) -> Any: ...
    def backoff_strategy(self, attempts_made: int, type: str, err: Any, job: Any) -> int: ...

def worker(
    name: str,
    handler: Handler,
    opts: Mapping[str, Any] | None = None,
    *,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    listeners: Iterable[Listener] = (),
    timeout_ms: int | None = None,
) -> Any: ...
