"""Celery: the engine's retry path against Celery's own, same Redis, same run.

    python bench/queues/bench_celery.py --redis URL [--jobs N] [--rounds R]

Prints one JSON document:

* ``retry_path``: jobs per second for N jobs that each fail once and then
  succeed, one ``celery worker`` process per kind (prefork, concurrency 2),
  all running for the whole run, three kinds a round in rotating order
  (benchlib): natively (``autoretry_for``, ``max_retries=1``,
  ``default_retry_delay`` 1 ms), on the engine (an ``OjsTask``:
  ``max_attempts`` 2, constant 1 ms, no jitter; the decision, the §10 state
  in the retried message's headers, ``self.retry(countdown=0.001)``) and its
  floor (the same task with its transaction a no-op). The ratios are of the
  medians.
* ``enqueue``: per call, ``Task.apply_async`` alone, ``OjsTask.apply_async``
  with a job layer (validation, RET-16, plus the layer in the headers), the
  validation alone, and the ratios.

Worker side: ``celery -A bench_celery worker`` (the app below; broker from
``OJS_BENCH_REDIS``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from typing import Any

import benchlib as bl
from celery import Celery

from ojs_retry.integrations import validate_job_policy
from ojs_retry.integrations.celery import OjsTask

app = Celery("ojs_bench", broker=os.environ.get(bl.ENV_REDIS, "redis://127.0.0.1:6379/0"))
app.conf.update(task_ignore_result=True, broker_connection_retry_on_startup=True, worker_hijack_root_logger=False)
_client: Any = None


def _done(round_id: str) -> None:
    global _client
    if _client is None:
        _client = bl.client(app.conf.broker_url)
    bl.finished(_client, round_id)


def _fail_once(task: Any, round_id: str) -> int:
    if task.request.retries == 0:
        raise RuntimeError("once")
    _done(round_id)
    return 1


class Engine(OjsTask):
    ojs_retry_policy = bl.POLICY


class Floor(Engine):
    _ojs_transact = bl.reuse_first(Engine._ojs_transact)


native = app.task(bind=True, name="bench.native", autoretry_for=(RuntimeError,), max_retries=1,
                  default_retry_delay=0.001)(_fail_once)
engine = app.task(bind=True, base=Engine, name="bench.engine")(_fail_once)
floor = app.task(bind=True, base=Floor, name="bench.floor")(_fail_once)
TASKS = {"native": native, "engine": engine, "floor": floor}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", required=True)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    app.conf.broker_url = args.redis
    conn = bl.client(args.redis)
    tag = uuid.uuid4().hex[:8]
    names = {kind: f"bench-celery-{kind}-{tag}" for kind in TASKS}
    procs = [bl.start_worker([bl.python(), "-m", "celery", "-A", "bench_celery", "worker", "-Q", name, "-c", "2",
                              "-P", "prefork", "--without-mingle", "--without-gossip", "--without-heartbeat",
                              "-n", f"{name}@%h", "--loglevel", "WARNING"],
                             args.redis, bl.log_path(f"{name}.log"))
             for name in names.values()]
    try:
        def run_round(kind: str, jobs: int) -> float:
            round_id = uuid.uuid4().hex[:12]
            start = time.perf_counter()
            for _ in range(jobs):
                TASKS[kind].apply_async((round_id,), queue=names[kind])
            bl.wait_done(conn, round_id, jobs, procs)
            return jobs / (time.perf_counter() - start)

        for kind in TASKS:  # every worker up before the first timed round
            run_round(kind, 10)
        retry = bl.retry_path(args.rounds, run_round, args.jobs)
    finally:
        for p in procs:
            bl.stop_worker(p)
    queue = f"bench-celery-enqueue-{tag}"
    enqueue = bl.enqueue_cost(
        lambda i: native.apply_async(("x",), queue=queue),
        lambda i: engine.apply_async(("x",), queue=queue, ojs_retry_policy=bl.LAYER),
        lambda i: validate_job_policy(bl.LAYER, Engine.ojs_retry_policy),
        args.jobs,
    )
    for name in (*names.values(), queue):
        conn.delete(name)
    print(json.dumps({"queue": "celery", "retry_path": retry, "enqueue": enqueue}, indent=1))


if __name__ == "__main__":
    main()
