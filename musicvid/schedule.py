"""Which picture each video frame shows.

Frame k shows time k / fps; the video has N = round(duration × fps) frames. Scene i starts at frame
K_i = round(start_i × fps); a scene with no frame of its own is skipped. Frame k of scene i shows the
morph from keyframe i towards the next shown scene j at t = (k − K_i) / (K_j − K_i), so frame K_i is
keyframe i itself; the last shown scene holds its keyframe to the end. (docs/frames.md)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


def to_frame(seconds: float, fps: float) -> int:
    """Nearest frame, halves rounded up (with a little slack for floating-point time stamps)."""
    return math.floor(seconds * fps + 0.5 + 1e-9)


@dataclass(frozen=True)
class Segment:
    """The frames of one shown scene: [first, end), morphing towards scene `target` (None: hold)."""

    scene: int
    target: int | None
    first: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.first

    def t(self, frame: int) -> float:
        return 0.0 if self.target is None else (frame - self.first) / self.length


@dataclass(frozen=True)
class FrameSchedule:
    fps: float
    frame_count: int
    segments: tuple[Segment, ...]

    @property
    def shown_scenes(self) -> list[int]:
        return [s.scene for s in self.segments]


def frame_schedule(starts: Sequence[float], duration: float, fps: float) -> FrameSchedule:
    """The schedule for scenes starting at `starts` (sorted, first at 0) in a song of `duration` s."""
    total = to_frame(duration, fps)
    firsts = [min(to_frame(s, fps), total) for s in starts] + [total]
    shown = [i for i in range(len(starts)) if firsts[i + 1] > firsts[i]]
    segments = []
    for n, scene in enumerate(shown):
        target = shown[n + 1] if n + 1 < len(shown) else None
        segments.append(Segment(scene, target, firsts[scene], firsts[scene + 1]))
    return FrameSchedule(fps, total, tuple(segments))
