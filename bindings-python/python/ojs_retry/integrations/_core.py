"""What every queue integration shares, on the engine's public API only.

An integration turns the queue's failure into the engine's failure, asks the
engine, and carries the decision out. The pieces here are the parts of that
which do not depend on the queue:

* :class:`JobError` — the exception a handler raises to name its error type
  and handler code (``JobError("payment.card_stolen", code="DEAD_LETTER")``).
* :func:`failure_from_exception` — any exception to a :class:`Failure`.
  The rule for the error type of an ordinary exception (:func:`error_type_of`):
  ``JobError.type`` when it is a :class:`JobError`; otherwise the exception
  class's ``__qualname__`` for built-in exceptions (``ValueError``,
  ``KeyError``) and ``<module>.<qualname>`` for every other class
  (``requests.exceptions.ConnectTimeout``, ``myapp.errors.Declined``), so
  ``non_retryable_errors: ["requests.*"]`` matches a whole package. Python's
  ``TimeoutError`` (``asyncio.TimeoutError`` and ``socket.timeout`` are the
  same class) and the queue's own time-limit exceptions (given by the
  integration) are timeouts: ``timed_out=True`` (spec §9.2: retryable unless
  attempts are exhausted), with the type derived as above for the history.
* :func:`validate_job_policy` / :func:`resolve_policy` — the job's policy
  layer over the queue's defaults (``RetryPolicy.merge``), validated at
  enqueue time (RET-16) so a bad policy raises :class:`ojs_retry.PolicyError`
  before anything reaches Redis. The job carries its *layer* (JSON text) in
  the queue's own options / metadata; every worker merges it over its own
  defaults. A preset is a whole policy: the engine refuses to merge it with
  another layer, and that refusal is the enqueue-time error.
* :func:`transact` — the engine's failure transaction
  (:func:`ojs_retry.run_transaction`): the queue's defaults, the job's
  carried layer and §10 state, the queue's attempt counter and the failure
  give the outcome — the decision keyed by the job id (every worker
  computes the same delay for the same attempt), the state to store and,
  for a dead letter, the dead-letter record. It never raises for what the
  job carries; the rebasing, truncation and record are the engine's.
* :func:`dead_letter_properties` — the one shape of a dead-letter record
  published as a message (on RabbitMQ: Celery's ``<queue>:dead``, Dramatiq's
  ``<queue>.XQ``): the record is the body, the properties say what it is.
* :func:`notify` / :func:`tell` — listeners are told after the decision was
  carried out; one that raises is logged, never changing the outcome.
* :func:`import_optional` / :func:`require` — the one way an integration
  imports its queue package, and the one message when it is missing.
* :data:`POLICY_KEYWORD` — the one keyword every integration takes a policy
  by (``ojs_retry_policy``, the key a job carries it under);
  :func:`renamed_keywords` keeps the earlier documented names working, with
  a ``DeprecationWarning``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import logging
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeGuard, TypeVar

from .. import Decision, HandlerCode, Outcome, PolicyLayer, RetryPolicy, run_transaction

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

#: Where a job carries its policy layer (JSON text) in the queue's options.
POLICY_KEY = "ojs_retry_policy"
#: The one keyword name for a policy in every integration (the job's layer,
#: an actor's or task's layer, a worker's defaults): the same word as the key
#: the job carries it under, so a producer on the plain queue API
#: (``send_with_options(ojs_retry_policy=...)``, BullMQ's job options) writes
#: the same name.
POLICY_KEYWORD = POLICY_KEY
#: Where a job carries its §10 retry state (JSON text) between attempts.
STATE_KEY = "ojs_retry_state"
#: Error history entries kept per job (spec §10.1: at least the newest 10).
HISTORY_LIMIT = 10

_HANDLER_CODES = ("RETRY", "DISCARD", "DEAD_LETTER", "FAIL")

_log = logging.getLogger("ojs_retry")

_F = TypeVar("_F", bound=Callable[..., Any])


def import_optional(module: str) -> ModuleType | None:
    """The queue's module (``"celery.exceptions"``), or None when it cannot
    be imported: an integration module imports without its extra (stub
    checks, docs) and says what is missing when used (:func:`require`)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


