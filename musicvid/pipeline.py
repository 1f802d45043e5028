"""The front doors' three calls, each in numbered steps: make_video (song -> music video), make_keyframes
(song -> storyboard, keyframes, contact sheet) and get_storyboard (song -> storyboard).

audio -> transcript -> storyboard (musicvid.storyboard.make) -> pictures (musicvid.pictures.draw) -> video
(musicvid.delivery.deliver). The checks come first (musicvid.checks); then, the song decoded and its work directory
held, one Run (musicvid.run) goes to every stage. The work directory keeps what each stage made, so a rerun
continues where the last one stopped. make_video is the one way every front door (CLI, batch, page,
benchmarks) makes a video.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Iterator

import numpy as np

from musicvid.checks import check_before_work, check_drawing_inputs, check_frames, check_inputs, check_workdir_inputs
from musicvid.core.audio import Audio, find_beats, load_audio
from musicvid.core.files import check_not_inputs
from musicvid.core.workdir import Workdir
from musicvid.delivery import captions
from musicvid.delivery.deliver import Delivery, copy_out, draw_and_deliver, lyrics_script
from musicvid.delivery.upscale import Upscaler
from musicvid.memory.plan import follow, memory_plan, upscaler_settings
from musicvid.models.drawing import check_drawing_options
from musicvid.models.registry import ModelRegistry
from musicvid.models.scorer import check_scorer
from musicvid.models.timing import Timings
from musicvid.pictures.draw import draw_pictures, pictures_of
from musicvid.pictures.keyframe_candidates import pick_keyframes
from musicvid.pictures.pacing import accent_per_frame, motion_per_frame
from musicvid.pictures.schedule import frame_schedule, to_frame
from musicvid.pictures.scores import picked_scores
from musicvid.review.run_report import run_summary
from musicvid.review.sheet import write_contact_sheet
from musicvid.run import Run, default_output, inputs_of, outputs_of
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import Storyboard
from musicvid.storyboard.make import save_storyboard, storyboard_in
from musicvid.storyboard.table import fallback_note, unsure_note
from vipe_core.atomic import write_json

log = logging.getLogger("musicvid")


def decode_song(request: SongRequest, timings: Timings) -> Audio:
    with timings.measure("decode audio"):
        return load_audio(request.song, request.max_seconds)


@contextmanager
def song_workdir(request: SongRequest, audio: Audio, wait: bool) -> Iterator[Workdir]:
    """The request's work directory, held by this run (musicvid.core.workdir; `wait`: for another run to let it
    go, else refused) and checked again, now that no other run writes it, to hold no other song's work."""
    workdir = Workdir.of_song(request.song, request.workdir)
    with workdir.held(wait):
        workdir.check_song(request.song, audio.info.sha256)
        yield workdir


def get_storyboard(
    request: SongRequest,
    registry: ModelRegistry,
    timings: Timings | None = None,
    wait: bool = False,
) -> tuple[Storyboard, Workdir, Audio]:
    """Transcribe and elaborate (or reuse what the work directory has); returns the storyboard,
    the work directory and the decoded audio. The work directory is held while it is written
    (musicvid.core.workdir; `wait`: for another run to let it go, else refused)."""
    timings = timings if timings is not None else Timings()
    check_inputs(request)
    audio = decode_song(request, timings)
    with song_workdir(request, audio, wait) as workdir:
        return storyboard_in(request, audio, workdir, registry, timings), workdir, audio


@dataclass(frozen=True)
class Keyframes:
    """What make_keyframes made."""

    storyboard: Storyboard
    workdir: Workdir
    contact_sheet: Path
    pictures_drawn: int
    scenes: list[int]  # the shown scenes, whose keyframes are workdir.keyframe(scene)


def make_keyframes(
    request: SongRequest,
    settings: RenderSettings,
    registry: ModelRegistry,
    timings: Timings | None = None,
    stop: threading.Event | None = None,
    wait: bool = False,
) -> Keyframes:
    """Song -> storyboard, each shown scene's keyframe and the contact sheet (docs/frames.md). The
    keyframes are the very pictures a render draws first, so a render after this draws only the morphs;
    a scene whose seed or prompt was edited since gets its keyframe redrawn, and no other does. `wait`:
    for another run to let the work directory go, else that is refused."""
    timings = timings if timings is not None else Timings()
    # 1. check inputs, before any work, and on CUDA what the keyframes fit in (musicvid.memory.plan)
    check_drawing_options(registry.models, settings)
    check_inputs(request, settings)
    check_drawing_inputs(settings)
    check_scorer(registry.models, settings)
    memory = memory_plan(registry, request, settings, keyframes_only=True)
    audio = decode_song(request, timings)
    check_frames(audio.info.duration, settings)
    # 2. hold the work directory
    with song_workdir(request, audio, wait) as workdir:
        workdir.remove_leftovers()
        # 3. storyboard, made or reused
        storyboard = storyboard_in(request, audio, workdir, registry, timings)
        # 4. each keyframe picked among its candidates, where its pick does not hold (musicvid.pictures.keyframe_candidates)
        schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, settings.fps)
        stages = dict(settings=settings, registry=registry, workdir=workdir, timings=timings, memory=memory)
        save = partial(save_storyboard, request, workdir)
        picked = pick_keyframes(storyboard, schedule, **stages, stop=stop, quiet=request.quiet, save=save)
        storyboard = picked.storyboard
        # 5. the keyframes whose inputs changed, or that a killed run left undone, and the contact sheet
        pictures = pictures_of(storyboard, schedule, settings, registry, workdir, keyframes_only=True)
        drawn = picked.keyframes + draw_pictures(pictures, **stages, stop=stop, quiet=request.quiet)
        sheet = write_contact_sheet(storyboard, workdir, schedule.shown_scenes, picked_scores(storyboard))
    return Keyframes(storyboard, workdir, sheet, drawn, schedule.shown_scenes)


