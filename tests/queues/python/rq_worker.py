"""An RQ worker process for the tests: ``python rq_worker.py QUEUE``.

Redis from OJS_TIMELINE_REDIS; the OJS integration's handlers on the
Worker; RQ's scheduler on (it starts the retries RQ scheduled).
"""

from __future__ import annotations

import os
import sys

import redis
from rq import Queue, Worker

from ojs_retry.integrations import DecisionEvent
from ojs_retry.integrations.rq import OjsRetry

import timeline_common as tc


def record(event: DecisionEvent) -> None:
    tc.Recorder.from_env().decided(event)


def main() -> None:
    conn = redis.Redis.from_url(os.environ[tc.ENV_REDIS])
    ojs = OjsRetry(listeners=tc.listeners(record))
    queue = Queue(sys.argv[1], connection=conn)
    interval = int(os.environ.get("OJS_RQ_MAINTENANCE_S", "600"))
    worker = Worker([queue], connection=conn, maintenance_interval=interval, **ojs.worker_kwargs())
    worker.work(with_scheduler=True, logging_level="INFO")


if __name__ == "__main__":
    main()
