"""A run: what every stage of one get_storyboard, draw_keyframes or make_video shares (musicvid.pipeline),
built once its checks have passed and its song is decoded, and handed to the stages whole."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from musicvid.audio import Audio
from musicvid.models.registry import ModelRegistry
from musicvid.settings import RenderSettings, SongRequest
from musicvid.timing import Timings
from musicvid.workdir import Workdir


@dataclass(frozen=True)
class Run:
    """What the stages of one call share."""

    request: SongRequest
    settings: RenderSettings | None  # resolved and planned; None for a storyboard alone (get_storyboard)
    registry: ModelRegistry
    workdir: Workdir  # held by this run
    audio: Audio  # the song, decoded once
    timings: Timings
    stop: threading.Event | None = None  # set: the run ends within one denoising step
    output: Path | None = None  # the video's path (make_video)

    @property
    def quiet(self) -> bool:
        return self.request.quiet
