"""What delivering the video costs and how good it is: frame interpolation (--output-fps) and upscaling
(--resolution).

    python -m benchmarks.delivery                    # synthetic clips, on this machine
    python -m benchmarks.delivery --frames WORKDIR   # also the frames of a real render made with --fps 20
    python -m benchmarks.delivery --quick            # small and short: checks the script still works

Interpolation quality, as the issue asks: a clip at 20 fps loses every other frame, each interpolator
makes it 20 fps again from the 10 left, and the frames it made are compared with the ones dropped
(PSNR in dB, SSIM). Clips: what a music video of ours holds besides the morphs, at the drawn size
(704x384): a slow zoom and a pan (musicvid.pictures.camera) over scikit-image's photographs, and a crossfade
between two of them; with --frames, the in-between frames of a render drawn at 20 fps (the morphs
themselves; that needs real Stable Diffusion weights to mean anything). Speed: frames made per second.

Upscaling cost per frame from 704x384 to 1920x1080: Lanczos, and Real-ESRGAN x4plus's architecture
(64 features, 23 blocks) through spandrel with random weights (the cost does not depend on their
values; the quality does, so none is claimed).

Writes JSON (default benchmarks/results/delivery-<host>.json) and prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from musicvid.delivery.mux import INTERPOLATORS, interpolate
from musicvid.delivery.upscale import Upscaler, cover
from musicvid.pictures import camera
from musicvid.pictures.render import load_picture
from musicvid.pictures.schedule import frame_schedule

DRAWN = (704, 384)  # 16:9 at SD 1.5's pixel count
VIDEO = (1920, 1080)


def photographs() -> list[np.ndarray]:
    from skimage import data

    return [cover(picture, DRAWN) for picture in (data.astronaut(), data.coffee(), data.chelsea())]


def clips(seconds: float) -> dict[str, list[np.ndarray]]:
    """Clips at 20 fps of the drawn size."""
    frames = round(seconds * 20)
    schedule = frame_schedule([0.0], seconds, 20)  # one scene: the camera moves in and out again
    astronaut, coffee, chelsea = photographs()
    zoom, pan = camera.views(schedule, "zoom"), camera.views(schedule, "pan")
    fade = [((1 - k / frames) * coffee + k / frames * chelsea).round().astype(np.uint8) for k in range(frames)]
    return {
        "zoom over a photograph": [camera.look_through(astronaut, zoom[k]) for k in range(frames)],
        "pan over a photograph": [camera.look_through(coffee, pan[k]) for k in range(frames)],
        "crossfade of two photographs": fade,
    }


def rendered_clip(workdir: Path) -> list[np.ndarray]:
    """The longest run of consecutive in-between frames of a render (frames/<k>.png)."""
    numbers = sorted(int(p.stem) for p in (workdir / "frames").glob("*.png"))
    runs, run = [], []
    for k in numbers:
        run = run + [k] if run and k == run[-1] + 1 else [k]
        runs.append(run)
    longest = max(runs, key=len)
    return [load_picture(workdir / "frames" / f"{k}.png") for k in longest]


def quality(clip: list[np.ndarray], interpolator: str) -> dict:
    """Drop the odd frames, interpolate 10 -> 20 fps, compare the made odd frames with the dropped."""
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    kept = clip[::2]
    height, width = clip[0].shape[:2]
    count = 2 * len(kept) - 1  # the last kept frame has no frame after it to interpolate towards
    started = time.perf_counter()
    made = list(
        interpolate(
            kept, width=width, height=height, fps=10, output_fps=20, frame_count=count, interpolator=interpolator
        )
    )
    seconds = time.perf_counter() - started
    pairs = [(made[k], clip[k]) for k in range(1, count, 2)]
    return {
        "psnr": float(np.mean([peak_signal_noise_ratio(truth, frame) for frame, truth in pairs])),
        "ssim": float(np.mean([structural_similarity(truth, frame, channel_axis=2) for frame, truth in pairs])),
        "frames_per_second": count / seconds,
    }


def interpolation(args) -> dict:
    named = clips(args.seconds)
    if args.frames:
        named["morph frames of the render in " + str(args.frames)] = rendered_clip(args.frames)
    return {name: {method: quality(clip, method) for method in INTERPOLATORS} for name, clip in named.items()}


def upscaling(args) -> dict:
    from spandrel import ModelLoader
    from spandrel.architectures.ESRGAN import ESRGAN

    frame = photographs()[0]
    results = {}
    lanczos = Upscaler(None, VIDEO)
    for _ in range(args.repeats):
        lanczos(frame)
    results["lanczos"] = lanczos.cost()["seconds_per_frame"]
    torch.manual_seed(0)
    features, blocks = (8, 1) if args.quick else (64, 23)
    model = ModelLoader().load_from_state_dict(ESRGAN(num_filters=features, num_blocks=blocks, scale=4).state_dict())
    learned = Upscaler(model.eval(), VIDEO)
    learned(frame)  # one frame: a minute or more on a CPU
    results[f"real-esrgan x4plus architecture ({features} features, {blocks} blocks)"] = learned.cost()[
        "seconds_per_frame"
    ]
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=Path, help="the work directory of a render made with --fps 20")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each synthetic clip")
    parser.add_argument("--repeats", type=int, default=5, help="Lanczos upscales to time")
    parser.add_argument("--quick", action="store_true", help="short clips and a tiny network")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.repeats = 0.5, 1
    device = (
        "CUDA " + torch.cuda.get_device_name()
        if torch.cuda.is_available()
        else f"CPU, {torch.get_num_threads()} threads"
    )
    report = {
        "host": platform.node(),
        "device": device,
        "drawn_size": DRAWN,
        "video_size": VIDEO,
        "interpolation": interpolation(args),
        "upscale_seconds_per_frame": upscaling(args),
    }
    out = args.out or Path("benchmarks/results") / f"delivery-{platform.node() or 'host'}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"## Interpolation, 10 -> 20 fps at {DRAWN[0]}x{DRAWN[1]} ({device})\n")
    print("| clip | interpolator | PSNR dB | SSIM | frames/s |\n|---|---|---|---|---|")
    for clip, methods in report["interpolation"].items():
        for method, r in methods.items():
            print(f"| {clip} | {method} | {r['psnr']:.2f} | {r['ssim']:.4f} | {r['frames_per_second']:.1f} |")
    print(f"\n## Upscaling {DRAWN[0]}x{DRAWN[1]} -> {VIDEO[0]}x{VIDEO[1]}, seconds per frame\n")
    print("| upscaler | s/frame |\n|---|---|")
    for name, seconds in report["upscale_seconds_per_frame"].items():
        print(f"| {name} | {seconds:.3f} |")
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
