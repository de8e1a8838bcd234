"""ChasquiMQ: the engine's retry path against ChasquiMQ's own, same Redis, same run.

    python bench/queues/bench_chasquimq.py --redis URL [--jobs N] [--rounds R]

(Redis >= 8.6.) Prints one JSON document:

* ``retry_path``: jobs per second for N jobs that each fail once and then
  succeed, with a 1 ms retry delay both ways (ChasquiMQ's promoter, 100 ms
  tick, moves a delayed retry into the stream), one in-process worker
  (concurrency 50) per round, four kinds a round in rotating order
  (benchlib): natively (``attempts=2``, fixed 1 ms backoff, no jitter), on
  the engine (``max_attempts`` 2, constant 1 ms, through
  ``ojs_retry.integrations.chasquimq``: the run mark, the decision, a
  re-publish with the delay), its floor (the same with the transaction a
  no-op) and the engine without the run marks (``track_redeliveries=False``).
  ChasquiMQ's own retry runs inside its compiled engine; the integration's
  is a ``Queue.add`` from Python, so the floor is what that mechanism
  costs. The ratios are of the medians.
* ``enqueue``: per call, ``Queue.add`` alone, the integration's ``enqueue``
  with a job layer, the validation (``envelope``, RET-16) alone, and the
  ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from statistics import median
from typing import Any

import benchlib as bl
import chasquimq
import redis.asyncio as aioredis

from ojs_retry import RetryPolicy
from ojs_retry.integrations import chasquimq as ojs_chasqui

BACKOFF = {"kind": "fixed", "delay_ms": 1, "max_delay_ms": 1000, "multiplier": 2.0, "jitter_ms": 0}
KINDS = (*bl.KINDS, "engine_untracked")


async def retry_round(url: str, kind: str, jobs: int) -> float:
    name = f"bench-chq-{uuid.uuid4().hex[:8]}"
    queue = chasquimq.Queue(name, redis_url=url)
    done = asyncio.Event()
    finished = 0

    async def handler(job: Any) -> Any:
        nonlocal finished
        if job.attempt == 0:
            raise RuntimeError("once")
        finished += 1
        if finished == jobs:
            done.set()
        return None

    engine = kind != "native"
    with bl.floor_if(kind, ojs_chasqui):
        if engine:
            worker = ojs_chasqui.worker(name, handler, redis_url=url, ojs_retry_policy=bl.POLICY, concurrency=50,
                                        track_redeliveries=kind != "engine_untracked")
        else:
            worker = chasquimq.Worker(name, handler, redis_url=url, concurrency=50)
        task = asyncio.ensure_future(worker.run())
        await asyncio.sleep(0.2)
        start = time.perf_counter()
        for i in range(jobs):
            if engine:
                await ojs_chasqui.enqueue(queue, "j", None, job_id=f"b{i}")
            else:
                await queue.add("j", None, job_id=f"b{i}", attempts=2, backoff=BACKOFF)
        await asyncio.wait_for(done.wait(), 300)
        elapsed = time.perf_counter() - start
        await worker.close()
        await task
    if engine:
        await worker.ojs_handler.close()
    await _drop(url, name)
    await queue.close()
    return jobs / elapsed


async def _drop(url: str, name: str) -> None:
    client = aioredis.from_url(url)
    keys = await client.keys(f"{{chasqui:{name}}}*")
    if keys:
        await client.delete(*keys)
    await client.aclose()


async def enqueue_cost(url: str, calls: int) -> dict[str, float]:
    name = f"bench-chq-{uuid.uuid4().hex[:8]}"
    queue = chasquimq.Queue(name, redis_url=url)
    enqueue = await bl.enqueue_cost_async(
        lambda i: queue.add("j", {"n": i}),
        lambda i: ojs_chasqui.enqueue(queue, "j", {"n": i}, ojs_retry_policy=bl.LAYER, defaults=bl.POLICY),
        lambda i: ojs_chasqui.envelope({"n": i}, ojs_retry_policy=bl.LAYER, defaults=bl.POLICY),
        calls,
    )
    await _drop(url, name)
    await queue.close()
    return enqueue


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", required=True)
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    RetryPolicy(bl.POLICY)
    retry = await bl.retry_path_async(args.rounds, lambda kind, jobs: retry_round(args.redis, kind, jobs),
                                      args.jobs, KINDS)
    retry["ratio_untracked"] = median(retry["engine_untracked_jobs_per_s"]) / median(retry["native_jobs_per_s"])
    doc = {"queue": "chasquimq", "retry_path": retry, "enqueue": await enqueue_cost(args.redis, args.jobs)}
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
    import os
    import sys

    sys.stdout.flush()  # os._exit below does not flush
    os._exit(0)  # ChasquiMQ 1.3.0's native module can crash at interpreter teardown
