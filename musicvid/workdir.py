"""A work directory is held by one run at a time.

A run removes the temporaries a killed run left before it resumes (musicvid.files); a second run on
the same folder would remove the first's files as it writes them. So each run holds an OS file lock on
the folder's lock file for as long as it works there: the OS releases it when the run ends, however it
ends (a SIGKILL too), so a killed run never leaves a folder locked. The lock file's name has one dot,
so the sweep of temporaries (`.name.random.suffix`) never takes it.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from filelock import FileLock, Timeout

from musicvid.errors import UserError

log = logging.getLogger("musicvid")

LOCK = ".musicvid-lock"


class WorkdirBusy(UserError):
    """Another run holds the work directory."""


def check_workdir(path: Path) -> None:
    """Refuse, before any work, a work directory that cannot be one: a file, or a read-only folder."""
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is None:
        return
    if not existing.is_dir():
        where = "is a file" if existing == path else f"lies under {existing}, which is a file"
        raise UserError(f"work directory {path} {where}: give --workdir a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"work directory {path} cannot be written: {existing} is read-only")


@contextmanager
def held(path: Path, wait: bool = False) -> Iterator[Path]:
    """The work directory `path`, made if need be and locked for this run. Another run's lock is waited
    for with `wait` (a batch's rows of one song), else refused in one sentence. A folder this run made
    and leaves empty after a refusal (bad input found before anything was written) is removed again."""
    check_workdir(path)
    made = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"work directory {path} cannot be made: {error.strerror}") from None
    lock = FileLock(path / LOCK)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if not wait:
            raise WorkdirBusy(
                f"work directory {path} is in use by another musicvid run; wait for it to finish, or give "
                "another --workdir"
            ) from None
        log.warning("waiting for another run to finish with the work directory %s", path)
        lock.acquire()
    try:
        yield path
    except UserError:
        if made and [p.name for p in path.iterdir()] == [LOCK]:
            (path / LOCK).unlink(missing_ok=True)
            path.rmdir()
        raise
    finally:
        lock.release()
