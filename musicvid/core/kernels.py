"""librosa's numba kernels, compiled into numba's cache (beside librosa's modules) by one process at a time.

Processes that compile them at once write each other's cache files (numba issue 10128): every later process that
loads the mixed cache crashes (a segmentation fault, no message) until it is deleted. Two renders started together on
a fresh install did so. So the first block of a process that uses a set of kernels (kernels_compiled) runs holding an
exclusive lock on librosa's own module file, opened read only: every process of one install sees the same file.
Later blocks of that set find its kernels compiled in the process, and take no lock. Once a set is in the cache, a
mark beside it (in librosa's __pycache__, named for numba's and librosa's versions) lets other processes read it
without the lock: reading the cache writes nothing, and holding the lock for it made renders run one at a time."""

from __future__ import annotations

import contextlib
import fcntl
import logging
from collections.abc import Iterator
from pathlib import Path

from vipe_core.errors import signals_held

log = logging.getLogger("musicvid")
_COMPILED: set[str] = set()  # the sets of kernels this process has compiled or read from the cache


def _marks_folder() -> Path:
    import librosa

    return Path(librosa.__file__).parent / "__pycache__"


def _mark(name: str) -> Path:
    import librosa
    import numba

    return _marks_folder() / f"musicvid-kernels-{name}-numba{numba.__version__}-librosa{librosa.__version__}.done"


@contextlib.contextmanager
def kernels_compiled(name: str) -> Iterator[None]:
    """The block that uses the kernels `name` stands for, run holding the lock (module doc) until they are in the
    cache: once a process, and in no process once the cache is marked as holding them."""
    if name in _COMPILED or _mark(name).exists():
        yield
        _COMPILED.add(name)
        return
    import librosa

    with open(librosa.__file__, "rb") as module:
        try:
            fcntl.flock(module, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (let go as the file closes)
        except BlockingIOError:  # (a first compile takes minutes on a busy machine: say why nothing moves)
            log.warning("waiting for another musicvid process to finish compiling librosa's kernels (numba)")
            fcntl.flock(module, fcntl.LOCK_EX)
        with signals_held():  # (a stop raised in numba's compile, called back from llvmlite, would be lost)
            yield
        with contextlib.suppress(OSError):  # (a cache that cannot be marked: each first block takes the lock)
            _mark(name).touch()
    _COMPILED.add(name)
