"""Dramatiq on an OJS retry policy: a middleware replacing ``Retries``.

    from ojs_retry.integrations.dramatiq import OjsRetries, JobError, middleware_without_retries, send

    broker = RedisBroker(url=..., middleware=middleware_without_retries())
    broker.add_middleware(OjsRetries({"max_attempts": 5, "on_exhaustion": "dead_letter"}))

    @dramatiq.actor(ojs_retry_policy={"max_attempts": 3})
    def charge(order_id): ...

    send(charge, 42, ojs_policy={"initial_interval": "PT2S"})

Layers: the middleware's defaults <- the actor's ``ojs_retry_policy`` option
<- the message's ``ojs_retry_policy`` option. :func:`send` validates the
message's layer before anything reaches Redis (``PolicyError``); a message
sent with ``send_with_options(ojs_retry_policy=...)`` directly is checked in
``before_enqueue``, which raises :class:`PolicyRefused` (Dramatiq lets only
its ``MiddlewareError`` through ``before_*`` hooks).

What it maps:

* attempt = ``message.options["retries"] + 1`` (Dramatiq counts from 0);
* the failure: :func:`~ojs_retry.integrations.failure_from_exception`;
  ``dramatiq.middleware.TimeLimitExceeded`` is a timeout;
* retry: ``retries`` + 1 and ``broker.enqueue(message, delay=delay_ms)``
  (Dramatiq's delay queue, in ms);
* dead letter: ``message.fail()``: the Redis broker moves the message to the
  queue's dead-letter queue ``<queue>.XQ``; the message stored there carries
  the dead-letter record in its ``ojs_dead_letter`` option;
* discard: the message is acknowledged (gone).

Dramatiq swallows exceptions raised in ``after_process_message``; if the
middleware cannot decide (a bad policy layer on the message, Redis down), it
logs the error and fails the message into ``.XQ`` rather than letting
Dramatiq acknowledge it as done.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

try:
    from dramatiq.middleware import Middleware, MiddlewareError, Retries, TimeLimitExceeded, default_middleware
except ImportError:  # the [dramatiq] extra is missing: the module still imports (stubtest, docs)
    Middleware = object
    MiddlewareError = TimeLimitExceeded = type("_Missing", (Exception,), {})
    Retries = None
    default_middleware = []

from .. import PolicyError, PolicyLayer, RetryPolicy
from ._core import (
    POLICY_KEY,
    STATE_KEY,
    DecisionEvent,
    JobError,
    Listener,
    failure_from_exception,
    layer_text,
    notify,
    now_ms,
    resolve_policy,
    transact,
    validate_job_policy,
)

__all__ = [
    "DEAD_LETTER_OPTION",
    "JobError",
    "OjsRetries",
    "PolicyRefused",
    "middleware_without_retries",
    "send",
]

#: The option of a dead-lettered message (in ``.XQ``) holding its record.
DEAD_LETTER_OPTION = "ojs_dead_letter"

_log = logging.getLogger(__name__)


class PolicyRefused(MiddlewareError):  # type: ignore[misc,valid-type]
    """A message's policy refused in ``before_enqueue``; ``error`` is the PolicyError."""

    def __init__(self, error: PolicyError) -> None:
        super().__init__(str(error))
        self.error = error
        self.code = error.code
        self.field = error.field


def middleware_without_retries() -> list[Middleware]:
    """Dramatiq's default middleware, without ``Retries``."""
    return [m() for m in default_middleware if m is not Retries]


def send(
    actor: Any,
    *args: Any,
    ojs_policy: PolicyLayer | RetryPolicy | None = None,
    **kwargs: Any,
) -> Any:
    """``actor.send`` validating the message's ``ojs_policy`` first.

    Raises :class:`ojs_retry.PolicyError` before anything reaches Redis. The
    check is the middleware's ``before_enqueue`` (once per message; here
    when the broker has no :class:`OjsRetries`).
    """
    if ojs_policy is None:
        return actor.send_with_options(args=args, kwargs=kwargs)
    if _find(actor.broker) is None:
        validate_job_policy(ojs_policy)
    try:
        return actor.send_with_options(args=args, kwargs=kwargs, **{POLICY_KEY: layer_text(ojs_policy)})
    except PolicyRefused as refused:
        raise refused.error from None


def _find(broker: Any) -> OjsRetries | None:
    for middleware in broker.middleware:
        if isinstance(middleware, OjsRetries):
            return middleware
    return None


