"""Upscale: each frame to the video's size (--resolution) by a learned upscaler.

A learned upscaler (Real-ESRGAN, loaded by spandrel: musicvid.models.loading) multiplies the picture's size by
its scale (4 for RealESRGAN_x4plus) and draws the detail a bigger picture needs; the result is then scaled to
cover the video's size, keeping the middle: a drawn 704x384 (1.83:1) gives up 3% at its sides to become
16:9. That last scaling is done by torch where the network ran (antialiased bicubic), so on a GPU only the
video's frame comes back: done by Pillow on one core it took 125 ms a frame, more than the network's 9.7
TFLOP should take a datacentre GPU (an estimate by FLOP count; benchmarks/delivery.py measures it).
Without a model, ffmpeg scales in the encoder's filter graph (musicvid.delivery.mux).

The network sees UPSCALE_BATCH frames at a time on a GPU (one on the CPU, where a batch gains nothing): the
last layers of a ×4 pass over 704x384 hold 64 channels of 2816x1536, 0.55 GB a frame in float16.
"""

from __future__ import annotations

import itertools
import time
from contextlib import contextmanager
from typing import Iterable, Iterator

import numpy as np
import torch
import torch.nn.functional as F

from musicvid.models.footprint import UPSCALER_ROLES
from musicvid.run import Run
from musicvid.settings.presets import UPSCALE_BATCH


class Upscaler:
    """Frames of any size in, frames of `size` out, `batch` at a time through `model` (a spandrel
    ImageModelDescriptor), scaled first to `input_size` where given (the memory plan's smaller input, whose ×4
    just covers `size`); counts the frames and the seconds spent on them."""

    def __init__(
        self, model, size: tuple[int, int], batch: int | None = None, input_size: tuple[int, int] | None = None
    ):
        self.model, self.size, self.input_size = model, tuple(size), input_size
        on_gpu = model.device.type == "cuda"
        self.batch = batch or (UPSCALE_BATCH if on_gpu else 1)
        # its own CUDA stream: the delivery runs beside the drawing, whose kernels it then need not wait for
        self.stream = torch.cuda.Stream(model.device) if on_gpu else None
        self.frames, self.seconds = 0, 0.0

    def __call__(self, frames: Iterable[np.ndarray]) -> Iterator[np.ndarray]:
        frames = iter(frames)
        while group := list(itertools.islice(frames, self.batch)):
            start = time.perf_counter()
            upscaled = self.learned(np.stack(group))
            self.frames, self.seconds = self.frames + len(group), self.seconds + time.perf_counter() - start
            yield from upscaled

    def cost(self) -> dict:
        """What upscaling cost in this run (part of the mux's time)."""
        per_frame = self.seconds / self.frames if self.frames else 0.0
        return {"frames": self.frames, "seconds": round(self.seconds, 4), "seconds_per_frame": round(per_frame, 4)}

    @torch.inference_mode()
    def learned(self, frames: np.ndarray) -> np.ndarray:
        """uint8 frames (n × height × width × 3) through the network, scaled to cover `size` and cropped
        to its middle."""
        with torch.cuda.stream(self.stream):  # (a no-op without one)
            pixels = torch.from_numpy(frames).to(self.model.device).permute(0, 3, 1, 2).to(self.model.dtype) / 255
            bigger = self.model(self.smaller(pixels))  # clamped to [0, 1]
            width, height = self.size
            scale = max(width / bigger.shape[-1], height / bigger.shape[-2])
            covering = (max(height, round(bigger.shape[-2] * scale)), max(width, round(bigger.shape[-1] * scale)))
            scaled = F.interpolate(bigger.float(), size=covering, mode="bicubic", antialias=True, align_corners=False)
            top, left = (covering[0] - height) // 2, (covering[1] - width) // 2
            video = scaled[..., top : top + height, left : left + width].clamp(0, 1)
            return (video.permute(0, 2, 3, 1) * 255).round().to(torch.uint8).cpu().numpy()

    def smaller(self, pixels: torch.Tensor) -> torch.Tensor:
        """The frames at `input_size` (antialiased bicubic), or as they are without one."""
        if self.input_size is None:
            return pixels
        width, height = self.input_size
        scaled = F.interpolate(
            pixels.float(), size=(height, width), mode="bicubic", antialias=True, align_corners=False
        )
        return scaled.clamp(0, 1).to(pixels.dtype)


@contextmanager
def upscaler_for(run: Run) -> Iterator[Upscaler | None]:
    """The learned upscaler --resolution asks for, loaded now (a broken file is named before the drawing, not after
    it) and held through the run, at the batch and input the memory plan gives it; None without one (Lanczos, or
    no --resolution: ffmpeg scales); with --fast, auto's fast one (musicvid.models.footprint.upscaler_name)."""
    if not run.settings.resolution:
        yield None
        return
    with run.registry.use(UPSCALER_ROLES[run.settings.fast], run.timings, run.memory) as model:
        yield Upscaler(model, run.settings.video_size, **run.upscaling) if model is not None else None
