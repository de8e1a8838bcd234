"""A Dramatiq worker process for the tests: ``python dramatiq_worker.py QUEUE``.

A Redis broker with Dramatiq's default middleware minus Retries, plus the
OJS middleware; one worker thread; a 100 ms consumer poll so a due retry
starts promptly. Stops on SIGTERM.
"""

from __future__ import annotations

import signal
import sys
import threading

import dramatiq_app
from dramatiq import Worker


def main() -> None:
    broker = dramatiq_app.broker
    dramatiq_app.declare(sys.argv[1])
    # What the dramatiq CLI does in each process: TimeLimit starts its timer here.
    broker.emit_after("process_boot")
    worker = Worker(broker, worker_threads=1, worker_timeout=100)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    worker.start()
    stop.wait()
    worker.stop()


if __name__ == "__main__":
    main()
