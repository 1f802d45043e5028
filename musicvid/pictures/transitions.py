"""Transitions drawn by a video model (--transitions video): the frames between two keyframes as a clip
that LTX-Video draws from the first keyframe to the next, instead of the slerp walk of render.py.

Each morph of the schedule becomes one transition. The keyframes stay the pictures Stable Diffusion drew
(frame K_i shows keyframe i itself, as with slerp); the video model draws a clip that starts at keyframe i
and ends at keyframe j — both given as pictures at its first and last frame — under a prompt made of the
two scenes' prompts. LTX-Video draws 8k + 1 frames at sizes in steps of 32, so a clip is drawn at the
fewest frames that cover the morph (at most MAX_CLIP_FRAMES) and retimed: in-between frame k shows the
clip's frame nearest its t (paced by the beats where the morph is), at the drawn size. (docs/frames.md)

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
from typing import Callable, Collection

import numpy as np
import torch
from PIL import Image

from musicvid.core.progress import Progress
from musicvid.core.workdir import Workdir
from musicvid.models.loading import pipeline_over
from musicvid.models.timing import Timings
from musicvid.pictures.cache import load_picture, picture_key, save_picture
from musicvid.pictures.camera import cover
from musicvid.pictures.denoise import stop_between_steps
from musicvid.pictures.grouping import Picture, stale_pictures
from musicvid.pictures.schedule import FrameSchedule
from musicvid.pictures.switches import compute_device, offload
from musicvid.settings.geometry import FRAME_STEP, MAX_CLIP_FRAMES, drawn_size
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Storyboard

# LTX-Video's recipe for 0.9.5, as its authors give it: guidance 3, and for its timestep-aware VAE a little
# noise at the decode and on the conditioning pictures.
LTX_SAMPLING = dict(guidance_scale=3.0, decode_timestep=0.05, decode_noise_scale=0.025, image_cond_noise_scale=0.025)
# What LTX-Video's authors ask it not to draw, where a person gave no negative prompt
VIDEO_NEGATIVE = "worst quality, inconsistent motion, blurry, jittery, distorted"


def clip_frames(length: int) -> int:
    """The frames of the clip drawn for a morph of `length` frames: the fewest 8k + 1 that hold it and the
    next keyframe (length + 1), at most MAX_CLIP_FRAMES."""
    return min(MAX_CLIP_FRAMES, FRAME_STEP * math.ceil(length / FRAME_STEP) + 1)


def clip_rate(length: int, fps: float) -> int:
    """The frame rate the clip is drawn for: its frames over the morph's seconds (LTX-Video reads the rate
    as how far apart its frames are in time)."""
    return max(1, round((clip_frames(length) - 1) * fps / length))


def clip_index(t: float, frames: int) -> int:
    """The clip's frame that shows the morph at t (0: the first keyframe, 1: the next)."""
    return round(t * (frames - 1))


def transition_prompt(start: str, end: str, style: str) -> str:
    """One prompt for the clip from scene `start`'s picture to scene `end`'s: the first, becoming the second."""
    prompt = f"{start}, slowly turning into {end}"
    return f"{prompt}, {style}" if style.strip() else prompt


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
    """Every morph of `schedule` as a transition; `keyframes`: each shown scene's keyframe, as
    plan.picture_groups keys it; `video`: the video model's name."""
    common = {
        "video": video,
        "transition_steps": settings.transition_steps,
        "width": settings.width,
        "height": settings.height,
        "negative_prompt": settings.negative_prompt,
        "style": settings.style,
    }
    transitions = []
    for segment in schedule.segments:
        if segment.target is None or segment.length < 2:
            continue  # a held last keyframe, or a morph with no frame between its keyframes
        frames, rate = clip_frames(segment.length), clip_rate(segment.length, schedule.fps)
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


def video_pipeline_for(pipe, settings: RenderSettings, offloads: Collection[str] | None = None):
    """The video pipeline for one render: the loaded models, shared, with a sampler of the render's own (its
    timesteps are state a kept-loaded pipeline must not share between renders). `offloads`: the memory plan's
    switches, by default --low-vram's (each model offloaded to the CPU between its passes, tiled decoding)."""
    from diffusers import FlowMatchEulerDiscreteScheduler

    offloads = settings.offloads_asked("transitions") if offloads is None else offloads
    offload(pipe, offloads)
    if "vae-tiling" in offloads:
        pipe.vae.enable_tiling()
    else:
        pipe.vae.disable_tiling()
    own = pipeline_over(pipe, scheduler=FlowMatchEulerDiscreteScheduler.from_config(pipe.scheduler.config))
    own.set_progress_bar_config(disable=True)
    return own


@torch.inference_mode()
def draw_clip(
    pipe,
    transition: Transition,
    ends: tuple[np.ndarray, np.ndarray],
    prompt: str,
    seed: int,
    settings: RenderSettings,
    stop: threading.Event | None = None,
) -> np.ndarray:
    """The transition's clip, uint8 RGB (frames × height × width × 3) at the video's drawn size: LTX-Video
    from keyframe `ends[0]` at its first frame to `ends[1]` at its last. The noise comes from a CPU
    generator seeded with the first scene's seed, so a transition is the same on every device."""
    from diffusers.pipelines.ltx.pipeline_ltx_condition import LTXVideoCondition

    width, height = drawn_size(settings.size)
    first, last = (Image.fromarray(cover(picture, (width, height))) for picture in ends)
    clip = pipe(
        conditions=[
            LTXVideoCondition(image=first, frame_index=0),
            LTXVideoCondition(image=last, frame_index=transition.frames - 1),
        ],
        prompt=prompt,
        negative_prompt=settings.negative_prompt or VIDEO_NEGATIVE,
        width=width,
        height=height,
        num_frames=transition.frames,
        frame_rate=transition.rate,
        num_inference_steps=settings.transition_steps,
        generator=torch.Generator("cpu").manual_seed(seed),
        output_type="np",
        callback_on_step_end=stop_between_steps(stop),
        **LTX_SAMPLING,
    ).frames[0]
    pixels = (np.clip(clip, 0, 1) * 255).round().astype(np.uint8)
    return np.stack([cover(frame, settings.size) for frame in pixels])


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
    on_saved: Callable[[Path], object] = lambda path: None,
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
                    transition,
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
