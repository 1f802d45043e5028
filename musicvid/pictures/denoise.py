"""Stable Diffusion's pictures drawn (their groups: musicvid.pictures.grouping), group by group, each group's
conditioning (musicvid.pictures.conditioning) stacked into one batch, denoised and decoded together, and its
stale pictures written to the keyed cache (musicvid.pictures.cache) while the next group is drawn."""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from musicvid.core.errors import Cancelled, UserError
from musicvid.core.progress import Progress
from musicvid.models.internals import is_compiled
from musicvid.models.timing import Timings
from musicvid.pictures import flow
from musicvid.pictures.cache import save_picture
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.deep_cache import sharing
from musicvid.pictures.deep_share import Plan, plan
from musicvid.pictures.grouping import Picture
from musicvid.pictures.switches import compute_device, denoiser, is_flow
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Storyboard

WRITE_AHEAD = 2  # groups of pictures that may wait to be written while the next is drawn


def stop_between_steps(stop: threading.Event | None):
    """A step callback that ends the denoising loop within one step of `stop` being set."""

    def check(pipe, step: int, timestep, tensors: dict) -> dict:
        if stop is not None and stop.is_set():
            raise Cancelled("the render was cancelled")
        return tensors

    return check


@dataclass(frozen=True)
class Batch:
    """One group's inputs to the pipeline, on its device, in its dtype (the noise of a flow-matching family in
    float32: Z-Image's sampler steps in float32, klein's pipeline casts it)."""

    text: torch.Tensor | list[torch.Tensor]  # a flow-matching family's: one tensor a picture (Z-Image's differ)
    negative: torch.Tensor | list[torch.Tensor]
    pooled: torch.Tensor | None  # with SDXL: the pooled text embeddings, and the negative's
    negative_pooled: torch.Tensor | None
    noise: torch.Tensor
    step_noise: torch.Tensor | None  # steps − 1 × batch × latent (--fast)
    image: torch.Tensor | None  # 2·batch × 1 × embedding, with the adapter: "no picture" × batch, then each picture's
    references: list[torch.Tensor | None] | None = None  # with FLUX.2 klein: each picture's reference pixels (CPU)


def batch_inputs(pipe, inputs: SceneInputs, group: list[Picture], size: int | None = None, pin: bool = False) -> Batch:
    """The group's conditioning, stacked and moved to the pipeline's device (from pinned memory, without
    waiting for the copy, where `pin`). With `size`, a shorter group is padded to it by repeating its
    last picture: a compiled UNet then sees one shape and is compiled once. Each picture of a batch is
    computed apart from the others, so the padding changes the group's pictures by rounding at most (a
    batch of another shape may be blocked otherwise), and a group is always padded the same way."""
    given = [inputs.conditioning(p) for p in group]
    given += given[-1:] * ((size or 0) - len(given))
    device, dtype, flows = compute_device(pipe), denoiser(pipe).dtype, is_flow(pipe)

    def move(tensor: torch.Tensor, to: torch.dtype = dtype) -> torch.Tensor:
        tensor = tensor.to(to)
        return tensor.pin_memory().to(device, non_blocking=True) if pin else tensor.to(device)

    step_noise = [c.step_noise for c in given]
    # with the reference adapter, guidance's unconditional pictures (its "no picture") then each picture's own
    images = None if given[0].image is None else [inputs.no_image] * len(given) + [c.image for c in given]
    xl = given[0].pooled is not None
    if flows:
        text, negative = [move(c.text) for c in given], [move(inputs.negative[0])] * len(given)
    else:
        text, negative = move(torch.stack([c.text for c in given])), move(inputs.negative).expand(len(given), -1, -1)
    return Batch(
        text=text,
        negative=negative,
        pooled=move(torch.stack([c.pooled for c in given])) if xl else None,
        negative_pooled=move(inputs.negative_pooled).expand(len(given), -1) if xl else None,
        noise=move(torch.stack([c.noise for c in given]), torch.float32 if flows else dtype),
        step_noise=None if step_noise[0] is None else move(torch.stack(step_noise, dim=1)),
        image=None if images is None else move(torch.stack([image[None] for image in images])),
        references=[c.reference for c in given] if flows else None,
    )


def padded_size(pipe, settings: RenderSettings) -> int | None:
    """The batch size every group is padded to where the UNet is compiled (by this render's --compile, or by an
    earlier render's on a pipeline kept loaded), so that it sees one shape; None where it is not."""
    return settings.batch if is_compiled(denoiser(pipe)) else None


def deep_plan(group: list[Picture], settings: RenderSettings, size: int | None) -> Plan | None:
    """How a group of in-between frames shares the UNet's deep features (--deep-share); None: keyframes, or off."""
    if settings.deep_share == 1 or group[0].target is None:
        return None
    return plan([(p.scene, p.target) for p in group], [p.t for p in group], settings.deep_share, size)


