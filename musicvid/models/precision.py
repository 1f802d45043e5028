"""Which dtype each model runs in: `--precision auto|float32|float16|bfloat16`, resolved once per run for
its device, and the rules of the models that cannot run in what was asked.

auto is what the device runs best: half precision on CUDA (float16; LTX-Video and the flow-matching picture
families, Z-Image and FLUX.2 klein, bfloat16), float32 elsewhere.
A precision asked for holds for every model that can run in it:
- SDXL's VAE overflows in float16 (its config says force_upcast): it decodes in float32 there;
- LTX-Video's T5 overflows in float16: the video models (LTX-Video, LTX-2 and Wan, published in bfloat16) run in
  bfloat16 instead;
- Z-Image and FLUX.2 klein are published in bfloat16 and their Qwen3 text encoder is trained in it: they run in
  bfloat16 where any half precision is asked;
- Demucs is published and separates in float32 (its spectrograms need the range);
- openai-whisper runs in half precision on CUDA alone (float16 whichever half was asked: its decoding knows
  no other), in float32 elsewhere; its LayerNorms stay float32, as its own code computes them;
- an upscaler that spandrel says cannot run in half precision stays float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from musicvid.models.readback import dtype_text
from musicvid.settings.presets import FLOW_FAMILIES, PRECISIONS

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
HALF = (torch.float16, torch.bfloat16)
HALF_VARIANT = "fp16"  # the name diffusers' save_pretrained(variant=...) gives half-size weights, as hubs keep them


@dataclass(frozen=True)
class Precision:
    """A run's precision resolved for its device: the dtype of each kind of model."""

    asked: str  # one of PRECISIONS
    device_type: str  # "cuda", "mps", "cpu"

    @classmethod
    def resolve(cls, precision: str, device: torch.device) -> Precision:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        return cls(precision, device.type)

    @property
    def compute(self) -> torch.dtype:
        """What the drawing models and ViPE run in."""
        if self.asked == "auto":
            return torch.float16 if self.device_type == "cuda" else torch.float32
        return DTYPES[self.asked]

    def vae(self, force_upcast: bool) -> torch.dtype:
        """A VAE's: float32 where its config says it overflows in float16."""
        return torch.float32 if force_upcast and self.compute == torch.float16 else self.compute

    def drawing(self, family: str) -> torch.dtype:
        """A picture family's (FAMILIES): Stable Diffusion's `compute`, the flow-matching families' bfloat16 where
        half precision is asked, as LTX-Video's (`video`)."""
        return self.video if family in FLOW_FAMILIES else self.compute

    @property
    def video(self) -> torch.dtype:
        """LTX-Video's: bfloat16 where half precision is asked (its T5 overflows in float16)."""
        if self.asked == "auto":
            return torch.bfloat16 if self.device_type == "cuda" else torch.float32
        return torch.bfloat16 if self.compute in HALF else torch.float32

    @property
    def asr(self) -> torch.dtype:
        """openai-whisper's: float16 on CUDA unless float32 is asked, else float32."""
        return torch.float16 if self.device_type == "cuda" and self.compute in HALF else torch.float32

    @property
    def asr_compute_type(self) -> str:
        """faster-whisper's (CTranslate2's compute_type): its int8 on a CPU unless a precision is asked; a
        half precision the CPU has no kernels for (float16) runs in float32 there."""
        if self.device_type == "cuda":
            return dtype_text(self.compute)
        if self.asked == "auto":
            return "int8"
        return "float32" if self.compute == torch.float16 else dtype_text(self.compute)

    separator = torch.float32

    def upscaler(self, supports_half: bool, supports_bfloat16: bool) -> torch.dtype:
        supported = {torch.float16: supports_half, torch.bfloat16: supports_bfloat16}
        return self.compute if supported.get(self.compute, True) else torch.float32

    @property
    def weights_variant(self) -> str | None:
        """Which weight files to fetch: the half-size fp16 ones in half precision, where a repository has them
        (cast on loading to the dtype asked)."""
        return HALF_VARIANT if self.compute in HALF else None


def half_whisper(model: torch.nn.Module) -> torch.nn.Module:
    """openai-whisper in float16 with its LayerNorms in float32: its LayerNorm computes in float32 and
    casts back, and torch has no LayerNorm of float32 inputs with float16 weights."""
    model.half()
    for module in model.modules():
        if isinstance(module, torch.nn.LayerNorm):
            module.float()
    return model
