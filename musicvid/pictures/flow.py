"""The flow-matching families' pictures (Z-Image-Turbo, FLUX.2 klein): their prompts encoded, the shape of their
noise, one batched call of their pipeline and the decoding of its latents. What a Stable Diffusion pipeline does
the same with its own calls is in musicvid.pictures.conditioning and musicvid.pictures.denoise.

A prompt is what the pipeline makes of it, a matrix of token rows: FLUX.2 klein's always 512 rows (its text
encoder reads the prompt padded to 512, and the transformer reads every row), Z-Image's one row per token of
the prompt in its chat template (the pipeline drops the padding). A morph slerps two prompts at one length
(`common_length`): the shorter is padded as Z-Image's transformer pads a caption, by repeating its last row.
(docs/frames.md, "The flow-matching families")
"""

from __future__ import annotations

import torch

from musicvid.pictures.switches import family_of
from musicvid.settings.presets import PROMPT_BATCH
from musicvid.settings.render import RenderSettings


def is_klein(pipe) -> bool:
    return family_of(pipe) == "klein"


@torch.inference_mode()
def encode_prompts(pipe, prompts: list[str], device: torch.device) -> list[torch.Tensor]:
    """Each prompt as the pipeline encodes it (tokens × width), in float32 on the CPU, PROMPT_BATCH prompts a pass
    of the text encoder (what the memory plan counts it at)."""
    return [
        rows
        for at in range(0, len(prompts), PROMPT_BATCH)
        for rows in encoded(pipe, prompts[at : at + PROMPT_BATCH], device)
    ]


def encoded(pipe, prompts: list[str], device: torch.device) -> list[torch.Tensor]:
    if is_klein(pipe):
        embeds, _ = pipe.encode_prompt(prompts, device=device)
        return [e.float().cpu() for e in embeds]
    embeds, _ = pipe.encode_prompt(prompts, device=device, do_classifier_free_guidance=False)
    return [e.float().cpu() for e in embeds]


def common_length(rows: torch.Tensor, length: int) -> torch.Tensor:
    """A prompt's rows made `length` long by repeating its last row (as Z-Image's transformer pads a caption to
    its multiple of 32): rows[i] for i < len(rows), rows[-1] after."""
    return torch.cat([rows, rows[-1:].expand(length - len(rows), -1)]) if length > len(rows) else rows


def latent_shape(pipe, settings: RenderSettings) -> tuple[int, int, int]:
    """The noise one picture starts from, as the pipeline takes it: Z-Image's VAE latent (16 × H/8 × W/8), klein's
    in 2 × 2 patches (128 × H/16 × W/16)."""
    factor = pipe.vae_scale_factor * 2  # both draw in 2 × 2 patches of the latent
    height, width = settings.height // factor, settings.width // factor
    if is_klein(pipe):
        return pipe.transformer.config.in_channels, height, width
    return pipe.transformer.config.in_channels, 2 * height, 2 * width


def guides(pipe, settings: RenderSettings) -> bool:
    """Whether the pipeline runs classifier-free guidance at `settings.guidance` (then it takes negative prompts):
    Z-Image above 0; klein above 1 where it is not distilled (a distilled one ignores guidance)."""
    if is_klein(pipe):
        return settings.guidance > 1 and not pipe.config.is_distilled
    return settings.guidance > 0


def call(pipe, text: list[torch.Tensor], negative: list[torch.Tensor], noise: torch.Tensor, settings, **extra):
    """One batched call: the batch's latents, as the pipeline leaves them before decoding. `text` and `negative`:
    each picture's prompt rows and the negative prompt's, on the pipeline's device."""
    negatives = {}
    if guides(pipe, settings):
        negatives["negative_prompt_embeds"] = torch.stack(negative) if is_klein(pipe) else negative
    return pipe(
        prompt_embeds=torch.stack(text) if is_klein(pipe) else text,
        **negatives,
        latents=noise,
        num_inference_steps=settings.steps,
        guidance_scale=settings.guidance,
        height=settings.height,
        width=settings.width,
        output_type="latent",
        **extra,
    ).images


def decode(pipe, latents: torch.Tensor) -> torch.Tensor:
    """The pipeline's latents as pixels in [-1, 1]: Z-Image's scaled and shifted back into its VAE's range (klein's
    pipeline has done so already, undoing its batch norm)."""
    latents = latents.to(pipe.vae.dtype)
    if not is_klein(pipe):
        latents = latents / pipe.vae.config.scaling_factor + pipe.vae.config.shift_factor
    return pipe.vae.decode(latents).sample
