"""The one-line adoption of BullMQ for Python, on the real queue.

The same app — the same producer (a plain ``queue.add`` with BullMQ's own
``attempts`` / ``backoff``), the same jobs, the same failures — runs once
under a plain ``bullmq.Worker`` (BullMQ's own retries) and once under
``ojs_retry.integrations.bullmq.worker`` given no policy, on the same Redis.
What BullMQ did with every run must be identical: each delay it scheduled,
the attempts made, the end (failed set or completed). BullMQ for Python has
no jitter, so nothing needs pinning; ``exponential`` with a ``.5`` product
checks Python's ``round`` (ties to even) on both sides.

Needs what test_bullmq.py needs (``OJS_REDIS_URL``, the pinned ``bullmq``);
the timeline machinery is that file's, shared with the presets-in-queue test.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import bullmq
import pytest
from test_bullmq import Run, bullmq_timelines, native_worker

from ojs_retry import PolicyError, RetryPolicy
from ojs_retry.integrations import bullmq as ojs_bullmq

# Per job: the producer's BullMQ options and what attempt n does
# (script[n - 1]: "fail" or "unrecoverable"; past the end it succeeds).
JOBS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "ad-tie": ({"attempts": 4, "backoff": {"type": "exponential", "delay": 2.5}}, ["fail"] * 4),
    "ad-exp": ({"attempts": 3, "backoff": {"type": "exponential", "delay": 90}}, ["fail"] * 3),
    "ad-fixed": ({"attempts": 4, "backoff": 120}, ["fail", "fail"]),
    "ad-fixed-obj": ({"attempts": 2, "backoff": {"type": "fixed", "delay": 100}}, ["fail"] * 2),
    "ad-unrec": ({"attempts": 5, "backoff": {"type": "fixed", "delay": 50}}, ["fail", "unrecoverable"]),
    "ad-none": ({}, ["fail"]),
}
OPTIONS = {job_id: opts for job_id, (opts, _) in JOBS.items()}


async def play(job: Any) -> Any:
    script = JOBS[job.id][1]
    what = script[job.attemptsMade] if job.attemptsMade < len(script) else "succeed"
    if what == "fail":
        raise RuntimeError(f"attempt {job.attemptsMade + 1} failed")
    if what == "unrecoverable":
        raise bullmq.UnrecoverableError("gave up")
    return "done"


dead_lettered: list[str] = []


def told(event: Any) -> None:
    if event.decision.action == "dead_letter":
        dead_lettered.append(event.job_id)


def adopted_worker(name: str, url: str, proc: Any) -> Any:
    """The one line: the integration's worker, given no policy."""
    return ojs_bullmq.worker(name, proc, {"connection": url, "concurrency": 4}, listeners=[told])


def test_a_worker_given_no_policy_runs_bullmq_jobs_as_bullmq_does() -> None:
    async def main() -> tuple[Any, Any]:
        return await asyncio.gather(bullmq_timelines(OPTIONS, play, native_worker),
                                    bullmq_timelines(OPTIONS, play, adopted_worker))

    native, adopted = asyncio.run(main())
    # The native run did what each job's options say (the test's own check).
    assert native["ad-tie"] == [(1, "retry", 2), (2, "retry", 5), (3, "retry", 10), (4, "dead_letter", None)]
    assert native["ad-fixed"] == [(1, "retry", 120), (2, "retry", 120), (3, "completed", None)]
    assert native["ad-none"] == [(1, "dead_letter", None)]
    for job_id in JOBS:
        assert adopted[job_id] == native[job_id], job_id
    # What the engine adds: a dead-letter record of each job BullMQ failed.
    failed = sorted(j for j in JOBS if native[j][-1][1] == "dead_letter")
    assert sorted(dead_lettered) == failed


def test_a_custom_backoff_type_is_dead_lettered_with_the_reason() -> None:
    """The preset cannot read a custom strategy (code): the first failure
    is dead-lettered, reason policy_invalid naming the field — never
    BullMQ's own retry, never a crash."""
    async def boom(job: Any) -> Any:
        raise RuntimeError("boom")

    async def main() -> None:
        async with Run(None, boom) as run:
            await run.queue.add("j", None, {"jobId": "c", "attempts": 5, "backoff": {"type": "mine", "delay": 10}})
            assert await run.settle("c") == "failed"
            assert [(e.attempt, e.decision.action) for e in run.events] == [(1, "dead_letter")]
            [record] = await run.dead()
            assert record["reason"] == "policy_invalid"
            assert any(n["kind"] == "policy_refused" and "preset.backoff.type" in n["message"]
                       for n in record["notes"]), record["notes"]
    asyncio.run(main())


def test_the_adoption_document_is_the_jobs_own_options() -> None:
    def doc(opts: dict[str, Any]) -> Any:
        text = ojs_bullmq.adoption_text(opts)
        assert text is not None
        return json.loads(text)["preset"]

    assert doc({"attempts": 4, "backoff": {"type": "exponential", "delay": 2.5, "extra": 1}}) == {
        "system": "bullmq", "runtime": "python", "attempts": 4, "backoff": {"type": "exponential", "delay": 2.5}}
    assert doc({})["attempts"] == 0 and doc({})["backoff"] is None
    assert ojs_bullmq.adoption_text(ojs_bullmq.job_options()) is None  # enqueued for the engine: the spec's defaults
    # Values one dict key would confuse are never one cached document.
    fixed = {"type": "fixed", "delay": 5}
    assert doc({"attempts": True, "backoff": fixed})["attempts"] is True
    assert type(doc({"attempts": 1, "backoff": fixed})["attempts"]) is int
    with pytest.raises(PolicyError):
        RetryPolicy(ojs_bullmq.adoption_text({"attempts": True, "backoff": fixed}))
