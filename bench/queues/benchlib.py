"""What the Python queue benchmarks share (information only: nothing
asserts their figures).

Every bench times three kinds of retry path (ChasquiMQ a fourth) on one
Redis in one run, each once a round, who goes first rotating round by
round (:func:`rotation`):

* ``native`` — the queue's own retry;
* ``engine`` — the integration, the engine deciding every failure;
* ``floor`` — the same integration doing the same queue operations and
  Redis writes with the engine's failure transaction replaced by a no-op
  that returns the first failure's real outcome (:func:`floor`): what the
  integration's mechanism costs without the engine.

Celery, RQ and Dramatiq run real worker processes (the queue's own
``Worker``), one per kind, all started before the first round and kept for
the whole run; a job that finishes counts itself with ``INCR`` on a key of
its round, which the bench polls. BullMQ and ChasquiMQ run their worker in
the bench's own process, one per round.
"""

from __future__ import annotations

import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import redis

HERE = Path(__file__).resolve().parent
ENV_REDIS = "OJS_BENCH_REDIS"

#: The engine's policy on the retry path: fail once, retry after 1 ms, no jitter.
POLICY = {"max_attempts": 2, "initial_interval": "PT0.001S", "backoff_strategy": "none", "jitter": False}
#: The job's layer whose enqueue-time validation is timed.
LAYER = {"max_attempts": 5, "initial_interval": "PT1S", "non_retryable_errors": ["validation.*"]}


def done_key(round_id: str) -> str:
    return f"ojs-bench:{round_id}:done"


def finished(client: Any, round_id: str) -> None:
    """Called by a job when it succeeds."""
    client.incr(done_key(round_id))


def start_worker(argv: Sequence[str], redis_url: str, log: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env[ENV_REDIS] = redis_url
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    out = open(log, "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(list(argv), env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    """By its pid (its process group: prefork children too)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def wait_done(client: Any, round_id: str, jobs: int, procs: Sequence[subprocess.Popen[bytes]],
              timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    while int(client.get(done_key(round_id)) or 0) < jobs:
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"worker {p.args} exited {p.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"round {round_id}: {client.get(done_key(round_id))} of {jobs} after {timeout_s}s")
        time.sleep(0.02)


def per_call_us(fn: Callable[[int], Any], calls: int) -> float:
    start = time.perf_counter()
    for i in range(calls):
        fn(i)
    return (time.perf_counter() - start) / calls * 1e6


def _enqueue_doc(adds: list[float], wraps: list[float], vals: list[float]) -> dict[str, float]:
    add_us, wrap_us, val_us = (statistics.median(x) for x in (adds, wraps, vals))
    return {"add_us": add_us, "integration_add_us": wrap_us, "validate_us": val_us,
            "validate_over_add": val_us / add_us, "wrapped_over_add": (wrap_us - add_us) / add_us}


def enqueue_cost(add: Callable[[int], Any], wrapped: Callable[[int], Any], validate: Callable[[int], Any],
                 calls: int, blocks: int = 5) -> dict[str, float]:
    """Per call: the queue's own enqueue, the integration's (validation and
    carrying the layer), and the validation alone; medians of alternating
    blocks. ``validate_over_add`` is validation / the queue's enqueue (the
    issue's target: <= 0.05); ``wrapped_over_add`` the integration's whole
    extra cost per enqueue against the queue's own."""
    size = max(1, calls // blocks)
    adds, wraps, vals = [], [], []
    for _ in range(blocks):
        adds.append(per_call_us(add, size))
        wraps.append(per_call_us(wrapped, size))
        vals.append(per_call_us(validate, size))
    return _enqueue_doc(adds, wraps, vals)


async def per_call_us_async(fn: Callable[[int], Awaitable[Any]], calls: int) -> float:
    start = time.perf_counter()
    for i in range(calls):
        await fn(i)
    return (time.perf_counter() - start) / calls * 1e6


async def enqueue_cost_async(add: Callable[[int], Awaitable[Any]], wrapped: Callable[[int], Awaitable[Any]],
                             validate: Callable[[int], Any], calls: int, blocks: int = 5) -> dict[str, float]:
    """:func:`enqueue_cost` for a queue whose enqueue is a coroutine."""
    size = max(1, calls // blocks)
    adds, wraps, vals = [], [], []
    for _ in range(blocks):
        adds.append(await per_call_us_async(add, size))
        wraps.append(await per_call_us_async(wrapped, size))
        vals.append(per_call_us(validate, size))
    return _enqueue_doc(adds, wraps, vals)


KINDS = ("native", "engine", "floor")


def rotation(rounds: int, kinds: Sequence[str] = KINDS) -> Iterator[str]:
    """Each kind once a round, who goes first rotating round by round (a
    kind is not always timed right after the same other one)."""
    for r in range(rounds):
        for i in range(len(kinds)):
            yield kinds[(r + i) % len(kinds)]


def summary(jobs: int, runs: dict[str, list[float]]) -> dict[str, Any]:
    """The ``retry_path`` document: jobs per second of every round per kind,
    and the ratios of the medians (``ratio``: engine / native, the issue's
    target >= 0.95; ``floor_ratio``: floor / native; ``engine_over_floor``)."""
    med = {kind: statistics.median(rates) for kind, rates in runs.items()}
    out: dict[str, Any] = {"jobs": jobs, **{f"{kind}_jobs_per_s": rates for kind, rates in runs.items()},
                           "ratio": med["engine"] / med["native"]}
    if "floor" in med:
        out["floor_ratio"] = med["floor"] / med["native"]
        out["engine_over_floor"] = med["engine"] / med["floor"]
    return out


def retry_path(rounds: int, run_round: Callable[[str, int], float], jobs: int,
               kinds: Sequence[str] = KINDS) -> dict[str, Any]:
    runs: dict[str, list[float]] = {kind: [] for kind in kinds}
    for kind in rotation(rounds, kinds):
        runs[kind].append(run_round(kind, jobs))
    return summary(jobs, runs)


async def retry_path_async(rounds: int, run_round: Callable[[str, int], Awaitable[float]], jobs: int,
                           kinds: Sequence[str] = KINDS) -> dict[str, Any]:
    runs: dict[str, list[float]] = {kind: [] for kind in kinds}
    for kind in rotation(rounds, kinds):
        runs[kind].append(await run_round(kind, jobs))
    return summary(jobs, runs)


def reuse_first(transact: Callable[..., Any]) -> Callable[..., Any]:
    """``transact`` as a no-op: the first call's real outcome, returned for
    every call after it (every bench job fails the same way once, so the
    outcome carried out, its state text included, is the same size)."""
    first: list[Any] = []

    def noop(*args: Any, **kwargs: Any) -> Any:
        if not first:
            first.append(transact(*args, **kwargs))
        return first[0]

    return noop


@contextlib.contextmanager
def floor(module: ModuleType) -> Iterator[None]:
    """The integration ``module`` with its failure transaction (the
    ``transact`` it calls) replaced by :func:`reuse_first`, while inside."""
    real = module.transact
    module.transact = reuse_first(real)
    try:
        yield
    finally:
        module.transact = real


def floor_if(kind: str, module: ModuleType) -> contextlib.AbstractContextManager[None]:
    return floor(module) if kind == "floor" else contextlib.nullcontext()


def log_path(name: str) -> str:
    base = Path(os.environ.get("OJS_BENCH_LOGS", "/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    return str(base / name)


def python() -> str:
    return sys.executable


def client(url: str) -> Any:
    return redis.Redis.from_url(url)
