"""The Dramatiq timeline runner (see timeline_common): two Dramatiq worker
processes (dramatiq_worker.py) on the real Redis, or on the real RabbitMQ
(``--broker amqp://...``; queue name ``dramatiq-rabbitmq``).

Precision: a retried message waits in the delay queue ``<queue>.DQ``; the
worker moves it back when its ETA passes and its consumer polls every
100 ms (worker_timeout=100): 200 ms.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

import amqp_common
import timeline_common as tc

QUEUE = "dramatiq"
PRECISION_MS = 200
#: On RabbitMQ a worker holds a retried message from `<queue>.DQ` until its
#: ETA and moves it back to the queue (measured: docs/integrations.md).
PRECISION_RABBITMQ_MS = 200


def run(redis_url: str, scenario: Mapping[str, Any], workers: int = 2,
        extra_env: Mapping[str, str] | None = None, broker: str | None = None) -> dict[str, Any]:
    """``broker``: an AMQP URL to run the workers on RabbitMQ (the timeline
    is still recorded in ``redis_url``); by default the Redis itself."""
    rec = tc.Recorder.new(redis_url, scenario)
    name = f"ojs-dramatiq-{rec.run}"
    broker_url = broker or redis_url
    extra = {**rec.env(), **(extra_env or {}), "OJS_DRAMATIQ_BROKER": broker_url}
    env = tc.child_env(extra)
    os.environ.update(extra)
    argv = [sys.executable, str(tc.HERE / "dramatiq_worker.py"), name]
    procs = tc.start_workers(argv, workers, env, tc.log_prefix("dramatiq", rec.run))
    try:
        import dramatiq_app
        from ojs_retry.integrations import validate_job_policy
        from ojs_retry.integrations._core import POLICY_KEY, STATE_KEY

        actor = dramatiq_app.declare(name, dramatiq_app.broker_for(broker_url))
        own = scenario.get("dramatiq_options")
        for job in scenario["jobs"]:
            if own is not None:
                # No OJS layer: Dramatiq's own Retries options on the message,
                # which the middleware reads through the dramatiq preset (the
                # scenario's policy is that preset, for the expected timeline).
                message = actor.message_with_options(args=(job["id"],), **own)
            else:
                message = actor.message_with_options(
                    args=(job["id"],), **{POLICY_KEY: validate_job_policy(scenario["policy"])})
            if "raw_layer" in scenario:
                # A producer on the plain queue API: a broker without the middleware.
                raw = message.copy(message_id=job["id"], options={POLICY_KEY: scenario["raw_layer"]})
                _plain_broker(broker_url).enqueue(raw)
                continue
            carried = job.get("carried") or {}  # a state / counter a producer put on the job itself
            if carried:
                message.options.update({STATE_KEY: carried["state"], "retries": carried["counter"]})
            actor.broker.enqueue(message.copy(message_id=job["id"]))
        ids = rec.collect([j["id"] for j in scenario["jobs"]])
    finally:
        tc.stop_workers(procs)
    if amqp_common.is_amqp(broker_url):
        left = amqp_common.held(broker_url, [name, f"{name}.DQ"])
        queue, precision = f"{QUEUE}-rabbitmq", PRECISION_RABBITMQ_MS
    else:
        left, queue, precision = pending(rec.client, name), QUEUE, PRECISION_MS
    jobs = rec.finished(ids, left)
    return {"queue": queue, "precision_ms": precision, "jobs": jobs, "run": rec.run, "redis_queue": name,
            "broker": broker_url}


def _plain_broker(url: str) -> Any:
    if amqp_common.is_amqp(url):
        from dramatiq.brokers.rabbitmq import RabbitmqBroker

        return RabbitmqBroker(url=url, middleware=[])
    from dramatiq.brokers.redis import RedisBroker

    return RedisBroker(url=url, middleware=[])


def pending(client: Any, name: str) -> int:
    """Messages Dramatiq's Redis broker still holds for the queue: one stays
    in `<queue>.msgs` (or its delay queue's) until it is acknowledged; a
    dead letter moves to `.XQ`."""
    return sum(int(client.hlen(f"dramatiq:{q}.msgs")) for q in (name, f"{name}.DQ"))


if __name__ == "__main__":
    tc.cli(run)
