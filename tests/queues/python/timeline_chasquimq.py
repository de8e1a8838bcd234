"""Cross-queue identity runner for ChasquiMQ (``chasquimq``; Redis >= 8.6).

``run(redis_url, scenario, workers)`` enqueues the scenario's jobs (their ids
as OJS ids, the scenario's policy as each job's layer) with
``ojs_retry.integrations.chasquimq.enqueue`` and runs ``workers`` worker
processes (``python timeline_chasquimq.py --worker QUEUE``), each a
``chasquimq.Worker`` made by ``ojs_retry.integrations.chasquimq.worker``.

Precision: a retry waits in ChasquiMQ's delayed set until a promoter (one
per worker, leader-elected, 100 ms tick) moves it into the stream, and a
worker's blocking read then picks it up: 200 ms.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

from timeline_common import Recorder, child_env, cli, handle, log_prefix, start_workers, stop_workers

QUEUE = "chasquimq"
PRECISION_MS = 200


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
        jobs = rec.finished(ids, _pending(rec, redis_url, name))
    finally:
        _clean(rec, name)
    return {"queue": QUEUE, "precision_ms": PRECISION_MS, "jobs": jobs}


async def _enqueue(redis_url: str, name: str, scenario: dict[str, Any]) -> None:
    import chasquimq

    from ojs_retry.integrations import chasquimq as ojs_chasqui

    queue = chasquimq.Queue(name, redis_url=redis_url)
    for job in scenario["jobs"]:
        await ojs_chasqui.enqueue(queue, "scenario", None, job_id=job["id"], ojs_retry_policy=scenario["policy"],
                                      defaults=None)
    await queue.close()


def _pending(rec: Recorder, redis_url: str, name: str) -> int:
    """Jobs ChasquiMQ still holds for the queue: delayed (a retry), or in
    its stream not yet delivered to, or not acknowledged by, its group."""
    stream, delayed = asyncio.run(_keys(redis_url, name))
    groups = rec.client.xinfo_groups(stream) if rec.client.exists(stream) else []
    in_stream = sum(int(g.get("pending") or 0) + int(g.get("lag") or 0) for g in groups)
    return int(rec.client.zcard(delayed)) + in_stream


async def _keys(redis_url: str, name: str) -> tuple[str, str]:
    from chasquimq import _native

    producer = _native.Producer(redis_url, name)
    return producer.stream_key(), producer.delayed_key()


def _clean(rec: Recorder, name: str) -> None:
    keys = list(rec.client.scan_iter(match=f"{{chasqui:{name}}}*"))
    if keys:
        rec.client.delete(*keys)


async def _work(name: str) -> None:
    from ojs_retry.integrations import chasquimq as ojs_chasqui

    rec = Recorder.from_env()

    async def handler(job: Any) -> Any:
        return handle(str(job.id))

    worker = ojs_chasqui.worker(name, handler, redis_url=rec.redis_url, listeners=[rec.decided], concurrency=2)
    task = asyncio.ensure_future(worker.run())
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await worker.close()
    await task
    await worker.ojs_handler.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        asyncio.run(_work(sys.argv[2]))
        sys.stdout.flush()
        # ChasquiMQ 1.3.0's native module can crash at interpreter teardown.
        os._exit(0)
    cli(run)
