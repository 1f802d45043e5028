"""The music's pulse, per video frame: how far each frame moves a morph, and the accent of strong beats.

The song's onset strength and beats come from musicvid.core.audio.find_beats, the tracker the scenes' cuts
are placed with too. Frame k's motion is the onset strength inside its interval ((k-1)/fps, k/fps], raised
where a beat falls in it, plus a floor so that the picture rests between beats but never freezes. The
frame schedule shares each morph out in proportion (musicvid.pictures.schedule), so a morph still starts
on its keyframe and ends on the next one. Silence (or a steady drone) has no onsets: motion is even, as
with linear pacing.

A strong beat (onset strength at least the median beat's) gives an accent that decays over
ACCENT_SECONDS; `--pulse` turns it into a small zoom (musicvid.pictures.camera).
"""

from __future__ import annotations

import numpy as np

from musicvid.core.audio import Beats, find_beats
from musicvid.pictures.schedule import to_frame
from musicvid.run import Run

BEAT_BOOST = 1.0  # a beat adds this many times the mean motion to its frame
FLOOR = 0.05  # the least a frame moves, as a share of the mean
ACCENT_SECONDS = 0.15  # an accent's time constant: a punch, gone before the next beat at 200 bpm


def motion_per_frame(beats: Beats, fps: float, frame_count: int) -> np.ndarray:
    """motion[k] for k = 0 … frame_count: how far frame k moves the morph it belongs to (all > 0)."""
    frame_of = np.clip(np.ceil(beats.times * fps - 1e-9).astype(int), 0, frame_count)
    motion = np.zeros(frame_count + 1)
    np.add.at(motion, frame_of, beats.onset)
    if motion.sum() <= 0:
        return np.ones(frame_count + 1)
    motion /= motion.mean()
    motion[np.unique(frame_of[beats.beats])] += BEAT_BOOST
    return (motion + FLOOR) / (motion + FLOOR).mean()


def accent_per_frame(beats: Beats, fps: float, frame_count: int) -> np.ndarray:
    """accent[k] in [0, 1] for k = 0 … frame_count − 1: 1 on the strongest beat, decaying after each
    strong one; 0 before the first strong beat and for a song with none."""
    if beats.beats.size == 0 or beats.onset[beats.beats].max() <= 0:
        return np.zeros(frame_count)
    strength = beats.onset[beats.beats]
    strong = strength >= np.median(strength)
    at, level = beats.times[beats.beats][strong], strength[strong] / strength.max()
    clock = np.arange(frame_count) / fps
    since = clock[:, None] - at[None, :]  # frames × strong beats
    decay = np.where(since >= 0, np.exp(-np.maximum(since, 0) / ACCENT_SECONDS), 0.0)
    return (decay * level[None, :]).max(axis=1)


def on_the_beat(run: Run, duration: float) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Per drawn frame, how far the morphs move (--pacing beats) and the beats' accent (--pulse); None
    for what is not asked for (the beats are only tracked if one is)."""
    settings = run.settings
    if settings.pacing != "beats" and not settings.pulse:
        return None, None
    frame_count = to_frame(duration, settings.fps)
    with run.timings.measure("beats"):
        beats = find_beats(run.audio.samples)
    motion = motion_per_frame(beats, settings.fps, frame_count) if settings.pacing == "beats" else None
    accent = accent_per_frame(beats, settings.fps, frame_count) if settings.pulse else None
    return motion, accent
