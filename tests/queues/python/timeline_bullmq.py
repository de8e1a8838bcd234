"""Cross-queue identity runner for BullMQ for Python (``bullmq-python``).

``run(redis_url, scenario, workers)`` enqueues the scenario's jobs (their ids
as BullMQ job ids, the scenario's policy as each job's layer) with
``ojs_retry.integrations.bullmq.enqueue`` and runs ``workers`` worker
processes (``python timeline_bullmq.py --worker QUEUE``), each a
``bullmq.Worker`` made by ``ojs_retry.integrations.bullmq.worker``.

Precision: BullMQ for Python keeps delayed jobs to the millisecond, but an
idle worker blocks on Redis for whole seconds (``math.ceil`` of its block
timeout until it knows the server's version), so a retry can start up to
1000 ms after its delay.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

from timeline_common import Recorder, child_env, cli, handle, log_prefix, start_workers, stop_workers

QUEUE = "bullmq-python"
PRECISION_MS = 1000


def run(redis_url: str, scenario: dict[str, Any], workers: int = 2) -> dict[str, Any]:
    rec = Recorder.new(redis_url, scenario)
    name = f"ojs-timeline-{rec.run}"
    env = child_env(rec.env())
    procs = start_workers([sys.executable, __file__, "--worker", name], workers, env, log_prefix(QUEUE, rec.run))
    try:
        asyncio.run(_enqueue(redis_url, name, scenario))
        ids = rec.collect(j["id"] for j in scenario["jobs"])
    finally:
        stop_workers(procs)
    try:
        jobs = rec.finished(ids, _pending(rec, name))
    finally:
        asyncio.run(_clean(redis_url, name))
    return {"queue": QUEUE, "precision_ms": PRECISION_MS, "jobs": jobs}


def _pending(rec: Recorder, name: str) -> int:
    """Jobs BullMQ still holds for the queue: waiting, active, paused,
    delayed (a retry) or prioritized."""
    key = f"bull:{name}:"
    lists = sum(int(rec.client.llen(key + k)) for k in ("wait", "active", "paused"))
    return lists + sum(int(rec.client.zcard(key + k)) for k in ("delayed", "prioritized"))


async def _enqueue(redis_url: str, name: str, scenario: dict[str, Any]) -> None:
    import bullmq

    from ojs_retry.integrations import bullmq as ojs_bullmq

    queue = bullmq.Queue(name, {"connection": redis_url})
    for job in scenario["jobs"]:
        await ojs_bullmq.enqueue(queue, "scenario", None, {"jobId": job["id"]}, ojs_retry_policy=scenario["policy"],
                                     defaults=None)
    await queue.close()


async def _clean(redis_url: str, name: str) -> None:
    import bullmq
    import redis.asyncio as aioredis

    from ojs_retry.integrations import bullmq as ojs_bullmq

    queue = bullmq.Queue(name, {"connection": redis_url})
    await queue.obliterate(force=True)
    await queue.close()
    client = aioredis.from_url(redis_url)
    await client.delete(ojs_bullmq.dead_letter_key(name))
    await client.aclose()


async def _work(name: str) -> None:
    from ojs_retry.integrations import bullmq as ojs_bullmq

    rec = Recorder.from_env()

    async def handler(job: Any, token: str) -> Any:
        return handle(str(job.id))

    worker = ojs_bullmq.worker(name, handler, {"connection": rec.redis_url, "concurrency": 2},
                               listeners=[rec.decided])
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await worker.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        asyncio.run(_work(sys.argv[2]))
        sys.stdout.flush()
        os._exit(0)
    cli(run)
