"""What an upscaler restores at ×4, against a truth the drawn pictures do not have: scikit-image's photographs made
4 times smaller (Pillow's bicubic) and upscaled again, compared with the photographs.

- PSNR (dB): mean over the photographs of 10·log10(255² / MSE(upscaled, photograph)). A network trained as a GAN
  invents sharp detail, which PSNR counts as error, so Lanczos's figure is the yardstick, not a floor.
- detail share: mean over the photographs of |∇²Y(upscaled)| / |∇²Y(photograph)|, Y the luma in [0, 1] and |∇²·|
  the mean absolute Laplacian: how much of the photograph's fine detail the upscale has (the truth's is 1; Lanczos,
  which invents none, about 0.15). More is sharper, not truer: PSNR beside it says whether the detail is the
  photograph's.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

Upscale = Callable[[np.ndarray], np.ndarray]  # a uint8 picture (height × width × 3) to one 4 times larger


def restored(upscale: Upscale) -> dict[str, float]:
    """`upscale`'s PSNR and detail share (module doc) on the photographs."""
    from PIL import Image
    from skimage import data
    from skimage.metrics import peak_signal_noise_ratio

    psnr, detail = [], []
    for truth in (data.astronaut(), data.coffee(), data.chelsea()):
        truth = truth[: truth.shape[0] // 4 * 4, : truth.shape[1] // 4 * 4]
        small = np.array(Image.fromarray(truth).resize((truth.shape[1] // 4, truth.shape[0] // 4), Image.BICUBIC))
        upscaled = upscale(small)
        psnr.append(peak_signal_noise_ratio(truth, upscaled))
        detail.append(fine_detail(upscaled) / fine_detail(truth))
    return {"psnr_db": round(float(np.mean(psnr)), 2), "detail_share": round(float(np.mean(detail)), 3)}


def fine_detail(picture: np.ndarray) -> float:
    """The mean absolute Laplacian of `picture`'s luma (Rec. 601, in [0, 1])."""
    from skimage.color import rgb2gray
    from skimage.filters import laplace

    return float(np.mean(np.abs(laplace(rgb2gray(picture)))))


def lanczos_4x(small: np.ndarray) -> np.ndarray:
    from PIL import Image

    return np.array(Image.fromarray(small).resize((small.shape[1] * 4, small.shape[0] * 4), Image.LANCZOS))


def network_4x(model) -> Upscale:
    """A spandrel upscaler as `restored` takes it, in its dtype on its device."""

    def upscale(small: np.ndarray) -> np.ndarray:
        pixels = torch.from_numpy(small).permute(2, 0, 1)[None].to(model.device, model.dtype) / 255
        with torch.inference_mode():
            return (model(pixels)[0].clamp(0, 1).float().permute(1, 2, 0) * 255).round().byte().cpu().numpy()

    return upscale