class _Absent(Exception):
    """Stands for a class of a queue package that is not installed: never raised."""


def class_of(module: ModuleType | None, name: str) -> Any:
    """``module.<name>``, or a placeholder class when the package is missing,
    so that the integration module still imports (its ``except`` clauses and
    base classes need a class)."""
    return getattr(module, name) if module is not None else _Absent


def require(module: ModuleType | None, extra: str) -> ModuleType:
    """``module`` when it was imported; otherwise the one ``ImportError`` of
    every integration: which integration needs which package, and the
    ``pip install`` line that brings it (``extra`` names both)."""
    if module is None:
        raise ImportError(
            f'ojs_retry.integrations.{extra} needs the "{extra}" package, which is not installed: '
            f'pip install "ojs-retry[{extra}]"',
            name=extra,
        )
    return module


def renamed_keywords(**old_to_new: str) -> Callable[[_F], _F]:
    """Keeps a keyword's earlier documented name working: it is passed on
    under the new name with a ``DeprecationWarning``; both at once is a
    ``TypeError``."""

    def wrap(fn: _F) -> _F:
        def rename(kwargs: dict[str, Any]) -> dict[str, Any]:
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{fn.__qualname__}() got both {old}= and {new}=")
                    warnings.warn(f"{fn.__qualname__}({old}=...) is deprecated: use {new}=",
                                  DeprecationWarning, stacklevel=3)
                    kwargs[new] = kwargs.pop(old)
            return kwargs

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def inner_async(*args: Any, **kwargs: Any) -> Any:
                return await fn(*args, **rename(kwargs))

            return inner_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **rename(kwargs))

        return inner  # type: ignore[return-value]

    return wrap


class JobError(Exception):
    """A handler failure with an OJS error type and an optional handler code.

    ``code`` is one of ``RETRY``, ``DISCARD``, ``DEAD_LETTER``, ``FAIL``
    (spec §7); an unknown code raises :class:`ojs_retry.PolicyError` here,
    where the handler raised it, not later in the worker.
    """

    def __init__(
        self,
        type: str,
        code: HandlerCode | None = None,
        message: str | None = None,
        details: Any = None,
    ) -> None:
        if code is not None and code not in _HANDLER_CODES:
            # The engine's own check, so the error is the engine's typed one.
            RetryPolicy().decide(1, type=type, code=code)
        super().__init__(message if message is not None else type)
        self.type = type
        self.code: HandlerCode | None = code
        self.message = message
        self.details = details

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.type, self.code, self.message, self.details))


