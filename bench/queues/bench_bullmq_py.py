"""BullMQ for Python: the engine's retry path against BullMQ's own, same Redis, same run.

    python bench/queues/bench_bullmq_py.py --redis URL [--jobs N] [--rounds R]

Prints one JSON document:

* ``retry_path``: jobs per second for N jobs that each fail once and then
  succeed (a 1 ms retry delay both ways, so the queue's own retry
  mechanics are what is timed), one in-process worker (concurrency 50),
  natively (``attempts: 2``, ``backoff: 1``) and on the engine (``max_attempts``
  2, constant ``initial_interval`` 1 ms, through ``ojs_retry.integrations.bullmq``);
  rounds alternate, the ratio is engine / native of the medians.
* ``enqueue``: per call, ``Queue.add`` alone, ``job_options`` (the
  enqueue-time validation, RET-16) alone, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from typing import Any

import bullmq

from ojs_retry import RetryPolicy
from ojs_retry.integrations import bullmq as ojs_bullmq

POLICY = {"max_attempts": 2, "initial_interval": "PT0.001S", "backoff_strategy": "none", "jitter": False}


async def retry_round(url: str, jobs: int, engine: bool) -> float:
    name = f"bench-bmq-{uuid.uuid4().hex[:8]}"
    queue = bullmq.Queue(name, {"connection": url})
    done = asyncio.Event()
    finished = 0

    async def handler(job: Any, token: str) -> Any:
        nonlocal finished
        if job.attemptsMade == 0:
            raise RuntimeError("once")
        finished += 1
        if finished == jobs:
            done.set()
        return 1

    opts = {"connection": url, "concurrency": 50}
    worker = ojs_bullmq.worker(name, handler, opts, ojs_retry_policy=POLICY) if engine else bullmq.Worker(name, handler, opts)
    await asyncio.sleep(0.2)
    start = time.perf_counter()
    batch = [{"name": "j", "data": None,
              "opts": ojs_bullmq.job_options() if engine else {"attempts": 2, "backoff": 1}} for _ in range(jobs)]
    await queue.addBulk(batch)
    await asyncio.wait_for(done.wait(), 300)
    elapsed = time.perf_counter() - start
    await worker.close()
    await queue.obliterate(force=True)
    await queue.close()
    return jobs / elapsed


async def enqueue_cost(url: str, calls: int) -> dict[str, float]:
    name = f"bench-bmq-{uuid.uuid4().hex[:8]}"
    queue = bullmq.Queue(name, {"connection": url})
    layer = {"max_attempts": 5, "initial_interval": "PT1S", "non_retryable_errors": ["validation.*"]}
    start = time.perf_counter()
    for _ in range(calls):
        await queue.add("j", None, {"attempts": 5})
    add_s = (time.perf_counter() - start) / calls
    start = time.perf_counter()
    for _ in range(calls):
        ojs_bullmq.job_options(ojs_retry_policy=layer)
    validate_s = (time.perf_counter() - start) / calls
    await queue.obliterate(force=True)
    await queue.close()
    return {"add_us": add_s * 1e6, "validate_us": validate_s * 1e6, "validate_over_add": validate_s / add_s}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", required=True)
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    RetryPolicy(POLICY)
    native, engine = [], []
    for _ in range(args.rounds):
        native.append(await retry_round(args.redis, args.jobs, False))
        engine.append(await retry_round(args.redis, args.jobs, True))
    doc = {
        "queue": "bullmq-python",
        "retry_path": {"jobs": args.jobs, "native_jobs_per_s": native, "engine_jobs_per_s": engine,
                       "ratio": statistics.median(engine) / statistics.median(native)},
        "enqueue": await enqueue_cost(args.redis, args.jobs),
    }
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
