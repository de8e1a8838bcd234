"""Queue integrations: existing queues' retries decided by an OJS policy.

Each queue has its own module; it imports without its queue package and,
when used without it, raises one ``ImportError`` naming the extra to install
(e.g. ``pip install "ojs-retry[celery]"``). Every module takes a policy by
the one keyword ``ojs_retry_policy``:

* :mod:`ojs_retry.integrations.celery` — a Celery ``Task`` base class (and its worker-side ``Request``);
* :mod:`ojs_retry.integrations.rq` — an RQ exception handler and enqueue helper;
* :mod:`ojs_retry.integrations.dramatiq` — a Dramatiq middleware replacing ``Retries``;
* :mod:`ojs_retry.integrations.bullmq` — BullMQ for Python;
* :mod:`ojs_retry.integrations.chasquimq` — a ChasquiMQ handler wrapper.

What they share (the error class, failures from exceptions, policy layering
and enqueue-time validation, the dead-letter record) is re-exported here.
See docs/integrations.md.
"""

from ._core import (
    HISTORY_LIMIT,
    POLICY_KEY,
    STATE_KEY,
    DecisionEvent,
    Failure,
    JobError,
    Listener,
    error_type_of,
    failure_from_exception,
    layer_text,
    notify,
    now_ms,
    resolve_policy,
    transact,
    validate_job_policy,
)

__all__ = [
    "HISTORY_LIMIT",
    "POLICY_KEY",
    "STATE_KEY",
    "DecisionEvent",
    "Failure",
    "JobError",
    "Listener",
    "error_type_of",
    "failure_from_exception",
    "layer_text",
    "notify",
    "now_ms",
    "resolve_policy",
    "transact",
    "validate_job_policy",
]
