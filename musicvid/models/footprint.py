"""What each model role holds on the device, in GB, counted from its published configs before anything loads
(musicvid.models.sizes): the weights of the drawing pipeline by what runs together, Whisper's dtype, the upscaler's
network. The registry makes room by these (musicvid.models.registry); the memory plan counts its stages' weights
with them (musicvid.memory)."""

from __future__ import annotations

from functools import cache

import torch

from musicvid.models.drawing import Drawing
from musicvid.models.families import diffusion_family
from musicvid.models.precision import Precision
from musicvid.models.sizes import Unsized, Weights, adapter_parameters, parts, weights
from musicvid.settings.presets import AUTO_UPSCALER, FLOW_FAMILIES, IN_CONTEXT_REFERENCES, LANCZOS, ModelSet

# What a budget keeps aside: CUDA's context where a card's size is given, and the allocator's rounding and
# cuDNN's and cuBLAS's workspaces (an allowance, not measured: no GPU was lent to this work)
RESERVE_GB = 0.5


def asr_dtype(models: ModelSet, precision: Precision) -> torch.dtype:
    """Whisper's weights' dtype: openai-whisper's, or CTranslate2's compute type (faster-whisper)."""
    if models.asr_backend != "faster-whisper":
        return precision.asr
    return {"int8": torch.int8, "float16": torch.float16, "bfloat16": torch.bfloat16}.get(
        precision.asr_compute_type, torch.float32
    )


# The registry's roles of the upscaler, by whether the render is --fast: auto takes another network with --fast
UPSCALER_ROLES = {False: "upscaler", True: "fast_upscaler"}


def upscaler_name(models: ModelSet, fast: bool = False) -> str | None:
    """The network of --upscaler on a GPU (auto's: with --fast (`fast`), its fast one), None for Lanczos (no model)."""
    auto = models.fast_upscaler if fast else models.auto_upscaler
    name = auto if models.upscaler == AUTO_UPSCALER else models.upscaler
    return None if name == LANCZOS else name


def drawing_weights(models: ModelSet, precision: Precision, fast: bool, reference: bool) -> dict[str, tuple]:
    """The weights of the drawing pipeline by what runs together: its text encoders (and IP-Adapter's image
    encoder, with `reference`), its denoiser (a UNet and the adapter's layers in it, or a flow-matching family's
    transformer) and its VAE (TAESD, with --fast)."""
    name, family = models.diffusion, diffusion_family(models.diffusion)
    dtype = precision.drawing(family)
    vae_dtype = dtype if family in FLOW_FAMILIES else precision.vae(family == "sdxl")
    pipeline = weights("diffusion", name, lambda part: vae_dtype if part == "vae" else dtype)
    by_part = {w.part: w for w in pipeline}
    texts = tuple(w for w in pipeline if w.part.startswith("text_encoder"))
    denoiser = (by_part["transformer" if family in FLOW_FAMILIES else "unet"],)
    if reference and family not in IN_CONTEXT_REFERENCES:  # (klein reads the picture itself: denoiser_pass)
        width = parts("image_encoder", models.ip_adapter)["image_encoder"].config.projection_dim
        layers = adapter_parameters(parts("diffusion", name)["unet"], width)
        denoiser += (Weights("ip_adapter", models.ip_adapter, layers, 0, dtype),)
        texts += weights("image_encoder", models.ip_adapter, lambda part: dtype)
    vae = weights("fast_decoder", models.fast_decoder, lambda part: dtype) if fast else (by_part["vae"],)
    return {"texts": texts, "denoiser": denoiser, "vae": vae}


@cache
def role_weights_gb(models: ModelSet, role: str | Drawing, precision: Precision) -> float:
    """The weights (GB) `role` holds (a Drawing: its pipeline); 0 for a model the plan cannot size."""
    try:
        if isinstance(role, Drawing):
            found = [w for ws in drawing_weights(models, precision, role.fast, role.reference).values() for w in ws]
        elif role in UPSCALER_ROLES.values():
            name = upscaler_name(models, role == UPSCALER_ROLES[True])
            found = weights("upscaler", name, lambda part: precision.upscaler(True, True)) if name else ()
        else:
            kind, name, dtype = {
                "asr": ("asr", models.asr, asr_dtype(models, precision)),
                "vipe": ("vipe", models.vipe, precision.compute),
                "separator": ("separator", models.separator, precision.separator),
                "video": ("video", models.video, precision.video),
                "scorer": ("scorer", models.scorer, precision.compute),
            }[role]
            found = weights(kind, name, lambda part: dtype)
    except (Unsized, KeyError):
        return 0.0
    return sum(w.weights_gb for w in found)
