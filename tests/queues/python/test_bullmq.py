"""BullMQ for Python on the engine: real workers on a real redis-server.

Needs ``OJS_REDIS_URL`` (a redis-server scripts/test-queues started, Debian's
7.0) and the ``bullmq`` package pinned in requirements.txt on the path.
Each test uses queues of its own (a fresh name), so tests never share state.

Delays: BullMQ for Python schedules a delayed job to the millisecond, but an
idle worker blocks on Redis in whole seconds (``math.ceil`` of its block
timeout unless the server's version is known), so a retry may start up to
``PRECISION_MS`` late; ``SLACK_MS`` covers process scheduling on a loaded
machine. Gaps are checked as the queue honouring the delay, never as speed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

import ojs_retry
from ojs_retry import RetryPolicy
from ojs_retry.integrations import JobError
from ojs_retry.integrations import bullmq as ojs_bullmq

import bullmq
import redis.asyncio as aioredis  # installed with bullmq

PRECISION_MS = 1000
SLACK_MS = 1500
HERE = Path(__file__).resolve().parent


def redis_url() -> str:
    url = os.environ.get("OJS_REDIS_URL")
    if not url:
        raise RuntimeError("OJS_REDIS_URL is not set: run these tests through scripts/test-queues")
    return url


def fresh(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


class Run:
    """A queue, an in-process worker on the engine, and what it saw."""

    def __init__(self, policy: Any, handler: Any, *, worker_opts: dict[str, Any] | None = None,
                 timeout_ms: int | None = None) -> None:
        self.name = fresh("bmq")
        self.url = redis_url()
        self.starts: dict[str, list[tuple[int, int]]] = {}
        self.events: list[ojs_retry.integrations.DecisionEvent] = []
        self.handler = handler
        self.policy = policy
        self.worker_opts = worker_opts or {}
        self.timeout_ms = timeout_ms

    async def __aenter__(self) -> Run:
        self.queue = bullmq.Queue(self.name, {"connection": self.url})
        self.client = aioredis.from_url(self.url)

        async def handle(job: Any, token: str) -> Any:
            self.starts.setdefault(job.id, []).append((job.attemptsMade, time.time_ns() // 1_000_000))
            return await self.handler(job)

        self.worker = ojs_bullmq.worker(
            self.name, handle, {"connection": self.url, "concurrency": 4, **self.worker_opts},
            ojs_retry_policy=self.policy, listeners=[self.events.append], timeout_ms=self.timeout_ms,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.worker.close()
        await self.queue.obliterate(force=True)
        await self.client.delete(ojs_bullmq.dead_letter_key(self.name))
        await self.queue.close()
        await self.client.aclose()

    async def settle(self, job_id: str, seconds: float = 20) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            state = await self.queue.getJobState(job_id)
            if state in ("completed", "failed"):
                return str(state)
            await asyncio.sleep(0.05)
        raise AssertionError(f"job {job_id} did not finish: {await self.queue.getJobState(job_id)}")

    async def dead(self) -> list[dict[str, Any]]:
        return await ojs_bullmq.dead_letters(self.client, self.name)


def always(failure: JobError) -> Any:
    async def handler(job: Any) -> Any:
        raise failure
    return handler


def check_gaps(run: Run, job_id: str, policy: RetryPolicy) -> None:
    events = [e for e in run.events if e.job_id == job_id and e.decision.action == "retry"]
    starts = run.starts[job_id]
    for event, (_, next_start) in zip(events, starts[1:]):
        gap = next_start - event.at_ms
        delay = event.decision.delay_ms or 0
        assert gap >= delay, (job_id, event.attempt, gap, delay)
        assert gap <= delay + PRECISION_MS + SLACK_MS, (job_id, event.attempt, gap, delay)


POLICY = {"max_attempts": 3, "initial_interval": "PT0.1S", "backoff_coefficient": 2,
          "max_interval": "PT1S", "on_exhaustion": "dead_letter",
          "non_retryable_errors": ["validation.*"]}


def test_retries_follow_the_engine_and_dead_letter_holds_the_history() -> None:
    async def main() -> None:
        async with Run(POLICY, always(JobError("external.timeout", message="slow"))) as run:
            await ojs_bullmq.enqueue(run.queue, "j", {"n": 1}, {"jobId": "bj-1"})
            assert await run.settle("bj-1") == "failed"
            policy = RetryPolicy(POLICY)
            # max_attempts is exact: three runs, BullMQ's counter 0, 1, 2.
            assert [a for a, _ in run.starts["bj-1"]] == [0, 1, 2]
            got = [(e.attempt, e.decision.action, e.decision.reason, e.decision.delay_ms) for e in run.events]
            want = [(n, d.action, d.reason, d.delay_ms) for n in (1, 2, 3)
                    for d in [policy.decide(n, type="external.timeout", key="bj-1")]]
            assert got == want
            assert got[-1][1:3] == ("dead_letter", "exhausted")
            check_gaps(run, "bj-1", policy)
            [record] = await run.dead()
            assert record["job_id"] == "bj-1" and record["queue"] == run.name
            assert record["decision"]["action"] == "dead_letter"
            assert record["retry_state"]["attempt"] == 3
            assert [e["attempt"] for e in record["retry_state"]["errors"]] == [1, 2, 3]
            assert {e["type"] for e in record["retry_state"]["errors"]} == {"external.timeout"}
            assert record["job"]["data"] == {"n": 1}
    asyncio.run(main())


def test_non_retryable_goes_to_on_exhaustion_and_a_job_layer_overrides_defaults() -> None:
    async def main() -> None:
        async with Run(POLICY, always(JobError("validation.bad_input"))) as run:
            await ojs_bullmq.enqueue(run.queue, "j", None, {"jobId": "bj-2"},
                                     ojs_retry_policy={"on_exhaustion": "discard"}, defaults=POLICY)
            await ojs_bullmq.enqueue(run.queue, "j", None, {"jobId": "bj-3"})
            assert await run.settle("bj-2") == "failed"
            assert await run.settle("bj-3") == "failed"
            by_job = {e.job_id: e.decision for e in run.events}
            assert (by_job["bj-2"].action, by_job["bj-2"].reason) == ("discard", "non_retryable")
            assert (by_job["bj-3"].action, by_job["bj-3"].reason) == ("dead_letter", "non_retryable")
            assert len(run.starts["bj-2"]) == 1 and len(run.starts["bj-3"]) == 1
            assert [r["job_id"] for r in await run.dead()] == ["bj-3"]
    asyncio.run(main())


@pytest.mark.parametrize("code", ["RETRY", "DISCARD", "DEAD_LETTER", "FAIL"])
def test_each_handler_code(code: str) -> None:
    async def handler(job: Any) -> Any:
        if job.attemptsMade == 0:
            raise JobError("validation.odd", code=code)  # type: ignore[arg-type]
        return "ok"

    async def main() -> None:
        async with Run(POLICY, handler) as run:
            await ojs_bullmq.enqueue(run.queue, "j", None, {"jobId": "bj-c"})
            state = await run.settle("bj-c")
            want = RetryPolicy(POLICY).decide(1, type="validation.odd", code=code, key="bj-c")  # type: ignore[arg-type]
            [event] = run.events
            assert (event.decision.action, event.decision.reason) == (want.action, want.reason)
            assert state == ("completed" if want.action == "retry" else "failed")
            assert len(run.starts["bj-c"]) == (2 if want.action == "retry" else 1)
            dead = await run.dead()
            assert len(dead) == (1 if want.action == "dead_letter" else 0)
    asyncio.run(main())


def test_a_job_added_by_plain_queue_add_runs_on_the_worker_defaults() -> None:
    async def main() -> None:
        async with Run(POLICY, always(JobError("external.timeout"))) as run:
            await run.queue.add("j", None, {"jobId": "bj-plain"})  # BullMQ's own attempts: 1
            assert await run.settle("bj-plain") == "failed"
            assert [(e.attempt, e.decision.action) for e in run.events] == [
                (1, "retry"), (2, "retry"), (3, "dead_letter")]
            assert [r["job_id"] for r in await run.dead()] == ["bj-plain"]
    asyncio.run(main())


def test_a_timed_out_run_counts_as_a_timed_out_attempt() -> None:
    async def handler(job: Any) -> Any:
        if job.attemptsMade == 0:
            await asyncio.sleep(5)
        return "ok"

    async def main() -> None:
        async with Run(POLICY, handler, timeout_ms=200) as run:
            await ojs_bullmq.enqueue(run.queue, "j", None, {"jobId": "bj-t"})
            assert await run.settle("bj-t") == "completed"
            [event] = run.events
            assert event.failure.timed_out and event.decision.action == "retry"
            assert [a for a, _ in run.starts["bj-t"]] == [0, 1]
    asyncio.run(main())


def test_a_bad_policy_is_refused_before_anything_reaches_redis() -> None:
    async def main() -> None:
        async with Run(POLICY, always(JobError("x"))) as run:
            with pytest.raises(ojs_retry.PolicyError) as err:
                await ojs_bullmq.enqueue(run.queue, "j", None, {"jobId": "bj-bad"},
                                         ojs_retry_policy={"max_attempts": -1}, defaults=POLICY)
            assert err.value.code == "validation.retry_policy_invalid"
            assert err.value.field == "max_attempts"
            with pytest.raises(ojs_retry.PolicyError):
                await ojs_bullmq.enqueue(run.queue, "j", None, ojs_retry_policy=RetryPolicy.preset("bullmq"),
                                         defaults=POLICY)
            # Only what an add would write (the job's hash, the id counter,
            # the lists a new job enters): the running worker's own keys
            # (stalled-check, marker, events) change whatever the enqueue does.
            c, key = run.client, f"bull:{run.name}"
            assert await c.exists(f"{key}:bj-bad") == 0
            assert await c.get(f"{key}:id") is None
            for name in ("wait", "paused"):
                assert await c.lrange(f"{key}:{name}", 0, -1) == []
            for name in ("delayed", "prioritized"):
                assert await c.zrange(f"{key}:{name}", 0, -1) == []
    asyncio.run(main())


KILLER = """
import asyncio, os, sys
from ojs_retry.integrations import bullmq as ojs_bullmq
started = []
async def handler(job, token):
    started.append(job.id)
    print("started", job.id, flush=True)
    for _ in range(40):
        if len(started) == 2:
            os._exit(9)
        await asyncio.sleep(0.05)
    os._exit(9)
