"""A run: what every stage of one get_storyboard, make_keyframes or make_video shares (musicvid.pipeline),
built once its checks have passed and its song is decoded; and what a run reads and writes outside its work
directory (its inputs, and its outputs: the video, its .srt, its .ass with captions)."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from pathlib import Path

from musicvid.core.audio import Audio
from musicvid.core.files import check_not_inputs, check_output, check_video_name, same_file
from musicvid.core.outputs import check_name_length
from musicvid.core.workdir import Workdir, video_name
from musicvid.memory.plan import MemoryPlan
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import Timings
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest


@dataclass(frozen=True)
class Run:
    """What the stages of one call share."""

    request: SongRequest
    settings: (
        RenderSettings | None
    )  # resolved, and batched as the memory plan says; None for a storyboard alone (get_storyboard)
    registry: ModelRegistry
    workdir: Workdir  # held by this run
    audio: Audio  # the song, decoded once
    timings: Timings
    stop: threading.Event | None = None  # set: the run ends within one denoising step
    output: Path | None = None  # the video's path (make_video)
    memory: MemoryPlan | None = None  # what the run's stages may hold, on CUDA (musicvid.memory.plan.memory_plan)

    @property
    def quiet(self) -> bool:
        return self.request.quiet


def outputs_of(output: Path, settings: RenderSettings) -> list[Path]:
    """What a render writes outside its work directory: the video, its .srt, its .ass with captions."""
    return [output, output.with_suffix(".srt"), *([output.with_suffix(".ass")] if settings.captions != "none" else [])]


def inputs_of(request: SongRequest, storyboard=None, settings: RenderSettings | None = None) -> dict[str, Path]:
    """What a run reads, by what it is: the song, lyrics, storyboard file, reference and pinned pictures."""
    inputs = {"song": request.song, "lyrics file": request.lyrics_file, "storyboard": request.storyboard_file}
    inputs["reference picture"] = settings.reference if settings else None
    for scene in storyboard.scenes if storyboard else ():
        inputs[f"pinned picture of scene {scene.index}"] = Path(scene.picture) if scene.picture else None
        inputs[f"reference picture of scene {scene.index}"] = Path(scene.reference) if scene.reference else None
    return {what: path for what, path in inputs.items() if path is not None}


def default_output(request: SongRequest, settings: RenderSettings) -> Path:
    """`<song>.mp4` (or `<song>.preview.mp4`) beside the song; where that, its .srt or .ass would be one
    of the run's inputs (an audio-only `song.mp4`, lyrics in `song.srt`), `<song>.video.mp4` (then
    `.video-2.mp4`, ...)."""
    song, inputs = request.song, inputs_of(request, settings=settings).values()
    for extra in itertools.chain([""], (f".video{f'-{n}' if n > 1 else ''}" for n in itertools.count(1))):
        output = song.with_name(video_name(song.stem + extra, settings.preview))
        if not any(same_file(o, i) for o in outputs_of(output, settings) for i in inputs):
            return output
    raise AssertionError("unreachable: the names above never end")


def check_outputs(request: SongRequest, settings: RenderSettings, output: Path) -> None:
    """Refuse, before any work, an output that is no video name, is too long, cannot be written, or is
    an input."""
    outputs = outputs_of(output, settings)
    for path in outputs:
        check_name_length(path)
        check_output(path)
    check_not_inputs(outputs, inputs_of(request, settings=settings))
    check_video_name(output)
