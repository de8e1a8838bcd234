"""Presets in the real queue: Celery, RQ and Dramatiq, each with jitter off
(or pinned), run a job that always fails twice on the same Redis — once with
the queue's own retry configuration, once on the engine through the
integration with ``RetryPolicy.preset("<queue>", <the same options>)`` — and
the two recorded timelines are the same.

A timeline is, per job: the number of runs, each retry the queue scheduled
with the delay the queue was given, and where the job ended, all read from
the queue's own hooks and storage (presets_common documents the events):

* Celery — ``task_retry``'s ``reason.when`` (the countdown ``Task.retry``
  got: Celery's ``autoretry_for`` with ``retry_backoff`` /
  ``retry_backoff_max`` / ``retry_jitter=False`` / ``max_retries``, or
  ``default_retry_delay``; ``dont_autoretry_for``); the end is
  ``task_failure`` (FAILURE), with nothing in the integration's dead list.
* RQ — ``Retry(max, interval)``: the interval RQ's own
  ``Job.get_retry_interval`` returns while ``retries_left > 0``; the end is
  the ``FailedJobRegistry``. RQ stores a scheduled time as whole seconds,
  truncated: natively a retry may start up to a second before its interval
  has elapsed; the integration gives RQ ``delay_seconds(delay_ms, now)``
  (rounded up, RET-11), so the engine's ``delay_ms`` is compared, and RQ's
  interval on the engine side is checked to be exactly that rounding.
* Dramatiq — ``Retries`` with ``max_retries`` / ``min_backoff`` /
  ``max_backoff`` (message options) and ``throws``: the delay of the
  delayed enqueue (the ETA the broker stores is now + that delay); the end
  is the nack into ``<queue>.XQ``. Dramatiq has no jitter switch: its
  ``compute_backoff`` always draws ``random.uniform``; the native worker pins
  ``random.random`` to the engine's keyed sample for the same message id and
  attempt (reimplemented in presets_common from core/src/jitter.rs), so
  Dramatiq's own formula, cap (and its second draw), limit and dead-letter
  queue run with the sample the engine draws.

Both runs are also checked against ``RetryPolicy.preset(...).decide`` for
those job ids, and the native ones against values worked from the queue's
documentation. No timing thresholds: only what the queue was asked to do.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import pytest
import redis

import presets_common as pc
import timeline_celery
import timeline_common as tc
import timeline_dramatiq
import timeline_rq
from ojs_retry import RetryPolicy
from ojs_retry.integrations.rq import delay_seconds

Timeline = dict[str, Any]


def _tag() -> str:
    return uuid.uuid4().hex[:8]


class Mode:
    """One queue in one mode: its worker process and its recorder."""

    def __init__(self, redis_url: str, queue: str, mode: str) -> None:
        self.mode = mode
        self.run = f"{queue}-{mode}-{_tag()}"
        self.name = f"ojs-presets-{self.run}"
        self.rec = pc.Recorder(redis_url, self.run)
        self.env = tc.child_env({pc.ENV_REDIS: redis_url, pc.ENV_RUN: self.run})

    def start(self, argv: list[str]) -> list[Any]:
        return tc.start_workers(argv, 1, self.env, tc.log_prefix("presets", self.run))

    def wait(self, job_ids: list[str], timeout_s: float = 120) -> None:
        """Until every job has its end (a run past it is caught once the
        workers have stopped: see :func:`_run_both`)."""
        deadline = time.monotonic() + timeout_s
        while not all(any(e["kind"] == "terminal" for e in self.rec.events(j)) for j in job_ids):
            if time.monotonic() > deadline:
                pending = {j: self.rec.events(j) for j in job_ids}
                raise AssertionError(f"{self.run}: not finished after {timeout_s}s: {json.dumps(pending)}")
            time.sleep(0.05)

    def timeline(self, job_id: str, place: str) -> Timeline:
        events = self.rec.events(job_id)
        steps: list[tuple[int, str, int | None]] = []
        for e in events:
            if e["kind"] == "retry":
                steps.append((e["attempt"], "retry", e["delay_ms"]))
            elif e["kind"] == "terminal":
                steps.append((e["attempt"], place, None))
        return {"runs": sum(e["kind"] == "start" for e in events), "steps": steps}

    def decisions(self, job_id: str) -> list[dict[str, Any]]:
        return [e for e in self.rec.events(job_id) if e["kind"] == "decision"]


def _expected(policy: RetryPolicy, job_id: str, place: str, error_type: str) -> Timeline:
    """What the preset decides for ``job_id`` failing every time with ``error_type``."""
    steps: list[tuple[int, str, int | None]] = []
    attempt = 1
    while True:
        d = policy.decide(attempt, type=error_type, key=job_id)
        if d.action != "retry":
            steps.append((attempt, place, None))
            return {"runs": attempt, "steps": steps, "terminal_action": d.action}
        steps.append((attempt, "retry", d.delay_ms))
        attempt += 1


def _error_type(job_id: str) -> str:
    return "presets_common.Fatal" if "fatal" in job_id else "RuntimeError"


def _check_engine_decisions(engine: Mode, job_id: str, got: Timeline, expected: Timeline) -> None:
    """The integration's own decisions (its listener) are the ones the queue carried out."""
    decisions = engine.decisions(job_id)
    assert [(d["attempt"], d["action"], d["delay_ms"]) for d in decisions][:-1] == \
        [s for s in expected["steps"] if s[1] == "retry"]
    assert decisions[-1]["action"] == expected["terminal_action"]
    assert len(decisions) == got["runs"]


