"""Celery on the engine in one line (docs/integrations.md): run a worker with
``celery -A celery_tasks worker`` and call ``enqueue()``."""

from __future__ import annotations

import os

from celery import Celery  # type: ignore[import-untyped]

from ojs_retry.integrations.celery import JobError, OjsTask, install

app = Celery("shop", broker=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
# Every task on the engine; one without an OJS policy keeps its own Celery retry options.
install(app)


@app.task(name="shop.fetch_rates", autoretry_for=(ConnectionError,), retry_backoff=True,  # type: ignore[untyped-decorator]
          max_retries=5)
def fetch_rates(currency: str) -> str:
    return currency


# One option moves a task to an OJS policy.
@app.task(bind=True, name="shop.charge",  # type: ignore[untyped-decorator]
          ojs_retry_policy={"max_attempts": 5, "initial_interval": "PT1S", "on_exhaustion": "dead_letter"})
def charge(self: OjsTask, order_id: int) -> str:
    if order_id < 0:
        raise JobError("payment.card_stolen", code="DEAD_LETTER", message=f"order {order_id}")
    return "charged"


def enqueue(order_id: int) -> None:
    # Validated here (PolicyError) before anything reaches Redis.
    charge.apply_async((order_id,), ojs_retry_policy={"max_attempts": 3})
