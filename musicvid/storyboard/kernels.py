"""librosa's numba kernels that a storyboard and the scenes' pacing use, compiled at once, before parallel work
starts (Ray's workers, the tests'), so that the workers find them in numba's cache. Each analysis compiles its own
holding a lock, one process at a time (musicvid.core.kernels)."""

from __future__ import annotations

import functools

import numpy as np

from musicvid.core.audio import SAMPLE_RATE, find_beats
from musicvid.storyboard.music import SongSound, mood


@functools.cache
def compile_librosa() -> None:
    """Compile (or read from the cache) the kernels of the beats, the onsets, the chroma and the tempo: once a
    process."""
    noise = np.random.default_rng(0).standard_normal(3 * SAMPLE_RATE).astype(np.float32)
    find_beats(noise)
    mood(SongSound.of(noise), 0.0, 3.0)
