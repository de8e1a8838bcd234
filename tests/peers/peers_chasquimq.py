"""Compares the chasquimq preset with ChasquiMQ's real worker on a real Redis.

Run by scripts/test-peers with the pinned chasquimq wheel on sys.path, the
`ojs_retry` module importable and OJS_PEERS_REDIS_URL naming a Redis >= 8.6
it started. Each case enqueues one job on a queue of its own whose handler
always fails, lets the real `Worker` retry it until it lands in the DLQ, and
compares with the preset:

* the number of runs (0 when the preset's `max_attempts` is 0: ChasquiMQ
  sends such a job to the DLQ before it runs; otherwise the first failed
  attempt the preset does not retry), and the handler's 0-based
  `job.attempt` at each run;
* the terminal place and reason (the DLQ entry's and the `dlq` event's
  `retries_exhausted` / `unrecoverable` against the preset's `exhausted` /
  `non_retryable`), and the `dlq` event's 1-based attempt;
* every `retry-scheduled` event: its 1-based next attempt, and its
  `backoff_ms` inside the preset's range for that retry (u = 0 to just
  below 1).

The cases run at once, each with millisecond delays; ChasquiMQ's promoter
polls its delayed set every 100 ms, so a run takes a few seconds. The last
line is "N passed, N failed".
"""
import asyncio
import importlib.metadata
import os
import sys

import redis.asyncio as aioredis
from chasquimq import BackoffSpec, Queue, UnrecoverableError, Worker

import ojs_retry as o

URL = os.environ["OJS_PEERS_REDIS_URL"]
U_HIGH = 0.9999999999999999
# A bound on waiting for one job to reach the DLQ (a hang fails the case).
WAIT_STEPS, WAIT_S = 600, 0.05

checked = 0
failures = []


def check(what, peer, ours):
    global checked
    checked += 1
    if peer != ours:
        failures.append(f"{what}: peer {peer!r}, preset {ours!r}")


class Poison(UnrecoverableError):
    """A subclass: ChasquiMQ recognises UnrecoverableError by class."""


class Boom(BaseException):
    """Not an Exception: what the Python handler has closest to a panic."""


REASONS = {"retries_exhausted": "exhausted", "unrecoverable": "non_retryable"}

# name, Queue.add options, Worker options, the handler's error, the preset's
# options, the error type the preset is told.
CASES = [
    ("defaults-backoff", {"attempts": 4}, {}, RuntimeError("x"), {"max_attempts": 4}, None),
    ("defaults-python-worker", {"backoff": BackoffSpec.fixed(1, jitter_ms=0)}, {}, RuntimeError("x"),
     {"runtime": "python", "kind": "fixed", "delay_ms": 1, "jitter_ms": 0}, None),
    ("exponential", {"attempts": 4, "backoff": BackoffSpec.exponential(20, multiplier=3.0, max_ms=1000, jitter_ms=15)},
     {}, RuntimeError("x"),
     {"max_attempts": 4, "delay_ms": 20, "multiplier": 3.0, "max_delay_ms": 1000, "jitter_ms": 15}, None),
    ("fixed", {"attempts": 3, "backoff": BackoffSpec.fixed(30, jitter_ms=10)}, {}, RuntimeError("x"),
     {"max_attempts": 3, "kind": "fixed", "delay_ms": 30, "jitter_ms": 10}, None),
    ("cap", {"attempts": 5, "backoff": BackoffSpec.exponential(50, multiplier=2.0, max_ms=120, jitter_ms=25)},
     {}, RuntimeError("x"),
     {"max_attempts": 5, "delay_ms": 50, "max_delay_ms": 120, "jitter_ms": 25}, None),
    ("worker-max-attempts", {"backoff": BackoffSpec.fixed(5, jitter_ms=5)}, {"max_attempts": 2}, RuntimeError("x"),
     {"max_attempts": 2, "kind": "fixed", "delay_ms": 5, "jitter_ms": 5}, None),
    ("attempts-0", {"attempts": 0}, {}, RuntimeError("x"), {"max_attempts": 0}, None),
    ("attempts-1", {"attempts": 1}, {}, RuntimeError("x"), {"max_attempts": 1}, None),
    ("attempts-3", {"attempts": 3, "backoff": BackoffSpec.fixed(5, jitter_ms=5)}, {}, RuntimeError("x"),
     {"max_attempts": 3, "kind": "fixed", "delay_ms": 5, "jitter_ms": 5}, None),
    ("unrecoverable", {"attempts": 3}, {}, UnrecoverableError("no"), {"max_attempts": 3}, "UnrecoverableError"),
    # The integration reports the class ChasquiMQ recognised (isinstance).
    ("unrecoverable-subclass", {"attempts": 3}, {}, Poison("no"), {"max_attempts": 3}, "UnrecoverableError"),
    ("panic", {"attempts": 2, "backoff": BackoffSpec.fixed(5, jitter_ms=5)}, {}, Boom("b"),
     {"max_attempts": 2, "kind": "fixed", "delay_ms": 5, "jitter_ms": 5}, "panic"),
]


