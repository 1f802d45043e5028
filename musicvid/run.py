"""A run: what the stages of one get_storyboard, make_keyframes or make_video share, made once by its first step
(musicvid.prepare.prepare) when every check has passed. Every stage takes the Run (or the part of it it uses); none
changes it."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping

from musicvid.core.audio import Audio
from musicvid.core.errors import Cancelled
from musicvid.core.workdir import Workdir
from musicvid.lyrics.known import KnownLyrics
from musicvid.lyrics.transcript import Transcript
from musicvid.memory.ladder import MemoryPlan
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import Timings
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest


@dataclass(frozen=True)
class Run:
    """What one call's stages share."""

    request: SongRequest
    registry: ModelRegistry
    workdir: Workdir  # checked (musicvid's or empty, of this song); made and locked by Workdir.held
    audio: Audio  # the song, decoded once
    timings: Timings
    settings: RenderSettings | None = None  # as the memory plan batches them; None for a storyboard alone
    output: Path | None = None  # the video (make_video): as named, or beside the song
    memory: MemoryPlan | None = None  # what each stage may hold, on CUDA (musicvid.memory.plan.plan_on_device)
    stop: threading.Event | None = None  # set: the run ends within one denoising step
    lyrics: KnownLyrics | None = None  # the lyrics file, as its check read it (a file is read once)
    # a timed lyrics file's lines fitted to the song, where the run takes them (for its storyboard, its karaoke):
    # once, its lines past the song's end said once (musicvid.prepare)
    timed_lyrics: Transcript | None = None
    # the --storyboard file, as its check read it (a musicvid.storyboard.board.Storyboard: that layer is above this)
    storyboard: Any = None
    storyboard_is_input: bool = False  # the work directory's storyboard.json is the --storyboard file: never rewritten
    # what the memory plan gives the stages (musicvid.memory.plan): each drawing stage's switches, the plan's or the
    # settings' (stage_offloads); the upscaler's batch and input (planned_upscaling)
    offloads: Mapping[str, Collection[str]] = field(default_factory=dict)
    upscaling: Mapping[str, Any] = field(default_factory=dict)

    @property
    def quiet(self) -> bool:
        return self.request.quiet

    def outputs(self) -> list[Path]:
        """What a render writes outside its work directory: the video, its .srt, its .ass with captions; nothing
        for a storyboard or keyframes alone."""
        return self.settings.outputs(self.output) if self.output and self.settings else []

    def go_on(self) -> None:
        """Between stages: end the run here if it was stopped (the drawing also checks within each step)."""
        if self.stop is not None and self.stop.is_set():
            raise Cancelled("the run was cancelled")
