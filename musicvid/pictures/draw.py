"""A render's pictures, planned and drawn: which of them are stale (musicvid.pictures.plan, and with
--transitions video musicvid.pictures.transitions), then Stable Diffusion's (musicvid.pictures.render) and the
video model's, each model taken from the run's registry for its part alone."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from musicvid.core.workdir import Workdir
from musicvid.models.drawing import Drawing
from musicvid.models.memory import MemoryPlan, offloads
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import Timings
from musicvid.pictures.job import job_pipeline
from musicvid.pictures.plan import Picture, plan_pictures, stale_pictures, uses_reference
from musicvid.pictures.render import render_pictures
from musicvid.pictures.schedule import FrameSchedule
from musicvid.pictures.transitions import (
    Transition,
    plan_transitions,
    render_transitions,
    stale_transitions,
    video_job,
)
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Storyboard


@dataclass(frozen=True)
class PicturePlan:
    """The pictures of a render of `storyboard` at `schedule`, and which of them draw_pictures is to write
    (`stale`: missing, or drawn from other inputs): Stable Diffusion's groups, and with --transitions video
    the video model's transitions between the keyframes (SD then draws the keyframes alone, as in a
    preview)."""

    storyboard: Storyboard
    schedule: FrameSchedule
    drawing: Drawing
    groups: list[list[Picture]]
    transitions: list[Transition]
    stale: set[Path]


def plan_drawing(
    storyboard: Storyboard, schedule: FrameSchedule, settings: RenderSettings, registry: ModelRegistry, workdir: Workdir
) -> PicturePlan:
    """Every picture of `schedule` keyed by its inputs (keyframes alone with the run's `settings.preview`),
    and which of them a killed run left undone or an edit made stale."""
    by_video = settings.transitions == "video" and not settings.preview
    drawing = Drawing(settings.fast, settings.lora, uses_reference(storyboard, settings))
    groups = plan_pictures(storyboard, schedule, settings, drawing.key(registry.models), workdir, by_video)
    transitions = []
    if by_video:
        keyframes = {group[0].scene: group[0] for group in groups}
        transitions = plan_transitions(schedule, settings, keyframes, registry.models.video, workdir)
    stale = stale_pictures(groups, settings) | stale_transitions(transitions, settings)
    return PicturePlan(storyboard, schedule, drawing, groups, transitions, stale)


def draw_pictures(
    plan: PicturePlan,
    settings: RenderSettings,
    registry: ModelRegistry,
    workdir: Workdir,
    timings: Timings,
    *,
    memory: MemoryPlan | None = None,
    stop: threading.Event | None = None,
    quiet: bool = False,
    on_saved: Callable[[Path], object] = lambda path: None,
) -> int:
    """The plan's stale pictures; returns how many were drawn. With --transitions video, Stable Diffusion
    draws the keyframes, then the video model the frames between them (musicvid.pictures.transitions).
    `on_saved` hears of each picture once it is on disk; `stop` set ends it within a denoising step. Each model is
    loaded and offloaded as the run's `memory` plan says (musicvid.models.memory)."""
    drawn = 0
    if any(p.path in plan.stale for group in plan.groups for p in group):
        drawn += draw_keyframes_and_morphs(plan, settings, registry, timings, memory, stop, quiet, on_saved)
    if any(p.path in plan.stale for t in plan.transitions for p in t.pictures):
        # (Stable Diffusion is released by now: no name here holds it while the video model loads)
        with registry.use("video", timings, memory) as loaded:
            job = video_job(loaded, settings, offloads(memory, "transitions"))
            transitions, stale = plan.transitions, plan.stale
            drawn += render_transitions(
                job,
                plan.storyboard,
                transitions,
                stale,
                settings,
                workdir,
                timings,
                stop=stop,
                quiet=quiet,
                on_saved=on_saved,
            )
    return drawn


def draw_keyframes_and_morphs(
    plan: PicturePlan,
    settings: RenderSettings,
    registry: ModelRegistry,
    timings: Timings,
    memory: MemoryPlan | None,
    stop: threading.Event | None,
    quiet: bool,
    on_saved: Callable[[Path], object],
) -> int:
    """Stable Diffusion's pictures of the plan, in a function of their own so that its pipeline and the job
    made of it are let go when it returns."""
    with registry.use(plan.drawing, timings, memory) as loaded:
        job = job_pipeline(loaded, settings, offloads(memory, "pictures"))
        return render_pictures(job, plan.storyboard, plan.groups, plan.stale, settings, timings, quiet, stop, on_saved)
