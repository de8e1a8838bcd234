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


def test_a_mark_that_cannot_be_written_is_logged(where: str, caplog: pytest.LogCaptureFixture) -> None:
    mark = _marks.path(os.path.join(where, "gone"), "job", 0)
    with caplog.at_level(logging.WARNING, logger="ojs_retry"):
        assert not _marks.put(mark, "retry")
    assert "could not write the mark" in caplog.text
    _marks.drop(mark)  # nothing there: no error either
    _marks.remove(where)
    assert not os.path.exists(where)