async def run_real(name, add_options, worker_options, error):
    """Runs the job on the real worker until it is in the DLQ: the handler's
    attempts, the DLQ entries and the job's events."""
    queue_name = f"peers-{name}-{os.getpid()}"
    attempts = []

    async def handler(job):
        attempts.append(job.attempt)
        raise error

    queue = Queue(queue_name, redis_url=URL)
    worker = Worker(queue_name, handler, redis_url=URL, concurrency=1, **worker_options)
    running = asyncio.ensure_future(worker.run())
    r = aioredis.from_url(URL)
    try:
        job = await queue.add("t", {"case": name}, **add_options)
        dlq, events = [], []
        for _ in range(WAIT_STEPS):
            dlq = await queue.peek_dlq(10)
            raw = await r.xrange(f"{{chasqui:{queue_name}}}:events")
            events = [{k.decode(): v.decode() for k, v in e.items()} for _, e in raw]
            events = [e for e in events if e.get("id") == job.id]
            if dlq and any(e["e"] == "dlq" for e in events):
                break
            await asyncio.sleep(WAIT_S)
        return attempts, dlq, events
    finally:
        await worker.close()
        await asyncio.wait_for(running, 10)
        await queue.close()
        await r.aclose()


def preset_runs(p, error_type):
    """The runs the preset allows, and its terminal decision."""
    if p.max_attempts == 0:
        return 0, p.decide(1, now=0, u=0.5, type=error_type)
    n = 1
    while True:
        d = p.decide(n, now=0, u=0.5, type=error_type)
        if d.action != "retry":
            return n, d
        n += 1


async def run_case(name, add_options, worker_options, error, options, error_type):
    attempts, dlq, events = await run_real(name, add_options, worker_options, error)
    p = o.RetryPolicy.preset("chasquimq", options)
    runs, last = preset_runs(p, error_type)
    check(f"{name}: runs", len(attempts), runs)
    check(f"{name}: job.attempt at each run (0-based)", attempts, list(range(runs)))
    check(f"{name}: terminal place", "dead_letter" if len(dlq) == 1 else f"{len(dlq)} DLQ entries", last.action)
    reason = REASONS.get(dlq[0]["reason"], dlq[0]["reason"]) if dlq else None
    check(f"{name}: terminal reason", reason, last.reason)
    dlq_events = [e for e in events if e["e"] == "dlq"]
    check(f"{name}: dlq event (1-based attempt, reason)",
          [(int(e["attempt"]), REASONS.get(e["reason"])) for e in dlq_events], [(runs, last.reason)])
    failed = [int(e["attempt"]) for e in events if e["e"] == "failed"]
    check(f"{name}: failed events (1-based)", failed, list(range(1, runs + 1)))
    scheduled = [e for e in events if e["e"] == "retry-scheduled"]
    check(f"{name}: retry-scheduled events", len(scheduled), max(runs - 1, 0))
    for n, e in enumerate(scheduled, start=1):
        check(f"{name}: retry {n} decided", p.decide(n, now=0, u=0.5, type=error_type).action, "retry")
        check(f"{name}: retry {n} next attempt (1-based)", int(e["attempt"]), n + 1)
        lo, hi = p.delay(n, u=0.0), p.delay(n, u=U_HIGH)
        backoff = int(e["backoff_ms"])
        check(f"{name}: retry {n} backoff_ms {backoff} in the preset's [{lo}, {hi}]", True, lo <= backoff <= hi)


async def main():
    results = await asyncio.gather(*(run_case(*case) for case in CASES), return_exceptions=True)
    for case, result in zip(CASES, results):
        if isinstance(result, BaseException):
            failures.append(f"{case[0]}: {result!r}")
    r = aioredis.from_url(URL)
    info = await r.info("server")
    await r.aclose()
    return info["redis_version"]


redis_version = asyncio.run(main())
version = importlib.metadata.version("chasquimq")
print(f"peers-chasquimq (chasquimq {version}, redis {redis_version}): "
      f"{checked - len(failures)} passed, {len(failures)} failed")
for f in failures[:40]:
    print("  " + f)
sys.exit(1 if failures or checked < 100 else 0)
