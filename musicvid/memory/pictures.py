"""The memory plan's pictures stage (musicvid.memory.plan): the drawing pipeline's weights by the passes that run
together, and its ways of drawing, cheapest first.

Stable Diffusion and SDXL run their text encoders (with --reference, IP-Adapter's image encoder), their UNet (with
the adapter's layers in it) and their VAE (TAESD with --fast). The flow-matching families (Z-Image, FLUX.2 klein)
run Qwen3-4B, their transformer and their VAE, all in bfloat16 (Precision.drawing). Their prompts are encoded
once a render, PROMPT_BATCH at a time (musicvid.pictures.flow), before any picture is drawn: the text encoder's
pass runs alone, and where the stage is resident the 8 GB of Qwen3 sit on the card beside the transformer for
nothing. The model-offload rung is what takes them off: diffusers' model offload runs the pipelines' models in
the order text_encoder->transformer->vae, and the transformer's first call sends the text encoder back to the
CPU, so the card holds one of the three at a time, and the VAE once it has decoded (ladder.Option.during). A
pipeline the plan offloads is loaded so, on the CPU (musicvid.models.drawing.load_drawing).
"""

from __future__ import annotations

from typing import Callable, Iterator

import torch

from musicvid.memory import activations as act
from musicvid.memory.ladder import Option, Pass, modes_from, switches
from musicvid.models.families import diffusion_family
from musicvid.models.footprint import drawing_weights
from musicvid.models.precision import Precision
from musicvid.models.sizes import weights
from musicvid.settings.presets import FLOW_FAMILIES, IN_CONTEXT_REFERENCES, PROMPT_BATCH, ModelSet
from musicvid.settings.render import MAX_BATCH, RenderSettings


def twins(family: str, guidance: float) -> int:
    """How many latents a picture is in the denoiser's pass: two where the pipeline batches guidance's unguided
    twin beside it (Stable Diffusion above 1, Z-Image above 0), else one (FLUX.2 klein 4B is distilled and never
    guides; a klein that guides runs its two calls in turn, each at the pictures' batch)."""
    if family in FLOW_FAMILIES:
        return 2 if family == "zimage" and guidance > 0 else 1
    return 2 if guidance > 1 else 1


def denoiser_pass(
    family: str, name: str, settings: RenderSettings, dtype: torch.dtype, references: bool
) -> Callable[[int, bool], float]:
    """The denoiser's pass (GB) on n latents, its attention sliced or not (a transformer's never is: refused);
    klein's, where pictures are drawn with `references`, with one beside each (as many tokens again: the picture is
    covered to the drawn size)."""
    size = tuple(settings.size)
    if family in FLOW_FAMILIES:
        beside = int(references and family in IN_CONTEXT_REFERENCES)
        return lambda n, sliced: act.transformer_pass_gb(name, dtype, size, n, beside)
    return lambda n, sliced: act.unet_pass_gb(name, dtype, size, n, sliced)


# Without --batch-size, the plan takes the most pictures that fit, up to AUTO_PIXELS of them at once: on an H100,
# SD 1.5 at 512² drew 5.24 frames/s 16 at a time against 4.16 at 8 (benchmarks/results/gpu-nvidia-h100-80gb-hbm3-
# 2026-11-26.json); as many pixels at other sizes keep a batch's work about the same (4 at 1024²).
AUTO_PIXELS = 16 * 512 * 512


def most_pictures(settings: RenderSettings) -> int:
    """The most pictures the plan may denoise together: --batch-size, else AUTO_PIXELS' worth."""
    return settings.batch_size or max(1, min(MAX_BATCH, AUTO_PIXELS // (settings.width * settings.height)))


def pictures_options(
    models: ModelSet,
    settings: RenderSettings,
    precision: Precision,
    scored: bool,
    keyframes_only: bool = False,
    references: bool = False,
) -> Iterator[Option]:
    """The keyframes and the morphs, `--batch-size` at a time (morphs: none in a preview or `keyframes_only`;
    with --transitions video, those too long for the video model's clips): the ladder of
    musicvid.memory.plan's docstring; `scored`: with the scorer held beside them; `references`: whether a scene of
    the storyboard names its own reference picture (--reference counts without it)."""
    name, size, family = models.diffusion, tuple(settings.size), diffusion_family(models.diffusion)
    # a scene's own reference loads what --reference does (musicvid.pictures.grouping.uses_reference)
    references = references or settings.reference is not None
    by_pass = drawing_weights(models, precision, settings.fast, references)
    texts, denoiser, vae = by_pass["texts"], by_pass["denoiser"], by_pass["vae"]
    dtype = denoiser[0].dtype
    # the keyframes' scorer is loaded beside the pipeline where it loads (musicvid.pictures.keyframe_candidates), on
    # the card whatever the pipeline offloads; its passes, at 224² a picture, are small beside the denoiser's
    scorer = weights("scorer", models.scorer, lambda part: precision.compute) if scored else ()
    decoder_kind, decoder = ("fast_decoder", models.fast_decoder) if settings.fast else ("diffusion", name)
    # (Stable Diffusion's CLIP reads 77 tokens: its pass is small beside the UNet's)
    encode = act.prompts_pass_gb(name, dtype, PROMPT_BATCH) if family in FLOW_FAMILIES else 0.0
    denoise_gb, guided = denoiser_pass(family, name, settings, dtype, references), twins(family, settings.guidance)
    # (with --transitions video too: a morph longer than the video model's longest clip is slerped)
    morphs = not (settings.preview or keyframes_only)
    most = most_pictures(settings)  # (the keyframes are drawn in batches of it too)
    floor = settings.offloads_asked()

    def option(mode: str | None, pictures: int, sliced: bool, tiled: bool) -> Option:
        chosen = switches(floor, mode, "vae-slicing" if sliced else None, "vae-tiling" if tiled else None)
        attention = "attention-slicing" in chosen and not references  # (pipeline_for's rule: not with an adapter)
        denoise = act.linear(lambda n: denoise_gb(n, attention), guided * pictures)
        decoded = 1 if "vae-slicing" in chosen else pictures
        decode = act.linear(lambda n: act.decode_gb(decoder_kind, decoder, vae[0].dtype, size, n, tiled), decoded)
        batches = (("keyframes", pictures),) + ((("morphs", pictures),) if morphs else ()) + (("vae_decode", decoded),)
        passes = (Pass(texts, encode), Pass(denoiser, denoise), Pass(vae, decode))
        # under model offload the VAE stays on the card once it has decoded: the render decodes after the
        # pipeline's call (whose end would send every model back) and no model runs after the VAE to send it
        waiting = vae if "model-offload" in chosen else ()
        return Option(batches, chosen, passes, held=scorer + waiting)

    for mode in modes_from(floor):
        yield option(mode, most, "vae-slicing" in floor, False)
        for tiled in (False, True):
            for pictures in range(most, 0, -1):
                yield option(mode, pictures, True, tiled)
