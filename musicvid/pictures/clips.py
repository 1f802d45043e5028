"""One clip between two keyframes, drawn by the video model of --transitions video through its family's own
pipeline (musicvid.settings.presets.VIDEO_FAMILIES): the first keyframe given as the clip's first frame, the next
as its last, under one prompt, with its card's guidance. (docs/frames.md)

- LTX-Video 0.9.5 (LTXConditionPipeline): a condition at frame 0 and one at the last frame, its authors' recipe
  for the timestep-aware VAE (a little noise on the conditioning pictures and at the decode);
- LTX-2 (LTX2ConditionPipeline): conditions at frame 0 and -1. It draws sound with the video, through its audio VAE
  and vocoder, and its pipeline has no way to leave that out: the sound is dropped, never muxed (the video's sound
  is the song). Guidance is classifier-free alone: its spatio-temporal and modality-isolation guidance would each
  run the transformer once more a step, the latter for sound and picture to agree;
- Wan 2.1 FLF2V (WanImageToVideoPipeline): `image` and `last_image`, both read by CLIP as well as by the VAE.
"""

from __future__ import annotations

import threading
from typing import Collection

import numpy as np
import torch
from PIL import Image

from musicvid.models.loading import pipeline_over
from musicvid.pictures.camera import cover
from musicvid.pictures.denoise import stop_between_steps
from musicvid.pictures.switches import offload
from musicvid.settings.geometry import drawn_size
from musicvid.settings.presets import VIDEO_FAMILIES, VIDEO_PIPELINES
from musicvid.settings.render import RenderSettings

# LTX-Video 0.9.5's timestep-aware VAE, as its authors run it: a little noise at the decode and on the pictures
LTX_VIDEO_NOISE = dict(decode_timestep=0.05, decode_noise_scale=0.025, image_cond_noise_scale=0.025)
# LTX-2 with classifier-free guidance alone (module docstring), for the video and the sound it draws beside it
LTX2_GUIDANCE = dict(stg_scale=0.0, audio_stg_scale=0.0, modality_scale=1.0, audio_modality_scale=1.0)
# What LTX-Video's authors ask it not to draw, where a person gave no negative prompt (the same faults of any video
# model: every family is given it)
VIDEO_NEGATIVE = "worst quality, inconsistent motion, blurry, jittery, distorted"


def family_of_video(pipe) -> str:
    """The family (VIDEO_FAMILIES) of a loaded video pipeline, by its class."""
    return VIDEO_PIPELINES[type(pipe).__name__]


def video_pipeline_for(pipe, settings: RenderSettings, offloads: Collection[str] | None = None):
    """The video pipeline for one render: the loaded models, shared, with a sampler of the render's own (its
    timesteps are state a kept-loaded pipeline must not share between renders), of the family's own kind (Wan's
    UniPC, the LTX families' flow-matching Euler). `offloads`: the memory plan's switches, by default --low-vram's
    (each model offloaded to the CPU between its passes, tiled decoding)."""
    offloads = settings.offloads_asked("transitions") if offloads is None else offloads
    offload(pipe, offloads)
    if "vae-tiling" in offloads:
        pipe.vae.enable_tiling()
    else:
        pipe.vae.disable_tiling()
    own = pipeline_over(pipe, scheduler=type(pipe.scheduler).from_config(pipe.scheduler.config))
    own.set_progress_bar_config(disable=True)
    return own


def family_inputs(family: str, first: Image.Image, last: Image.Image, frames: int, rate: int) -> dict:
    """How `family`'s pipeline takes the two keyframes, and what else it is told: the LTX families the rate the
    clip is drawn for (they read it as how far apart their frames are in time)."""
    if family == "wan":
        return dict(image=first, last_image=last)
    if family == "ltx2":
        from diffusers.pipelines.ltx2.pipeline_ltx2_condition import LTX2VideoCondition

        # (crf 0: the keyframes are not put through H.264 first, which needs PyAV: they are drawn pictures)
        ends = [LTX2VideoCondition(frames=first, index=0, crf=0), LTX2VideoCondition(frames=last, index=-1, crf=0)]
        return dict(conditions=ends, frame_rate=rate, **LTX2_GUIDANCE)
    from diffusers.pipelines.ltx.pipeline_ltx_condition import LTXVideoCondition

    ends = [LTXVideoCondition(image=first, frame_index=0), LTXVideoCondition(image=last, frame_index=frames - 1)]
    return dict(conditions=ends, frame_rate=rate, **LTX_VIDEO_NOISE)


@torch.inference_mode()
def draw_clip(
    pipe,
    frames: int,
    rate: int,
    ends: tuple[np.ndarray, np.ndarray],
    prompt: str,
    seed: int,
    settings: RenderSettings,
    stop: threading.Event | None = None,
) -> np.ndarray:
    """A clip of `frames` frames drawn for `rate` frames a second, uint8 RGB (frames × height × width × 3) at the
    picture size, from keyframe `ends[0]` at its first frame to `ends[1]` at its last, drawn at the family's size
    step below it. The noise comes from a CPU generator seeded with the first scene's seed, so a transition is the
    same on every device."""
    family = family_of_video(pipe)
    width, height = drawn_size(settings.size, VIDEO_FAMILIES[family].size_step)
    first, last = (Image.fromarray(cover(picture, (width, height))) for picture in ends)
    clip = pipe(
        prompt=prompt,
        negative_prompt=settings.negative_prompt or VIDEO_NEGATIVE,
        width=width,
        height=height,
        num_frames=frames,
        num_inference_steps=settings.transition_steps,
        guidance_scale=VIDEO_FAMILIES[family].guidance,
        generator=torch.Generator("cpu").manual_seed(seed),
        output_type="np",
        callback_on_step_end=stop_between_steps(stop),
        **family_inputs(family, first, last, frames, rate),
    ).frames[0]
    pixels = (np.clip(clip, 0, 1) * 255).round().astype(np.uint8)
    return np.stack([cover(frame, settings.size) for frame in pixels])
