"""Dramatiq on an OJS retry policy: a middleware replacing ``Retries``.

Adoption is one line, and changes nothing until a policy is given: the
broker built with ``middleware=middleware_with_ojs_retries()`` (Dramatiq's
default middleware, :class:`OjsRetries` in ``Retries``' place). With no
defaults, an actor and message without an OJS layer keep their own
``max_retries``, ``min_backoff``, ``max_backoff`` and ``throws``, which the
engine reads through its ``dramatiq`` preset (:func:`adoption_layer`); an
actor's ``retry_when`` is still called, as ``Retries`` calls it: with it
the preset's ``max_retries`` is unlimited and a False answer is the
failure's handler code ``DEAD_LETTER`` (``.XQ``).

    from ojs_retry.integrations.dramatiq import OjsRetries, JobError, middleware_without_retries, send

    broker = RedisBroker(url=..., middleware=middleware_without_retries())
    broker.add_middleware(OjsRetries({"max_attempts": 5, "on_exhaustion": "dead_letter"}))

    @dramatiq.actor(ojs_retry_policy={"max_attempts": 3}, throws=(ValidationError,))
    def charge(order_id): ...

    send(charge, 42, ojs_retry_policy={"initial_interval": "PT2S"})

Layers: the middleware's defaults <- the actor's ``ojs_retry_policy`` option
<- the message's ``ojs_retry_policy`` option. :func:`send` validates the
message's layer before anything reaches the broker (``PolicyError``); a
message sent with ``send_with_options(ojs_retry_policy=...)`` directly is
checked in ``before_enqueue``, which raises :class:`PolicyRefused` (Dramatiq
lets only its ``MiddlewareError`` through ``before_*`` hooks).

What it maps:

* attempt = ``message.options["retries"] + 1`` (Dramatiq counts from 0);
* the failure: :func:`~ojs_retry.integrations.failure_from_exception`;
  ``dramatiq.middleware.TimeLimitExceeded`` is a timeout; an exception of
  the actor's ``throws`` is a non-retryable match: the listed classes' types
  are added to the actor's ``non_retryable_errors``, and an instance of a
  subclass is recorded under the listed class's type (Dramatiq matches with
  ``isinstance``, ``non_retryable_errors`` the type alone); adopted, the
  ``dramatiq`` preset's ``throws`` matches a subclass by the failure's
  ancestors, and it is recorded under its own type;
* an attempt whose worker died (the broker redelivers the message with
  ``retries`` unchanged) is decided as a timed-out attempt before anything
  runs again. It is found by a run mark — ``add`` on a Dramatiq
  rate-limiter backend, set when an attempt starts — on a Redis broker or
  with ``marks=``; on RabbitMQ without marks, by the delivery's
  ``redelivered`` flag, which RabbitMQ also sets on a message a worker
  had prefetched but not started when it stopped (docs/integrations.md:
  run workers with a prefetch of one message per thread);
* a copy of an attempt that already ended (Dramatiq delivers a delayed
  message twice when the worker that moved it from ``.DQ`` to the queue
  died before its acknowledgement reached the broker) is acknowledged
  without running: a message moved from ``.DQ`` carries the option
  ``ojs_retry_delayed``, and when its attempt ends an end mark joins the run
  mark. Without marks (RabbitMQ's ``redelivered`` flag) such a copy runs
  again as the same attempt, as with Dramatiq's own ``Retries``;
* retry: ``retries`` + 1 and ``broker.enqueue(message, delay=...)``, the
  delay the engine's, or the one of a ``dramatiq.Retry(delay=...)`` raised
  by the actor (the engine still decides whether it is retried); a delay
  of 0 is enqueued on the queue itself, not through ``.DQ``;
* dead letter: the dead-letter record goes to :attr:`OjsRetries.dead_letters`
  — on a Redis broker the list ``<namespace>:<queue>:dead`` and the message
  to Dramatiq's dead-letter queue ``.XQ`` (``message.fail()``); on RabbitMQ
  the record itself, published as a persistent message to the durable
  ``<queue>.XQ`` (``message.fail()`` would dead-letter the body as first
  published, without what the engine recorded), and the message acknowledged;
* discard: the message is acknowledged (gone).

Dramatiq swallows exceptions raised in ``after_process_message``; if the
middleware cannot decide (the broker unreachable), it logs the error and
fails the message into ``.XQ`` rather than letting Dramatiq acknowledge it.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Callable, Iterable
from typing import Any

from .. import Outcome, PolicyError, PolicyLayer, RetryPolicy
from ._core import (
    POLICY_KEY,
    STATE_KEY,
    Failure,
    JobError,
    Listener,
    class_of,
    dead_letter_properties,
    error_type_of,
    failure_from_exception,
    import_optional,
    layer_text,
    now_ms,
    renamed_keywords,
    require,
    resolve_policy,
    tell,
    transact,
    validate_job_policy,
)

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

_middleware = import_optional("dramatiq.middleware")
_errors = import_optional("dramatiq.errors")
_Middleware: Any = _middleware.Middleware if _middleware else object
_MiddlewareError = class_of(_middleware, "MiddlewareError")
_TimeLimitExceeded = class_of(_middleware, "TimeLimitExceeded")
_Retry = class_of(_errors, "Retry")

#: The error type of an attempt whose worker died before it reported.
LOST_TYPE = "dramatiq.WorkerLost"
#: The options of Dramatiq's ``Retries`` the ``dramatiq`` preset reads, as
#: Retries reads them: the message's, else the actor's.
ADOPTED_OPTIONS = ("max_retries", "min_backoff", "max_backoff")
#: The option of a message Dramatiq moved from ``.DQ``: the only kind it
#: delivers again as a first delivery, so the only one whose attempts get an
#: end mark (a message never delayed pays for the run mark alone).
DELAYED_KEY = "ojs_retry_delayed"
#: How long run and end marks are kept (ms): a message redelivered later than this
#: after its worker died is run again as the same attempt.
MARK_TTL_MS = 24 * 3600 * 1000

DeadLetters = Callable[[Any, Any, str], None]
_log = logging.getLogger(__name__)


class PolicyRefused(_MiddlewareError):  # type: ignore[misc]
    """A message's policy refused in ``before_enqueue``; ``error`` is the PolicyError."""

    def __init__(self, error: PolicyError) -> None:
        super().__init__(str(error))
        self.error = error
        self.code = error.code
        self.field = error.field


