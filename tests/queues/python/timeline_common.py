"""The runner interface of the cross-queue identity test, shared by every queue.

Every queue has a module ``tests/queues/python/timeline_<queue>.py`` with

    def run(redis_url: str, scenario: dict, workers: int = 2) -> dict

returning the timeline document (``queues-shared.md``), and a command line

    python timeline_<queue>.py --redis URL --scenario FILE [--workers 2]

printing it to stdout (``cli(run)`` below does that). A runner enqueues the
scenario's jobs (job ids exactly as in the scenario) with the scenario's
policy on its queue's integration, starts ``workers`` real worker processes,
waits for every job's terminal entry, stops the workers (by pid) and returns
``{"queue", "precision_ms", "jobs"}``.

In the worker processes, the job handler is :func:`handle` (the scripted
outcomes) and the integration's listener is :meth:`Recorder.decided`; both
write events to Redis lists ``ojs-timeline:<run>:<job id>`` that
:meth:`Recorder.collect` turns into timelines. The worker processes find the
Redis URL, the run id and the scenario file in the environment
(``Recorder.env()`` / ``Recorder.from_env()``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import redis

from ojs_retry import RetryPolicy
from ojs_retry.integrations import DecisionEvent, JobError, now_ms

HERE = Path(__file__).resolve().parent
SCENARIO_PATH = HERE.parent / "scenario.json"

ENV_REDIS = "OJS_TIMELINE_REDIS"
ENV_RUN = "OJS_TIMELINE_RUN"
ENV_SCENARIO = "OJS_TIMELINE_SCENARIO"
#: Set (to anything) in a worker's environment: a listener that raises is
#: told each decision before the recorder.
ENV_RAISING_LISTENER = "OJS_RAISING_LISTENER"


class Declined(Exception):
    """An exception an actor lists in Dramatiq's ``throws``."""


class DeclinedCard(Declined):
    """A subclass of it (Dramatiq matches ``throws`` with ``isinstance``)."""


def _raising_listener(event: DecisionEvent) -> None:
    raise RuntimeError(f"a listener that raises, told about {event.job_id}")


def listeners(record: Callable[[DecisionEvent], None]) -> tuple[Callable[[DecisionEvent], None], ...]:
    """The listeners of a worker: the recorder, after a raising one when
    ENV_RAISING_LISTENER is set."""
    return (_raising_listener, record) if os.environ.get(ENV_RAISING_LISTENER) else (record,)


def kill_after_deciding(event: DecisionEvent) -> None:
    """A listener (after the recorder): SIGKILLs its own process when the
    scenario's outcome of the attempt has ``kill_after_deciding``. Listeners
    are told once the decision was carried out: the process dies after
    that and before it reports to anyone (Celery: a pool process, before
    its worker's main process got the result). A timed-out failure is a
    lost attempt decided elsewhere (Celery's main process): never killed."""
    if event.failure.timed_out:
        return
    job = next(j for j in load_scenario(Recorder.from_env().scenario_path)["jobs"] if j["id"] == event.job_id)
    outcome = outcome_for(job, event.attempt)
    if outcome is not None and outcome.get("kill_after_deciding"):
        os.kill(os.getpid(), signal.SIGKILL)


