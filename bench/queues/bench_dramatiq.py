"""Dramatiq: the engine's retry path against Dramatiq's own, same Redis, same run.

    python bench/queues/bench_dramatiq.py --redis URL [--jobs N] [--rounds R]

Prints one JSON document:

* ``retry_path``: jobs per second for N jobs that each fail once and then
  succeed, one Dramatiq worker process per kind (4 worker threads), all
  running for the whole run, three kinds a round in rotating order
  (benchlib): natively (``Retries`` with ``max_retries=1``, ``min_backoff``
  = ``max_backoff`` = 1 ms: Dramatiq's jittered backoff is then always 1 ms),
  on the engine (``OjsRetries`` in place of ``Retries``: ``max_attempts`` 2,
  constant 1 ms, no jitter; the run mark, one ``SET NX PX`` per attempt,
  and the end mark of the retry Dramatiq moved from ``.DQ``, one more per
  job; the decision, the §10 state in the message options) and its floor (the
  same middleware with its transaction a no-op). All retry through
  Dramatiq's delay queue. The ratios are of the medians.
* ``enqueue``: per call, ``actor.send`` alone, the integration's ``send``
  with a job layer (validation, RET-16, at ``send`` and again in the
  middleware's ``before_enqueue``, plus the layer in the message options),
  the validation alone, and the ratios.

Worker side: ``python bench_dramatiq.py --worker QUEUE native|engine|floor``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
import uuid
from typing import Any

import benchlib as bl
import dramatiq
from dramatiq import Worker
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware import CurrentMessage, default_middleware

from ojs_retry.integrations import dramatiq as ojs_dramatiq
from ojs_retry.integrations import validate_job_policy
from ojs_retry.integrations.dramatiq import OjsRetries, middleware_without_retries, send


def make_broker(url: str, engine: bool) -> RedisBroker:
    if engine:
        broker = RedisBroker(url=url, middleware=middleware_without_retries())
        broker.add_middleware(OjsRetries(bl.POLICY))
    else:
        broker = RedisBroker(url=url, middleware=[m() for m in default_middleware])
    broker.add_middleware(CurrentMessage())
    return broker


def declare(broker: RedisBroker, queue: str, engine: bool) -> Any:
    client = broker.client

    def job(round_id: str) -> int:
        if CurrentMessage.get_current_message().options.get("retries", 0) == 0:
            raise RuntimeError("once")
        bl.finished(client, round_id)
        return 1

    options = {} if engine else {"max_retries": 1, "min_backoff": 1, "max_backoff": 1}
    return dramatiq.actor(job, broker=broker, actor_name=f"bench_{queue}", queue_name=queue, **options)


def worker_main(queue: str, kind: str) -> None:
    engine = kind != "native"
    broker = make_broker(os.environ[bl.ENV_REDIS], engine)
    declare(broker, queue, engine)
    broker.emit_after("process_boot")
    worker = Worker(broker, worker_threads=4, worker_timeout=100)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with bl.floor_if(kind, ojs_dramatiq):
        worker.start()
        stop.wait()
        worker.stop()


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
    names = {kind: f"bench-dq-{kind}-{tag}" for kind in bl.KINDS}
    actors = {kind: declare(make_broker(args.redis, kind != "native"), name, kind != "native")
              for kind, name in names.items()}
    procs = [bl.start_worker([bl.python(), __file__, "--worker", name, kind], args.redis, bl.log_path(f"{name}.log"))
             for kind, name in names.items()]
    try:
        def run_round(kind: str, jobs: int) -> float:
            round_id = uuid.uuid4().hex[:12]
            start = time.perf_counter()
            for _ in range(jobs):
                actors[kind].send(round_id)
            bl.wait_done(conn, round_id, jobs, procs)
            return jobs / (time.perf_counter() - start)

        for kind in bl.KINDS:  # every worker up before the first timed round
            run_round(kind, 10)
        retry = bl.retry_path(args.rounds, run_round, args.jobs)
    finally:
        for p in procs:
            bl.stop_worker(p)
    queue = f"bench-dq-enqueue-{tag}"
    broker = make_broker(args.redis, True)
    actor = declare(broker, queue, True)
    middleware = next(m for m in broker.middleware if isinstance(m, OjsRetries))
    enqueue = bl.enqueue_cost(
        lambda i: actor.send("x"),
        lambda i: send(actor, "x", ojs_retry_policy=bl.LAYER),
        # What the middleware does per send: the actor's defaults are resolved
        # once (on the first send) and kept.
        lambda i: validate_job_policy(bl.LAYER, middleware._actor_defaults(broker, actor.actor_name)),
        args.jobs,
    )
    for key in conn.scan_iter(f"dramatiq:*{tag}*"):
        conn.delete(key)
    print(json.dumps({"queue": "dramatiq", "retry_path": retry, "enqueue": enqueue}, indent=1))


if __name__ == "__main__":
    main()
