"""The one-line adoption in the real queue: the same app — the same jobs,
enqueued with the queue's own retry options, failing the same way — run
once on the queue's own retries and once with the one line changed (RQ:
``OjsWorker`` for ``rq.Worker``; Dramatiq: ``middleware_with_ojs_retries()``
for the default middleware), on the same Redis at the same time, records the
same timelines: the same runs, the same delays and the same end.

The docs' adoption blocks (docs/integrations.md, marked run by this file)
run here too, each on a Redis database of its own: before and after differ
in one line besides imports, and each does what the doc says of it.

The machinery (recorders, timelines, jitter pinned) is
test_presets_in_queue's: there the job carried the preset; here nothing
does — the integration reads the queue's own options through the preset.

* RQ — ``Retry(max=3, interval=[1, 2])``, ``Retry(max=2, interval=1)``,
  ``Retry(max=2)`` and no ``Retry`` (one run, then the FailedJobRegistry).
  RQ is given ``delay_seconds(delay_ms, now)`` on the adopted side (whole
  seconds, never early), so its decisions' ``delay_ms`` are compared.
* Dramatiq — an actor with ``max_retries=3, min_backoff=100,
  max_backoff=1000, throws=(Fatal,)``: a message on the actor's options, one
  with its own ``max_retries=2, min_backoff=300, max_backoff=400`` (the cap),
  one raising ``Fatal``, one a subclass of it (matched by the failure's
  ancestors, as Dramatiq's ``isinstance``); an actor with ``retry_when``
  (no after two retries) and ``max_retries=0``, which Retries does not
  consult. The native worker's ``random.random`` is pinned to the engine's
  keyed sample (presets_dramatiq_worker).
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
import types
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis

import dramatiq_adoption_worker as daw
import fences
import presets_common as pc
import test_presets_in_queue as tp
import timeline_common as tc
import timeline_dramatiq
import timeline_rq
from ojs_retry import RetryPolicy
from ojs_retry.integrations.rq import delay_seconds

# ---------------------------------------------------------------- RQ

#: Each job's RQ ``Retry`` (None: enqueued without one).
RQ_JOBS: dict[str, dict[str, Any] | None] = {
    "rq-list": {"max": 3, "interval": [1, 2]},
    "rq-const": {"max": 2, "interval": 1},
    "rq-now": {"max": 2},
    "rq-none": None,
}
#: RQ without ``Retry``: no retry, the FailedJobRegistry (RQ's ``handle_job_failure``).
NO_RETRY = {"max_attempts": 1, "on_exhaustion": "dead_letter"}


def test_rq_adoption_runs_like_rq_retry(redis_url: str) -> None:
    from rq import Queue, Retry

    from ojs_retry.integrations import POLICY_KEY
    from ojs_retry.integrations.rq import ADOPTED_META_KEY, DEAD_LETTER_META_KEY

    client = redis.Redis.from_url(redis_url)
    tag = tp._tag()
    native, adopted = tp.Mode(redis_url, "rq", "native"), tp.Mode(redis_url, "rq", "adopted")
    # RQ's job keys are global (rq:job:<id>): each mode has ids of its own.
    ids = {name: {native: f"n-{name}-{tag}", adopted: f"a-{name}-{tag}"} for name in RQ_JOBS}
    for name, retry in RQ_JOBS.items():
        for mode in (native, adopted):  # the app: RQ's own enqueue, the same both ways
            options = {"retry": Retry(**retry)} if retry is not None else {}
            Queue(mode.name, connection=client).enqueue(pc.fail, ids[name][mode], job_id=ids[name][mode], **options)

    def start(mode: tp.Mode) -> list[Any]:
        return mode.start([sys.executable, str(tc.HERE / "rq_adoption_worker.py"), mode.name, mode.mode])

    tp._run_both(start, {mode: [i[mode] for i in ids.values()] for mode in (native, adopted)},
                 lambda mode, _: timeline_rq.pending(client, mode.name))

    for name, retry in RQ_JOBS.items():
        n_id, a_id = ids[name][native], ids[name][adopted]
        got_native = native.timeline(n_id, tp._rq_place(client, native.name, n_id))
        got_adopted = adopted.timeline(a_id, tp._rq_place(client, adopted.name, a_id))
        decisions = adopted.decisions(a_id)
        retries = [e for e in adopted.rec.events(a_id) if e["kind"] == "retry"]
        # RQ was given the engine's delay rounded up to its whole seconds (never early, RET-11) ...
        assert [r["interval_s"] for r in retries] == \
            [delay_seconds(d["delay_ms"], d["at_ms"]) for d in decisions if d["action"] == "retry"]
        # ... so the adopted timeline is compared with the decisions' delay_ms.
        steps = [(a, act, None if delay is None else decisions[a - 1]["delay_ms"])
                 for a, act, delay in got_adopted["steps"]]
        assert got_native == {"runs": got_adopted["runs"], "steps": steps}, name
        if retry is not None:
            expected = tp._expected(RetryPolicy.preset("rq", retry), a_id, "FailedJobRegistry", "RuntimeError")
            assert got_native == {k: expected[k] for k in ("runs", "steps")}, name
            tp._check_engine_decisions(adopted, a_id, got_adopted, expected)
        job = Queue(adopted.name, connection=client).fetch_job(a_id)
        assert job is not None and POLICY_KEY not in job.meta, name  # nothing carried an OJS layer
        assert job.meta[DEAD_LETTER_META_KEY]["decision"]["reason"] == "exhausted", name
        # The policy it ran on: the rq preset of its Retry (RQ keeps the interval as a list);
        # without one, a single attempt.
        interval = (retry or {}).get("interval", 0)
        ran_on = RetryPolicy(NO_RETRY) if retry is None else RetryPolicy.preset(
            "rq", {"max": retry["max"], "interval": interval if isinstance(interval, list) else [interval]})
        assert RetryPolicy(job.meta[ADOPTED_META_KEY]).to_json() == ran_on.to_json(), name
    # RQ's own numbers: intervals[max(len - retries_left, 0)] s; a constant interval repeats;
    # no interval: at once; no Retry: one run, then the FailedJobRegistry.
    assert native.timeline(ids["rq-list"][native], "FailedJobRegistry")["steps"] == [
        (1, "retry", 1000), (2, "retry", 1000), (3, "retry", 2000), (4, "FailedJobRegistry", None)]
    assert native.timeline(ids["rq-const"][native], "FailedJobRegistry")["steps"] == [
        (1, "retry", 1000), (2, "retry", 1000), (3, "FailedJobRegistry", None)]
    assert native.timeline(ids["rq-now"][native], "FailedJobRegistry")["steps"] == [
        (1, "retry", 0), (2, "retry", 0), (3, "FailedJobRegistry", None)]
    assert native.timeline(ids["rq-none"][native], "FailedJobRegistry") == {
        "runs": 1, "steps": [(1, "FailedJobRegistry", None)]}


# ---------------------------------------------------------------- Dramatiq

#: Each message: (actor, its own message options, its error type for the engine).
DRAMATIQ_JOBS: dict[str, tuple[str, dict[str, Any], str]] = {
    "dq-actor": ("plain", {}, "RuntimeError"),
    "dq-cap": ("plain", {"max_retries": 2, "min_backoff": 300, "max_backoff": 400}, "RuntimeError"),
    "dq-fatal": ("plain", {}, "presets_common.Fatal"),
    "dq-child": ("plain", {}, "presets_common.Fatal"),
    "dq-when": ("when", {}, "RuntimeError"),
}


def _dramatiq_formula(job: str, max_retries: int, min_backoff: int, max_backoff: int) -> list[Any]:
    """Dramatiq's ``compute_backoff`` with u pinned: int(b·(1 + u)), b = min_backoff·2^c; above
    max_backoff a second draw, int(max_backoff·(0.5 + 0.5u)); then ``.XQ``."""
    steps: list[Any] = []
    for n in range(1, max_retries + 1):
        u = pc.keyed_u(job, n)
        d = int(min_backoff * 2 ** (n - 1) * (1 + u))
        steps.append((n, "retry", d if d <= max_backoff else int(max_backoff * (0.5 + 0.5 * u))))
    return [*steps, (max_retries + 1, ".XQ", None)]


def test_dramatiq_adoption_runs_like_dramatiq_retries(redis_url: str) -> None:
    from ojs_retry.integrations.dramatiq import dead_letter_key

    client = redis.Redis.from_url(redis_url)
    tag = tp._tag()
    jobs = {f"{name}-{tag}": spec for name, spec in DRAMATIQ_JOBS.items()}
    native, adopted = tp.Mode(redis_url, "dramatiq", "native"), tp.Mode(redis_url, "dramatiq", "adopted")
    for mode in (native, adopted):  # the app: Dramatiq's own actors and messages, the same both ways
        broker = daw.make_broker(redis_url, mode.mode)
        actors = dict(zip(("plain", "when"), daw.declare(broker, mode.name)))
        for job, (actor, options, _) in jobs.items():
            broker.enqueue(actors[actor].message_with_options(args=(job,), **options).copy(message_id=job))

    def start(mode: tp.Mode) -> list[Any]:
        return mode.start([sys.executable, str(tc.HERE / "dramatiq_adoption_worker.py"), mode.name, mode.mode])

    tp._run_both(start, {native: list(jobs), adopted: list(jobs)},
                 lambda mode, _: timeline_dramatiq.pending(client, mode.name))

    n_xq, a_xq = tp._xq_ids(client, native.name), tp._xq_ids(client, adopted.name)
    for job, (actor, options, error_type) in jobs.items():
        got_native = native.timeline(job, ".XQ" if job in n_xq else "acknowledged")
        got_adopted = adopted.timeline(job, ".XQ" if job in a_xq else "acknowledged")
        assert got_native == got_adopted, job
        decisions = adopted.decisions(job)
        assert [(d["attempt"], d["action"], d["delay_ms"]) for d in decisions][:-1] == \
            [s for s in got_native["steps"] if s[1] == "retry"], job
        assert (decisions[-1]["action"], len(decisions)) == ("dead_letter", got_native["runs"]), job
        if actor == "plain" and "fatal" not in job and "child" not in job:
            opts = {**daw.ACTOR_OPTIONS, **options}
            expected = tp._expected(RetryPolicy.preset("dramatiq", opts), job, ".XQ", error_type)
            assert got_adopted == {k: expected[k] for k in ("runs", "steps")}, job
    # Dramatiq's own numbers, worked by hand with the pinned sample.
    by_name = {name: f"{name}-{tag}" for name in DRAMATIQ_JOBS}
    assert native.timeline(by_name["dq-actor"], ".XQ")["steps"] == _dramatiq_formula(by_name["dq-actor"], 3, 100, 1000)
    assert native.timeline(by_name["dq-cap"], ".XQ")["steps"] == _dramatiq_formula(by_name["dq-cap"], 2, 300, 400)
    # throws (the class and a subclass): failed at once; retry_when: no at retries == 2, max_retries=0 unread.
    assert native.timeline(by_name["dq-fatal"], ".XQ")["steps"] == [(1, ".XQ", None)]
    assert native.timeline(by_name["dq-child"], ".XQ")["steps"] == [(1, ".XQ", None)]
    assert native.timeline(by_name["dq-when"], ".XQ")["steps"] == \
        _dramatiq_formula(by_name["dq-when"], daw.WHEN_RETRIES, 200, 1000)
    reasons = {job: adopted.decisions(job)[-1]["reason"] for job in jobs}
    assert reasons == {by_name["dq-actor"]: "exhausted", by_name["dq-cap"]: "exhausted",
                       by_name["dq-fatal"]: "non_retryable", by_name["dq-child"]: "non_retryable",
                       by_name["dq-when"]: "handler_code"}
    records = {r["job_id"]: r for r in map(json.loads, client.lrange(dead_letter_key(adopted.name), 0, -1))}
    assert sorted(records) == sorted(jobs)
    # throws: the class and its subclass match the listed type (the subclass by its ancestors, as
    # Dramatiq's isinstance), each recorded under its own type.
    for name, own_type in (("dq-fatal", "presets_common.Fatal"), ("dq-child", "dramatiq_adoption_worker.FatalChild")):
        record = records[by_name[name]]
        assert record["decision"]["matched_pattern"] == "presets_common.Fatal", name
        assert [e["type"] for e in record["retry_state"]["errors"]] == [own_type], name


# ---------------------------------------------------------------- the docs' blocks

RUNNER = "tests/queues/python/test_adoption_rq_dramatiq.py"


def _blocks(heading: str) -> list[fences.Block]:
    return [b for b, _ in fences.run_by(RUNNER) if b.heading == heading]


def _one_line(before: fences.Block, after: fences.Block) -> str:
    """The one line ``after`` changes in ``before``, imports aside."""
    diff = [d for d in difflib.ndiff(before.code.splitlines(), after.code.splitlines()) if d[:2] in ("- ", "+ ")]
    changed = [d for d in diff if not d[2:].startswith(("from ", "import "))]
    assert len(changed) == 2 and changed[0][0] == "-" and changed[1][0] == "+", (after.where, diff)
    assert changed[1].endswith("# the one line"), after.where
    return changed[1][2:]


def _exec(block: fences.Block, replacements: dict[str, str]) -> dict[str, Any]:
    code = block.code
    for old, new in replacements.items():
        assert old in code, (block.where, old)
        code = code.replace(old, new)
    module = types.ModuleType(f"docs_adoption_{block.line}_{uuid.uuid4().hex[:6]}")
    sys.modules[module.__name__] = module  # RQ's work horse imports the job by name
    exec(compile(code, block.where, "exec"), module.__dict__)  # noqa: S102
    return module.__dict__


def _db(redis_url: str, n: int) -> tuple[str, redis.Redis]:
    url = urlsplit(redis_url)._replace(path=f"/{n}").geturl()
    client = redis.Redis.from_url(url)
    client.flushdb()
    return url, client


def test_rq_docs_adoption_blocks(redis_url: str, tmp_path: Path) -> None:
    """Before: RQ schedules the retry itself (``retries_left`` 3 -> 2). After: the engine does,
    10 s on the preset of the job's Retry. The command line runs ``OjsWorker`` (a job with
    ``Retry(max=1)``: two runs, then the FailedJobRegistry with its record). Moving: the job
    carries its layer, the worker class its defaults, and a run schedules the job's retry."""
    from rq import Queue, Retry
    from rq.registry import FailedJobRegistry, ScheduledJobRegistry

    from ojs_retry.integrations import POLICY_KEY, STATE_KEY
    from ojs_retry.integrations.rq import ADOPTED_META_KEY, ATTEMPTS_META_KEY, DEAD_LETTER_META_KEY

    before, after, command, move = _blocks("RQ (`ojs_retry.integrations.rq`)")
    assert _one_line(before, after).startswith("OjsWorker(")
    url, client = _db(redis_url, 11)
    try:
        for block, mode in ((before, "native"), (after, "adopted")):
            ns = _exec(block, {"Redis()": f"Redis.from_url({url!r})", '"shop"': f'"shop-{mode}"',
                               "work(with_scheduler=True)": "work(with_scheduler=True, burst=True)"})
            [job] = [ns["queue"].fetch_job(i) for i in ScheduledJobRegistry(queue=ns["queue"]).get_job_ids()]
            if mode == "native":
                assert job.retries_left == 2
                continue
            assert json.loads(job.meta[ADOPTED_META_KEY]) == \
                {"preset": {"system": "rq", "max": 3, "interval": [10, 30, 60]}}
            state = json.loads(job.meta[STATE_KEY])
            waited = datetime.fromisoformat(state["next_retry_at"]) - datetime.fromisoformat(
                state["errors"][0]["timestamp"])
            assert waited.total_seconds() == 10, state
        # The command line, on a job of a module of its own.
        (tmp_path / "adoption_jobs.py").write_text("def fail():\n    raise ConnectionError('down')\n")
        sys.path.insert(0, str(tmp_path))
        try:
            queue = Queue("shop-cli", connection=client)
            job = queue.enqueue("adoption_jobs.fail", retry=Retry(max=1))
        finally:
            sys.path.remove(str(tmp_path))
        args = [a if a != "shop" else "shop-cli" for a in command.code.split()]
        assert args[:2] == ["rq", "worker"], command.where
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, "-m", "rq.cli", *args[1:], "--url", url, "--burst"], env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert FailedJobRegistry(queue=queue).get_job_ids() == [job.id], done.stderr
        job.refresh()
        assert job.meta[ATTEMPTS_META_KEY] == 2
        assert job.meta[DEAD_LETTER_META_KEY]["decision"]["reason"] == "exhausted"
        # Moving the job, and the queue.
        ns = _exec(move, {"Redis()": f"Redis.from_url({url!r})"})
        queue = ns["queue"]
        [job] = [queue.fetch_job(i) for i in queue.job_ids]
        assert json.loads(job.meta[POLICY_KEY]) == {"max_attempts": 5, "initial_interval": "PT10S"}
        ns["ShopWorker"]([queue], connection=queue.connection).work(with_scheduler=True, burst=True)
        assert ScheduledJobRegistry(queue=queue).get_job_ids() == [job.id]
        job.refresh()
        assert ADOPTED_META_KEY not in job.meta and job.meta[ATTEMPTS_META_KEY] == 1
    finally:
        client.flushdb()


