"""The integrations' one base, without a broker: the missing-package rule,
the one policy keyword and its deprecated aliases, the listener rule."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from ojs_retry import PolicyError
from ojs_retry.integrations import DecisionEvent, Failure, _core
from ojs_retry.integrations import bullmq as ojs_bullmq
from ojs_retry.integrations import celery as ojs_celery
from ojs_retry.integrations import chasquimq as ojs_chasqui
from ojs_retry.integrations import dramatiq as ojs_dramatiq
from ojs_retry.integrations import rq as ojs_rq

BAD = {"max_attempts": -1}


@pytest.mark.parametrize("extra", ["celery", "rq", "dramatiq", "bullmq", "chasquimq"])
def test_a_missing_queue_package_is_one_import_error(extra: str) -> None:
    assert _core.import_optional(f"{extra}_is_not_installed_here") is None
    with pytest.raises(ImportError) as info:
        _core.require(None, extra)
    assert str(info.value) == (
        f'ojs_retry.integrations.{extra} needs the "{extra}" package, which is not installed: '
        f'pip install "ojs-retry[{extra}]"'
    )
    assert info.value.name == extra


def test_each_module_says_so_when_its_package_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ojs_rq, "_timeouts", None)
    with pytest.raises(ImportError, match=r'ojs_retry.integrations.rq needs the "rq" package'):
        ojs_rq.OjsRetry()
    monkeypatch.setattr(ojs_dramatiq, "_middleware", None)
    with pytest.raises(ImportError, match=r'ojs_retry.integrations.dramatiq needs the "dramatiq" package'):
        ojs_dramatiq.OjsRetries()
    monkeypatch.setattr(ojs_celery, "_celery", None)
    with pytest.raises(ImportError, match=r'ojs_retry.integrations.celery needs the "celery" package'):
        type("T", (ojs_celery.OjsTask,), {})


def _refused(call: Any) -> None:
    with pytest.raises(PolicyError) as info:
        call()
    assert info.value.field == "max_attempts"


def test_one_keyword_in_every_module() -> None:
    """``ojs_retry_policy`` is taken (and validated) everywhere a policy is given."""
    _refused(lambda: ojs_rq.OjsRetry(ojs_retry_policy=BAD))
    _refused(lambda: ojs_rq.OjsRetry().enqueue(None, print, ojs_retry_policy=BAD))
    _refused(lambda: ojs_dramatiq.OjsRetries(ojs_retry_policy=BAD))
    _refused(lambda: ojs_bullmq.job_options(None, ojs_retry_policy=BAD, defaults=None))
    _refused(lambda: ojs_bullmq.Processor(print, ojs_retry_policy=BAD))
    _refused(lambda: ojs_chasqui.envelope(None, ojs_retry_policy=BAD, defaults=None))
    assert _core.POLICY_KEYWORD == _core.POLICY_KEY == "ojs_retry_policy"


def test_a_producer_giving_a_layer_must_say_which_defaults_the_workers_run() -> None:
    """BullMQ and ChasquiMQ producers do not run the workers: a layer is only
    valid over the workers' defaults, so the helpers refuse to guess them."""
    for call in (lambda **kw: ojs_bullmq.job_options(None, **kw), lambda **kw: ojs_chasqui.envelope(None, **kw)):
        with pytest.raises(TypeError, match=r"pass defaults= \(None when the workers have none\)"):
            call(ojs_retry_policy={"max_attempts": 2})
        call()  # no layer: nothing to validate
        call(ojs_retry_policy={"max_attempts": 2}, defaults=None)
        with pytest.raises(PolicyError) as err:
            call(ojs_retry_policy={"initial_interval": "PT5S"}, defaults={"max_interval": "PT3S"})
        assert err.value.code == "validation.retry_policy_invalid"


def test_the_earlier_names_still_work_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"policy=\.\.\.\) is deprecated: use ojs_retry_policy="):
        assert ojs_bullmq.job_options(None, policy={"max_attempts": 2}, defaults=None)["ojs_retry_policy"] == '{"max_attempts":2}'
    with pytest.warns(DeprecationWarning):
        _refused(lambda: ojs_rq.OjsRetry().enqueue(None, print, ojs_policy=BAD))
    with pytest.warns(DeprecationWarning):
        assert ojs_rq.OjsRetry(policy={"max_attempts": 2}).policy == {"max_attempts": 2}
    with pytest.warns(DeprecationWarning):
        assert ojs_chasqui.envelope(None, policy={"max_attempts": 2}, defaults=None)["ojs_retry"]["policy"] == '{"max_attempts":2}'
    with pytest.warns(DeprecationWarning, match="OjsTask.ojs_policy is deprecated"):
        task = type("T", (ojs_celery.OjsTask,), {"ojs_policy": {"max_attempts": 2}})
    assert task.ojs_retry_policy == {"max_attempts": 2}
    with pytest.raises(TypeError, match="got both"):
        ojs_bullmq.job_options(None, policy={}, ojs_retry_policy={})


def test_a_listener_that_raises_is_logged_and_the_next_is_told(caplog: pytest.LogCaptureFixture) -> None:
    from ojs_retry import RetryPolicy

    told: list[DecisionEvent] = []

    def raising(event: DecisionEvent) -> None:
        raise RuntimeError("listener")

    out = _core.transact(RetryPolicy(), None, None, 1, Failure("x.y"), key="j", queue="q", now=0)
    with caplog.at_level(logging.ERROR, logger="ojs_retry"):
        _core.tell([raising, told.append], "rq", "j", 1, Failure("x.y"), out, 0, queue="q")
    assert [e.decision for e in told] == [out.decision] and told[0].extra == {"queue": "q"}
    assert "listener" in caplog.text
