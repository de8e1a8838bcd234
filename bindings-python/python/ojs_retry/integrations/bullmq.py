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

Adoption is one line: :func:`worker` in place of ``bullmq.Worker``. Given no
policy, it decides a job without a layer of its own by the job's own
``attempts`` / ``backoff`` through the engine's ``bullmq`` preset
(:func:`adoption_text`), so producers stay as they are.

The job's policy layer travels in its options (``opts["ojs_retry_policy"]``,
set by :func:`enqueue`, which validates it first); its §10 retry state in a
field of the job's own hash (``ojs_retry_state``), removed with the job.
BullMQ has no dead-letter queue: a dead-lettered job is pushed, as the JSON
dead-letter record of the engine's failure transaction, onto the Redis
list ``<prefix>:<queue>:dead`` (oldest first, :func:`dead_letter_key`) and the
job itself goes to BullMQ's failed set.

A stalled job (its worker died or blocked past ``lockDuration``) is counted
when it is picked up again: each stall not yet counted is a failed attempt
of type ``bullmq.stalled`` with ``timed_out`` (spec §9.2), one transaction
each, in order; the worker made by :func:`worker` raises
``maxStalledCount`` so BullMQ never fails it behind the engine's back. The
Redis backend only (BullMQ's Postgres backend has no job hash to carry the
state).

The keys, hash fields, the one atomic write (a Lua script) and the stall
counting are the protocol BullMQ for Node follows too
(``docs/bullmq-protocol.md``): a job enqueued in either language is decided
the same way by a worker in the other.
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
    "ATTEMPTS",
    "BACKOFF_TYPE",
    "STALLED_TYPE",
    "Processor",
    "adoption_text",
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
#: The protocol's one write (docs/bullmq-protocol.md), atomic: the job's
#: state and the stalls counted, and the dead-letter record when there is
#: one. A job removed meanwhile stays removed (0); a writer whose stall count
#: is behind the stored one writes nothing (-1).
_WRITE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local seen = tonumber(redis.call('HGET', KEYS[1], ARGV[3]) or '0') or 0
if seen > tonumber(ARGV[4]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if ARGV[5] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[5]) end
return 1
"""

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
    defaults: PolicyLayer | RetryPolicy | None = WORKERS_UNSTATED,
) -> dict[str, Any]:
    """Job options for ``Queue.add`` with the job's policy layer, validated.

    Raises :class:`ojs_retry.PolicyError` (before anything reaches Redis) for
    a bad layer, or one the workers' ``defaults`` refuse; ``TypeError`` for a
    layer given without ``defaults`` (``None`` when the workers have none). ``attempts`` and
    ``backoff`` are the integration's: the engine decides both.
    """
    text = validate_enqueued_layer(ojs_retry_policy, defaults)
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
    defaults: PolicyLayer | RetryPolicy | None = WORKERS_UNSTATED,
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
    with none, a job without a layer of its own keeps its BullMQ ``attempts`` /
    ``backoff``, read through the ``bullmq`` preset (:func:`adoption_text`);
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
        """Each stall not yet counted is a failed attempt, timed out (RET-12):
        one transaction per stall, in order, up to the first terminal outcome;
        one atomic write of the last state and the stalls counted."""
        client, key = _job_hash(job)
        stored, seen = await client.hmget(key, [STATE_KEY, _STALLS_FIELD])
        stalls = int(job.stalledCounter)
        first = int(seen or 0) + 1
        if stalls < first:
            return
        lost = Failure(STALLED_TYPE, None, True, "the job stalled (its worker stopped renewing the lock)")
        state, now = _text(stored), now_ms()
        for n in range(first, stalls + 1):
            attempt = job.attemptsMade + n
            out = self._transact(job, attempt, lost, state, now)
            state = out.state_json
            if out.action != "retry":
                break
        await _write(job, out, stalls)
        if out.action != "retry":
            self._finish(job, attempt, lost, out, now)
        # The stalled checker made it available at once: hold it for the delay.
        await job.moveToDelayed(out.decision.next_retry_at, token)
        self._notify(job, attempt, lost, out, now)
        raise _bullmq().DelayedError()

    def _transact(self, job: Any, attempt: int, failure: Failure, state: str | None, now: int) -> Outcome:
        layer = job.opts.get(POLICY_KEY)
        # No OJS policy anywhere: the job's own attempts / backoff (the
        # one-line adoption), read before _carry_out hands its backoff to the engine.
        defaults = self.defaults if self.defaults is not None or layer is not None else adoption_text(job.opts)
        return transact(
            defaults,
            layer,
            state,
            attempt,
            failure,
            key=str(job.id),
            queue=job.queue.name,
            job={"name": job.name, "data": job.data, "opts": job.opts},
            now=now,
        )

    def _notify(self, job: Any, attempt: int, failure: Failure, out: Outcome, now: int) -> None:
        event = DecisionEvent(job.queue.name, str(job.id), attempt, failure, out.decision, now, notes=tuple(out.notes))
        notify(self.listeners, event)

    async def _carry_out(self, job: Any, attempt: int, failure: Failure, exc: BaseException) -> NoReturn:
        bullmq = _bullmq()
        client, key = _job_hash(job)
        # The first attempt has no state to read (one round trip fewer).
        state = None if attempt == 1 else _text(await client.hget(key, STATE_KEY))
        now = now_ms()
        out = self._transact(job, attempt, failure, state, now)
        await _write(job, out, int(job.stalledCounter))
        if out.action != "retry":
            self._finish(job, attempt, failure, out, now, exc)
        job._ojs_retry_delay = out.decision.delay_ms or 0
        # moveToFailed reads these from this object: a job added without
        # job_options (plain queue.add) is retried all the same.
        job.opts["attempts"] = ATTEMPTS
        job.opts["backoff"] = {"type": BACKOFF_TYPE}
        # The state is stored and BullMQ schedules the retry when this raises.
        self._notify(job, attempt, failure, out, now)
        if not _storable(exc):
            # BullMQ stores the message and traceback as UTF-8 text, which a
            # lone surrogate cannot be: the job would be stuck in active.
            raise RuntimeError(_well_formed(str(exc))) from None
        if isinstance(exc, bullmq.UnrecoverableError):
            raise RuntimeError(str(exc)) from exc
        raise exc

    def _finish(self, job: Any, attempt: int, failure: Failure, out: Outcome, now: int,
                exc: BaseException | None = None) -> NoReturn:
        """A discard or a dead letter (its record already written): BullMQ's failed set."""
        self._notify(job, attempt, failure, out, now)
        error = _bullmq().UnrecoverableError(f"ojs-retry: {out.action} ({out.decision.reason})")
        if exc is not None and not _storable(exc):
            raise error from None  # its traceback would carry the handler's text
        raise error


