"""The FLOP bound of drawing on a GPU (benchmarks/render.py's gpu-flops phase): the FLOPs of one picture, counted
by torch, against the GPU's peak on a large matrix product, and the share of it the best batch size reached."""

from pathlib import Path

import torch

from musicvid.models.drawing import Drawing
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import Timings
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.denoise import draw_group
from musicvid.pictures.grouping import Picture
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.presets import ModelSet
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard


def matmul_peak_tflops(size: int = 8192, repeats: int = 20) -> float:
    """What the GPU reaches on a large float16 matrix product: the practical ceiling."""
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    for _ in range(3):
        a @ b
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        a @ b
    end.record()
    torch.cuda.synchronize()
    return 2 * size**3 * repeats / (start.elapsed_time(end) / 1000) / 1e12


def flops_per_picture(settings: RenderSettings, models: ModelSet) -> float:
    """FLOPs of drawing one picture with `models` (guided denoising steps and the VAE decode), counted by torch."""
    from torch.utils.flop_counter import FlopCounterMode

    scene = Scene(index=0, kind="lyric", start=0.0, end=1.0, text="", prompt="a lighthouse in a storm", seed=1)
    storyboard = Storyboard(audio=SongAudio(1.0), scenes=[scene])
    registry = ModelRegistry(models)
    with registry.use(Drawing()) as loaded:
        pipe = pipeline_for(loaded, settings)
        inputs = SceneInputs(pipe, storyboard, [0], settings)
        picture = Picture(path=Path("unused.png"), key="", scene=0, target=None, t=0.0)
        with FlopCounterMode(display=False) as counter:
            draw_group(pipe, inputs, [picture], settings, Timings())
    return float(counter.get_total_flops())


def flop_bound(settings: RenderSettings, models: ModelSet) -> dict:
    """FLOPs per picture and the frames per second that the GPU's matrix-product peak would allow."""
    flops = flops_per_picture(settings, models)
    peak = matmul_peak_tflops()
    return {
        "tflop_per_picture": round(flops / 1e12, 3),
        "matmul_peak_tflops": round(peak, 1),
        "bound_frames_per_second": round(peak * 1e12 / flops, 2),
    }


def best_batch(gpu: dict) -> dict:
    return max(gpu["batch_sweep"], key=lambda r: r["frames_per_second"])


def fraction_of_bound(gpu: dict) -> None:
    """What share of the FLOP bound the best batch size reached (needs both measurements)."""
    if "flop_bound" in gpu and "batch_sweep" in gpu:
        bound = gpu["flop_bound"]
        bound["reached_tflops"] = round(bound["tflop_per_picture"] * best_batch(gpu)["frames_per_second"], 1)
        bound["fraction_of_peak"] = round(bound["reached_tflops"] / bound["matmul_peak_tflops"], 3)
