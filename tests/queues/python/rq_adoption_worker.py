"""An RQ worker of the adoption test: ``python rq_adoption_worker.py QUEUE native|adopted``.

The same app both ways (jobs enqueued with RQ's own ``Retry``, or none);
native runs ``rq.Worker``, adopted the one-line adoption ``OjsWorker`` in its
place. Both record what RQ is about to do with each failed job through
presets_rq_worker's ``record`` handler (RQ runs it after the integration's);
the adopted worker's integration also records its decisions (a listener).
"""

from __future__ import annotations

import os
import sys

import redis
from rq import Queue, Worker

from ojs_retry.integrations.rq import OjsRetry, OjsWorker

import presets_common as pc
from presets_rq_worker import record


def main() -> None:
    conn = redis.Redis.from_url(os.environ[pc.ENV_REDIS])
    queue = Queue(sys.argv[1], connection=conn)
    if sys.argv[2] == "adopted":
        worker: Worker = OjsWorker([queue], connection=conn, exception_handlers=[record],
                                   ojs_retry=OjsRetry(listeners=[pc.record_decision]))
    else:
        worker = Worker([queue], connection=conn, exception_handlers=[record])
    worker.work(with_scheduler=True, logging_level="INFO")


if __name__ == "__main__":
    main()
