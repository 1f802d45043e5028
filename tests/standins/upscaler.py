"""The learned upscalers, as their repositories hold them:

- ``2kpr/Real-ESRGAN``: RealESRGAN_x4plus.pth, the file xinntao/Real-ESRGAN publishes on GitHub: a
  pickled dict ``{"params_ema": state}`` of basicsr's RRDBNet (conv_first, body.N.rdbM.convK,
  conv_body, conv_up1, conv_up2, conv_hr, conv_last; 64 features, 23 blocks, growth 32), float32.
- ``ai-forever/Real-ESRGAN``: realesr-general-x4v3.pth (--fast's), as xinntao/Real-ESRGAN publishes it (release
  v0.2.5.0): a pickled dict ``{"params": state}`` of SRVGGNetCompact, ``body.N`` in order: a convolution from RGB,
  then a PReLU (one weight a feature) after it and after each of 32 convolutions, and a last convolution to
  3 × 16 channels that a pixel shuffle makes 4 times larger; 64 features, float32."""

from __future__ import annotations

import torch

from musicvid.settings.presets import REAL_ESRGAN, REAL_ESRGAN_FAST
from tests.standins.hub import pickled


def realesrgan_files(features: int = 8, blocks: int = 1, growth: int = 32) -> dict[str, bytes]:
    """basicsr's RRDBNet ×4 under its own names, cut to `blocks` blocks of `features` features (spandrel
    reads both from the weights; the growth of 32 it assumes)."""
    generator = torch.Generator().manual_seed(4)
    state = {}

    def conv(name: str, into: int, out: int) -> None:
        state[f"{name}.weight"] = torch.randn(out, into, 3, 3, generator=generator) * 0.05
        state[f"{name}.bias"] = torch.zeros(out)

    conv("conv_first", 3, features)
    for block in range(blocks):
        for dense in (1, 2, 3):
            for k in range(1, 6):
                conv(f"body.{block}.rdb{dense}.conv{k}", features + (k - 1) * growth, growth if k < 5 else features)
    for name in ("conv_body", "conv_up1", "conv_up2", "conv_hr"):
        conv(name, features, features)
    conv("conv_last", features, 3)
    return {REAL_ESRGAN.rpartition("/")[2]: pickled({"params_ema": state})}


def realesrgan_general_files(features: int = 8, convs: int = 2) -> dict[str, bytes]:
    """SRVGGNetCompact ×4 under its own names, cut to `convs` inner convolutions of `features` features (spandrel
    reads both, and the scale, from the weights)."""
    generator = torch.Generator().manual_seed(5)
    shapes = [(features, 3), *[(features, features)] * convs, (3 * 4 * 4, features)]
    state = {}
    for index, (out, into) in enumerate(shapes):
        state[f"body.{2 * index}.weight"] = torch.randn(out, into, 3, 3, generator=generator) * 0.05
        state[f"body.{2 * index}.bias"] = torch.zeros(out)
        if index < len(shapes) - 1:  # (PReLU's slope per feature)
            state[f"body.{2 * index + 1}.weight"] = torch.full((features,), 0.25)
    return {REAL_ESRGAN_FAST.rpartition("/")[2]: pickled({"params": state})}
