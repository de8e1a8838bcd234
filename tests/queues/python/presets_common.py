"""What the presets-in-the-queue test's worker processes share.

Each worker process runs one queue in one mode: ``native`` (the queue's own
retry configuration) or ``engine`` (the OJS integration with the queue's
preset carried by the job). Both record through the queue's own hooks the
same events, into Redis lists ``ojs-preset:<run>:<job id>`` (run id and Redis
URL in the environment):

* ``{"kind": "start"}`` — the handler started (always fails afterwards);
* ``{"kind": "retry", "attempt": n, "delay_ms": d}`` — the queue scheduled a
  retry of attempt ``n`` with the delay it was given (Celery's countdown,
  RQ's interval, Dramatiq's enqueue delay);
* ``{"kind": "terminal", "attempt": n}`` — the queue gave up on the job;
* ``{"kind": "decision", ...}`` — engine mode only: the integration's
  decision (its listener).

:func:`keyed_u` is the engine's keyed jitter sample, reimplemented from the
algorithm documented in ``core/src/jitter.rs`` (FNV-1a of the key, then
SplitMix64's n-th output, top 53 bits); the Dramatiq native worker pins
Python's ``random.random`` to it so Dramatiq's own backoff code draws the
sample the engine draws for the same job and attempt.
"""

from __future__ import annotations

import json
import os
from typing import Any

import redis

ENV_REDIS = "OJS_PRESET_REDIS"
ENV_RUN = "OJS_PRESET_RUN"

MASK = (1 << 64) - 1


class Fatal(Exception):
    """The failure a queue's "never retry" rule names (Celery's
    ``dont_autoretry_for``, Dramatiq's ``throws``); its OJS error type is
    ``presets_common.Fatal``."""


def splitmix64(seed: int, n: int) -> int:
    z = (seed + n * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & MASK
    return h


def keyed_u(key: str, n: int) -> float:
    """The engine's keyed sample for retry ``n`` of job ``key``."""
    return (splitmix64(fnv1a64(key.encode("utf-8")), n) >> 11) / float(1 << 53)


class Recorder:
    def __init__(self, redis_url: str, run: str) -> None:
        self.run = run
        self.client = redis.Redis.from_url(redis_url)

    @classmethod
    def from_env(cls) -> Recorder:
        return cls(os.environ[ENV_REDIS], os.environ[ENV_RUN])

    def key(self, job_id: str) -> str:
        return f"ojs-preset:{self.run}:{job_id}"

    def push(self, job_id: str, **event: Any) -> None:
        self.client.rpush(self.key(job_id), json.dumps(event))

    def events(self, job_id: str) -> list[dict[str, Any]]:
        return [json.loads(raw) for raw in self.client.lrange(self.key(job_id), 0, -1)]


_recorder: Recorder | None = None


def recorder() -> Recorder:
    global _recorder
    if _recorder is None:
        _recorder = Recorder.from_env()
    return _recorder


def fail(job_id: str) -> None:
    """The handler of every job: records its start, then fails."""
    recorder().push(job_id, kind="start")
    if "fatal" in job_id:
        raise Fatal(job_id)
    raise RuntimeError(f"{job_id} failed")


def record_decision(event: Any) -> None:
    """The integrations' listener (engine mode)."""
    recorder().push(event.job_id, kind="decision", attempt=event.attempt, action=event.decision.action,
                    reason=event.decision.reason, delay_ms=event.decision.delay_ms, at_ms=event.at_ms)


def record_celery_signals() -> None:
    """Records what Celery itself reports, in this process: ``task_retry``'s
    ``reason.when`` (the countdown ``Task.retry`` got) and ``task_failure``
    (Celery gave up). Connected once however many apps call it."""
    from celery.signals import task_failure, task_retry  # noqa: PLC0415 (Celery apps only)

    def retried(sender: Any = None, request: Any = None, reason: Any = None, **_: Any) -> None:
        recorder().push(request.id, kind="retry", attempt=int(request.retries) + 1,
                        delay_ms=round(float(reason.when) * 1000))

    def failed(sender: Any = None, task_id: str | None = None, **_: Any) -> None:
        recorder().push(str(task_id), kind="terminal", attempt=int(sender.request.retries) + 1)

    task_retry.connect(retried, weak=False, dispatch_uid="ojs-test-recorder-retry")
    task_failure.connect(failed, weak=False, dispatch_uid="ojs-test-recorder-failure")
