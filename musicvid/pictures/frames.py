"""The drawn pictures read back as the video's frames, in order (video_frames), and the pictures a drawing
has still to write (PendingPictures), by which the delivery waits for each while the drawing goes on.
(docs/frames.md)"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from musicvid.core.errors import RenderError
from musicvid.core.workdir import Workdir
from musicvid.pictures.cache import load_picture
from musicvid.pictures.schedule import FrameSchedule
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Storyboard


class PendingPictures:
    """The pictures a render has still to write, for a reader of them in another thread (the delivery,
    while the drawing goes on): `wait` for one, `saved` when one is written, `close` when the drawing
    ends, after which waiting for one never written is an error rather than forever."""

    def __init__(self, paths: set[Path]):
        self._pending, self._closed = set(paths), False
        self._changed = threading.Condition()

    def saved(self, path: Path) -> None:
        with self._changed:
            self._pending.discard(path)
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def wait(self, path: Path) -> None:
        with self._changed:
            while path in self._pending:
                if self._closed:
                    raise RenderError(f"the drawing ended before {path.name} was drawn")
                self._changed.wait()


def video_frames(
    storyboard: Storyboard,
    schedule: FrameSchedule,
    workdir: Workdir,
    settings: RenderSettings,
    ready: Callable[[Path], object] = lambda path: None,
) -> Iterator[np.ndarray]:
    """Frame 0 … N−1 in order, as drawn: keyframes where t = 0, rendered morphs between them (or, in
    preview, a crossfade of the two keyframes). Each picture is read once `ready(path)` returns (a
    PendingPictures' wait, while they are being drawn)."""

    def picture(path: Path) -> np.ndarray:
        ready(path)
        return load_picture(path)

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