def dead_letter_key(queue: str, namespace: str = "dramatiq") -> str:
    """The Redis list of a Redis broker's dead-letter records: ``<namespace>:<queue>:dead``."""
    return f"{namespace}:{queue}:dead"


def middleware_without_retries() -> list[Any]:
    """Dramatiq's default middleware, without ``Retries``."""
    mw = require(_middleware, "dramatiq")
    return [m() for m in mw.default_middleware if m is not mw.Retries]


def _throws(options: Any) -> tuple[type[BaseException], ...]:
    throws = options.get("throws") or ()
    return tuple(throws) if isinstance(throws, (tuple, list)) else (throws,)


def middleware_with_ojs_retries(ojs_retry_policy: PolicyLayer | RetryPolicy | None = None, **kwargs: Any) -> list[Any]:
    """Dramatiq's default middleware with :class:`OjsRetries` in ``Retries``' place.

    ``RedisBroker(url=..., middleware=middleware_with_ojs_retries())``: the
    one-line adoption. The arguments are :class:`OjsRetries`'.
    """
    mw = require(_middleware, "dramatiq")
    ojs = OjsRetries(ojs_retry_policy, **kwargs)
    return [ojs if m is mw.Retries else m() for m in mw.default_middleware]


def adoption_layer(actor_options: Any, message_options: Any) -> dict[str, Any]:
    """The ``dramatiq`` preset of an actor and message without an OJS layer.

    ``max_retries``, ``min_backoff`` and ``max_backoff`` as ``Retries``
    reads them (the message's option, else the actor's, else the preset's
    default, which is Retries'), ``throws`` as the listed classes' error
    types; with a ``retry_when`` on the actor, ``max_retries`` is unlimited
    (``Retries`` does not consult it; the answer is the failure's code).

    >>> adoption_layer({"max_retries": 3, "throws": (KeyError,)}, {"min_backoff": 100})
    {'preset': {'system': 'dramatiq', 'max_retries': 3, 'min_backoff': 100, 'throws': ['KeyError']}}
    """
    options: dict[str, Any] = {"system": "dramatiq"}
    for name in ADOPTED_OPTIONS:
        if name in message_options:
            options[name] = message_options[name]
        elif name in actor_options:
            options[name] = actor_options[name]
    if actor_options.get("retry_when") is not None:
        options["max_retries"] = None
    throws = _throws(actor_options)
    if throws:
        options["throws"] = [error_type_of(c) for c in throws]
    return {"preset": options}


