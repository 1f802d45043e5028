"""librosa's numba kernels, compiled into numba's cache (beside librosa's modules) by one process at a time.

Processes that compile them at once write each other's cache files (numba issue 10128): every later process that
loads the mixed cache crashes (a segmentation fault, no message) until it is deleted. Two renders started together on
a fresh install did so. So the first block of a process that uses a set of kernels (kernels_compiled) runs holding an
exclusive lock on librosa's own module file, opened read only: nothing is written for the lock, and every process of
one install sees the same file. Later blocks of that set find its kernels compiled in the process, and take no lock."""

from __future__ import annotations

import contextlib
import fcntl
import logging
from collections.abc import Iterator

log = logging.getLogger("musicvid")
_COMPILED: set[str] = set()  # the sets of kernels this process has compiled or read from the cache


@contextlib.contextmanager
def kernels_compiled(name: str) -> Iterator[None]:
    """The block that uses the kernels `name` stands for, run holding the lock (module doc) until this process has
    run it once to its end."""
    if name in _COMPILED:
        yield
        return
    import librosa

    with open(librosa.__file__, "rb") as module:
        try:
            fcntl.flock(module, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (let go as the file closes)
        except BlockingIOError:  # (a first compile takes minutes on a busy machine: say why nothing moves)
            log.warning("waiting for another musicvid process to finish compiling librosa's kernels (numba)")
            fcntl.flock(module, fcntl.LOCK_EX)
        yield
    _COMPILED.add(name)
