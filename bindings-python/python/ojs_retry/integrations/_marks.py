"""Local marks: one small file per decided attempt, left by the process that
decided it for another process on the same host (Celery: a pool process for
its worker's main process), so an attempt is decided exactly once.

A mark is written after the decision was carried out and read once: its
content is the action (``retry``, ``discard``, ``dead_letter``). Nothing here
may fail a job: an ``OSError`` is logged and the mark is treated as absent.

>>> import os
>>> d = directory("doc", os.getpid())
>>> ensure(d) and put(path(d, "job/1", 0), "retry")
True
>>> take(path(d, "job/1", 0)), take(path(d, "job/1", 0))
('retry', None)
>>> remove(d)
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import tempfile
from urllib.parse import quote

_log = logging.getLogger("ojs_retry")


def _uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else 0


def directory(system: str, owner: int) -> str:
    """The marks of the process ``owner`` (a pid): one directory per process,
    under a directory of this user's, in the temporary directory."""
    return os.path.join(tempfile.gettempdir(), f"ojs-retry-{system}-{_uid()}", str(owner))


def ensure(where: str) -> bool:
    """Makes ``where`` and its parent (mode 0700) if they are missing; False
    (logged) when either is not a directory of this user's that only this
    user can write to (in a shared temporary directory, another user's
    directory could plant or redirect marks)."""
    try:
        for d in (os.path.dirname(where), where):
            try:
                os.mkdir(d, 0o700)
            except FileExistsError:
                pass
            st = os.lstat(d)
            if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022 or st.st_uid != _uid():
                raise PermissionError(f"{d} is not a directory only this user can write to")
    except OSError as exc:
        _log.warning("ojs_retry: no marks in %s: %s", where, exc)
        return False
    return True


def path(where: str, key: str, attempt: int) -> str:
    """The mark of attempt ``attempt`` of job ``key`` (any text: quoted)."""
    return os.path.join(where, f"{quote(key, safe='')}.{attempt}")


def _write(mark: str, action: str) -> None:
    fd = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, action.encode())
    finally:
        os.close(fd)


def put(mark: str, action: str) -> bool:
    """Writes the mark: one write of a few bytes. A process that dies
    between creating it and writing it leaves it empty, which reads as no
    mark. A directory removed meanwhile (a temporary directory's clean-up
    of a long-lived process's) is made again. False (logged) when the mark
    could not be written."""
    try:
        try:
            _write(mark, action)
        except FileNotFoundError:
            if not ensure(os.path.dirname(mark)):
                return False
            _write(mark, action)
    except OSError as exc:
        _log.warning("ojs_retry: could not write the mark %s: %s", mark, exc)
        return False
    return True


def take(mark: str) -> str | None:
    """The mark's action, removing it; None when there is none."""
    try:
        fd = os.open(mark, os.O_RDONLY)
        try:
            action = os.read(fd, 64).decode("ascii", "replace")
        finally:
            os.close(fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        _log.warning("ojs_retry: could not read the mark %s: %s", mark, exc)
        return None
    drop(mark)
    return action or None


def drop(mark: str) -> None:
    """Removes the mark if it is there."""
    try:
        os.unlink(mark)
    except OSError:
        pass  # none (the usual case: nothing was marked) or already gone


def remove(where: str) -> None:
    """Removes the directory and what is left in it."""
    shutil.rmtree(where, ignore_errors=True)
