"""Dramatiq on an OJS policy (docs/integrations.md): ``dramatiq dramatiq_actors``."""

from __future__ import annotations

import os

import dramatiq
from dramatiq.brokers.redis import RedisBroker

from ojs_retry.integrations.dramatiq import JobError, OjsRetries, middleware_without_retries, send

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
broker = RedisBroker(url=REDIS_URL, middleware=middleware_without_retries())  # type: ignore[no-untyped-call]
broker.add_middleware(OjsRetries({"max_attempts": 5, "on_exhaustion": "dead_letter"}))
dramatiq.set_broker(broker)


@dramatiq.actor(ojs_retry_policy={"initial_interval": "PT2S"})
def charge(order_id: int) -> None:
    if order_id < 0:
        raise JobError("payment.card_stolen", code="DEAD_LETTER")


def enqueue(order_id: int) -> None:
    send(charge, order_id, ojs_retry_policy={"max_attempts": 3})  # PolicyError before Redis