async def main():
    w = ojs_bullmq.worker(sys.argv[2], handler, {"connection": sys.argv[1], "lockDuration": 1000,
                          "stalledInterval": 500, "concurrency": 2})
    await asyncio.sleep(30)
asyncio.run(main())
"""


def test_a_killed_workers_job_counts_the_attempt_and_is_not_retried_past_the_limit() -> None:
    async def handler(job: Any) -> Any:
        return "ok"

    async def main() -> None:
        run = Run(POLICY, handler, worker_opts={"lockDuration": 1000, "stalledInterval": 500})
        run.name = fresh("bmq-kill")
        queue = bullmq.Queue(run.name, {"connection": run.url})
        await ojs_bullmq.enqueue(queue, "j", None, {"jobId": "bk-1"})
        await ojs_bullmq.enqueue(queue, "j", None, {"jobId": "bk-2"}, ojs_retry_policy={"max_attempts": 1},
                                 defaults=POLICY)
        killer = subprocess.run([sys.executable, "-c", KILLER, run.url, run.name],
                                capture_output=True, text=True, timeout=60)
        assert killer.returncode == 9, killer.stderr
        assert sorted(killer.stdout.split()) == sorted("started bk-1 started bk-2".split())
        await queue.close()
        async with run:
            assert await run.settle("bk-1") == "completed"
            assert await run.settle("bk-2") == "failed"
            by_job = {e.job_id: e for e in run.events}
            lost = by_job["bk-1"]
            assert (lost.attempt, lost.failure.type, lost.failure.timed_out) == (1, "bullmq.stalled", True)
            assert lost.decision.action == "retry"
            assert len(run.starts["bk-1"]) == 1  # attempt 2 ran here, after the stall's delay
            assert by_job["bk-2"].decision.action == "dead_letter"
            assert "bk-2" not in run.starts  # never run past its one attempt
            [record] = await run.dead()
            assert record["retry_state"]["errors"][0]["type"] == "bullmq.stalled"
    asyncio.run(main())


# Presets in the real queue: with jitter off (BullMQ for Python has none), a
# job on the engine with the bullmq preset (runtime "python") follows the same
# timeline as the same job under BullMQ's native retry options, same Redis.
NATIVE = {
    "bp-tie": {"attempts": 4, "backoff": {"type": "exponential", "delay": 2.5}},  # round() ties to even
    "bp-exp": {"attempts": 3, "backoff": {"type": "exponential", "delay": 100}},
    "bp-fix": {"attempts": 2, "backoff": 150},
    "bp-unrec": {"attempts": 5, "backoff": {"type": "fixed", "delay": 100}},
}


async def _fail(job: Any) -> Any:
    if job.id == "bp-unrec":
        raise bullmq.UnrecoverableError("poison")
    raise RuntimeError("boom")


Row = tuple[int, str, int | None]


async def bullmq_timelines(jobs: dict[str, dict[str, Any]], handler: Any, make_worker: Any) -> dict[str, list[Row]]:
    """What BullMQ did with each run of ``jobs`` (id: BullMQ options, added
    by a plain ``queue.add``) under the worker ``make_worker(name, url,
    proc)``: per job, ``(attemptsMade, "retry", the delay it scheduled)``,
    ending in ``(attemptsMade, "dead_letter" | "completed", None)``."""
    name, url = fresh("bmq-tl"), redis_url()
    queue = bullmq.Queue(name, {"connection": url})
    rows: dict[str, list[Row]] = {}

    def failed(job: Any, err: Any) -> None:
        terminal = bool(job.finishedOn)
        rows.setdefault(job.id, []).append(
            (job.attemptsMade, "dead_letter" if terminal else "retry", None if terminal else job.delay))

    def completed(job: Any, result: Any) -> None:
        rows.setdefault(job.id, []).append((job.attemptsMade, "completed", None))

    async def proc(job: Any, token: str) -> Any:
        return await handler(job)

    worker = make_worker(name, url, proc)
    worker.on("failed", failed)
    worker.on("completed", completed)
    # Closed whatever happens: a worker left running when the test fails
    # swallows asyncio.run's cancellation, and the run hangs instead of failing.
    try:
        for job_id, opts in jobs.items():
            await queue.add("j", None, {"jobId": job_id, **opts})
        deadline = time.monotonic() + 30
        while not all(rows.get(j) and rows[j][-1][1] != "retry" for j in jobs):
            assert time.monotonic() < deadline, rows
            await asyncio.sleep(0.05)
    finally:
        # Forced: every job has ended (or the test failed). An unforced close
        # waits for the worker's blocking fetch, which BullMQ for Python
        # (2.x) does not always give up under load: the close then never
        # returns (seen for the plain bullmq.Worker too).
        await worker.close(force=True)
        await queue.obliterate(force=True)
        await queue.close()
        client = aioredis.from_url(url)
        await client.delete(ojs_bullmq.dead_letter_key(name))
        await client.aclose()
    return rows


def native_worker(name: str, url: str, proc: Any) -> Any:
    """A plain ``bullmq.Worker``: BullMQ's own retries."""
    return bullmq.Worker(name, proc, {"connection": url, "concurrency": 4})


