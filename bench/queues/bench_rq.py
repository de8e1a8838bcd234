"""RQ: the engine's retry path against RQ's own, same Redis, same run.

    python bench/queues/bench_rq.py --redis URL [--jobs N] [--rounds R]

Prints one JSON document:

* ``retry_path``: jobs per second for N jobs that each fail once and then
  succeed, one ``SimpleWorker`` process per kind (RQ's forking ``Worker``
  would time fork() more than the retry), all running for the whole run,
  three kinds a round in rotating order (benchlib): natively
  ``Retry(max=1)``, on the engine (the integration's exception handler
  deciding with the ``rq`` preset ``{"max": 1}``, the job's §10 state and
  attempt counter saved in its meta) and its floor (the same handler with
  its transaction a no-op). All retry with no
  interval: RQ re-enqueues at once. A delay is whole seconds in RQ (a 1 ms
  OJS delay is rounded up to the next second, RET-11) and RQ's scheduler
  polls once a second, so a delayed retry would time the scheduler, not the
  retry path. The ratios are of the medians.
* ``enqueue``: per call, ``Queue.enqueue`` alone, ``OjsRetry.enqueue`` with a
  job layer (validation, RET-16, plus the layer in the job's meta), the
  validation alone, and the ratios.

Worker side: ``python bench_rq.py --worker QUEUE native|engine|floor``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from typing import Any

import benchlib as bl
from rq import Queue, Retry, SimpleWorker, get_current_job

from ojs_retry import RetryPolicy
from ojs_retry.integrations import rq as ojs_rq
from ojs_retry.integrations import validate_job_policy
from ojs_retry.integrations.rq import OjsRetry

PRESET = {"max": 1}
_conn: Any = None


def job(round_id: str, engine: bool) -> int:
    """Fails on its first run, then counts itself done."""
    current = get_current_job()
    first = "ojs_retry_state" not in current.meta if engine else current.retries_left == 1
    if first:
        raise RuntimeError("once")
    bl.finished(current.connection, round_id)
    return 1


def worker_main(queue_name: str, kind: str) -> None:
    conn = bl.client(os.environ[bl.ENV_REDIS])
    kwargs = OjsRetry(RetryPolicy.preset("rq", PRESET)).worker_kwargs() if kind != "native" else {}
    kwargs.pop("work_horse_killed_handler", None)  # SimpleWorker has no work horse
    with bl.floor_if(kind, ojs_rq):
        SimpleWorker([Queue(queue_name, connection=conn)], connection=conn, **kwargs).work(logging_level="WARNING")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis")
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--worker", nargs=2)
    args = ap.parse_args()
    if args.worker:
        worker_main(*args.worker)
        return
    conn = bl.client(args.redis)
    tag = uuid.uuid4().hex[:8]
    names = {kind: f"bench-rq-{kind}-{tag}" for kind in bl.KINDS}
    procs = {kind: bl.start_worker([bl.python(), __file__, "--worker", name, kind],
                                   args.redis, bl.log_path(f"bench-rq-{name}.log"))
             for kind, name in names.items()}
    ojs = OjsRetry(RetryPolicy.preset("rq", PRESET))
    try:
        def run_round(kind: str, jobs: int) -> float:
            round_id = uuid.uuid4().hex[:12]
            queue = Queue(names[kind], connection=conn)
            start = time.perf_counter()
            for _ in range(jobs):
                if kind == "native":
                    queue.enqueue("bench_rq.job", round_id, False, retry=Retry(max=1))
                else:
                    ojs.enqueue(queue, "bench_rq.job", round_id, True)
            bl.wait_done(conn, round_id, jobs, list(procs.values()))
            return jobs / (time.perf_counter() - start)

        for kind in bl.KINDS:  # every worker up before the first timed round
            run_round(kind, 10)
        retry = bl.retry_path(args.rounds, run_round, args.jobs)
    finally:
        for p in procs.values():
            bl.stop_worker(p)
    plain = OjsRetry(bl.POLICY)
    queue = Queue(f"bench-rq-enqueue-{tag}", connection=conn)
    enqueue = bl.enqueue_cost(
        lambda i: queue.enqueue("bench_rq.job", "x", False),
        lambda i: plain.enqueue(queue, "bench_rq.job", "x", False, ojs_retry_policy=bl.LAYER),
        lambda i: validate_job_policy(bl.LAYER, plain.policy),
        args.jobs,
    )
    queue.empty()
    for key in conn.scan_iter(f"rq:*{tag}*"):
        conn.delete(key)
    print(json.dumps({"queue": "rq", "retry_path": retry, "enqueue": enqueue}, indent=1))


if __name__ == "__main__":
    main()
