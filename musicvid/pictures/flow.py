"""The flow-matching families' pictures (Z-Image-Turbo, FLUX.2 klein): their prompts encoded, the shape of their
noise, one batched call of their pipeline and the decoding of its latents. What a Stable Diffusion pipeline does
the same with its own calls is in musicvid.pictures.conditioning and musicvid.pictures.denoise.

A pinned picture's noise is its latent taken back up the sampler's noise levels (`invert`).

A prompt is what the pipeline makes of it, a matrix of token rows: FLUX.2 klein's always 512 rows (its text
encoder reads the prompt padded to 512, and the transformer reads every row), Z-Image's one row per token of
the prompt in its chat template (the pipeline drops the padding). A morph slerps two prompts at one length
(`common_length`): the shorter is padded as Z-Image's transformer pads a caption, by repeating its last row.
(docs/frames.md, "The flow-matching families")
"""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image

from musicvid.models.internals import flow_sigmas, flux2_patches, flux2_text_positions, flux2_tokens, flux2_untokens
from musicvid.pictures.switches import compute_device, family_of
from musicvid.settings.presets import IN_CONTEXT_REFERENCES, PROMPT_BATCH
from musicvid.settings.render import RenderSettings


def is_klein(pipe) -> bool:
    return family_of(pipe) == "klein"


def takes_references(pipe) -> bool:
    """Whether the pipeline reads reference pictures itself, in context (FLUX.2 klein's `image`)."""
    return family_of(pipe) in IN_CONTEXT_REFERENCES


def morph_reference(start: torch.Tensor | None, end: torch.Tensor | None, t: float) -> torch.Tensor | None:
    """The reference picture along a morph at t: one picture where both scenes have it, the two blended pixel by
    pixel, (1 − t)·start + t·end, where they differ; where one scene has none, the nearer end's (klein reads a
    picture or none: there is no half of one)."""
    if start is None or end is None:
        return start if t < 0.5 else end
    return start if torch.equal(start, end) else (1 - t) * start + t * end


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
    # (Z-Image's encode_prompt would encode the negative prompts too; klein's has no such switch)
    unguided = {} if is_klein(pipe) else {"do_classifier_free_guidance": False}
    embeds, _ = pipe.encode_prompt(prompts, device=device, **unguided)
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


def call(pipe, text, negative, noise: torch.Tensor, settings, references=None, **extra) -> torch.Tensor:
    """One batched call: the batch's latents, as the pipeline leaves them before decoding. `text` and `negative`:
    each picture's prompt rows and the negative prompt's, on the pipeline's device; `references`: each picture's
    reference pixels (klein), or None. klein's pipeline gives every picture of a call the same references, so
    pictures whose references differ are drawn in calls of their own."""
    references = references or [None] * len(text)
    if all(r is None for r in references) or all(r is not None and torch.equal(r, references[0]) for r in references):
        return drawn(pipe, text, negative, noise, settings, references[0], **extra)
    parts = [
        drawn(pipe, text[i : i + 1], negative[i : i + 1], noise[i : i + 1], settings, references[i], **extra)
        for i in range(len(text))
    ]
    return torch.cat(parts)


def drawn(pipe, text: list[torch.Tensor], negative: list[torch.Tensor], noise, settings, reference, **extra):
    negatives = {}
    if guides(pipe, settings):
        negatives["negative_prompt_embeds"] = torch.stack(negative) if is_klein(pipe) else negative
    if reference is not None:  # klein's in-context reference picture
        extra["image"] = [Image.fromarray(reference.round().clamp(0, 255).to(torch.uint8).numpy())]
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


def velocity(pipe, latents: torch.Tensor, text: torch.Tensor, sigma: float) -> torch.Tensor:
    """d latents / d sigma at noise level `sigma`, as the pipeline's sampler steps by it (x at the next level is
    x + (next − sigma) · velocity): the transformer's prediction under `text`, without guidance (Z-Image's negated:
    its transformer predicts toward the picture)."""
    if is_klein(pipe):
        tokens, positions = flux2_tokens(pipe, latents)
        predicted = pipe.transformer(
            hidden_states=tokens,
            timestep=torch.full((1,), sigma, device=latents.device, dtype=latents.dtype),
            guidance=None,
            encoder_hidden_states=text[None],
            txt_ids=flux2_text_positions(pipe, text[None]),
            img_ids=positions,
            return_dict=False,
        )[0]
        return flux2_untokens(pipe, predicted, positions, *latents.shape[-2:])
    timestep = torch.full((1,), 1.0 - sigma, device=latents.device, dtype=latents.dtype)
    predicted = pipe.transformer([latents[0][:, None]], timestep, [text], return_dict=False)[0]
    return -predicted[0][:, 0][None]


def sampler_latents(pipe, latents: torch.Tensor) -> torch.Tensor:
    """VAE latents (batch × channels × H/8 × W/8) as the pipeline's sampler holds them (what decode undoes):
    Z-Image's shifted and scaled, klein's in 2 × 2 patches and normalized by its VAE's batch norm."""
    latents = latents.float()
    if not is_klein(pipe):
        return (latents - pipe.vae.config.shift_factor) * pipe.vae.config.scaling_factor
    norm = pipe.vae.bn
    latents = flux2_patches(pipe, latents)
    mean, var = (t.view(1, -1, 1, 1).float() for t in (norm.running_mean, norm.running_var))
    return (latents - mean) / torch.sqrt(var + pipe.vae.config.batch_norm_eps)


@torch.inference_mode()
def invert(pipe, picture: np.ndarray, text: torch.Tensor, steps: int) -> torch.Tensor:
    """The noise that the pipeline's `steps` steps under `text` denoise to about `picture` (its VAE's mean)."""
    pixels = torch.from_numpy(np.array(picture)).permute(2, 0, 1)[None].to(compute_device(pipe), pipe.vae.dtype)
    return invert_latents(
        pipe, sampler_latents(pipe, pipe.vae.encode(pixels / 127.5 - 1).latent_dist.mean), text, steps
    )


@torch.inference_mode()
def invert_latents(pipe, latents: torch.Tensor, text: torch.Tensor, steps: int) -> torch.Tensor:
    """The noise (latent_shape) that the pipeline's `steps` Euler steps under `text` denoise to about `latents`
    (1 × latent_shape, as its sampler holds them): taken up the same noise levels from σ = 0 to 1,
    x(σ_hi) = x(σ_lo) + (σ_hi − σ_lo) · velocity(x(σ_lo), σ_lo)."""
    dtype, device = pipe.transformer.dtype, latents.device
    tokens = latents.shape[-2] * latents.shape[-1] // (1 if is_klein(pipe) else 4)  # (Z-Image: 2 × 2 patches)
    sigmas = flow_sigmas(pipe, is_klein(pipe), steps, tokens, device)
    text = text.to(device, dtype)
    for low, high in zip(sigmas[1:].flip(0).tolist(), sigmas[:-1].flip(0).tolist()):
        latents = latents + (high - low) * velocity(pipe, latents.to(dtype), text, low).float()
    return latents[0].cpu()
