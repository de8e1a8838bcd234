"""The Celery app the Celery tests' worker processes run (``-A celery_app``).

Broker and queue from the environment (OJS_CELERY_BROKER: a Redis or an
AMQP URL; OJS_CELERY_QUEUE);
the scenario task's handler and listener are timeline_common's.
"""

from __future__ import annotations

import json
import os
from typing import Any

from celery import Celery

from ojs_retry.integrations import DecisionEvent
from ojs_retry.integrations.celery import OjsTask

import timeline_common as tc

app = Celery("ojs_queues_test", broker=os.environ.get("OJS_CELERY_BROKER", "redis://127.0.0.1:6379/0"))
app.conf.update(
    task_default_queue=os.environ.get("OJS_CELERY_QUEUE", "ojs-celery"),
    task_ignore_result=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
    task_acks_late=True,
)
if os.environ.get("OJS_CELERY_CONF"):  # settings of one test (JSON)
    app.conf.update(json.loads(os.environ["OJS_CELERY_CONF"]))
if os.environ.get("OJS_CELERY_VISIBILITY_S"):  # how soon the broker redelivers an unacknowledged task
    app.conf.broker_transport_options = {"visibility_timeout": float(os.environ["OJS_CELERY_VISIBILITY_S"]),
                                         "unacked_restore_throttle": 1}


def use_broker(url: str, queue: str) -> None:
    """Points this process's app (the producer side of a test) at ``url``:
    the app forgets its pools, as Celery does after a fork (a pool keeps the
    broker it was made for; kombu keeps each broker's pools, open, for the
    next time the app uses that broker)."""
    app._pool = None
    app.amqp._producer_pool = None
    app.conf.update(broker_url=url, task_default_queue=queue)


def record(event: DecisionEvent) -> None:
    tc.Recorder.from_env().decided(event)


class ScenarioTask(OjsTask):
    ojs_listeners = (*tc.listeners(record), tc.kill_after_deciding)


@app.task(bind=True, base=ScenarioTask, name="ojs.scenario")
def scenario(self: Any, job_id: str) -> str:
    return tc.handle(job_id)


@app.task(bind=True, base=ScenarioTask, name="ojs.scenario_soft_limit", soft_time_limit=0.5, time_limit=5)
def scenario_soft_limit(self: Any, job_id: str) -> str:
    return tc.handle(job_id)


@app.task(bind=True, base=ScenarioTask, name="ojs.scenario_hard_limit", time_limit=1)
def scenario_hard_limit(self: Any, job_id: str) -> str:
    return tc.handle(job_id)
