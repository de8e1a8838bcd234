"""Dramatiq for the adoption test: ``python dramatiq_adoption_worker.py QUEUE native|adopted``.

The same app both ways: two actors declared with Dramatiq's own retry
options (``max_retries`` / ``min_backoff`` / ``max_backoff`` / ``throws``;
``retry_when``). native: Dramatiq's default middleware (its ``Retries``),
``random.random`` pinned to the engine's keyed sample as in
presets_dramatiq_worker; adopted: the broker built with
``middleware_with_ojs_retries()``, the one-line adoption. Both record
through presets_dramatiq_worker's ``Record`` (every delayed enqueue, the
nack into ``.XQ``).
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
from typing import Any

import dramatiq
from dramatiq import Worker
from dramatiq.brokers.redis import RedisBroker

from ojs_retry.integrations.dramatiq import middleware_with_ojs_retries

import presets_common as pc
import presets_dramatiq_worker as pdw

#: Retries' options of the plain actor (a message may set its own).
ACTOR_OPTIONS = {"max_retries": 3, "min_backoff": 100, "max_backoff": 1000}
#: The ``retry_when`` actor's: ``max_retries`` 0 is not consulted, as in Retries.
WHEN_OPTIONS = {"max_retries": 0, "min_backoff": 200, "max_backoff": 1000}
#: ``retry_when`` says no from the third failure on (retries counted from 0).
WHEN_RETRIES = 2


class FatalChild(pc.Fatal):
    """A subclass of the actor's ``throws``: Dramatiq matches it (isinstance)."""


def retry_when(retries: int, exception: BaseException) -> bool:
    return retries < WHEN_RETRIES


def scenario(job_id: str) -> None:
    if "child" in job_id:
        pc.recorder().push(job_id, kind="start")
        raise FatalChild(job_id)
    pc.fail(job_id)


def make_broker(url: str, mode: str) -> RedisBroker:
    if mode == "native":
        return pdw.make_broker(url, "native")
    broker = RedisBroker(url=url, middleware=middleware_with_ojs_retries(listeners=[pc.record_decision]))
    broker.add_middleware(pdw.Record())
    return broker


def declare(broker: RedisBroker, queue: str) -> tuple[Any, Any]:
    """The app's two actors (the same declarations in both modes)."""
    plain = dramatiq.actor(scenario, broker=broker, actor_name=f"adopt_{queue}", queue_name=queue,
                           throws=(pc.Fatal,), **ACTOR_OPTIONS)
    when = dramatiq.actor(scenario, broker=broker, actor_name=f"adopt_when_{queue}", queue_name=queue,
                          retry_when=retry_when, **WHEN_OPTIONS)
    return plain, when


def main() -> None:
    queue, mode = sys.argv[1], sys.argv[2]
    if mode == "native":
        random.random = pdw._pinned_random
        random._inst.random = pdw._pinned_random  # type: ignore[attr-defined]  # what random.uniform calls
    broker = make_broker(os.environ[pc.ENV_REDIS], mode)
    declare(broker, queue)
    broker.emit_after("process_boot")
    worker = Worker(broker, worker_threads=1, worker_timeout=100)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    worker.start()
    stop.wait()
    worker.stop()


if __name__ == "__main__":
    # Run as the module, so that FatalChild's type is dramatiq_adoption_worker.FatalChild.
    import dramatiq_adoption_worker

    dramatiq_adoption_worker.main()
