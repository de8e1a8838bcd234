"""The RQ timeline runner (see timeline_common): two RQ ``Worker`` processes
(rq_worker.py, scheduler on) on the real Redis.

Precision: a delay is rounded up to whole seconds (up to 1000 ms late by
design) and RQ's scheduler moves due jobs every second (1000 ms more):
2000 ms.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import redis
from rq import Queue

from ojs_retry.integrations import POLICY_KEY, STATE_KEY
from ojs_retry.integrations.rq import ATTEMPTS_META_KEY, OjsRetry

import timeline_common as tc

QUEUE = "rq"
PRECISION_MS = 2000


def run(redis_url: str, scenario: Mapping[str, Any], workers: int = 2,
        extra_env: Mapping[str, str] | None = None) -> dict[str, Any]:
    rec = tc.Recorder.new(redis_url, scenario)
    name = f"ojs-rq-{rec.run}"
    env = tc.child_env({**rec.env(), **(extra_env or {})})
    argv = [sys.executable, str(tc.HERE / "rq_worker.py"), name]
    procs = tc.start_workers(argv, workers, env, tc.log_prefix("rq", rec.run))
    try:
        queue = Queue(name, connection=redis.Redis.from_url(redis_url))
        ojs = OjsRetry()
        for job in scenario["jobs"]:
            timeout = scenario.get("job_timeout_s", 180)
            if "raw_layer" in scenario:
                # The plain RQ API: a layer no producer checked.
                queue.enqueue(tc.handle, job["id"], job_id=job["id"], job_timeout=timeout,
                              meta={POLICY_KEY: scenario["raw_layer"]})
                continue
            carried = job.get("carried") or {}  # a state / counter a producer put on the job itself
            meta = {STATE_KEY: carried["state"], ATTEMPTS_META_KEY: carried["counter"]} if carried else None
            ojs.enqueue(queue, tc.handle, job["id"], job_id=f"{job['id']}", ojs_retry_policy=scenario["policy"],
                        job_timeout=timeout, meta=meta)
        ids = rec.collect([j["id"] for j in scenario["jobs"]])
    finally:
        tc.stop_workers(procs)
    jobs = rec.finished(ids, pending(rec.client, name))
    return {"queue": QUEUE, "precision_ms": PRECISION_MS, "jobs": jobs, "run": rec.run, "redis_queue": name}


def pending(client: redis.Redis, name: str) -> int:
    """Jobs RQ still holds for the queue: queued, scheduled (a retry) or started."""
    from rq.registry import ScheduledJobRegistry, StartedJobRegistry

    queue = Queue(name, connection=client)
    return queue.count + ScheduledJobRegistry(queue=queue).count + StartedJobRegistry(queue=queue).count


if __name__ == "__main__":
    tc.cli(run)
