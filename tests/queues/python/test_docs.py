"""The Celery, RQ and Dramatiq code blocks of docs/integrations.md run as
written on the real Redis, and the "on RabbitMQ" blocks of Celery and
Dramatiq on the real RabbitMQ: only the broker's address is replaced (and
RQ's worker runs in burst mode, so it stops when the queue is empty)."""

from __future__ import annotations

import json
import re
import sys
import types
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

DOC = Path(__file__).resolve().parents[3] / "docs" / "integrations.md"


def _block(section: str, index: int = 0) -> str:
    text = DOC.read_text(encoding="utf-8")
    part = text.split(f"\n## {section} (`ojs_retry.integrations.", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)\n```", part, re.S)
    assert len(blocks) > index, f"docs/integrations.md has python block {index} in its {section} section"
    return str(blocks[index])


def _run(section: str, replacements: dict[str, str], index: int = 0) -> dict[str, Any]:
    code = _block(section, index)
    for old, new in replacements.items():
        assert old in code, (section, old)
        code = code.replace(old, new)
    module = types.ModuleType(f"docs_{section.lower()}_{uuid.uuid4().hex[:6]}")
    sys.modules[module.__name__] = module  # RQ's worker imports the job by name
    exec(compile(code, f"docs/integrations.md ({section})", "exec"), module.__dict__)  # noqa: S102
    return module.__dict__


def test_celery_block(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    client.delete("celery")
    ns = _run("Celery", {'"redis://127.0.0.1:6379/0"': repr(redis_url)})
    sent = [json.loads(raw) for raw in client.lrange("celery", 0, -1)]
    assert [m["headers"]["ojs_retry_policy"] for m in sent] == ['{"max_attempts":3}']
    from ojs_retry import PolicyError

    with pytest.raises(PolicyError):
        ns["charge"].apply_async((1,), ojs_retry_policy={"max_attempts": -1})
    assert client.llen("celery") == 1
    client.delete("celery")


def test_rq_block(redis_url: str) -> None:
    from rq.registry import FailedJobRegistry

    client = redis.Redis.from_url(redis_url)
    ns = _run("RQ", {"Redis()": f"Redis.from_url({redis_url!r})",
                     "worker.work(with_scheduler=True)": "worker.work(with_scheduler=True, burst=True)"})
    queue = ns["queue"]
    failed = FailedJobRegistry(queue=queue)
    jobs = [queue.fetch_job(j) for j in failed.get_job_ids()]
    assert [j.args for j in jobs] == [(-1,)]
    assert jobs[0].meta["ojs_dead_letter"]["decision"]["reason"] == "handler_code"
    assert queue.finished_job_registry.count == 1 and len(queue) == 0
    for key in client.keys("rq:*shop*"):
        client.delete(key)


def test_dramatiq_block(redis_url: str) -> None:
    import dramatiq

    client = redis.Redis.from_url(redis_url)
    client.delete("dramatiq:default", "dramatiq:default.msgs")
    previous = dramatiq.get_broker()
    try:
        _run("Dramatiq", {'"redis://127.0.0.1:6379/0"': repr(redis_url)})
    finally:
        dramatiq.set_broker(previous)
    from dramatiq.message import Message

    sent = [Message.decode(raw) for raw in client.hgetall("dramatiq:default.msgs").values()]
    assert [(m.actor_name, m.args, m.options["ojs_retry_policy"]) for m in sent] == [
        ("charge", (42,), '{"max_attempts":3}')]
    client.delete("dramatiq:default", "dramatiq:default.msgs")


def test_celery_on_rabbitmq_block(rabbitmq_url: str) -> None:
    """The block's ``dead_letters`` reads what the integration dead-lettered
    on RabbitMQ: a task of the block's app run (eagerly) raising a
    ``DEAD_LETTER`` code."""
    from ojs_retry.integrations.celery import JobError, OjsTask

    ns = _run("Celery", {'"amqp://guest:guest@127.0.0.1:5672//"': repr(rabbitmq_url)}, index=1)
    app = ns["app"]
    queue = f"docs-{uuid.uuid4().hex[:6]}"
    app.conf.task_default_queue = queue

    @app.task(bind=True, base=OjsTask, name="docs.charge")
    def charge(self: Any, order_id: int) -> None:
        raise JobError("payment.card_stolen", code="DEAD_LETTER")

    charge.apply((7,), task_id=f"{queue}-1")
    records = ns["dead_letters"](queue)
    assert [(r["job_id"], r["decision"]["reason"], r["job"]["args"]) for r in records] == [
        (f"{queue}-1", "handler_code", [7])]
    assert ns["dead_letters"](queue) == []


def test_dramatiq_on_rabbitmq_block(rabbitmq_url: str) -> None:
    """The block's broker, with a real Dramatiq worker thread: an actor
    raising a ``DEAD_LETTER`` code; the block's ``dead_letters`` reads its
    record from ``<queue>.XQ``, polled until it is there."""
    import time

    import dramatiq

    from ojs_retry.integrations.dramatiq import JobError

    previous = dramatiq.get_broker()
    worker = None
    try:
        ns = _run("Dramatiq", {'"amqp://guest:guest@127.0.0.1:5672"': repr(rabbitmq_url)}, index=1)
        broker = ns["broker"]
        queue = f"docs-{uuid.uuid4().hex[:6]}"

        def charge(order_id: int) -> None:
            raise JobError("payment.card_stolen", code="DEAD_LETTER")

        actor = dramatiq.actor(charge, actor_name=f"charge_{queue}", queue_name=queue, broker=broker)
        message = actor.send(7)
        worker = dramatiq.Worker(broker, worker_threads=1, worker_timeout=100)
        worker.start()
        deadline = time.monotonic() + 60
        records: list[Any] = []
        while not records:
            assert time.monotonic() < deadline, f"no dead letter in {queue}.XQ after 60 s"
            records = ns["dead_letters"](queue)
            time.sleep(0.05)
        assert [(r["job_id"], r["decision"]["reason"], r["job"]["args"]) for r in records] == [
            (message.message_id, "handler_code", [7])]
    finally:
        if worker is not None:
            worker.stop()
        dramatiq.set_broker(previous)
