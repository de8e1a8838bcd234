from collections.abc import Callable, Iterable
from typing import Any, Final

from .. import PolicyError, PolicyLayer, RetryPolicy
from ._core import JobError as JobError
from ._core import Listener

# dramatiq is an optional extra: without it Middleware is Any here.
from dramatiq.middleware import Middleware  # type: ignore[import-not-found, unused-ignore]

__all__ = [
    "LOST_TYPE",
    "JobError",
    "OjsRetries",
    "PolicyRefused",
    "adoption_layer",
    "dead_letter_key",
    "middleware_with_ojs_retries",
    "middleware_without_retries",
    "send",
]

LOST_TYPE: Final[str]
MARK_TTL_MS: Final[int]
DELAYED_KEY: Final[str]
ADOPTED_OPTIONS: Final[tuple[str, ...]]
DeadLetters = Callable[[Any, Any, str], None]

def dead_letter_key(queue: str, namespace: str = "dramatiq") -> str: ...

class PolicyRefused(Exception):
    """``dramatiq.middleware.MiddlewareError`` at run time."""

    error: PolicyError
    code: str
    field: str | None
    def __init__(self, error: PolicyError) -> None: ...

def middleware_without_retries() -> list[Any]: ...
def middleware_with_ojs_retries(ojs_retry_policy: PolicyLayer | RetryPolicy | None = None, **kwargs: Any) -> list[Any]: ...
def adoption_layer(actor_options: Any, message_options: Any) -> dict[str, Any]: ...
def send(
    actor: Any,
    *args: Any,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    **kwargs: Any,
) -> Any: ...

class OjsRetries(Middleware):  # type: ignore[misc, unused-ignore]
    """A ``dramatiq.Middleware`` at run time."""

    policy: PolicyLayer | RetryPolicy | None
    listeners: tuple[Listener, ...]
    timeout_types: tuple[type[BaseException], ...]
    marks: Any
    dead_letters: DeadLetters
    def __init__(
        self,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        *,
        listeners: Iterable[Listener] = (),
        timeout_types: Iterable[type[BaseException]] = (),
        marks: Any = None,
        dead_letters: DeadLetters | None = None,
    ) -> None: ...
    @property
    def actor_options(self) -> set[str]: ...
    def actor_defaults(self, actor_options: dict[str, Any]) -> RetryPolicy | None: ...
    def before_declare_actor(self, broker: Any, actor: Any) -> None: ...
    def before_enqueue(self, broker: Any, message: Any, delay: int | None) -> None: ...
    def before_process_message(self, broker: Any, message: Any) -> None: ...
    def before_delay_message(self, broker: Any, message: Any) -> None: ...
    def after_process_message(
        self, broker: Any, message: Any, *, result: Any = None, exception: BaseException | None = None
    ) -> None: ...
