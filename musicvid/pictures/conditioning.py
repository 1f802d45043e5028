"""What each picture is denoised from: its scenes' prompts encoded once, their seeds' noise (a pinned
picture's by DDIM inversion), their reference pictures' embeddings, slerped (the text with Chunked
Similarity Alignment) along each morph. (docs/frames.md)"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from musicvid.models.internals import execution_device, reads_hidden_states, uncompiled
from musicvid.pictures import flow
from musicvid.pictures.camera import cover
from musicvid.pictures.given import given_picture
from musicvid.pictures.grouping import Picture, reference_of
from musicvid.pictures.slerp import align, slerp, soft_aligned
from musicvid.pictures.style import fitted
from musicvid.pictures.switches import compute_device, denoiser, has_reference_adapter, is_flow, is_xl
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Storyboard


@dataclass(frozen=True)
class Conditioning:
    """What one picture is denoised from."""

    text: torch.Tensor  # the text embedding, tokens × width (SD's 77)
    pooled: torch.Tensor | None  # with SDXL: the pooled text embedding
    noise: torch.Tensor  # the initial latent
    step_noise: torch.Tensor | None  # with --fast: the noise added after each step but the last
    image: torch.Tensor | None  # with a reference adapter: the reference picture's embedding (zeros: none)
    reference: torch.Tensor | None = None  # with FLUX.2 klein: the reference picture's pixels (none: None)


class SceneInputs:
    """Each scene's prompt embedding (encoded once) and noise, and each morph's aligned target."""

    def __init__(self, pipe, storyboard: Storyboard, scenes: list[int], settings: RenderSettings):
        self.pipe = pipe
        self.settings = settings
        tokenizer = None if is_flow(pipe) else pipe.tokenizer  # (a flow's encoder reads hundreds of tokens)
        prompts = fitted([storyboard.scenes[i].prompt for i in scenes], settings.style, tokenizer)
        device = compute_device(pipe)
        with torch.inference_mode():
            embeds, pooled = encode_text(pipe, prompts, device)
            self.negative, self.negative_pooled = encode_text(pipe, [settings.negative_prompt], device)
        if pooled is not None and not settings.negative_prompt.strip() and pipe.config.force_zeros_for_empty_prompt:
            # what SDXL's pipeline makes of no negative prompt (and what SDXL was trained to read so)
            self.negative, self.negative_pooled = (
                torch.zeros_like(self.negative),
                torch.zeros_like(self.negative_pooled),
            )
        self.text = dict(zip(scenes, embeds))
        self.pooled = {} if pooled is None else dict(zip(scenes, pooled))
        factor = pipe.vae_scale_factor
        if is_flow(pipe):
            shape = flow.latent_shape(pipe, settings)
        else:
            shape = (pipe.unet.config.in_channels, settings.height // factor, settings.width // factor)
        # Noise comes from a CPU generator, so a seed gives the same picture on every device. With --fast
        # the same generator then gives the noise of each step (the initial latent stays the same).
        self.noise, self.step_noise = {}, {}
        for i in scenes:
            generator = torch.Generator("cpu").manual_seed(storyboard.scenes[i].seed)
            self.noise[i] = torch.randn(shape, generator=generator)
            if settings.fast:
                self.step_noise[i] = torch.randn((settings.steps - 1, *shape), generator=generator)
        # A pinned scene's keyframe is its picture; its noise is the picture's latent (VAE encoder),
        # run back up the sampler's steps by DDIM inversion under its prompt, so that its morphs start
        # from what denoises to (about) the picture and are computed as any other scene's.
        self.pinned = {
            i: pinned_picture(Path(storyboard.scenes[i].picture), settings)
            for i in scenes
            if storyboard.scenes[i].picture
        }
        # With the reference adapter loaded, each scene's reference picture by its CLIP image embedding
        # (encoded once per picture); a scene without one has the adapter's "no picture" (no_picture).
        self.image: dict[int, torch.Tensor] = {}
        self.no_image: torch.Tensor | None = None
        if has_reference_adapter(pipe):
            references = {i: reference_of(storyboard.scenes[i], settings) for i in scenes}
            embedded = {path: embed_picture(pipe, path) for path in set(references.values()) if path}
            self.no_image = no_picture(pipe)
            self.image = {i: embedded[path] if path else self.no_image for i, path in references.items()}
        # FLUX.2 klein reads a reference picture itself, as pixels (flow.call): each scene's, covered to the drawn size
        self.reference: dict[int, torch.Tensor | None] = {}
        if flow.takes_references(pipe):
            references = {i: reference_of(storyboard.scenes[i], settings) for i in scenes}
            read = {path: reference_pixels(path, settings) for path in set(references.values()) if path}
            self.reference = {i: read[path] if path else None for i, path in references.items()}
        for i, picture in self.pinned.items():  # a UNet's by DDIM, a flow-matching transformer's by its Euler steps
            if not is_flow(pipe):
                self.noise[i] = invert(pipe, picture, self.condition(i), settings.steps)
            else:
                self.noise[i] = flow.invert(pipe, picture, self.text[i], settings.steps)
        self._aligned: dict[tuple[int, int], torch.Tensor] = {}

    def morph_text(self, scene: int, target: int, t: float) -> torch.Tensor:
        """The text along the morph from `scene` to `target`, at t: slerp, with the target aligned (CSA) where
        --align asks. A UNet reads the text through cross-attention alone, so the aligned target is the target
        itself (docs/frames.md); the flow-matching families read each row's position, so there the alignment is
        soft and ends on the target as it is (slerp.soft_aligned). Prompts of two lengths (Z-Image's) are
        slerped at the longer one (flow.common_length)."""
        start, end = self.text[scene], self.text[target]
        if len(start) != len(end):
            length = max(len(start), len(end))
            start, end = flow.common_length(start, length), flow.common_length(end, length)
        if not self.settings.align:
            return slerp(start, end, t)
        if (scene, target) not in self._aligned:
            self._aligned[scene, target] = align(start, end, self.settings.align_chunk)
        if is_flow(self.pipe):
            return soft_aligned(start, self._aligned[scene, target], end, t)
        return slerp(start, self._aligned[scene, target], t)

    def condition(self, scene: int) -> Conditioning:
        """A scene's keyframe's conditioning."""
        return Conditioning(
            self.text[scene],
            self.pooled.get(scene),
            self.noise[scene],
            self.step_noise.get(scene),
            self.image.get(scene),
            self.reference.get(scene),
        )

    def conditioning(self, picture: Picture) -> Conditioning:
        scene, target, t = picture.scene, picture.target, picture.t
        if target is None:
            return self.condition(scene)
        step_noise = None
        if self.step_noise:  # each step's noise slerped on its own, as the initial latent
            step_noise = torch.empty_like(self.step_noise[scene])  # (none at all in one step)
            for step, (a, b) in enumerate(zip(self.step_noise[scene], self.step_noise[target])):
                step_noise[step] = slerp(a, b, t)
        return Conditioning(
            self.morph_text(scene, target, t),
            slerp(self.pooled[scene], self.pooled[target], t) if self.pooled else None,  # one vector: no CSA
            slerp(self.noise[scene], self.noise[target], t),
            step_noise,
            slerp(self.image[scene], self.image[target], t) if self.image else None,
            flow.morph_reference(self.reference[scene], self.reference[target], t) if self.reference else None,
        )


def encode_text(
    pipe, prompts: list[str], device: torch.device
) -> tuple[torch.Tensor | list[torch.Tensor], torch.Tensor | None]:
    """Each prompt's text embedding (77 × width: with SDXL both encoders' side by side, 77 × 2048; a flow-matching
    family's as its pipeline makes it, musicvid.pictures.flow) and with SDXL its pooled embedding, in float32 on
    the CPU."""
    if is_flow(pipe):
        return flow.encode_prompts(pipe, prompts, device), None
    if not is_xl(pipe):
        embeds, _ = pipe.encode_prompt(prompts, device, 1, False)
        return embeds.float().cpu(), None
    embeds, _, pooled, _ = pipe.encode_prompt(
        prompts, device=device, num_images_per_prompt=1, do_classifier_free_guidance=False
    )
    return embeds.float().cpu(), pooled.float().cpu()


def covering_picture(path: Path, what: str, settings: RenderSettings) -> np.ndarray:
    """A picture a person gives (`what`: pinned, reference) as RGB, scaled to cover the drawn size and centred."""
    return cover(np.asarray(given_picture(path, what)), settings.size)


def pinned_picture(path: Path, settings: RenderSettings) -> np.ndarray:
    """A pinned picture as the scene's keyframe."""
    return covering_picture(path, "pinned", settings)


def reference_pixels(path: Path, settings: RenderSettings) -> torch.Tensor:
    """A reference picture as FLUX.2 klein takes it here: covered to the drawn size, float pixels."""
    return torch.from_numpy(covering_picture(path, "reference", settings).astype(np.float32))


@torch.inference_mode()
def embed_picture(pipe, path: Path) -> torch.Tensor:
    """A reference picture's CLIP image embedding by the adapter's image encoder (the picture as the encoder's
    processor scales and crops it): the projected embedding, or where the adapter reads them (Plus, full face) the
    hidden states before the last layer, tokens × width, as diffusers' pipelines take them."""
    hidden = reads_hidden_states(pipe)
    embeds, _ = pipe.encode_image(
        given_picture(path, "reference"), compute_device(pipe), 1, output_hidden_states=hidden
    )
    return embeds[0].float().cpu()


@torch.inference_mode()
def no_picture(pipe) -> torch.Tensor:
    """The reference adapter's "no picture" (a scene without one, and guidance's unconditional), as diffusers'
    encode_image makes it: zeros of the projected embedding, or the hidden states of the zero pixels (the processor's
    mean picture)."""
    encoder = pipe.image_encoder
    if not reads_hidden_states(pipe):
        return torch.zeros(encoder.config.projection_dim)
    weight = next(encoder.parameters())
    pixels = torch.zeros(1, 3, encoder.config.image_size, encoder.config.image_size, dtype=weight.dtype)
    return encoder(pixels.to(execution_device(encoder)), output_hidden_states=True).hidden_states[-2][0].float().cpu()


@torch.inference_mode()
def invert(pipe, picture: np.ndarray, condition: Conditioning, steps: int) -> torch.Tensor:
    """The initial noise that DDIM's steps, under the keyframe's `condition` (its text, and with SDXL its
    pooled text and size, with the adapter its reference picture's embedding) and without guidance,
    denoise to about `picture`: its VAE latent taken back up the noise schedule (diffusers'
    DDIMInverseScheduler)."""
    from diffusers import DDIMInverseScheduler

    device, dtype = compute_device(pipe), denoiser(pipe).dtype
    pixels = torch.from_numpy(np.array(picture)).permute(2, 0, 1)[None].to(device, pipe.vae.dtype) / 127.5 - 1
    encoded = pipe.vae.encode(pixels)  # SD's VAE gives a distribution, TAESD (--fast) the latent itself
    latent = (encoded.latent_dist.mean if hasattr(encoded, "latent_dist") else encoded.latents) * (
        pipe.vae.config.scaling_factor
    )
    latent = latent.to(dtype)
    inverse = DDIMInverseScheduler.from_config(pipe.scheduler.config)
    inverse.set_timesteps(steps, device=device)
    extra = {}
    if condition.image is not None:
        extra["image_embeds"] = [condition.image[None, None].to(device, dtype)]
    if condition.pooled is not None:  # SDXL: drawn at its own size, uncropped, as the pipeline conditions it
        height, width = picture.shape[:2]
        extra["text_embeds"] = condition.pooled[None].to(device, dtype)
        extra["time_ids"] = torch.tensor([[height, width, 0, 0, height, width]], device=device, dtype=dtype)
    text = condition.text[None].to(device, dtype)
    # Eager, not compiled: the compiled UNet is traced at the drawing's padded batch (batch_inputs), and
    # one picture at a time would compile it again.
    unet = uncompiled(pipe.unet)
    for timestep in inverse.timesteps:
        noise = unet(latent, timestep, encoder_hidden_states=text, added_cond_kwargs=extra or None).sample
        latent = inverse.step(noise, timestep, latent).prev_sample
    return latent[0].float().cpu()
