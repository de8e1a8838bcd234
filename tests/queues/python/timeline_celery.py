"""The Celery timeline runner (see timeline_common): two ``celery worker``
processes (prefork, concurrency 1) on the real Redis, or on the real
RabbitMQ (``--broker amqp://...``; queue name ``celery-rabbitmq``).

Precision: Celery holds a retried task in the worker until its ETA (kept to
the microsecond) and starts it from its timer: 50 ms covers the timer tick.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from typing import Any

from ojs_retry.integrations import POLICY_KEY, STATE_KEY

import amqp_common
import timeline_common as tc

QUEUE = "celery"
PRECISION_MS = 50
#: On RabbitMQ the worker holds a retry unacknowledged until its ETA, as on
#: Redis (measured: docs/integrations.md).
PRECISION_RABBITMQ_MS = 50


def run(redis_url: str, scenario: Mapping[str, Any], workers: int = 2, task: str = "scenario",
        broker: str | None = None, pool: str = "prefork") -> dict[str, Any]:
    """``broker``: an AMQP URL to run the workers on RabbitMQ (the timeline
    is still recorded in ``redis_url``); by default the Redis itself.
    ``pool``: Celery's execution pool (``-P``)."""
    rec = tc.Recorder.new(redis_url, scenario)
    queue = f"ojs-celery-{rec.run}"
    broker_url = broker or redis_url
    env = tc.child_env({**rec.env(), "OJS_CELERY_BROKER": broker_url, "OJS_CELERY_QUEUE": queue})
    argv = [sys.executable, "-m", "celery", "-A", "celery_app", "worker", "-Q", queue, "-c", "1",
            "-P", pool, "--without-mingle", "--without-gossip", "--without-heartbeat",
            "--loglevel", "INFO"]
    procs = []
    try:
        os.environ.update({"OJS_CELERY_BROKER": broker_url, "OJS_CELERY_QUEUE": queue})
        import celery_app

        celery_app.use_broker(broker_url, queue)
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
        marks_left = marks_kept([os.getpid(), *(p.pid for p in procs)])
    finally:
        tc.stop_workers(procs)
        dirs_left = marks_dirs_left(procs)
    if amqp_common.is_amqp(broker_url):
        left = amqp_common.held(broker_url, [queue])
        name, precision = f"{QUEUE}-rabbitmq", PRECISION_RABBITMQ_MS
    else:
        left, name, precision = pending(rec.client, queue, ids), QUEUE, PRECISION_MS
    jobs = rec.finished(ids, left)
    return {"queue": name, "precision_ms": precision, "jobs": jobs, "run": rec.run, "redis_queue": queue,
            "broker": broker_url, "marks_left": marks_left, "dirs_left": dirs_left}


def marks_dirs_left(procs: list[Any]) -> list[int]:
    """The workers that stopped warmly (exit status 0) yet left their marks
    directory (removed at ``worker_shutdown``); then removes every worker's,
    a killed main process's included (it leaves its own behind)."""
    from ojs_retry.integrations import _marks

    left = [p.pid for p in procs if p.returncode == 0 and os.path.isdir(_marks.directory("celery", p.pid))]
    for p in procs:
        _marks.remove(_marks.directory("celery", p.pid))
    return left


def marks_kept(pids: list[int], timeout_s: float = 10.0) -> list[str]:
    """The marks still in these processes' directories (the workers' main
    processes, and this one: where a worker's main process itself would
    leave its marks, being its parent) once every job ended, polled until
    there are none (a pool process's report may still be on its way when
    its listener recorded the end) or the deadline: a main process removes
    each mark when the report comes."""
    from ojs_retry.integrations import _marks

    deadline = time.monotonic() + timeout_s
    while True:
        left = [name for pid in pids if os.path.isdir(d := _marks.directory("celery", pid)) for name in os.listdir(d)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


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
