"""The first step of every call that makes something of a song (musicvid.pipeline), as a diffusers pipeline checks
its inputs once: from the request, the settings, the registry and the output, every check a run needs, each done
once and before any work, and the one frozen Run (musicvid.run) every stage then takes. In order:

1. the settings against the models: the picture family's options, and whether the keyframes' scorer loads;
2. the outputs: the video as `-o` names it or beside the song (default_output), its .srt and .ass: names the file
   system takes, in folders that can be written, none of them an input, the video's a video's;
3. the inputs: the lyrics file, the storyboard file and its pictures, the reference picture, the style LoRAs;
4. the work directory: musicvid's or empty, of no other song, none of its files an input, apart from the outputs,
   and the files at the outputs' names replaced only where musicvid wrote them for this song;
5. the memory plan (on CUDA), and the settings batched as it says;
6. the song, decoded once: at least a frame of it.

Steps 1 to 4 are check_before_work, which a batch runs on every row before its first render. Nothing here writes: a
run makes and locks its work directory only after this step (musicvid.core.workdir.Workdir.held), so a refused run
leaves the file system as it found it.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from pathlib import Path

from musicvid.core.audio import Audio, load_audio
from musicvid.core.errors import UserError
from musicvid.core.files import (
    check_not_inputs,
    check_output,
    check_picture,
    check_video_name,
    file_sha256,
    resolved,
    same_file,
)
from musicvid.core.outputs import check_name_length, check_replaceable
from musicvid.core.workdir import Workdir, video_name
from musicvid.lyrics.known import check_lyrics_file
from musicvid.memory.plan import batched_as_planned, plan_on_device
from musicvid.models.drawing import check_drawing_options, weights_file
from musicvid.models.registry import ModelRegistry
from musicvid.models.scorer import check_scorer
from musicvid.models.timing import Timings
from musicvid.pictures.schedule import to_frame
from musicvid.run import Run, outputs_of
from musicvid.settings.presets import ModelSet
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import Storyboard, load_storyboard
from musicvid.storyboard.make import check_pictures, picture_inputs


@dataclass(frozen=True)
class Checked:
    """What check_before_work resolved."""

    output: Path | None  # the video; None where no video is made
    workdir: Workdir | None  # None for a song that is not there (a batch reports it at its turn)
    scored: bool  # whether the run loads the keyframes' scorer


def prepare(
    request: SongRequest,
    registry: ModelRegistry,
    settings: RenderSettings | None = None,
    output: Path | None = None,
    *,
    keyframes_only: bool = False,
    timings: Timings | None = None,
    stop: threading.Event | None = None,
) -> Run:
    """The Run of a call, every check passed (module doc): a storyboard alone without `settings`, the keyframes with
    `keyframes_only`, else a video (at `output`, else beside the song)."""
    timings = timings if timings is not None else Timings()
    video = settings is not None and not keyframes_only
    # 1.-4. the settings, the inputs, the outputs and the work directory
    checked = check_before_work(request, registry.models, settings, output, named=output is not None, video=video)
    # 5. the memory plan, and on it the settings' batch (a video's: the keyframes alone draw as asked)
    memory = None
    if settings is not None:
        memory = plan_on_device(registry, request, settings, checked.scored, keyframes_only)
        settings = batched_as_planned(settings, memory) if video else settings
    # 6. the song
    audio = decode_song(request, timings)
    if settings is not None:
        check_frames(audio.info.duration, settings)
    workdir = checked.workdir or Workdir.for_song(request.song, audio.info.sha256)
    return Run(request, registry, workdir, audio, timings, settings, checked.output, memory, stop)


def check_before_work(
    request: SongRequest,
    models: ModelSet,
    settings: RenderSettings | None = None,
    output: Path | None = None,
    named: bool = True,
    video: bool = True,
) -> Checked:
    """Steps 1 to 4 (module doc): what can be checked of a call before its song is decoded. A `video`'s `output`
    is beside the song where None; one a person `named` is replaced, unlike the .srt and .ass beside it."""
    scored = False
    if settings is not None:
        check_drawing_options(models, settings)
        scored = check_scorer(models, settings)  # a scorer that cannot be had costs the scores, where picks need none
    outputs = check_outputs(request, settings, output) if video and settings is not None else []
    storyboard = check_inputs(request, settings)
    if storyboard and outputs:
        check_not_inputs(outputs, picture_inputs(storyboard))
    workdir = check_workdir(request, inputs_of(request, storyboard, settings), outputs)
    if workdir is not None and outputs and request.song.is_file():
        check_replaceable(outputs[1:] if named else outputs, workdir, request.overwrite)
    return Checked(outputs[0] if outputs else None, workdir, scored)


def check_inputs(request: SongRequest, settings: RenderSettings | None) -> Storyboard | None:
    """The files a request names, each read or its header decoded: the lyrics, a storyboard (its every field, and
    its pictures), the reference picture, and each style LoRA a file or on the hub (fetched now, on a first run,
    rather than after the storyboard's work). Returns the storyboard file's storyboard."""
    if request.lyrics_file:
        check_lyrics_file(request.lyrics_file)
    storyboard = load_storyboard(request.storyboard_file) if request.storyboard_file else None
    if storyboard:
        check_pictures(storyboard)
    if settings and settings.reference:
        check_picture(settings.reference, "reference picture")
    for lora in settings.lora if settings else ():
        weights_file(lora.source, "style LoRA")
    return storyboard


def inputs_of(request: SongRequest, storyboard: Storyboard | None = None, settings=None) -> dict[str, Path]:
    """What a run reads, by what it is: the song, lyrics, storyboard file, reference picture and the storyboard's
    pictures."""
    inputs = {"song": request.song, "lyrics file": request.lyrics_file, "storyboard": request.storyboard_file}
    inputs["reference picture"] = settings.reference if settings else None
    inputs |= picture_inputs(storyboard) if storyboard else {}
    return {what: path for what, path in inputs.items() if path is not None}


def check_outputs(request: SongRequest, settings: RenderSettings, output: Path | None) -> list[Path]:
    """The video (`output`, else default_output), its .srt and .ass: refused where a name is too long, cannot be
    written, is one of the files the request names, or the video's is no video name."""
    outputs = outputs_of(output or default_output(request, settings), settings)
    for path in outputs:
        check_name_length(path)
        check_output(path)
    check_not_inputs(outputs, inputs_of(request, settings=settings))
    check_video_name(outputs[0])
    return outputs


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


def check_workdir(request: SongRequest, inputs: dict[str, Path], outputs: list[Path]) -> Workdir | None:
    """The request's work directory (named, else found by the song's hash), refused where it cannot be one, is not
    musicvid's, holds another song's work, holds an input among the files the run writes there, or where it and an
    output would hold each other; None for a song that is not there, where none is named."""
    if not (request.workdir or request.song.is_file()):
        return None
    workdir = Workdir.of_song(request.song, request.workdir)
    workdir.check()  # (the default one's too: it may be there already)
    if request.song.is_file():
        workdir.check_song(request.song, file_sha256(request.song))
    workdir.check_unwritten(inputs)
    check_apart(outputs, workdir)
    return workdir


def check_apart(outputs: list[Path], workdir: Workdir) -> None:
    """Refuse an output in the work directory (which is musicvid's alone) or one the work directory would lie
    under (`--workdir v.mp4/wd -o v.mp4`): the run writes both."""
    root = resolved(workdir.root)
    for output in outputs:
        path = resolved(output)
        if root.is_relative_to(path):
            raise UserError(
                f"the work directory {workdir.root} lies under {output}, which the run writes as a file: give -o or "
                "--workdir another name"
            )
        if path.is_relative_to(root):
            raise UserError(
                f"{output} lies in the work directory {workdir.root}, which holds musicvid's own files alone: give -o "
                "a name outside it"
            )


def decode_song(request: SongRequest, timings: Timings) -> Audio:
    with timings.measure("decode audio"):
        return load_audio(request.song, request.max_seconds)


def check_frames(duration: float, settings: RenderSettings) -> None:
    """A song too short for one frame at the drawn rate makes no video (refused before any work)."""
    if to_frame(duration, settings.fps) < 1:
        raise UserError(f"the song lasts {duration:.3f} s: at --fps {settings.fps:g} that is not one frame of video")
