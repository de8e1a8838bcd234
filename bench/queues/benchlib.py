"""What the Celery, RQ and Dramatiq benchmarks share (information only:
nothing asserts their figures).

Their workers are real worker processes (the queue's own ``Worker``), one per
mode, both started before the first round and kept for the whole run, so
rounds alternate native / engine on the same Redis in the same run. A job
that finishes counts itself with ``INCR`` on a key of its round; the bench
polls it.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
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
    add_us, wrap_us, val_us = (statistics.median(x) for x in (adds, wraps, vals))
    return {"add_us": add_us, "integration_add_us": wrap_us, "validate_us": val_us,
            "validate_over_add": val_us / add_us, "wrapped_over_add": (wrap_us - add_us) / add_us}


def retry_path(rounds: int, run_round: Callable[[bool, int], float], jobs: int) -> dict[str, Any]:
    native: list[float] = []
    engine: list[float] = []
    for _ in range(rounds):
        native.append(run_round(False, jobs))
        engine.append(run_round(True, jobs))
    return {"jobs": jobs, "native_jobs_per_s": native, "engine_jobs_per_s": engine,
            "ratio": statistics.median(engine) / statistics.median(native)}


def log_path(name: str) -> str:
    base = Path(os.environ.get("OJS_BENCH_LOGS", "/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    return str(base / name)


def python() -> str:
    return sys.executable


def client(url: str) -> Any:
    return redis.Redis.from_url(url)