def load_scenario(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    with open(path or SCENARIO_PATH, encoding="utf-8") as f:
        scenario: dict[str, Any] = json.load(f)
    return scenario


def outcome_for(job: Mapping[str, Any], attempt: int) -> Mapping[str, Any] | None:
    """The failure the handler raises on ``attempt`` (None: it succeeds).

    Besides ``{"type", "code"}``: ``{"timeout": true}`` sleeps until the
    queue's time limit interrupts it; ``{"kill": true}`` SIGKILLs the process
    running the handler; ``{"kill_parent": true}`` its parent too;
    ``{"kill_after_deciding": true}`` (besides a type) SIGKILLs it once the
    failure was decided (:func:`kill_after_deciding`)."""
    if job["outcomes"] == "always":
        always: Mapping[str, Any] = job["always"]
        return always
    outcomes: Sequence[Mapping[str, Any]] = job["outcomes"]
    return outcomes[attempt - 1] if attempt <= len(outcomes) else None


def expected_timelines(scenario: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """What ``RetryPolicy.decide`` gives for the scenario: per job, per attempt."""
    policy = RetryPolicy(scenario["policy"])
    out: dict[str, list[dict[str, Any]]] = {}
    for job in scenario["jobs"]:
        rows: list[dict[str, Any]] = []
        attempt = 1
        while True:
            outcome = outcome_for(job, attempt)
            if outcome is None:
                rows.append({"attempt": attempt, "action": "succeeded", "reason": None, "delay_ms": None})
                break
            if outcome.get("timeout") or outcome.get("kill"):
                d = policy.decide(attempt, timed_out=True, key=job["id"])
            else:
                d = policy.decide(attempt, type=outcome["type"], code=outcome.get("code"), key=job["id"])
            rows.append({"attempt": attempt, "action": d.action, "reason": d.reason, "delay_ms": d.delay_ms})
            if d.action != "retry":
                break
            attempt += 1
        out[job["id"]] = rows
    return out


class Recorder:
    """Writes and reads the timeline events of one run in Redis."""

    def __init__(self, redis_url: str, run: str, scenario_path: str | os.PathLike[str] | None = None) -> None:
        self.redis_url = redis_url
        self.run = run
        self.scenario_path = str(scenario_path or SCENARIO_PATH)
        self.client = redis.Redis.from_url(redis_url)

    @classmethod
    def new(cls, redis_url: str, scenario: Mapping[str, Any]) -> Recorder:
        """A fresh run; the scenario is written to a file the workers read."""
        run = uuid.uuid4().hex[:12]
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"ojs-scenario-{run}.json"
        path.write_text(json.dumps(scenario), encoding="utf-8")
        return cls(redis_url, run, path)

    @classmethod
    def from_env(cls) -> Recorder:
        return cls(os.environ[ENV_REDIS], os.environ[ENV_RUN], os.environ.get(ENV_SCENARIO))

    def env(self) -> dict[str, str]:
        """The environment a worker process needs to find this run."""
        return {ENV_REDIS: self.redis_url, ENV_RUN: self.run, ENV_SCENARIO: self.scenario_path}

    def key(self, job_id: str) -> str:
        return f"ojs-timeline:{self.run}:{job_id}"

    def _push(self, job_id: str, event: Mapping[str, Any]) -> None:
        self.client.rpush(self.key(job_id), json.dumps(event))

    def start(self, job_id: str) -> int:
        """Counts and records the start of an attempt; returns its number."""
        at = now_ms()
        attempt = int(self.client.incr(self.key(job_id) + ":starts"))
        self._push(job_id, {"kind": "start", "attempt": attempt, "at_ms": at, "pid": os.getpid()})
        return attempt

    def succeeded(self, job_id: str, attempt: int) -> None:
        self._push(job_id, {"kind": "succeeded", "attempt": attempt, "at_ms": now_ms()})

    def decided(self, event: DecisionEvent) -> None:
        """The integrations' listener."""
        d = event.decision
        self._push(
            event.job_id,
            {"kind": "decision", "attempt": event.attempt, "action": d.action, "reason": d.reason,
             "delay_ms": d.delay_ms, "at_ms": event.at_ms, "timed_out": event.failure.timed_out},
        )

    def enqueued(self, job_id: str, retries: int, delay: int | None) -> None:
        """An enqueue of the job as the queue was asked for it (Dramatiq)."""
        self.client.rpush(self.key(job_id) + ":enqueued", json.dumps([retries, delay]))

    def enqueues(self, job_id: str) -> list[list[Any]]:
        return [json.loads(raw) for raw in self.client.lrange(self.key(job_id) + ":enqueued", 0, -1)]

    def starts(self, job_id: str) -> int:
        """How many times the handler started for the job."""
        return int(self.client.get(self.key(job_id) + ":starts") or 0)

    def events(self, job_id: str) -> list[dict[str, Any]]:
        return [json.loads(raw) for raw in self.client.lrange(self.key(job_id), 0, -1)]

    def timeline(self, job_id: str) -> tuple[list[dict[str, Any]], bool]:
        """The job's entries so far and whether the last one is terminal."""
        starts: dict[int, int] = {}
        rows: list[dict[str, Any]] = []
        for ev in self.events(job_id):
            if ev["kind"] == "start":
                starts[ev["attempt"]] = ev["at_ms"]
                continue
            row = {"attempt": ev["attempt"], "action": "succeeded", "reason": None, "delay_ms": None}
            if ev["kind"] == "decision":
                row.update(action=ev["action"], reason=ev["reason"], delay_ms=ev["delay_ms"],
                           timed_out=ev["timed_out"])
            row["started_at_ms"] = starts.get(ev["attempt"])
            row["failed_at_ms"] = ev["at_ms"] if ev["kind"] == "decision" else None
            rows.append(row)
        # In attempt order, not arrival order: a worker tells its listeners
        # after it has carried the decision out, so the next attempt, run by
        # another worker, may be recorded first (Celery: attempt 12's dead
        # letter before attempt 11's retry). A duplicate stays a duplicate.
        rows.sort(key=lambda r: r["attempt"])
        done = bool(rows) and rows[-1]["action"] != "retry"
        return rows, done

    def collect(self, job_ids: Iterable[str], timeout_s: float = 90.0) -> list[str]:
        """Waits until every job has a terminal entry; returns the ids. An
        attempt that should not happen after it is caught by
        :meth:`finished`, once the workers have stopped."""
        ids = list(job_ids)
        wait_until(lambda: all(self.timeline(j)[1] for j in ids), timeout_s,
                   lambda: f"jobs not finished: {json.dumps({j: self.events(j) for j in ids if not self.timeline(j)[1]})}")
        return ids

    def finished(self, ids: list[str], pending: int) -> dict[str, Any]:
        """The timelines, read once the run's workers have stopped (nothing
        can start any more), with nothing left to run: ``pending`` is what
        the broker still holds for the run's own queue (queued, scheduled,
        delayed or unacknowledged messages). A job the engine ended that the
        queue would still run is one of them."""
        if pending:
            events = {j: self.events(j) for j in ids}
            raise AssertionError(f"{pending} message(s) left to run after every job ended: {json.dumps(events)}")
        return {j: self.timeline(j)[0] for j in ids}


def wait_until(done: Callable[[], bool], timeout_s: float, what: Callable[[], str]) -> None:
    """Polls ``done`` (every 50 ms: the state is in Redis, no event to block
    on) until it holds; ``TimeoutError`` with ``what()`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"after {timeout_s}s: {what()}")
        time.sleep(0.05)


def message_for(outcome: Mapping[str, Any], attempt: int) -> str:
    """The failure's message: ``"attempt N"``, or what a real failure at
    failure time can carry — ``{"long_message": n}`` (an upstream HTML page:
    n characters), ``{"control_message": n}`` (n control characters),
    ``{"surrogate": true}`` (bytes decoded with
    ``surrogateescape``)."""
    if outcome.get("long_message"):
        return "<html>" + "x" * int(outcome["long_message"])
    if outcome.get("control_message"):  # each escapes to six bytes in JSON
        return "\x01" * int(outcome["control_message"])
    if outcome.get("surrogate"):
        return b"bad \xff byte".decode("utf-8", "surrogateescape")
    return f"attempt {attempt}"


def handle(job_id: str) -> str:
    """The scenario's handler: runs in the worker, raises the scripted failure."""
    rec = Recorder.from_env()
    scenario = load_scenario(rec.scenario_path)
    job = next(j for j in scenario["jobs"] if j["id"] == job_id)
    attempt = rec.start(job_id)
    outcome = outcome_for(job, attempt)
    if outcome is not None and outcome.get("kill"):
        os.kill(os.getpid(), signal.SIGKILL)
    if outcome is not None and outcome.get("kill_parent"):  # a Celery pool process: its worker's main process
        os.kill(os.getppid(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
    if outcome is not None and outcome.get("raise") == "declined_card":
        raise DeclinedCard(f"attempt {attempt}")
    if outcome is not None and outcome.get("raise") == "dramatiq.Retry":
        import dramatiq  # noqa: PLC0415  (only the Dramatiq scenarios raise it)

        raise dramatiq.Retry(f"attempt {attempt}", delay=int(outcome["delay"]))
    if outcome is not None and outcome.get("timeout"):
        for _ in range(600):  # short sleeps: Dramatiq's time limit interrupts between bytecodes
            time.sleep(0.05)
    if outcome is not None:
        raise JobError(outcome["type"], code=outcome.get("code"), message=message_for(outcome, attempt))
    rec.succeeded(job_id, attempt)
    return "ok"


def child_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of a worker process: this one's, the test directory on
    PYTHONPATH, and ``extra``."""
    env = dict(os.environ)
    paths = [str(HERE), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.update(extra)
    return env


def start_workers(argv: Sequence[str], count: int, env: Mapping[str, str], log_prefix: str) -> list[subprocess.Popen[bytes]]:
    """Starts ``count`` worker processes (own process groups), logs to files."""
    procs = []
    for i in range(count):
        log = open(f"{log_prefix}-{i}.log", "wb")  # noqa: SIM115 - closed with the process
        procs.append(subprocess.Popen(list(argv), env=dict(env), stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))
    return procs


def stop_workers(procs: Iterable[subprocess.Popen[bytes]], timeout_s: float = 10.0) -> None:
    """Stops each worker as its queue expects: SIGTERM to its main process
    by pid (a warm shutdown, which lets a pool process report the attempt
    it already decided), then SIGKILL to its whole process group, for a
    main process that did not exit in time and for any child it left."""
    procs = list(procs)
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout_s)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the group is gone: nothing left
        p.wait()


def log_prefix(queue: str, run: str) -> str:
    base = Path(os.environ.get("OJS_QUEUES_LOGS", "/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    return str(base / f"{queue}-{run}")


def cli(run: Callable[..., dict[str, Any]]) -> None:
    """The runner's command line: prints the timeline document."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", required=True)
    ap.add_argument("--scenario", default=str(SCENARIO_PATH))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out")
    # Another broker for the queue (Celery's and Dramatiq's RabbitMQ: an AMQP
    # URL); the timeline is still recorded in --redis.
    ap.add_argument("--broker")
    args = ap.parse_args()
    extra = {"broker": args.broker} if args.broker else {}
    doc = run(args.redis, load_scenario(args.scenario), args.workers, **extra)
    text = json.dumps(doc, indent=1)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")
