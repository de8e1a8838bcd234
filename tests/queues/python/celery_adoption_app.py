"""The Celery app of the one-line adoption test (``-A celery_adoption_app``).

The same tasks, with Celery's own retry options, run natively or — with
``OJS_ADOPT=1`` in the worker's environment — after
``ojs_retry.integrations.celery.install(app)``, the one line of adoption.
Both record what Celery itself reports (as presets_celery_app does): the
``task_retry`` signal's ``reason.when`` (the countdown ``Task.retry`` got,
seconds) and ``task_failure`` (FAILURE); adopted, the integration's
decisions too (its listener).

A job's id says what its run raises: ``sub`` a ``ConnectionResetError`` (a
subclass of ``ConnectionError``), ``outside`` a ``ValueError``, ``fatal``
``presets_common.Fatal``, anything else a ``RuntimeError``.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery

from ojs_retry.integrations.celery import install

import presets_common as pc

ENV_ADOPT = "OJS_ADOPT"

app = Celery("ojs_adoption_test", broker=os.environ.get("OJS_CELERY_BROKER", "redis://127.0.0.1:6379/0"))
app.conf.update(task_ignore_result=True, worker_prefetch_multiplier=1, broker_connection_retry_on_startup=True,
                worker_hijack_root_logger=False)
if os.environ.get(ENV_ADOPT) == "1":
    install(app, listeners=[pc.record_decision])

#: An OJS policy one task opts into (natively an option Celery ignores).
OPT_IN = {"max_attempts": 2, "initial_interval": "PT0.2S", "jitter": False}


def fail(job_id: str) -> None:
    pc.recorder().push(job_id, kind="start")
    if "sub" in job_id:
        raise ConnectionResetError(job_id)
    if "outside" in job_id:
        raise ValueError(job_id)
    if "fatal" in job_id:
        raise pc.Fatal(job_id)
    raise RuntimeError(job_id)


@app.task(name="ojs.adopt.backoff", autoretry_for=(ConnectionError,), retry_backoff=1, retry_backoff_max=2,
          retry_jitter=False, max_retries=3)
def backoff(job_id: str) -> None:
    fail(job_id)


@app.task(name="ojs.adopt.fixed", autoretry_for=(Exception,), dont_autoretry_for=(pc.Fatal,), max_retries=2,
          default_retry_delay=0.3)
def fixed(job_id: str) -> None:
    fail(job_id)


@app.task(name="ojs.adopt.kwargs", autoretry_for=(RuntimeError,), retry_kwargs={"max_retries": 1, "countdown": 0.25})
def kwargs(job_id: str) -> None:
    fail(job_id)


@app.task(bind=True, name="ojs.adopt.explicit", max_retries=1, default_retry_delay=0.2)
def explicit(self: Any, job_id: str) -> None:
    try:
        fail(job_id)
    except RuntimeError as exc:
        raise self.retry(exc=exc) from exc


@app.task(name="ojs.adopt.plain")
def plain(job_id: str) -> None:
    fail(job_id)


@app.task(name="ojs.adopt.opt_in", ojs_retry_policy=OPT_IN)
def opt_in(job_id: str) -> None:
    fail(job_id)


pc.record_celery_signals()