async def _native_timelines() -> dict[str, list[Row]]:
    return await bullmq_timelines(NATIVE, _fail, native_worker)


def test_the_bullmq_preset_runs_like_bullmq_itself() -> None:
    async def main() -> None:
        native = await _native_timelines()
        async with Run(None, _fail) as run:
            for job_id, opts in NATIVE.items():
                preset = RetryPolicy.preset("bullmq", {"runtime": "python", **opts})
                await ojs_bullmq.enqueue(run.queue, "j", None, {"jobId": job_id}, ojs_retry_policy=preset,
                                         defaults=None)
            for job_id in NATIVE:
                assert await run.settle(job_id) == "failed"
            engine: dict[str, list[tuple[int, str, int | None]]] = {}
            for e in run.events:
                engine.setdefault(e.job_id, []).append((e.attempt, e.decision.action, e.decision.delay_ms))
            assert engine == native
            assert native["bp-tie"] == [(1, "retry", 2), (2, "retry", 5), (3, "retry", 10), (4, "dead_letter", None)]
    asyncio.run(main())


def test_the_example_runs() -> None:
    example = HERE.parents[2] / "examples" / "queues" / "bullmq_py.py"
    env = {**os.environ, "REDIS_URL": redis_url()}
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pay-1", "dead_letter", "handler_code"]
