"""The Celery, RQ and Dramatiq code blocks of docs/integrations.md run as
written on the real Redis: only the Redis address is replaced (and RQ's
worker runs in burst mode, so it stops when the queue is empty)."""

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


def _block(section: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    part = text.split(f"\n## {section} (`ojs_retry.integrations.", 1)[1].split("\n## ", 1)[0]
    m = re.search(r"```python\n(.*?)\n```", part, re.S)
    assert m, f"docs/integrations.md has a python block in its {section} section"
    return m.group(1)


def _run(section: str, replacements: dict[str, str]) -> dict[str, Any]:
    code = _block(section)
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
