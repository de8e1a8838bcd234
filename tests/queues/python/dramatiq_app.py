"""The Dramatiq broker and actors of the tests (worker and enqueuing side)."""

from __future__ import annotations

import os
from typing import Any

import dramatiq
from dramatiq.brokers.redis import RedisBroker

from ojs_retry.integrations import DecisionEvent
from ojs_retry.integrations.dramatiq import OjsRetries, middleware_without_retries

import timeline_common as tc


def record(event: DecisionEvent) -> None:
    tc.Recorder.from_env().decided(event)


broker = RedisBroker(url=os.environ[tc.ENV_REDIS], middleware=middleware_without_retries(),
                     heartbeat_timeout=int(os.environ.get("OJS_DRAMATIQ_HEARTBEAT_MS", "60000")))
broker.add_middleware(OjsRetries(listeners=[record]))
dramatiq.set_broker(broker)
actors: dict[str, Any] = {}


def declare(queue: str) -> Any:
    """The scenario actor on ``queue`` (time limit from OJS_DRAMATIQ_TIME_LIMIT_MS)."""
    if queue not in actors:
        limit = int(os.environ.get("OJS_DRAMATIQ_TIME_LIMIT_MS", "600000"))

        def scenario(job_id: str) -> str:
            return tc.handle(job_id)

        actors[queue] = dramatiq.actor(scenario, actor_name=f"scenario_{queue}", queue_name=queue,
                                       time_limit=limit)
    return actors[queue]
