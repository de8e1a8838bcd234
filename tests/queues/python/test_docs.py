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
import os
import shlex
import subprocess
import time
import sys
import types
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis

import fences

RUNNER = "tests/queues/python/test_docs.py"
BLOCKS = fences.run_by(RUNNER)
#: The blocks of one section, in order: (path, heading) -> its run blocks.
SECTIONS: dict[tuple[str, str], list[fences.Block]] = {}
for _b, _ in BLOCKS:
    SECTIONS.setdefault((_b.path, _b.heading), []).append(_b)
OUTPUTS = {b.where: out for b, out in BLOCKS if out is not None}
CHECKS: dict[str, Callable[..., None]] = {}
_current: list[fences.Block] = []


def check(heading: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A section's own check, in place of running its blocks one by one."""
    def register(fn: Callable[..., None]) -> Callable[..., None]:
        CHECKS[heading] = fn
        return fn
    return register


def _replaced(code: str, replacements: dict[str, str], where: str) -> str:
    for old, new in replacements.items():
        assert old in code, (where, old)
        code = code.replace(old, new)
    return code


def _run(replacements: dict[str, str], block: fences.Block | None = None) -> dict[str, Any]:
    block = block or _current[-1]
    code = _replaced(block.code, replacements, block.where)
    module = types.ModuleType(f"docs_{block.line}_{uuid.uuid4().hex[:6]}")
    sys.modules[module.__name__] = module  # RQ's worker imports the job by name
    exec(compile(code, block.where, "exec"), module.__dict__)  # noqa: S102
    return module.__dict__


def test_the_docs_have_blocks_for_this_runner() -> None:
    assert len(BLOCKS) >= 5, [b.where for b, _ in BLOCKS]


@pytest.mark.parametrize("section", list(SECTIONS), ids=[f"{p}: {h}" for p, h in SECTIONS])
def test_doc_section(section: tuple[str, str], request: pytest.FixtureRequest) -> None:
    blocks = SECTIONS[section]
    _current[:] = blocks
    fn = CHECKS.get(section[1])
    if fn is not None:
        fn(*(request.getfixturevalue(n) for n in fn.__code__.co_varnames[:fn.__code__.co_argcount]))
        return
    for block in blocks:
        assert block.lang == "python", f"{block.where}: no check runs a {block.lang} block in this section"
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            _run({}, block)
        out = OUTPUTS.get(block.where)
        if out is not None:
            assert printed.getvalue() == out.code, f"{block.where} printed something else than its output block"


def _section_outputs(block: fences.Block) -> list[fences.Block]:
    """The output blocks of ``block``'s section, in order."""
    return [b for b in fences.all_blocks() if b.path == block.path and b.heading == block.heading
            and b.marker == "output"]


def _wait_for(log: Path, line: str, worker: subprocess.Popen[bytes]) -> str:
    """The worker's log once ``line`` is in it (fails if the worker exits
    first, or after 120 s without it)."""
    deadline = time.monotonic() + 120
    while line not in (text := log.read_text(encoding="utf-8", errors="replace")):
        assert worker.poll() is None, f"the worker exited ({worker.returncode}):\n{text}"
        assert time.monotonic() < deadline, f"no {line!r} in the worker's log after 120 s:\n{text}"
        time.sleep(0.1)
    return text


@check("Celery: a worker and a producer")
def celery_quick_start(redis_url: str, tmp_path: Path) -> None:
    """tasks.py and producer.py written as files (a block's first line names
    its file), the worker started with the block's command (``celery`` as
    ``python -m celery``) on a Redis database of its own; the producer's
    printed line and the worker's log lines are the section's output blocks,
    and nothing is logged as an unexpected error."""
    from ojs_retry import PolicyError

    url = urlsplit(redis_url)._replace(path="/7").geturl()
    client = redis.Redis.from_url(url)
    client.flushdb()
    python = {b.code.splitlines()[0].removeprefix("# "): b for b in _current if b.lang == "python"}
    assert set(python) == {"tasks.py", "producer.py"}, list(python)
    for name, block in python.items():
        (tmp_path / name).write_text(_replaced(block.code, {'"redis://127.0.0.1:6379/0"': repr(url)} if name == "tasks.py"
                                               else {}, block.where), encoding="utf-8")
    [command] = [b for b in _current if b.lang == "sh"]
    args = shlex.split(command.code)
    assert args[0] == "celery", command.where
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    printed_out, log_lines = _section_outputs(python["tasks.py"])
    log = tmp_path / "worker.log"
    with log.open("wb") as sink:
        worker = subprocess.Popen([sys.executable, "-m", *args], cwd=tmp_path, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        producer = subprocess.run([sys.executable, "producer.py"], cwd=tmp_path, env=env, capture_output=True,
                                  text=True, timeout=120, check=False)
        assert producer.returncode == 0, producer.stderr
        assert producer.stdout == printed_out.code, "producer.py printed something else than its output block"
        text = _wait_for(log, "Task tasks.charge[order-42] succeeded", worker)
        for line in log_lines.code.splitlines():
            assert line in text, f"{line!r} is not in the worker's log:\n{text}"
        assert "raised unexpected" not in text and "Traceback" not in text, text
        tasks = _run({'"redis://127.0.0.1:6379/0"': repr(url)}, python["tasks.py"])
        with pytest.raises(PolicyError):
            tasks["charge"].apply_async((1,), ojs_retry_policy={"max_attempts": -1})
        assert client.llen("celery") == 0, "a refused layer sends nothing"
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        client.flushdb()


@check("BullMQ for Python (`ojs_retry.integrations.bullmq`)")
def bullmq_block(redis_url: str) -> None:
    """The one-line adoption, then the example: each on a Redis database of
    its own (the blocks' queue names are common ones), each printing its
    output block."""
    url = urlsplit(redis_url)._replace(path="/8").geturl()
    client = redis.Redis.from_url(url)
    assert len(_current) == 2, [b.where for b in _current]
    for block in _current:
        client.flushdb()
        try:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                _run({'"redis://127.0.0.1:6379"': repr(url)}, block)
            assert printed.getvalue() == OUTPUTS[block.where].code, block.where
        finally:
            client.flushdb()


@check("The write")
def bullmq_protocol_write(redis_url: str) -> None:
    """docs/bullmq-protocol.md's script is the one BullMQ for Python sends,
    and on the real Redis does what the doc says: 0 for a removed job, -1
    for a writer behind the stored stall count, else the fields and the
    record written."""
    from ojs_retry.integrations import bullmq as ojs_bullmq

    [block] = _current
    assert block.lang == "lua"
    assert block.code.strip() == ojs_bullmq._WRITE_LUA.strip(), "the doc's script is the integration's"
    client = redis.Redis.from_url(redis_url)
    job, dead = f"docs-lua-{uuid.uuid4().hex[:6]}", f"docs-lua-dead-{uuid.uuid4().hex[:6]}"
    write = client.register_script(block.code)
    try:
        assert write(keys=[job, dead], args=["ojs_retry_state", "{}", "ojs_retry_stalls", 0, ""]) == 0
        assert not client.exists(job)
        client.hset(job, mapping={"name": "charge", "ojs_retry_stalls": 2})
        assert write(keys=[job, dead], args=["ojs_retry_state", "{}", "ojs_retry_stalls", 1, "r"]) == -1
        assert client.llen(dead) == 0
        assert write(keys=[job, dead], args=["ojs_retry_state", '{"attempt":3}', "ojs_retry_stalls", 2, "r"]) == 1
        assert client.hget(job, "ojs_retry_state") == b'{"attempt":3}' and client.lrange(dead, 0, -1) == [b"r"]
    finally:
        client.delete(job, dead)


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
