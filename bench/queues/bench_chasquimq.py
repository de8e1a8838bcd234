"""ChasquiMQ: the engine's retry path against ChasquiMQ's own, same Redis, same run.

    python bench/queues/bench_chasquimq.py --redis URL [--jobs N] [--rounds R]

(Redis >= 8.6.) Prints one JSON document:

* ``retry_path``: jobs per second for N jobs that each fail once and then
  succeed, with a 1 ms retry delay both ways (ChasquiMQ's promoter, 100 ms
  tick, moves a delayed retry into the stream), one in-process worker
  (concurrency 50): natively (``attempts=2``, fixed 1 ms backoff, no jitter)
  and on the engine (``max_attempts`` 2, constant 1 ms, through
  ``ojs_retry.integrations.chasquimq``: a re-publish with the delay, with the
  run marks and without them, ``track_redeliveries=False``); rounds
  alternate, the ratios are engine / native of the medians.
* ``enqueue``: per call, ``Queue.add`` alone, ``envelope`` (the enqueue-time
  validation, RET-16) alone, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from typing import Any

import chasquimq
import redis.asyncio as aioredis

from ojs_retry import RetryPolicy
from ojs_retry.integrations import chasquimq as ojs_chasqui

POLICY = {"max_attempts": 2, "initial_interval": "PT0.001S", "backoff_strategy": "none", "jitter": False}
BACKOFF = {"kind": "fixed", "delay_ms": 1, "max_delay_ms": 1000, "multiplier": 2.0, "jitter_ms": 0}


async def retry_round(url: str, jobs: int, mode: str) -> float:
    engine = mode != "native"
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

    if engine:
        worker = ojs_chasqui.worker(name, handler, redis_url=url, ojs_retry_policy=POLICY, concurrency=50,
                                    track_redeliveries=mode == "engine")
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
    layer = {"max_attempts": 5, "initial_interval": "PT1S", "non_retryable_errors": ["validation.*"]}
    start = time.perf_counter()
    for i in range(calls):
        await queue.add("j", {"n": i})
    add_s = (time.perf_counter() - start) / calls
    start = time.perf_counter()
    for i in range(calls):
        ojs_chasqui.envelope({"n": i}, ojs_retry_policy=layer)
    validate_s = (time.perf_counter() - start) / calls
    await _drop(url, name)
    await queue.close()
    return {"add_us": add_s * 1e6, "validate_us": validate_s * 1e6, "validate_over_add": validate_s / add_s}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", required=True)
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    RetryPolicy(POLICY)
    rates: dict[str, list[float]] = {"native": [], "engine": [], "engine_untracked": []}
    for _ in range(args.rounds):
        for mode, got in rates.items():
            got.append(await retry_round(args.redis, args.jobs, mode))
    native = statistics.median(rates["native"])
    doc = {
        "queue": "chasquimq",
        "retry_path": {"jobs": args.jobs, **{f"{m}_jobs_per_s": r for m, r in rates.items()},
                       "ratio": statistics.median(rates["engine"]) / native,
                       "ratio_untracked": statistics.median(rates["engine_untracked"]) / native},
        "enqueue": await enqueue_cost(args.redis, args.jobs),
    }
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
    import os
    import sys

    sys.stdout.flush()  # os._exit below does not flush
    os._exit(0)  # ChasquiMQ 1.3.0's native module can crash at interpreter teardown
