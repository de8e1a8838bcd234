"""ChasquiMQ on an OJS policy (docs/integrations.md; Redis >= 8.6)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from chasquimq import Queue

from ojs_retry.integrations import DecisionEvent, JobError
from ojs_retry.integrations import chasquimq as ojs_chasqui

URL = os.environ.get("REDIS86_URL", "redis://127.0.0.1:6379/0")
DEFAULTS = {"max_attempts": 5, "initial_interval": "PT0.1S", "non_retryable_errors": ["validation.*"],
            "on_exhaustion": "dead_letter"}


async def charge(job: Any) -> None:
    # job.id is the OJS id, job.data your data, job.attempt 0-based.
    if job.data["card"] == "stolen":
        raise JobError("payment.card_stolen", code="DEAD_LETTER")


async def main() -> None:
    queue = Queue("payments", redis_url=URL)
    decided = asyncio.Event()

    def seen(event: DecisionEvent) -> None:
        if event.decision.action != "retry":
            decided.set()

    await ojs_chasqui.enqueue(queue, "charge", {"card": "stolen"}, job_id="pay-1",
                              ojs_retry_policy={"max_attempts": 3}, defaults=DEFAULTS)
    worker = ojs_chasqui.worker("payments", charge, redis_url=URL, ojs_retry_policy=DEFAULTS,
                                listeners=[seen], concurrency=10)
    task = asyncio.ensure_future(worker.run())
    await decided.wait()
    while not await ojs_chasqui.dead_letters(queue):  # the dead letter's second hop
        await asyncio.sleep(0.05)
    await worker.close()
    await task
    await worker.ojs_handler.close()
    for record in await ojs_chasqui.dead_letters(queue):
        print(record["job_id"], record["decision"]["action"], record["decision"]["reason"])
    await queue.close()


if __name__ == "__main__":
    asyncio.run(main())
    os._exit(0)  # ChasquiMQ 1.3.0's native module can crash at interpreter teardown
