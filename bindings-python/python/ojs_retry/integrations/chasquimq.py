"""ChasquiMQ (PyPI ``chasquimq`` 1.3.0) with retries decided by an OJS policy.

ChasquiMQ's retry is a re-publish (the failed entry is acknowledged and a new
one scheduled), so the handler wrapper does the same itself: :class:`Handler`
runs the job, turns a failure into the engine's failure, asks the engine and

* retries by re-publishing the job with ``delay_ms`` (``Queue.add``) and
  acknowledging the delivery;
* discards by acknowledging it;
* dead-letters into ChasquiMQ's own DLQ: it re-publishes the job marked dead
  (with its dead-letter record) and the next delivery raises ChasquiMQ's
  ``UnrecoverableError``, so the DLQ entry's payload holds the record (a DLQ
  entry keeps its payload and nothing of the error; :func:`dead_letters`
  reads them).

A job travels as an envelope ``{"ojs_retry": {...}, "data": <your data>}``
(made by :func:`enqueue`, which validates the job's policy layer first): its
OJS id (the jitter key, stable across re-publishes), its layer, its §10 state
and the attempts made. Each re-publish gets the ChasquiMQ id
``<id>~<attempt>`` (ChasquiMQ refuses a second job with an id it has seen).
The handler gets a ``chasquimq.Job`` with the OJS id, your data and a 0-based
``attempt`` like ChasquiMQ's own.

The attempt is ``attempts made + job.attempt + 1`` (``job.attempt`` is 0-based
in a handler; ChasquiMQ's events and DLQ count from 1). ChasquiMQ does not
tell a handler that a delivery is a redelivery (a killed worker's entry comes
back through ``XREADGROUP CLAIM`` with the same ``attempt``), so the wrapper
marks each run in Redis (``SET NX`` on ``{chasqui:<queue>}:ojs:run:<id>``,
deleted when the run ends): a delivery that finds the mark is a lost attempt,
counted as type ``chasquimq.redelivered`` with ``timed_out`` (spec §9.2).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .. import PolicyLayer, RetryPolicy
from ._core import (
    POLICY_KEY,
    WORKERS_UNSTATED,
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
    validate_enqueued_layer,
)

__all__ = [
    "ENVELOPE_KEY",
    "REDELIVERED_TYPE",
    "Handler",
    "dead_letters",
    "enqueue",
    "envelope",
    "worker",
]

#: The envelope's key for the integration's fields.
ENVELOPE_KEY = "ojs_retry"
#: The error type of an attempt lost with its worker.
REDELIVERED_TYPE = "chasquimq.redelivered"
#: How long a run's mark outlives a killed worker (ms).
_MARK_TTL_MS = 7 * 24 * 3600 * 1000

UserHandler = Callable[[Any], Awaitable[Any]]


def _chasquimq() -> Any:
    return require(import_optional("chasquimq"), "chasquimq")


@renamed_keywords(policy=POLICY_KEY)
def envelope(
    data: Any,
    *,
    job_id: str | None = None,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    defaults: PolicyLayer | RetryPolicy | None = WORKERS_UNSTATED,
) -> dict[str, Any]:
    """The payload for ``Queue.add``: ``data`` with the job's layer, validated.

    Raises :class:`ojs_retry.PolicyError` (before anything reaches Redis) for
    a bad layer, or one the workers' ``defaults`` refuse; ``TypeError`` for a
    layer given without ``defaults`` (``None`` when the workers have none).
    """
    text = validate_enqueued_layer(ojs_retry_policy, defaults)
    return {ENVELOPE_KEY: {"id": job_id, "policy": text, "attempts": 0, "state": None}, "data": data}


@renamed_keywords(policy=POLICY_KEY)
async def enqueue(
    queue: Any,
    name: str,
    data: Any,
    *,
    job_id: str | None = None,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    defaults: PolicyLayer | RetryPolicy | None = WORKERS_UNSTATED,
    delay_ms: int | None = None,
) -> Any:
    """``queue.add`` of :func:`envelope` (validated at enqueue, RET-16)."""
    payload = envelope(data, job_id=job_id, ojs_retry_policy=ojs_retry_policy, defaults=defaults)
    return await queue.add(name, payload, job_id=job_id, delay_ms=delay_ms)


async def dead_letters(queue: Any, limit: int = 100) -> list[dict[str, Any]]:
    """The dead-letter records in a ``chasquimq.Queue``'s DLQ, oldest first.

    Reads ChasquiMQ 1.3.0's DLQ entries (``Queue.peek_dlq``): each payload is
    the job's wire record ``[id, data, created_at_ms, attempt, ...]``; only
    entries this integration dead-lettered are returned.
    """
    import msgpack  # noqa: PLC0415  (ChasquiMQ's own dependency)

    out = []
    for entry in await queue.peek_dlq(limit):
        wire = msgpack.unpackb(entry["payload"], raw=False)
        data = msgpack.unpackb(wire[1], raw=False) if isinstance(wire[1], bytes) else wire[1]
        meta = data.get(ENVELOPE_KEY) if isinstance(data, dict) else None
        if isinstance(meta, dict) and meta.get("dead") is not None:
            out.append(meta["dead"])
    return out


class Handler:
    """The ``chasquimq.Worker`` handler: runs ``handler(job)`` on the engine.

    ``queue`` is a ``chasquimq.Queue`` of the same queue (re-publishes go
    through it); ``redis`` a ``redis.asyncio`` client of the same server (the
    run marks); ``ojs_retry_policy`` the queue's default layer; ``timeout_ms`` bounds
    each run (an overrun is a timed-out failure).
    """

    @renamed_keywords(policy=POLICY_KEY)
    def __init__(
        self,
        handler: UserHandler,
        *,
        queue: Any,
        redis: Any,
        ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
        listeners: Iterable[Listener] = (),
        timeout_ms: int | None = None,
        track_redeliveries: bool = True,
    ) -> None:
        self.handler = handler
        self.track_redeliveries = track_redeliveries
        self.queue = queue
        self.redis = redis
        self.defaults = ojs_retry_policy
        self.listeners = tuple(listeners)
        self.timeout_ms = timeout_ms
        self._pending: set[asyncio.Future[Any]] = set()
        resolve_policy(ojs_retry_policy)  # a bad default fails here, not at the first failure

    async def __call__(self, job: Any) -> Any:
        chasquimq = _chasquimq()
        meta, data = _unwrap(job)
        if meta.get("dead") is not None:
            raise chasquimq.UnrecoverableError(f"ojs-retry: dead_letter ({meta['dead']['decision']['reason']})")
        attempt = int(meta.get("attempts") or 0) + job.attempt + 1
        mark = f"{{chasqui:{self.queue.name}}}:ojs:run:{job.id}" if self.track_redeliveries else None
        if mark is not None and not await self.redis.set(mark, attempt, nx=True, px=_MARK_TTL_MS):
            lost = Failure(REDELIVERED_TYPE, None, True, "the job was redelivered (its worker was lost)")
            await self._carry_out(job, meta, data, attempt, lost)
            self._unmark(mark)
            return None
        try:
            inner = chasquimq.Job(id=meta["id"], name=job.name, data=data, attempt=attempt - 1,
                                  created_at_ms=job.created_at_ms)
            run = self.handler(inner)
            result = await (asyncio.wait_for(run, self.timeout_ms / 1000) if self.timeout_ms is not None else run)
        except Exception as exc:
            await self._carry_out(job, meta, data, attempt, _failure_of(exc, chasquimq))
            result = None
        self._unmark(mark)
        return result

    def _unmark(self, mark: str | None) -> None:
        if mark is None:
            return
        # Off the job's path: the delivery is acknowledged whether or not the
        # mark is gone yet, and its id is never delivered again.
        task = asyncio.ensure_future(self.redis.delete(mark))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def close(self) -> None:
        """Closes the re-publishing queue and the Redis client."""
        if self._pending:
            await asyncio.gather(*self._pending)
        await self.queue.close()
        await self.redis.aclose()

    async def _carry_out(self, job: Any, meta: dict[str, Any], data: Any, attempt: int, failure: Failure) -> None:
        out = transact(
            self.defaults,
            meta.get("policy"),
            meta.get("state"),
            attempt,
            failure,
            key=meta["id"],
            queue=self.queue.name,
            job={"name": job.name, "data": data},
        )
        after = {**meta, "attempts": attempt, "state": out.state_json}
        if out.action == "retry":
            delay = out.decision.delay_ms or 0
            await self._publish(job, after, data, f"{meta['id']}~{attempt + 1}", delay)
        elif out.action == "dead_letter":
            after["dead"] = json.loads(out.dead_letter or "null")
            await self._publish(job, after, data, f"{meta['id']}~dead", 0)
        event = DecisionEvent(self.queue.name, meta["id"], attempt, failure, out.decision, now_ms(), notes=out.notes)
        notify(self.listeners, event)

    async def _publish(self, job: Any, meta: dict[str, Any], data: Any, chasqui_id: str, delay: int) -> None:
        payload = {ENVELOPE_KEY: meta, "data": data}
        await self.queue.add(job.name, payload, job_id=chasqui_id, delay_ms=delay if delay > 0 else None)


def _unwrap(job: Any) -> tuple[dict[str, Any], Any]:
    """The envelope's fields and the user's data (a bare payload is a new job)."""
    data = job.data
    if isinstance(data, dict) and isinstance(data.get(ENVELOPE_KEY), dict):
        meta = dict(data[ENVELOPE_KEY])
        if meta.get("id") is None:
            meta["id"] = job.id
        return meta, data.get("data")
    return {"id": job.id, "policy": None, "attempts": 0, "state": None}, data


def _failure_of(exc: BaseException, chasquimq: Any) -> Failure:
    if isinstance(exc, chasquimq.UnrecoverableError):
        # The name ChasquiMQ's own rules (and the chasquimq preset) know it by.
        return Failure("UnrecoverableError", None, False, str(exc) or "UnrecoverableError")
    return failure_from_exception(exc, timeout_types=(asyncio.TimeoutError,))


@renamed_keywords(policy=POLICY_KEY)
def worker(
    queue_name: str,
    handler: UserHandler,
    *,
    redis_url: str,
    ojs_retry_policy: PolicyLayer | RetryPolicy | None = None,
    listeners: Iterable[Listener] = (),
    timeout_ms: int | None = None,
    track_redeliveries: bool = True,
    **worker_kwargs: Any,
) -> Any:
    """A ``chasquimq.Worker`` running ``handler`` under :class:`Handler`.

    ``worker_kwargs`` go to ``chasquimq.Worker`` (``concurrency``,
    ``claim_min_idle_ms``, ...). Close the worker's re-publishing queue and
    Redis client with ``await worker.ojs_handler.close()`` after the worker.
    """
    chasquimq = _chasquimq()
    import redis.asyncio as aioredis  # noqa: PLC0415

    wrapped = Handler(
        handler,
        queue=chasquimq.Queue(queue_name, redis_url=redis_url),
        redis=aioredis.from_url(redis_url),
        ojs_retry_policy=ojs_retry_policy,
        listeners=listeners,
        timeout_ms=timeout_ms,
        track_redeliveries=track_redeliveries,
    )
    made = chasquimq.Worker(queue_name, wrapped, redis_url=redis_url, **worker_kwargs)
    made.ojs_handler = wrapped
    return made
