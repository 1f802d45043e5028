"""Which picture each video frame shows.

Frame k shows time k / fps; the video has N = round(duration × fps) frames. Scene i starts at frame
K_i = round(start_i × fps); a scene with no frame of its own is skipped. Frame k of scene i shows the
morph from keyframe i towards the next shown scene j at t = (k − K_i) / (K_j − K_i), so frame K_i is
keyframe i itself; the last shown scene holds its keyframe to the end. (docs/frames.md)

With beat pacing the morph moves by the music instead of evenly: frame k advances t by its share of
the motion of the frames up to the next keyframe (musicvid.pictures.pacing), so t still runs from 0 at
keyframe i to 1 at keyframe j, but mostly on the beats and onsets between them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from musicvid.core.errors import UserError


def to_frame(seconds: float, fps: float) -> int:
    """Nearest frame, halves rounded up (with a little slack for floating-point time stamps)."""
    return math.floor(seconds * fps + 0.5 + 1e-9)


def check_one_frame(seconds: float, fps: float) -> None:
    """Refuse a song under one frame of video at `fps` (to_frame(seconds, fps) < 1): no video can be made of it."""
    if to_frame(seconds, fps) < 1:
        raise UserError(f"the song lasts {seconds:.3f} s: at --fps {fps:g} that is not one frame of video")


@dataclass(frozen=True)
class Segment:
    """The frames of one shown scene: [first, end), morphing towards scene `target` (None: hold)."""

    scene: int
    target: int | None
    first: int
    end: int
    # with paced motion: how far each frame first+1 … end moves the morph (None: evenly)
    motion: tuple[float, ...] | None = None

    @property
    def length(self) -> int:
        return self.end - self.first

    def t(self, frame: int) -> float:
        if self.target is None:
            return 0.0
        if self.motion is None:
            return (frame - self.first) / self.length
        return sum(self.motion[: frame - self.first]) / sum(self.motion)


@dataclass(frozen=True)
class FrameSchedule:
    fps: float
    frame_count: int
    segments: tuple[Segment, ...]

    @property
    def shown_scenes(self) -> list[int]:
        return [s.scene for s in self.segments]


def frame_schedule(
    starts: Sequence[float], duration: float, fps: float, motion: Sequence[float] | None = None
) -> FrameSchedule:
    """The schedule for scenes starting at `starts` (sorted, first at 0) in a song of `duration` s;
    `motion[k]` (k = 0 … N, all positive) how far frame k moves the morph it ends (None: evenly)."""
    total = to_frame(duration, fps)
    firsts = [min(to_frame(s, fps), total) for s in starts] + [total]
    shown = [i for i in range(len(starts)) if firsts[i + 1] > firsts[i]]
    segments = []
    for n, scene in enumerate(shown):
        target = shown[n + 1] if n + 1 < len(shown) else None
        first, end = firsts[scene], firsts[scene + 1]
        paced = (
            tuple(float(m) for m in motion[first + 1 : end + 1]) if motion is not None and target is not None else None
        )
        segments.append(Segment(scene, target, first, end, paced))
    return FrameSchedule(fps, total, tuple(segments))
