"""The Celery app of the presets-in-the-queue test (``-A presets_celery_app``).

Native tasks retry with Celery's own ``autoretry_for`` options (jitter off);
the engine task is an ``OjsTask`` whose policy is the ``celery`` preset the
message carries. Both record what Celery itself reports: the ``task_retry``
signal's ``reason.when`` (the countdown ``Task.retry`` was given, seconds)
and the ``task_failure`` signal (Celery gave up: FAILURE).
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery

from ojs_retry.integrations.celery import OjsTask

import presets_common as pc

app = Celery("ojs_presets_test", broker=os.environ.get("OJS_CELERY_BROKER", "redis://127.0.0.1:6379/0"))
app.conf.update(task_ignore_result=True, worker_prefetch_multiplier=1, broker_connection_retry_on_startup=True,
                worker_hijack_root_logger=False)

#: The native configurations, by task; the engine runs the same options as a preset.
NATIVE = {
    "ojs.presets.backoff": {"autoretry_for": (Exception,), "dont_autoretry_for": (pc.Fatal,), "max_retries": 3,
                            "retry_backoff": 1, "retry_backoff_max": 2, "retry_jitter": False},
    "ojs.presets.fixed": {"autoretry_for": (Exception,), "max_retries": 2, "default_retry_delay": 0.3},
}


def preset_options(task: str) -> dict[str, Any]:
    """A native task's options in the ``celery`` preset's vocabulary."""
    opts = {k: v for k, v in NATIVE[task].items() if k != "autoretry_for"}
    if "dont_autoretry_for" in opts:
        opts["dont_autoretry_for"] = [f"{c.__module__}.{c.__qualname__}" for c in opts["dont_autoretry_for"]]
    return opts


def _native(name: str) -> Any:
    @app.task(bind=True, name=name, **NATIVE[name])
    def task(self: Any, job_id: str) -> None:
        pc.fail(job_id)

    return task


backoff = _native("ojs.presets.backoff")
fixed = _native("ojs.presets.fixed")


class EngineTask(OjsTask):
    ojs_listeners = (pc.record_decision,)


@app.task(bind=True, base=EngineTask, name="ojs.presets.engine")
def engine(self: Any, job_id: str) -> None:
    pc.fail(job_id)


pc.record_celery_signals()
