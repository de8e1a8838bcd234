"""BullMQ for Python: the engine's retry path against BullMQ's own, same Redis, same run.

    python bench/queues/bench_bullmq_py.py --redis URL [--jobs N] [--rounds R]

Prints one JSON document:

* ``retry_path``: jobs per second for N jobs that each fail once and then
  succeed (a 1 ms retry delay both ways, so the queue's own retry
  mechanics are what is timed), one in-process worker (concurrency 50) per
  round, three kinds a round in rotating order (benchlib): natively
  (``attempts: 2``, ``backoff: 1``), on the engine (``max_attempts`` 2,
  constant ``initial_interval`` 1 ms, through ``ojs_retry.integrations.bullmq``:
  the decision, the protocol's one atomic Lua write of the job's state, the
  backoff hook) and its floor (the same with the transaction a no-op). The
  ratios are of the medians.
* ``enqueue``: per call, ``Queue.add`` alone, the integration's ``enqueue``
  with a job layer (validation, RET-16, plus the layer in the job options),
  the validation (``job_options``) alone, and the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from typing import Any

import benchlib as bl
import bullmq

from ojs_retry import RetryPolicy
from ojs_retry.integrations import bullmq as ojs_bullmq


async def retry_round(url: str, kind: str, jobs: int) -> float:
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
    with bl.floor_if(kind, ojs_bullmq):
        if kind == "native":
            worker = bullmq.Worker(name, handler, opts)
            job_opts = {"attempts": 2, "backoff": 1}
        else:
            worker = ojs_bullmq.worker(name, handler, opts, ojs_retry_policy=bl.POLICY)
            job_opts = ojs_bullmq.job_options()
        await asyncio.sleep(0.2)
        start = time.perf_counter()
        await queue.addBulk([{"name": "j", "data": None, "opts": job_opts} for _ in range(jobs)])
        await asyncio.wait_for(done.wait(), 300)
        elapsed = time.perf_counter() - start
        await worker.close()
    await queue.obliterate(force=True)
    await queue.close()
    return jobs / elapsed


async def enqueue_cost(url: str, calls: int) -> dict[str, float]:
    name = f"bench-bmq-{uuid.uuid4().hex[:8]}"
    queue = bullmq.Queue(name, {"connection": url})
    enqueue = await bl.enqueue_cost_async(
        lambda i: queue.add("j", None, {"attempts": 5}),
        lambda i: ojs_bullmq.enqueue(queue, "j", None, {"attempts": 5}, ojs_retry_policy=bl.LAYER,
                                     defaults=bl.POLICY),
        lambda i: ojs_bullmq.job_options({"attempts": 5}, ojs_retry_policy=bl.LAYER, defaults=bl.POLICY),
        calls,
    )
    await queue.obliterate(force=True)
    await queue.close()
    return enqueue


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", required=True)
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    RetryPolicy(bl.POLICY)
    retry = await bl.retry_path_async(args.rounds, lambda kind, jobs: retry_round(args.redis, kind, jobs), args.jobs)
    doc = {"queue": "bullmq-python", "retry_path": retry, "enqueue": await enqueue_cost(args.redis, args.jobs)}
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