def test_dramatiq_docs_adoption_blocks(redis_url: str) -> None:
    """Before and after build the same middleware but ``OjsRetries`` in ``Retries``' place; the
    after block's actors keep their options (a bad one is refused where declared). Moving: the
    message sent with its layer carries it."""
    import dramatiq
    from dramatiq.message import Message
    from dramatiq.middleware import Retries

    from ojs_retry.integrations.dramatiq import OjsRetries, PolicyRefused

    before, after, move = _blocks("Dramatiq (`ojs_retry.integrations.dramatiq`)")
    assert _one_line(before, after).startswith("broker = RedisBroker(")
    url, client = _db(redis_url, 12)
    previous = dramatiq.get_broker()
    try:
        native, adopted = (_exec(b, {'"redis://127.0.0.1:6379/0"': repr(url)})["broker"] for b in (before, after))
        assert [type(m) for m in adopted.middleware] == \
            [OjsRetries if t is Retries else t for t in map(type, native.middleware)]
        assert adopted.get_actor("charge").options["max_retries"] == 5
        with pytest.raises(PolicyRefused) as refused:
            dramatiq.actor(lambda: None, actor_name="bad", broker=adopted, max_retries=-1)
        assert refused.value.error.path == "preset.max_retries"
        _exec(move, {'"redis://127.0.0.1:6379/0"': repr(url)})
        sent = [Message.decode(raw) for raw in client.hgetall("dramatiq:default.msgs").values()]
        assert [(m.actor_name, m.args, m.options["ojs_retry_policy"]) for m in sent] == [
            ("refund", (7,), '{"max_attempts":2}')]
    finally:
        dramatiq.set_broker(previous)
        client.flushdb()
