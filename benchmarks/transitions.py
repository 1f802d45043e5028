"""TFLOP of one --transitions video transition, for the video models it could use and the slerp morph it replaces.

    python -m benchmarks.transitions --flops [--out benchmarks/results/flops-transitions.json]
    python -m benchmarks.transitions --flops --width 704 --height 384 --frames 57   # the defaults
    python -m benchmarks.transitions [--low-vram] [--out FILE]   # timed: s per s of video, peak memory (GPU)
    python -m benchmarks.transitions --quick                     # the same with the tiny model: checks the script

Timed, on a GPU: LTX-Video 0.9.5's architecture at full size with random weights (compute does not depend
on the weights' values), in bfloat16, draws one transition between two pictures through musicvid's own
code (musicvid.pictures.transitions.draw_clip), once to warm up and then `--repeats` times.

Counted: benchmarks/transition_flops.py.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import torch

from benchmarks.peaks import SpanPeak
from benchmarks.transition_flops import shape_problem, transition_flops
from musicvid.models.published import LTX_TRANSFORMER, LTX_VAE, T5_XXL
from musicvid.settings.geometry import DRAWN_FPS
from vipe_core.atomic import write_text


def full_size_ltx(device: torch.device):
    """LTXConditionPipeline with LTX-Video 0.9.5's architecture and random weights, built on `device` in
    bfloat16 (T5-XXL's 4.8B weights are never made in float32 on the CPU)."""
    from diffusers import (
        AutoencoderKLLTXVideo,
        FlowMatchEulerDiscreteScheduler,
        LTXConditionPipeline,
        LTXVideoTransformer3DModel,
    )
    from transformers import T5Config, T5EncoderModel

    from musicvid.models.tiny_video import tiny_t5_tokenizer

    torch.manual_seed(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(device):
            parts = dict(
                vae=AutoencoderKLLTXVideo(**LTX_VAE),
                text_encoder=T5EncoderModel(T5Config(**T5_XXL)),
                transformer=LTXVideoTransformer3DModel(**LTX_TRANSFORMER),
            )
    finally:
        torch.set_default_dtype(default)
    for part in parts.values():
        part.eval()
    scheduler = FlowMatchEulerDiscreteScheduler(use_dynamic_shifting=False)
    # the tokenizer's vocabulary does not change the cost: a prompt is padded to its 256 tokens either way
    return LTXConditionPipeline(scheduler=scheduler, tokenizer=tiny_t5_tokenizer(), **parts)


def timed_transition(quick: bool, low_vram: bool, repeats: int, width: int, height: int, frames: int) -> dict:
    """Seconds to draw one transition of `frames` frames, per second of video at the app's drawn rate,
    and the GPU's peak memory."""
    import time

    import numpy as np

    from benchmarks.what_ran import machine, models_ran
    from musicvid.models.tiny_video import tiny_ltx_video
    from musicvid.pictures.clips import draw_clip, video_pipeline_for
    from musicvid.pictures.transitions import clip_rate
    from musicvid.settings.presets import VIDEO_FAMILIES
    from musicvid.settings.render import RenderSettings

    on_gpu = torch.cuda.is_available() and not quick
    device = torch.device("cuda" if on_gpu else "cpu")
    if not on_gpu:
        width, height, frames = 64, 64, 9
    pipe = full_size_ltx(device) if on_gpu else tiny_ltx_video()
    steps = 40 if on_gpu else 2
    settings = RenderSettings(size=(width, height), transition_steps=steps, low_vram=low_vram)
    own = video_pipeline_for(pipe.to(device), settings)
    rng = np.random.default_rng(0)
    ends = tuple(rng.integers(0, 256, (height, width, 3), dtype=np.uint8) for _ in range(2))
    length = frames - 1  # a morph whose clip is exactly `frames` frames
    rate = clip_rate(length, DRAWN_FPS, VIDEO_FAMILIES["ltx-video"])
    seconds = []
    with SpanPeak() as peak:  # (the process's never reset: benchmarks.peaks)
        for _ in range(1 + repeats):  # the first warms up (kernels, allocator)
            start = time.perf_counter()
            # (the clip comes back as pixels on the CPU: the GPU's work is done when it returns)
            draw_clip(own, frames, rate, ends, "a red sun, slowly turning into a city at night", 0, settings)
            seconds.append(time.perf_counter() - start)
    median = float(np.median(seconds[1:]))
    return {
        "machine": machine(device),
        "architecture": "LTX-Video 0.9.5, random weights, bfloat16" if on_gpu else "tiny random",
        "ran": models_ran(video=pipe),
        "size": f"{width}x{height}",
        "frames": frames,
        "steps": steps,
        "low_vram": low_vram,
        "seconds_per_transition": round(median, 3),
        "seconds_per_second_of_video": round(median / (length / DRAWN_FPS), 3),
        "peak_gpu_memory_gb": peak.gb if on_gpu else None,
        "all_seconds": [round(s, 3) for s in seconds],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.transitions", description=__doc__.splitlines()[0])
    parser.add_argument("--flops", action="store_true", help="count TFLOP per transition on the meta device")
    parser.add_argument("--width", type=int, default=704, help="pixels, divisible by 32 (SD 1.5's keyframes: 704)")
    parser.add_argument("--height", type=int, default=384, help="pixels, divisible by 32")
    parser.add_argument("--frames", type=int, default=57, help="frames of a transition, both keyframes included: 8k+1")
    parser.add_argument("--quick", action="store_true", help="timed with the tiny model on the CPU")
    parser.add_argument("--low-vram", action="store_true", help="timed with --low-vram's offloading")
    parser.add_argument("--repeats", type=int, default=2, help="timed transitions after the warm-up")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    args = parser.parse_args(argv)
    if problem := shape_problem(args.width, args.height, args.frames):
        parser.error(problem)
    if args.repeats < 1:
        parser.error(f"--repeats must be 1 or more (timed transitions after the warm-up), not {args.repeats}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.flops:
        results = transition_flops(args.width, args.height, args.frames)
    else:
        results = timed_transition(args.quick, args.low_vram, args.repeats, args.width, args.height, args.frames)
    text = json.dumps(results, indent=2, allow_nan=False)
    print(text)
    if args.out:
        write_text(args.out, text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
