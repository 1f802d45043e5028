"""The OS locks by which one run at a time holds a folder (a work directory, a batch's -o): held until released or
until the process ends, however it ends."""

from __future__ import annotations

import logging
from pathlib import Path

from filelock import FileLock, Timeout

from musicvid.core.errors import UserError

log = logging.getLogger("musicvid")


class Busy(UserError):
    """Another run holds the folder."""


def os_lock(path: Path, busy: str | None, what: str) -> FileLock:
    """The OS lock on the file `path`, held until released or until this process ends, however it ends (the OS
    releases it then, so a killed run never leaves it held); another run's is refused with `busy`, or waited for
    where `busy` is None (`what` names the folder in the note)."""
    lock = FileLock(path)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if busy is not None:
            raise Busy(busy) from None
        log.warning("waiting for another run to finish with %s", what)
        lock.acquire()
    return lock