def denoise(pipe, batch: Batch, settings: RenderSettings, stop: threading.Event | None = None) -> torch.Tensor:
    """One batched pipeline call (guidance batched with it): the latents of the batch's pictures."""
    if is_flow(pipe):
        check = stop_between_steps(stop)
        return flow.call(
            pipe, batch.text, batch.negative, batch.noise, settings, batch.references, callback_on_step_end=check
        )
    pooled = {}
    if batch.pooled is not None:
        pooled = {"pooled_prompt_embeds": batch.pooled, "negative_pooled_prompt_embeds": batch.negative_pooled}
    if batch.step_noise is not None:  # --fast: the noise of each step, for the render's own sampler (pipeline_for)
        pipe.scheduler.step_noise = batch.step_noise
    return pipe(
        prompt_embeds=batch.text,
        negative_prompt_embeds=batch.negative,
        **pooled,  # SDXL's: the pipeline makes the size conditioning from height and width
        latents=batch.noise,
        ip_adapter_image_embeds=None if batch.image is None else [batch.image],  # (see pipeline_for)
        num_inference_steps=settings.steps,
        guidance_scale=settings.guidance,
        height=settings.height,
        width=settings.width,
        output_type="latent",
        callback_on_step_end=stop_between_steps(stop),
    ).images


def decode(pipe, latents: torch.Tensor) -> torch.Tensor:
    """Latents to uint8 RGB pictures (batch × height × width × 3), on the pipeline's device."""
    if is_flow(pipe):
        pixels = flow.decode(pipe, latents)
    else:
        pixels = pipe.vae.decode(latents.to(pipe.vae.dtype) / pipe.vae.config.scaling_factor).sample
    check_numbers(pixels)
    return ((pixels.float() / 2 + 0.5).clamp(0, 1) * 255).round().to(torch.uint8).permute(0, 2, 3, 1)


def check_numbers(pixels: torch.Tensor) -> None:
    """Refuse pictures that are not numbers (NaN or infinite), which would be written as black: weights that hold
    NaN (a diverged fine-tune, a merge gone wrong), or a model whose numbers overflow half precision. (Read once per
    group, where its pictures are copied to the CPU anyway.)"""
    if bool(torch.isfinite(pixels).all()):
        return
    overflow = (
        ""
        if pixels.dtype == torch.float32
        else f", or its numbers overflow {str(pixels.dtype)[6:]} (try --precision float32)"
    )
    raise UserError(f"the picture model drew NaN, not pictures: its weights hold NaN or infinite values{overflow}")


@torch.inference_mode()
def draw_group(
    pipe,
    inputs: SceneInputs,
    group: list[Picture],
    settings: RenderSettings,
    timings: Timings,
    stop: threading.Event | None = None,
) -> np.ndarray:
    """The group's pictures as uint8 RGB: denoised together, then decoded together."""
    device, size = compute_device(pipe), padded_size(pipe, settings)
    with timings.measure("denoise", device), sharing(denoiser(pipe), deep_plan(group, settings, size), device):
        latents = denoise(pipe, batch_inputs(pipe, inputs, group, size), settings, stop)
    with timings.measure("decode", device):
        return decode(pipe, latents)[: len(group)].cpu().numpy()


def draw_groups(
    pipe,
    storyboard: Storyboard,
    groups: list[list[Picture]],
    stale: set[Path],
    settings: RenderSettings,
    timings: Timings,
    quiet: bool,
    stop: threading.Event | None = None,
    on_saved: Callable[[Path, np.ndarray], object] = lambda path, pixels: None,
) -> int:
    """Draw the groups that hold a `stale` picture (stale_pictures); returns how many pictures were
    drawn anew. A group is denoised whole, but only its stale pictures are written: the others (an
    edit's neighbours in a block across scenes) come out of the same batch as before and are kept.

    PNGs are encoded in threads while the next group is denoised (Pillow releases the GIL while it
    encodes): on a GPU, writing in line cost a seventh of the drawing time. At most WRITE_AHEAD groups
    wait to be written, so memory stays bounded; "write frames" counts only the time spent waiting.
    `on_saved` hears of each picture once it is on disk. Setting `stop` ends the render within one
    denoising step (what is written stays, for a resume)."""
    todo = [group for group in groups if any(p.path in stale for p in group)]
    needed = sorted({s for group in todo for p in group for s in (p.scene, p.target) if s is not None})
    with timings.measure("encode prompts", compute_device(pipe)):
        inputs = SceneInputs(pipe, storyboard, needed, settings)
    drawn = 0
    waiting: deque[list[Future]] = deque()

    def finish_writes(keep: int) -> None:
        with timings.measure("write frames"):
            while len(waiting) > keep:
                for write in waiting.popleft():
                    write.result()  # a failed write raises here

    with (
        ThreadPoolExecutor(max_workers=2) as writer,
        Progress("draw", total=sum(len(g) for g in todo), unit="frame", quiet=quiet) as progress,
    ):
        for group in todo:
            first = group[0]
            if first.target is None and first.scene in inputs.pinned:  # keyframes go alone (picture_groups)
                pictures = [inputs.pinned[first.scene]]
            else:
                pictures = draw_group(pipe, inputs, group, settings, timings, stop)
            new = [(p, pixels) for p, pixels in zip(group, pictures) if p.path in stale]
            waiting.append([writer.submit(save_picture, p.path, pixels, p.key, on_saved) for p, pixels in new])
            finish_writes(keep=WRITE_AHEAD)
            drawn += len(new)
            progress.advance(len(group))
        finish_writes(keep=0)
    return drawn
