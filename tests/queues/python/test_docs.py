"""The python blocks of the docs that tests/docs/fences.py finds marked
``<!-- run: tests/queues/python/test_docs.py -->`` run as written on the
real Redis, or the real RabbitMQ: only the broker's address is replaced
(and RQ's worker runs in burst mode, so it stops when the queue is empty).
A block whose section has a check below is followed by it (what it sent or
dead-lettered, read from the broker); every other block runs, and what it
prints is compared with the output block that follows it, if any."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import types
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import redis

import fences

RUNNER = "tests/queues/python/test_docs.py"
BLOCKS = fences.run_by(RUNNER)
CHECKS: dict[str, Callable[..., None]] = {}
_current: list[fences.Block] = []


def check(heading: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def register(fn: Callable[..., None]) -> Callable[..., None]:
        CHECKS[heading] = fn
        return fn
    return register


def _run(replacements: dict[str, str]) -> dict[str, Any]:
    block = _current[-1]
    code = block.code
    for old, new in replacements.items():
        assert old in code, (block.where, old)
        code = code.replace(old, new)
    module = types.ModuleType(f"docs_{block.line}_{uuid.uuid4().hex[:6]}")
    sys.modules[module.__name__] = module  # RQ's worker imports the job by name
    exec(compile(code, block.where, "exec"), module.__dict__)  # noqa: S102
    return module.__dict__


def test_the_docs_have_blocks_for_this_runner() -> None:
    assert len(BLOCKS) >= 5, [b.where for b, _ in BLOCKS]


@pytest.mark.parametrize(("block", "output"), BLOCKS, ids=[b.where for b, _ in BLOCKS])
def test_doc_block(block: fences.Block, output: fences.Block | None, request: pytest.FixtureRequest) -> None:
    _current.append(block)
    fn = CHECKS.get(block.heading)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        if fn is None:
            _run({})
        else:
            fn(*(request.getfixturevalue(n) for n in fn.__code__.co_varnames[:fn.__code__.co_argcount]))
    if output is not None:
        assert printed.getvalue() == output.code, f"{block.where} printed something else than its output block"


@check("Celery (`ojs_retry.integrations.celery`)")
def celery_block(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    client.delete("celery")
    ns = _run({'"redis://127.0.0.1:6379/0"': repr(redis_url)})
    sent = [json.loads(raw) for raw in client.lrange("celery", 0, -1)]
    assert [m["headers"]["ojs_retry_policy"] for m in sent] == ['{"max_attempts":3}']
    from ojs_retry import PolicyError

    with pytest.raises(PolicyError):
        ns["charge"].apply_async((1,), ojs_retry_policy={"max_attempts": -1})
    assert client.llen("celery") == 1
    client.delete("celery")


@check("RQ (`ojs_retry.integrations.rq`)")
def rq_block(redis_url: str) -> None:
    from rq.registry import FailedJobRegistry

    client = redis.Redis.from_url(redis_url)
    ns = _run({"Redis()": f"Redis.from_url({redis_url!r})",
                     "worker.work(with_scheduler=True)": "worker.work(with_scheduler=True, burst=True)"})
    queue = ns["queue"]
    failed = FailedJobRegistry(queue=queue)
    jobs = [queue.fetch_job(j) for j in failed.get_job_ids()]
    assert [j.args for j in jobs] == [(-1,)]
    assert jobs[0].meta["ojs_dead_letter"]["decision"]["reason"] == "handler_code"
    assert queue.finished_job_registry.count == 1 and len(queue) == 0
    for key in client.keys("rq:*shop*"):
        client.delete(key)


@check("Dramatiq (`ojs_retry.integrations.dramatiq`)")
def dramatiq_block(redis_url: str) -> None:
    import dramatiq

    client = redis.Redis.from_url(redis_url)
    client.delete("dramatiq:default", "dramatiq:default.msgs")
    previous = dramatiq.get_broker()
    try:
        _run({'"redis://127.0.0.1:6379/0"': repr(redis_url)})
    finally:
        dramatiq.set_broker(previous)
    from dramatiq.message import Message

    sent = [Message.decode(raw) for raw in client.hgetall("dramatiq:default.msgs").values()]
    assert [(m.actor_name, m.args, m.options["ojs_retry_policy"]) for m in sent] == [
        ("charge", (42,), '{"max_attempts":3}')]
    client.delete("dramatiq:default", "dramatiq:default.msgs")


@check("Celery on RabbitMQ")
def celery_on_rabbitmq_block(rabbitmq_url: str) -> None:
    """The block's ``dead_letters`` reads what the integration dead-lettered
    on RabbitMQ: a task of the block's app run (eagerly) raising a
    ``DEAD_LETTER`` code."""
    from ojs_retry.integrations.celery import JobError, OjsTask

    ns = _run({'"amqp://guest:guest@127.0.0.1:5672//"': repr(rabbitmq_url)})
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


@check("Dramatiq on RabbitMQ")
def dramatiq_on_rabbitmq_block(rabbitmq_url: str) -> None:
    """The block's broker, with a real Dramatiq worker thread: an actor
    raising a ``DEAD_LETTER`` code; the block's ``dead_letters`` reads its
    record from ``<queue>.XQ``, polled until it is there."""
    import time

    import dramatiq

    from ojs_retry.integrations.dramatiq import JobError

    previous = dramatiq.get_broker()
    worker = None
    try:
        ns = _run({'"amqp://guest:guest@127.0.0.1:5672"': repr(rabbitmq_url)})
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
