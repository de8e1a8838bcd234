"""A second delivery of a Dramatiq message whose attempt already ended, on
the real brokers.

Dramatiq delivers a message twice when the worker that moved a delayed
retry from ``<queue>.DQ`` to the queue dies before its acknowledgement of
the ``.DQ`` message reached the broker: the broker gives that message
again, and another worker moves it again (ci, 2026-11-28: a job
dead-lettered at its last attempt then ran a third time on RabbitMQ). The
race itself cannot be timed from outside, so the test sends that copy
itself, through ``.DQ`` as Dramatiq does: the same message id, ``retries``
and layer, once the first delivery has ended. With run marks (a Redis
broker's own, or ``marks=`` on RabbitMQ) the attempt's end mark makes the
copy acknowledged without running; on RabbitMQ without marks nothing tells
the copy apart, and it runs again as the same attempt, as with Dramatiq's
own ``Retries`` (pinned).
"""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any

import pytest
import redis

import amqp_common
import dramatiq_app
import timeline_common as tc
import timeline_dramatiq
from ojs_retry.integrations import validate_job_policy
from ojs_retry.integrations._core import POLICY_KEY

POLICY = {"max_attempts": 2, "initial_interval": "PT0.1S", "non_retryable_errors": ["validation.*"],
          "on_exhaustion": "dead_letter"}
FIRST = ("dead", "retried", "done")


def _broker_url(case: str, redis_url: str) -> str:
    if case == "dramatiq":
        return redis_url
    url = os.environ.get("RABBITMQ_URL")
    if not url:
        pytest.fail("RABBITMQ_URL is not set: run the queue tests through scripts/test-queues")
    return url


def _dead_letter_ids(broker_url: str, redis_url: str, name: str) -> list[str]:
    """The job id of every dead-letter record the run's queue received."""
    if amqp_common.is_amqp(broker_url):
        return [record["job_id"] for _, record in amqp_common.take(broker_url, f"{name}.XQ")]
    import json

    from ojs_retry.integrations.dramatiq import dead_letter_key

    client = redis.Redis.from_url(redis_url)
    return [json.loads(raw)["job_id"] for raw in client.lrange(dead_letter_key(name), 0, -1)]


def _wait_for_moves(rec: tc.Recorder, counts: dict[str, int], timeout_s: float = 60.0) -> None:
    """Waits until each job was enqueued ``counts[job]`` times (a move from
    ``.DQ`` is an enqueue, recorded by the worker's RecordDelays)."""
    tc.wait_until(lambda: all(len(rec.enqueues(j)) >= n for j, n in counts.items()), timeout_s,
                  lambda: f"not moved from .DQ: {[rec.enqueues(j) for j in counts]}")


def _run_with_copies(case: str, redis_url: str) -> tuple[tc.Recorder, dict[str, str], list[str]]:
    """One worker (one thread, one message prefetched: messages run in
    order). ``dead`` fails with a non-retryable error, ``retried`` is
    retried once, ``done`` succeeds; once they ended, a copy of each one's
    first message is sent, each through ``.DQ`` (a delay of 1 ms), as the
    first ones were; once each copy was moved to the queue, ``last`` is
    enqueued there: when ``last`` has ended, every copy was taken and
    acknowledged, run or not."""
    broker_url = _broker_url(case, redis_url)
    tag = uuid.uuid4().hex[:6]
    ids = {n: f"{case}-{n}-{tag}" for n in (*FIRST, "last")}
    scenario = {"policy": POLICY, "jobs": [
        {"id": ids["dead"], "outcomes": "always", "always": {"type": "validation.bad_input"}},
        {"id": ids["retried"], "outcomes": [{"type": "external.timeout"}]},
        {"id": ids["done"], "outcomes": []},
        {"id": ids["last"], "outcomes": []},
    ]}
    rec = tc.Recorder.new(redis_url, scenario)
    name = f"ojs-dramatiq-{rec.run}"
    os.environ.update(rec.env())
    actor = dramatiq_app.declare(name, dramatiq_app.broker_for(broker_url))
    layer = {POLICY_KEY: validate_job_policy(POLICY)}
    first: dict[str, Any] = {n: actor.message_with_options(args=(ids[n],), **layer).copy(message_id=ids[n])
                             for n in ids}
    child = {**rec.env(), dramatiq_app.ENV_BROKER: broker_url}
    if case.endswith("-marks"):
        child[dramatiq_app.ENV_MARKS] = "redis"
    argv = [sys.executable, str(tc.HERE / "dramatiq_worker.py"), name]
    for n in FIRST:
        actor.broker.enqueue(first[n], delay=1)
    procs = tc.start_workers(argv, 1, tc.child_env(child), tc.log_prefix("dramatiq-copies", rec.run))
    try:
        rec.collect([ids[n] for n in FIRST])
        moved = {ids[n]: len(rec.enqueues(ids[n])) + 2 for n in FIRST}  # sent, then moved
        for n in FIRST:
            actor.broker.enqueue(first[n], delay=1)
        _wait_for_moves(rec, moved)
        actor.broker.enqueue(first["last"])
        rec.collect([ids["last"]])
    finally:
        tc.stop_workers(procs)
    if amqp_common.is_amqp(broker_url):
        left = amqp_common.held(broker_url, [name, f"{name}.DQ"])
    else:
        left = timeline_dramatiq.pending(rec.client, name)
    rec.finished(list(ids.values()), left)
    return rec, ids, _dead_letter_ids(broker_url, redis_url, name)


def _decisions(rec: tc.Recorder, job_id: str) -> list[tuple[int, str]]:
    return [(e["attempt"], e["action"]) for e in rec.events(job_id) if e["kind"] == "decision"]


@pytest.mark.parametrize("case", ["dramatiq", "dramatiq-rabbitmq-marks"])
def test_dramatiq_a_copy_of_an_ended_attempt_is_not_run(case: str, redis_url: str) -> None:
    """With run marks: each copy is acknowledged without running and
    without a second decision or dead-letter record."""
    rec, ids, dead = _run_with_copies(case, redis_url)
    assert {n: rec.starts(ids[n]) for n in ids} == {"dead": 1, "retried": 2, "done": 1, "last": 1}
    assert _decisions(rec, ids["dead"]) == [(1, "dead_letter")]
    assert _decisions(rec, ids["retried"]) == [(1, "retry")]
    assert dead == [ids["dead"]]


def test_dramatiq_rabbitmq_without_marks_runs_a_copy_again(redis_url: str) -> None:
    """Pins RabbitMQ without ``marks=``: the copy is a first delivery (not
    ``redelivered``), which nothing tells apart from the original, so it
    runs again as the same attempt and is decided again
    (docs/integrations.md: pass ``marks=`` for exact counting)."""
    rec, ids, dead = _run_with_copies("dramatiq-rabbitmq", redis_url)
    assert {n: rec.starts(ids[n]) for n in ids} == {"dead": 2, "retried": 3, "done": 2, "last": 1}
    assert _decisions(rec, ids["dead"]) == [(1, "dead_letter"), (1, "dead_letter")]
    assert _decisions(rec, ids["retried"]) == [(1, "retry")]  # its copy's run is its third: it succeeds
    assert dead == [ids["dead"], ids["dead"]]
