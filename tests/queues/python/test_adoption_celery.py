"""One line of adoption on the real queue: the same Celery app, its tasks
with their own retry options (``autoretry_for`` — a subclass of a listed
class raised, and a class outside the list —, ``dont_autoretry_for``,
``retry_backoff`` with ``retry_jitter=False``, ``retry_backoff_max``,
``max_retries``, ``default_retry_delay``, ``retry_kwargs``, an explicit
``self.retry``), run by one worker natively and by one after
``install(app)`` (celery_adoption_app), same broker, same run: the
timelines (runs, the countdowns Celery's ``task_retry`` reports, FAILURE)
are the same, and the same as the values worked from Celery's code
(celery/app/autoretry.py, ``get_exponential_backoff_interval``,
``Task.retry``). Adopted, every end and every automatic retry is the
engine's decision (its listener), never Celery's autoretry; one task opts
into an OJS policy with its ``ojs_retry_policy`` option and runs on it.

On Redis and on RabbitMQ (the recorder is on Redis either way). The
machinery (worker processes, recorder, waiting, what the broker still
holds) is the presets-in-the-queue test's. Below, in-process with real
Celery apps (no broker): what ``install`` refuses, and the tasks it names as
left on Celery's own retries.
"""

from __future__ import annotations

import sys
from typing import Any

import warnings

import pytest
import redis
from celery import Celery, Task

import amqp_common
import timeline_celery
from ojs_retry import PolicyError
from ojs_retry.integrations.celery import OjsAppTask, install
from test_presets_in_queue import Mode, _run_both, _tag

FAILURE = "FAILURE"

#: Per job kind: its task, then Celery's own timeline (runs, and each step:
#: attempt, retry with the countdown in ms, or the end).
WORKED: dict[str, tuple[str, list[tuple[int, str, int | None]]]] = {
    # min(retry_backoff_max, retry_backoff * 2**retries) s, jitter off; max_retries 3.
    "backoff-sub": ("ojs.adopt.backoff", [(1, "retry", 1000), (2, "retry", 2000), (3, "retry", 2000),
                                          (4, FAILURE, None)]),
    # Outside autoretry_for: it propagates, FAILURE.
    "backoff-outside": ("ojs.adopt.backoff", [(1, FAILURE, None)]),
    # default_retry_delay 0.3 s, max_retries 2.
    "fixed-plain": ("ojs.adopt.fixed", [(1, "retry", 300), (2, "retry", 300), (3, FAILURE, None)]),
    # dont_autoretry_for, though autoretry_for=(Exception,) holds it too.
    "fixed-fatal": ("ojs.adopt.fixed", [(1, FAILURE, None)]),
    # retry_kwargs={"max_retries": 1, "countdown": 0.25}.
    "kwargs-plain": ("ojs.adopt.kwargs", [(1, "retry", 250), (2, FAILURE, None)]),
    # raise self.retry(exc=exc): default_retry_delay 0.2 s, max_retries 1, then exc.
    "explicit-plain": ("ojs.adopt.explicit", [(1, "retry", 200), (2, FAILURE, None)]),
    # No retry options: FAILURE.
    "plain-plain": ("ojs.adopt.plain", [(1, FAILURE, None)]),
}
#: What the adopted worker's listener reports: (attempt, action, delay_ms).
DECIDED: dict[str, list[tuple[int, str, int | None]]] = {
    "backoff-sub": [(1, "retry", 1000), (2, "retry", 2000), (3, "retry", 2000), (4, "discard", None)],
    "backoff-outside": [(1, "discard", None)],
    "fixed-plain": [(1, "retry", 300), (2, "retry", 300), (3, "discard", None)],
    "fixed-fatal": [(1, "discard", None)],
    "kwargs-plain": [(1, "retry", 250), (2, "discard", None)],
    # The first retry is the task's own self.retry (Celery's); the end is the engine's.
    "explicit-plain": [(2, "discard", None)],
    "plain-plain": [(1, "discard", None)],
}
#: The opted-in task: natively the option means nothing (FAILURE); adopted,
#: its policy (max_attempts 2, 0.2 s, jitter off) retries once.
OPT_IN_NATIVE = [(1, FAILURE, None)]
OPT_IN_ADOPTED = [(1, "retry", 200), (2, FAILURE, None)]
OPT_IN_DECIDED = [(1, "retry", 200), (2, "discard", None)]


def _decided(mode: Mode, job_id: str) -> list[tuple[int, str, int | None]]:
    return [(d["attempt"], d["action"], d["delay_ms"]) for d in mode.decisions(job_id)]