class OjsRetries(Middleware):  # type: ignore[misc,valid-type]
    """Decides every failed message with the engine and carries it out."""

    def __init__(
        self,
        policy: PolicyLayer | RetryPolicy | None = None,
        *,
        listeners: Iterable[Listener] = (),
        timeout_types: Iterable[type[BaseException]] = (),
    ) -> None:
        resolve_policy(policy)
        self.policy = policy
        self.listeners = tuple(listeners)
        self.timeout_types = (TimeLimitExceeded, *timeout_types)
        # Each actor's defaults, resolved once: an actor's options are fixed
        # when it is declared.
        self._defaults: dict[str, RetryPolicy | None] = {}

    @property
    def actor_options(self) -> set[str]:
        return {POLICY_KEY}

    def actor_defaults(self, actor_options: dict[str, Any]) -> RetryPolicy | None:
        """The middleware's defaults <- the actor's ``ojs_retry_policy``.

        None when neither is set, so a message may carry a whole policy of
        its own, a preset too (a preset merges with no other layer).
        """
        layer = actor_options.get(POLICY_KEY)
        if self.policy is None and layer is None:
            return None
        return resolve_policy(self.policy, layer)

    def _actor_defaults(self, broker: Any, actor_name: str) -> RetryPolicy | None:
        """:meth:`actor_defaults` of the named actor, resolved once."""
        if actor_name not in self._defaults:
            self._defaults[actor_name] = self.actor_defaults(broker.get_actor(actor_name).options)
        return self._defaults[actor_name]

    def before_declare_actor(self, broker: Any, actor: Any) -> None:
        try:
            self.actor_defaults(actor.options)
        except PolicyError as error:
            raise PolicyRefused(error) from error

    def before_enqueue(self, broker: Any, message: Any, delay: int | None) -> None:
        layer = message.options.get(POLICY_KEY)
        if layer is None or STATE_KEY in message.options:
            # No layer, or a retry this middleware enqueues (its layer was
            # checked when it was first sent, and again by the decision).
            return
        try:
            text = validate_job_policy(layer, self._actor_defaults(broker, message.actor_name))
        except PolicyError as error:
            raise PolicyRefused(error) from error
        message.options[POLICY_KEY] = text

    def after_process_message(
        self, broker: Any, message: Any, *, result: Any = None, exception: BaseException | None = None
    ) -> None:
        if exception is None:
            return
        try:
            self._decide(broker, message, exception)
        except Exception:
            _log.exception("ojs_retry: could not decide message %s; failing it into .XQ", message.message_id)
            message.fail()

    def _decide(self, broker: Any, message: Any, exception: BaseException) -> None:
        failure = failure_from_exception(exception, timeout_types=self.timeout_types)
        attempt = int(message.options.get("retries", 0)) + 1
        now = now_ms()
        out = transact(
            self._actor_defaults(broker, message.actor_name),
            message.options.get(POLICY_KEY),
            message.options.get(STATE_KEY),
            attempt,
            failure,
            key=str(message.message_id),
            queue=message.queue_name,
            job={"actor": message.actor_name, "args": list(message.args), "kwargs": dict(message.kwargs)},
            now=now,
        )
        decision = out.decision
        message.options[STATE_KEY] = out.state_json
        if decision.action == "retry":
            message.options["retries"] = attempt
            broker.enqueue(message, delay=decision.delay_ms or 0)
        elif decision.action == "dead_letter":
            message.options[DEAD_LETTER_OPTION] = json.loads(out.dead_letter or "null")
            _store_for_xq(broker, message)
            message.fail()
        notify(self.listeners, self._event(message, attempt, failure, decision, now, out.notes))

    @staticmethod
    def _event(message: Any, attempt: int, failure: Any, decision: Any, now: int, notes: Any) -> DecisionEvent:
        extra = {"queue": message.queue_name}
        return DecisionEvent("dramatiq", str(message.message_id), attempt, failure, decision, now, extra, notes)


def _store_for_xq(broker: Any, message: Any) -> None:
    """Rewrites the stored message so ``.XQ`` keeps the updated options.

    The Redis broker's nack copies the message as stored at enqueue time
    (``<namespace>:<queue>.msgs``) into ``.XQ.msgs``; other brokers keep
    the message they are given.
    """
    client = getattr(broker, "client", None)
    namespace = getattr(broker, "namespace", None)
    redis_id = message.options.get("redis_message_id")
    if client is None or namespace is None or redis_id is None:
        return
    key = f"{namespace}:{message.queue_name}.msgs"
    client.hset(key, redis_id, message.encode())

