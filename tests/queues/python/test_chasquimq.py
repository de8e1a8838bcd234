"""ChasquiMQ on the engine: real workers on a real redis-server >= 8.6.

Needs ``OJS_REDIS86_URL`` (ChasquiMQ 1.3.0 uses ``XACKDEL``, Redis >= 8.6:
scripts/test-queues starts ``redis_binary 8.6``) and the ``chasquimq``
package pinned in requirements.txt on the path. Each test uses a queue of its
own (a fresh name).

Delays: a re-published job waits in ChasquiMQ's delayed set until the
promoter (embedded in every worker, 100 ms tick) moves it to the stream, so a
retry may start up to ``PRECISION_MS`` late; ``SLACK_MS`` covers process
scheduling on a loaded machine. Gaps check the queue honoured the delay.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from typing import Any

import chasquimq
import pytest
import redis.asyncio as aioredis

import ojs_retry
from ojs_retry import RetryPolicy
from ojs_retry.integrations import DecisionEvent, JobError
from ojs_retry.integrations import chasquimq as ojs_chasqui

from failure_time import CASES as FAILURE_CASES
from failure_time import expand

PRECISION_MS = 200
SLACK_MS = 1500


def redis_url() -> str:
    # scripts/test-queues: OJS_REDIS86_URL names the redis >= 8.6 it started.
    url = os.environ.get("OJS_REDIS86_URL")
    if not url:
        raise RuntimeError("OJS_REDIS86_URL is not set: run these tests through scripts/test-queues")
    return url


class Run:
    """A queue, an in-process worker on the engine, and what it saw."""

    def __init__(self, policy: Any, handler: Any, *, timeout_ms: int | None = None,
                 name: str | None = None, **worker_kwargs: Any) -> None:
        self.name = name or f"chq-{uuid.uuid4().hex[:8]}"
        self.url = redis_url()
        self.starts: dict[str, list[tuple[int, int]]] = {}
        self.events: list[DecisionEvent] = []
        self.done: dict[str, Any] = {}
        self.handler = handler
        self.policy = policy
        self.timeout_ms = timeout_ms
        self.worker_kwargs = worker_kwargs

    async def __aenter__(self) -> Run:
        self.queue = chasquimq.Queue(self.name, redis_url=self.url)

        async def handle(job: Any) -> Any:
            self.starts.setdefault(job.id, []).append((job.attempt, time.time_ns() // 1_000_000))
            result = await self.handler(job)
            self.done[job.id] = result
            return result

        self.worker = ojs_chasqui.worker(
            self.name, handle, redis_url=self.url, ojs_retry_policy=self.policy,
            listeners=[self.events.append], timeout_ms=self.timeout_ms,
            concurrency=4, **self.worker_kwargs,
        )
        self.task = asyncio.ensure_future(self.worker.run())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.worker.close()
        await self.task
        await self.worker.ojs_handler.close()
        client = aioredis.from_url(self.url)
        keys = await client.keys(f"{{chasqui:{self.name}}}*")
        if keys:
            await client.delete(*keys)
        await client.aclose()
        await self.queue.close()

    def terminal(self, job_id: str) -> bool:
        decided = [e for e in self.events if e.job_id == job_id]
        return job_id in self.done or bool(decided and decided[-1].decision.action != "retry")

    async def landed(self, job_ids: tuple[str, ...]) -> bool:
        """Every job the engine dead-lettered is in ChasquiMQ's DLQ: the
        second hop, which ChasquiMQ takes after the handler returned."""
        last = {e.job_id: e.decision.action for e in self.events}  # each job's newest decision
        dead = {j for j in job_ids if last.get(j) == "dead_letter"}
        if not dead:
            return True
        return dead <= {r["job_id"] for r in await ojs_chasqui.dead_letters(self.queue, 1000)}

    async def settle(self, *job_ids: str, seconds: float = 20) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if all(self.terminal(j) for j in job_ids) and await self.landed(job_ids):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"jobs did not finish: {job_ids} {self.events}")


def always(failure: BaseException) -> Any:
    async def handler(job: Any) -> Any:
        raise failure
    return handler


POLICY = {"max_attempts": 3, "initial_interval": "PT0.1S", "backoff_coefficient": 2,
          "max_interval": "PT1S", "on_exhaustion": "dead_letter",
          "non_retryable_errors": ["validation.*"]}


def test_retries_follow_the_engine_and_the_dlq_entry_holds_the_history() -> None:
    async def main() -> None:
        async with Run(POLICY, always(JobError("external.timeout", message="slow"))) as run:
            await ojs_chasqui.enqueue(run.queue, "j", {"n": 1}, job_id="cj-1")
            await run.settle("cj-1")
            policy = RetryPolicy(POLICY)
            # max_attempts is exact; the handler's attempt is 0-based.
            assert [a for a, _ in run.starts["cj-1"]] == [0, 1, 2]
            got = [(e.attempt, e.decision.action, e.decision.reason, e.decision.delay_ms) for e in run.events]
            want = [(n, d.action, d.reason, d.delay_ms) for n in (1, 2, 3)
                    for d in [policy.decide(n, type="external.timeout", key="cj-1")]]
            assert got == want
            for event, (_, start) in zip(run.events, run.starts["cj-1"][1:]):
                gap, delay = start - event.at_ms, event.decision.delay_ms or 0
                assert delay <= gap <= delay + PRECISION_MS + SLACK_MS, (event.attempt, gap, delay)
            [record] = await ojs_chasqui.dead_letters(run.queue)
            assert record["job_id"] == "cj-1" and record["decision"]["reason"] == "exhausted"
            assert [e["attempt"] for e in record["retry_state"]["errors"]] == [1, 2, 3]
            assert record["job"]["data"] == {"n": 1}
            [entry] = await run.queue.peek_dlq(10)
            assert entry["reason"] == "unrecoverable"  # ChasquiMQ's own DLQ, by its own route
    asyncio.run(main())


def test_non_retryable_and_unrecoverable_go_to_on_exhaustion() -> None:
    async def handler(job: Any) -> Any:
        if job.data == "unrec":
            raise chasquimq.UnrecoverableError("poison")
        raise JobError("validation.bad_input")

    async def main() -> None:
        policy = {**POLICY, "non_retryable_errors": ["validation.*", "UnrecoverableError"]}
        async with Run(policy, handler) as run:
            await ojs_chasqui.enqueue(run.queue, "j", "bad", job_id="cj-2", ojs_retry_policy={"on_exhaustion": "discard"},
                                      defaults=policy)
            await ojs_chasqui.enqueue(run.queue, "j", "unrec", job_id="cj-3")
            await run.settle("cj-2", "cj-3")
            by_job = {e.job_id: e for e in run.events}
            assert (by_job["cj-2"].decision.action, by_job["cj-2"].decision.reason) == ("discard", "non_retryable")
            assert (by_job["cj-3"].decision.action, by_job["cj-3"].decision.reason) == ("dead_letter", "non_retryable")
            assert by_job["cj-3"].failure.type == "UnrecoverableError"
            assert [len(run.starts[j]) for j in ("cj-2", "cj-3")] == [1, 1]
            assert [r["job_id"] for r in await ojs_chasqui.dead_letters(run.queue)] == ["cj-3"]
    asyncio.run(main())


@pytest.mark.parametrize("code", ["RETRY", "DISCARD", "DEAD_LETTER", "FAIL"])
def test_each_handler_code(code: str) -> None:
    async def handler(job: Any) -> Any:
        if job.attempt == 0:
            raise JobError("validation.odd", code=code)  # type: ignore[arg-type]
        return "ok"

    async def main() -> None:
        async with Run(POLICY, handler) as run:
            await ojs_chasqui.enqueue(run.queue, "j", None, job_id="cj-c")
            await run.settle("cj-c")
            want = RetryPolicy(POLICY).decide(1, type="validation.odd", code=code, key="cj-c")  # type: ignore[arg-type]
            [event] = run.events
            assert (event.decision.action, event.decision.reason) == (want.action, want.reason)
            assert len(run.starts["cj-c"]) == (2 if want.action == "retry" else 1)
            assert ("cj-c" in run.done) == (want.action == "retry")
            dead = await ojs_chasqui.dead_letters(run.queue)
            assert len(dead) == (1 if want.action == "dead_letter" else 0)
    asyncio.run(main())


def test_a_job_added_by_plain_queue_add_runs_on_the_worker_defaults() -> None:
    async def main() -> None:
        async with Run(POLICY, always(JobError("external.timeout"))) as run:
            job = await run.queue.add("j", {"plain": True})  # no envelope, a ChasquiMQ-minted id
            await run.settle(job.id)
            policy = RetryPolicy(POLICY)
            assert [(e.job_id, e.attempt, e.decision.action, e.decision.delay_ms) for e in run.events] == [
                (job.id, n, d.action, d.delay_ms) for n in (1, 2, 3)
                for d in [policy.decide(n, type="external.timeout", key=job.id)]]
            [record] = await ojs_chasqui.dead_letters(run.queue)
            assert record["job"]["data"] == {"plain": True}
    asyncio.run(main())


def test_a_timed_out_run_counts_as_a_timed_out_attempt() -> None:
    async def handler(job: Any) -> Any:
        if job.attempt == 0:
            await asyncio.sleep(5)
        return "ok"

    async def main() -> None:
        async with Run(POLICY, handler, timeout_ms=200) as run:
            await ojs_chasqui.enqueue(run.queue, "j", None, job_id="cj-t")
            await run.settle("cj-t")
            [event] = run.events
            assert event.failure.timed_out and event.decision.action == "retry"
            assert [a for a, _ in run.starts["cj-t"]] == [0, 1]
    asyncio.run(main())


def test_a_bad_policy_is_refused_before_anything_reaches_redis() -> None:
    async def main() -> None:
        name = f"chq-bad-{uuid.uuid4().hex[:8]}"
        queue = chasquimq.Queue(name, redis_url=redis_url())
        with pytest.raises(ojs_retry.PolicyError) as err:
            await ojs_chasqui.enqueue(queue, "j", None, job_id="cj-bad", ojs_retry_policy={"initial_interval": "soon"},
                                      defaults=None)
        assert err.value.field == "initial_interval"
        with pytest.raises(ojs_retry.PolicyError):
            await ojs_chasqui.enqueue(queue, "j", None, ojs_retry_policy=RetryPolicy.preset("chasquimq"), defaults=POLICY)
        client = aioredis.from_url(redis_url())
        assert await client.keys(f"{{chasqui:{name}}}*") == []
        await client.aclose()
        await queue.close()
    asyncio.run(main())


KILLER = """
import asyncio, os, sys
from ojs_retry.integrations import chasquimq as ojs_chasqui
started = []
async def handler(job):
    started.append(job.id)
    print("started", job.id, flush=True)
    for _ in range(40):
        if len(started) == 2:
            os._exit(9)
        await asyncio.sleep(0.05)
    os._exit(9)