def _run_both(start: Callable[[Mode], list[Any]], modes: Mapping[Mode, list[str]],
              pending: Callable[[Mode, list[str]], int]) -> None:
    """Both modes' workers at once (same Redis, same run), until every job
    ended; then, with the workers stopped, nothing may be left to run in
    either mode's queue (``pending``: what the broker still holds)."""
    procs: list[Any] = []
    try:
        for mode in modes:
            procs += start(mode)
        for mode, job_ids in modes.items():
            mode.wait(job_ids)
    finally:
        tc.stop_workers(procs)
    left = {mode.run: pending(mode, job_ids) for mode, job_ids in modes.items()}
    assert not any(left.values()), f"messages left to run after every job ended: {left}"


# ---------------------------------------------------------------- Celery

def test_celery_preset_runs_like_celery_autoretry(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OJS_CELERY_BROKER", redis_url)
    import presets_celery_app as app_mod

    app_mod.app.conf.broker_url = redis_url
    tag = _tag()
    jobs = {f"cel-backoff-{tag}": "ojs.presets.backoff", f"cel-fixed-{tag}": "ojs.presets.fixed",
            f"cel-fatal-{tag}": "ojs.presets.backoff"}
    native, engine = Mode(redis_url, "celery", "native"), Mode(redis_url, "celery", "engine")

    def start(mode: Mode) -> list[Any]:
        argv = [sys.executable, "-m", "celery", "-A", "presets_celery_app", "worker", "-Q", mode.name, "-c", "1",
                "-P", "prefork", "--without-mingle", "--without-gossip", "--without-heartbeat",
                "-n", f"{mode.run}@%h", "--loglevel", "INFO"]
        mode.env["OJS_CELERY_BROKER"] = redis_url
        return mode.start(argv)

    presets = {job: RetryPolicy.preset("celery", app_mod.preset_options(task)) for job, task in jobs.items()}
    for job, task in jobs.items():
        app_mod.app.tasks[task].apply_async((job,), task_id=job, queue=native.name)
        app_mod.engine.apply_async((job,), task_id=job, queue=engine.name, ojs_retry_policy=presets[job])
    _run_both(start, {native: list(jobs), engine: list(jobs)},
              lambda mode, ids: timeline_celery.pending(redis.Redis.from_url(redis_url), mode.name, ids))

    client = redis.Redis.from_url(redis_url)
    for job in jobs:
        expected = _expected(presets[job], job, "FAILURE", _error_type(job))
        got_native, got_engine = native.timeline(job, "FAILURE"), engine.timeline(job, "FAILURE")
        assert got_native == got_engine, job
        assert got_engine == {k: expected[k] for k in ("runs", "steps")}, job
        _check_engine_decisions(engine, job, got_engine, expected)
    # Celery's own numbers: countdown = min(retry_backoff_max, retry_backoff * 2**retries) s; 0.3 s fixed.
    assert native.timeline(f"cel-backoff-{tag}", "FAILURE")["steps"] == [
        (1, "retry", 1000), (2, "retry", 2000), (3, "retry", 2000), (4, "FAILURE", None)]
    assert native.timeline(f"cel-fixed-{tag}", "FAILURE")["steps"] == [
        (1, "retry", 300), (2, "retry", 300), (3, "FAILURE", None)]
    assert native.timeline(f"cel-fatal-{tag}", "FAILURE")["steps"] == [(1, "FAILURE", None)]
    # The preset discards (Celery's FAILURE): nothing went to the integration's dead list.
    assert client.llen(f"{engine.name}:dead") == 0


# ---------------------------------------------------------------- RQ

RQ_NATIVE = {"rq-list": {"max": 3, "interval": [1, 2]}, "rq-const": {"max": 2, "interval": 1},
             "rq-now": {"max": 2, "interval": 0}}


def _rq_place(client: Any, queue_name: str, job_id: str) -> str:
    from rq import Queue
    from rq.registry import FailedJobRegistry

    if job_id in FailedJobRegistry(queue=Queue(queue_name, connection=client)).get_job_ids():
        return "FailedJobRegistry"
    return "deleted" if not client.exists(f"rq:job:{job_id}") else "elsewhere"


def test_rq_preset_runs_like_rq_retry(redis_url: str) -> None:
    from rq import Queue, Retry

    from ojs_retry.integrations.rq import OjsRetry

    client = redis.Redis.from_url(redis_url)
    tag = _tag()
    native, engine = Mode(redis_url, "rq", "native"), Mode(redis_url, "rq", "engine")
    # RQ's job keys are global (rq:job:<id>): each mode has ids of its own.
    ids = {name: {"native": f"n-{name}-{tag}", "engine": f"e-{name}-{tag}"} for name in RQ_NATIVE}
    presets = {name: RetryPolicy.preset("rq", opts) for name, opts in RQ_NATIVE.items()}
    ojs = OjsRetry()
    for name, opts in RQ_NATIVE.items():
        n_id, e_id = ids[name]["native"], ids[name]["engine"]
        Queue(native.name, connection=client).enqueue(
            pc.fail, n_id, job_id=n_id, retry=Retry(max=opts["max"], interval=opts["interval"]))
        ojs.enqueue(Queue(engine.name, connection=client), pc.fail, e_id, job_id=e_id, ojs_retry_policy=presets[name])

    def start(mode: Mode) -> list[Any]:
        return mode.start([sys.executable, str(tc.HERE / "presets_rq_worker.py"), mode.name, mode.mode])

    _run_both(start, {native: [i["native"] for i in ids.values()], engine: [i["engine"] for i in ids.values()]},
              lambda mode, _: timeline_rq.pending(client, mode.name))

    for name in RQ_NATIVE:
        n_id, e_id = ids[name]["native"], ids[name]["engine"]
        got_native = native.timeline(n_id, _rq_place(client, native.name, n_id))
        got_engine = engine.timeline(e_id, _rq_place(client, engine.name, e_id))
        expected = _expected(presets[name], e_id, "FailedJobRegistry", "RuntimeError")
        # RQ was given the engine's delay rounded up to its whole seconds (never early, RET-11) ...
        decisions = engine.decisions(e_id)
        retries = [e for e in engine.rec.events(e_id) if e["kind"] == "retry"]
        assert [r["interval_s"] for r in retries] == \
            [delay_seconds(d["delay_ms"], d["at_ms"]) for d in decisions if d["action"] == "retry"]
        # ... so the engine's timeline is compared with the decisions' delay_ms.
        engine_steps = [(a, act, None if delay is None else decisions[a - 1]["delay_ms"])
                        for a, act, delay in got_engine["steps"]]
        assert got_native == {"runs": got_engine["runs"], "steps": engine_steps}, name
        assert got_native == {k: expected[k] for k in ("runs", "steps")}, name
        _check_engine_decisions(engine, e_id, got_engine, expected)
    # RQ's own numbers: intervals[max(len - retries_left, 0)] s; a constant interval repeats.
    assert native.timeline(ids["rq-list"]["native"], "FailedJobRegistry")["steps"] == [
        (1, "retry", 1000), (2, "retry", 1000), (3, "retry", 2000), (4, "FailedJobRegistry", None)]
    assert native.timeline(ids["rq-const"]["native"], "FailedJobRegistry")["steps"] == [
        (1, "retry", 1000), (2, "retry", 1000), (3, "FailedJobRegistry", None)]
    # No interval: RQ re-enqueues at once; the engine's 0 ms is interval 0 too (not a second later).
    assert native.timeline(ids["rq-now"]["native"], "FailedJobRegistry")["steps"] == [
        (1, "retry", 0), (2, "retry", 0), (3, "FailedJobRegistry", None)]
    assert [e["interval_s"] for e in engine.rec.events(ids["rq-now"]["engine"]) if e["kind"] == "retry"] == [0, 0]


# ---------------------------------------------------------------- Dramatiq

DRAMATIQ_NATIVE = {
    "dq-exp": {"max_retries": 3, "min_backoff": 100, "max_backoff": 1000},
    "dq-cap": {"max_retries": 2, "min_backoff": 300, "max_backoff": 400},
    "dq-fatal": {"max_retries": 3, "min_backoff": 100, "max_backoff": 1000},
}


def _xq_ids(client: Any, queue_name: str) -> set[str]:
    from dramatiq.message import Message

    return {Message.decode(v).message_id for v in client.hgetall(f"dramatiq:{queue_name}.XQ.msgs").values()}


def test_dramatiq_preset_runs_like_dramatiq_retries(redis_url: str) -> None:
    import presets_dramatiq_worker as dw

    from ojs_retry.integrations import validate_job_policy
    from ojs_retry.integrations._core import POLICY_KEY

    client = redis.Redis.from_url(redis_url)
    tag = _tag()
    jobs = {f"{name}-{tag}": opts for name, opts in DRAMATIQ_NATIVE.items()}
    native, engine = Mode(redis_url, "dramatiq", "native"), Mode(redis_url, "dramatiq", "engine")
    presets = {job: RetryPolicy.preset("dramatiq", {**opts, "throws": ["presets_common.Fatal"]})
               for job, opts in jobs.items()}
    n_broker, e_broker = dw.make_broker(redis_url, "native"), dw.make_broker(redis_url, "engine")
    n_actor, e_actor = dw.declare(n_broker, native.name, "native"), dw.declare(e_broker, engine.name, "engine")
    for job, opts in jobs.items():
        n_broker.enqueue(n_actor.message_with_options(args=(job,), **opts).copy(message_id=job))
        layer = validate_job_policy(presets[job])
        e_broker.enqueue(e_actor.message_with_options(args=(job,), **{POLICY_KEY: layer}).copy(message_id=job))

    def start(mode: Mode) -> list[Any]:
        return mode.start([sys.executable, str(tc.HERE / "presets_dramatiq_worker.py"), mode.name, mode.mode])

    _run_both(start, {native: list(jobs), engine: list(jobs)},
              lambda mode, _: timeline_dramatiq.pending(client, mode.name))

    n_xq, e_xq = _xq_ids(client, native.name), _xq_ids(client, engine.name)
    for job in jobs:
        got_native = native.timeline(job, ".XQ" if job in n_xq else "acknowledged")
        got_engine = engine.timeline(job, ".XQ" if job in e_xq else "acknowledged")
        expected = _expected(presets[job], job, ".XQ", _error_type(job))
        assert got_native == got_engine, job
        assert got_engine == {k: expected[k] for k in ("runs", "steps")}, job
        _check_engine_decisions(engine, job, got_engine, expected)
    # Dramatiq's own formula with u pinned: int(b * (1 + u)), b = min_backoff * 2**c; above
    # max_backoff a second draw, int(max_backoff * (0.5 + 0.5 u)).
    for job, opts in jobs.items():
        if "fatal" in job:
            assert native.timeline(job, ".XQ")["steps"] == [(1, ".XQ", None)]
            continue
        want = []
        for n in range(1, opts["max_retries"] + 1):
            u = pc.keyed_u(job, n)
            d = int(opts["min_backoff"] * 2 ** (n - 1) * (1 + u))
            want.append((n, "retry", d if d <= opts["max_backoff"] else int(opts["max_backoff"] * (0.5 + 0.5 * u))))
        want.append((opts["max_retries"] + 1, ".XQ", None))
        assert native.timeline(job, ".XQ")["steps"] == want, job
