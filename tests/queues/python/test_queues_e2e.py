"""Celery, RQ and Dramatiq end to end: real worker processes (two per queue)
on the real Redis, the scripted handler of timeline_common, and the engine's
decisions as the expected outcome (``expected_timelines``), never the
integration's own output.

Celery and Dramatiq also run on the real RabbitMQ (cases ``celery-rabbitmq``,
``dramatiq-rabbitmq``): the codes, rules and dead letters, the timeouts, a
refused layer and the killed-worker cases, with the same assertions; their
dead letters are read from the broker's own place (a durable queue).
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import pytest
import redis

import amqp_common
import timeline_celery
import timeline_common as tc
import timeline_dramatiq
import timeline_rq
from ojs_retry import PolicyError
from ojs_retry.integrations import HISTORY_LIMIT

QUEUES = ["celery", "rq", "dramatiq"]
#: The cases that also run on RabbitMQ (Celery's and Dramatiq's default broker).
RABBITMQ = ["celery-rabbitmq", "dramatiq-rabbitmq"]
POLICY = {
    "max_attempts": 3,
    "initial_interval": "PT0.1S",
    "max_interval": "PT0.5S",
    "non_retryable_errors": ["validation.*"],
    "on_exhaustion": "dead_letter",
}


def _rabbitmq_url() -> str:
    url = os.environ.get("RABBITMQ_URL")
    if not url:
        pytest.fail("RABBITMQ_URL is not set: run the queue tests through scripts/test-queues")
    return url


def _runner(case: str) -> Any:
    """The runner of a case: ``celery``, ``rq``, ``dramatiq`` on Redis, or
    ``<queue>-rabbitmq``."""
    queue = case.removesuffix("-rabbitmq")
    return {"celery": timeline_celery, "rq": timeline_rq, "dramatiq": timeline_dramatiq}[queue]


def _run(case: str, redis_url: str, scenario: dict[str, Any], workers: int = 2, **kw: Any) -> dict[str, Any]:
    if case.endswith("-rabbitmq"):
        kw["broker"] = _rabbitmq_url()
    return _runner(case).run(redis_url, scenario, workers, **kw)


def _ids(queue: str, *names: str) -> dict[str, str]:
    tag = uuid.uuid4().hex[:6]
    return {n: f"{queue}-{n}-{tag}" for n in names}


def _dead_letters_amqp(queue: str, doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The durable queue on RabbitMQ: one persistent JSON message per record
    (Dramatiq's ``.XQ`` holds the records in place of the messages)."""
    from dramatiq.brokers.rabbitmq import DEAD_MESSAGE_TTL

    url, name = doc["broker"], doc["redis_queue"]
    place, arguments = (f"{name}:dead", None) if queue == "celery" else (f"{name}.XQ", {"x-message-ttl": DEAD_MESSAGE_TTL})
    assert amqp_common.durable(url, place, arguments)
    out: dict[str, dict[str, Any]] = {}
    for props, record in amqp_common.take(url, place):
        assert isinstance(record, dict), (props, record)
        assert props["delivery_mode"] == 2 and props["message_id"] == record["job_id"]
        assert props["headers"] == {"ojs_dead_letter": 1, "ojs_job_id": record["job_id"], "ojs_queue": name}
        assert record["job_id"] not in out, f"{record['job_id']} dead-lettered twice"
        out[record["job_id"]] = record
    return out