async def main():
    w = ojs_chasqui.worker(sys.argv[2], handler, redis_url=sys.argv[1], concurrency=2)
    await w.run()
asyncio.run(main())
"""


def test_a_killed_workers_job_counts_the_attempt_and_is_not_retried_past_the_limit() -> None:
    async def handler(job: Any) -> Any:
        return "ok"

    async def main() -> None:
        name = f"chq-kill-{uuid.uuid4().hex[:8]}"
        queue = chasquimq.Queue(name, redis_url=redis_url())
        await ojs_chasqui.enqueue(queue, "j", None, job_id="ck-1", ojs_retry_policy=POLICY, defaults=None)
        await ojs_chasqui.enqueue(queue, "j", None, job_id="ck-2", ojs_retry_policy={**POLICY, "max_attempts": 1},
                                  defaults=None)
        await queue.close()
        killer = subprocess.run([sys.executable, "-c", KILLER, redis_url(), name],
                                capture_output=True, text=True, timeout=60)
        assert killer.returncode == 9, killer.stderr
        assert sorted(killer.stdout.split()) == sorted("started ck-1 started ck-2".split())
        async with Run(POLICY, handler, name=name, claim_min_idle_ms=300) as run:
            await run.settle("ck-1", "ck-2")
            by_job = {e.job_id: e for e in run.events}
            lost = by_job["ck-1"]
            assert (lost.attempt, lost.failure.type, lost.failure.timed_out) == (1, "chasquimq.redelivered", True)
            assert lost.decision.action == "retry"
            assert [a for a, _ in run.starts["ck-1"]] == [1]  # attempt 2 ran here
            assert by_job["ck-2"].decision.action == "dead_letter"
            assert "ck-2" not in run.starts  # never run past its one attempt
            [record] = await ojs_chasqui.dead_letters(run.queue)
            assert record["retry_state"]["errors"][0]["type"] == "chasquimq.redelivered"
    asyncio.run(main())


# Presets in the real queue: with jitter off, a job on the engine with the
# chasquimq preset follows the same timeline as the same job under
# ChasquiMQ's native per-job retry options, same Redis. The native timeline
# is read from ChasquiMQ's own events stream (retry-scheduled, dlq).
NATIVE = {
    "cp-exp": (3, {"kind": "exponential", "delay_ms": 100, "max_delay_ms": 1000, "multiplier": 2.0, "jitter_ms": 0}),
    "cp-cap": (4, {"kind": "exponential", "delay_ms": 150, "max_delay_ms": 400, "multiplier": 3.0, "jitter_ms": 0}),
    "cp-fix": (2, {"kind": "fixed", "delay_ms": 120, "max_delay_ms": 1000, "multiplier": 2.0, "jitter_ms": 0}),
    "cp-unrec": (5, {"kind": "fixed", "delay_ms": 100, "max_delay_ms": 1000, "multiplier": 2.0, "jitter_ms": 0}),
}


async def _fail(job: Any) -> Any:
    if job.id == "cp-unrec":
        raise chasquimq.UnrecoverableError("poison")
    raise RuntimeError("boom")


def _native_rows(events: list[tuple[bytes, dict[bytes, bytes]]]) -> dict[str, list[tuple[int, str, int | None]]]:
    rows: dict[str, list[tuple[int, str, int | None]]] = {}
    for _, fields in events:
        kind, job_id = fields[b"e"].decode(), fields[b"id"].decode()
        if kind == "retry-scheduled":
            rows.setdefault(job_id, []).append((int(fields[b"attempt"]) - 1, "retry", int(fields[b"backoff_ms"])))
        elif kind == "dlq":
            rows.setdefault(job_id, []).append((int(fields[b"attempt"]), "dead_letter", None))
    return rows


async def _native_timelines() -> dict[str, list[tuple[int, str, int | None]]]:
    name, url = f"chq-native-{uuid.uuid4().hex[:8]}", redis_url()
    queue = chasquimq.Queue(name, redis_url=url)
    worker = chasquimq.Worker(name, _fail, redis_url=url, concurrency=4)
    task = asyncio.ensure_future(worker.run())
    for job_id, (attempts, backoff) in NATIVE.items():
        await queue.add("j", None, job_id=job_id, attempts=attempts, backoff=backoff)
    client = aioredis.from_url(url)
    deadline = time.monotonic() + 20
    while True:
        rows = _native_rows(await client.xrange(f"{{chasqui:{name}}}:events"))
        if all(rows.get(j) and rows[j][-1][1] == "dead_letter" for j in NATIVE):
            break
        assert time.monotonic() < deadline, rows
        await asyncio.sleep(0.05)
    await worker.close()
    await task
    await client.delete(*await client.keys(f"{{chasqui:{name}}}*"))
    await client.aclose()
    await queue.close()
    return rows


def test_the_chasquimq_preset_runs_like_chasquimq_itself() -> None:
    async def main() -> None:
        native = await _native_timelines()
        async with Run(None, _fail) as run:
            for job_id, (attempts, backoff) in NATIVE.items():
                preset = RetryPolicy.preset("chasquimq", {"runtime": "python", "max_attempts": attempts, **backoff})
                await ojs_chasqui.enqueue(run.queue, "j", None, job_id=job_id, ojs_retry_policy=preset,
                                          defaults=None)
            await run.settle(*NATIVE)
            engine: dict[str, list[tuple[int, str, int | None]]] = {}
            for e in run.events:
                engine.setdefault(e.job_id, []).append((e.attempt, e.decision.action, e.decision.delay_ms))
            assert engine == native
            assert native["cp-cap"] == [(1, "retry", 150), (2, "retry", 400), (3, "retry", 400), (4, "dead_letter", None)]
    asyncio.run(main())


def _clean_payments() -> None:
    """Removes the keys of the queue ``payments`` the example and the docs use."""
    async def clean() -> None:
        client = aioredis.from_url(redis_url())
        keys = await client.keys("{chasqui:payments}*")
        if keys:
            await client.delete(*keys)
        await client.aclose()

    asyncio.run(clean())


def test_the_example_runs() -> None:
    from pathlib import Path

    _clean_payments()
    example = Path(__file__).resolve().parents[3] / "examples" / "queues" / "chasquimq_worker.py"
    env = {**os.environ, "REDIS86_URL": redis_url()}
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=60, env=env)
    _clean_payments()
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pay-1", "dead_letter", "handler_code"]


def test_the_docs_blocks_run() -> None:
    """The blocks marked ``<!-- run: tests/queues/python/test_chasquimq.py -->``
    (tests/docs/fences.py: the ChasquiMQ section's example) run as written on
    the Redis >= 8.6, only its address replaced (in this process: ChasquiMQ's
    native module can crash at interpreter teardown), and print their output
    blocks."""
    import contextlib
    import io

    import fences

    blocks = fences.run_by("tests/queues/python/test_chasquimq.py")
    assert blocks, "the ChasquiMQ section's example is marked for this test"
    for block, output in blocks:
        assert '"redis://127.0.0.1:6379"' in block.code, block.where
        code = block.code.replace('"redis://127.0.0.1:6379"', repr(redis_url()))
        _clean_payments()
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(code, block.where, "exec"), {"__name__": f"docs_{block.line}"})  # noqa: S102
        finally:
            _clean_payments()
        assert output is not None, f"{block.where} shows what it prints"
        assert printed.getvalue() == output.code, f"{block.where} printed {printed.getvalue()!r}"


# Failure-time cases (issue 25): the cases of tests/queues/bullmq-failure-time.json
# that do not depend on BullMQ's job hash run as they are (a producer on
# ChasquiMQ's plain Queue.add writes the envelope itself, unvalidated); the
# stored-state cases carry their state where ChasquiMQ jobs carry it, in the
# envelope. Each job ends in the outcome the case defines, never in
# ChasquiMQ's own retry, and the worker keeps running.
SHARED = {c["id"]: c for c in FAILURE_CASES}
#: ChasquiMQ's promoter ticks every 100 ms: eleven retries take a few seconds.
FT_DEADLINE_S = 60
BEHIND = ('{"attempt":1,"errors":[{"attempt":1,"type":"net.reset","message":"","code":"RETRY",'
          '"timestamp":"2026-02-12T10:31:05.000Z"}],"next_retry_at":null,"terminal":null}')
#: The stored-state cases: the envelope says two attempts were made (the
#: next run is attempt 3) and carries a state behind that, or none readable.
ENVELOPED = {
    "state-behind-counter": ({"attempts": 2, "state": BEHIND}, ["state_rebased"]),
    "state-unreadable": ({"attempts": 2, "state": "not json {"}, ["state_unreadable"]),
}


def ft_player(outcomes: list[dict[str, Any]]) -> Any:
    async def handler(job: Any) -> Any:
        attempt = job.attempt + 1
        if attempt > len(outcomes) or not outcomes:
            return "ok"
        o = outcomes[attempt - 1]
        raise JobError(o["type"], message=expand(o.get("message")))
    return handler


def plain_envelope(data: Any, layer: str | None, **meta: Any) -> dict[str, Any]:
    """What a producer on ChasquiMQ's plain API writes: no validation."""
    return {ojs_chasqui.ENVELOPE_KEY: {"id": "j", "policy": layer, "attempts": 0, "state": None, **meta}, "data": data}


async def finish(run: Run) -> None:
    """The worker still runs and decides: a good job completes."""
    await run.queue.add("job", {}, job_id="after")
    await run.settle("after", seconds=FT_DEADLINE_S)
    assert run.done.get("after") == "ok"
    assert not run.task.done()


SHARED_IDS = ["refused-layer-plain-add", "refused-layer-other-defaults", "message-70000", "lone-surrogate",
              "eleven-maximal-failures"]


@pytest.mark.parametrize("case_id", SHARED_IDS)
def test_shared_failure_time_case(case_id: str) -> None:
    case = SHARED[case_id]
    want = case["expect"]

    async def main() -> None:
        async with Run(case["defaults"], ft_player(case["outcomes"])) as run:
            if case["enqueue"] == "helper":
                await ojs_chasqui.enqueue(run.queue, "job", {}, job_id="j", ojs_retry_policy=case["layer"],
                                          defaults=case["producer_defaults"])
            else:
                await run.queue.add("job", plain_envelope({}, case.get("layer")), job_id="j")
            await run.settle("j", seconds=FT_DEADLINE_S)
            assert len(run.starts["j"]) == want["runs"]
            mine = [e for e in run.events if e.job_id == "j"]
            assert len(mine) == len(want["decisions"])
            for i, (e, (action, reason, notes)) in enumerate(zip(mine, want["decisions"])):
                assert (e.decision.action, e.decision.reason) == (action, reason), i + 1
                kinds = [k for k, _ in e.notes]
                assert all(k in kinds for k in notes), (i + 1, notes, kinds)
            if want["end"] == "completed":
                assert run.done.get("j") == "ok"
            dead = await ojs_chasqui.dead_letters(run.queue)
            assert [r["reason"] for r in dead] == ([] if want["dead_letter"] is None else [want["dead_letter"]])
            await finish(run)
    asyncio.run(main())


@pytest.mark.parametrize("case_id", sorted(ENVELOPED))
def test_a_carried_state_behind_or_unreadable_is_rebased(case_id: str) -> None:
    meta, notes = ENVELOPED[case_id]

    async def main() -> None:
        defaults = {"max_attempts": 5, "initial_interval": "PT0.05S", "jitter": False}
        async with Run(defaults, ft_player([{"type": "net.reset"}] * 3)) as run:
            await run.queue.add("job", plain_envelope({}, None, **meta), job_id="j")
            await run.settle("j", seconds=FT_DEADLINE_S)
            [event] = [e for e in run.events if e.job_id == "j"]
            assert (event.attempt, event.decision.action) == (3, "retry")
            assert [k for k, _ in event.notes] == notes
            assert run.done.get("j") == "ok"
            await finish(run)
    asyncio.run(main())