@dataclass(frozen=True)
class Failure:
    """The engine's failure: what ``RetryPolicy.decide`` takes."""

    type: str | None = None
    code: HandlerCode | None = None
    timed_out: bool = False
    message: str | None = None
    details: Any = None
    #: The exception class's bases (its MRO after itself, without
    #: ``object``), nearest first: a preset matches them as its queue's
    #: ``isinstance`` does (Celery's ``autoretry_for``, Dramatiq's ``throws``).
    ancestors: tuple[str, ...] = ()

    def as_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``decide`` / ``RetryState.record_failure``."""
        out: dict[str, Any] = {"type": self.type, "code": self.code, "message": self.message}
        if self.ancestors:
            out["ancestors"] = self.ancestors
        if self.timed_out:
            out["timed_out"] = True
        if self.details is not None:
            out["details"] = self.details
        return out


def error_type_of(exc_class: type[BaseException]) -> str:
    """The error type of an exception class (see the module's rule)."""
    module = getattr(exc_class, "__module__", "builtins")
    qualname = getattr(exc_class, "__qualname__", exc_class.__name__)
    return qualname if module == "builtins" else f"{module}.{qualname}"


def failure_from_exception(
    exc: BaseException, *, timeout_types: Iterable[type[BaseException]] = ()
) -> Failure:
    """Turns any exception into the engine's failure (see the module's rule)."""
    timed_out = isinstance(exc, (TimeoutError, *tuple(timeout_types)))
    if isinstance(exc, JobError):
        return Failure(exc.type, exc.code, timed_out, exc.message or exc.type, exc.details)
    text = str(exc)
    return Failure(error_type_of(type(exc)), None, timed_out, text or type(exc).__name__, None, ancestors_of(type(exc)))


def ancestors_of(exc_class: type[BaseException]) -> tuple[str, ...]:
    """The error types of a class's bases, nearest first (its MRO after
    itself, without ``object``)."""
    return tuple(error_type_of(c) for c in exc_class.__mro__[1:] if c is not object)


def layer_text(layer: PolicyLayer | RetryPolicy) -> str:
    """A policy layer as the JSON text a job carries."""
    if isinstance(layer, RetryPolicy):
        return layer.to_json()
    if isinstance(layer, (bytes, bytearray)):
        return bytes(layer).decode("utf-8")
    if isinstance(layer, str):
        return layer
    # Its own pairs, read once through items() as the engine reads a
    # mapping (not keys() then [key], which a mapping may answer apart).
    return _LAYER_ENCODER.encode(dict(layer.items()))


#: NaN and infinities are not JSON: a layer holding one is the engine's to refuse.
_LAYER_ENCODER = json.JSONEncoder(separators=(",", ":"), sort_keys=True, allow_nan=False)


def _layers(
    defaults: PolicyLayer | RetryPolicy | None, job: PolicyLayer | RetryPolicy | None
) -> list[PolicyLayer]:
    out: list[PolicyLayer] = []
    for layer in (defaults, job):
        if layer is None:
            continue
        out.append(layer.to_json() if isinstance(layer, RetryPolicy) else layer)
    return out


def resolve_policy(
    defaults: PolicyLayer | RetryPolicy | None, job: PolicyLayer | RetryPolicy | None = None
) -> RetryPolicy:
    """The effective policy: queue ``defaults`` <- the ``job``'s layer.

    Either may be absent (the spec's default policy fills in). Raises
    :class:`ojs_retry.PolicyError` for a bad layer or a preset mixed with
    another layer.
    """
    if job is None and isinstance(defaults, RetryPolicy):
        return defaults
    layers = _layers(defaults, job)
    return RetryPolicy.merge(*layers) if layers else RetryPolicy()


def validate_job_policy(
    job: PolicyLayer | RetryPolicy | None, defaults: PolicyLayer | RetryPolicy | None = None
) -> str | None:
    """Enqueue-time validation (RET-16): the text the job carries, or None.

    Raises :class:`ojs_retry.PolicyError` (nothing has reached the queue yet)
    when the job's layer, or the queue's defaults with it, is not a valid
    policy.
    """
    if job is None:
        resolve_policy(defaults)
        return None
    try:
        text = layer_text(job)
        under = defaults if defaults is None or isinstance(defaults, RetryPolicy) else layer_text(defaults)
        if len(text) <= _CACHED_TEXT and (not isinstance(under, str) or len(under) <= _CACHED_TEXT):
            _accepted(under, text)
        else:
            resolve_policy(under, text)
        return text
    except Exception as error:  # noqa: BLE001  (what a layer's own items() raises too)
        refused = error
    # Outside the handler, so that the engine's own typed error for the
    # layer as given is raised unchained; else the one above.
    resolve_policy(defaults, job)
    raise refused


#: The longest text a cache of this module keeps (a policy is far shorter).
_CACHED_TEXT = 4096


@functools.lru_cache(maxsize=256)
def _accepted(defaults: str | RetryPolicy | None, text: str) -> None:
    """Validates a job's layer text over hashable defaults once: a producer
    sends the same few layers over the same defaults again and again (at
    most 256 accepted pairs of at most 4 KiB texts are kept; a refusal
    raises, and is not kept)."""
    resolve_policy(defaults, text)


class _Unstated:
    def __repr__(self) -> str:
        return "WORKERS_UNSTATED"


#: The default of ``defaults=`` where a producer enqueues for workers it does
#: not run (BullMQ, ChasquiMQ): the producer has not said which defaults the
#: workers run.
WORKERS_UNSTATED: Any = _Unstated()


def validate_enqueued_layer(job: PolicyLayer | RetryPolicy | None, defaults: Any) -> str | None:
    """:func:`validate_job_policy` for a producer that does not run the workers.

    A job's layer is only valid over the defaults the workers run, so a
    producer that gives a layer must say which they are (``None`` when the
    workers have none): guessing would let a layer the workers refuse reach
    the queue. Raises ``TypeError`` when it did not say.
    """
    if defaults is WORKERS_UNSTATED:
        if job is not None:
            raise TypeError(
                "a job's policy layer is validated against the workers' defaults: "
                "pass defaults= (None when the workers have none)"
            )
        defaults = None
    return validate_job_policy(job, defaults)


def dead_letter_properties(job_id: str, queue: str) -> dict[str, Any]:
    """The message properties of a dead-letter record published to a queue
    (AMQP: kombu's ``Producer.publish`` and pika's ``BasicProperties`` take
    them as they are): persistent, JSON, the job id as the message id.

    >>> dead_letter_properties("job-1", "emails")["headers"]
    {'ojs_dead_letter': 1, 'ojs_job_id': 'job-1', 'ojs_queue': 'emails'}
    """
    return {
        "content_type": "application/json",
        "content_encoding": "utf-8",
        # Persistent: a durable queue keeps it across a broker restart.
        "delivery_mode": 2,
        "message_id": job_id,
        "headers": {"ojs_dead_letter": 1, "ojs_job_id": job_id, "ojs_queue": queue},
    }


def now_ms() -> int:
    """The system clock in epoch milliseconds."""
    return time.time_ns() // 1_000_000


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
) -> Outcome:
    """The failure transaction (:func:`ojs_retry.run_transaction`) of one job.

    ``attempt`` is the queue's own counter, ``layer`` and ``state`` the texts
    the job carries (or ``None``), ``key`` the job id and ``job`` what a
    person needs to re-enqueue it by hand (kept in the dead-letter record).
    Never raises for what the job carries: a refused layer is a dead letter,
    an unreadable or disagreeing state is rebased, an over-long message is
    truncated — each in ``outcome.notes``.
    """
    return run_transaction(
        attempt,
        key=key,
        defaults=_built(defaults) if layer is None and _short_text(defaults) else defaults,
        layer=layer,
        state=state,
        history_limit=HISTORY_LIMIT,
        queue=queue,
        job=job,
        now=now if now is not None else now_ms(),
        **failure.as_kwargs(),
    )


