"""The drawn pictures read back as the video's frames, in order (video_frames) and through the camera
(camera_frames), and the pictures a drawing has still to write (PendingPictures), by which the delivery waits for
each while the drawing goes on. (docs/frames.md)"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from musicvid.core.errors import RenderError
from musicvid.core.workdir import Workdir
from musicvid.pictures import camera
from musicvid.pictures.cache import load_picture
from musicvid.pictures.schedule import FrameSchedule
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Storyboard

HANDED = 64  # pictures the drawing may hand over ahead of the delivery, pixels and all; past it the PNG is read


class PendingPictures:
    """The pictures a render has still to write, for a reader of them in another thread (the delivery,
    while the drawing goes on): `wait` for one, `saved` when one is written, `close` when the drawing
    ends, after which waiting for one never written is an error rather than forever. A picture saved with its
    pixels hands them over: `wait` returns them once, and the reader need not decode the PNG just written
    (the PNG stays, for a resume)."""

    def __init__(self, paths: set[Path]):
        self._pending, self._closed = set(paths), False
        self._handed: dict[Path, np.ndarray] = {}
        self._changed = threading.Condition()

    def saved(self, path: Path, pixels: np.ndarray | None = None) -> None:
        with self._changed:
            self._pending.discard(path)
            if pixels is not None and len(self._handed) < HANDED:
                self._handed[path] = pixels
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def wait(self, path: Path) -> np.ndarray | None:
        """Once `path` is written: its pixels where the drawing handed them over (once), else None."""
        with self._changed:
            while path in self._pending:
                if self._closed:
                    raise RenderError(f"the drawing ended before {path.name} was drawn")
                self._changed.wait()
            return self._handed.pop(path, None)


def video_frames(
    storyboard: Storyboard,
    schedule: FrameSchedule,
    workdir: Workdir,
    settings: RenderSettings,
    ready: Callable[[Path], np.ndarray | None] = lambda path: None,
) -> Iterator[np.ndarray]:
    """Frame 0 … N−1 in order, as drawn: keyframes where t = 0, rendered morphs between them (or, in
    preview, a crossfade of the two keyframes). Each picture is read once `ready(path)` returns (a
    PendingPictures' wait, while they are being drawn), or taken as it returns it."""

    def picture(path: Path) -> np.ndarray:
        handed = ready(path)
        if handed is not None:
            return handed
        try:
            return load_picture(path)
        except OSError:  # (what the drawing wrote, removed or spoilt under the run: a rerun draws it again)
            raise RenderError(
                f"{path.parent.name}/{path.name} in the work directory was removed or damaged while the render ran: "
                "run it again to draw it anew (what is drawn is kept)"
            ) from None

    @lru_cache(maxsize=2)  # scenes come in order: only the current keyframe and the next are needed
    def keyframe(scene: int) -> np.ndarray:
        return picture(workdir.keyframe(scene))

    for segment in schedule.segments:
        for k in range(segment.first, segment.end):
            t = segment.t(k)
            if t == 0:
                yield keyframe(segment.scene)
            elif settings.preview:
                start = keyframe(segment.scene).astype(np.float32)
                end = keyframe(segment.target).astype(np.float32)
                yield ((1 - t) * start + t * end).round().astype(np.uint8)
            else:
                yield picture(workdir.frame(k))


def camera_frames(
    storyboard: Storyboard,
    schedule: FrameSchedule,
    workdir: Workdir,
    settings: RenderSettings,
    accent: np.ndarray | None,
    ready: Callable[[Path], np.ndarray | None] = lambda path: None,
) -> Iterator[np.ndarray]:
    """The video's frames as drawn (video_frames, each picture read once `ready(path)` returns), each through the
    camera's view of it (musicvid.pictures.camera): --motion, and the beats' `accent` with --pulse."""
    views = camera.views(schedule, settings.motion, accent, settings.pulse)
    drawn = video_frames(storyboard, schedule, workdir, settings, ready)
    return (camera.look_through(frame, view) for frame, view in zip(drawn, views))
