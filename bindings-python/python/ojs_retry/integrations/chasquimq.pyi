from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final

from .. import PolicyLayer, RetryPolicy
from ._core import Listener

__all__ = [
    "ENVELOPE_KEY",
    "REDELIVERED_TYPE",
    "Handler",
    "dead_letters",
    "enqueue",
    "envelope",
    "worker",
]

ENVELOPE_KEY: Final[str]
REDELIVERED_TYPE: Final[str]

UserHandler = Callable[[Any], Awaitable[Any]]

def envelope(
    data: Any,
    *,
    job_id: str | None = None,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    defaults: PolicyLayer | RetryPolicy | None = ...,
) -> dict[str, Any]: ...
async def enqueue(
    queue: Any,
    name: str,
    data: Any,
    *,
    job_id: str | None = None,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    defaults: PolicyLayer | RetryPolicy | None = ...,
    delay_ms: int | None = None,
) -> Any: ...
async def dead_letters(queue: Any, limit: int = 100) -> list[dict[str, Any]]: ...

class Handler:
    handler: UserHandler
    queue: Any
    redis: Any
    defaults: PolicyLayer | RetryPolicy | None
    listeners: tuple[Listener, ...]
    timeout_ms: int | None
    track_redeliveries: bool
    def __init__(
        self,
        handler: UserHandler,
        *,
        queue: Any,
        redis: Any,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        listeners: Iterable[Listener] = (),
        timeout_ms: int | None = None,
        track_redeliveries: bool = True,
    ) -> None: ...
    async def __call__(self, job: Any) -> Any: ...
    async def close(self) -> None: ...

def worker(
    queue_name: str,
    handler: UserHandler,
    *,
    redis_url: str,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    listeners: Iterable[Listener] = (),
    timeout_ms: int | None = None,
    track_redeliveries: bool = True,
    **worker_kwargs: Any,
) -> Any: ...