def on_the_beat(run: Run, duration: float) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Per drawn frame, how far the morphs move (--pacing beats) and the beats' accent (--pulse); None
    for what is not asked for (the beats are only tracked if one is)."""
    settings = run.settings
    if settings.pacing != "beats" and not settings.pulse:
        return None, None
    frame_count = to_frame(duration, settings.fps)
    with run.timings.measure("beats"):
        beats = find_beats(run.audio.samples)
    motion = motion_per_frame(beats, settings.fps, frame_count) if settings.pacing == "beats" else None
    accent = accent_per_frame(beats, settings.fps, frame_count) if settings.pulse else None
    return motion, accent


def warn_of_doubts(storyboard: Storyboard, captioned: bool) -> None:
    """Log what a person should look at: lyrics that may be misheard, prompts that fell back to their
    lyric and, with lyrics on screen (only they need glyphs), characters no caption font draws."""
    undrawn = captions.undrawn_note(storyboard) if captioned else ""
    for note in (unsure_note(storyboard), fallback_note(storyboard), undrawn):
        if note:
            log.warning(note)


@dataclass(frozen=True)
class Video:
    """What make_video made, and what it cost."""

    video: Path  # the MP4 at the output path
    subtitles: Path  # its .srt beside it
    workdir: Workdir
    storyboard: Storyboard
    duration: float  # seconds of song
    frames: int  # in the video (at --output-fps where given)
    pictures_drawn: int  # pictures drawn anew in this run; the rest were kept from an earlier one
    timings: dict  # seconds per stage, as in timings.json


def make_video(
    request: SongRequest,
    settings: RenderSettings,
    registry: ModelRegistry,
    output: Path | None = None,
    timings: Timings | None = None,
    stop: threading.Event | None = None,
    wait: bool = False,
) -> Video:
    """Song -> music video, with its .srt beside it (beside the song unless `output` names the video).
    `wait`: for another run to let the work directory go, else that is refused. Setting `stop` ends the
    run within one denoising step (what is written stays, for a resume)."""
    # 1. check inputs, before any work: the outputs (none may be an input, none replaces a file that is
    #    not ours), the files the request names, its work directory, and that the song lasts a frame
    check_drawing_options(registry.models, settings)
    check_before_work(request, settings, output or default_output(request, settings), named=output is not None)
    check_scorer(registry.models, settings)  # where picks need it; else a scorer that cannot be had costs the scores
    #    and on CUDA the memory plan (musicvid.memory.plan): the batches and offloads that fit, or a refusal
    memory = memory_plan(registry, request, settings)
    settings = follow(settings, memory)
    output = output or default_output(request, settings)
    timings = timings if timings is not None else Timings()
    started = time.perf_counter()
    audio = decode_song(request, timings)
    check_frames(audio.info.duration, settings)
    # 2. load the upscaler (a broken file is named now, not after the drawing); hold the work directory
    with (
        registry.use("upscaler", timings, memory) if settings.resolution else nullcontext() as upscaler,
        song_workdir(request, audio, wait) as workdir,
    ):
        workdir.remove_leftovers(output)
        run = Run(request, settings, registry, workdir, audio, timings, stop=stop, output=output, memory=memory)
        # 3. storyboard: made, or reused from the work directory with its edits; its pinned pictures are
        #    inputs too
        storyboard = storyboard_in(request, audio, workdir, registry, timings)
        check_not_inputs(outputs_of(output, settings), inputs_of(request, storyboard, settings))
        check_workdir_inputs(workdir, request, settings, storyboard)
        # 4. frame schedule, paced by the beats if asked
        motion, accent = on_the_beat(run, storyboard.duration)
        schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, settings.fps, motion)
        # 5. each keyframe picked among its candidates, where its pick does not hold (musicvid.pictures.keyframe_candidates);
        #    then the pictures to draw: those whose inputs changed, or that a killed run left undone
        stages = dict(settings=settings, registry=registry, workdir=workdir, timings=timings, memory=memory)
        save = partial(save_storyboard, request, workdir)
        picked = pick_keyframes(storyboard, schedule, **stages, stop=stop, quiet=request.quiet, save=save)
        storyboard = picked.storyboard
        pictures = pictures_of(storyboard, schedule, settings, registry, workdir)
        # 6. lyrics on screen
        script = lyrics_script(storyboard, settings, workdir, audio.info.sha256)
        # 7. the pictures drawn while their frames are delivered and muxed with the song
        upscaling = upscaler_settings(memory)  # its batch and input
        upscale = Upscaler(upscaler, settings.video_size, **upscaling) if upscaler is not None else None
        delivery = Delivery(Path(audio.info.path), script, accent, upscale)
        drawn, video = draw_and_deliver(pictures, delivery, **stages, stop=stop, quiet=request.quiet)
        drawn += picked.keyframes
        # 8. the copy to `output`, its subtitles, the contact sheet with the keyframes' scores, timings.json
        copy_out(storyboard, video, script, workdir, output)
        write_contact_sheet(storyboard, workdir, schedule.shown_scenes, picked_scores(storyboard))
        summary = run_summary(run, schedule, storyboard.duration, drawn, picked.keyframe_candidates, upscale, started)
        write_json(workdir.timings, summary)
    # 9. what a person should look at
    warn_of_doubts(storyboard, captioned=script is not None)
    return Video(
        output,
        output.with_suffix(".srt"),
        workdir,
        storyboard,
        audio.info.duration,
        summary["video_frames"],
        drawn,
        summary,
    )
