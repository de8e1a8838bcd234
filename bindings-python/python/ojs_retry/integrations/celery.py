"""Celery on an OJS retry policy: one call for the whole app, or a ``Task`` base class.

    from ojs_retry.integrations import celery as ojs_celery

    ojs_celery.install(app)  # every task on the engine, each keeping its own retry options

    @app.task(autoretry_for=(ConnectionError,), max_retries=5)  # unchanged
    def fetch(url): ...

    @app.task(ojs_retry_policy={"max_attempts": 5})  # this task on an OJS policy
    def charge(order_id): ...

or, task by task:

    from ojs_retry.integrations.celery import OjsTask, JobError

    @app.task(bind=True, base=OjsTask, ojs_retry_policy={"max_attempts": 5})
    def charge(self, order_id): ...

    charge.apply_async((42,), ojs_retry_policy={"on_exhaustion": "dead_letter"})

What it maps (docs/integrations.md has the whole table):

* attempt = ``request.retries + 1`` (Celery counts retries from 0);
* the failure: :func:`~ojs_retry.integrations.failure_from_exception` on
  what the task raised; ``SoftTimeLimitExceeded`` and ``TimeLimitExceeded``
  are timeouts;
* an attempt that never reported — a hard time limit, a pool process killed
  (``WorkerLostError``) — is seen by Celery's request hooks in the worker's
  main process (:class:`OjsRequest`) and decided there as a timed-out attempt
  (one the engine ends is failed through Celery's ``Reject(requeue=False)``,
  so ``task_reject_on_worker_lost`` / ``task_retry_on_worker_lost`` never run
  it again),
  unless its pool process had decided it: once a prefork pool process has
  carried out a decision it marks the attempt (a file ``<task id>.<retries>``
  holding the action, in ``<tmp>/ojs-retry-celery-<uid>/<main pid>/``, on
  the worker's host), which the main process takes instead of deciding
  again, and removes when the pool process reports;
* retry: ``self.retry(countdown=delay_ms / 1000)`` (Celery keeps the ETA to
  the microsecond; from the main process the same message Celery's
  ``retry_on_worker_lost`` sends); ``max_retries`` is ``None`` so Celery
  never stops a retry the engine decided;
* discard: the exception propagates (Celery records FAILURE and acknowledges);
  a :class:`JobError` is in the task's ``throws``, so Celery logs the
  handler's deliberate code as "raised expected" (INFO, no traceback), not
  as an unexpected error;
* dead letter: the engine's dead-letter record (``outcome.dead_letter``) goes
  to ``<queue>:dead`` (``ojs_dead_letter_key`` overrides the name) on the
  broker in use — on Redis the list of that name; on any other broker
  (RabbitMQ) a durable queue of that name the integration declares, one
  persistent message per record (:func:`~ojs_retry.integrations._core.dead_letter_properties`)
  — then the exception propagates as for discard.

The job's policy layer and its §10 state travel in the message headers
(``ojs_retry_policy``, ``ojs_retry_state``); the jitter key is the task id.

:func:`install` makes :class:`OjsAppTask` the app's ``Task`` (Celery's own
way to change the base of every ``@app.task``): a task with no OJS policy is
decided by the ``celery`` preset of its own ``autoretry_for``,
``dont_autoretry_for``, ``retry_backoff``, ``retry_backoff_max``,
``retry_jitter``, ``max_retries``, ``default_retry_delay`` (and
``retry_kwargs``' ``max_retries`` / ``countdown``), read as Celery's
autoretry reads them; Celery's own autoretry wrapper is not installed.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import warnings
from collections.abc import Iterable
from typing import Any, ClassVar

from .. import Outcome, PolicyLayer, RetryPolicy
from . import _marks
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
    now_ms,
    renamed_keywords,
    require,
    resolve_policy,
    tell,
    transact,
    validate_job_policy,
)

__all__ = ["JobError", "OjsAppTask", "OjsRequest", "OjsTask", "dead_letter_key", "install"]

_celery = import_optional("celery")
_kombu = import_optional("kombu")
_exceptions = import_optional("celery.exceptions")
_request = import_optional("celery.worker.request")
_billiard = import_optional("billiard.exceptions")
_signals = import_optional("celery.signals")
_einfo = import_optional("billiard.einfo")
_CELERY_CONTROL = tuple(class_of(_exceptions, n) for n in ("Retry", "Ignore", "Reject"))
_TIME_LIMITS = (class_of(_exceptions, "SoftTimeLimitExceeded"), class_of(_exceptions, "TimeLimitExceeded"))
_WorkerLostError = class_of(_billiard, "WorkerLostError")


#: In a prefork pool process: its worker's main process's marks directory,
#: where it marks each attempt it decided (None in any other process).
_pool_marks: str | None = None
_main_pid: int | None = None


def _on_worker_init(**_: Any) -> None:
    global _main_pid
    _main_pid = os.getpid()


def _on_process_init(**_: Any) -> None:
    # Sent in each prefork pool process — forked from the main process, which
    # set _main_pid at worker_init, or a fresh interpreter (spawn), which
    # Celery flags with FORKED_BY_MULTIPROCESSING — and by the solo pool in
    # the main process itself, which never loses an attempt: no marks there
    # (nor where it cannot tell, which leaves the attempt to the main process).
    global _pool_marks
    pool = os.getpid() != _main_pid if _main_pid is not None else bool(os.environ.get("FORKED_BY_MULTIPROCESSING"))
    if pool:
        where = _marks.directory("celery", os.getppid())
        _pool_marks = where if _marks.ensure(where) else None


def _on_worker_shutdown(**_: Any) -> None:
    _marks.remove(_marks.directory("celery", os.getpid()))


if _signals is not None:
    _signals.worker_init.connect(_on_worker_init, weak=False)
    _signals.worker_process_init.connect(_on_process_init, weak=False)
    _signals.worker_shutdown.connect(_on_worker_shutdown, weak=False)


def dead_letter_key(queue: str) -> str:
    """Where a queue's dead-lettered tasks go: ``<queue>:dead`` (the Redis
    list on a Redis broker, the durable queue on any other)."""
    return f"{queue}:dead"


@functools.lru_cache(maxsize=8)  # one client per dead-letter URL (configuration: a handful)
def _redis_client(url: str) -> Any:
    import redis  # noqa: PLC0415  (Celery's Redis transport's own dependency)

    return redis.Redis.from_url(url)


def _broker_is_redis(app: Any) -> bool:
    # kombu's own name of the transport (redis, rediss and sentinel URLs are
    # all "redis"); no connection is opened.
    return bool(app.connection_for_write().transport.driver_type == "redis")


def _publish_record(app: Any, name: str, record: str, job_id: str, queue: str) -> None:
    """The record as one persistent message on the durable queue ``name``
    (declared here, bound to the default exchange), through the app's own
    producer pool and connection retry."""
    kombu = require(_kombu, "celery")
    place = kombu.Queue(name, kombu.Exchange(""), routing_key=name, durable=True, auto_delete=False)
    with app.producer_or_acquire() as producer:
        producer.publish(record, exchange="", routing_key=name, declare=[place], retry=True,
                         **dead_letter_properties(job_id, queue))


class OjsRequest(class_of(_request, "Request")):  # type: ignore[misc]
    """Celery's worker-side request of an :class:`OjsTask`, in the worker's
    main process: an attempt whose pool process never reported — a hard
    time limit, a killed pool process — is a timed-out attempt the engine
    decides, instead of Celery's FAILURE or a redelivery as the same one;
    unless its pool process had decided it already (its mark)."""

    def on_failure(self, exc_info: Any, send_failed_event: bool = True, return_ok: bool = False) -> None:
        # The pool reports a hard time limit (before calling on_timeout) and a
        # lost process with return_ok False; what the task itself raised
        # comes back from the process with return_ok True (already decided).
        exc = getattr(exc_info, "exception", None)
        exc = getattr(exc, "exc", exc)  # billiard wraps it in ExceptionWithTraceback
        if return_ok and self.worker_pid != os.getpid():  # a pool process reported: its mark is not needed
            _marks.drop(self._ojs_mark_path())
        lost = not return_ok and isinstance(exc, (_WorkerLostError, _TIME_LIMITS[1]))
        action = self._ojs_decide(exc) if lost else None
        if action == "retry":
            return
        if action is not None:
            # Ended by the engine: failed as Celery fails a task that never
            # runs again (FAILURE, task_failure, the message rejected without
            # requeue), so that neither task_reject_on_worker_lost, nor
            # task_retry_on_worker_lost, nor a timed-out task's requeue runs
            # it once more.
            exc_info = _never_again(exc)
        super().on_failure(exc_info, send_failed_event=send_failed_event, return_ok=return_ok)

    def on_timeout(self, soft: bool, timeout: float) -> None:
        if not getattr(self, "_ojs_retried", False):  # a retry sent: Celery's FAILURE handling is not to follow
            super().on_timeout(soft, timeout)

    def _ojs_mark_path(self) -> str:
        """Where a prefork pool process marks this attempt once it decided it."""
        return _marks.path(_marks.directory("celery", os.getpid()), str(self.id), int(self._context.retries or 0))

    def _ojs_decide(self, exc: BaseException) -> str | None:
        """Decides the lost attempt and carries it out: its action (a retry
        was sent and the message acknowledged; a dead letter's record was
        written), or None when Celery's own handling is to decide it. An
        attempt its pool process marked was decided and carried out there:
        it is not decided again."""
        done = _marks.take(self._ojs_mark_path())
        if done == "retry":
            self._ojs_sent()
        if done in ("retry", "discard", "dead_letter"):
            return done
        task: OjsTask = self.task
        if not task._ojs_decides_lost(self._context):
            return None
        failure = dataclasses.replace(failure_from_exception(exc), timed_out=True)
        now = now_ms()
        out = task._ojs_transact(self._context, failure, now)
        if out.decision.action == "retry":
            headers = task._ojs_headers(self._context, out)
            task.signature_from_request(
                self._context, countdown=(out.decision.delay_ms or 0) / 1000,
                retries=int(self._context.retries or 0) + 1, headers=headers,
            ).apply_async()
            self._ojs_sent()
        else:
            task._ojs_dead_letter(self._context, out)
        task._ojs_tell(self._context, failure, out, now)
        return str(out.decision.action)

    def _ojs_sent(self) -> None:
        """The attempt's retry was sent: as Celery's own handlers do, no
        longer an active request, and the message acknowledged."""
        self._ojs_retried = True
        _request.task_ready(self)
        if self.task.acks_late:
            self.acknowledge()


def _never_again(exc: BaseException) -> Any:
    """The exception info of Celery's ``Reject(requeue=False)`` for a lost
    attempt the engine ended, its reason the exception that lost it."""
    reject = class_of(_exceptions, "Reject")
    try:
        raise reject(exc, requeue=False) from exc
    except reject:
        return require(_einfo, "celery").ExceptionInfo()


class OjsTask(class_of(_celery, "Task") if _celery else object):  # type: ignore[misc]
    """A Celery task whose retries an OJS policy decides."""

    abstract = True
    #: Never stop a retry the engine decided.
    max_retries = None
    #: Hard time limits and killed pool processes decided by the engine.
    Request = OjsRequest
    #: The queue defaults: a policy layer or a ``RetryPolicy`` (a preset too).
    ojs_retry_policy: ClassVar[PolicyLayer | RetryPolicy | None] = None
    #: Called with every decision carried out (in the worker process).
    ojs_listeners: ClassVar[Iterable[Listener]] = ()
    #: Where dead-lettered tasks go (default ``<queue>:dead``): a Redis list
    #: on a Redis broker, a durable queue on any other.
    ojs_dead_letter_key: ClassVar[str | None] = None
    #: A Redis holding that list instead of the broker (default: none, the
    #: broker in use).
    ojs_dead_letter_url: ClassVar[str | None] = None
    #: Exceptions counted as timeouts besides ``TimeoutError``.
    ojs_timeout_types: ClassVar[tuple[type[BaseException], ...]] = _TIME_LIMITS
    #: Celery's expected exceptions: a ``JobError`` names a handler's
    #: decision (``DEAD_LETTER``, ``DISCARD``), which Celery then logs as
    #: "raised expected" (INFO, no traceback); a task's own ``throws`` gets
    #: ``JobError`` added.
    throws: ClassVar[tuple[type[BaseException], ...]] = (JobError,)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if cls.__module__ != __name__:  # this module's own bases import without Celery
            require(_celery, "celery")
        if "ojs_policy" in cls.__dict__:  # the name documented before ``ojs_retry_policy``
            import warnings  # noqa: PLC0415

            warnings.warn("OjsTask.ojs_policy is deprecated: use ojs_retry_policy", DeprecationWarning, stacklevel=2)
            cls.ojs_retry_policy = cls.__dict__["ojs_policy"]
        own = tuple(cls.__dict__.get("throws") or ())
        if "throws" in cls.__dict__ and not any(issubclass(JobError, t) for t in own):
            cls.throws = (*own, JobError)
        super().__init_subclass__(**kwargs)

    @renamed_keywords(ojs_policy=POLICY_KEY)
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
    ) -> Any:
        """``Task.apply_async`` validating the job's ``ojs_retry_policy`` first.

        Raises :class:`ojs_retry.PolicyError` before anything is sent.
        """
        text = validate_job_policy(ojs_retry_policy, self._ojs_defaults(carried=True))
        if text is not None:
            options["headers"] = {**(options.get("headers") or {}), POLICY_KEY: text}
        return super().apply_async(args, kwargs, task_id, producer, link, link_error, shadow, **options)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except _CELERY_CONTROL:
            raise
        except Exception as exc:
            self._ojs_failed(exc)
            raise

    def _ojs_failed(self, exc: Exception) -> None:
        """Decides and carries out; returns only for discard / dead letter."""
        failure = failure_from_exception(exc, timeout_types=self.ojs_timeout_types)
        now = now_ms()
        out = self._ojs_transact(self.request, failure, now)
        if out.decision.action == "retry":
            retry = self._ojs_retry(exc, out)
            self._ojs_mark(out)
            self._ojs_tell(self.request, failure, out, now)
            raise retry
        self._ojs_dead_letter(self.request, out)
        self._ojs_mark(out)
        self._ojs_tell(self.request, failure, out, now)

    def _ojs_mark(self, out: Outcome) -> None:
        """In a prefork pool process, marks the attempt decided and carried
        out, for the main process should this process die before it reports
        (not a call run in the process itself, which the main process never
        sees)."""
        request = self.request
        if _pool_marks is not None and not (request.called_directly or request.is_eager):
            _marks.put(_marks.path(_pool_marks, str(request.id), int(request.retries or 0)), out.decision.action)

    def _ojs_retry(self, exc: Exception, out: Outcome) -> Any:
        """``self.retry`` with the engine's delay; Celery's ``max_retries``
        never stops it (``None`` on an ``OjsTask``; a task's own limit under
        :func:`install` is for its own ``self.retry`` calls)."""
        headers = self._ojs_headers(self.request, out)
        options = self._ojs_retry_options()
        if self.max_retries is not None:
            options["max_retries"] = math.inf
        try:
            return self.retry(exc=exc, countdown=(out.decision.delay_ms or 0) / 1000, headers=headers, throw=False,
                              **options)
        finally:
            # Task.retry keeps a given limit on the task (for Celery's autoretry wrapper only).
            vars(self).pop("override_max_retries", None)

    def _ojs_retry_options(self) -> dict[str, Any]:
        return {}

    def _ojs_defaults(self, carried: bool) -> Any:
        """The policy under the job's layer (``carried``: the job has one)."""
        return self.ojs_retry_policy

    def _ojs_decides_lost(self, request: Any) -> bool:
        """Whether the engine decides an attempt that never reported."""
        return True

    @staticmethod
    def _ojs_carried(request: Any, key: str) -> Any:
        return (request.headers or {}).get(key, getattr(request, key, None))

    def _ojs_queue(self, request: Any) -> str:
        return str((request.delivery_info or {}).get("routing_key") or self.app.conf.task_default_queue)

    def _ojs_transact(self, request: Any, failure: Failure, now: int) -> Outcome:
        layer = self._ojs_carried(request, POLICY_KEY)
        return transact(
            self._ojs_defaults(carried=layer is not None),
            layer,
            self._ojs_carried(request, STATE_KEY),
            int(request.retries or 0) + 1,
            failure,
            key=str(request.id),
            queue=self._ojs_queue(request),
            job={"task": self.name, "args": request.args, "kwargs": request.kwargs},
            now=now,
        )

    def _ojs_headers(self, request: Any, out: Outcome) -> dict[str, Any]:
        """The retry's headers: the job's layer as it came, the new state."""
        return {**(request.headers or {}), POLICY_KEY: self._ojs_carried(request, POLICY_KEY),
                STATE_KEY: out.state_json}

    def _ojs_dead_letter(self, request: Any, out: Outcome) -> None:
        if out.decision.action != "dead_letter":
            return
        queue = self._ojs_queue(request)
        name = self.ojs_dead_letter_key or dead_letter_key(queue)
        record = out.dead_letter or "null"
        if self.ojs_dead_letter_url or _broker_is_redis(self.app):
            _redis_client(self.ojs_dead_letter_url or self.app.conf.broker_url).rpush(name, record)
        else:
            _publish_record(self.app, name, record, str(request.id), queue)

    def _ojs_tell(self, request: Any, failure: Failure, out: Outcome, now: int) -> None:
        attempt = int(request.retries or 0) + 1
        tell(self.ojs_listeners, "celery", str(request.id), attempt, failure, out, now,
             queue=self._ojs_queue(request))


