"""A Dramatiq worker process for the tests: ``python dramatiq_worker.py QUEUE``.

A Redis or RabbitMQ broker (dramatiq_app.broker_for) with Dramatiq's
default middleware minus Retries, plus the OJS middleware; one worker
thread, one message prefetched; a 100 ms consumer poll so a due retry
starts promptly. Stops on SIGTERM.
"""

from __future__ import annotations

import os
import sys

import dramatiq_app
from presets_dramatiq_worker import serve


def main() -> None:
    broker = dramatiq_app.broker_for()
    dramatiq_app.declare(sys.argv[1], broker)
    # One message prefetched per thread, what the environment variable
    # dramatiq_queue_prefetch=1 sets (docs/integrations.md: on RabbitMQ a
    # redelivered message is a lost attempt; a message prefetched but not
    # started would be counted as one); OJS_DRAMATIQ_PREFETCH for the test
    # that pins that. serve emits process_boot, what the dramatiq CLI does
    # in each process (TimeLimit starts its timer there).
    serve(broker, prefetch=int(os.environ.get("OJS_DRAMATIQ_PREFETCH", "1")))

if __name__ == "__main__":
    main()
