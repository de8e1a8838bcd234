"""Failure-time cases on ChasquiMQ (issue 25), on a real redis-server >= 8.6.

The cases of ``tests/queues/bullmq-failure-time.json`` that do not depend on
BullMQ's job hash run as they are (a producer on ChasquiMQ's plain
``Queue.add`` writes the envelope itself, unvalidated); the stored-state
cases carry their state where ChasquiMQ jobs carry it, in the envelope.
Each job ends in the outcome the case defines, never in ChasquiMQ's own
retry, and the worker keeps running (a good job completes after every case).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ojs_retry.integrations import JobError
from ojs_retry.integrations import chasquimq as ojs_chasqui

from test_bullmq_failure_time import expand
from test_chasquimq import Run

SHARED = {c["id"]: c for c in json.loads(
    (Path(__file__).resolve().parent.parent / "bullmq-failure-time.json").read_text("utf-8"))["cases"]}
#: ChasquiMQ's promoter ticks every 100 ms: eleven retries take a few seconds.
DEADLINE_S = 60
BEHIND = ('{"attempt":1,"errors":[{"attempt":1,"type":"net.reset","message":"","code":"RETRY",'
          '"timestamp":"2026-02-12T10:31:05.000Z"}],"next_retry_at":null,"terminal":null}')
#: The stored-state cases: the envelope says two attempts were made (the
#: next run is attempt 3) and carries a state behind that, or none readable.
ENVELOPED = {
    "state-behind-counter": ({"attempts": 2, "state": BEHIND}, ["state_rebased"]),
    "state-unreadable": ({"attempts": 2, "state": "not json {"}, ["state_unreadable"]),
}


def player(outcomes: list[dict[str, Any]]) -> Any:
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
    await run.settle("after", seconds=DEADLINE_S)
    assert run.done.get("after") == "ok"
    assert not run.task.done()


SHARED_IDS = ["refused-layer-plain-add", "refused-layer-other-defaults", "message-70000", "lone-surrogate",
              "eleven-maximal-failures"]


@pytest.mark.parametrize("case_id", SHARED_IDS)
def test_shared_failure_time_case(case_id: str) -> None:
    case = SHARED[case_id]
    want = case["expect"]

    async def main() -> None:
        async with Run(case["defaults"], player(case["outcomes"])) as run:
            if case["enqueue"] == "helper":
                await ojs_chasqui.enqueue(run.queue, "job", {}, job_id="j", policy=case["layer"],
                                          defaults=case["producer_defaults"])
            else:
                await run.queue.add("job", plain_envelope({}, case.get("layer")), job_id="j")
            await run.settle("j", seconds=DEADLINE_S)
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
        async with Run(defaults, player([{"type": "net.reset"}] * 3)) as run:
            await run.queue.add("job", plain_envelope({}, None, **meta), job_id="j")
            await run.settle("j", seconds=DEADLINE_S)
            [event] = [e for e in run.events if e.job_id == "j"]
            assert (event.attempt, event.decision.action) == (3, "retry")
            assert [k for k, _ in event.notes] == notes
            assert run.done.get("j") == "ok"
            await finish(run)
    asyncio.run(main())