@renamed_keywords(ojs_policy=POLICY_KEY)
def send(actor: Any, *args: Any, ojs_retry_policy: PolicyLayer | RetryPolicy | None = None, **kwargs: Any) -> Any:
    """``actor.send`` validating the message's ``ojs_retry_policy`` first.

    Raises :class:`ojs_retry.PolicyError` before anything reaches the broker.
    The check is the middleware's ``before_enqueue`` (once per message; here
    when the broker has no :class:`OjsRetries`).
    """
    if ojs_retry_policy is None:
        return actor.send_with_options(args=args, kwargs=kwargs)
    if not any(isinstance(m, OjsRetries) for m in actor.broker.middleware):
        validate_job_policy(ojs_retry_policy)
    try:
        return actor.send_with_options(args=args, kwargs=kwargs, **{POLICY_KEY: layer_text(ojs_retry_policy)})
    except PolicyRefused as refused:
        raise refused.error from None


class OjsRetries(_Middleware):  # type: ignore[misc]
    """Decides every failed message with the engine and carries it out.

    ``marks``: where run marks go — any Dramatiq rate-limiter backend (its
    ``add``); by default the broker's own Redis on a Redis broker, and none
    on another broker: on RabbitMQ a redelivered message is then a lost
    attempt; on any other, an attempt whose worker died is run again as the
    same attempt. ``dead_letters(broker, message, record)``: where a
    dead-letter record goes (the message then goes to ``.XQ``); by default
    the Redis list :func:`dead_letter_key` on a Redis broker, ``<queue>.XQ``
    itself on RabbitMQ (the record instead of the message), and the log
    elsewhere.
    """

    @renamed_keywords(policy=POLICY_KEY)
    def __init__(
        self,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        *,
        listeners: Iterable[Listener] = (),
        timeout_types: Iterable[type[BaseException]] = (),
        marks: Any = None,
        dead_letters: DeadLetters | None = None,
    ) -> None:
        require(_middleware, "dramatiq")
        resolve_policy(ojs_retry_policy)
        self.policy = ojs_retry_policy
        self.listeners = tuple(listeners)
        self.timeout_types = (_TimeLimitExceeded, *timeout_types)
        self.marks = marks
        self.dead_letters = dead_letters or _default_dead_letters
        # Each actor's defaults, resolved once: an actor's options are fixed
        # when it is declared, and only declared actors get here (bounded).
        self._defaults: dict[str, RetryPolicy | None] = {}

    @property
    def actor_options(self) -> set[str]:
        return {POLICY_KEY, "throws", "retry_when", *ADOPTED_OPTIONS}

    def _adopted(self, actor_options: Any, message_options: Any) -> bool:
        """No policy anywhere: the actor's and message's own Retries options."""
        return self.policy is None and actor_options.get(POLICY_KEY) is None and POLICY_KEY not in message_options

    def _adoption_text(self, actor_options: Any, message_options: Any) -> str:
        """:func:`adoption_layer` as JSON text, validated: a bad option is a
        ``PolicyError`` where the actor is declared or the message sent."""
        text = layer_text(adoption_layer(actor_options, message_options))
        resolve_policy(text)
        return text

    def actor_defaults(self, actor_options: dict[str, Any]) -> RetryPolicy | None:
        """The middleware's defaults <- the actor's ``ojs_retry_policy``, with
        the types of its ``throws`` added to ``non_retryable_errors``.

        None when none is set, so a message may carry a whole policy of its
        own, a preset too (a preset merges with no other layer and carries
        its own ``throws``).
        """
        layer = actor_options.get(POLICY_KEY)
        throws = _throws(actor_options)
        if self.policy is None and layer is None and not throws:
            return None
        policy = resolve_policy(self.policy, layer)
        listed = list(dict.fromkeys([*policy.non_retryable_errors, *map(error_type_of, throws)]))
        if policy.preset_system is not None or len(listed) == len(policy.non_retryable_errors):
            return policy
        return RetryPolicy.merge(policy.to_json(), {"non_retryable_errors": listed})

    def _actor_defaults(self, broker: Any, actor_name: str) -> RetryPolicy | None:
        if actor_name not in self._defaults:
            self._defaults[actor_name] = self.actor_defaults(broker.get_actor(actor_name).options)
        return self._defaults[actor_name]

    def before_declare_actor(self, broker: Any, actor: Any) -> None:
        try:
            self.actor_defaults(actor.options)
            if self._adopted(actor.options, {}):
                self._adoption_text(actor.options, {})
        except PolicyError as error:
            raise PolicyRefused(error) from error

    def before_enqueue(self, broker: Any, message: Any, delay: int | None) -> None:
        if STATE_KEY in message.options:
            return  # a retry this middleware enqueues: checked when first sent, and by the decision
        layer = message.options.get(POLICY_KEY)
        try:
            if layer is None:
                actor_options = broker.get_actor(message.actor_name).options
                if self._adopted(actor_options, message.options) and \
                        any(name in message.options for name in ADOPTED_OPTIONS):
                    self._adoption_text(actor_options, message.options)
                return
            text = validate_job_policy(layer, self._actor_defaults(broker, message.actor_name))
        except PolicyError as error:
            raise PolicyRefused(error) from error
        message.options[POLICY_KEY] = text

    def before_process_message(self, broker: Any, message: Any) -> None:
        """Marks the attempt started; a mark already there means the worker
        that started this attempt died before it reported, unless the
        attempt's end mark is there too: then this delivery is a copy of an
        attempt that ended, acknowledged without running."""
        skip = require(_middleware, "dramatiq").SkipMessage
        run, end = _marks_of(message)  # before a retry's decision changes ``retries``
        marks = self._marks(broker)
        if marks is None:
            # RabbitMQ's own mark: a delivery it had given a consumer before.
            if not (_is_rabbitmq(broker) and getattr(message, "redelivered", False)):
                return
        else:
            if marks.add(run, 1, MARK_TTL_MS):
                return
            if end is not None and _ended(marks, end):
                _log.warning("ojs_retry: message %s is a copy of an attempt that ended; not run", message.message_id)
                raise skip("a copy of an attempt that ended")
        lost = Failure(LOST_TYPE, None, True, "the worker running this attempt stopped before it reported")
        self._decide(broker, message, lost, None)
        self._end(broker, end)
        raise skip("decided as a lost attempt")

    def after_process_message(
        self, broker: Any, message: Any, *, result: Any = None, exception: BaseException | None = None
    ) -> None:
        _, end = _marks_of(message)  # before a retry's decision changes ``retries``
        try:
            if exception is not None:
                self._decide(broker, message, self._failure(broker, message, exception), exception)
        except Exception:
            _log.exception("ojs_retry: could not decide message %s; failing it into .XQ", message.message_id)
            message.fail()
        self._end(broker, end)

    def before_delay_message(self, broker: Any, message: Any) -> None:
        message.options[DELAYED_KEY] = 1  # Dramatiq's copy to the queue keeps it

    def _end(self, broker: Any, end: str | None) -> None:
        """The attempt's end mark, set once its outcome was carried out (a
        kill before it makes a copy decide again: never lost)."""
        marks = self._marks(broker)
        if marks is not None and end is not None:
            # A probe of _ended may have created it as 0.
            marks.add(end, 1, MARK_TTL_MS) or marks.incr(end, 1, 1, MARK_TTL_MS)

    def _failure(self, broker: Any, message: Any, exception: BaseException) -> Failure:
        failure = failure_from_exception(exception, timeout_types=self.timeout_types)
        options = broker.get_actor(message.actor_name).options
        adopted = self._adopted(options, message.options)
        thrown = [c for c in _throws(options) if isinstance(exception, c)]
        if thrown:
            # The preset matches a subclass by the failure's ancestors; a
            # plain policy's non_retryable_errors match its type alone.
            return failure if adopted else dataclasses.replace(failure, type=error_type_of(thrown[0]))
        retry_when = options.get("retry_when")
        if retry_when is not None and failure.code is None and adopted and \
                not retry_when(int(message.options.get("retries", 0)), exception):
            # Retries' answer: the message fails (Retries asks before it
            # counts the attempt, and only for what ``throws`` lets through).
            return dataclasses.replace(failure, code="DEAD_LETTER")
        return failure

    def _decide(self, broker: Any, message: Any, failure: Failure, exception: BaseException | None) -> None:
        attempt = int(message.options.get("retries", 0)) + 1
        now = now_ms()
        options = broker.get_actor(message.actor_name).options
        adopted = self._adopted(options, message.options)
        out = transact(
            layer_text(adoption_layer(options, message.options)) if adopted
            else self._actor_defaults(broker, message.actor_name),
            message.options.get(POLICY_KEY),
            message.options.get(STATE_KEY),
            attempt,
            failure,
            key=str(message.message_id),
            queue=message.queue_name,
            job={"actor": message.actor_name, "args": list(message.args), "kwargs": dict(message.kwargs)},
            now=now,
        )
        message.options[STATE_KEY] = out.state_json
        self._carry_out(broker, message, out, exception)
        tell(self.listeners, "dramatiq", str(message.message_id), attempt, failure, out, now,
             queue=message.queue_name)

    def _carry_out(self, broker: Any, message: Any, out: Outcome, exception: BaseException | None) -> None:
        action = out.decision.action
        if action == "retry":
            delay = out.decision.delay_ms or 0
            if isinstance(exception, _Retry) and exception.delay is not None:
                delay = max(0, int(exception.delay))  # the actor's own delay; the engine chose to retry
            message.options["retries"] = out.decision.attempt
            message.options.pop(DELAYED_KEY, None)  # set again if it passes through .DQ
            broker.enqueue(message, delay=delay or None)  # 0: no hop through .DQ
        elif action == "dead_letter":
            self.dead_letters(broker, message, out.dead_letter or "null")
            if self.dead_letters is not _default_dead_letters or not _is_rabbitmq(broker):
                message.fail()  # else the record is in .XQ in its place

    def _marks(self, broker: Any) -> Any:
        if self.marks is None and _is_redis(broker):
            from dramatiq.rate_limits.backends import RedisBackend  # noqa: PLC0415

            self.marks = RedisBackend(client=broker.client)
        return self.marks


