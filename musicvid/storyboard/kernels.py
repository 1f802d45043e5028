"""librosa's numba kernels, compiled into numba's cache (beside librosa's modules) by one process at a time.

Processes that compile them at once write each other's cache files (numba issue 10128): every later process that
loads the mixed cache crashes (a segmentation fault, no message) until it is deleted. Two renders started together on
a fresh install did so. So each process takes its kernels, compiled or read from the cache, once, before its first
analysis, holding an exclusive lock on librosa's own module file, opened read only: nothing is written for the lock,
and every process of one install sees the same file."""

from __future__ import annotations

import fcntl
import functools
import logging

import librosa
import numpy as np

from musicvid.core.audio import SAMPLE_RATE, find_beats
from musicvid.storyboard.music import SongSound, mood

log = logging.getLogger("musicvid")


@functools.cache
def compile_librosa() -> None:
    """Compile (or read from the cache) the kernels a storyboard and the scenes' pacing use (beats, onsets, chroma,
    tempo), holding the lock (module doc): once a process, before its first analysis or its parallel workers."""
    with open(librosa.__file__, "rb") as module:
        try:
            fcntl.flock(module, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (let go as the file closes)
        except BlockingIOError:  # (a first compile takes minutes on a busy machine: say why nothing moves)
            log.warning("waiting for another musicvid process to finish compiling librosa's kernels (numba)")
            fcntl.flock(module, fcntl.LOCK_EX)
        noise = np.random.default_rng(0).standard_normal(3 * SAMPLE_RATE).astype(np.float32)
        find_beats(noise)
        mood(SongSound.of(noise), 0.0, 3.0)
