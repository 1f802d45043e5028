"""The music's pulse, per video frame: how far each frame moves a morph, and the accent of strong beats.

librosa's onset strength (spectral flux) says where a sound starts, its beat tracker where the beats
fall. Frame k's motion is the onset strength inside its interval ((k-1)/fps, k/fps], raised where a
beat falls in it, plus a floor so that the picture rests between beats but never freezes. The frame
schedule shares each morph out in proportion (musicvid.pictures.schedule), so a morph still starts on its
keyframe and ends on the next one. Silence (or a steady drone) has no onsets: motion is even, as
with linear pacing.

A strong beat (onset strength at least the median beat's) gives an accent that decays over
ACCENT_SECONDS; `--pulse` turns it into a small zoom (musicvid.pictures.camera).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from musicvid.audio import SAMPLE_RATE

HOP = 256  # 16 ms at 16 kHz: several onset values per video frame at up to 60 fps
BEAT_BOOST = 1.0  # a beat adds this many times the mean motion to its frame
FLOOR = 0.05  # the least a frame moves, as a share of the mean
ACCENT_SECONDS = 0.15  # an accent's time constant: a punch, gone before the next beat at 200 bpm


@dataclass(frozen=True)
class Beats:
    onset: np.ndarray  # onset strength per hop
    times: np.ndarray  # the time of each hop (s)
    beats: np.ndarray  # hops where a beat falls


def find_beats(samples: np.ndarray) -> Beats:
    import librosa

    onset = librosa.onset.onset_strength(y=samples, sr=SAMPLE_RATE, hop_length=HOP)
    _, beats = librosa.beat.beat_track(onset_envelope=onset, sr=SAMPLE_RATE, hop_length=HOP)
    times = librosa.frames_to_time(np.arange(onset.size), sr=SAMPLE_RATE, hop_length=HOP)
    return Beats(onset, times, np.asarray(beats, dtype=int))


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