def _marks_of(message: Any) -> tuple[str, str | None]:
    """The attempt's run mark, and its end mark if it was moved from ``.DQ``."""
    attempt = f"{message.queue_name}:{message.message_id}:{message.options.get('retries', 0)}"
    return f"ojs_retry:run:{attempt}", f"ojs_retry:end:{attempt}" if message.options.get(DELAYED_KEY) else None


def _ended(marks: Any, end: str) -> bool:
    """Whether the end mark is set, with the rate-limiter API (``add`` and a
    bounded ``incr``; no read): an ``incr`` by 0 up to 0 holds only while the
    mark is 0 (Memcached's ``incr`` needs the key to exist)."""
    marks.add(end, 0, MARK_TTL_MS)
    return not marks.incr(end, 0, 0, MARK_TTL_MS)


def _is_redis(broker: Any) -> bool:
    redis_broker = sys.modules.get("dramatiq.brokers.redis")  # not imported: no Redis broker exists
    return redis_broker is not None and isinstance(broker, redis_broker.RedisBroker)


def _is_rabbitmq(broker: Any) -> bool:
    rabbitmq_broker = sys.modules.get("dramatiq.brokers.rabbitmq")  # not imported: no RabbitMQ broker exists
    return rabbitmq_broker is not None and isinstance(broker, rabbitmq_broker.RabbitmqBroker)


def _publish_to_xq(broker: Any, message: Any, record: str) -> None:
    """The record as one persistent message on the queue's durable ``.XQ``
    (declared with the queue), on this thread's channel of the broker."""
    import pika  # noqa: PLC0415  (RabbitmqBroker's own dependency)
    from dramatiq.common import xq_name  # noqa: PLC0415

    broker.declare_queue(message.queue_name, ensure=True)
    props = pika.BasicProperties(**dead_letter_properties(str(message.message_id), message.queue_name))
    broker.channel.basic_publish(exchange="", routing_key=xq_name(message.queue_name), body=record.encode(),
                                 properties=props)


def _default_dead_letters(broker: Any, message: Any, record: str) -> None:
    """A Redis broker's list :func:`dead_letter_key`; RabbitMQ's ``<queue>.XQ``;
    the log on another broker."""
    if _is_redis(broker):
        broker.client.rpush(dead_letter_key(message.queue_name, broker.namespace), record)
    elif _is_rabbitmq(broker):
        _publish_to_xq(broker, message, record)
    else:
        _log.warning("ojs_retry: dead letter of message %s: %s", message.message_id, record)