#: BullMQ's built-in backoff types: the ``bullmq`` preset's ``backoff.type``.
_BUILT_IN = ("fixed", "exponential")
#: The adoption documents made, by the job's own options (jobs of one kind
#: carry one ``attempts`` / ``backoff``); bounded, as the engine's caches are.
_ADOPTED: dict[str, str] = {}
_ADOPTED_LIMIT = 256


def adoption_text(opts: Mapping[str, Any]) -> str | None:
    """The one-line adoption: the ``bullmq`` preset of a job's own options.

    A job with no OJS policy anywhere (no workers' defaults, no layer of its
    own) is decided by the preset of its ``attempts`` / ``backoff``
    (``runtime: "python"``), so its producer stays as it is. Returns the
    preset document's text, to be the transaction's defaults (a preset is
    the only layer); ``None`` for a job enqueued for the engine
    (:func:`job_options` with no policy: backoff type ``"ojs-retry"``),
    which keeps the spec's default policy. A backoff BullMQ does not build
    in is handed over as it is: the preset refuses it, and the transaction
    dead-letters the job with the reason.

    >>> adoption_text({"attempts": 3, "backoff": {"type": "fixed", "delay": 500}})
    '{"preset": {"system": "bullmq", "runtime": "python", "attempts": 3, "backoff": {"type": "fixed", "delay": 500}}}'
    >>> adoption_text({"attempts": ATTEMPTS, "backoff": {"type": BACKOFF_TYPE}}) is None
    True
    """
    raw = opts.get("backoff")
    kind = raw.get("type") if isinstance(raw, Mapping) else None
    if kind == BACKOFF_TYPE:
        return None
    # BullMQ's Job gives a job without ``attempts`` 0 (one run, as 1).
    attempts = opts.get("attempts", 0)
    if not (isinstance(raw, Mapping) and kind in _BUILT_IN):
        return _adoption_document(attempts, raw)
    # repr: 1, 1.0 and True are one dict key but three documents.
    key = repr((attempts, kind, raw.get("delay"), raw.get("jitter")))
    text = _ADOPTED.get(key)
    if text is None:
        # BullMQ reads only these of a built-in backoff; anything beside them is for custom strategies.
        text = _adoption_document(attempts, {k: raw[k] for k in ("type", "delay", "jitter") if k in raw})
        if len(_ADOPTED) >= _ADOPTED_LIMIT:
            del _ADOPTED[next(iter(_ADOPTED))]
        _ADOPTED[key] = text
    return text


def _adoption_document(attempts: Any, backoff: Any) -> str:
    return json.dumps({"preset": {"system": "bullmq", "runtime": "python", "attempts": attempts, "backoff": backoff}})


def _storable(exc: BaseException) -> bool:
    """Whether BullMQ can store the exception's text (UTF-8: no lone surrogate)."""
    try:
        str(exc).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _well_formed(text: str) -> str:
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


async def _write(job: Any, out: Outcome, stalls: int) -> Any:
    """The protocol's one atomic write (``_WRITE_LUA``)."""
    client, key = _job_hash(job)
    dead = dead_letter_key(job.queue.name, job.queue.prefix)
    record = out.dead_letter if out.dead_letter is not None else ""
    return await client.eval(_WRITE_LUA, 2, key, dead, STATE_KEY, out.state_json, _STALLS_FIELD, str(stalls), record)


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
