"""Upscale: each frame to the video's size (--resolution) by a learned upscaler.

A learned upscaler (Real-ESRGAN, loaded by spandrel: musicvid.models.loading) multiplies the picture's size by
its scale (4 for RealESRGAN_x4plus) and draws the detail a bigger picture needs; Lanczos then brings
the result to cover the video's size, keeping the middle: a drawn 704x384 (1.83:1) gives up 3% at its
sides to become 16:9. Without a model, ffmpeg scales in the encoder's filter graph (musicvid.delivery.mux).
The model sees one frame at a time: the last layers of a ×4 pass over 704x384 hold 64 channels of
2816x1536 (1.1 GB in float32).
"""

from __future__ import annotations

import time

import numpy as np
import torch
from PIL import Image


def cover(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """`frame` scaled by Lanczos to cover width × height `size`, centred, in one resampling."""
    height, width = frame.shape[:2]
    if (width, height) == tuple(size):
        return frame
    scale = max(size[0] / width, size[1] / height)
    window_w, window_h = size[0] / scale, size[1] / scale
    left, top = (width - window_w) / 2, (height - window_h) / 2
    box = (left, top, left + window_w, top + window_h)
    return np.asarray(Image.fromarray(frame).resize(tuple(size), Image.Resampling.LANCZOS, box=box))


class Upscaler:
    """Frames of any size in, frames of `size` out; `model` a spandrel ImageModelDescriptor."""

    def __init__(self, model, size: tuple[int, int]):
        self.model, self.size = model, tuple(size)
        self.frames, self.seconds = 0, 0.0

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        start = time.perf_counter()
        frame = cover(self.learned(frame), self.size)
        self.frames, self.seconds = self.frames + 1, self.seconds + time.perf_counter() - start
        return frame

    def cost(self) -> dict:
        """What upscaling cost in this run (part of the mux's time)."""
        per_frame = self.seconds / self.frames if self.frames else 0.0
        return {"frames": self.frames, "seconds": round(self.seconds, 4), "seconds_per_frame": round(per_frame, 4)}

    @torch.inference_mode()
    def learned(self, frame: np.ndarray) -> np.ndarray:
        pixels = torch.from_numpy(np.array(frame)).to(self.model.device)  # a copy: frames may be read-only
        picture = pixels.permute(2, 0, 1)[None].to(self.model.dtype) / 255
        bigger = self.model(picture)  # clamped to [0, 1] by spandrel
        return (bigger[0].permute(1, 2, 0).float() * 255).round().to(torch.uint8).cpu().numpy()
