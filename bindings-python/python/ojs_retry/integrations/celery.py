"""Celery on an OJS retry policy: a ``Task`` base class.

    from ojs_retry.integrations.celery import OjsTask, JobError

    @app.task(bind=True, base=OjsTask, ojs_policy={"max_attempts": 5})
    def charge(self, order_id): ...

    charge.apply_async((42,), ojs_policy={"on_exhaustion": "dead_letter"})

What it maps (docs/integrations.md has the whole table):

* attempt = ``request.retries + 1`` (Celery counts retries from 0);
* the failure: :func:`~ojs_retry.integrations.failure_from_exception` on
  what the task raised; ``SoftTimeLimitExceeded`` and ``TimeLimitExceeded``
  are timeouts;
* retry: ``self.retry(countdown=delay_ms / 1000)`` (Celery keeps the ETA to
  the microsecond); ``max_retries`` is ``None`` so Celery never stops a retry
  the engine decided;
* discard: the exception propagates (Celery records FAILURE and acknowledges);
* dead letter: the engine's dead-letter record (``outcome.dead_letter``) is pushed
  onto the Redis list ``<queue>:dead`` (``ojs_dead_letter_key`` overrides
  it), then the exception propagates as for discard.

The job's policy layer and its §10 state travel in the message headers
(``ojs_retry_policy``, ``ojs_retry_state``); the jitter key is the task id.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

try:
    from celery import Task as _TaskBase
    from celery.exceptions import Ignore, Reject, Retry, SoftTimeLimitExceeded, TimeLimitExceeded
except ImportError:  # the [celery] extra is missing: the module still imports (stubtest, docs)
    _TaskBase = object
    Ignore = Reject = Retry = SoftTimeLimitExceeded = TimeLimitExceeded = type("_Missing", (Exception,), {})

from .. import PolicyLayer, RetryPolicy
from ._core import (
    POLICY_KEY,
    STATE_KEY,
    DecisionEvent,
    JobError,
    Listener,
    failure_from_exception,
    notify,
    now_ms,
    transact,
    validate_job_policy,
)

__all__ = ["JobError", "OjsTask", "dead_letter_key"]

_CELERY_CONTROL = (Retry, Ignore, Reject)
_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def dead_letter_key(queue: str) -> str:
    """The Redis list a queue's dead-lettered tasks go to: ``<queue>:dead``."""
    return f"{queue}:dead"


def _redis_client(url: str) -> Any:
    import redis

    with _clients_lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(url)
        return client


class OjsTask(_TaskBase):  # type: ignore[misc,valid-type]
    """A Celery task whose retries an OJS policy decides."""

    abstract = True
    #: Never stop a retry the engine decided.
    max_retries = None
    #: The queue defaults: a policy layer or a ``RetryPolicy`` (a preset too).
    ojs_policy: ClassVar[PolicyLayer | RetryPolicy | None] = None
    #: Called with every decision carried out (in the worker process).
    ojs_listeners: ClassVar[Iterable[Listener]] = ()
    #: The Redis list for dead-lettered tasks (default ``<queue>:dead``).
    ojs_dead_letter_key: ClassVar[str | None] = None
    #: The Redis holding that list (default: the app's broker URL).
    ojs_dead_letter_url: ClassVar[str | None] = None
    #: Exceptions counted as timeouts besides ``TimeoutError``.
    ojs_timeout_types: ClassVar[tuple[type[BaseException], ...]] = (
        SoftTimeLimitExceeded,
        TimeLimitExceeded,
    )

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
        ojs_policy: PolicyLayer | RetryPolicy | None = None,
        **options: Any,
    ) -> Any:
        """``Task.apply_async`` validating the job's ``ojs_policy`` first.

        Raises :class:`ojs_retry.PolicyError` before anything is sent.
        """
        text = validate_job_policy(ojs_policy, self.ojs_policy)
        if text is not None:
            options["headers"] = {**(options.get("headers") or {}), POLICY_KEY: text}
        return super().apply_async(
            args, kwargs, task_id, producer, link, link_error, shadow, **options
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except _CELERY_CONTROL:
            raise
        except Exception as exc:
            self._ojs_failed(exc)
            raise

    def _ojs_headers(self) -> Mapping[str, Any]:
        headers = self.request.headers or {}
        return {k: headers.get(k, getattr(self.request, k, None)) for k in (POLICY_KEY, STATE_KEY)}

    def _ojs_failed(self, exc: Exception) -> None:
        """Decides and carries out; returns only for discard / dead letter."""
        request = self.request
        carried = self._ojs_headers()
        failure = failure_from_exception(exc, timeout_types=self.ojs_timeout_types)
        attempt = int(request.retries or 0) + 1
        now = now_ms()
        queue = (request.delivery_info or {}).get("routing_key") or self.app.conf.task_default_queue
        out = transact(
            self.ojs_policy,
            carried[POLICY_KEY],
            carried[STATE_KEY],
            attempt,
            failure,
            key=str(request.id),
            queue=queue,
            job={"task": self.name, "args": request.args, "kwargs": request.kwargs},
            now=now,
        )
        decision = out.decision
        event = DecisionEvent("celery", str(request.id), attempt, failure, decision, now, {"queue": queue}, out.notes)
        if decision.action == "retry":
            headers = {**(request.headers or {}), POLICY_KEY: carried[POLICY_KEY], STATE_KEY: out.state_json}
            delay_ms = decision.delay_ms or 0
            retry = self.retry(exc=exc, countdown=delay_ms / 1000, headers=headers, throw=False)
            notify(self.ojs_listeners, event)
            raise retry
        if decision.action == "dead_letter":
            key = self.ojs_dead_letter_key or dead_letter_key(queue)
            url = self.ojs_dead_letter_url or self.app.conf.broker_url
            _redis_client(url).rpush(key, out.dead_letter or "null")
        notify(self.ojs_listeners, event)
