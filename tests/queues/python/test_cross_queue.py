"""One OJS policy, one timeline: every queue runs tests/queues/scenario.json
with two worker processes and keyed jitter, and must record the timeline
``RetryPolicy.decide`` gives for those job ids.

Each runner is its own process (its CLI, see timeline_common), run one after
the other on the same Redis; Celery and Dramatiq once more on the real
RabbitMQ (``celery-rabbitmq``, ``dramatiq-rabbitmq``); Sidekiq's is Ruby (tests/queues/ruby/timeline_sidekiq.rb,
real Sidekiq processes on the engine, the gem scripts/test-queues installs). A gap (next start - failure) must be at least
the decision's delay_ms: the queue never starts a retry early. How late it
starts is the queue's scheduling and the machine's load (docs/integrations.md
states each queue's precision); no upper bound is asserted, as a timing
threshold would fail for the load and not for a fault.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import timeline_common as tc

ROOT = tc.HERE.parents[2]
PY_QUEUES = ["celery", "rq", "dramatiq", "bullmq", "chasquimq"]
QUEUE_NAMES = {"bullmq": "bullmq-python"}
#: Celery and Dramatiq run it on RabbitMQ too (their runners' --broker).
ON_RABBITMQ = ["celery-rabbitmq", "dramatiq-rabbitmq"]
ALL = ["bullmq-node", "bullmq-python", "celery", "rq", "dramatiq", "chasquimq", "sidekiq", *ON_RABBITMQ]


def _command(queue: str, redis_url: str, redis86_url: str, rabbitmq_url: str) -> list[str]:
    scenario = str(tc.SCENARIO_PATH)
    if queue == "sidekiq":
        return ["ruby", str(ROOT / "tests/queues/ruby/timeline_sidekiq.rb"), "--redis", redis_url,
                "--scenario", scenario, "--workers", "2"]
    if queue == "bullmq-node":
        return ["node", str(ROOT / "tests/queues/node/timeline.mjs"), "--redis", redis_url,
                "--scenario", scenario, "--workers", "2"]
    broker = ["--broker", rabbitmq_url] if queue in ON_RABBITMQ else []
    module = "bullmq" if queue == "bullmq-python" else queue.removesuffix("-rabbitmq")
    url = redis86_url if module == "chasquimq" else redis_url
    return [sys.executable, str(tc.HERE / f"timeline_{module}.py"), "--redis", url,
            "--scenario", scenario, "--workers", "2", *broker]


@pytest.fixture(scope="module")
def timelines(redis_url: str, redis86_url: str, rabbitmq_url: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for queue in ALL:
        cmd = _command(queue, redis_url, redis86_url, rabbitmq_url)
        if not Path(cmd[1]).exists():
            out[queue] = RuntimeError(f"{queue}: runner {cmd[1]} is missing")
            continue
        env = tc.child_env({})
        if queue == "sidekiq":
            # The installed gem and Debian's Sidekiq (scripts/test-queues).
            gems = os.environ.get("OJS_SIDEKIQ_GEM_HOME")
            if not gems:
                out[queue] = RuntimeError("sidekiq: OJS_SIDEKIQ_GEM_HOME is not set: run through scripts/test-queues")
                continue
            env["GEM_HOME"] = gems
        if queue == "chasquimq":
            # ChasquiMQ's packages live in a site of their own (it needs redis-py < 7).
            env["PYTHONPATH"] = os.pathsep.join([os.environ.get("OJS_CHASQUIMQ_SITE", ""), str(tc.HERE)])
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        if proc.returncode != 0:
            out[queue] = RuntimeError(f"{queue}: {' '.join(cmd)} exited {proc.returncode}\n{proc.stderr[-4000:]}")
            continue
        out[queue] = json.loads(proc.stdout)
    return out


def _doc(timelines: dict[str, Any], queue: str) -> dict[str, Any]:
    doc = timelines[queue]
    if isinstance(doc, Exception):
        pytest.fail(str(doc))
    assert doc["queue"] == queue
    return doc


def _decisions(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    keep = ("attempt", "action", "reason", "delay_ms")
    return {job: [{k: row[k] for k in keep} for row in rows] for job, rows in doc["jobs"].items()}


@pytest.mark.parametrize("queue", ALL)
def test_timeline_is_the_engines(timelines: dict[str, Any], queue: str) -> None:
    scenario = tc.load_scenario()
    assert _decisions(_doc(timelines, queue)) == tc.expected_timelines(scenario)


@pytest.mark.parametrize("queue", ALL)
def test_gaps_honour_the_delay(timelines: dict[str, Any], queue: str) -> None:
    doc = _doc(timelines, queue)
    precision = doc["precision_ms"]
    assert isinstance(precision, int) and precision >= 0
    for job, rows in doc["jobs"].items():
        for row, nxt in zip(rows, rows[1:]):
            gap = nxt["started_at_ms"] - row["failed_at_ms"]
            assert gap >= row["delay_ms"], f"{queue} {job} attempt {nxt['attempt']} started {gap} ms after a {row['delay_ms']} ms delay"


def test_every_queue_gives_one_timeline(timelines: dict[str, Any]) -> None:
    docs = {q: _decisions(_doc(timelines, q)) for q in ALL}
    first = docs[ALL[0]]
    assert all(d == first for d in docs.values()), json.dumps(docs, indent=1)
