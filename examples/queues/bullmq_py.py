"""BullMQ for Python on an OJS policy (docs/integrations.md)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from bullmq import Queue

from ojs_retry.integrations import JobError
from ojs_retry.integrations import bullmq as ojs_bullmq

URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
DEFAULTS = {"max_attempts": 5, "initial_interval": "PT0.1S", "non_retryable_errors": ["validation.*"],
            "on_exhaustion": "dead_letter"}


async def charge(job: Any, token: str) -> str:
    if job.data["card"] == "stolen":
        raise JobError("payment.card_stolen", code="DEAD_LETTER")
    return "charged"


async def main() -> None:
    queue = Queue("payments", {"connection": URL})
    # Validated here (RET-16): a bad layer raises PolicyError before Redis sees the job.
    await ojs_bullmq.enqueue(queue, "charge", {"card": "stolen"}, {"jobId": "pay-1"},
                             ojs_retry_policy={"max_attempts": 3}, defaults=DEFAULTS)
    worker = ojs_bullmq.worker("payments", charge, {"connection": URL}, ojs_retry_policy=DEFAULTS)
    while await queue.getJobState("pay-1") not in ("completed", "failed"):
        await asyncio.sleep(0.05)
    await worker.close()
    for record in await ojs_bullmq.dead_letters(queue.client, "payments"):
        print(record["job_id"], record["decision"]["action"], record["decision"]["reason"])
    await queue.obliterate(force=True)
    await queue.client.delete(ojs_bullmq.dead_letter_key("payments"))
    await queue.close()


if __name__ == "__main__":
    asyncio.run(main())
