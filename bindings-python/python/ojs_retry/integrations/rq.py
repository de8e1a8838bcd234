"""RQ on an OJS retry policy: an exception handler and the job's retry fields.

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

The attempt counter is ``job.meta["ojs_retry_attempts"]`` (RQ's
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

__all__ = ["ATTEMPTS_META_KEY", "DEAD_LETTER_META_KEY", "TERMINAL_META_KEY", "JobError", "OjsRetry", "delay_seconds"]

#: Where a dead-lettered job's record is, in ``job.meta``.
DEAD_LETTER_META_KEY = "ojs_dead_letter"
#: The failures recorded so far, in ``job.meta``: RQ keeps no attempt
#: counter of its own on this path, so the integration keeps the queue's.
ATTEMPTS_META_KEY = "ojs_retry_attempts"
#: The terminal action decided, in ``job.meta``.
TERMINAL_META_KEY = "ojs_retry_terminal"

_exceptions = import_optional("rq.exceptions")
_timeouts = import_optional("rq.timeouts")


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

    def _decide(self, job: Any, failure: Failure) -> None:
        meta = job.meta
        attempt = int(meta.get(ATTEMPTS_META_KEY) or 0) + 1
        now = now_ms()
        out = transact(
            self.policy,
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
