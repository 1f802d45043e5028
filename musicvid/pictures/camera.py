"""Camera: a slow move over each scene, and a punch on strong beats, as a window into each frame.

A frame's view is the part of its picture it shows, scaled back to the whole frame: `zoom` ≥ 1 (the
window is 1/zoom of the picture across) and `shift` in [−1, 1] (the window's place between the
picture's left and right edges). Over the frames [K_i, K_j) of a scene, at u = (k − K_i)/(K_j − K_i),
the move follows e(u) = sin²(πu): 0 at the scene's first frame, so the keyframe is shown whole, as
drawn, and 0 again at the next scene's, with its slope 0 at both ends, so the camera glides through
each keyframe without a jolt.

- zoom: the window closes in to 1/(1 + MOVE) of the picture and opens out again;
- pan: the same window drawn to one side, to the left in one scene and to the right in the next.

`--pulse p` multiplies the zoom by 1 + PULSE_ZOOM·p·accent on strong beats (musicvid.pictures.pacing), so with a
pulse a keyframe on a strong beat is shown zoomed as well.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PIL import Image

from musicvid.pictures.schedule import FrameSchedule
from musicvid.settings.render import MOVES

MOVE = 0.12  # the deepest zoom of a move, mid-scene: slow over a line of a few seconds
PULSE_ZOOM = 0.06  # a full pulse on the strongest beat


@dataclass(frozen=True)
class View:
    zoom: float = 1.0
    shift: float = 0.0


WHOLE = View()


def views(schedule: FrameSchedule, move: str, accent: np.ndarray | None = None, pulse: float = 0.0) -> list[View]:
    """The view of each frame 0 … N−1."""
    if move not in MOVES:
        raise ValueError(move)
    result = [WHOLE] * schedule.frame_count
    for n, segment in enumerate(schedule.segments):
        side = -1 if n % 2 == 0 else 1
        for k in range(segment.first, segment.end):
            ease = 0.0 if move == "none" else math.sin(math.pi * (k - segment.first) / segment.length) ** 2
            zoom = 1 + MOVE * ease
            if accent is not None and pulse:
                zoom *= 1 + PULSE_ZOOM * pulse * float(accent[k])
            result[k] = View(zoom, side * ease if move == "pan" else 0.0)
    return result


def look_through(frame: np.ndarray, view: View) -> np.ndarray:
    """The frame as `view` sees it, at the frame's own size; the whole view returns the frame itself."""
    if view == WHOLE:
        return frame
    height, width = frame.shape[:2]
    window_w, window_h = width / view.zoom, height / view.zoom
    left = (width - window_w) / 2 * (1 + view.shift)
    top = (height - window_h) / 2
    box = (left, top, left + window_w, top + window_h)
    return np.asarray(Image.fromarray(frame).resize((width, height), Image.Resampling.LANCZOS, box=box))


def cover(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """`frame` scaled by Lanczos to cover width × height `size`, centred, in one resampling."""
    height, width = frame.shape[:2]
    if (width, height) == tuple(size):
        return frame
    scale = max(size[0] / width, size[1] / height)
    window_w, window_h = size[0] / scale, size[1] / scale
    left, top = (width - window_w) / 2, (height - window_h) / 2
    box = (left, top, left + window_w, top + window_h)
    return np.asarray(Image.fromarray(frame).resize(tuple(size), Image.Resampling.LANCZOS, box=box))
