"""The failure-time cases of the BullMQ protocol on BullMQ for Python.

The same cases as BullMQ for Node (``tests/queues/bullmq-failure-time.json``,
``docs/bullmq-protocol.md``), on a real redis-server (``OJS_REDIS_URL``,
started by scripts/test-queues) with an in-process worker: each job ends in
the outcome the case defines, and the worker keeps running (a good job
completes after every case).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import ojs_retry
from ojs_retry.integrations import JobError
from ojs_retry.integrations import bullmq as ojs_bullmq

import bullmq
from failure_time import CASES, expand, well_formed
from test_bullmq import Run

#: The overall deadline of one job (BullMQ for Python's idle worker blocks in
#: whole seconds: eleven retries take about eleven).
DEADLINE_S = 60


def player(case: dict[str, Any]) -> Any:
    async def handler(job: Any) -> Any:
        attempt = job.attemptsMade + 1 + job.stalledCounter
        outcomes = job.data.get("outcomes") or []
        if attempt > len(outcomes):
            return "ok"
        o = outcomes[attempt - 1]
        if "plant_state" in o:
            worker = job.queue
            await worker.client.hset(f"{worker.keys['']}{job.id}", ojs_bullmq.STATE_KEY, o["plant_state"])
        raise JobError(o["type"], message=expand(o.get("message")))
    return handler


async def enqueue(case: dict[str, Any], queue: Any) -> None:
    data = {"outcomes": case["outcomes"]}
    if case["enqueue"] == "helper":
        await ojs_bullmq.enqueue(queue, "job", data, {"jobId": "j"}, ojs_retry_policy=case["layer"],
                                 defaults=case["producer_defaults"])
        return
    # A producer on the queue's plain API: whatever it put in the options.
    opts: dict[str, Any] = {"jobId": "j"}
    if "layer" in case:
        opts[ojs_bullmq.POLICY_KEY] = case["layer"]
    await queue.add("job", data, opts)


async def enqueue_stalled(case: dict[str, Any], run: Run) -> None:
    """Stalls BullMQ counted before any worker took the job: added and marked
    before the run's worker starts."""
    queue = bullmq.Queue(run.name, {"connection": run.url})
    await queue.add("job", {"outcomes": case["outcomes"]}, {"jobId": "j"})
    await queue.client.hset(f"bull:{run.name}:j", "stc", str(case["stalled"]))
    await queue.close()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_failure_time(case: dict[str, Any]) -> None:
    async def main() -> None:
        run = Run(case["defaults"], player(case))
        if "stalled" in case:
            await enqueue_stalled(case, run)
        async with run:
            if "stalled" not in case:
                await enqueue(case, run.queue)
            want = case["expect"]
            assert await run.settle("j", DEADLINE_S) == want["end"]
            assert len(run.starts.get("j", [])) == want["runs"]
            mine = [e for e in run.events if e.job_id == "j"]
            assert len(mine) == len(want["decisions"])
            for i, (e, (action, reason, notes)) in enumerate(zip(mine, want["decisions"])):
                assert (e.decision.action, e.decision.reason) == (action, reason), i + 1
                kinds = [k for k, _ in e.notes]
                assert all(k in kinds for k in notes), (i + 1, notes, kinds)
            # The stored state: the engine's text, which reads back.
            text = (await run.client.hget(f"bull:{run.name}:j", ojs_bullmq.STATE_KEY)).decode("utf-8")
            assert len(text.encode("utf-8")) <= 1 << 20
            state = ojs_retry.RetryState.from_json(text)
            assert state.to_json() == text
            assert (state.attempt, len(state.errors)) == (want["state"]["attempt"], want["state"]["errors"])
            if "last_message" in want:
                assert state.errors[-1]["message"] == well_formed(expand(want["last_message"]))
            dead = [r["reason"] for r in await run.dead()]
            assert dead == ([] if want["dead_letter"] is None else [want["dead_letter"]])
            # The worker still runs and decides: a good job completes.
            await run.queue.add("job", {}, {"jobId": "after"})
            assert await run.settle("after", DEADLINE_S) == "completed"
            assert run.worker.running
    asyncio.run(main())


def test_the_protocol_is_written_once() -> None:
    """Both bindings embed the protocol's one write, as docs/bullmq-protocol.md states it."""
    root = Path(__file__).resolve().parents[3]
    doc = (root / "docs" / "bullmq-protocol.md").read_text("utf-8")
    script = doc.split("```lua\n", 1)[1].split("```", 1)[0].strip()
    node = (root / "bindings-node" / "bullmq.js").read_text("utf-8")
    assert script == node.split("const WRITE_LUA = `\n", 1)[1].split("`", 1)[0].strip()
    assert script == ojs_bullmq._WRITE_LUA.strip()
    for field in (ojs_bullmq.STATE_KEY, ojs_bullmq._STALLS_FIELD, ojs_bullmq.POLICY_KEY):
        assert f"`{field}`" in doc and f"'{field}'" in (root / "bindings-node" / "bullmq-core.js").read_text("utf-8")
    assert bullmq is not None
