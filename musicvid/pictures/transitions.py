"""Transitions drawn by a video model (--transitions video): the frames between two keyframes as a clip that
the video model (LTX-Video 0.9.5, LTX-2 or Wan 2.1 FLF2V: musicvid.pictures.clips) draws from the first keyframe to
the next, instead of the slerp walk (musicvid.pictures.conditioning) that Stable Diffusion draws.

Each morph of the schedule becomes one transition. The keyframes stay the pictures the picture model drew (frame
K_i shows keyframe i itself, as with slerp); the video model draws a clip that starts at keyframe i and ends at
keyframe j — both given as pictures at its first and last frame — under a prompt made of the two scenes' prompts.
A family draws clips of frame_step × k + 1 frames (VIDEO_FAMILIES): the LTX families the fewest that hold the
morph's frames and the next keyframe, told the rate those frames have over the morph's seconds; Wan the fewest
that span the morph's seconds at its own 16 fps. In-between frame k shows the clip's frame nearest its t (paced by
the beats where the morph is), at the drawn size. A morph whose clip would be longer than the family's longest
(max_frames, what its card draws) is left to the slerp walk, as without --transitions video: two clips chained
through a keyframe drawn between would be a picture no scene asked for. timings.json says how many morphs each
drew (transitions_report). (docs/frames.md)

Frames are keyed PNGs like every picture: a transition's key holds the video model and its settings, the
two keyframes' keys (so their prompts, seeds and pictures) and the frame's place. A transition is drawn
whole whenever any of its frames is missing or stale, and only those are written: a resumed render draws
only the transitions it had not finished, and an edited scene redraws only the two that touch it.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from musicvid.core.files import weights_identity
from musicvid.core.progress import Progress
from musicvid.core.workdir import Workdir
from musicvid.models.families import video_family
from musicvid.models.timing import Timings
from musicvid.pictures.cache import load_picture, picture_key, save_picture
from musicvid.pictures.clips import draw_clip
from musicvid.pictures.grouping import Picture, stale_pictures
from musicvid.pictures.schedule import FrameSchedule, Segment
from musicvid.pictures.style import styled
from musicvid.pictures.switches import compute_device
from musicvid.settings.presets import VIDEO_FAMILIES, VideoFamily
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Storyboard


def clip_span(length: int, fps: float, family: VideoFamily) -> float:
    """How many frames past its first the clip for a morph of `length` frames at `fps` spans: the morph's own
    (drawn for the morph's rate), or the morph's seconds at the family's rate."""
    return length if family.rate is None else length / fps * family.rate


def clip_frames(length: int, fps: float, family: VideoFamily) -> int:
    """The frames of the clip drawn for a morph of `length` frames: the fewest frame_step × k + 1 that span it and
    the next keyframe."""
    steps = math.ceil(round(clip_span(length, fps, family) / family.frame_step, 9))
    return family.frame_step * max(1, steps) + 1


def clip_rate(length: int, fps: float, family: VideoFamily) -> int:
    """The frame rate the clip is drawn for: the family's own, or its frames over the morph's seconds."""
    return family.rate or max(1, round((clip_frames(length, fps, family) - 1) * fps / length))


def clip_index(t: float, frames: int) -> int:
    """The clip's frame that shows the morph at t (0: the first keyframe, 1: the next)."""
    return round(t * (frames - 1))


def by_video(segment: Segment, fps: float, family: VideoFamily) -> bool:
    """Whether the video model draws the morph of `segment`: one with frames between its keyframes, whose clip is
    no longer than the family draws (else the slerp walk draws it)."""
    if segment.target is None or segment.length < 2:
        return False
    return clip_frames(segment.length, fps, family) <= family.max_frames


def transition_prompt(start: str, end: str, style: str) -> str:
    """One prompt for the clip from scene `start`'s picture to scene `end`'s: the first, becoming the second."""
    return styled(f"{start}, slowly turning into {end}", style)


def transitions_report(schedule: FrameSchedule, video: str, family: VideoFamily) -> dict:
    """What timings.json says of the transitions: the video model (of `family`), how many morphs it drew, how many
    were longer than its longest clip and were slerped."""
    morphs = [segment for segment in schedule.segments if segment.target is not None and segment.length >= 2]
    drawn = sum(by_video(segment, schedule.fps, family) for segment in morphs)
    return {
        "video_model": video,
        "morphs_by_video": drawn,
        "morphs_slerped": len(morphs) - drawn,
        "longest_clip_frames": family.max_frames,
    }


@dataclass(frozen=True)
class Transition:
    """The frames between keyframe `scene` and keyframe `target`, drawn as one clip of `frames` frames at
    `rate` frames per second; `pictures`: the in-between frames, each with its t."""

    scene: int
    target: int
    frames: int
    rate: int
    pictures: tuple[Picture, ...]


def transitions_of(
    schedule: FrameSchedule, settings: RenderSettings, keyframes: dict[int, Picture], video: str, workdir: Workdir
) -> list[Transition]:
    """Every morph of `schedule` the video model draws (by_video), as a transition; `keyframes`: each shown scene's
    keyframe, as musicvid.pictures.grouping.picture_groups keys it; `video`: the video model's name (keyed by what it
    holds where it is a folder here: musicvid.core.files.weights_identity)."""
    family = VIDEO_FAMILIES[video_family(video)]
    common = {
        "video": weights_identity(video),  # a folder changed in place draws anew
        "transition_steps": settings.transition_steps,
        "width": settings.width,
        "height": settings.height,
        "negative_prompt": settings.negative_prompt,
        "style": settings.style,
    }
    transitions = []
    for segment in (s for s in schedule.segments if by_video(s, schedule.fps, family)):
        frames, rate = (
            clip_frames(segment.length, schedule.fps, family),
            clip_rate(segment.length, schedule.fps, family),
        )
        ends = (keyframes[segment.scene].key, keyframes[segment.target].key)
        pictures = tuple(
            Picture(
                workdir.frame(k),
                picture_key(common, ends, frames, rate, round(segment.t(k), 9)),
                segment.scene,
                segment.target,
                segment.t(k),
            )
            for k in range(segment.first + 1, segment.end)
        )
        transitions.append(Transition(segment.scene, segment.target, frames, rate, pictures))
    return transitions


def stale_transitions(transitions: list[Transition], settings: RenderSettings) -> set[Path]:
    """The paths of the transitions' frames that are missing, or drawn from other inputs or at another size."""
    return stale_pictures([list(t.pictures) for t in transitions], settings)


def draw_transitions(
    pipe,
    storyboard: Storyboard,
    transitions: list[Transition],
    stale: set[Path],
    settings: RenderSettings,
    workdir: Workdir,
    timings: Timings,
    *,
    stop: threading.Event | None = None,
    quiet: bool = False,
    on_saved: Callable[[Path, np.ndarray], object] = lambda path, pixels: None,
) -> int:
    """Draw the transitions that hold a `stale` frame (their keyframes on disk already); returns how many
    frames were written anew. `on_saved` hears of each frame once it is on disk; `stop` set ends it within a step."""
    device = compute_device(pipe)  # (under --low-vram's offloading too)
    todo = [t for t in transitions if any(p.path in stale for p in t.pictures)]
    written = 0
    with Progress("transitions", total=sum(len(t.pictures) for t in todo), unit="frame", quiet=quiet) as progress:
        for transition in todo:
            start, end = storyboard.scenes[transition.scene], storyboard.scenes[transition.target]
            ends = (load_picture(workdir.keyframe(transition.scene)), load_picture(workdir.keyframe(transition.target)))
            with timings.measure("transitions", device):
                clip = draw_clip(
                    pipe,
                    transition.frames,
                    transition.rate,
                    ends,
                    transition_prompt(start.prompt, end.prompt, settings.style),
                    start.seed,
                    settings,
                    stop,
                )
            for picture in transition.pictures:
                if picture.path in stale:
                    save_picture(picture.path, clip[clip_index(picture.t, transition.frames)], picture.key, on_saved)
                    written += 1
            progress.advance(len(transition.pictures))
    return written