def _dead_letters(case: str, redis_url: str, doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The dead place of the queue, read with the queue's own layout: job id -> record."""
    queue = case.removesuffix("-rabbitmq")
    if case.endswith("-rabbitmq"):
        return _dead_letters_amqp(queue, doc)
    client = redis.Redis.from_url(redis_url)
    name = doc["redis_queue"]
    if queue == "celery":
        records = [json.loads(raw) for raw in client.lrange(f"{name}:dead", 0, -1)]
        ids = [r["job_id"] for r in records]
        assert len(ids) == len(set(ids)), f"dead-lettered twice: {ids}"
        return {r["job_id"]: r for r in records}
    if queue == "rq":
        from rq import Queue
        from rq.job import Job
        from rq.registry import FailedJobRegistry

        registry = FailedJobRegistry(queue=Queue(name, connection=client))
        jobs = [Job.fetch(j, connection=client) for j in registry.get_job_ids()]
        return {j.id: j.meta["ojs_dead_letter"] for j in jobs}
    from ojs_retry.integrations.dramatiq import dead_letter_key

    records = [json.loads(raw) for raw in client.lrange(dead_letter_key(name), 0, -1)]
    from dramatiq.message import Message

    # The messages themselves are in Dramatiq's own dead-letter queue.
    xq = {Message.decode(raw).message_id for raw in client.hgetall(f"dramatiq:{name}.XQ.msgs").values()}
    assert xq == {r["job_id"] for r in records}
    return {r["job_id"]: r for r in records}


def _assert_timelines(doc: dict[str, Any], scenario: dict[str, Any], redis_url: str) -> None:
    keep = ("attempt", "action", "reason", "delay_ms")
    got = {j: [{k: r[k] for k in keep} for r in rows] for j, rows in doc["jobs"].items()}
    assert got == tc.expected_timelines(scenario)
    rec = tc.Recorder(redis_url, doc["run"])
    for job, rows in doc["jobs"].items():
        # Exactly as many starts as entries: nothing ran past the last decision.
        assert rec.starts(job) == len(rows), (job, rec.events(job))


@pytest.mark.parametrize("queue", QUEUES + RABBITMQ)
def test_codes_rules_and_dead_letters(queue: str, redis_url: str) -> None:
    ids = _ids(queue, "retry", "discard", "dead", "fail", "nonretry", "always")
    scenario = {"policy": POLICY, "jobs": [
        {"id": ids["retry"], "outcomes": [{"type": "external.blip", "code": "RETRY"}]},
        {"id": ids["discard"], "outcomes": [{"type": "external.blip", "code": "DISCARD"}]},
        {"id": ids["dead"], "outcomes": [{"type": "payment.card_stolen", "code": "DEAD_LETTER"}]},
        {"id": ids["fail"], "outcomes": [{"type": "external.blip", "code": "FAIL"}]},
        {"id": ids["nonretry"], "outcomes": [{"type": "validation.bad_input"}]},
        {"id": ids["always"], "outcomes": "always", "always": {"type": "external.timeout"}},
    ]}
    doc = _run(queue, redis_url, scenario)
    _assert_timelines(doc, scenario, redis_url)
    dead = _dead_letters(queue, redis_url, doc)
    assert set(dead) == {ids["dead"], ids["nonretry"], ids["always"]}
    always = dead[ids["always"]]
    assert always["decision"]["action"] == "dead_letter" and always["decision"]["reason"] == "exhausted"
    assert always["retry_state"]["attempt"] == 3
    assert [e["attempt"] for e in always["retry_state"]["errors"]] == [1, 2, 3]
    assert {e["type"] for e in always["retry_state"]["errors"]} == {"external.timeout"}
    assert dead[ids["dead"]]["decision"]["reason"] == "handler_code"
    assert dead[ids["nonretry"]]["decision"]["matched_pattern"] == "validation.*"


@pytest.mark.parametrize("queue", QUEUES)
def test_dead_letter_keeps_the_newest_errors(queue: str, redis_url: str) -> None:
    ids = _ids(queue, "long")
    policy = {"max_attempts": 12, "initial_interval": "PT0.01S", "max_interval": "PT0.02S",
              "on_exhaustion": "dead_letter"}
    scenario = {"policy": policy, "jobs": [
        {"id": ids["long"], "outcomes": "always", "always": {"type": "external.timeout"}}]}
    doc = _run(queue, redis_url, scenario)
    _assert_timelines(doc, scenario, redis_url)
    errors = _dead_letters(queue, redis_url, doc)[ids["long"]]["retry_state"]["errors"]
    assert [e["attempt"] for e in errors] == list(range(12 - HISTORY_LIMIT + 1, 13))


@pytest.mark.parametrize("queue", QUEUES + RABBITMQ)
def test_timeout_counts_the_attempt(queue: str, redis_url: str) -> None:
    ids = _ids(queue, "slow", "always_slow")
    policy = {**POLICY, "max_attempts": 2}
    scenario: dict[str, Any] = {"policy": policy, "jobs": [
        {"id": ids["slow"], "outcomes": [{"timeout": True}]},
        {"id": ids["always_slow"], "outcomes": "always", "always": {"timeout": True}},
    ]}
    if queue.startswith("celery"):
        doc = _run(queue, redis_url, scenario, task="scenario_soft_limit")
    elif queue == "rq":
        doc = _run(queue, redis_url, {**scenario, "job_timeout_s": 1})
    else:
        doc = _run(queue, redis_url, scenario, extra_env={"OJS_DRAMATIQ_TIME_LIMIT_MS": "500"})
    _assert_timelines(doc, scenario, redis_url)
    failed = [r for rows in doc["jobs"].values() for r in rows if r["action"] != "succeeded"]
    assert failed and all(r["timed_out"] for r in failed)
    assert set(_dead_letters(queue, redis_url, doc)) == {ids["always_slow"]}


@pytest.mark.parametrize("queue", QUEUES)
def test_failures_the_engine_cannot_store_as_they_are_are_recorded(queue: str, redis_url: str) -> None:
    """A 70 000-character message and a lone surrogate: decided as any
    failure (the timelines are decide's), recorded truncated / replaced."""
    ids = _ids(queue, "long", "surrogate")
    policy = {**POLICY, "max_attempts": 2}
    scenario = {"policy": policy, "jobs": [
        {"id": ids["long"], "outcomes": "always", "always": {"type": "upstream.html", "long_message": 70_000}},
        {"id": ids["surrogate"], "outcomes": "always", "always": {"type": "io.decode", "surrogate": True}},
    ]}
    doc = _run(queue, redis_url, scenario)
    _assert_timelines(doc, scenario, redis_url)
    dead = _dead_letters(queue, redis_url, doc)
    long = [e["message"] for e in dead[ids["long"]]["retry_state"]["errors"]]
    assert len(long) == 2 and all(len(m.encode()) <= 65_536 and m.endswith("bytes truncated]") for m in long)
    assert [n["kind"] for n in dead[ids["long"]]["notes"]] == ["message_truncated"]
    assert {e["message"] for e in dead[ids["surrogate"]]["retry_state"]["errors"]} == {"bad \ufffd byte"}


@pytest.mark.parametrize("queue", QUEUES)
def test_eleven_failures_with_maximal_messages_stay_readable(queue: str, redis_url: str) -> None:
    """Eleven 65 536-character messages of control characters (each escapes
    to six bytes): the state is kept within its budget, so every failure is
    read back and decided as decide does, and the job is dead-lettered."""
    ids = _ids(queue, "eleven")
    policy = {"max_attempts": 11, "initial_interval": "PT0.01S", "max_interval": "PT0.02S",
              "on_exhaustion": "dead_letter"}
    scenario = {"policy": policy, "jobs": [
        {"id": ids["eleven"], "outcomes": "always", "always": {"type": "upstream.noise", "control_message": 65_536}}]}
    doc = _run(queue, redis_url, scenario)
    _assert_timelines(doc, scenario, redis_url)
    record = _dead_letters(queue, redis_url, doc)[ids["eleven"]]
    assert [e["attempt"] for e in record["retry_state"]["errors"]] == list(range(2, 12))
    assert "state_budget" in {n["kind"] for n in record["notes"]}
    assert len(json.dumps(record["retry_state"]).encode()) <= 1 << 20


@pytest.mark.parametrize("queue", QUEUES)
def test_an_unreadable_or_behind_state_is_rebased(queue: str, redis_url: str) -> None:
    """A producer put a state on the job itself: unreadable text, or a state
    of attempt 1 while the queue's counter says two attempts ran. The first
    failure (terminal: max_attempts 1 and 3) is decided on the queue's
    counter, the state rebased with a note."""
    from ojs_retry.integrations import Failure, transact

    ids = _ids(queue, "unreadable", "behind")
    behind = transact(POLICY, None, None, 1, Failure("external.blip"), key=ids["behind"], queue="q", now=0)
    scenario = {"policy": {**POLICY, "max_attempts": 3}, "jobs": [
        {"id": ids["unreadable"], "outcomes": "always", "always": {"type": "external.blip"},
         "carried": {"state": "{not json", "counter": 2}},
        {"id": ids["behind"], "outcomes": "always", "always": {"type": "external.blip"},
         "carried": {"state": behind.state_json, "counter": 2}},
    ]}
    doc = _run(queue, redis_url, scenario)
    got = {j: [(r["attempt"], r["action"], r["reason"]) for r in rows] for j, rows in doc["jobs"].items()}
    assert got == {ids["unreadable"]: [(3, "dead_letter", "exhausted")], ids["behind"]: [(3, "dead_letter", "exhausted")]}
    dead = _dead_letters(queue, redis_url, doc)
    assert "state_unreadable" in {n["kind"] for n in dead[ids["unreadable"]]["notes"]}
    assert "state_rebased" in {n["kind"] for n in dead[ids["behind"]]["notes"]}
    assert [e["attempt"] for e in dead[ids["behind"]]["retry_state"]["errors"]] == [1, 3]


@pytest.mark.parametrize("queue", QUEUES + RABBITMQ)
def test_a_layer_the_workers_refuse_is_dead_lettered_and_the_worker_goes_on(queue: str, redis_url: str) -> None:
    """A job enqueued with the plain queue API carries a layer the workers'
    defaults refuse (PT10M over the default PT5M cap): dead-lettered with the
    fault on its first failure; the one worker then runs the next job."""
    ids = _ids(queue, "refused", "next")
    scenario = {"policy": POLICY, "raw_layer": '{"initial_interval": "PT10M"}', "jobs": [
        {"id": ids["refused"], "outcomes": "always", "always": {"type": "external.timeout"}},
        {"id": ids["next"], "outcomes": []},
    ]}
    doc = _run(queue, redis_url, scenario, 1)
    got = {j: [(r["attempt"], r["action"], r["reason"]) for r in rows] for j, rows in doc["jobs"].items()}
    assert got == {ids["refused"]: [(1, "dead_letter", "policy_invalid")], ids["next"]: [(1, "succeeded", None)]}
    record = _dead_letters(queue, redis_url, doc)[ids["refused"]]
    assert record["reason"] == "policy_invalid" and record["retry_state"]["terminal"] == "dead_letter"
    assert record["notes"][0]["kind"] == "policy_refused" and "initial_interval" in record["notes"][0]["message"]


def test_rq_killed_work_horse_counts_the_attempt(redis_url: str) -> None:
    ids = _ids("rq", "killed", "always_killed")
    scenario = {"policy": {**POLICY, "max_attempts": 2}, "jobs": [
        {"id": ids["killed"], "outcomes": [{"kill": True}]},
        {"id": ids["always_killed"], "outcomes": "always", "always": {"kill": True}},
    ]}
    doc = _run("rq", redis_url, scenario)
    _assert_timelines(doc, scenario, redis_url)
    assert set(_dead_letters("rq", redis_url, doc)) == {ids["always_killed"]}


BAD = {"max_attempts": -1}


def _assert_refused(call: Any) -> None:
    with pytest.raises(PolicyError) as info:
        call()
    assert info.value.code == "validation.retry_policy_invalid"
    assert info.value.field == "max_attempts"


def test_celery_refuses_a_bad_policy_before_redis(redis_url: str) -> None:
    import celery_app

    queue = f"ojs-refuse-{uuid.uuid4().hex[:6]}"
    celery_app.use_broker(redis_url, queue)
    _assert_refused(lambda: celery_app.scenario.apply_async(("x",), queue=queue, ojs_retry_policy=BAD))
    assert redis.Redis.from_url(redis_url).llen(queue) == 0


def test_rq_refuses_a_bad_policy_before_redis(redis_url: str) -> None:
    from rq import Queue

    from ojs_retry.integrations.rq import OjsRetry

    client = redis.Redis.from_url(redis_url)
    queue = Queue(f"ojs-refuse-{uuid.uuid4().hex[:6]}", connection=client)
    job_id = f"refused-{uuid.uuid4().hex[:6]}"
    _assert_refused(lambda: OjsRetry().enqueue(queue, tc.handle, "x", job_id=job_id, ojs_retry_policy=BAD))
    assert len(queue) == 0 and not client.exists(f"rq:job:{job_id}")


def test_dramatiq_refuses_a_bad_policy_before_redis(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tc.ENV_REDIS, redis_url)
    import dramatiq_app

    from ojs_retry.integrations.dramatiq import PolicyRefused, send

    name = f"ojs-refuse-{uuid.uuid4().hex[:6]}"
    actor = dramatiq_app.declare(name)
    _assert_refused(lambda: send(actor, "x", ojs_retry_policy=BAD))
    with pytest.raises(PolicyRefused) as info:
        actor.send_with_options(args=("x",), ojs_retry_policy=BAD)
    assert info.value.code == "validation.retry_policy_invalid"
    assert redis.Redis.from_url(redis_url).llen(f"dramatiq:{name}") == 0


@pytest.mark.parametrize("queue", QUEUES)
def test_a_listener_that_raises_changes_nothing(queue: str, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker's first listener raises: each decision is still carried
    out (the timelines are decide's, the dead letters where they belong) and
    the next listener is still told."""
    monkeypatch.setenv(tc.ENV_RAISING_LISTENER, "1")
    ids = _ids(queue, "retry", "dead", "always")
    scenario = {"policy": POLICY, "jobs": [
        {"id": ids["retry"], "outcomes": [{"type": "external.blip"}]},
        {"id": ids["dead"], "outcomes": [{"type": "payment.card_stolen", "code": "DEAD_LETTER"}]},
        {"id": ids["always"], "outcomes": "always", "always": {"type": "external.timeout"}},
    ]}
    doc = _run(queue, redis_url, scenario)
    _assert_timelines(doc, scenario, redis_url)
    assert set(_dead_letters(queue, redis_url, doc)) == {ids["dead"], ids["always"]}


@pytest.mark.parametrize("queue", ["celery", "celery-rabbitmq"])
def test_celery_hard_time_limit_counts_the_attempt(queue: str, redis_url: str) -> None:
    """A hard time limit kills the pool process before the task reports:
    Celery's request hook in the worker's main process decides it as a
    timed-out attempt (Celery would otherwise record FAILURE and never
    redeliver it)."""
    ids = _ids(queue, "slow", "always_slow")
    scenario = {"policy": {**POLICY, "max_attempts": 2}, "jobs": [
        {"id": ids["slow"], "outcomes": [{"timeout": True}]},
        {"id": ids["always_slow"], "outcomes": "always", "always": {"timeout": True}},
    ]}
    doc = _run(queue, redis_url, scenario, task="scenario_hard_limit")
    _assert_timelines(doc, scenario, redis_url)
    assert set(_dead_letters(queue, redis_url, doc)) == {ids["always_slow"]}


@pytest.mark.parametrize("queue", ["celery", "rq", "celery-rabbitmq"])
def test_killed_pool_process_counts_the_attempt(queue: str, redis_url: str) -> None:
    """The process running the handler is SIGKILLed by its pid: Celery's
    pool process (``WorkerLostError`` in the main process), RQ's work horse."""
    ids = _ids(queue, "killed", "always_killed")
    scenario = {"policy": {**POLICY, "max_attempts": 2}, "jobs": [
        {"id": ids["killed"], "outcomes": [{"kill": True}]},
        {"id": ids["always_killed"], "outcomes": "always", "always": {"kill": True}},
    ]}
    doc = _run(queue, redis_url, scenario)
    _assert_timelines(doc, scenario, redis_url)
    assert set(_dead_letters(queue, redis_url, doc)) == {ids["always_killed"]}


@pytest.mark.parametrize("setting", ["task_reject_on_worker_lost", "task_retry_on_worker_lost"])
@pytest.mark.parametrize("queue", ["celery", "celery-rabbitmq"])
def test_celery_never_reruns_a_lost_attempt_the_engine_ended(queue: str, setting: str, redis_url: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Celery's settings that redeliver (``task_reject_on_worker_lost``) or
    retry (``task_retry_on_worker_lost``) a task whose pool process was
    lost do not run a job again once the engine ended it: the last attempt
    is dead-lettered, and nothing is left to run (the harness checks the
    broker holds no message for the queue once the workers stopped, and
    that the job started exactly as often as it was decided)."""
    monkeypatch.setenv("OJS_CELERY_CONF", json.dumps({setting: True}))
    ids = _ids(queue, "always_killed")
    scenario = {"policy": {**POLICY, "max_attempts": 2}, "jobs": [
        {"id": ids["always_killed"], "outcomes": "always", "always": {"kill": True}},
    ]}
    doc = _run(queue, redis_url, scenario)
    _assert_timelines(doc, scenario, redis_url)
    assert set(_dead_letters(queue, redis_url, doc)) == {ids["always_killed"]}


@pytest.mark.parametrize("queue", ["celery", "celery-rabbitmq"])
def test_celery_killed_main_process_runs_as_the_same_attempt(queue: str, redis_url: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Pins what cannot be counted on Celery: the worker's main process is
    SIGKILLed (with its pool process) while the task runs. With ``acks_late``
    the broker redelivers the message — Redis after its visibility timeout,
    RabbitMQ when the worker's connection closes, flagged ``redelivered`` —
    and the message is the one first sent (``request.retries`` 0): nothing
    that ran is in it, so the second run is decided as attempt 1 again.
    ``redelivered`` is not counted: RabbitMQ sets it as well on every retry
    a stopping worker held for its ETA (docs/integrations.md)."""
    monkeypatch.setenv("OJS_CELERY_VISIBILITY_S", "2")
    ids = _ids(queue, "main_killed")
    scenario = {"policy": POLICY, "jobs": [
        {"id": ids["main_killed"], "outcomes": [{"kill_parent": True}, {"type": "external.blip"}]}]}
    doc = _run(queue, redis_url, scenario)
    got = [(r["attempt"], r["action"]) for r in doc["jobs"][ids["main_killed"]]]
    # Three runs: killed, failed (decided as attempt 1, not 2), succeeded.
    assert got == [(1, "retry"), (3, "succeeded")]
    assert tc.Recorder(redis_url, doc["run"]).starts(ids["main_killed"]) == 3


@pytest.mark.parametrize("queue", ["celery", "celery-rabbitmq"])
def test_celery_pool_process_killed_after_deciding_decides_once(queue: str, redis_url: str) -> None:
    """The pool process is SIGKILLed by its pid once it carried out its
    decision (the retry sent, the record written) and before it reported
    to the worker's main process, which then sees ``WorkerLostError``: the
    attempt's mark says it was decided, so it is not decided again — no
    second retry (the job would run twice more), no retry of a job already
    dead-lettered. A pool process that reports has its mark removed by
    the main process: none is left once every job ended, and a worker
    that stops removes its directory."""
    ids = _ids(queue, "retried", "dead", "reported")
    scenario = {"policy": POLICY, "jobs": [
        {"id": ids["retried"], "outcomes": [{"type": "external.blip", "kill_after_deciding": True}]},
        {"id": ids["dead"], "outcomes": [{"type": "payment.card_stolen", "code": "DEAD_LETTER",
                                          "kill_after_deciding": True}]},
        {"id": ids["reported"], "outcomes": [{"type": "external.blip"}, {"type": "validation.bad_input"}]},
    ]}
    doc = _run(queue, redis_url, scenario)
    _assert_timelines(doc, scenario, redis_url)  # one retry and two runs; one run and a dead letter
    assert set(_dead_letters(queue, redis_url, doc)) == {ids["dead"], ids["reported"]}
    assert doc["marks_left"] == [] and doc["dirs_left"] == []


def test_celery_solo_pool_leaves_no_marks(redis_url: str) -> None:
    """A solo pool decides in the worker's main process, which never loses
    an attempt to a dead pool process: no marks are written there."""
    ids = _ids("celery", "solo")
    scenario = {"policy": POLICY, "jobs": [{"id": ids["solo"], "outcomes": [{"type": "external.blip"}]}]}
    doc = _run("celery", redis_url, scenario, 1, pool="solo")
    _assert_timelines(doc, scenario, redis_url)
    assert doc["marks_left"] == []


@pytest.mark.parametrize("queue", ["dramatiq", "dramatiq-rabbitmq"])
def test_dramatiq_killed_worker_counts_the_attempt(queue: str, redis_url: str) -> None:
    """The Dramatiq worker process is SIGKILLed by its pid while the attempt
    runs; the broker redelivers the message with ``retries`` unchanged —
    Redis after the heartbeat timeout, where the run mark makes it the next
    attempt; RabbitMQ when the worker's connection closes, flagged
    ``redelivered``, which makes it the next attempt. Four workers: each
    kill takes one.

    The retries have no delay (Dramatiq's own options, ``min_backoff`` 0,
    read through the ``dramatiq`` preset), so each is enqueued on the queue
    itself: a delayed one would pass through ``.DQ``, and a kill of the
    worker that moved it to the queue before its acknowledgement reached
    the broker would deliver it twice (test_dramatiq_copies.py)."""
    ids = _ids(queue, "killed", "always_killed")
    own = {"max_retries": 1, "min_backoff": 0}
    scenario = {"policy": {"preset": {"system": "dramatiq", **own}}, "dramatiq_options": own, "jobs": [
        {"id": ids["killed"], "outcomes": [{"kill": True}]},
        {"id": ids["always_killed"], "outcomes": "always", "always": {"kill": True}},
    ]}
    env = {"OJS_DRAMATIQ_HEARTBEAT_MS": "1000", "OJS_DRAMATIQ_MAINTENANCE_CHANCE": "1000000"}  # maintenance on every command
    doc = _run(queue, redis_url, scenario, 4, extra_env=env)
    _assert_timelines(doc, scenario, redis_url)
    # As sent, then the retry, on the queue itself (no third enqueue: no move from .DQ).
    assert tc.Recorder(redis_url, doc["run"]).enqueues(ids["always_killed"]) == [[0, None], [1, None]]
    assert all(r["timed_out"] for rows in doc["jobs"].values() for r in rows if r["action"] != "succeeded")
    dead = _dead_letters(queue, redis_url, doc)
    assert set(dead) == {ids["always_killed"]}
    assert {e["type"] for e in dead[ids["always_killed"]]["retry_state"]["errors"]} == {"dramatiq.WorkerLost"}


def test_dramatiq_rabbitmq_counts_a_prefetched_message_as_lost(redis_url: str) -> None:
    """Pins what RabbitMQ's ``redelivered`` cannot tell: a message a worker
    had prefetched but not started when it died comes back flagged too, and
    is counted as a lost attempt. Both messages wait in the queue before
    one worker (one thread, Dramatiq's default prefetch of two) starts: it
    runs the first, which kills it, while holding the second. A second
    worker then decides both as lost attempt 1; the second job's handler
    first runs after that decision."""
    import os
    import sys

    import dramatiq_app
    from ojs_retry.integrations import validate_job_policy
    from ojs_retry.integrations._core import POLICY_KEY

    rabbitmq_url = _rabbitmq_url()
    ids = _ids("dramatiq-rabbitmq", "killer", "prefetched")
    scenario = {"policy": POLICY, "jobs": [{"id": ids["killer"], "outcomes": [{"kill": True}]},
                                          {"id": ids["prefetched"], "outcomes": []}]}
    rec = tc.Recorder.new(redis_url, scenario)
    name = f"ojs-dramatiq-{rec.run}"
    env = {**rec.env(), "OJS_DRAMATIQ_BROKER": rabbitmq_url}
    os.environ.update(env)
    actor = dramatiq_app.declare(name, dramatiq_app.broker_for(rabbitmq_url))
    for job in scenario["jobs"]:
        message = actor.message_with_options(args=(job["id"],), **{POLICY_KEY: validate_job_policy(POLICY)})
        actor.broker.enqueue(message.copy(message_id=job["id"]))
    argv = [sys.executable, str(tc.HERE / "dramatiq_worker.py"), name]
    procs = tc.start_workers(argv, 1, tc.child_env({**env, "OJS_DRAMATIQ_PREFETCH": "2"}),
                             tc.log_prefix("dramatiq-prefetch", rec.run))
    try:
        assert procs[0].wait(60) == -9  # the first job's handler killed it
        procs += tc.start_workers(argv, 1, tc.child_env(env), tc.log_prefix("dramatiq-second", rec.run))
        rec.collect(list(ids.values()))
    finally:
        tc.stop_workers(procs)
    jobs = rec.finished(list(ids.values()), amqp_common.held(rabbitmq_url, [name, f"{name}.DQ"]))
    got = {j: [(r["attempt"], r["action"], r.get("timed_out")) for r in rows] for j, rows in jobs.items()}
    assert got == {ids["killer"]: [(1, "retry", True), (2, "succeeded", None)],
                   # decided as attempt 1 (lost), then its handler's first run
                   ids["prefetched"]: [(1, "retry", True), (1, "succeeded", None)]}
    assert [e["kind"] for e in rec.events(ids["prefetched"])] == ["decision", "start", "succeeded"]


def test_dramatiq_throws_is_a_non_retryable_match(redis_url: str) -> None:
    """The actor's ``throws=(Declined,)``; the handler raises a subclass of
    it: not retried, dead-lettered (on_exhaustion) as a non-retryable match
    on the listed class's type."""
    ids = _ids("dramatiq", "declined")
    # A message layer setting non_retryable_errors would replace the actor's
    # list, throws included (a layer replaces lists): this one sets none.
    policy = {k: v for k, v in POLICY.items() if k != "non_retryable_errors"}
    scenario = {"policy": policy, "jobs": [
        {"id": ids["declined"], "outcomes": "always", "always": {"raise": "declined_card"}}]}
    doc = _run("dramatiq", redis_url, scenario)
    got = {j: [(r["attempt"], r["action"], r["reason"]) for r in rows] for j, rows in doc["jobs"].items()}
    assert got == {ids["declined"]: [(1, "dead_letter", "non_retryable")]}
    record = _dead_letters("dramatiq", redis_url, doc)[ids["declined"]]
    assert record["decision"]["matched_pattern"] == "timeline_common.Declined"
    assert record["retry_state"]["errors"][0]["type"] == "timeline_common.Declined"


def test_dramatiq_retry_delay_is_that_attempts_delay(redis_url: str) -> None:
    """``dramatiq.Retry(delay=700)``: the engine decides retry or not
    (max_attempts 2: one retry, then exhausted); the retry is enqueued with
    the actor's 700 ms, not the engine's delay."""
    ids = _ids("dramatiq", "retry_delay")
    policy = {**POLICY, "max_attempts": 2, "initial_interval": "PT3S", "max_interval": "PT5S"}
    scenario = {"policy": policy, "jobs": [
        {"id": ids["retry_delay"], "outcomes": "always", "always": {"raise": "dramatiq.Retry", "delay": 700}}]}
    doc = _run("dramatiq", redis_url, scenario)
    rows = doc["jobs"][ids["retry_delay"]]
    assert [(r["attempt"], r["action"], r["reason"]) for r in rows] == [(1, "retry", "retryable"),
                                                                       (2, "dead_letter", "exhausted")]
    # Enqueued with the actor's delay (then moved from the delay queue when
    # due: Dramatiq enqueues it again without one), not the engine's.
    enqueues = tc.Recorder(redis_url, doc["run"]).enqueues(ids["retry_delay"])
    assert enqueues == [[0, None], [1, 700], [1, None]] and rows[0]["delay_ms"] != 700
    assert set(_dead_letters("dramatiq", redis_url, doc)) == {ids["retry_delay"]}
