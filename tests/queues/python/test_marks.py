"""The local marks a Celery pool process leaves for its worker's main process
(``ojs_retry.integrations._marks``), on the real filesystem, without a
broker: what is kept, what reads as no mark, and that a failure to mark is
logged and never raised (a job's failure path goes on)."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

import pytest

from ojs_retry.integrations import _marks


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    d = _marks.directory("test", 4242)
    assert d == str(tmp_path / f"ojs-retry-test-{os.getuid()}" / "4242")
    assert _marks.ensure(d)
    return d


def test_a_mark_is_read_once(where: str) -> None:
    mark = _marks.path(where, "a/../job id", 3)
    assert os.path.dirname(mark) == where  # any task id stays one file name in the directory
    assert _marks.put(mark, "dead_letter")
    assert os.listdir(where) == ["a%2F..%2Fjob%20id.3"]
    assert _marks.take(mark) == "dead_letter"
    assert _marks.take(mark) is None
    assert os.listdir(where) == []


def test_an_empty_mark_is_no_mark_and_is_removed(where: str) -> None:
    mark = _marks.path(where, "job", 0)
    Path(mark).touch()  # a process killed between creating the mark and writing it
    assert _marks.take(mark) is None
    assert not os.path.exists(mark)


def test_a_directory_others_can_write_to_is_refused(where: str, caplog: pytest.LogCaptureFixture) -> None:
    os.chmod(where, 0o777)
    with caplog.at_level(logging.WARNING, logger="ojs_retry"):
        assert not _marks.ensure(where)
    assert "is not a directory only this user can write to" in caplog.text


def test_a_directory_cleaned_away_is_made_again(where: str) -> None:
    _marks.remove(where)  # a temporary directory's clean-up, under a long-lived pool process
    mark = _marks.path(where, "job", 1)
    assert _marks.put(mark, "retry")
    assert _marks.take(mark) == "retry"


def test_a_mark_that_cannot_be_written_is_logged(where: str, caplog: pytest.LogCaptureFixture) -> None:
    mark = _marks.path(where, "job", 0)
    os.mkdir(mark)  # whatever is in the way
    with caplog.at_level(logging.WARNING, logger="ojs_retry"):
        assert not _marks.put(mark, "retry")
    assert "could not write the mark" in caplog.text
    _marks.remove(where)
    _marks.drop(mark)  # nothing there: no error either
    assert not os.path.exists(where)


def test_a_pool_process_marks_the_attempts_the_worker_ran(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool process's side of the Celery integration (no broker: a
    discard sends nothing): an attempt the worker ran is marked with its
    task id and ``retries``; a call run in the process itself is not (the
    main process would never see it, and its mark would stay)."""
    from celery import Celery

    from ojs_retry.integrations import JobError
    from ojs_retry.integrations import celery as ojs_celery

    monkeypatch.setattr(ojs_celery, "_pool_marks", where)
    app = Celery("marks", set_as_current=False)

    @app.task(bind=True, base=ojs_celery.OjsTask, name="marks.fails")
    def fails(self: object) -> None:
        raise JobError("external.blip", code="DISCARD")

    with pytest.raises(JobError):
        fails()
    with pytest.raises(JobError):
        fails.apply(throw=True)  # eager
    assert os.listdir(where) == []
    fails.push_request(id="t/1", retries=2, called_directly=False)  # as the worker's trace does
    try:
        with pytest.raises(JobError):
            fails()
    finally:
        fails.pop_request()
    assert _marks.take(_marks.path(where, "t/1", 2)) == "discard"
