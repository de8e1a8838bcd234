"""Compares the presets with the real Celery, RQ, Dramatiq, botocore and
BullMQ for Python.

Run by scripts/test-peers with the pinned packages on sys.path and the
`ojs_retry` wheel importable. For attempts 1..30 and the peer's random
source pinned low, middle and high, the peer's own code computes the delay
and the terminal decision, and the preset must agree. Each peer's random
call is replaced by the documented function of one sample u (docs/presets.md):
Python `random.random()` = u (so `uniform(a, b)` = a + (b - a) u), and
`randrange(n)` = floor(n u), computed exactly from the 53-bit sample.
"""
import asyncio
import importlib.metadata
import logging
import random
import sys
import types

import ojs_retry as o

logging.disable(logging.CRITICAL)  # the peers log every retry

US = (0.0, 0.5, 0.9999999999999999)
ATTEMPTS = range(1, 31)
checked = 0
failures = []


def k_of(u):
    return int(u * 2**53)


def check(what, peer, ours):
    global checked
    checked += 1
    if peer != ours:
        failures.append(f"{what}: peer {peer!r}, preset {ours!r}")


def action(policy, n, u, **kw):
    d = policy.decide(n, now=0, u=u, **kw)
    return d.action, d.delay_ms


# ---------------------------------------------------------------- Celery
import celery  # noqa: E402
import celery.utils.time as ctime  # noqa: E402
from celery import Celery  # noqa: E402
from celery.exceptions import MaxRetriesExceededError, Retry  # noqa: E402


def celery_delays():
    for backoff, maximum, jitter in ((True, 600, True), (3, 100, True), (1, 600, False), (2.7, 50, True)):
        cfg = {"retry_backoff": backoff, "retry_backoff_max": maximum, "retry_jitter": jitter, "max_retries": None}
        p = o.RetryPolicy.preset("celery", cfg)
        for u in US:
            k = k_of(u)
            ctime.random.randrange = lambda stop, k=k: (stop * k) >> 53
            for n in ATTEMPTS:
                # autoretry: factor=int(max(1.0, retry_backoff)), retries=request.retries
                peer = ctime.get_exponential_backoff_interval(
                    factor=int(max(1.0, float(backoff))), retries=n - 1, maximum=maximum, full_jitter=jitter)
                check(f"celery {cfg} u={u} n={n}", peer * 1000, p.delay(n, u=u))


def celery_terminal():
    app = Celery("peers", set_as_current=False)
    for max_retries in (0, 1, 3, 10):
        @app.task(bind=True, max_retries=max_retries, name=f"t{max_retries}")
        def task(self):
            return None

        p = o.RetryPolicy.preset("celery", {"max_retries": max_retries})
        for n in ATTEMPTS:
            task.push_request(id="x", retries=n - 1, is_eager=True, called_directly=False, args=[], kwargs={})
            try:
                task.retry(countdown=1)
                peer = "no-raise"
            except Retry:
                peer = "retry"
            except MaxRetriesExceededError:
                peer = "discard"
            finally:
                task.pop_request()
            check(f"celery terminal max_retries={max_retries} n={n}", peer, action(p, n, 0.5)[0])


# ---------------------------------------------------------------- RQ
from rq.job import Job, Retry as RqRetry  # noqa: E402


def rq_all():
    for maximum, interval in ((3, [10, 30, 60]), (6, [10, 30]), (2, [5, 6, 7, 8]), (4, 9)):
        intervals = interval if isinstance(interval, list) else [interval]
        raised = o.RetryPolicy.preset("rq", {"max": maximum, "interval": interval})
        returned = o.RetryPolicy.preset("rq", {"max": maximum, "interval": interval, "rule": "returned"})
        for n in ATTEMPTS:
            job = Job.__new__(Job)
            job.retry_intervals = intervals
            job.retries_left = maximum - (n - 1)
            peer_retry = job.should_retry
            check(f"rq terminal max={maximum} n={n}", "retry" if peer_retry else "dead_letter",
                  action(raised, n, 0.0)[0])
            if peer_retry:
                check(f"rq raised {interval} n={n}", job.get_retry_interval() * 1000, raised.delay(n, u=0.0))
                check(f"rq returned {interval} n={n}", RqRetry.get_interval(n - 1, interval) * 1000,
                      returned.delay(n, u=0.0))


# ---------------------------------------------------------------- Dramatiq
import dramatiq  # noqa: E402
from dramatiq.middleware.retries import Retries  # noqa: E402


class StubMessage:
    def __init__(self, retries):
        self.options = {"retries": retries}
        self.actor_name = "a"
        self.message_id = "m"
        self.failed = False

    def fail(self):
        self.failed = True


class StubBroker:
    def __init__(self, actor_options):
        self.actor = types.SimpleNamespace(options=actor_options)
        self.enqueued = None

    def get_actor(self, name):
        return self.actor

    def enqueue(self, message, *, delay=None):
        self.enqueued = delay


