"""RQ on an OJS policy (docs/integrations.md)."""

from __future__ import annotations

import os

from redis import Redis
from rq import Queue, Worker

from ojs_retry.integrations.rq import JobError, OjsRetry

ojs = OjsRetry({"max_attempts": 5, "initial_interval": "PT2S", "on_exhaustion": "dead_letter"})


def charge(order_id: int) -> str:
    if order_id < 0:
        raise JobError("payment.card_stolen", code="DEAD_LETTER")
    return "charged"


def main() -> None:
    conn = Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    queue = Queue("shop", connection=conn)
    ojs.enqueue(queue, charge, 42, ojs_retry_policy={"max_attempts": 3})  # PolicyError before Redis
    Worker([queue], connection=conn, **ojs.worker_kwargs()).work(with_scheduler=True, burst=True)
