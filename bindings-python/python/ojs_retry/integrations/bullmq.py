"""BullMQ for Python (PyPI ``bullmq`` 3.x) with retries decided by an OJS policy.

Two pieces, both on BullMQ's own extension points:

* :class:`Processor` wraps the job handler. It turns the handler's failure
  into the engine's failure, asks the engine (attempt
  ``job.attemptsMade + 1 + job.stalledCounter``, keyed jitter with the job's
  id) and carries the decision out. A retry re-raises, so BullMQ's own
  ``moveToFailed`` schedules it through the backoff hook; a discard or a
  dead-letter raises BullMQ's ``UnrecoverableError`` (the hook is never asked
  for it, and the job lands in the failed set at once).
* :meth:`Processor.backoff_strategy` is the worker's
  ``settings.backoffStrategy`` for the backoff type ``"ojs-retry"``: it
  returns the delay the wrapper decided for this very failure.

The job's policy layer travels in its options (``opts["ojs_retry_policy"]``,
set by :func:`enqueue`, which validates it first); its §10 retry state in a
field of the job's own hash (``ojs_retry_state``), removed with the job.
BullMQ has no dead-letter queue: a dead-lettered job is pushed, as the JSON
dead-letter record of the engine's failure transaction, onto the Redis
list ``<prefix>:<queue>:dead`` (oldest first, :func:`dead_letter_key`) and the
job itself goes to BullMQ's failed set.

A stalled job (its worker died or blocked past ``lockDuration``) is counted
as a failed attempt of type ``bullmq.stalled`` with ``timed_out`` (spec §9.2)
when it is picked up again; the worker made by :func:`worker` raises
``maxStalledCount`` so BullMQ never fails it behind the engine's back. The
Redis backend only (BullMQ's Postgres backend has no job hash to carry the
state).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, NoReturn

from .. import Outcome, PolicyLayer, RetryPolicy
from ._core import (
    POLICY_KEY,
    STATE_KEY,
    DecisionEvent,
    Failure,
    Listener,
    failure_from_exception,
    import_optional,
    notify,
    now_ms,
    renamed_keywords,
    require,
    resolve_policy,
    transact,
    validate_job_policy,
)

__all__ = [
    "ATTEMPTS",
    "BACKOFF_TYPE",
    "STALLED_TYPE",
    "Processor",
    "dead_letter_key",
    "dead_letters",
    "enqueue",
    "job_options",
    "worker",
]

#: The backoff type whose delays the engine decides.
BACKOFF_TYPE = "ojs-retry"
#: BullMQ's own ``attempts``: never the limit (the engine's ``max_attempts`` is).
ATTEMPTS = 2**31 - 1
#: The error type of an attempt lost to a stall.
STALLED_TYPE = "bullmq.stalled"
#: The job-hash field counting the stalls already counted as attempts.
_STALLS_FIELD = "ojs_retry_stalls"

Handler = Callable[..., Awaitable[Any]]


def _bullmq() -> Any:
    return require(import_optional("bullmq"), "bullmq")


def dead_letter_key(queue_name: str, prefix: str = "bull") -> str:
    """The Redis list holding the queue's dead-lettered jobs (oldest first)."""
    return f"{prefix}:{queue_name}:dead"


@renamed_keywords(policy=POLICY_KEY)
def job_options(
    opts: Mapping[str, Any] | None = None,
    *,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    defaults: PolicyLayer | RetryPolicy | None = None,
) -> dict[str, Any]:
    """Job options for ``Queue.add`` with the job's policy layer, validated.

    Raises :class:`ojs_retry.PolicyError` (before anything reaches Redis) for
    a bad layer, or one the queue's ``defaults`` refuse. ``attempts`` and
    ``backoff`` are the integration's: the engine decides both.
    """
    text = validate_job_policy(ojs_retry_policy, defaults)
    out = dict(opts or {})
    if text is not None:
        out[POLICY_KEY] = text
    out["attempts"] = ATTEMPTS
    out["backoff"] = {"type": BACKOFF_TYPE}
    return out


@renamed_keywords(policy=POLICY_KEY)
async def enqueue(
    queue: Any,
    name: str,
    data: Any,
    opts: Mapping[str, Any] | None = None,
    *,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    defaults: PolicyLayer | RetryPolicy | None = None,
) -> Any:
    """``queue.add`` with :func:`job_options` (validated at enqueue, RET-16)."""
    return await queue.add(name, data, job_options(opts, ojs_retry_policy=ojs_retry_policy, defaults=defaults))


async def dead_letters(client: Any, queue_name: str, prefix: str = "bull") -> list[dict[str, Any]]:
    """The dead-letter records of a queue, oldest first (``client``: redis.asyncio)."""
    raw = await client.lrange(dead_letter_key(queue_name, prefix), 0, -1)
    return [json.loads(r) for r in raw]


