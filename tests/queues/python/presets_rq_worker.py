"""An RQ worker of the presets-in-the-queue test:
``python presets_rq_worker.py QUEUE native|engine``.

native: a plain ``Worker`` (jobs carry ``Retry(max=..., interval=...)``);
engine: the OJS integration's handlers, the job carrying the ``rq`` preset.
Either way the last exception handler records what RQ is about to do with
the job's retry fields (RQ runs the handlers before ``handle_job_failure``):
a retry in ``job.get_retry_interval()`` seconds while ``retries_left > 0``
(RQ's own rule and its own interval function), otherwise the end (the job
goes to the ``FailedJobRegistry``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import redis
from rq import Queue, Worker

from ojs_retry.integrations.rq import OjsRetry

import presets_common as pc


def record(job: Any, exc_type: Any, exc: Any, tb: Any) -> bool:
    rec = pc.recorder()
    attempt = len([e for e in rec.events(job.id) if e["kind"] == "start"])
    if job.should_retry:
        rec.push(job.id, kind="retry", attempt=attempt, delay_ms=job.get_retry_interval() * 1000,
                 interval_s=job.get_retry_interval())
    else:
        rec.push(job.id, kind="terminal", attempt=attempt)
    return True


def main() -> None:
    conn = redis.Redis.from_url(os.environ[pc.ENV_REDIS])
    queue = Queue(sys.argv[1], connection=conn)
    if sys.argv[2] == "engine":
        ojs = OjsRetry(listeners=[pc.record_decision])
        kwargs = ojs.worker_kwargs()
        kwargs["exception_handlers"] = [*kwargs["exception_handlers"], record]
    else:
        kwargs = {"exception_handlers": [record]}
    worker = Worker([queue], connection=conn, **kwargs)
    worker.work(with_scheduler=True, logging_level="INFO")


if __name__ == "__main__":
    main()