def _start(broker_url: str, adopted: Mode) -> Any:
    def start(mode: Mode) -> list[Any]:
        argv = [sys.executable, "-m", "celery", "-A", "celery_adoption_app", "worker", "-Q", mode.name, "-c", "1",
                "-P", "prefork", "--without-mingle", "--without-gossip", "--without-heartbeat",
                "-n", f"{mode.run}@%h", "--loglevel", "INFO"]
        mode.env["OJS_CELERY_BROKER"] = broker_url
        if mode is adopted:
            mode.env["OJS_ADOPT"] = "1"
        return mode.start(argv)

    return start


def _held(broker_url: str, client: Any, queue: str, ids: list[str]) -> int:
    if amqp_common.is_amqp(broker_url):
        return amqp_common.held(broker_url, [queue])
    return timeline_celery.pending(client, queue, ids)


def _dead(broker_url: str, client: Any, queue: str) -> int:
    if amqp_common.is_amqp(broker_url):
        return amqp_common.held(broker_url, [f"{queue}:dead"])
    return int(client.llen(f"{queue}:dead"))


@pytest.mark.parametrize("broker", ["redis", "rabbitmq"])
def test_install_keeps_each_tasks_celery_retries(broker: str, request: pytest.FixtureRequest) -> None:
    redis_url: str = request.getfixturevalue("redis_url")
    broker_url: str = request.getfixturevalue(f"{broker}_url")
    tag = _tag()
    jobs = {f"{kind}-{tag}": task for kind, (task, _) in WORKED.items()}
    opt_in = f"opt-in-{tag}"
    jobs[opt_in] = "ojs.adopt.opt_in"
    native = Mode(redis_url, f"celery-adopt-{broker}", "native")
    adopted = Mode(redis_url, f"celery-adopt-{broker}", "adopted")
    with Celery("ojs_adoption_producer", broker=broker_url) as producer:
        for mode in (native, adopted):
            for job, task in jobs.items():
                producer.send_task(task, (job,), task_id=job, queue=mode.name)
    client = redis.Redis.from_url(redis_url)
    _run_both(_start(broker_url, adopted), {native: list(jobs), adopted: list(jobs)},
              lambda mode, ids: _held(broker_url, client, mode.name, ids))

    for kind, (_, steps) in WORKED.items():
        job = f"{kind}-{tag}"
        got_native, got_adopted = native.timeline(job, FAILURE), adopted.timeline(job, FAILURE)
        assert got_native == {"runs": steps[-1][0], "steps": steps}, job
        assert got_adopted == got_native, job
        assert _decided(adopted, job) == DECIDED[kind], job
        assert not native.decisions(job), job
    assert native.timeline(opt_in, FAILURE)["steps"] == OPT_IN_NATIVE
    assert adopted.timeline(opt_in, FAILURE)["steps"] == OPT_IN_ADOPTED
    assert _decided(adopted, opt_in) == OPT_IN_DECIDED
    # Every end discards (Celery's FAILURE): nothing went to the integration's dead list.
    assert _dead(broker_url, client, adopted.name) == 0


# ---------------------------------------------------------------- in-process: what install() checks

def test_install_refuses_defaults_that_are_not_a_policy() -> None:
    app = Celery("ojs_adoption_bad_defaults")
    with pytest.raises(PolicyError) as err:
        install(app, {"max_attempts": "five"})
    assert (err.value.code, err.value.field) == ("validation.retry_policy_invalid", "max_attempts")
    assert not issubclass(app.Task, OjsAppTask)  # nothing installed


def test_a_tasks_options_the_preset_refuses_fail_where_the_task_is_made() -> None:
    # Tasks made here are not shared (Celery would make them in every app).
    app = Celery("ojs_adoption_bad_task")
    install(app)
    with pytest.raises(PolicyError) as err:
        @app.task(name="ojs.adopt.bad", shared=False, lazy=False, autoretry_for=(Exception,), max_retries=-1)
        def bad() -> None: ...
    assert (err.value.code, err.value.field, err.value.path) == ("validation.retry_policy_invalid", "preset", "preset.max_retries")


def test_tasks_left_on_celerys_retries_are_named() -> None:
    app = Celery("ojs_adoption_left")

    @app.task(name="ojs.adopt.before", shared=False, lazy=False)
    def before() -> None: ...

    install(app)

    class Own(Task):  # type: ignore[misc]
        pass

    @app.task(name="ojs.adopt.own_base", shared=False, base=Own)
    def own_base() -> None: ...

    @app.task(name="ojs.adopt.adopted", shared=False, autoretry_for=(ConnectionError,))
    def adopted() -> None: ...

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        app.finalize()
    assert [str(w.message).split(": ", 2)[-1] for w in caught] == ["ojs.adopt.before, ojs.adopt.own_base"]
    assert isinstance(app.tasks["ojs.adopt.adopted"], OjsAppTask)
    assert app.tasks["ojs.adopt.adopted"].run is adopted.__wrapped__  # Celery's autoretry wrapper not installed
