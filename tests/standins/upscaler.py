"""The learned upscaler, as its repository holds it:

- ``2kpr/Real-ESRGAN``: RealESRGAN_x4plus.pth, the file xinntao/Real-ESRGAN publishes on GitHub: a
  pickled dict ``{"params_ema": state}`` of basicsr's RRDBNet (conv_first, body.N.rdbM.convK,
  conv_body, conv_up1, conv_up2, conv_hr, conv_last; 64 features, 23 blocks, growth 32), float32."""

from __future__ import annotations

import torch

from musicvid.settings.presets import REAL_ESRGAN
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
