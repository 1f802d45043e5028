"""Motion on the beat: how far each video frame moves a morph, from the song's onsets and beats.

librosa's onset strength (spectral flux) says where a sound starts, its beat tracker where the beats
fall. Frame k's motion is the onset strength inside its interval ((k-1)/fps, k/fps], raised where a
beat falls in it, plus a floor so that the picture rests between beats but never freezes. The frame
schedule shares each morph out in proportion (musicvid.schedule), so a morph still starts on its
keyframe and ends on the next one. Silence (or a steady drone) has no onsets: motion is even, as
with linear pacing.
"""

from __future__ import annotations

import numpy as np

from musicvid.audio import SAMPLE_RATE

HOP = 256  # 16 ms at 16 kHz: several onset values per video frame at up to 60 fps
BEAT_BOOST = 1.0  # a beat adds this many times the mean motion to its frame
FLOOR = 0.05  # the least a frame moves, as a share of the mean


def motion_per_frame(samples: np.ndarray, fps: float, frame_count: int) -> np.ndarray:
    """motion[k] for k = 0 … frame_count: how far frame k moves the morph it belongs to (all > 0)."""
    import librosa

    onset = librosa.onset.onset_strength(y=samples, sr=SAMPLE_RATE, hop_length=HOP)
    _, beats = librosa.beat.beat_track(onset_envelope=onset, sr=SAMPLE_RATE, hop_length=HOP)
    times = librosa.frames_to_time(np.arange(onset.size), sr=SAMPLE_RATE, hop_length=HOP)
    frame_of = np.clip(np.ceil(times * fps - 1e-9).astype(int), 0, frame_count)
    motion = np.zeros(frame_count + 1)
    np.add.at(motion, frame_of, onset)
    if motion.sum() <= 0:
        return np.ones(frame_count + 1)
    motion /= motion.mean()
    motion[np.unique(frame_of[beats])] += BEAT_BOOST
    return (motion + FLOOR) / (motion + FLOOR).mean()
