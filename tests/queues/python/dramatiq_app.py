"""The Dramatiq brokers (Redis or RabbitMQ) and actors of the tests (worker and enqueuing side)."""

from __future__ import annotations

import os
from typing import Any

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware import Middleware

from ojs_retry.integrations import DecisionEvent
from ojs_retry.integrations.dramatiq import OjsRetries, middleware_without_retries

import timeline_common as tc

#: An AMQP URL: the workers' broker is RabbitMQ (the timeline stays in Redis).
ENV_BROKER = "OJS_DRAMATIQ_BROKER"
#: "redis": the middleware's run marks in the timeline's Redis (``marks=``),
#: on any broker; by default the middleware's own choice.
ENV_MARKS = "OJS_DRAMATIQ_MARKS"


def record(event: DecisionEvent) -> None:
    tc.Recorder.from_env().decided(event)


class RecordDelays(Middleware):
    """Records the delay of every enqueue (what the broker was asked), for the tests."""

    def before_enqueue(self, broker: Any, message: Any, delay: int | None) -> None:
        if tc.ENV_RUN in os.environ:
            tc.Recorder.from_env().enqueued(message.message_id, message.options.get("retries", 0), delay)


def _make_broker(url: str) -> Any:
    if url.startswith(("amqp://", "amqps://")):
        from dramatiq.brokers.rabbitmq import RabbitmqBroker

        made: Any = RabbitmqBroker(url=url, middleware=middleware_without_retries())
    else:
        made = RedisBroker(url=url, middleware=middleware_without_retries(),
                           heartbeat_timeout=int(os.environ.get("OJS_DRAMATIQ_HEARTBEAT_MS", "60000")),
                           maintenance_chance=int(os.environ.get("OJS_DRAMATIQ_MAINTENANCE_CHANCE", "1000")))
    marks = None
    if os.environ.get(ENV_MARKS) == "redis":
        from dramatiq.rate_limits.backends import RedisBackend

        marks = RedisBackend(url=os.environ[tc.ENV_REDIS])
    made.add_middleware(OjsRetries(listeners=tc.listeners(record), marks=marks))
    made.add_middleware(RecordDelays())
    return made


brokers: dict[str, Any] = {}
actors: dict[str, Any] = {}


def broker_for(url: str | None = None) -> Any:
    """The broker of ``url`` (one per URL in a process); by default
    OJS_DRAMATIQ_BROKER (an AMQP URL: RabbitMQ) or else the timeline's Redis."""
    url = url or os.environ.get(ENV_BROKER) or os.environ[tc.ENV_REDIS]
    if url not in brokers:
        brokers[url] = _make_broker(url)
        if len(brokers) == 1:
            dramatiq.set_broker(brokers[url])
    return brokers[url]


def declare(queue: str, broker: Any = None) -> Any:
    """The scenario actor on ``queue`` (time limit from OJS_DRAMATIQ_TIME_LIMIT_MS;
    ``throws`` is ``timeline_common.Declined``), on ``broker`` (default
    :func:`broker_for`)."""
    if queue not in actors:
        limit = int(os.environ.get("OJS_DRAMATIQ_TIME_LIMIT_MS", "600000"))

        def scenario(job_id: str) -> str:
            return tc.handle(job_id)

        actors[queue] = dramatiq.actor(scenario, actor_name=f"scenario_{queue}", queue_name=queue,
                                       broker=broker or broker_for(), time_limit=limit, throws=(tc.Declined,))
    return actors[queue]