# ---------------------------------------------------------------- install()

#: ``retry_kwargs`` keys the engine's decision replaces (the rest — ``queue``,
#: ``priority`` ... — go to ``self.retry`` as Celery's autoretry passes them).
_DECIDED_RETRY_KWARGS = frozenset({"max_retries", "countdown", "eta", "exc", "throw", "headers"})


def _own_options(task: Any) -> tuple[Any, ...]:
    """A task's own retry options, read as Celery reads them: its autoretry
    wrapper (``tuple``, ``float``, ``int``, truth; celery/app/autoretry.py)
    and ``Task.retry`` (``retry_kwargs``' ``max_retries`` / ``countdown``
    over the task's; no countdown at all is an immediate retry)."""
    kwargs = getattr(task, "retry_kwargs", None) or {}
    max_retries = kwargs.get("max_retries")
    countdown = kwargs.get("countdown")
    if countdown is None:
        countdown = task.default_retry_delay
    return (
        tuple(getattr(task, "autoretry_for", None) or ()),
        tuple(getattr(task, "dont_autoretry_for", None) or ()),
        task.max_retries if max_retries is None else max_retries,
        float(getattr(task, "retry_backoff", False)),
        int(getattr(task, "retry_backoff_max", 600)),
        bool(getattr(task, "retry_jitter", True)),
        0 if countdown is None else countdown,
    )