def dramatiq_all():
    for opts in ({"max_retries": 40}, {"max_retries": 5, "min_backoff": 100, "max_backoff": 5000},
                 {"max_retries": 30, "min_backoff": 1000, "max_backoff": 86_400_000}):
        p = o.RetryPolicy.preset("dramatiq", opts)
        for u in US:
            random._inst.random = lambda u=u: u
            for n in ATTEMPTS:
                broker = StubBroker(dict(opts))
                msg = StubMessage(n - 1)
                Retries().after_process_message(broker, msg, exception=RuntimeError("x"))
                peer = ("dead_letter", None) if msg.failed else ("retry", broker.enqueued)
                check(f"dramatiq {opts} u={u} n={n}", peer, action(p, n, u))
    throws = o.RetryPolicy.preset("dramatiq", {"throws": ["ValueError"]})
    broker = StubBroker({"throws": (ValueError,)})
    msg = StubMessage(0)
    Retries().after_process_message(broker, msg, exception=ValueError("x"))
    check("dramatiq throws", "dead_letter" if msg.failed else "retry",
          action(throws, 1, 0.5, type="ValueError")[0])
    del random._inst.random


# ---------------------------------------------------------------- botocore
from botocore.retries.standard import ExponentialBackoff, MaxAttemptsChecker  # noqa: E402


def botocore_all():
    for max_attempts in (3, 5, 31):
        p = o.RetryPolicy.preset("aws", {"max_attempts": max_attempts})
        for u in US:
            backoff = ExponentialBackoff(random=lambda u=u: u)
            for n in ATTEMPTS:
                ctx = types.SimpleNamespace(attempt_number=n, http_response=None, request_context={},
                                            add_retry_metadata=lambda **kw: None)
                retry = MaxAttemptsChecker(max_attempts).is_retryable(ctx)
                ours_action, ours_delay = action(p, n, u)
                check(f"botocore terminal max={max_attempts} n={n}", "retry" if retry else "discard", ours_action)
                if retry:
                    secs = backoff.delay_amount(ctx)
                    # The preset is the delay in whole ms: floor(seconds * 1000),
                    # allowing the float product's last-bit error.
                    ok = 0 <= secs * 1000 - ours_delay < 1 + 1e-6 or abs(secs * 1000 - ours_delay) < 1e-6
                    check(f"botocore u={u} n={n} ({secs} s)", True, ok)


# ---------------------------------------------------------------- BullMQ for Python
bull_version = importlib.metadata.version("bullmq")
from bullmq.custom_errors import UnrecoverableError as BullUnrecoverable  # noqa: E402
from bullmq.job import Job as BullJob  # noqa: E402


class BullBackend:
    """Records where Job.moveToFailed sends the job (the Redis scripts it calls)."""

    def __init__(self):
        self.calls = []

    async def moveToDelayed(self, job_id, timestamp, delay, token, opts=None):
        self.calls.append(("retry", delay))

    async def retryJob(self, job_id, lifo, token, opts=None):
        self.calls.append(("retry", 0))

    async def moveToFailed(self, job, reason, remove, token, fetch_next, fields=None):
        self.calls.append(("dead_letter", None))
        return {"result": None, "finishedOn": 1}


async def bull_outcome(opts, n, err):
    """The real Job.moveToFailed for the n-th failed attempt (attemptsMade = n - 1)."""
    queue = types.SimpleNamespace(backend=BullBackend(), opts={}, qualifiedName="bull:peers")
    job = BullJob(queue, "j", {}, opts, job_id="1")
    job.attemptsMade = n - 1
    await job.moveToFailed(err, "token")
    (call,) = queue.backend.calls
    return list(call)


async def bullmq_python_all():
    configs = (
        {"attempts": 31, "backoff": {"type": "exponential", "delay": 1000}},
        {"attempts": 31, "backoff": {"type": "exponential", "delay": 1.25}},
        {"attempts": 31, "backoff": {"type": "exponential", "delay": 0.5}},
        {"attempts": 31, "backoff": {"type": "exponential", "delay": 7, "jitter": 1}},
        {"attempts": 31, "backoff": {"type": "fixed", "delay": 5000, "jitter": 0.2}},
        {"attempts": 5, "backoff": 250},
        {"attempts": 3},
    )
    for opts in configs:
        p = o.RetryPolicy.preset("bullmq", {"runtime": "python", **opts})
        for u in US:
            for n in ATTEMPTS:
                peer = await bull_outcome(opts, n, RuntimeError("boom"))
                ours = list(action(p, n, u))
                check(f"bullmq-python {opts} u={u} n={n}", peer, ours)
                peer = await bull_outcome(opts, n, BullUnrecoverable("no"))
                check(f"bullmq-python unrecoverable n={n}", peer[0],
                      action(p, n, u, type="UnrecoverableError")[0])


celery_delays()
celery_terminal()
rq_all()
dramatiq_all()
botocore_all()
asyncio.run(bullmq_python_all())
versions = f"celery {celery.__version__}, dramatiq {dramatiq.__version__}, bullmq {bull_version}"
print(f"peers-python ({versions}): {checked - len(failures)} passed, {len(failures)} failed")
for f in failures[:40]:
    print("  " + f)
sys.exit(1 if failures or checked < 1000 else 0)
