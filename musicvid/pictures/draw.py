"""A render's pictures, listed and drawn: which of them are stale (musicvid.pictures.grouping, and with
--transitions video musicvid.pictures.transitions), then Stable Diffusion's (musicvid.pictures.denoise) and the
video model's, each model taken from the run's registry for its part alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from musicvid.models.drawing import Drawing
from musicvid.models.families import video_family
from musicvid.pictures.clips import video_pipeline_for
from musicvid.pictures.denoise import draw_groups
from musicvid.pictures.grouping import Picture, picture_groups, stale_pictures, uses_reference
from musicvid.pictures.schedule import FrameSchedule
from musicvid.pictures.switches import pipeline_for
from musicvid.pictures.transitions import Transition, by_video, draw_transitions, stale_transitions, transitions_of
from musicvid.run import Run
from musicvid.settings.presets import VIDEO_FAMILIES, VideoFamily
from musicvid.storyboard.board import Storyboard


@dataclass(frozen=True)
class Pictures:
    """The pictures of a render of `storyboard` at `schedule`, and which of them draw_pictures is to write
    (`stale`: missing, or drawn from other inputs): Stable Diffusion's groups, and with --transitions video
    the video model's transitions between the keyframes (SD then draws the keyframes, and the morphs too long
    for the video model)."""

    storyboard: Storyboard
    schedule: FrameSchedule
    drawing: Drawing
    groups: list[list[Picture]]
    transitions: list[Transition]
    stale: set[Path]
    family: VideoFamily | None  # the video model's, with --transitions video


def pictures_of(run: Run, storyboard: Storyboard, schedule: FrameSchedule, keyframes_only: bool = False) -> Pictures:
    """Every picture of `schedule` keyed by its inputs (the keyframes alone in a preview or with `keyframes_only`),
    and which of them a killed run left undone or an edit made stale."""
    settings, models, workdir = run.settings, run.registry.models, run.workdir
    video = settings.transitions == "video" and not (settings.preview or keyframes_only)
    drawing = Drawing(settings.fast, settings.lora, uses_reference(storyboard, settings))
    family = VIDEO_FAMILIES[video_family(models.video)] if video else None
    # (the morphs longer than the video model's longest clip are slerped)
    clipped = {s.first for s in schedule.segments if family and by_video(s, schedule.fps, family)}
    groups = picture_groups(
        storyboard,
        schedule,
        settings,
        drawing.key(models, run.registry.precision),
        workdir,
        keyframes_only,
        elsewhere=clipped,
    )
    transitions = []
    if video:
        keyframes = {p.scene: p for group in groups for p in group if p.target is None}
        transitions = transitions_of(schedule, settings, keyframes, models.video, workdir)
    stale = stale_pictures(groups, settings) | stale_transitions(transitions, settings)
    return Pictures(storyboard, schedule, drawing, groups, transitions, stale, family)


def draw_pictures(
    run: Run, pictures: Pictures, on_saved: Callable[[Path, np.ndarray], object] = lambda path, pixels: None
) -> int:
    """The stale pictures; returns how many were drawn. With --transitions video, Stable Diffusion
    draws the keyframes, then the video model the frames between them (musicvid.pictures.transitions).
    `on_saved` hears of each picture once it is on disk; the run's stop signal ends it within a denoising step. Each
    model is loaded and offloaded as the run's memory plan says (musicvid.memory.plan)."""
    drawn = 0
    if any(p.path in pictures.stale for group in pictures.groups for p in group):
        drawn += draw_keyframes_and_morphs(run, pictures, on_saved)
    if any(p.path in pictures.stale for t in pictures.transitions for p in t.pictures):
        # (Stable Diffusion is released by now: no name here holds it while the video model loads)
        with run.registry.use("video", run.timings, run.memory) as loaded:
            own = video_pipeline_for(loaded, run.settings, run.offloads["transitions"])
            drawn += draw_transitions(
                own,
                pictures.storyboard,
                pictures.transitions,
                pictures.stale,
                run.settings,
                run.workdir,
                run.timings,
                stop=run.stop,
                quiet=run.quiet,
                on_saved=on_saved,
            )
    return drawn


def draw_keyframes_and_morphs(run: Run, pictures: Pictures, on_saved: Callable[[Path, np.ndarray], object]) -> int:
    """Stable Diffusion's pictures, in a function of their own so that its pipeline and the render
    made of it are let go when it returns."""
    with run.registry.use(pictures.drawing, run.timings, run.memory) as loaded:
        own = pipeline_for(loaded, run.settings, run.offloads["pictures"])
        return draw_groups(
            own,
            pictures.storyboard,
            pictures.groups,
            pictures.stale,
            run.settings,
            run.timings,
            run.quiet,
            run.stop,
            on_saved,
        )
