"""RQ on an OJS retry policy: an exception handler and the job's retry fields.

Adoption is one line, and changes nothing until a policy is given: run
:class:`OjsWorker` in place of ``rq.Worker`` (``rq worker -w
ojs_retry.integrations.rq.OjsWorker``). With no defaults, a job carrying no
OJS layer keeps its own ``Retry(max=..., interval=...)``, which the engine
reads through its ``rq`` preset (:func:`adoption_layer`); a job without
``Retry`` is not retried, as in RQ.

    from ojs_retry.integrations.rq import OjsRetry, JobError

    ojs = OjsRetry({"max_attempts": 5, "on_exhaustion": "dead_letter"})
    job = ojs.enqueue(queue, charge, 42, ojs_retry_policy={"max_attempts": 3})
    Worker([queue], connection=redis, **ojs.worker_kwargs()).work(with_scheduler=True)

RQ runs the handler given to ``Worker(exception_handlers=...)`` before it
looks at the job's retry fields, so the handler decides and sets them:

* retry: ``retries_left = 1`` and ``retry_intervals = [seconds]``; RQ
  schedules in whole (truncated) epoch seconds, so the delay is rounded **up**
  to the first second boundary at or after the decision time + ``delay_ms``
  (:func:`delay_seconds`: never earlier, RET-11) and RQ's scheduler, which
  polls every second, enqueues it;
* dead letter: ``retries_left = 0``: RQ moves the job to its
  ``FailedJobRegistry``; the dead-letter record is in ``job.meta["ojs_dead_letter"]``;
* discard: ``retries_left = 0`` and ``failure_ttl = 0``: RQ deletes the job
  instead of keeping it in the ``FailedJobRegistry``.

A worker's handlers overwrite the job's retry fields, so the policy an
adopted job runs on is kept in ``job.meta["ojs_retry_adopted"]`` at its
first failure. The attempt counter is ``job.meta["ojs_retry_attempts"]`` (RQ's
raised-exception path keeps no count of its own beyond ``retries_left``);
the engine's failure transaction rebases the carried state onto it.
``JobTimeoutException`` is a timeout; so is ``AbandonedJobError`` (a worker
died: RQ's registry clean-up calls the same handlers) and a killed work
horse (``work_horse_killed_handler``). The jitter key is the job id.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from .. import PolicyLayer, RetryPolicy
from ._core import (
    POLICY_KEY,
    STATE_KEY,
    Failure,
    JobError,
    Listener,
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

#: Where a dead-lettered job's record is, in ``job.meta``.
DEAD_LETTER_META_KEY = "ojs_dead_letter"
#: The failures recorded so far, in ``job.meta``: RQ keeps no attempt
#: counter of its own on this path, so the integration keeps the queue's.
ATTEMPTS_META_KEY = "ojs_retry_attempts"
#: The terminal action decided, in ``job.meta``.
TERMINAL_META_KEY = "ojs_retry_terminal"
#: The policy (JSON text) of a job adopted with its own ``Retry``, in
#: ``job.meta``: read from the job's retry fields at its first failure,
#: before the handler overwrites them.
ADOPTED_META_KEY = "ojs_retry_adopted"
#: RQ without ``Retry``: the failed job goes to the FailedJobRegistry at once
#: (the ``rq`` preset's ``max`` is at least 1, as RQ's ``Retry`` requires).
_NO_RETRY = {"max_attempts": 1, "on_exhaustion": "dead_letter"}

_exceptions = import_optional("rq.exceptions")
_timeouts = import_optional("rq.timeouts")
_worker = import_optional("rq.worker")
_Worker: Any = _worker.Worker if _worker else object


def _encodable_args(exc: BaseException) -> None:
    """RQ stores the traceback text of a failed job in Redis as UTF-8; an
    exception whose message holds a lone surrogate (bytes decoded with
    ``surrogateescape``) would kill the work horse while RQ stores it. Its
    string arguments are made encodable (each lone surrogate U+FFFD)."""
    def fix(a: Any) -> Any:
        if isinstance(a, str):
            return a.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return a

    try:
        exc.args = tuple(fix(a) for a in exc.args)
    except Exception:  # an exception class whose args cannot be set keeps them
        return


def delay_seconds(delay_ms: int, now: int) -> int:
    """RQ's whole-second retry interval for ``delay_ms`` decided at ``now`` (ms).

    RQ stores a scheduled job's time as whole epoch seconds, truncated
    (``calendar.timegm(dt.utctimetuple())``), and its scheduler enqueues it
    once that second has begun. The interval is the number of whole seconds
    from ``now``'s second to the first second boundary at or after
    ``now + delay_ms``, so the job never starts before its delay has elapsed
    (RET-11) and at most about a second after. A zero delay is interval 0:
    RQ re-enqueues the job at once instead of scheduling it (as RQ does for
    its own ``Retry`` without an interval, the ``rq`` preset's default).
    """
    if delay_ms <= 0:
        return 0
    return math.ceil((now + delay_ms) / 1000) - now // 1000


def adoption_layer(retries_left: int | None, retry_intervals: list[int] | None) -> dict[str, Any]:
    """The policy of a job that carries no OJS layer, from its RQ retry fields.

    RQ's ``Retry(max, interval)`` sets ``retries_left = max`` and
    ``retry_intervals`` (a list): the ``rq`` preset with those options. A
    job without ``Retry`` (``retries_left`` None) is not retried: one
    attempt, then the FailedJobRegistry (a dead letter).

    >>> adoption_layer(3, [1, 2])
    {'preset': {'system': 'rq', 'max': 3, 'interval': [1, 2]}}
    >>> adoption_layer(None, None)
    {'max_attempts': 1, 'on_exhaustion': 'dead_letter'}
    """
    if retries_left is None:
        return dict(_NO_RETRY)
    options: dict[str, Any] = {"system": "rq", "max": retries_left}
    if retry_intervals is not None:
        options["interval"] = list(retry_intervals)
    return {"preset": options}


class OjsRetry:
    """The queue's defaults and what RQ's worker needs to follow them."""

    @renamed_keywords(policy=POLICY_KEY)
    def __init__(
        self,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        *,
        listeners: Iterable[Listener] = (),
        timeout_types: Iterable[type[BaseException]] = (),
    ) -> None:
        timeouts = require(_timeouts, "rq").JobTimeoutException
        resolve_policy(ojs_retry_policy)
        self.policy = ojs_retry_policy
        self.listeners = tuple(listeners)
        self.timeout_types = (timeouts, require(_exceptions, "rq").AbandonedJobError, *timeout_types)

    @renamed_keywords(ojs_policy=POLICY_KEY)
    def enqueue(
        self,
        queue: Any,
        f: Any,
        *args: Any,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        **kwargs: Any,
    ) -> Any:
        """``queue.enqueue`` validating the job's ``ojs_retry_policy`` first.

        Raises :class:`ojs_retry.PolicyError` before anything reaches Redis.
        """
        text = validate_job_policy(ojs_retry_policy, self.policy)
        meta = dict(kwargs.pop("meta", None) or {})
        if text is not None:
            meta[POLICY_KEY] = text
        return queue.enqueue(f, *args, meta=meta, **kwargs)

    def worker_kwargs(self) -> dict[str, Any]:
        """``Worker(...)`` keyword arguments: the handler and the horse-killed hook."""
        return {
            "exception_handlers": [self.exception_handler],
            "work_horse_killed_handler": self.work_horse_killed_handler,
        }

    def exception_handler(self, job: Any, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        """For ``Worker(exception_handlers=[...])``: decides and sets the job's fields."""
        if exc is None:
            exc = exc_type() if isinstance(exc_type, type) else RuntimeError(str(exc_type))
        self._decide(job, failure_from_exception(exc, timeout_types=self.timeout_types))
        _encodable_args(exc)
        return True

    def work_horse_killed_handler(self, job: Any, retpid: int, ret_val: int, rusage: Any) -> None:
        """For ``Worker(work_horse_killed_handler=...)``: a killed horse is a timeout.

        A horse that dies after the job's last failure was decided terminal
        (while RQ stored its failure) leaves that decision standing.
        """
        job.get_meta(refresh=True)
        if job.meta.get(TERMINAL_META_KEY):
            job.retries_left = 0
            job.retry_intervals = None
            return
        message = f"work horse {retpid} terminated (waitpid {ret_val})"
        self._decide(job, Failure("rq.WorkHorseKilled", None, True, message))

    def _defaults(self, job: Any) -> PolicyLayer | RetryPolicy | None:
        """The worker's defaults; with none, and no layer on the job, the
        policy of the job's own ``Retry`` (kept in its meta)."""
        meta = job.meta
        if self.policy is not None or meta.get(POLICY_KEY) is not None:
            return self.policy
        if meta.get(ADOPTED_META_KEY) is None:
            layer = adoption_layer(job.retries_left, job.retry_intervals)
            meta[ADOPTED_META_KEY] = json.dumps(layer, separators=(",", ":"))
        text: str = meta[ADOPTED_META_KEY]
        return text

    def _decide(self, job: Any, failure: Failure) -> None:
        meta = job.meta
        attempt = int(meta.get(ATTEMPTS_META_KEY) or 0) + 1
        now = now_ms()
        out = transact(
            self._defaults(job),
            meta.get(POLICY_KEY),
            meta.get(STATE_KEY),
            attempt,
            failure,
            key=str(job.id),
            queue=str(job.origin),
            job={"func": job.func_name},
            now=now,
        )
        decision = out.decision
        meta[STATE_KEY] = out.state_json
        meta[ATTEMPTS_META_KEY] = attempt
        if decision.action == "retry":
            job.retries_left = 1
            job.retry_intervals = [delay_seconds(decision.delay_ms or 0, now)]
        else:
            job.retries_left = 0
            job.retry_intervals = None
            meta[TERMINAL_META_KEY] = decision.action
            if decision.action == "discard":
                job.failure_ttl = 0
            else:
                meta[DEAD_LETTER_META_KEY] = json.loads(out.dead_letter or "null")
        job.save_meta()
        tell(self.listeners, "rq", str(job.id), attempt, failure, out, now, queue=job.origin)


class OjsWorker(_Worker):  # type: ignore[misc]
    """``rq.Worker`` with the integration's handlers: the one-line adoption.

    ``OjsWorker([queue], connection=redis).work(with_scheduler=True)``, or
    from the command line ``rq worker --with-scheduler -w
    ojs_retry.integrations.rq.OjsWorker``. The policy is ``ojs_retry=`` (an
    :class:`OjsRetry`), else the class's :attr:`ojs_retry` (a subclass sets
    it for the command line), else ``OjsRetry()``: no defaults, so every job
    without an OJS layer keeps its own ``Retry``. Handlers given with
    ``exception_handlers=`` run after the integration's (they see its
    decision in the job's retry fields); a ``work_horse_killed_handler``
    after the integration's.
    """

    #: The integration a subclass runs on (None: ``OjsRetry()``).
    ojs_retry: OjsRetry | None = None

    def __init__(self, *args: Any, ojs_retry: OjsRetry | None = None, **kwargs: Any) -> None:
        require(_worker, "rq")
        ojs = ojs_retry or type(self).ojs_retry or OjsRetry()
        given = kwargs.pop("exception_handlers", None)
        given = list(given) if isinstance(given, (list, tuple)) else [] if given is None else [given]
        killed = kwargs.pop("work_horse_killed_handler", None)

        def on_killed(job: Any, retpid: int, ret_val: int, rusage: Any) -> None:
            ojs.work_horse_killed_handler(job, retpid, ret_val, rusage)
            if killed is not None:
                killed(job, retpid, ret_val, rusage)

        super().__init__(*args, exception_handlers=[ojs.exception_handler, *given],
                         work_horse_killed_handler=on_killed, **kwargs)
        self.ojs_retry = ojs
