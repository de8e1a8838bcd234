"""The Dramatiq broker and actors of the tests (worker and enqueuing side)."""

from __future__ import annotations

import os
from typing import Any

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware import Middleware

from ojs_retry.integrations import DecisionEvent
from ojs_retry.integrations.dramatiq import OjsRetries, middleware_without_retries

import timeline_common as tc


def record(event: DecisionEvent) -> None:
    tc.Recorder.from_env().decided(event)


class RecordDelays(Middleware):
    """Records the delay of every enqueue (what the broker was asked), for the tests."""

    def before_enqueue(self, broker: Any, message: Any, delay: int | None) -> None:
        if tc.ENV_RUN in os.environ:
            tc.Recorder.from_env().enqueued(message.message_id, message.options.get("retries", 0), delay)


broker = RedisBroker(url=os.environ[tc.ENV_REDIS], middleware=middleware_without_retries(),
                     heartbeat_timeout=int(os.environ.get("OJS_DRAMATIQ_HEARTBEAT_MS", "60000")),
                     maintenance_chance=int(os.environ.get("OJS_DRAMATIQ_MAINTENANCE_CHANCE", "1000")))
broker.add_middleware(OjsRetries(listeners=tc.listeners(record)))
broker.add_middleware(RecordDelays())
dramatiq.set_broker(broker)
actors: dict[str, Any] = {}


def declare(queue: str) -> Any:
    """The scenario actor on ``queue`` (time limit from OJS_DRAMATIQ_TIME_LIMIT_MS;
    ``throws`` is ``timeline_common.Declined``)."""
    if queue not in actors:
        limit = int(os.environ.get("OJS_DRAMATIQ_TIME_LIMIT_MS", "600000"))

        def scenario(job_id: str) -> str:
            return tc.handle(job_id)

        actors[queue] = dramatiq.actor(scenario, actor_name=f"scenario_{queue}", queue_name=queue,
                                       time_limit=limit, throws=(tc.Declined,))
    return actors[queue]
