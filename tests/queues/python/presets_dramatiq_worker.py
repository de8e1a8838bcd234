"""Dramatiq for the presets-in-the-queue test:
``python presets_dramatiq_worker.py QUEUE native|engine``.

native: Dramatiq's default middleware, its own ``Retries`` reading
``max_retries`` / ``min_backoff`` / ``max_backoff`` from the message's
options and ``throws`` from the actor; Python's ``random.random`` is pinned,
per message and attempt, to the engine's keyed sample for that message id
and attempt (``PinnedJitter``), so Dramatiq's own ``compute_backoff``
(``int(b * uniform(1, 2))``, and above ``max_backoff`` a second draw) runs
with the sample the engine uses. engine: the default middleware without
``Retries``, plus ``OjsRetries``; the message carries the ``dramatiq`` preset.

Both record what Dramatiq is asked to store: every delayed enqueue (the retry,
with its delay in ms and the ETA the Redis broker stores), and the nack that
moves the message into ``<queue>.XQ``.
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
from dramatiq.middleware import Middleware, default_middleware

from ojs_retry.integrations.dramatiq import OjsRetries, middleware_without_retries

import presets_common as pc

_pinned = threading.local()
_random = random.random


def _pinned_random() -> float:
    key = getattr(_pinned, "key", None)
    return _random() if key is None else pc.keyed_u(key, _pinned.n)


class PinnedJitter(Middleware):  # type: ignore[misc]
    """Pins ``random.random`` to the keyed sample while a message is processed."""

    def before_process_message(self, broker: Any, message: Any) -> None:
        _pinned.key, _pinned.n = message.message_id, int(message.options.get("retries", 0)) + 1

    def after_process_message(self, broker: Any, message: Any, *, result: Any = None,
                              exception: Any = None) -> None:
        _pinned.key = None


class Record(Middleware):  # type: ignore[misc]
    def after_enqueue(self, broker: Any, message: Any, delay: int | None) -> None:
        if delay is not None:
            pc.recorder().push(message.message_id, kind="retry", attempt=int(message.options["retries"]),
                               delay_ms=delay, eta=message.options["eta"])

    def after_nack(self, broker: Any, message: Any) -> None:
        rec = pc.recorder()
        attempt = len([e for e in rec.events(message.message_id) if e["kind"] == "start"])
        rec.push(message.message_id, kind="terminal", attempt=attempt)


def make_broker(url: str, mode: str) -> RedisBroker:
    if mode == "native":
        middleware = [m() for m in default_middleware]
        broker = RedisBroker(url=url, middleware=middleware)
        # Before Retries in the after_* order (reversed): the pin is released after Retries drew.
        broker.add_middleware(PinnedJitter(), before=type(middleware[0]))
    else:
        broker = RedisBroker(url=url, middleware=middleware_without_retries())
        broker.add_middleware(OjsRetries(listeners=[pc.record_decision]))
    broker.add_middleware(Record())
    return broker


def declare(broker: RedisBroker, queue: str, mode: str) -> Any:
    def scenario(job_id: str) -> None:
        pc.fail(job_id)

    # ``throws`` is Retries' actor option: the engine reads the preset's instead.
    options = {"throws": (pc.Fatal,)} if mode == "native" else {}
    return dramatiq.actor(scenario, broker=broker, actor_name=f"presets_{queue}", queue_name=queue, **options)


def pin_random() -> None:
    """Dramatiq's draws take the engine's keyed sample (see _pinned_random)."""
    random.random = _pinned_random
    random._inst.random = _pinned_random  # type: ignore[attr-defined]  # what random.uniform calls


def serve(broker: Any, prefetch: int | None = None) -> None:
    """Runs one worker thread on ``broker`` until SIGTERM."""
    broker.emit_after("process_boot")
    worker = Worker(broker, worker_threads=1, worker_timeout=100)
    if prefetch is not None:
        worker.queue_prefetch = prefetch
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    worker.start()
    stop.wait()
    worker.stop()


def main() -> None:
    queue, mode = sys.argv[1], sys.argv[2]
    if mode == "native":
        pin_random()
    broker = make_broker(os.environ[pc.ENV_REDIS], mode)
    declare(broker, queue, mode)
    serve(broker)


if __name__ == "__main__":
    main()
