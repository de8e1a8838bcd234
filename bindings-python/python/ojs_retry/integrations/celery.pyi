from collections.abc import Iterable
from typing import Any, ClassVar

from .. import PolicyLayer, RetryPolicy
from ._core import JobError as JobError
from ._core import Listener

__all__ = ["JobError", "OjsAppTask", "OjsRequest", "OjsTask", "dead_letter_key", "install"]

def dead_letter_key(queue: str) -> str: ...

class OjsRequest:
    """``celery.worker.request.Request`` at run time."""

    def on_timeout(self, soft: bool, timeout: float) -> None: ...
    def on_failure(self, exc_info: Any, send_failed_event: bool = True, return_ok: bool = False) -> None: ...

class OjsTask:
    """A Celery ``Task`` base class (``celery.Task`` at run time)."""

    abstract: ClassVar[bool]
    max_retries: ClassVar[int | None]
    Request: ClassVar[type[OjsRequest]]
    ojs_retry_policy: ClassVar[PolicyLayer | RetryPolicy | None]
    ojs_listeners: ClassVar[Iterable[Listener]]
    ojs_dead_letter_key: ClassVar[str | None]
    ojs_dead_letter_url: ClassVar[str | None]
    ojs_timeout_types: ClassVar[tuple[type[BaseException], ...]]
    throws: ClassVar[tuple[type[BaseException], ...]]
    def apply_async(
        self,
        args: Any = None,
        kwargs: Any = None,
        task_id: str | None = None,
        producer: Any = None,
        link: Any = None,
        link_error: Any = None,
        shadow: str | None = None,
        *,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        **options: Any,
    ) -> Any: ...
    def __init_subclass__(cls, **kwargs: Any) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

class OjsAppTask(OjsTask):
    """The base ``install`` gives every task of an app."""

    ojs_install_defaults: ClassVar[PolicyLayer | RetryPolicy | None]
    def __init_subclass__(cls, **kwargs: Any) -> None: ...

def install(
    app: Any,
    defaults: PolicyLayer | RetryPolicy | None = None,
    *,
    listeners: Iterable[Listener] = (),
    timeout_types: Iterable[type[BaseException]] = (),
    dead_letter_key: str | None = None,
    dead_letter_url: str | None = None,
) -> type[OjsAppTask]: ...