class Processor:
    """The worker's processor: runs ``handler(job, token)`` and decides failures.

    ``ojs_retry_policy`` is the queue's default layer (a job's own layer goes over it);
    ``listeners`` see every decision carried out; ``timeout_ms`` bounds each
    run (an overrun is a timed-out failure).
    """

    @renamed_keywords(policy=POLICY_KEY)
    def __init__(
        self,
        handler: Handler,
        *,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        listeners: Iterable[Listener] = (),
        timeout_ms: int | None = None,
    ) -> None:
        self.handler = handler
        self.defaults = ojs_retry_policy
        self.listeners = tuple(listeners)
        self.timeout_ms = timeout_ms
        resolve_policy(ojs_retry_policy)  # a bad default fails here, not at the first failure

    async def __call__(self, job: Any, token: str) -> Any:
        bullmq = _bullmq()
        if job.stalledCounter:
            await self._count_stalls(job, token)
        try:
            run = self.handler(job, token)
            if self.timeout_ms is not None:
                return await asyncio.wait_for(run, self.timeout_ms / 1000)
            return await run
        except (bullmq.DelayedError, bullmq.WaitingChildrenError):
            raise
        except Exception as exc:
            attempt = job.attemptsMade + 1 + job.stalledCounter
            await self._carry_out(job, attempt, _failure_of(exc, bullmq), exc)

    def backoff_strategy(self, attempts_made: int, type: str, err: Any, job: Any) -> int:
        """``settings.backoffStrategy``: the delay decided for this failure."""
        delay = getattr(job, "_ojs_retry_delay", None)
        if type != BACKOFF_TYPE or delay is None:
            # Not ours, or a failure the wrapper did not decide: refusing
            # leaves the job active until its lock lapses, and the stall is
            # then counted as an attempt — never a silent retry.
            raise RuntimeError(f"ojs-retry: no decision for job {job.id} (backoff type {type!r})")
        job._ojs_retry_delay = None
        return int(delay)

    async def _count_stalls(self, job: Any, token: str) -> None:
        client, key = _job_hash(job)
        seen = int(await client.hget(key, _STALLS_FIELD) or 0)
        if job.stalledCounter <= seen:
            return
        await client.hset(key, _STALLS_FIELD, job.stalledCounter)
        lost = Failure(STALLED_TYPE, None, True, "the job stalled (its worker stopped renewing the lock)")
        attempt = job.attemptsMade + job.stalledCounter
        out = await self._record(job, attempt, lost)
        if out.action == "retry":
            bullmq = _bullmq()
            await job.moveToDelayed(now_ms() + (out.decision.delay_ms or 0), token)
            self._notify(job, attempt, lost, out)
            raise bullmq.DelayedError()
        await self._terminal(job, attempt, lost, out)

    async def _record(self, job: Any, attempt: int, failure: Failure) -> Outcome:
        client, key = _job_hash(job)
        # The first attempt has no state to read (one round trip fewer).
        state = None if attempt == 1 else await client.hget(key, STATE_KEY)
        out = transact(
            self.defaults,
            job.opts.get(POLICY_KEY),
            _text(state),
            attempt,
            failure,
            key=str(job.id),
            queue=job.queue.name,
            job={"name": job.name, "data": job.data, "opts": job.opts},
        )
        await client.hset(key, STATE_KEY, out.state_json)
        return out

    def _notify(self, job: Any, attempt: int, failure: Failure, out: Outcome) -> None:
        event = DecisionEvent(job.queue.name, str(job.id), attempt, failure, out.decision, now_ms(), notes=out.notes)
        notify(self.listeners, event)

    async def _carry_out(self, job: Any, attempt: int, failure: Failure, exc: BaseException) -> NoReturn:
        bullmq = _bullmq()
        out = await self._record(job, attempt, failure)
        if out.action == "retry":
            job._ojs_retry_delay = out.decision.delay_ms or 0
            # moveToFailed reads these from this object: a job added without
            # job_options (plain queue.add) is retried all the same.
            job.opts["attempts"] = ATTEMPTS
            job.opts["backoff"] = {"type": BACKOFF_TYPE}
            # BullMQ carries the retry out when this raises; the decision
            # and the state are already stored.
            self._notify(job, attempt, failure, out)
            if isinstance(exc, bullmq.UnrecoverableError):
                raise RuntimeError(str(exc)) from exc
            raise exc
        await self._terminal(job, attempt, failure, out)

    async def _terminal(self, job: Any, attempt: int, failure: Failure, out: Outcome) -> NoReturn:
        bullmq = _bullmq()
        if out.dead_letter is not None:
            client, _ = _job_hash(job)
            await client.rpush(dead_letter_key(job.queue.name, job.queue.prefix), out.dead_letter)
        self._notify(job, attempt, failure, out)
        raise bullmq.UnrecoverableError(f"ojs-retry: {out.action} ({out.decision.reason})")


def _failure_of(exc: BaseException, bullmq: Any) -> Failure:
    if isinstance(exc, bullmq.UnrecoverableError):
        # The name BullMQ's own rules (and the bullmq preset) know it by.
        return Failure("UnrecoverableError", None, False, str(exc) or "UnrecoverableError")
    return failure_from_exception(exc, timeout_types=(asyncio.TimeoutError,))


def _job_hash(job: Any) -> tuple[Any, str]:
    worker = job.queue
    return worker.client, f"{worker.keys['']}{job.id}"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


@renamed_keywords(policy=POLICY_KEY)
def worker(
    name: str,
    handler: Handler,
    opts: Mapping[str, Any] | None = None,
    *,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    listeners: Iterable[Listener] = (),
    timeout_ms: int | None = None,
) -> Any:
    """A ``bullmq.Worker`` running ``handler`` under :class:`Processor`.

    Sets ``settings.backoffStrategy`` and, unless given, a ``maxStalledCount``
    BullMQ never reaches (the engine counts stalls as attempts).
    """
    processor = Processor(handler, ojs_retry_policy=ojs_retry_policy, listeners=listeners, timeout_ms=timeout_ms)
    options = dict(opts or {})
    settings = dict(options.get("settings") or {})
    settings["backoffStrategy"] = processor.backoff_strategy
    options["settings"] = settings
    options.setdefault("maxStalledCount", ATTEMPTS)
    return _bullmq().Worker(name, processor, options)
