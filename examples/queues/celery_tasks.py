"""Celery on an OJS policy (docs/integrations.md): run a worker with
``celery -A celery_tasks worker`` and call ``enqueue()``."""

from __future__ import annotations

import os

from celery import Celery  # type: ignore[import-untyped]

from ojs_retry import RetryPolicy
from ojs_retry.integrations.celery import JobError, OjsTask

app = Celery("shop", broker=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))


class ShopTask(OjsTask):
    # Queue defaults; a preset is a policy like any other: RetryPolicy.preset("celery", ...).
    ojs_retry_policy = RetryPolicy({"max_attempts": 5, "initial_interval": "PT1S", "on_exhaustion": "dead_letter"})


@app.task(bind=True, base=ShopTask, name="shop.charge")  # type: ignore[untyped-decorator]
def charge(self: OjsTask, order_id: int) -> str:
    if order_id < 0:
        raise JobError("payment.card_stolen", code="DEAD_LETTER", message=f"order {order_id}")
    return "charged"


def enqueue(order_id: int) -> None:
    # Validated here (PolicyError) before anything reaches Redis.
    charge.apply_async((order_id,), ojs_retry_policy={"max_attempts": 3})