@functools.lru_cache(maxsize=256)  # one per distinct set of tasks' options (a program's tasks: bounded)
def _preset_text(own: tuple[Any, ...]) -> str:
    """The ``celery`` preset of :func:`_own_options` as the JSON text the
    engine reads; raises :class:`ojs_retry.PolicyError` for options it refuses."""
    autoretry_for, dont_autoretry_for, max_retries, backoff, backoff_max, jitter, delay = own
    return RetryPolicy.preset("celery", {
        # Celery's allow-list: without autoretry_for nothing is retried on its own.
        "autoretry_for": [error_type_of(c) for c in autoretry_for],
        "dont_autoretry_for": [error_type_of(c) for c in dont_autoretry_for],
        "max_retries": max_retries,
        "retry_backoff": backoff,
        "retry_backoff_max": backoff_max,
        "retry_jitter": jitter,
        "default_retry_delay": delay,
    }).to_json()


class OjsAppTask(OjsTask):
    """The base :func:`install` gives every task of an app.

    A task with an OJS policy — :func:`install`'s ``defaults``, its own
    ``ojs_retry_policy`` option, or a layer the job carries — runs on it as
    an :class:`OjsTask` does; one without is decided by the ``celery`` preset
    of its own retry options, so its retries stay Celery's. Its own
    ``max_retries`` stays its own for the ``self.retry`` calls it makes.

    >>> from celery import Celery
    >>> from ojs_retry.integrations.celery import OjsAppTask, install
    >>> app = Celery("doc")
    >>> _ = install(app)
    >>> @app.task(autoretry_for=(ConnectionError,), max_retries=2)
    ... def fetch(url): ...
    >>> isinstance(fetch, OjsAppTask), fetch.max_retries
    (True, 2)
    """

    abstract = True
    max_retries = 3  # Celery's own default (install() takes the app's previous base's)
    #: Celery wraps a task's ``run`` in its autoretry unless the task already
    #: has ``_orig_run`` (celery/app/autoretry.py): the engine decides instead.
    _orig_run = None
    #: :func:`install`'s ``defaults`` (a layer or ``RetryPolicy``), or None.
    ojs_install_defaults: ClassVar[PolicyLayer | RetryPolicy | None] = None
    _ojs_given: ClassVar[RetryPolicy | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Checked where the task is made (strict for configuration): its
        # policy over install()'s defaults, or the preset of its options.
        given = (cls.ojs_install_defaults, cls.ojs_retry_policy)
        cls._ojs_given = None if given[0] is None and given[1] is None else resolve_policy(*given)
        if cls._ojs_given is None:
            _preset_text(_own_options(cls))

    def _ojs_defaults(self, carried: bool) -> Any:
        if self._ojs_given is None and not carried:
            return _preset_text(_own_options(self))
        return self._ojs_given

    def _ojs_decides_lost(self, request: Any) -> bool:
        # Under the preset an attempt that never reported stays Celery's, as
        # before install(): its autoretry never saw one either.
        return self._ojs_given is not None or self._ojs_carried(request, POLICY_KEY) is not None

    def _ojs_retry_options(self) -> dict[str, Any]:
        kwargs = getattr(self, "retry_kwargs", None) or {}
        return {k: v for k, v in kwargs.items() if k not in _DECIDED_RETRY_KWARGS}


def install(
    app: Any,
    defaults: PolicyLayer | RetryPolicy | None = None,
    *,
    listeners: Iterable[Listener] = (),
    timeout_types: Iterable[type[BaseException]] = (),
    dead_letter_key: str | None = None,
    dead_letter_url: str | None = None,
) -> type[OjsAppTask]:
    """Puts every task of ``app`` on the engine: the one line of adoption.

    Makes a subclass of :class:`OjsAppTask` and the app's previous base the
    app's ``Task``, the base of every ``@app.task`` made after it (call it
    right after ``Celery(...)``; tasks are made when the app is finalized).
    ``defaults``: a policy under every task's ``ojs_retry_policy`` (with it,
    a task without one runs on it instead of its Celery options);
    ``listeners``, ``timeout_types``, ``dead_letter_key``,
    ``dead_letter_url``: as :class:`OjsTask`'s ``ojs_*`` attributes. A task
    whose own ``base=`` is not an :class:`OjsTask` keeps Celery's own
    retries, and is named in a warning once the app is finalized.

    Raises :class:`ojs_retry.PolicyError` for ``defaults`` that are not a policy.

    >>> from celery import Celery
    >>> from ojs_retry.integrations.celery import install
    >>> app = Celery("doc")
    >>> install(app, {"max_attempts": 5}) is app.Task
    True
    """
    require(_celery, "celery")
    resolve_policy(defaults)
    previous = getattr(app.Task, "_ojs_previous", app.Task)
    base = type("Task", (OjsAppTask, previous), {
        "__module__": __name__,
        "_ojs_previous": previous,
        "ojs_install_defaults": defaults,
        "ojs_listeners": tuple(listeners),
        "ojs_timeout_types": (*_TIME_LIMITS, *timeout_types),
        "ojs_dead_letter_key": dead_letter_key,
        "ojs_dead_letter_url": dead_letter_url,
        "max_retries": previous.max_retries,
        "throws": tuple(previous.throws),
    })
    app.Task = base
    if app.finalized:
        _warn_not_adopted(app)
    else:
        app.on_after_finalize.connect(_warn_not_adopted, weak=False)
    return base


def _warn_not_adopted(sender: Any, **_: Any) -> None:
    names = sorted(n for n, t in sender.tasks.items() if not isinstance(t, OjsTask))
    if names:
        warnings.warn(f"ojs_retry: these tasks keep Celery's own retries (made before install(), or their own "
                      f"base= is not an OjsTask): {', '.join(names)}", stacklevel=2)
