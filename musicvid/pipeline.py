"""The front doors' three calls, each in numbered steps: make_video (song -> music video), make_keyframes
(song -> storyboard, keyframes, contact sheet) and get_storyboard (song -> storyboard).

Each begins with musicvid.prepare.prepare, every check once and before any work, which returns the one Run every
stage takes; then the run takes its work directory (musicvid.core.workdir.Workdir.held) and the stages follow:
transcript -> storyboard (musicvid.storyboard.make) -> pictures (musicvid.pictures.draw) -> video
(musicvid.delivery.deliver). The work directory keeps what each stage made, so a rerun continues where the last one
stopped. make_video is the one way every front door (CLI, batch, page, benchmarks) makes a video.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from musicvid.core.audio import Audio
from musicvid.core.workdir import Workdir
from musicvid.delivery import captions
from musicvid.delivery.deliver import Delivery, copy_out, draw_and_deliver, lyrics_script
from musicvid.delivery.upscale import upscaler_for
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import Timings
from musicvid.pictures.draw import draw_pictures, pictures_of
from musicvid.pictures.keyframe_candidates import pick_keyframes
from musicvid.pictures.pacing import on_the_beat
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.scores import picked_scores
from musicvid.prepare import prepare
from musicvid.review.run_report import run_summary
from musicvid.review.sheet import write_contact_sheet
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import Storyboard
from musicvid.storyboard.kept import save_picks
from musicvid.storyboard.make import storyboard_in, word_source
from musicvid.storyboard.table import unshown_note, warn_of_doubts
from vipe_core.atomic import write_json


def get_storyboard(
    request: SongRequest,
    registry: ModelRegistry,
    timings: Timings | None = None,
    wait: bool = False,
    stop: threading.Event | None = None,
) -> tuple[Storyboard, Workdir, Audio]:
    """Transcribe and elaborate (or reuse what the work directory has); returns the storyboard,
    the work directory and the decoded audio. `wait`: for another run to let the work directory go, else
    that is refused; `stop`, set: the run ends before its next stage."""
    # 1. prepare: the request's files and its work directory checked, the song decoded
    run = prepare(request, registry, timings=timings, stop=stop, wait=wait)
    # 2. take the work directory; 3. the storyboard, made or reused
    with run.workdir.held(wait, run.audio.info.sha256):
        return storyboard_in(run), run.workdir, run.audio


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
    reference_only: tuple[str, ...] = (),
) -> Keyframes:
    """Song -> storyboard, each shown scene's keyframe and the contact sheet (docs/frames.md). The
    keyframes are the very pictures a render draws first, so a render after this draws only the morphs;
    a scene whose seed or prompt was edited since gets its keyframe redrawn, and no other does. `wait`:
    for another run to let the work directory go, else that is refused; `reference_only`: the options given that act
    only where a reference picture is drawn (musicvid.prepare.check_reference_drawn)."""
    # 1. prepare: every check, and on CUDA what the keyframes fit in (musicvid.memory.plan)
    run = prepare(
        request,
        registry,
        settings,
        keyframes_only=True,
        timings=timings,
        stop=stop,
        wait=wait,
        reference_only=reference_only,
    )
    workdir = run.workdir
    # 2. take the work directory
    with workdir.held(wait, run.audio.info.sha256):
        # 3. storyboard, made or reused
        storyboard = storyboard_in(run)
        # 4. each keyframe picked among its candidates, where its pick does not hold (musicvid.pictures.keyframe_candidates)
        schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, settings.fps)
        picked = pick_keyframes(run, storyboard, schedule, save=partial(save_picks, run))
        storyboard = picked.storyboard
        # 5. the keyframes whose inputs changed, or that a killed run left undone, and the contact sheet
        pictures = pictures_of(run, storyboard, schedule, keyframes_only=True)
        drawn = picked.keyframes + draw_pictures(run, pictures)
        sheet = write_contact_sheet(storyboard, workdir, schedule.shown_scenes, picked_scores(storyboard))
    return Keyframes(storyboard, workdir, sheet, drawn, schedule.shown_scenes)


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
    reference_only: tuple[str, ...] = (),
) -> Video:
    """Song -> music video, with its .srt beside it (beside the song unless `output` names the video).
    `wait`: for another run to let the work directory go, else that is refused. Setting `stop` ends the
    run within one denoising step (what is written stays, for a resume). `reference_only`: the options given that
    act only where a reference picture is drawn (musicvid.prepare.check_reference_drawn)."""
    started = time.perf_counter()
    # 1. prepare (musicvid.prepare): every check once, before any work (the settings against the models, the inputs,
    #    the outputs, the work directory, the memory plan on CUDA), the song decoded: the Run every stage takes
    run = prepare(
        request, registry, settings, output, timings=timings, stop=stop, wait=wait, reference_only=reference_only
    )
    settings, workdir = run.settings, run.workdir
    # 2. take the work directory (cleared of what a killed run left mid-write); load the upscaler if --resolution
    #    asks for one (a broken file is named now, not after the drawing)
    with workdir.held(wait, run.audio.info.sha256, run.output), upscaler_for(run) as upscale:
        # 3. storyboard: made, or reused from the work directory with its edits (its pinned pictures checked now)
        storyboard = storyboard_in(run)
        # 4. frame schedule, paced by the beats if asked
        motion, accent = on_the_beat(run, storyboard.duration)
        schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, settings.fps, motion)
        # 5. each keyframe picked among its candidates, where its pick does not hold (musicvid.pictures.keyframe_candidates);
        #    then the pictures to draw: those whose inputs changed, or that a killed run left undone; the picks' scores
        picked = pick_keyframes(run, storyboard, schedule, save=partial(save_picks, run))
        storyboard = picked.storyboard
        pictures = pictures_of(run, storyboard, schedule)
        scores = picked_scores(storyboard)
        # 6. lyrics on screen, each line while it is sung (each word, for karaoke) where a timed lyrics file times
        #    it, else where the cached transcript heard it; with them (only they need glyphs), the characters no
        #    caption font draws, and for karaoke the lines it shows whole (right to left)
        heard = word_source(run)
        script = lyrics_script(run, storyboard, heard)
        undrawn = captions.undrawn_note(storyboard) if script else ""
        whole = captions.shown_whole_note(storyboard) if settings.captions == "karaoke" else ""
        # 7. the pictures drawn while their frames are delivered and muxed with the song
        tags = (("title", storyboard.title), ("artist", storyboard.artist))
        delivery = Delivery(Path(run.audio.info.path), script, accent, upscale, tags)
        drawn, video = draw_and_deliver(run, pictures, delivery)
        drawn += picked.keyframes
        # 8. the copy to the output, its subtitles, the contact sheet with the keyframes' scores, timings.json
        copy_out(run, storyboard, video, script, heard)
        write_contact_sheet(storyboard, workdir, schedule.shown_scenes, scores)
        summary = run_summary(run, pictures, drawn, picked.keyframe_candidates, upscale, started)
        write_json(workdir.timings, summary)
    # 9. what a person should look at
    warn_of_doubts(storyboard, undrawn, whole, unshown_note(storyboard, schedule.shown_scenes, settings.fps))
    return Video(
        run.output,
        run.output.with_suffix(".srt"),
        workdir,
        storyboard,
        run.audio.info.duration,
        summary["video_frames"],
        drawn,
        summary,
    )