def _short_text(defaults: object) -> TypeGuard[str]:
    return isinstance(defaults, str) and len(defaults) <= _CACHED_TEXT


@functools.lru_cache(maxsize=256)
def _built(text: str) -> RetryPolicy | str:
    """The policy of a short defaults text (an adoption preset, a queue's
    defaults), built once (at most 256 of them, 4 KiB each, are kept): the
    engine takes a built policy as it is, where it would read the text on
    every failure. A text it refuses stays text, for the transaction to
    note."""
    try:
        return RetryPolicy(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class DecisionEvent:
    """One decision an integration carried out, for listeners (logs, metrics)."""

    queue: str
    job_id: str
    attempt: int
    failure: Failure
    decision: Decision
    at_ms: int
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: What the transaction changed or could not use: ``(kind, message)``.
    notes: tuple[tuple[str, str], ...] = ()


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
) -> None:
    """Builds the :class:`DecisionEvent` of a carried-out ``outcome`` (``system``:
    ``"celery"``, ``"rq"``...; ``extra``: e.g. the queue's name) and
    :func:`notify` its listeners (call it last, after the queue was told)."""
    event = DecisionEvent(system, job_id, attempt, failure, outcome.decision, now, extra, tuple(outcome.notes))
    notify(listeners, event)


def notify(listeners: Iterable[Listener], event: DecisionEvent) -> None:
    """Tells every listener, after the decision was carried out.

    A listener that raises is logged (logger ``ojs_retry``) and the next one
    is still called: a listener never changes or loses the outcome.
    """
    for listener in listeners:
        try:
            listener(event)
        except Exception:
            _log.exception("ojs_retry: listener %r raised for job %s", listener, event.job_id)
