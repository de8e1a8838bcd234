"""The Celery timeline runner (see timeline_common): two ``celery worker``
processes (prefork, concurrency 1) on the real Redis.

Precision: Celery holds a retried task in the worker until its ETA (kept to
the microsecond) and starts it from its timer: 50 ms covers the timer tick.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from ojs_retry.integrations import POLICY_KEY, STATE_KEY

import timeline_common as tc

QUEUE = "celery"
PRECISION_MS = 50


def run(redis_url: str, scenario: Mapping[str, Any], workers: int = 2, task: str = "scenario") -> dict[str, Any]:
    rec = tc.Recorder.new(redis_url, scenario)
    queue = f"ojs-celery-{rec.run}"
    env = tc.child_env({**rec.env(), "OJS_CELERY_BROKER": redis_url, "OJS_CELERY_QUEUE": queue})
    argv = [sys.executable, "-m", "celery", "-A", "celery_app", "worker", "-Q", queue, "-c", "1",
            "-P", "prefork", "--without-mingle", "--without-gossip", "--without-heartbeat",
            "--loglevel", "INFO"]
    procs = []
    try:
        import os
        os.environ.update({"OJS_CELERY_BROKER": redis_url, "OJS_CELERY_QUEUE": queue})
        import celery_app

        celery_app.app.conf.broker_url = redis_url
        celery_app.app.conf.task_default_queue = queue
        for i in range(workers):
            procs += tc.start_workers([*argv, "-n", f"w{i}-{rec.run}@%h"], 1, env, tc.log_prefix(f"celery{i}", rec.run))
        fn = getattr(celery_app, task)
        for job in scenario["jobs"]:
            if "raw_layer" in scenario:
                # A header no producer checked.
                fn.apply_async((job["id"],), task_id=job["id"], queue=queue,
                               headers={POLICY_KEY: scenario["raw_layer"]})
                continue
            carried = job.get("carried") or {}  # a state / counter a producer put on the job itself
            extra = {"headers": {STATE_KEY: carried["state"]}, "retries": carried["counter"]} if carried else {}
            fn.apply_async((job["id"],), task_id=job["id"], queue=queue, ojs_retry_policy=scenario["policy"], **extra)
        ids = rec.collect([j["id"] for j in scenario["jobs"]])
    finally:
        tc.stop_workers(procs)
    jobs = rec.finished(ids, pending(rec.client, queue, ids))
    return {"queue": QUEUE, "precision_ms": PRECISION_MS, "jobs": jobs, "run": rec.run, "redis_queue": queue}


def pending(client: Any, queue: str, ids: list[str]) -> int:
    """Messages Celery's Redis transport still holds for the run: in the
    queue's lists (a stopping worker restores what it had prefetched, a
    retry waiting for its ETA included) or unacknowledged."""
    # The queue's list and its priority lists (kombu names them
    # `<queue>\x06\x16<n>`); not the integration's `<queue>:dead`.
    lists = [k for k in client.scan_iter(match=f"{queue}*")
             if k == queue.encode() or k.startswith(f"{queue}\x06\x16".encode())]
    queued = sum(int(client.llen(k)) for k in lists)
    unacked = sum(1 for v in client.hvals("unacked") if any(i.encode() in v for i in ids))
    return queued + unacked


if __name__ == "__main__":
    tc.cli(run)
